"""Which nodes can take a pod: YuniKorn mode's predicates and its node order.

Owns the predicates YuniKorn runs through the Kubernetes filter plugins (node
unschedulable, taints, node selector and required affinity, host ports, resources with the
pod count), ``NodeIndex`` (the nodes as arrays: allocatable, allocated and the sort score,
so choosing a node for an ask is a vector operation over thousands of nodes) and the two
node sort policies: ``fair`` (least used first: the weighted mean of each resource's used
share) and ``binpacking`` (most used first), ties by name. Called by the core.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..api.nodeaffinity import pod_matches_node_selector_and_affinity
from ..api.placement import resource_fit
from ..api.predicates import host_ports, ports_conflict
from ..api.taints import find_untolerated_taint
from .asks import Alloc
from .nodes import Node, NodeSet
from .resources import Res


def static_ok(pod: dict[str, Any], node: Node) -> bool:
    """The predicates that do not depend on the other pods: schedulable, taints, selector
    and affinity. A pinned DaemonSet pod tolerates unschedulable, as upstream adds it."""
    spec = pod.get("spec") or {}
    tolerations = spec.get("tolerations")
    taints = (node.obj.get("spec") or {}).get("taints")
    if taints and find_untolerated_taint(taints, tolerations) is not None:
        return False
    if not node.schedulable and not _tolerates_unschedulable(tolerations):
        return False
    return pod_matches_node_selector_and_affinity(pod, node.obj)


def _tolerates_unschedulable(tolerations) -> bool:
    return any(
        t.get("key") == "node.kubernetes.io/unschedulable" or t.get("operator") == "Exists" and not t.get("key")
        for t in tolerations or ()
    )


def constraint_key(pod: dict[str, Any]) -> str:
    """What the static predicates read of a pod: pods with equal keys pass on the same nodes."""
    spec = pod.get("spec") or {}
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return repr(
        (
            spec.get("nodeSelector"),
            affinity.get("requiredDuringSchedulingIgnoredDuringExecution"),
            spec.get("tolerations"),
        )
    )


class NodeIndex:
    """The nodes as arrays for choosing one, in the ``NodeSet``'s name order: ``free`` per
    resource column and each node's sort key (``key``, lower first). Rebuilt when nodes
    come or go; one row is refreshed on every bind or release, so choosing a node costs a
    few vector operations, not a loop over the nodes."""

    def __init__(self, nodes: NodeSet, policy: str, weights: dict[str, float]):
        self.nodes, self.policy, self.weights = nodes, policy, dict(weights)
        self.columns: dict[str, int] = {}
        self.rebuild()

    def rebuild(self) -> None:
        types = sorted({k for n in self.nodes for k in n.capacity} | {k for n in self.nodes for k in n.allocated})
        self.columns = {k: i for i, k in enumerate(types)}
        n, r = len(self.nodes), len(types)
        self.cap = np.zeros((n, r), dtype=np.int64)
        self.free = np.zeros((n, r), dtype=np.int64)
        self.key = np.zeros(n)
        self.open = np.ones(n, dtype=bool)  # no reservation held on the node
        self._weighted = [(self.columns[k], w) for k, w in self.weights.items() if k in self.columns and w > 0]
        for node in self.nodes:
            self.refresh(node)
            self.open[node.index] = not node.reserved
        self._static: dict[str, np.ndarray] = {}

    def set_policy(self, policy: str, weights: dict[str, float]) -> None:
        if (policy, weights) != (self.policy, self.weights):
            self.policy, self.weights = policy, dict(weights)
            self.rebuild()

    def set_reserved(self, node: Node, reserved: bool) -> None:
        if node.index < len(self.open) and self.nodes.ordered[node.index] is node:
            self.open[node.index] = not reserved

    def refresh(self, node: Node) -> None:
        """Copy one node's numbers into the arrays (after a bind, a release or an update)."""
        i = node.index
        if i >= len(self.cap) or self.nodes.ordered[i] is not node:
            return  # not placed yet: the next settle rebuilds
        if any(k not in self.columns for k in node.capacity) or any(k not in self.columns for k in node.allocated):
            self.rebuild()
            return
        self.cap[i] = 0
        for k, v in node.capacity.items():
            self.cap[i, self.columns[k]] = v
        self.free[i] = self.cap[i]
        for k, v in node.allocated.items():
            self.free[i, self.columns[k]] -= v
        self.key[i] = self._key(i)

    def _key(self, i: int) -> float:
        """The weighted mean used share of node ``i`` (fair: lower first; binpacking: higher)."""
        total = weight = 0.0
        for col, w in self._weighted:
            cap = self.cap[i, col]
            if cap > 0:
                total += w * (cap - self.free[i, col]) / cap
                weight += w
        mean = total / weight if weight else 0.0
        return mean if self.policy != "binpacking" else 1.0 - mean

    def invalidate_static(self) -> None:
        self._static.clear()

    def static_mask(self, pod: dict[str, Any]) -> np.ndarray:
        key = constraint_key(pod)
        mask = self._static.get(key)
        if mask is None:
            mask = np.fromiter((static_ok(pod, n) for n in self.nodes), dtype=bool, count=len(self.nodes))
            if len(self._static) > 256:
                self._static.clear()
            self._static[key] = mask
        return mask

    def fitting(self, res: Res, mask: np.ndarray) -> Iterator[int]:
        """The nodes in ``mask`` whose free room holds ``res``, best first (ties by name):
        the best by one arg-min, the rest sorted only if the caller asks for them."""
        ok = mask.copy()
        if any(v > 0 and k not in self.columns for k, v in res.items()):
            return  # no node has the resource at all
        wanted = [(self.columns[k], v) for k, v in res.items() if k in self.columns]
        for _, short in resource_fit(wanted, lambda col: self.free[:, col])[1]:
            ok &= ~short
        keys = np.where(ok, self.key, np.inf)
        first = int(np.argmin(keys)) if len(keys) else 0
        if not len(keys) or not ok[first]:
            return
        yield first
        idx = np.flatnonzero(ok)
        for i in idx[np.argsort(self.key[idx], kind="stable")]:
            if int(i) != first:
                yield int(i)

    def order(self, mask: np.ndarray) -> np.ndarray:
        """Every node in ``mask``, best first: where a reservation would go."""
        idx = np.flatnonzero(mask)
        return idx[np.argsort(self.key[idx], kind="stable")] if len(idx) > 1 else idx


def passes(ask: Alloc, node: Node, removed: Sequence[Alloc], ports: dict[str, list]) -> bool:
    """Every predicate for ``ask`` on ``node`` with ``removed`` off it (``ports``: the host
    ports in use per node, with the uid of the pod holding each)."""
    if not static_ok(ask.pod, node):
        return False
    back: Res = {}
    gone = {a.uid for a in removed if a.node == node.name}
    for a in removed:
        if a.node == node.name:
            for k, v in a.res.items():
                back[k] = back.get(k, 0) + v
    if not node.fits(ask.res, back):
        return False
    wanted = host_ports(ask.pod)
    if wanted:
        used = [p for uid, p in ports.get(node.name, ()) if uid not in gone]
        if ports_conflict(wanted, used):
            return False
    return True
