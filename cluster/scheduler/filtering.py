"""PreFilter and Filter for one pod over every node, with nominated pods in two passes.

Owns upstream's RunFilterPluginsWithNominatedPods in vectorised form:
pass 2 judges every node as it is; pass 1 judges the nodes that have nominated pods of
equal or higher priority with those pods placed on them, so the room a preemptor waits
for is kept for it (and a pod whose affinity leaned on a nominated pod is not fooled).
A node is feasible only if it passes both. Called by ``Scheduler`` for every cycle and
by the preemption host for each node it dry-runs.

With ``lazy=True`` and no nominated pods to consider, only PreFilter runs up front: the
run's ``judge`` then filters the rows the scheduler's search asks for (upstream's early
stop) and ``complete`` judges every node, when the diagnosis of a pod that fits nowhere
needs all rejections.

Pass 1 places all such nominated pods at once, so a zone-wide term of the incoming pod
sees nominated pods on other nodes of the zone too; upstream adds only the evaluated
node's nominated pods. The difference only ever makes pass 1 stricter.

When only resources can tell (the caller's ``resources_decide``, and no such nominated
pod carries inter-pod terms or host ports), pass 1 is NodeResourcesFit's arithmetic on
the nodes' rows with the nominated pods' requests added, not a second run of every
plugin: the same verdicts and reasons, without placing and removing pods each cycle. A
lazy run stays lazy then: pass 1 is judged at once on the few nodes holding such pods
(``FilterRun.veto``) and merged with pass 2 when the run is completed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from .accel.signature import sign_pod
from .accel.veto import VetoMemo
from .cache import Cache, PodInfo
from .framework import CycleState, FilterOutcome, Framework
from .nominator import PodNominator
from .status import SUCCESS, Rejection, Status

if TYPE_CHECKING:
    from .accel.rowmemo import RowMemo
    from .plugins.noderesources import NodeResourcesFit


class FilterRun:
    """The verdict over all nodes: ``feasible`` per node, or a PreFilter/Error ``status``.

    A lazy run has ``feasible`` None until ``complete``; ``judge`` answers for some rows."""

    __slots__ = ("status", "state", "allowed", "feasible", "memo", "veto", "_rejections", "_rows_judge", "_first_pass")

    def __init__(self, status: Status, state: CycleState, allowed=None, feasible=None, rejections=None):
        self.status = status
        self.state = state
        self.allowed = allowed  # nodes a PreFilterResult kept (None: all)
        self.feasible = feasible
        self._rejections: Callable[[], list[Rejection]] = rejections or (lambda: [])
        self._rows_judge: Callable[[np.ndarray | slice | None], FilterOutcome] | None = None
        # A lazy run's slices may be judged through the memo of the pod's kind (rowmemo.py).
        self.memo: RowMemo | None = None
        # A lazy run with nominated pods to consider: the nodes pass 1 rejects (True), on
        # top of pass 2's verdicts; ``_first_pass`` merges pass 1 into a complete run.
        self.veto: np.ndarray | None = None
        self._first_pass: Callable[[FilterRun], None] | None = None

    @property
    def lazy(self) -> bool:
        return self._rows_judge is not None

    def rejections(self) -> list[Rejection]:
        return self._rejections()

    def judge(self, rows: np.ndarray | slice) -> np.ndarray | None:
        """Feasibility of the nodes ``rows`` (indices or a slice); None after a Filter error (then in ``status``)."""
        if self._rows_judge is None:
            return self.feasible[rows]
        if self.memo is not None and isinstance(rows, slice):
            ok = self.memo.judge(rows, self._judge_now)
        else:
            ok = self._judge_now(rows)
        if ok is None or self.veto is None:
            return ok
        return ok & ~self.veto[rows]

    @property
    def takes_kept(self) -> bool:
        """Whether every row's verdict comes from the memo alone (a lazy run through a
        kind's memo, no nominated load to veto): the search may then ``take``."""
        return self.memo is not None and self.veto is None and self._rows_judge is not None

    def take(self, start: int, k: int) -> tuple[np.ndarray, int] | None:
        """The search's positions and processed count from the memo (``RowMemo.take``);
        only when ``takes_kept``. None after a Filter error (then in ``status``)."""
        assert self.memo is not None  # takes_kept says so
        return self.memo.take(start, k, self._judge_now)

    def windows(self, start: int, k: int, most: int) -> tuple[np.ndarray, list[int]] | None:
        """The searches of the next pods of a run (``RowMemo.windows``); only when
        ``takes_kept``. None when none can be planned or after a Filter error."""
        assert self.memo is not None  # takes_kept says so
        return self.memo.windows(start, k, most, self._judge_now)

    def _judge_now(self, rows: np.ndarray | slice) -> np.ndarray | None:
        assert self._rows_judge is not None  # only a lazy run judges rows
        outcome = self._rows_judge(rows)
        if not outcome.status.is_success():
            self.status = outcome.status
            return None
        return outcome.feasible

    def complete(self) -> bool:
        """Judge every node (a lazy run); False after a Filter error (then in ``status``)."""
        if self._rows_judge is None:
            return True
        outcome = self._rows_judge(None)
        if not outcome.status.is_success():
            self.status = outcome.status
            return False
        self.feasible, self._rejections, self._rows_judge = outcome.feasible, outcome.rejections, None
        if self._first_pass is not None:
            self._first_pass(self)
            self._first_pass = self.veto = None
        return True


