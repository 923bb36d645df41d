"""NodeResourcesFit: does the pod fit the node's free resources, and how full would it be.

Owns the resource Filter (pod count, cpu, memory, ephemeral-storage and every other
requested resource, against allocatable minus what the cache has placed on the node) and
the resource Score (LeastAllocated by default, MostAllocated on request) with upstream's
integer formulas. Both work on all nodes at once with numpy. Built by the registry from
the profile's args (upstream's NodeResourcesFitArgs field names):

    ignoredResources: [name, ...]          extended resources the filter does not check
    ignoredResourceGroups: [domain, ...]   extended resources under these domains, likewise
    scoringStrategy: {type: LeastAllocated | MostAllocated,
                      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}
"""
from __future__ import annotations

import numpy as np

from ...api.resources import CPU, EPHEMERAL, MEMORY, is_extended
from ..cache import CPU_COL, MEMORY_COL, PodInfo, Snapshot
from ..framework import ClusterEvent, CycleState, FilterPlugin, FilterResult, ScorePlugin
from ..status import Code

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
DEFAULT_RESOURCES = ({"name": CPU, "weight": 1}, {"name": MEMORY, "weight": 1})
TOO_MANY_PODS = "Too many pods"
_NON_SCALAR = (CPU, MEMORY, EPHEMERAL)


class NodeResourcesFit(FilterPlugin, ScorePlugin):
    NAME = "NodeResourcesFit"
    # Without queueing hints upstream retries a pod this plugin rejected on these events.
    EVENTS = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE, ClusterEvent.NODE_TAINT,
                        ClusterEvent.NODE_LABEL, ClusterEvent.ASSIGNED_POD_DELETE})

    def __init__(self, args: dict | None = None, handle=None):
        args = dict(args or {})
        self._ignored = frozenset(args.pop("ignoredResources", None) or ())
        self._ignored_groups = frozenset(args.pop("ignoredResourceGroups", None) or ())
        strategy = dict(args.pop("scoringStrategy", None) or {})
        if args:
            raise ValueError(f"{self.NAME}: unknown arguments {sorted(args)}")
        self.strategy = strategy.pop("type", LEAST_ALLOCATED)
        if self.strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            raise ValueError(f"{self.NAME}: scoringStrategy.type {self.strategy!r} is not supported")
        resources = strategy.pop("resources", None) or DEFAULT_RESOURCES
        # A weight of 0 is defaulted to 1, as upstream's defaulting does.
        self.resources = tuple((r["name"], int(r.get("weight") or 1)) for r in resources)
        self._reasons: dict[int, str] = {}
        self._skip_cols: dict[int, bool] = {}

    # ---- Filter ------------------------------------------------------------------------

    def _skipped(self, col: int, snap: Snapshot) -> bool:
        skip = self._skip_cols.get(col)
        if skip is None:
            name = snap.column_names[col]
            # Only extended resources may be ignored; cpu, memory, hugepages never are.
            skip = is_extended(name) and (name in self._ignored or name.split("/", 1)[0] in self._ignored_groups)
            self._skip_cols[col] = skip
        return skip

    def _reason(self, col: int, snap: Snapshot) -> str:
        reason = self._reasons.get(col)
        if reason is None:
            reason = self._reasons[col] = f"Insufficient {snap.column_names[col]}"
        return reason

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        too_many = snap.pod_count >= snap.allowed_pods  # len(pods) + 1 > allowedPods
        feasible = ~too_many
        failures = []
        if not feasible.all():
            failures.append((Code.UNSCHEDULABLE, TOO_MANY_PODS, too_many))
        alloc, requested = snap.allocatable, snap.requested
        for col, amount in pod.req_cols:  # only positive requests; an absent column is 0 allocatable
            if self._skipped(col, snap):
                continue
            short = (alloc[:, col] - requested[:, col]) < amount
            if short.any():
                failures.append((Code.UNSCHEDULABLE, self._reason(col, snap), short))
                feasible &= ~short
        return FilterResult(feasible, failures)

    # ---- Score -------------------------------------------------------------------------

    def _alloc_and_requested(self, name: str, pod: PodInfo, snap: Snapshot, cand: np.ndarray):
        """(allocatable, requested-with-pod) over candidates, or None to leave ``name`` out."""
        if name == CPU:
            return snap.allocatable[cand, CPU_COL], snap.nonzero_requested[cand, 0] + pod.nonzero_cpu
        if name == MEMORY:
            return snap.allocatable[cand, MEMORY_COL], snap.nonzero_requested[cand, 1] + pod.nonzero_mem
        pod_req = pod.requests.get(name, 0)
        if pod_req == 0 and name not in _NON_SCALAR:
            return None  # an extended resource the pod does not ask for is not scored
        col = snap.column(name)
        if col is None:
            return None  # no node has it: allocatable 0 everywhere
        return snap.allocatable[cand, col], snap.requested[cand, col] + pod_req

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        total = np.zeros(len(candidates), dtype=np.int64)
        weights = np.zeros(len(candidates), dtype=np.int64)
        for name, weight in self.resources:
            pair = self._alloc_and_requested(name, pod, snap, candidates)
            if pair is None:
                continue
            alloc, req = pair
            # Written without branches: alloc == 0 gives 0 through the max(.., 0) and the
            # divisor of 1, and such a node's weight is left out of its average below.
            if self.strategy == LEAST_ALLOCATED:
                s = np.maximum(alloc - req, 0) * 100 // np.maximum(alloc, 1)
            else:
                s = np.minimum(req, alloc) * 100 // np.maximum(alloc, 1)
            total += s * weight if weight != 1 else s
            weights += (alloc > 0) * weight
        return total // np.maximum(weights, 1)
