"""Taint Nodes by Condition: the node lifecycle controller's NoSchedule tainting pass.

Owns the map from a Node's conditions (and ``spec.unschedulable``) to the NoSchedule
taints the scheduler filters on (upstream's ``doNoScheduleTaintingPass``):
MemoryPressure=True -> ``node.kubernetes.io/memory-pressure``, DiskPressure=True ->
``disk-pressure``, PIDPressure=True -> ``pid-pressure``, NetworkUnavailable=True ->
``network-unavailable``, Ready=False -> ``not-ready``, Ready=Unknown -> ``unreachable``,
``spec.unschedulable`` -> ``unschedulable``. Taints with those keys and effect NoSchedule
are this controller's: it adds the ones a node's state calls for and removes the rest;
every other taint is left alone.

Who calls it: the controller manager runs ``NodeTaintReconciler`` in a ``ReconcilerStep``
(``reconciler.py``) over Node events; a node's cache entry is only the patch its state
calls for (``Watches.project``), so the pass costs nothing per node in line. The kubelets
report the conditions; they never write taints themselves, as upstream. The NoExecute
taints of unreachable and not-ready nodes belong to the node lifecycle controller's other
pass.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..api.patches import NodeTaints
from ..api.requests import Patch
from .reconciler import Indexer, Key, ObjectCache, Outcome, Watches

NO_SCHEDULE = "NoSchedule"

# (condition type, status) -> taint key
CONDITION_TAINTS = {
    ("Ready", "False"): "node.kubernetes.io/not-ready",
    ("Ready", "Unknown"): "node.kubernetes.io/unreachable",
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
OWNED_KEYS = frozenset([*CONDITION_TAINTS.values(), UNSCHEDULABLE_TAINT])

Obj = dict[str, Any]
TaintPatch = tuple[str, list[Obj], list[Obj]]  # (node name, taints to add, taints to remove)


def wanted_taints(node: Obj) -> set[str]:
    """The keys of the NoSchedule taints the node's state calls for."""
    keys: set[str] = set()
    for c in (node.get("status") or {}).get("conditions") or ():
        key = CONDITION_TAINTS.get((c.get("type"), c.get("status")))
        if key is not None:
            keys.add(key)
    if (node.get("spec") or {}).get("unschedulable"):
        keys.add(UNSCHEDULABLE_TAINT)
    return keys


def tainting_patch(node: Obj) -> TaintPatch | None:
    """The patch that brings the node's NoSchedule condition taints in line, or None."""
    have = {
        t.get("key")
        for t in (node.get("spec") or {}).get("taints") or ()
        if t.get("effect") == NO_SCHEDULE and t.get("key") in OWNED_KEYS
    }
    want = wanted_taints(node)
    if have == want:
        return None
    name = (node.get("metadata") or {}).get("name", "")
    add = [{"key": k, "effect": NO_SCHEDULE} for k in sorted(want - have)]
    remove = [{"key": k, "effect": NO_SCHEDULE} for k in sorted(have - want)]
    return name, add, remove


class NodeTaintReconciler:
    """A node's key in, the taint patch its state calls for out (none when in line)."""

    name: ClassVar[str] = "node-taints"
    watches: ClassVar[tuple[Watches, ...]] = (Watches("Node", project=tainting_patch),)
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache

    def reconcile(self, key: Key, now: float) -> Outcome:
        patch: TaintPatch | None = self.cache.projected("Node", "", key[1])
        if patch is None:
            return Outcome()
        name, add, remove = patch
        return Outcome(writes=[Patch("Node", "", name, "", NodeTaints(tuple(add), tuple(remove)))])
