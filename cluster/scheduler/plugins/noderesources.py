"""NodeResourcesFit: does the pod fit the node's free resources, and how full would it be.

Owns the resource Filter (pod count, cpu, memory, ephemeral-storage and every other
requested resource, against allocatable minus what the cache has placed on the node) and
the resource Score (LeastAllocated by default, MostAllocated or RequestedToCapacityRatio on
request) with upstream's integer formulas. Both work on all nodes at once with numpy. Also
owns ``alloc_and_requested``, the per-resource inputs every resource score shares (used by
NodeResourcesBalancedAllocation too). Built by the registry from the profile's args
(upstream's NodeResourcesFitArgs field names):

    ignoredResources: [name, ...]          extended resources the filter does not check
    ignoredResourceGroups: [domain, ...]   extended resources under these domains, likewise
    scoringStrategy: {type: LeastAllocated | MostAllocated | RequestedToCapacityRatio,
                      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}],
                      requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, ...]}}

``utilization`` is 0..100 (percent) and ``score`` 0..10, scaled by 10 to the node score range.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...api.placement import resource_fit
from ...api.resources import CPU, EPHEMERAL, MEMORY, is_extended
from ..cache import CPU_COL, MEMORY_COL, PodInfo, Snapshot
from ..framework import (
    MAX_NODE_SCORE,
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterResult,
    PreFilterPlugin,
    PreFilterResult,
    ScorePlugin,
)
from ..status import SUCCESS, Code, Status

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
DEFAULT_RESOURCES = ({"name": CPU, "weight": 1}, {"name": MEMORY, "weight": 1})
TOO_MANY_PODS = "Too many pods"
MAX_CUSTOM_PRIORITY_SCORE = 10  # upstream's config.MaxCustomPriorityScore: shape scores are 0..10
MAX_UTILIZATION = 100
_NON_SCALAR = (CPU, MEMORY, EPHEMERAL)


def alloc_and_requested(
    name: str, pod_req: int, snap: Snapshot, cand: np.ndarray, nonzero: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """(allocatable, requested including the pod's ``pod_req``) of ``name`` over the
    candidate rows, or None when the resource is left out of the score.

    ``nonzero`` reads the nodes' non-zero cpu/memory sums (Least/Most/RequestedToCapacity
    use them); otherwise the actual requests (BalancedAllocation). A scalar resource the pod
    does not ask for is left out, as is one no node has (allocatable 0 everywhere).
    """
    if pod_req == 0 and name not in _NON_SCALAR:
        return None
    # Slicing the column first and then taking the rows is about twice as fast as
    # indexing both axes at once.
    if nonzero and name == CPU:
        return snap.allocatable[:, CPU_COL][cand], snap.nonzero_requested[:, 0][cand] + pod_req
    if nonzero and name == MEMORY:
        return snap.allocatable[:, MEMORY_COL][cand], snap.nonzero_requested[:, 1][cand] + pod_req
    col = snap.column(name)
    if col is None:
        return None
    return snap.allocatable[:, col][cand], snap.requested[:, col][cand] + pod_req


def parse_resources(owner: str, field: str, resources: Any) -> tuple[tuple[str, int], ...]:
    """``[{name, weight}]`` -> ((name, weight), ...); empty means cpu and memory; a weight
    of 0 (or none) is defaulted to 1, as upstream's defaulting does."""
    out = []
    for i, r in enumerate(resources or DEFAULT_RESOURCES):
        if not isinstance(r, dict) or not isinstance(r.get("name"), str) or not r["name"]:
            raise ValueError(f"{owner}: {field}[{i}].name is required")
        if set(r) - {"name", "weight"}:
            raise ValueError(f"{owner}: {field}[{i}] has unknown fields {sorted(set(r) - {'name', 'weight'})}")
        weight = r.get("weight") or 1
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise ValueError(f"{owner}: {field}[{i}].weight must be an integer, got {weight!r}")
        out.append((r["name"], weight))
    return tuple(out)


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _shape_table(owner: str, shape: Any) -> np.ndarray:
    """Upstream's broken-linear function sampled at every utilization 0..100.

    The function is only ever evaluated at an integer percentage, so a 101-entry lookup
    table turns the per-node interpolation into one fancy-index.
    """
    path = "scoringStrategy.requestedToCapacityRatio.shape"
    if not shape:
        raise ValueError(f"{owner}: {path}: at least one point must be specified")
    points: list[tuple[int, int]] = []
    for i, p in enumerate(shape):
        if not isinstance(p, dict) or set(p) - {"utilization", "score"}:
            raise ValueError(f"{owner}: {path}[{i}] must be {{utilization, score}}, got {p!r}")
        u, s = p.get("utilization", 0), p.get("score", 0)
        if not isinstance(u, int) or isinstance(u, bool) or not 0 <= u <= MAX_UTILIZATION:
            raise ValueError(f"{owner}: {path}[{i}].utilization {u!r} not in valid range [0, {MAX_UTILIZATION}]")
        if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ValueError(f"{owner}: {path}[{i}].score {s!r} not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
        if points and points[-1][0] >= u:
            raise ValueError(f"{owner}: {path}[{i}].utilization: utilization values must be sorted in increasing order")
        points.append((u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)))
    table = np.empty(MAX_UTILIZATION + 1, dtype=np.int64)
    for p in range(MAX_UTILIZATION + 1):
        table[p] = _broken_linear(points, p)
    return table


