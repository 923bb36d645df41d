"""The writes a controller asks for, and their order as typed requests.

Owns ``Writes``, the builder every controller's ``sync(now)`` returns (one list per kind of
write, items as plain tuples and objects), ``requests``, which turns it into the typed
requests of ``cluster/api/requests.py`` in the order they must land (a pod's
DisruptionTarget condition or Failed phase before its delete, Events last, so a report
never shows an Event for a write that was not made), and ``failure_hook``, which says
which controller callback hears of a refused request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from ..api.patches import NodeConditions, NodeTaints, PodConditions
from ..api.requests import Create, Delete, Patch, RecordEvent, Request, Update, UpdateStatus


@dataclass
class Writes:
    node_conditions: list = field(default_factory=list)  # (node, [conditions])
    node_taints: list = field(default_factory=list)  # (node, taints to add, taints to remove)
    pod_creates: list = field(default_factory=list)  # full Pod dicts (ReplicaSet, DaemonSet)
    # Full Pod dicts carrying the resourceVersion they were read at: ownerReference
    # adoptions and releases.
    pod_updates: list = field(default_factory=list)
    pod_conditions: list = field(default_factory=list)  # (ns, name, uid, [conditions], None)
    pod_status: list = field(default_factory=list)  # (ns, name, uid, status)
    pod_deletes: list = field(default_factory=list)  # (ns, name, uid, grace)
    pdb_status: list = field(default_factory=list)  # (ns, name, uid, status)
    replicaset_status: list = field(default_factory=list)  # (ns, name, uid, status)
    daemonset_status: list = field(default_factory=list)  # (ns, name, uid, status)
    events: list = field(default_factory=list)  # Event objects

    def extend(self, other: Writes) -> None:
        for f in fields(self):
            getattr(self, f.name).extend(getattr(other, f.name))

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def count(self) -> int:
        return sum(len(getattr(self, f.name)) for f in fields(self))


def _status(kind: str) -> Callable[[Any], Request]:
    return lambda item: UpdateStatus(kind, item[0], item[1], item[2] or "", item[3])


# (Writes field, how an item becomes a request), in the order they are sent.
ORDER: tuple[tuple[str, Callable[[Any], Request]], ...] = (
    ("node_conditions", lambda item: Patch("Node", "", item[0], "", NodeConditions(tuple(item[1])))),
    ("node_taints", lambda item: Patch("Node", "", item[0], "", NodeTaints(tuple(item[1]), tuple(item[2])))),
    ("pod_creates", Create),
    ("pod_updates", Update),
    ("pod_conditions", lambda item: Patch("Pod", item[0], item[1], item[2], PodConditions(tuple(item[3]), item[4]))),
    ("pod_status", _status("Pod")),
    ("pod_deletes", lambda item: Delete("Pod", item[0], item[1], item[2] or "", item[3])),
    ("pdb_status", _status("PodDisruptionBudget")),
    ("replicaset_status", _status("ReplicaSet")),
    ("daemonset_status", _status("DaemonSet")),
    ("events", RecordEvent),
)


def requests(w: Writes) -> list[Request]:
    """``w`` as typed requests, in ``ORDER``."""
    return [make(item) for name, make in ORDER for item in getattr(w, name)]


def failure_hook(req: Request) -> tuple[str, tuple] | None:
    """The ``on_<what>_failed`` callback that hears of a refused ``req``, and its leading
    arguments; None for requests nobody needs to hear about (the watch shows what stands)."""
    if isinstance(req, Create) and req.obj.get("kind") == "Pod":
        return "on_create_failed", (req.obj,)
    if isinstance(req, Update) and req.obj.get("kind") == "Pod":
        return "on_update_failed", (req.obj,)
    if isinstance(req, Delete) and req.kind == "Pod":
        return "on_delete_failed", (req.namespace, req.name, req.uid)
    if isinstance(req, UpdateStatus) and req.kind in ("ReplicaSet", "DaemonSet"):
        return "on_status_failed", (req.namespace, req.name, req.uid)
    return None
