"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly.

Owns the balance score: per candidate node, the fraction of each configured resource
(cpu and memory by default) that would be requested with the pod placed there, capped at
1; the score is (1 - standard deviation of the fractions) x 100, truncated, using the
nodes' actual requests (not the non-zero defaults NodeResourcesFit scores with). PreScore
skips pods requesting none of the resources (upstream 1.33: best-effort pods would
otherwise all pile onto the emptiest-looking node). Built by the registry from
NodeResourcesBalancedAllocationArgs:

    resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]   weights must be 1
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..cache import PodInfo, Snapshot
from ..framework import MAX_NODE_SCORE, CycleState, PreScorePlugin, ScorePlugin
from ..status import SKIP, SUCCESS, Status
from .noderesources import alloc_and_requested, parse_resources

_STATE_KEY = "PreScoreNodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin):
    NAME = "NodeResourcesBalancedAllocation"
    EVENTS: frozenset[str] = frozenset()  # a score plugin rejects no pod

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        args = dict(args or {})
        resources = args.pop("resources", None)
        if args:
            raise ValueError(f"{self.NAME}: unknown arguments {sorted(args)}")
        parsed = parse_resources(self.NAME, "resources", resources)
        seen = set()
        for i, (name, weight) in enumerate(parsed):
            if name in seen:
                raise ValueError(f"{self.NAME}: resources[{i}].name: duplicate value {name!r}")
            seen.add(name)
            if weight != 1:
                raise ValueError(f"{self.NAME}: resources[{i}].weight: must be 1, got {weight}")
        self.resources = tuple(name for name, _ in parsed)

    def _pod_requests(self, pod: PodInfo) -> list[int]:
        reqs = pod.requests
        return [reqs.get(name, 0) for name in self.resources]

    def sign(self, pod: PodInfo, state: CycleState) -> bytes | None:
        return pod.resources_key  # its requests as bytes

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        reqs = self._pod_requests(pod)
        if not any(reqs):
            return SKIP
        state.write(_STATE_KEY, reqs)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        reqs = state.read(_STATE_KEY)
        if reqs is None:  # Score without PreScore: recompute, and score 0 as upstream does
            reqs = self._pod_requests(pod)
            if not any(reqs):
                return np.zeros(len(candidates), dtype=np.int64)
        fractions: list[Fraction] = []  # per resource
        for name, pod_req in zip(self.resources, reqs):
            pair = alloc_and_requested(name, pod_req, snap, candidates, nonzero=False)
            if pair is None:
                continue
            alloc, req = pair
            has: np.ndarray | None = alloc > 0
            assert has is not None  # just computed
            if has.all():
                has = None
            elif not has.any():
                continue  # no candidate has it: no fraction anywhere
            f = req / (alloc if has is None else np.where(has, alloc, 1))  # float64, as Go's
            np.minimum(f, 1.0, out=f)
            fractions.append((has, f))
        return _balanced_scores(fractions, len(candidates))


# (the nodes that have the resource, None: every node; its fraction requested per node)
Fraction = tuple[np.ndarray | None, np.ndarray]


def _balanced_scores(fractions: list[Fraction], n: int) -> np.ndarray:
    """int((1 - std) * 100) per node over the fractions of the resources it has.

    Upstream special-cases two fractions (|f0 - f1| / 2) and computes the population std
    for more; the float operations are kept in upstream's order so that scores truncate
    identically (the two formulas differ in the last bit for some inputs).
    """
    if all(has is None for has, _ in fractions):
        std = _std_uniform([f for _, f in fractions], n)
    else:
        std = _std_masked(fractions, n)
    np.subtract(1.0, std, out=std)
    std *= MAX_NODE_SCORE
    return std.astype(np.int64)


def _std_uniform(fs: list[np.ndarray], n: int) -> np.ndarray:
    """Every node has every resource (the usual case): one formula for all of them."""
    if len(fs) == 2:
        # Halving is exact, so taking the absolute value before or after it is the same.
        std = np.subtract(fs[0], fs[1])
        np.abs(std, out=std)
        std /= 2
        out: np.ndarray = std
        return out
    if len(fs) < 2:
        return np.zeros(n)
    mean = fs[0].copy()
    for f in fs[1:]:
        mean += f
    mean /= len(fs)
    squares = np.zeros(n)
    for f in fs:
        d = f - mean
        d *= d
        squares += d
    squares /= len(fs)
    return np.sqrt(squares, out=squares)


def _std_masked(given: list[Fraction], n: int) -> np.ndarray:
    """Some nodes lack some resource, so nodes have different numbers of fractions."""
    fractions = [(np.ones(n, dtype=bool) if has is None else has, f) for has, f in given]
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n)
    first, second = np.zeros(n), np.zeros(n)
    for has, f in fractions:
        f = np.where(has, f, 0.0)  # adding 0.0 leaves a float sum exactly as it was
        total += f
        second = np.where(has & (count == 1), f, second)
        first = np.where(has & (count == 0), f, first)
        count += has
    std = np.zeros(n)
    two = count == 2
    std[two] = np.abs((first[two] - second[two]) / 2)
    many = count > 2
    if many.any():
        mean = total / np.maximum(count, 1)
        squares = np.zeros(n)
        for has, f in fractions:
            squares += np.where(has, (f - mean) * (f - mean), 0.0)
        std[many] = np.sqrt(squares[many] / count[many])
    return std
