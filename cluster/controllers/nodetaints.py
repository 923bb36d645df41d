"""Taint Nodes by Condition: the node lifecycle controller's NoSchedule tainting pass.

Owns the map from a Node's conditions (and ``spec.unschedulable``) to the NoSchedule
taints the scheduler filters on (reference §3.5, upstream ``doNoScheduleTaintingPass``):
MemoryPressure=True -> ``node.kubernetes.io/memory-pressure``, DiskPressure=True ->
``disk-pressure``, PIDPressure=True -> ``pid-pressure``, NetworkUnavailable=True ->
``network-unavailable``, Ready=False -> ``not-ready``, Ready=Unknown -> ``unreachable``,
``spec.unschedulable`` -> ``unschedulable``. Taints with those keys and effect NoSchedule
are this controller's: it adds the ones a node's state calls for and removes the rest;
every other taint is left alone.

Who calls it: the controller-manager actor feeds it Node watch events (``on_node``) and
sends the returned patches in one ``patch_node_taints`` batch. The kubelets report the
conditions; they never write taints themselves, as upstream. The NoExecute taints of
unreachable and not-ready nodes belong to the node lifecycle controller's other pass.
"""

from __future__ import annotations

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

Patch = tuple[str, list[dict], list[dict]]  # (node name, taints to add, taints to remove)


def wanted_taints(node: dict) -> set[str]:
    """The keys of the NoSchedule taints the node's state calls for."""
    keys = set()
    for c in (node.get("status") or {}).get("conditions") or ():
        key = CONDITION_TAINTS.get((c.get("type"), c.get("status")))
        if key is not None:
            keys.add(key)
    if (node.get("spec") or {}).get("unschedulable"):
        keys.add(UNSCHEDULABLE_TAINT)
    return keys


def tainting_patch(node: dict) -> Patch | None:
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


class NodeTaintController:
    """Watches Nodes and returns the taint patches to send."""

    def on_node(self, event_type: str, node: dict) -> Patch | None:
        if event_type == "DELETED":
            return None
        return tainting_patch(node)