def nominated_to_consider(nominator: PodNominator, cache: Cache, pod: PodInfo) -> list[tuple[PodInfo, str]]:
    """(pod, node) for nominated pods of equal or higher priority, other than ``pod``, on
    known nodes; pods already placed (assumed) are counted by the cache anyway."""
    if not len(nominator):
        return []
    prio, uid, known = pod.priority, pod.uid, cache.node_info
    return [
        (p, node)
        for p, node in nominator.entries()
        if p.priority >= prio and p.uid != uid and p.node is None and known(node) is not None
    ]


def _one_pass(fwk: Framework, state: CycleState, pod: PodInfo, cache: Cache, lazy: bool = False) -> FilterRun:
    snap = cache.snapshot()
    status, allowed = fwk.run_pre_filter(state, pod, snap)
    if not status.is_success():
        return FilterRun(status, state, allowed)
    if lazy:
        from .accel.lazyfilter import lazy_run  # the accelerator builds on this module's FilterRun

        return lazy_run(fwk, state, pod, snap, allowed)
    outcome = fwk.run_filter(state, pod, snap, allowed)
    if not outcome.status.is_success():
        return FilterRun(outcome.status, state, allowed)
    return FilterRun(SUCCESS, state, allowed, outcome.feasible, outcome.rejections)


def _resource_pass(fwk: Framework, cache: Cache, pod: PodInfo, totals, plain: FilterRun):
    """Pass 1 by arithmetic: (rows it judges, feasible there, rejections there). Rows whose
    pass 2 failed on another plugin keep that verdict (it does not depend on pods)."""
    snap = cache.snapshot()
    n = snap.num_nodes
    extra, extra_count = totals  # the nominated pods' load in the pod's columns (PriorityLoad.totals)
    rows = extra_count > 0
    for r in plain.rejections():
        if r.plugin != "NodeResourcesFit":
            rows &= ~r.mask
    fit = cast("NodeResourcesFit | None", fwk.plugins.get("NodeResourcesFit"))
    if fit is None:  # nothing else can tell these rows apart by load
        return rows, np.ones(n, dtype=bool), lambda: []
    result = fit.fit(pod, snap, extra, extra_count)
    return (
        rows,
        result.feasible,
        lambda: [Rejection(fit.NAME, code, reason, mask & rows) for code, reason, mask in result.failures],
    )


def run_filters(
    fwk: Framework,
    cache: Cache,
    nominator: PodNominator,
    pod: PodInfo,
    state: CycleState | None = None,
    resources_decide=None,
    lazy: bool = False,
    vetoes: VetoMemo | None = None,
) -> FilterRun:
    """Both passes; ``state`` (pass 2's, the one Score uses) is filled in. ``lazy``: see
    the module's docstring (it applies when no nominated pod is pending, or when only
    resources can tell); ``vetoes`` keeps a lazy pass 1 across cycles (``VetoMemo``)."""
    state = CycleState() if state is None else state
    load = nominator.load
    by_load = bool(
        len(nominator)
        and resources_decide is not None
        and load is not None
        and resources_decide(pod)
        and not load.special_at_or_above(pod.priority)
    )
    plain = _one_pass(fwk, state, pod, cache, lazy=lazy and (by_load or not len(nominator)))
    if not plain.status.is_success() or not len(nominator):  # no nominated pods: pass 2 is all
        return plain
    if by_load:
        assert load is not None  # by_load says so

        def totals(rows: np.ndarray | None = None):
            cols = [col for col, _ in pod.req_cols]
            return load.totals(cols, at_least=pod.priority, exclude_uid=pod.uid, rows=rows)

        if plain.lazy:
            _veto_by_load(fwk, cache, nominator, pod, totals, plain, vetoes)
            return plain
        load_now = totals()
        if load_now is None:
            return plain
        rows, first_ok, first_rejections = _resource_pass(fwk, cache, pod, load_now, plain)
        return _merge(plain, state, rows, first_ok, first_rejections)
    nominated = nominated_to_consider(nominator, cache, pod)
    if not nominated:
        return plain
    with cache.holding(nominated):
        with_nominated = _one_pass(fwk, CycleState(), pod, cache)
        rows = np.zeros(cache.num_nodes, dtype=bool)
        # Held pods are attached (p.node set) inside ``holding``; no per-pod check here.
        rows[[p.node.index for p, _ in nominated]] = True  # type: ignore[union-attr]
    if with_nominated.status.is_error():
        return with_nominated
    if not with_nominated.status.is_success():  # a PreFilter rejection in pass 1: every such node fails it
        reason = with_nominated.status
        first_ok = np.zeros(cache.num_nodes, dtype=bool)

        def first_rejections():
            return [Rejection(reason.plugin, reason.code, r, rows.copy()) for r in reason.reasons]
    else:
        first_ok = with_nominated.feasible
        first_rejections = with_nominated.rejections
    return _merge(plain, state, rows, first_ok, first_rejections)


