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
from ..framework import FilterResult
from ..status import Rejection
from .lazyfilter import LazyFilterRun, lazy_run
from .signature import sign_pod
from .veto import Judged, Veto, veto_of

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
        return merge_passes(plain, state, *_resource_pass(fwk, cache, pod, plain, totals=load_now))

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
        fail it, so they are judged now with their load (``totals(rows)``, through the
        kept verdicts of the pod's kind when there is a ``VetoMemo``; ``run.veto``: the
        nodes it rejects), and pass 2 stays lazy; completing the run merges both passes
        as ``merge_passes`` does."""
        fit = cast("NodeResourcesFit | None", fwk.plugins.get("NodeResourcesFit"))
        if fit is None:  # nothing judges load: pass 1 agrees with pass 2
            return
        found: Veto | None = None
        vetoes = self.vetoes
        signature = None
        if vetoes is not None and nominator.node_of(pod.uid) is None:  # its own load would count
            signature = sign_pod(fwk, run.state, pod)
        if vetoes is not None and signature is not None:
            found = vetoes.judge((signature, pod.priority), pod, cache, fit, totals, nominator.version)
        else:
            # The nodes holding a nominated pod of equal or higher priority (other than
            # this one) are those where the load counts one: read off the arrays, not by
            # walking every nomination, which thousands of pending preemptors made
            # quadratic. A nominated pod is never attached (assuming it removes the
            # nomination), so none is left out here.
            everywhere = totals(None)
            if everywhere is not None:
                rows = np.flatnonzero(everywhere[1] > 0)
                judged = rows, fit.fit(pod, cache.snapshot(), everywhere[0][rows], everywhere[1][rows], rows=rows)
                found = judged, veto_of(judged, cache.num_nodes)
        if found is None:  # no nominated pod can fail pass 1: pass 2 is all
            return
        _set_veto(fwk, cache, pod, run, found[1], found[0])


def _set_veto(
    fwk: Framework,
    cache: Cache,
    pod: PodInfo,
    run: LazyFilterRun,
    veto: np.ndarray,
    judged: Judged,
) -> None:
    """``judged``: pass 1 as the veto judged it on the loaded rows, which completing the
    run then reuses (the fit is row by row, so those rows' verdicts and reasons are what
    a fit over every node gives there; the other rows do not count in the merge)."""
    run.veto = veto

    def merge(second: FilterRun) -> FilterRun:
        return merge_passes(second, second.state, *_resource_pass(fwk, cache, pod, second, judged=judged))

    run.merge_first = merge


def _resource_pass(
    fwk: Framework,
    cache: Cache,
    pod: PodInfo,
    plain: FilterRun,
    totals: Load | None = None,
    judged: Judged | None = None,
) -> FirstPass:
    """Pass 1 by arithmetic: (rows it judges, feasible there, rejections there), from the
    nominated load (``totals``) or from the fit already made on the loaded rows
    (``judged``, ``_set_veto``). Rows whose pass 2 failed on another plugin keep that
    verdict (it does not depend on pods)."""
    snap = cache.snapshot()
    n = snap.num_nodes
    if judged is not None:
        rows = np.zeros(n, dtype=bool)
        rows[judged[0]] = True
    else:
        assert totals is not None  # one of the two is given
        rows = totals[1] > 0
    for r in plain.rejections():
        if r.plugin != "NodeResourcesFit":
            rows &= ~r.mask
    fit = cast("NodeResourcesFit | None", fwk.plugins.get("NodeResourcesFit"))
    if fit is None:  # nothing else can tell these rows apart by load
        return rows, np.ones(n, dtype=bool), list
    if judged is not None:
        result = _spread(judged, n)
    else:
        assert totals is not None  # one of the two is given
        result = fit.fit(pod, snap, totals[0], totals[1])
    return (
        rows,
        result.feasible,
        lambda: [Rejection(fit.NAME, code, reason, mask & rows) for code, reason, mask in result.failures],
    )


def _spread(judged: Judged, n: int) -> FilterResult:
    """A fit made on some rows, as a fit over all ``n`` rows reads there (feasible
    elsewhere: the merge looks only at the judged rows)."""
    rows, result = judged
    feasible = np.ones(n, dtype=bool)
    feasible[rows] = result.feasible
    failures = []
    for code, reason, mask in result.failures:
        full = np.zeros(n, dtype=bool)
        full[rows] = mask
        failures.append((code, reason, full))
    return FilterResult(feasible, failures)
