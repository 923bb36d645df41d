"""The writes a controller asks for, and their order as typed requests.

Owns ``Writes``, the builder every controller's ``sync(now)`` returns (one list per kind of
write, items as plain tuples and objects), ``requests``, which turns it into the typed
requests of ``cluster/api/requests.py`` in the order they must land (a pod's
DisruptionTarget condition or Failed phase before its delete, a namespace's Terminating
phase before its content goes, the removal of a finalizer, which may let its object go,
after every other write, Events last, so a report never shows an Event for a write that
was not made), and ``failure_hook``, which says which controller callback hears of a
refused request.

Deletes come in two shapes. ``pod_deletes`` name no propagation policy (the workload
controllers, pod GC, taint eviction: upstream's pod deletes send none); ``deletes`` are the
garbage collector's and the namespace controller's, of any kind, and always name one, as
upstream's do. That is how ``failure_hook`` tells whose a refused delete was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from ..api.events import built
from ..api.patches import (
    FinalizeNamespace,
    NodeConditions,
    NodeTaints,
    PodConditions,
    RemoveFinalizer,
    RemoveOwnerReferences,
)
from ..api.requests import Create, Delete, Patch, RecordEvent, Request, Update, UpdateStatus


@dataclass
class Writes:
    node_conditions: list = field(default_factory=list)  # (node, [conditions])
    node_taints: list = field(default_factory=list)  # (node, taints to add, taints to remove)
    # Full objects of any kind but Pod (a Deployment's ReplicaSets, a CronJob's Jobs, a
    # StatefulSet's ControllerRevisions), created before any pod.
    creates: list = field(default_factory=list)
    # Full objects of any kind but Pod carrying the resourceVersion they were read at (a
    # stale one is a Conflict): a ReplicaSet scaled by its Deployment, an HPA's target.
    updates: list = field(default_factory=list)
    pod_creates: list = field(default_factory=list)  # full Pod dicts (ReplicaSet, DaemonSet)
    # Full Pod dicts carrying the resourceVersion they were read at: ownerReference
    # adoptions and releases.
    pod_updates: list = field(default_factory=list)
    pod_conditions: list = field(default_factory=list)  # (ns, name, uid, [conditions], None)
    pod_status: list = field(default_factory=list)  # (ns, name, uid, status)
    pod_deletes: list = field(default_factory=list)  # (ns, name, uid, grace)
    namespace_status: list = field(default_factory=list)  # ("", name, uid, status)
    owner_refs: list = field(default_factory=list)  # (kind, ns, name, uid, owner uids to drop[, unblock the rest])
    deletes: list = field(default_factory=list)  # (kind, ns, name, uid, propagation): cascades
    pdb_status: list = field(default_factory=list)  # (ns, name, uid, status)
    replicaset_status: list = field(default_factory=list)  # (ns, name, uid, status)
    daemonset_status: list = field(default_factory=list)  # (ns, name, uid, status)
    deployment_status: list = field(default_factory=list)  # (ns, name, uid, status)
    statefulset_status: list = field(default_factory=list)  # (ns, name, uid, status)
    job_status: list = field(default_factory=list)  # (ns, name, uid, status)
    cronjob_status: list = field(default_factory=list)  # (ns, name, uid, status)
    hpa_status: list = field(default_factory=list)  # (ns, name, uid, status)
    # Typed requests from reconcilers (``reconciler.py``), sent as they are.
    requests: list = field(default_factory=list)
    finalizers: list = field(default_factory=list)  # (kind, ns, name, uid, metadata finalizer to drop)
    namespace_finalize: list = field(default_factory=list)  # (name, uid): drop spec.finalizers' kubernetes
    events: list = field(default_factory=list)  # Event objects, or ``EventDraft``s of them

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
ORDER: tuple[tuple[str, Callable[[Any], Request] | None], ...] = (
    ("node_conditions", lambda item: Patch("Node", "", item[0], "", NodeConditions(tuple(item[1])))),
    ("node_taints", lambda item: Patch("Node", "", item[0], "", NodeTaints(tuple(item[1]), tuple(item[2])))),
    ("creates", Create),
    ("updates", Update),
    ("pod_creates", None),  # as slow starts: ``_pod_creates``
    ("pod_updates", Update),
    ("pod_conditions", lambda item: Patch("Pod", item[0], item[1], item[2], PodConditions(tuple(item[3]), item[4]))),
    ("pod_status", _status("Pod")),
    ("pod_deletes", lambda item: Delete("Pod", item[0], item[1], item[2] or "", item[3])),
    ("namespace_status", _status("Namespace")),
    (
        "owner_refs",
        lambda item: Patch(item[0], item[1], item[2], item[3], RemoveOwnerReferences(tuple(item[4]), *item[5:])),
    ),
    ("deletes", lambda item: Delete(item[0], item[1], item[2], item[3], None, item[4])),
    ("pdb_status", _status("PodDisruptionBudget")),
    ("replicaset_status", _status("ReplicaSet")),
    ("daemonset_status", _status("DaemonSet")),
    ("deployment_status", _status("Deployment")),
    ("statefulset_status", _status("StatefulSet")),
    ("job_status", _status("Job")),
    ("cronjob_status", _status("CronJob")),
    ("hpa_status", _status("HorizontalPodAutoscaler")),
    ("requests", lambda item: item),
    # A finalizer may be the last thing holding its object: after every other write about it.
    ("finalizers", lambda item: Patch(item[0], item[1], item[2], item[3], RemoveFinalizer(item[4]))),
    ("namespace_finalize", lambda item: Patch("Namespace", "", item[0], item[1], FinalizeNamespace())),
    ("events", lambda item: RecordEvent(built(item))),  # drafts the spam filter did not build
)


def requests(w: Writes) -> list[Request]:
    """``w`` as typed requests, in ``ORDER``."""
    out: list[Request] = []
    for name, make in ORDER:
        items = getattr(w, name)
        out += _pod_creates(items) if make is None else map(make, items)
    return out


def _pod_creates(pods: list[dict]) -> list[Request]:
    """One owner's pod creates of one sync, as upstream's slowStartBatch sends them: in
    batches of 1, 2, 4, ... (the i-th create is in batch log2(i + 1)); once one is refused,
    the apiserver attempts none of the owner's later batches (``Create.slow_start``)."""
    sent: dict[str, int] = {}
    out: list[Request] = []
    for pod in pods:
        uid = _controller_uid(pod)
        if not uid:
            out.append(Create(pod))
            continue
        i = sent.get(uid, 0)
        sent[uid] = i + 1
        out.append(Create(pod, (uid, (i + 1).bit_length() - 1)))
    return out