def _veto_by_load(
    fwk: Framework,
    cache: Cache,
    nominator: PodNominator,
    pod: PodInfo,
    totals,
    run: FilterRun,
    vetoes: VetoMemo | None = None,
) -> None:
    """Pass 1 by arithmetic for a lazy run: only the nodes holding nominated pods can
    fail it, so they are judged now with their load (``totals(rows)``; ``run.veto``: the
    nodes it rejects), and pass 2 stays lazy; completing the run merges both passes as
    ``_merge`` does, from the load over every node (``totals()``)."""
    fit = cast("NodeResourcesFit | None", fwk.plugins.get("NodeResourcesFit"))
    if fit is None:  # nothing judges load: pass 1 agrees with pass 2
        return
    key = None
    if vetoes is not None and nominator.node_of(pod.uid) is None:  # its own load would count
        signature = sign_pod(fwk, run.state, pod)
        key = None if signature is None else (signature, pod.priority)
        found = None if key is None else vetoes.get(key, nominator.version, cache)
        if found is not None:
            _set_veto(fwk, cache, pod, totals, run, found[0])
            return
    # The nodes holding a nominated pod of equal or higher priority (other than this
    # one) are those where the load counts one: read off the arrays, not by walking every
    # nomination, which thousands of pending preemptors made quadratic. A nominated pod is
    # never attached (assuming it removes the nomination), so none is left out here.
    veto, rows = None, np.empty(0, dtype=np.intp)
    everywhere = totals()
    if everywhere is not None:
        rows = np.flatnonzero(everywhere[1] > 0)
        first = fit.fit(pod, cache.snapshot(), everywhere[0][rows], everywhere[1][rows], rows=rows)
        veto = np.zeros(cache.num_nodes, dtype=bool)
        veto[rows[~first.feasible]] = True
    if key is not None:
        vetoes.put(key, nominator.version, cache, rows, veto)  # type: ignore[union-attr]
    _set_veto(fwk, cache, pod, totals, run, veto)


def _set_veto(fwk: Framework, cache: Cache, pod: PodInfo, totals, run: FilterRun, veto: np.ndarray | None) -> None:
    if veto is None:  # no nominated pod can fail pass 1: pass 2 is all
        return
    run.veto = veto

    def merge(done: FilterRun) -> None:
        arrays = totals()
        if arrays is None:  # the same load as above, so never; kept for the type
            return
        second = FilterRun(SUCCESS, done.state, done.allowed, done.feasible, done._rejections)  # pass 2 alone
        rows_mask, first_ok, first_rejections = _resource_pass(fwk, cache, pod, arrays, second)
        merged = _merge(second, done.state, rows_mask, first_ok, first_rejections)
        done.feasible, done._rejections = merged.feasible, merged._rejections

    run._first_pass = merge


def _merge(plain: FilterRun, state: CycleState, rows: np.ndarray, first_ok: np.ndarray, first_rejections) -> FilterRun:
    """Feasible where pass 2 passed and, on ``rows``, pass 1 too."""
    feasible = plain.feasible & (first_ok | ~rows)

    def rejections() -> list[Rejection]:
        # Nodes with nominated pods answer for pass 1 when it rejected them, else for pass 2.
        first = [Rejection(r.plugin, r.code, r.reason, r.mask & rows) for r in first_rejections()]
        keep = ~rows | first_ok
        second = [Rejection(r.plugin, r.code, r.reason, r.mask & keep) for r in plain.rejections()]
        return [r for r in first + second if r.mask.any()]

    return FilterRun(SUCCESS, state, plain.allowed, feasible, rejections)
