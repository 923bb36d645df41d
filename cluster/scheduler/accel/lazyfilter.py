"""Filter only the rows the search visits: the lazy run of one pod's Filter plugins.

Owns ``LazyFilterRun`` and ``lazy_run``: after PreFilter, a ``FilterRun`` that judges rows
as the scheduler's round-robin search asks for them (upstream stops filtering once it has
collected enough nodes; the plain reference path filters every node first and then
searches). Plugins that answer for rows alone (they override ``FilterPlugin.filter_rows``)
are asked for those rows; the others are judged over every node once per search, and
their verdict is kept for the rest of that search and sliced, which gives the same
verdicts. A run may judge its rows through the row memo of the pod's kind
(``rowmemo.py``), and carry pass 1's veto of the nominated pods' load (``fastfilter.py``).
Built by ``fastfilter.FastFilters`` (the scheduler's hook into ``filtering.run_filters``)
and by ``kindrun``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..filtering import FilterRun
from ..framework import FilterOutcome, FilterPlugin, FilterResult, slice_result
from ..search import FIRST_CHUNK, chunked_take
from ..status import SUCCESS, Rejection

if TYPE_CHECKING:
    from ..cache import PodInfo, Snapshot
    from ..framework import CycleState, Framework
    from .rowmemo import RowMemo

RowsJudge = Callable[[np.ndarray | slice | None], FilterOutcome]


class LazyFilterRun(FilterRun):
    """A run whose ``feasible`` stays None until ``complete``: ``judge`` answers for the
    rows asked (through ``memo`` when set), and ``take`` searches judging only as far as
    the search goes."""

    __slots__ = ("memo", "veto", "merge_first", "num_nodes", "_rows_judge")

    def __init__(self, state: CycleState, allowed: np.ndarray | None, num_nodes: int, rows_judge: RowsJudge) -> None:
        super().__init__(SUCCESS, state, allowed)
        self.num_nodes = num_nodes
        self._rows_judge: RowsJudge | None = rows_judge
        # The slices of a run may be judged through the memo of the pod's kind (rowmemo.py).
        self.memo: RowMemo | None = None
        # With nominated pods to consider: the nodes pass 1 rejects (True), on top of
        # pass 2's verdicts; ``merge_first`` merges pass 1 into pass 2 once complete.
        self.veto: np.ndarray | None = None
        self.merge_first: Callable[[FilterRun], FilterRun] | None = None

    def judge(self, rows: np.ndarray | slice) -> np.ndarray | None:
        if self._rows_judge is None:
            return super().judge(rows)
        if self.memo is not None and isinstance(rows, slice):
            ok = self.memo.judge(rows, self._judge_now)
        else:
            ok = self._judge_now(rows)
        if ok is None or self.veto is None:
            return ok
        vetoed: np.ndarray = ok & ~self.veto[rows]
        return vetoed

    @property
    def takes_kept(self) -> bool:
        """Whether every row's verdict comes from the memo alone (through a kind's memo,
        no nominated load to veto): the search may then run on the kept verdicts."""
        return self.memo is not None and self.veto is None and self._rows_judge is not None

    def take(self, search: np.ndarray | None, start: int, k: int) -> tuple[np.ndarray, int] | None:
        """As ``FilterRun.take``, judging rows in growing chunks until the search stops
        (``search.chunked_take``), or on the memo's kept verdicts less the veto's rows
        (``RowMemo.take``); a search that found nothing completes the run, for the
        diagnosis."""
        memo = self.memo
        if search is None and memo is not None and self._rows_judge is not None and self._take_kept(memo, k):
            # On the kept verdicts, less the rows pass 1 vetoes: what judging chunks gives.
            taken = memo.take(start, k, self._judge_now, self.veto)
        else:
            m = self.num_nodes if search is None else len(search)
            judge = self.judge if search is None else (lambda pos: self.judge(search[pos]))
            taken = chunked_take(judge, m, start, k)
        if taken is not None and not len(taken[0]) and not self.complete():
            return None
        return taken

    def _take_kept(self, memo: RowMemo, k: int) -> bool:
        """Take on the kept verdicts: always without a veto; with one, only while few rows
        are feasible (a wave of preemptors on full nodes), since removing the vetoed rows
        reads every feasible row, where judging chunks stops after the first ones."""
        return self.veto is None or memo.feasible_count() <= max(2 * k, FIRST_CHUNK)

    def windows(self, start: int, k: int, most: int) -> tuple[np.ndarray, list[int]] | None:
        """The searches of the next pods of a run (``RowMemo.windows``); only when
        ``takes_kept``. None when none can be planned or after a Filter error."""
        assert self.memo is not None  # takes_kept says so
        return self.memo.windows(start, k, most, self._judge_now)

    def _judge_now(self, rows: np.ndarray | slice) -> np.ndarray | None:
        assert self._rows_judge is not None  # a completed run judges from ``feasible``
        outcome = self._rows_judge(rows)
        if not outcome.status.is_success():
            self.status = outcome.status
            return None
        return outcome.feasible

    def complete(self) -> bool:
        """Judge every node; False after a Filter error (then in ``status``)."""
        if self._rows_judge is None:
            return True
        outcome = self._rows_judge(None)
        if not outcome.status.is_success():
            self.status = outcome.status
            return False
        self.feasible, self._rejections, self._rows_judge = outcome.feasible, outcome.rejections, None
        if self.merge_first is not None:
            merged = self.merge_first(FilterRun(SUCCESS, self.state, self.allowed, self.feasible, outcome.rejections))
            self.feasible, self._rejections = merged.feasible, merged.rejections
            self.merge_first = self.veto = None
        return True

    def rejections_among(self, judged: np.ndarray) -> list[Rejection] | None:
        """Judges again only the rows among ``judged`` that the memo holds infeasible (or
        every judged row, without a memo). None with a veto of pass 1 (its reasons need
        the complete run) or after a Filter error."""
        if self._rows_judge is None:
            return super().rejections_among(judged)
        if self.veto is not None:
            return None
        rows = np.flatnonzero(judged if self.memo is None else judged & ~self.memo.ok)
        if not len(rows):
            return []
        outcome = self._rows_judge(rows)
        if not outcome.status.is_success():
            return None
        out = []
        for r in outcome.rejections():
            mask = np.zeros(len(judged), dtype=bool)
            mask[rows[r.mask]] = True
            out.append(Rejection(r.plugin, r.code, r.reason, mask))
        return out


def filters_rows(p: FilterPlugin) -> bool:
    """Does ``p`` judge rows alone (rather than slicing its verdict over every node)?"""
    return type(p).filter_rows is not FilterPlugin.filter_rows


def lazy_run(
    fwk: Framework, state: CycleState, pod: PodInfo, snap: Snapshot, allowed: np.ndarray | None = None
) -> LazyFilterRun:
    """A run after PreFilter that judges rows as the search asks for them; the verdicts
    of plugins that cannot judge rows alone are kept for this run (one search) only."""
    full: dict[str, FilterResult] = {}

    def judge_rows(rows: np.ndarray | slice | None) -> FilterOutcome:
        def judge(p: FilterPlugin) -> FilterResult:
            if rows is not None and filters_rows(p):
                return p.filter_rows(state, pod, snap, rows)
            verdict = full.get(p.NAME)
            if verdict is None:
                verdict = full[p.NAME] = p.filter(state, pod, snap)
            return verdict if rows is None else slice_result(verdict, rows)

        return fwk.fold_filters(state, snap, allowed, rows, judge)

    return LazyFilterRun(state, allowed, snap.num_nodes, judge_rows)
