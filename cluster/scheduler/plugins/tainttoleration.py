"""TaintToleration: keep pods off nodes whose taints they do not tolerate, and score
nodes by how many PreferNoSchedule taints the pod would have to put up with.

Owns ``EpochMemo``, the per-``node_epoch`` memo the node-label plugins
share. The plugin is built by the registry (no args) and run by the framework at
PreFilter, Filter, PreScore, Score and NormalizeScore.

Why it is fast: only tainted nodes need Python work, and what a pod's tolerations make of
them depends only on the tolerations and the node rows, so the verdict is memoised per
(tolerations, ``node_epoch``). Replicas share one verdict; a cluster without taints costs
a pod one attribute check.

Deviations from upstream, neither visible in placements:
- a PreFilter (upstream has none) returns Skip when no node has an untolerated
  NoSchedule/NoExecute taint, so the Filter is not run at all;
- PreScore returns Skip when no node has a PreferNoSchedule taint: upstream would give
  every node the same 100 then, which cannot change the ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

import numpy as np

from ...api.taints import (
    DO_NOT_SCHEDULE_EFFECTS,
    PREFER_NO_SCHEDULE,
    find_untolerated_taint,
    tolerations_tolerate_taint,
    untolerated_taint_reason,
)
from ..cache import NodeInfo, PodInfo, Snapshot
from ..framework import (
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterResult,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from ..status import SKIP, SUCCESS, Code, Status
from .helper import default_normalize_score

_STATE_KEY = "PreFilterTaintToleration"
_MISSING = object()
_T = TypeVar("_T")
# (feasible, failures) of the Filter for one set of tolerations.
_Verdict = tuple[np.ndarray, list[tuple[Code, str, np.ndarray]]]


# ---- memoisation over node rows ----------------------------------------------------------


class EpochMemo:
    """Values derived from the snapshot's node rows, dropped when those rows change.

    ``sync(snap)`` empties the memo when the node epoch, the node count or the cache
    changed, and rebuilds ``base`` with ``build(snap)``: the per-epoch index a plugin
    derives its per-pod values from. Per-pod values live under keys chosen by the plugin,
    at most ``limit`` of them (the oldest goes first), so a stream of distinct pods cannot
    grow it without bound.
    """

    __slots__ = ("_build", "limit", "base", "_values", "_epoch", "_n", "_infos")

    def __init__(self, build: Callable[[Snapshot], object] | None = None, limit: int = 256):
        self._build = build
        self.limit = limit
        self.base: Any = None  # what ``build`` returned for the current rows (each plugin its own type)
        self._values: dict[Hashable, Any] = {}
        self._epoch = self._n = -1
        self._infos: list[NodeInfo] | None = None  # held, not just compared by id, so a new cache cannot alias it

    def sync(self, snap: Snapshot) -> EpochMemo:
        if snap.node_epoch != self._epoch or snap.num_nodes != self._n or snap.node_infos is not self._infos:
            self._epoch, self._n, self._infos = snap.node_epoch, snap.num_nodes, snap.node_infos
            self._values = {}
            self.base = self._build(snap) if self._build is not None else None
        return self

    def get(self, key: Hashable, default: object = None) -> Any:
        return self._values.get(key, default)

    def put(self, key: Hashable, value: _T) -> _T:
        values = self._values
        if len(values) >= self.limit:
            del values[next(iter(values))]
        values[key] = value
        return value


def frozen(a: np.ndarray) -> np.ndarray:
    """Mark a memoised array read-only, so a caller that mutates it fails loudly."""
    a.flags.writeable = False
    return a


# ---- the plugin ---------------------------------------------------------------------------


class _TaintIndex:
    """Per epoch: the nodes carrying taints the Filter or the Score looks at."""

    __slots__ = ("hard", "prefer")

    def __init__(self, snap: Snapshot) -> None:
        hard: list[tuple[int, list[dict[str, Any]]]] = []
        prefer: list[tuple[int, list[dict[str, Any]]]] = []
        for i, ni in enumerate(snap.node_infos):
            taints = ni.taints
            if not taints:
                continue
            h = [t for t in taints if t.get("effect") in DO_NOT_SCHEDULE_EFFECTS]
            p = [t for t in taints if t.get("effect") == PREFER_NO_SCHEDULE]
            if h:
                hard.append((i, h))
            if p:
                prefer.append((i, p))
        self.hard = hard
        self.prefer = prefer


# What toleration matching reads of a pod's tolerations: (key, operator, value, effect) each.
_Sig = tuple[tuple[str, str, str, str], ...]


def _signature(tolerations: Iterable[dict[str, Any]]) -> _Sig:
    """What toleration matching reads, hashable: tolerationSeconds and the like drop out."""
    return tuple(
        (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "") for t in tolerations
    )


def _as_tolerations(sig: _Sig) -> list[dict[str, Any]]:
    return [{"key": k, "operator": op, "value": v, "effect": e} for k, op, v, e in sig]


class TaintToleration(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = "TaintToleration"
    EVENTS = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT})

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")
        self._memo = EpochMemo(_TaintIndex, limit=128)

    def sign(self, pod: PodInfo, state: CycleState) -> _Sig:
        return self._sig(pod)  # the Score normalizes: it is computed afresh over each pod's candidates

    @staticmethod
    def _sig(pod: PodInfo) -> _Sig:
        tolerations = (pod.pod.get("spec") or {}).get("tolerations")
        return _signature(tolerations) if tolerations else ()

    # ---- Filter --------------------------------------------------------------------------

    def _verdict(self, snap: Snapshot, sig: _Sig) -> _Verdict | None:
        """(feasible, failures) for a pod with these tolerations, or None if no node is
        rejected."""
        memo = self._memo.sync(snap)
        if not memo.base.hard:
            return None
        key = ("filter", sig)
        verdict: _Verdict | None = memo.get(key, _MISSING)
        if verdict is _MISSING:
            verdict = memo.put(key, self._compute_verdict(snap, memo.base.hard, sig))
        return verdict

    def _compute_verdict(
        self, snap: Snapshot, hard: list[tuple[int, list[dict[str, Any]]]], sig: _Sig
    ) -> _Verdict | None:
        tolerations = _as_tolerations(sig)
        by_reason: dict[str, list[int]] = {}
        for i, taints in hard:
            taint = find_untolerated_taint(taints, tolerations, None)
            if taint is not None:
                by_reason.setdefault(untolerated_taint_reason(taint), []).append(i)
        if not by_reason:
            return None
        feasible = np.ones(snap.num_nodes, dtype=bool)
        failures: list[tuple[Code, str, np.ndarray]] = []
        for reason, rows in by_reason.items():
            mask = np.zeros(snap.num_nodes, dtype=bool)
            mask[rows] = True
            feasible[rows] = False
            failures.append((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, frozen(mask)))
        return frozen(feasible), failures

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        if not self._memo.sync(snap).base.hard:
            return SKIP, None
        sig = self._sig(pod)
        verdict = self._verdict(snap, sig)
        if verdict is None:
            return SKIP, None
        state.write(_STATE_KEY, (sig, verdict))
        return SUCCESS, None

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        sig = self._sig(pod)
        cached = state.read(_STATE_KEY)
        # The node rows cannot change within a cycle, so a verdict for the same tolerations stands.
        verdict = cached[1] if cached is not None and cached[0] == sig else self._verdict(snap, sig)
        if verdict is None:
            return FilterResult(np.ones(snap.num_nodes, dtype=bool))
        feasible, failures = verdict
        return FilterResult(feasible.copy(), list(failures))

    # ---- Score ---------------------------------------------------------------------------

    def _raw_scores(self, snap: Snapshot, sig: _Sig) -> np.ndarray:
        """Per node, how many PreferNoSchedule taints these tolerations leave untolerated."""
        memo = self._memo.sync(snap)
        key = ("score", sig)
        raw: np.ndarray | None = memo.get(key)
        if raw is None:
            tolerations = _as_tolerations(sig)
            raw = np.zeros(snap.num_nodes, dtype=np.int64)
            for i, taints in memo.base.prefer:
                raw[i] = sum(1 for t in taints if not tolerations_tolerate_taint(tolerations, t))
            raw = memo.put(key, frozen(raw))
        return raw

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        if not self._memo.sync(snap).base.prefer:
            return SKIP
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        scores: np.ndarray = self._raw_scores(snap, self._sig(pod))[candidates]
        return scores

    def normalize(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> None:
        default_normalize_score(scores, reverse=True)
