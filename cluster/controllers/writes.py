"""The writes a controller asks for, as plain data, and the order they are sent in.

Owns ``Writes`` (one list per apiserver call, items shaped as that call takes them) and
``CALLS``, the table the controller-manager actor walks to send them. Every controller's
``sync(now)`` returns a ``Writes``; the controller-manager merges them (``manager``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass
class Writes:
    node_conditions: list = field(default_factory=list)  # (node, [conditions])
    node_taints: list = field(default_factory=list)  # (node, taints to add, taints to remove)
    pod_creates: list = field(default_factory=list)  # full Pod dicts (ReplicaSet, DaemonSet)
    # Full Pod dicts carrying the resourceVersion they were read at: ownerReference
    # adoptions and releases, sent one ``update`` call each (they are rare).
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


# (Writes field, apiserver actor method, leading arguments), in the order they are sent:
# a pod's DisruptionTarget condition or Failed phase lands before its delete, and Events
# go last so that a report never shows an Event for a write that was not made.
CALLS = (
    ("node_conditions", "patch_node_conditions", ()),
    ("node_taints", "patch_node_taints", ()),
    ("pod_creates", "create", ()),
    ("pod_updates", "update", ()),  # one call per item: the apiserver's update takes one object
    ("pod_conditions", "patch_pod_status", ()),
    ("pod_status", "update_status", ("Pod",)),
    ("pod_deletes", "delete", ("Pod",)),
    ("pdb_status", "update_status", ("PodDisruptionBudget",)),
    ("replicaset_status", "update_status", ("ReplicaSet",)),
    ("daemonset_status", "update_status", ("DaemonSet",)),
    ("events", "create", ()),
)
SINGLE = frozenset({"pod_updates"})  # fields whose items go one call each

# Writes field -> how a refused item is reported back to controllers that want to know
# (``on_<what>_failed``), and the arguments taken from the item.
FAILURES = {
    "pod_creates": ("on_create_failed", lambda item: (item,)),
    "pod_updates": ("on_update_failed", lambda item: (item,)),
    "pod_deletes": ("on_delete_failed", lambda item: tuple(item[:3])),
    "replicaset_status": ("on_status_failed", lambda item: tuple(item[:3])),
    "daemonset_status": ("on_status_failed", lambda item: tuple(item[:3])),
}
