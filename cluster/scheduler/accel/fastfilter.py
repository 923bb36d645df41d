"""The accelerators' hook into PreFilter and Filter: ``FastFilters``.

Owns ``FastFilters``, which ``filtering.run_filters`` asks first (``fast``) and which
takes the cycle over when an accelerator applies, else answers None and leaves it to the
plain two passes:

- with no nominated pods to consider, a lazy run (``lazyfilter.py``): PreFilter now,
  Filter for the rows the search visits;
- when only resources can tell (the scheduler host's ``resources_decide``, and no
  nominated pod of equal or higher priority carries inter-pod terms or host ports),
  pass 1 is NodeResourcesFit's arithmetic on the nodes' rows with the nominated pods'
  requests added, not a second run of every plugin: the same verdicts and reasons,
  without placing and removing pods each cycle. A lazy run stays lazy then: pass 1 is
  judged at once on the few nodes holding such pods (the run's ``veto``, kept per kind of
  pod across cycles by ``VetoMemo``) and merged with pass 2 when the run is completed.

Built by ``Scheduler`` from its ``Accelerate`` setting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from ..filtering import FilterRun, merge_passes, plain_pass
from ..status import Rejection
from .lazyfilter import LazyFilterRun, lazy_run
from .signature import sign_pod

if TYPE_CHECKING:
    from ..cache import Cache, PodInfo
    from ..framework import CycleState, Framework
    from ..nominator import PodNominator
    from ..plugins.noderesources import NodeResourcesFit
    from .veto import VetoMemo

# The nominated pods' load in the pod's columns and their count per row (``PriorityLoad.totals``).
Load = tuple[np.ndarray, np.ndarray]
Totals = Callable[[np.ndarray | None], Load | None]
FirstPass = tuple[np.ndarray, np.ndarray, Callable[[], list[Rejection]]]


class FastFilters:
    """``resources_decide``: pass 1 by arithmetic where it says only resources decide
    (None: never); ``lazy``: lazy runs; ``vetoes``: lazy pass 1 kept across cycles."""

    def __init__(self, resources_decide: Callable[[PodInfo], bool] | None, lazy: bool, vetoes: VetoMemo | None) -> None:
        self.resources_decide, self.lazy, self.vetoes = resources_decide, lazy, vetoes

    def run(
        self, fwk: Framework, cache: Cache, nominator: PodNominator, pod: PodInfo, state: CycleState
    ) -> FilterRun | None:
        """Both passes for ``pod`` (``state`` filled in), or None when no accelerator applies."""
        load = nominator.load
        by_load = bool(
            len(nominator)
            and self.resources_decide is not None
            and load is not None
            and self.resources_decide(pod)
            and not load.special_at_or_above(pod.priority)
        )
        if not by_load and (len(nominator) or not self.lazy):
            return None
        plain = self._pass(fwk, state, pod, cache)
        if not plain.status.is_success() or not len(nominator):  # no nominated pods: pass 2 is all
            return plain
        assert load is not None  # by_load says so

        def totals(rows: np.ndarray | None = None) -> Load | None:
            cols = [col for col, _ in pod.req_cols]
            found: Load | None = load.totals(cols, at_least=pod.priority, exclude_uid=pod.uid, rows=rows)
            return found

        if isinstance(plain, LazyFilterRun):
            self._veto_by_load(fwk, cache, nominator, pod, totals, plain)
            return plain
        load_now = totals()
        if load_now is None:
            return plain
        return merge_passes(plain, state, *_resource_pass(fwk, cache, pod, load_now, plain))

    def _pass(self, fwk: Framework, state: CycleState, pod: PodInfo, cache: Cache) -> FilterRun:
        if not self.lazy:
            return plain_pass(fwk, state, pod, cache)
        snap = cache.snapshot()
        status, allowed = fwk.run_pre_filter(state, pod, snap)
        if not status.is_success():
            return FilterRun(status, state, allowed)
        return lazy_run(fwk, state, pod, snap, allowed)

    def _veto_by_load(
        self, fwk: Framework, cache: Cache, nominator: PodNominator, pod: PodInfo, totals: Totals, run: LazyFilterRun
    ) -> None:
        """Pass 1 by arithmetic for a lazy run: only the nodes holding nominated pods can
        fail it, so they are judged now with their load (``totals(rows)``; ``run.veto``:
        the nodes it rejects), and pass 2 stays lazy; completing the run merges both
        passes as ``merge_passes`` does, from the load over every node (``totals(None)``)."""
        fit = cast("NodeResourcesFit | None", fwk.plugins.get("NodeResourcesFit"))
        if fit is None:  # nothing judges load: pass 1 agrees with pass 2
            return
        key = None
        vetoes = self.vetoes
        if vetoes is not None and nominator.node_of(pod.uid) is None:  # its own load would count
            signature = sign_pod(fwk, run.state, pod)
            key = None if signature is None else (signature, pod.priority)
            found = None if key is None else vetoes.get(key, nominator.version, cache)
            if found is not None:
                _set_veto(fwk, cache, pod, totals, run, found[0])
                return
        # The nodes holding a nominated pod of equal or higher priority (other than this
        # one) are those where the load counts one: read off the arrays, not by walking
        # every nomination, which thousands of pending preemptors made quadratic. A
        # nominated pod is never attached (assuming it removes the nomination), so none is
        # left out here.
        veto, rows = None, np.empty(0, dtype=np.intp)
        everywhere = totals(None)
        if everywhere is not None:
            rows = np.flatnonzero(everywhere[1] > 0)
            first = fit.fit(pod, cache.snapshot(), everywhere[0][rows], everywhere[1][rows], rows=rows)
            veto = np.zeros(cache.num_nodes, dtype=bool)
            veto[rows[~first.feasible]] = True
        if key is not None and vetoes is not None:
            vetoes.put(key, nominator.version, cache, rows, veto)
        _set_veto(fwk, cache, pod, totals, run, veto)


def _set_veto(
    fwk: Framework, cache: Cache, pod: PodInfo, totals: Totals, run: LazyFilterRun, veto: np.ndarray | None
) -> None:
    if veto is None:  # no nominated pod can fail pass 1: pass 2 is all
        return
    run.veto = veto

    def merge(second: FilterRun) -> FilterRun:
        arrays = totals(None)
        if arrays is None:  # the same load as above, so never; kept for the type
            return second
        return merge_passes(second, second.state, *_resource_pass(fwk, cache, pod, arrays, second))

    run.merge_first = merge


def _resource_pass(fwk: Framework, cache: Cache, pod: PodInfo, totals: Load, plain: FilterRun) -> FirstPass:
    """Pass 1 by arithmetic: (rows it judges, feasible there, rejections there). Rows whose
    pass 2 failed on another plugin keep that verdict (it does not depend on pods)."""
    snap = cache.snapshot()
    n = snap.num_nodes
    extra, extra_count = totals
    rows = extra_count > 0
    for r in plain.rejections():
        if r.plugin != "NodeResourcesFit":
            rows &= ~r.mask
    fit = cast("NodeResourcesFit | None", fwk.plugins.get("NodeResourcesFit"))
    if fit is None:  # nothing else can tell these rows apart by load
        return rows, np.ones(n, dtype=bool), list
    result = fit.fit(pod, snap, extra, extra_count)
    return (
        rows,
        result.feasible,
        lambda: [Rejection(fit.NAME, code, reason, mask & rows) for code, reason, mask in result.failures],
    )
