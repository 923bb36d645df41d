"""Filter only the rows the search visits: the lazy run of one pod's Filter plugins.

Owns ``lazy_run``: after PreFilter, a ``FilterRun`` that judges rows as the scheduler's
round-robin search asks for them (upstream stops filtering once it has collected enough
nodes; the plain reference path filters every node first and then searches). Plugins that
answer for rows alone (they override ``FilterPlugin.filter_rows``) are asked for those
rows; the others are judged over every node once per search, and their verdict is kept
for the rest of that search and sliced, which gives the same verdicts. Called by
``filtering.run_filters`` (with ``lazy``) and by ``kindrun``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..filtering import FilterRun
from ..framework import FilterPlugin, FilterResult, slice_result
from ..status import SUCCESS

if TYPE_CHECKING:
    from ..cache import PodInfo, Snapshot
    from ..framework import CycleState, Framework


def filters_rows(p: FilterPlugin) -> bool:
    """Does ``p`` judge rows alone (rather than slicing its verdict over every node)?"""
    return type(p).filter_rows is not FilterPlugin.filter_rows


def lazy_run(
    fwk: Framework, state: CycleState, pod: PodInfo, snap: Snapshot, allowed: np.ndarray | None = None
) -> FilterRun:
    """A run after PreFilter that judges rows as the search asks for them; the verdicts
    of plugins that cannot judge rows alone are kept for this run (one search) only."""
    run = FilterRun(SUCCESS, state, allowed)
    full: dict[str, FilterResult] = {}

    def judge_rows(rows: np.ndarray | slice | None):
        def judge(p: FilterPlugin) -> FilterResult:
            if rows is not None and filters_rows(p):
                return p.filter_rows(state, pod, snap, rows)
            verdict = full.get(p.NAME)
            if verdict is None:
                verdict = full[p.NAME] = p.filter(state, pod, snap)
            return verdict if rows is None else slice_result(verdict, rows)

        return fwk.fold_filters(state, snap, allowed, rows, judge)

    run._rows_judge = judge_rows
    return run