def _controller_uid(pod: dict) -> str:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


def failure_hook(req: Request) -> tuple[str, tuple] | None:
    """The ``on_<what>_failed`` callback that hears of a refused ``req``, and its leading
    arguments; None for requests nobody needs to hear about (the watch shows what stands)."""
    if isinstance(req, Create):
        return ("on_create_failed" if req.obj.get("kind") == "Pod" else "on_object_create_failed"), (req.obj,)
    if isinstance(req, Update):
        return ("on_update_failed" if req.obj.get("kind") == "Pod" else "on_object_update_failed"), (req.obj,)
    if isinstance(req, Delete) and req.propagation:
        return "on_cascade_failed", (req.kind, req.namespace, req.name, req.uid)
    if isinstance(req, Delete) and req.kind == "Pod":
        return "on_delete_failed", (req.namespace, req.name, req.uid)
    if isinstance(req, Patch) and isinstance(req.patch, _GC_PATCHES):
        return "on_patch_failed", (req.kind, req.namespace, req.name, req.uid)
    if isinstance(req, UpdateStatus) and req.kind != "Pod":
        return "on_status_failed", (req.namespace, req.name, req.uid)
    return None


_GC_PATCHES = (RemoveOwnerReferences, RemoveFinalizer, FinalizeNamespace)