def _broken_linear(points: list[tuple[int, int]], p: int) -> int:
    for i, (u, s) in enumerate(points):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = points[i - 1]
            return s0 + _go_div((s - s0) * (p - u0), u - u0)
    return points[-1][1]


class NodeResourcesFit(PreFilterPlugin, FilterPlugin, ScorePlugin):
    NAME = "NodeResourcesFit"
    # Without queueing hints upstream retries a pod this plugin rejected on these events.
    EVENTS = frozenset(
        {
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_ALLOCATABLE,
            ClusterEvent.NODE_TAINT,
            ClusterEvent.NODE_LABEL,
            ClusterEvent.ASSIGNED_POD_DELETE,
        }
    )

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        args = dict(args or {})
        self._ignored = frozenset(args.pop("ignoredResources", None) or ())
        self._ignored_groups = frozenset(args.pop("ignoredResourceGroups", None) or ())
        strategy = args.pop("scoringStrategy", None) or {}
        if args:
            raise ValueError(f"{self.NAME}: unknown arguments {sorted(args)}")
        if not isinstance(strategy, dict):
            raise ValueError(f"{self.NAME}: scoringStrategy must be a mapping, got {strategy!r}")
        self._parse_strategy(dict(strategy))
        self._reasons: dict[int, str] = {}
        self._skip_cols: dict[int, bool] = {}

    def _parse_strategy(self, strategy: dict[str, Any]) -> None:
        self.strategy = strategy.pop("type", None) or LEAST_ALLOCATED
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"{self.NAME}: scoringStrategy.type {self.strategy!r} is not supported "
                f"(supported: {', '.join(STRATEGIES)})"
            )
        self.resources = parse_resources(self.NAME, "scoringStrategy.resources", strategy.pop("resources", None))
        for i, (name, weight) in enumerate(self.resources):
            if not 0 < weight <= 100:
                raise ValueError(
                    f"{self.NAME}: scoringStrategy.resources[{i}].weight: resource weight of "
                    f"{name} not in valid range (0, 100]"
                )
        rtcr = strategy.pop("requestedToCapacityRatio", None)
        if strategy:
            raise ValueError(f"{self.NAME}: unknown scoringStrategy fields {sorted(strategy)}")
        self._shape: np.ndarray | None = None
        if rtcr is not None:
            if not isinstance(rtcr, dict) or set(rtcr) - {"shape"}:
                raise ValueError(f"{self.NAME}: scoringStrategy.requestedToCapacityRatio must be {{shape: [...]}}")
            self._shape = _shape_table(self.NAME, rtcr.get("shape"))
        elif self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            # Upstream dereferences the missing shape (a panic); refuse the config instead.
            raise ValueError(
                f"{self.NAME}: scoringStrategy.requestedToCapacityRatio is required "
                f"for type {REQUESTED_TO_CAPACITY_RATIO}"
            )

    # ---- PreFilter ---------------------------------------------------------------------

    def sign(self, pod: PodInfo, state: CycleState) -> bytes | None:
        return pod.resources_key  # its requests (and host ports) as bytes

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        # Upstream computes the pod's requests here (PodInfo already holds them) and rejects
        # restartable init containers only when SidecarContainers is disabled; kubemu always
        # has sidecars, so there is nothing to decide.
        return SUCCESS, None

    # ---- Filter ------------------------------------------------------------------------

    def ignores_column(self, col: int, snap: Snapshot) -> bool:
        """Whether the filter leaves this resource column unchecked (ignoredResources)."""
        return self._skipped(col, snap)

    def _skipped(self, col: int, snap: Snapshot) -> bool:
        skip = self._skip_cols.get(col)
        if skip is None:
            name = snap.column_names[col]
            # Only extended resources may be ignored; cpu, memory, hugepages never are.
            skip = is_extended(name) and (name in self._ignored or name.split("/", 1)[0] in self._ignored_groups)
            self._skip_cols[col] = skip
        return skip

    def reason(self, col: int, snap: Snapshot) -> str:
        reason = self._reasons.get(col)
        if reason is None:
            reason = self._reasons[col] = f"Insufficient {snap.column_names[col]}"
        return reason

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        return self.fit(pod, snap)

    def filter_rows(self, state: CycleState, pod: PodInfo, snap: Snapshot, rows: np.ndarray | slice) -> FilterResult:
        return self.fit(pod, snap, rows=rows)

    def fit(
        self,
        pod: PodInfo,
        snap: Snapshot,
        extra: np.ndarray | None = None,
        extra_count: np.ndarray | None = None,
        rows: np.ndarray | slice | None = None,
    ) -> FilterResult:
        """The filter's verdict, optionally with more load on the nodes than the cache
        holds: ``extra`` (nodes x the pod's requested columns, in ``pod.req_cols`` order)
        and ``extra_count`` pods, e.g. the nominated pods of the two-pass filter. With
        ``rows`` only those nodes are judged (``extra`` and ``extra_count`` then follow
        ``rows``)."""
        pods, allowed_pods = snap.pod_count, snap.allowed_pods
        if rows is not None:
            pods, allowed_pods = pods[rows], allowed_pods[rows]
        count = pods if extra_count is None else pods + extra_count
        alloc, requested = snap.allocatable, snap.requested

        def free(key: tuple[int, int]) -> np.ndarray:
            j, col = key
            room = alloc[:, col] - requested[:, col] if rows is None else alloc[rows, col] - requested[rows, col]
            return room if extra is None else room - extra[:, j]

        # Positive requests only; a column no node has reads as 0 allocatable.
        wanted = [((j, col), amount) for j, (col, amount) in enumerate(pod.req_cols) if not self._skipped(col, snap)]
        too_many, shortages = resource_fit(wanted, free, count, allowed_pods)
        feasible = ~too_many
        failures = []
        if not feasible.all():
            failures.append((Code.UNSCHEDULABLE, TOO_MANY_PODS, too_many))
        for (_, col), short in shortages:
            failures.append((Code.UNSCHEDULABLE, self.reason(col, snap), short))
            feasible &= ~short
        return FilterResult(feasible, failures)

    def fit_row(self, pod: PodInfo, snap: Snapshot, row: int, extra: list[int], extra_count: int) -> list[str]:
        """``fit`` on the one node ``row`` in Python ints, with ``extra`` (the pod's requested
        columns, in ``pod.req_cols`` order) and ``extra_count`` pods more: the reasons it
        fails for, in ``fit``'s order (none: it fits). For a node or two, where setting up
        arrays costs more than the arithmetic."""
        alloc, requested = snap.allocatable, snap.requested

        def free(key: tuple[int, int]) -> int:
            j, col = key
            return int(alloc[row, col]) - int(requested[row, col]) - extra[j]

        wanted = [((j, col), amount) for j, (col, amount) in enumerate(pod.req_cols) if not self._skipped(col, snap)]
        count, allowed = int(snap.pod_count[row]) + extra_count, int(snap.allowed_pods[row])
        too_many, shortages = resource_fit(wanted, free, count, allowed)
        reasons = [TOO_MANY_PODS] if too_many else []
        return reasons + [self.reason(col, snap) for (_, col), _ in shortages]

    # ---- Score -------------------------------------------------------------------------

    @staticmethod
    def _pod_request(name: str, pod: PodInfo) -> int:
        if name == CPU:
            return pod.nonzero_cpu
        if name == MEMORY:
            return pod.nonzero_mem
        return pod.requests.get(name, 0)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            return self._score_ratio(pod, snap, candidates)
        total = np.zeros(len(candidates), dtype=np.int64)
        weights = np.zeros(len(candidates), dtype=np.int64)
        for name, weight in self.resources:
            pair = alloc_and_requested(name, self._pod_request(name, pod), snap, candidates, nonzero=True)
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

    def _score_ratio(self, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        """RequestedToCapacityRatio: the shape applied to each resource's utilization
        percentage, averaged with weights over the resources that score above 0."""
        total = np.zeros(len(candidates), dtype=np.int64)
        weights = np.zeros(len(candidates), dtype=np.int64)
        shape = self._shape
        assert shape is not None  # _parse_strategy requires it for this strategy
        for name, weight in self.resources:
            pair = alloc_and_requested(name, self._pod_request(name, pod), snap, candidates, nonzero=True)
            if pair is None:
                continue
            alloc, req = pair
            # Over capacity reads as 100%: min(req, alloc) * 100 // alloc is exactly 100 there.
            util = np.minimum(req, alloc) * MAX_UTILIZATION // np.maximum(alloc, 1)
            s = shape[util]
            # Upstream leaves a resource out of the average when its score is 0, not only
            # when the node lacks it.
            counted = (alloc > 0) & (s > 0)
            total += np.where(counted, s * weight, 0)
            weights += counted * weight
        # Go's math.Round(total / weights): both are small non-negative integers, so the float
        # quotient is never within rounding error of a half and the exact half-up integer
        # formula gives the same result (and 0 where no resource counted).
        return (2 * total + weights) // np.maximum(2 * weights, 1)
