"""The nominated pods' veto of one kind of pod, kept across cycles row by row.

Owns ``VetoMemo``: the lazy pass 1 by arithmetic (``fastfilter.py``: NodeResourcesFit on
the nodes holding nominated pods of equal or higher priority, with their load added) per
kind of pod, keyed by the pod's signature (``signature.py``) and priority, and kept per
node: a node's verdict and reasons depend only on the kind, on what the node holds and on
the nominations there, all of which move the node's version (``Cache.node_versions``).
So a cycle recomputes only the nodes whose version moved since, read off the cache's log
of them (``Cache.touched_since``; in a wave of preemptors, the one or two the last
preemption touched), not every node holding a nomination nor every node's version.
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

_NO_ROWS = np.empty(0, dtype=np.intp)
FEW_ROWS = 4  # stale rows recomputed one by one (``_recompute_few``), not as arrays
VetoKey = tuple[bytes, int]  # a kind of pod: its signature and priority
Load = tuple[np.ndarray, np.ndarray]  # (requests per row in the pod's columns, pods per row)
Judged = tuple[np.ndarray, FilterResult]  # pass 1 on the loaded rows: (those rows, the fit there)
Veto = tuple[Judged, np.ndarray]  # and the nodes it rejects, as a mask over every row (read-only)


class _Rows:
    """One kind's pass 1, indexed by row (rows keep their nodes while the node set
    stands): the cache's change mark it was brought up to (``Cache.touch_position``;
    None: never), whether nominated load counts there, the verdict, and per reason
    where it failed; and the answer built from them, until a row changes."""

    __slots__ = ("epoch", "mark", "loaded", "loaded_ids", "ok", "reasons", "answer", "nominations")

    def __init__(self, epoch: int, size: int) -> None:
        self.epoch = epoch
        self.mark: int | None = None
        self.loaded = np.zeros(size, dtype=bool)
        self.loaded_ids: set[int] = set()  # the stable node ids of the loaded rows
        self.ok = np.ones(size, dtype=bool)
        self.reasons: dict[str, np.ndarray] = {}
        self.answer: tuple[Veto | None] | None = None  # a 1-tuple: the answer may be None
        self.nominations = -1  # the nominator's version when the rows were last brought up to date

    def reason_mask(self, reason: str) -> np.ndarray:
        """Where pass 1 failed for ``reason`` (added as no row when first met)."""
        kept = self.reasons.get(reason)
        if kept is None:
            kept = self.reasons[reason] = np.zeros(len(self.loaded), dtype=bool)
        return kept


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
        to); None when no row holds such load. Only the rows whose node changed since the
        kind was last judged (``Cache.touched_since``: a pod placed or removed, a
        nomination, allocatable) are judged again; every nomination moves its node.
        ``nominations``: the nominator's version (while it stands, no row gains or loses load,
        so only loaded rows that changed are judged again)."""
        memo = self._rows(key, cache)
        touched = None if memo.mark is None else cache.touched_since(memo.mark)
        same_load = touched is not None and memo.nominations == nominations
        memo.mark, memo.nominations = cache.touch_position(), nominations
        if touched is None:  # first met, or the log was cut: every row
            stale = np.arange(cache.num_nodes, dtype=np.intp)
        elif same_load:
            # No nomination moved, so no row gained or lost load: a row without any passes
            # pass 1 whatever else changed there (its verdict reads no pods), and stays.
            loaded = memo.loaded_ids
            hit = {i for i in touched if i in loaded}
            stale = cache.rows_of_ids(hit) if hit else _NO_ROWS
        else:
            stale = cache.rows_of_ids(set(touched))
        if len(stale):
            self._recompute(memo, pod, cache, fit, totals, stale)
            memo.answer = None
        elif not same_load:
            memo.answer = None  # nominations on nodes the cache does not hold: built afresh all the same
        if memo.answer is not None:
            self.hits += 1
            return memo.answer[0]
        if memo.loaded.any() and len(stale) < cache.num_nodes:
            self.hits += 1
        judged = self._judged(memo, pod, cache, fit)
        found = None if judged is None else (judged, veto_of(judged, cache.num_nodes))
        memo.answer = (found,)
        return found

    @staticmethod
    def _judged(memo: _Rows, pod: PodInfo, cache: Cache, fit: NodeResourcesFit) -> Judged | None:
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
        if memo is None or memo.epoch != cache.node_epoch or len(memo.loaded) != cache.num_nodes:
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
        load = totals(stale)
        ids = memo.loaded_ids
        ids.difference_update(cache.row_ids()[stale].tolist())
        if len(stale) <= FEW_ROWS:
            VetoMemo._recompute_few(memo, pod, cache, fit, load, stale.tolist())
            return
        memo.ok[stale] = True
        for mask in memo.reasons.values():
            mask[stale] = False
        if load is None:
            memo.loaded[stale] = False
            return
        loaded = load[1] > 0
        memo.loaded[stale] = loaded
        ids.update(cache.row_ids()[stale[loaded]].tolist())
        rows = stale[loaded]
        if not len(rows):
            return
        result = fit.fit(pod, cache.snapshot(), load[0][loaded], load[1][loaded], rows=rows)
        memo.ok[rows] = result.feasible
        for code, reason, mask in result.failures:
            assert code == Code.UNSCHEDULABLE  # what the fit reports; kept by reason alone
            memo.reason_mask(reason)[rows] = mask

    @staticmethod
    def _recompute_few(
        memo: _Rows, pod: PodInfo, cache: Cache, fit: NodeResourcesFit, load: Load | None, stale: list[int]
    ) -> None:
        """``_recompute`` of a few rows, one by one in Python (``NodeResourcesFit.fit_row``:
        the same verdicts and reasons as ``fit`` there): after one preemption only the node
        or two it touched have moved."""
        snap, row_ids = cache.snapshot(), cache.row_ids()
        for k, row in enumerate(stale):
            memo.ok[row] = True
            for mask in memo.reasons.values():
                mask[row] = False
            count = 0 if load is None else int(load[1][k])
            memo.loaded[row] = count > 0
            if not count:
                continue
            memo.loaded_ids.add(int(row_ids[row]))
            assert load is not None  # count > 0 says so
            reasons = fit.fit_row(pod, snap, row, load[0][k].tolist(), count)
            memo.ok[row] = not reasons
            for reason in reasons:
                memo.reason_mask(reason)[row] = True


def _reason_order(pod: PodInfo, cache: Cache, fit: NodeResourcesFit) -> list[str]:
    """The order the fit lists its reasons in: the pod count, then each requested resource."""
    snap = cache.snapshot()
    return [TOO_MANY_PODS, *(fit.reason(col, snap) for col, _ in pod.req_cols)]


def veto_of(judged: Judged, n: int) -> np.ndarray:
    """The rows of ``n`` that pass 1 rejects."""
    rows, first = judged
    veto = np.zeros(n, dtype=bool)
    veto[rows[~first.feasible]] = True
    return veto
