"""The nominated pods' veto of one kind of pod, kept across cycles row by row.

Owns ``VetoMemo``: the lazy pass 1 by arithmetic (``fastfilter.py``: NodeResourcesFit on
the nodes holding nominated pods of equal or higher priority, with their load added) per
kind of pod, keyed by the pod's signature (``signature.py``) and priority, and kept per
node: a node's verdict and reasons depend only on the kind, on what the node holds and on
the nominations there, all of which move the node's version (``Cache.node_versions``).
So a cycle recomputes only the nodes whose version moved since (in a wave of preemptors,
the one or two the last preemption touched), not every node holding a nomination.
Owned by ``Scheduler``; read by ``fastfilter.FastFilters``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..framework import FilterResult
from ..plugins.noderesources import TOO_MANY_PODS
from ..status import Code

if TYPE_CHECKING:
    from ..cache import Cache, PodInfo
    from ..plugins.noderesources import NodeResourcesFit

VetoKey = tuple[bytes, int]  # a kind of pod: its signature and priority
Load = tuple[np.ndarray, np.ndarray]  # (requests per row in the pod's columns, pods per row)
Judged = tuple[np.ndarray, FilterResult]  # pass 1 on the loaded rows: (those rows, the fit there)
Veto = tuple[Judged, np.ndarray]  # and the nodes it rejects, as a mask over every row (read-only)


class _Rows:
    """One kind's pass 1, indexed by row (rows keep their nodes while the node set
    stands): the node version each entry was computed at (-1: never), whether nominated
    load counts there, the verdict, and per reason where it failed."""

    __slots__ = ("epoch", "seen", "loaded", "ok", "reasons", "last")

    def __init__(self, epoch: int, size: int) -> None:
        self.epoch = epoch
        self.seen = np.full(size, -1, dtype=np.int64)
        self.loaded = np.zeros(size, dtype=bool)
        self.ok = np.ones(size, dtype=bool)
        self.reasons: dict[str, np.ndarray] = {}
        # The last answer, with the nominations' version and its rows' versions then: while
        # no nomination moved, only those rows can hold load, and only they need looking at.
        self.last: tuple[int, bytes, Veto | None] | None = None


class VetoMemo:
    """Pass 1 of the kinds of pods met lately (signature and priority), per node, while
    the node set (``Cache.node_epoch``) stands. A preemptor stays nominated for the many
    cycles of the pods queued behind it, each of which would otherwise sum the same load
    and run the same fit over every node holding a nomination. Owned by the scheduler;
    read by ``FastFilters``."""

    LIMIT = 16  # kinds remembered at once; the oldest is dropped beyond it

    def __init__(self) -> None:
        self._kinds: dict[VetoKey, _Rows] = {}
        self.hits = 0  # cycles that reused a kept node's verdict

    def judge(
        self,
        key: VetoKey,
        pod: PodInfo,
        cache: Cache,
        fit: NodeResourcesFit,
        totals: Callable[[np.ndarray], Load | None],
        nominations: int,
    ) -> Veto | None:
        """Pass 1 on the rows where nominated load counts for a pod of ``key`` (not
        nominated itself): those rows and the fit there, as ``fit.fit`` with the load of
        ``totals(rows)`` gives, and the mask of the rows it rejects (shared: never written
        to); None when no row holds such load. ``nominations``: the nominator's version."""
        memo = self._rows(key, cache)
        last = memo.last
        if last is not None and last[0] == nominations:
            found = last[2]
            if found is None or _versions(cache, found[0][0]) == last[1]:
                self.hits += 1
                return found
        judged = self._judge(memo, pod, cache, fit, totals)
        found = None if judged is None else (judged, veto_of(judged, cache.num_nodes))
        memo.last = (nominations, b"" if judged is None else _versions(cache, judged[0]), found)
        return found

    def _judge(
        self,
        memo: _Rows,
        pod: PodInfo,
        cache: Cache,
        fit: NodeResourcesFit,
        totals: Callable[[np.ndarray], Load | None],
    ) -> Judged | None:
        now = cache.node_versions()[cache.row_ids()]
        stale = np.flatnonzero(memo.seen != now)
        if len(stale) < len(now) and memo.loaded.any():
            self.hits += 1
        if len(stale):
            self._recompute(memo, pod, cache, fit, totals, stale)
            memo.seen[stale] = now[stale]
        rows = np.flatnonzero(memo.loaded)
        if not len(rows):
            return None
        failures = []
        if memo.reasons:
            order = _reason_order(pod, cache, fit)
            for reason in sorted(memo.reasons, key=order.index):
                mask = memo.reasons[reason][rows]
                if mask.any():
                    failures.append((Code.UNSCHEDULABLE, reason, mask))
        return rows, FilterResult(memo.ok[rows], failures)

    def _rows(self, key: VetoKey, cache: Cache) -> _Rows:
        memo = self._kinds.pop(key, None)  # popped and put back: the dict's order is the recency
        if memo is None or memo.epoch != cache.node_epoch or len(memo.seen) != cache.num_nodes:
            memo = _Rows(cache.node_epoch, cache.num_nodes)
            if len(self._kinds) >= self.LIMIT:
                del self._kinds[next(iter(self._kinds))]
        self._kinds[key] = memo
        return memo

    @staticmethod
    def _recompute(
        memo: _Rows,
        pod: PodInfo,
        cache: Cache,
        fit: NodeResourcesFit,
        totals: Callable[[np.ndarray], Load | None],
        stale: np.ndarray,
    ) -> None:
        memo.ok[stale] = True
        for mask in memo.reasons.values():
            mask[stale] = False
        load = totals(stale)
        if load is None:
            memo.loaded[stale] = False
            return
        loaded = load[1] > 0
        memo.loaded[stale] = loaded
        rows = stale[loaded]
        if not len(rows):
            return
        result = fit.fit(pod, cache.snapshot(), load[0][loaded], load[1][loaded], rows=rows)
        memo.ok[rows] = result.feasible
        for code, reason, mask in result.failures:
            assert code == Code.UNSCHEDULABLE  # what the fit reports; kept by reason alone
            kept = memo.reasons.get(reason)
            if kept is None:
                kept = memo.reasons[reason] = np.zeros(len(memo.seen), dtype=bool)
            kept[rows] = mask


def _reason_order(pod: PodInfo, cache: Cache, fit: NodeResourcesFit) -> list[str]:
    """The order the fit lists its reasons in: the pod count, then each requested resource."""
    snap = cache.snapshot()
    return [TOO_MANY_PODS, *(fit.reason(col, snap) for col, _ in pod.req_cols)]


def _versions(cache: Cache, rows: np.ndarray) -> bytes:
    """The node versions of ``rows``, compared as bytes (equal bytes, equal versions)."""
    return bytes(cache.node_versions()[cache.row_ids()[rows]].tobytes())


def veto_of(judged: Judged, n: int) -> np.ndarray:
    """The rows of ``n`` that pass 1 rejects."""
    rows, first = judged
    veto = np.zeros(n, dtype=bool)
    veto[rows[~first.feasible]] = True
    return veto
