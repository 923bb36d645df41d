"""PreFilter and Filter for one pod over every node, with nominated pods in two passes.

Owns upstream's findNodesThatFitPod with RunFilterPluginsWithNominatedPods, in vectorised
form: pass 2 judges every node as it is; pass 1 judges the nodes that have nominated pods
of equal or higher priority with those pods placed on them, so the room a preemptor waits
for is kept for it (and a pod whose affinity leaned on a nominated pod is not fooled). A
node is feasible only if it passes both. The scheduler's round-robin search then runs
over the verdicts (``FilterRun.take``). Called by ``Scheduler`` for every cycle, by the
preemption host for each node it dry-runs and by the explanation's recomputed cycle.

Pass 1 places all such nominated pods at once, so a zone-wide term of the incoming pod
sees nominated pods on other nodes of the zone too; upstream adds only the evaluated
node's nominated pods. The difference only ever makes pass 1 stricter.

The accelerators (``accel/fastfilter.py``: filtering only the rows the search visits,
pass 1 by resource arithmetic) plug in through one hook, ``run_filters``' ``fast``; they
give the same verdicts, reasons and searches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from .cache import Cache, PodInfo
from .framework import CycleState, Framework
from .nominator import PodNominator
from .search import rotated_take
from .status import SUCCESS, Rejection, Status


class FilterRun:
    """The verdict over all nodes: ``feasible`` per node, or a PreFilter/Error ``status``;
    ``allowed``: the nodes a PreFilterResult kept (None: all)."""

    __slots__ = ("status", "state", "allowed", "feasible", "_rejections")

    def __init__(
        self,
        status: Status,
        state: CycleState,
        allowed: np.ndarray | None = None,
        feasible: np.ndarray | None = None,
        rejections: Callable[[], list[Rejection]] | None = None,
    ) -> None:
        self.status = status
        self.state = state
        self.allowed = allowed
        self.feasible = feasible
        self._rejections: Callable[[], list[Rejection]] = rejections or list

    def rejections(self) -> list[Rejection]:
        return self._rejections()

    def judge(self, rows: np.ndarray | slice) -> np.ndarray | None:
        """Feasibility of the nodes ``rows`` (indices or a slice); None after a Filter
        error (then in ``status``)."""
        assert self.feasible is not None  # a run that succeeded judged every node
        return self.feasible[rows]

    def take(self, search: np.ndarray | None, start: int, k: int) -> tuple[np.ndarray, int] | None:
        """Upstream's round-robin search over the nodes ``search`` (None: every node) from
        position ``start``, collecting ``k`` feasible ones: their positions in the search
        list and how many positions it processed (``search.rotated_take``). None after a
        Filter error (then in ``status``)."""
        assert self.feasible is not None  # a run that succeeded judged every node
        return rotated_take(self.feasible if search is None else self.feasible[search], start, k)

    def rejections_among(self, judged: np.ndarray) -> list[Rejection] | None:
        """The rejections of the ``judged`` nodes (a mask over every node) at least, for
        the scheduling explanation; None when the run cannot tell."""
        return self.rejections()


class FilterHook(Protocol):
    """The accelerators' way in (``accel.fastfilter.FastFilters``)."""

    def run(
        self, fwk: Framework, cache: Cache, nominator: PodNominator, pod: PodInfo, state: CycleState
    ) -> FilterRun | None:
        """Both passes for ``pod`` (``state`` filled in), or None to leave them to the plain path."""


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


def plain_pass(fwk: Framework, state: CycleState, pod: PodInfo, cache: Cache) -> FilterRun:
    """PreFilter, then every Filter plugin over every node, as the cache holds them."""
    snap = cache.snapshot()
    status, allowed = fwk.run_pre_filter(state, pod, snap)
    if not status.is_success():
        return FilterRun(status, state, allowed)
    outcome = fwk.run_filter(state, pod, snap, allowed)
    if not outcome.status.is_success():
        return FilterRun(outcome.status, state, allowed)
    return FilterRun(SUCCESS, state, allowed, outcome.feasible, outcome.rejections)


def run_filters(
    fwk: Framework,
    cache: Cache,
    nominator: PodNominator,
    pod: PodInfo,
    state: CycleState | None = None,
    fast: FilterHook | None = None,
) -> FilterRun:
    """Both passes; ``state`` (pass 2's, the one Score uses) is filled in. ``fast``: the
    accelerators, asked first (see the module's docstring)."""
    state = CycleState() if state is None else state
    if fast is not None:
        run = fast.run(fwk, cache, nominator, pod, state)
        if run is not None:
            return run
    plain = plain_pass(fwk, state, pod, cache)
    if not plain.status.is_success() or not len(nominator):  # no nominated pods: pass 2 is all
        return plain
    nominated = nominated_to_consider(nominator, cache, pod)
    if not nominated:
        return plain
    with cache.holding(nominated):
        with_nominated = plain_pass(fwk, CycleState(), pod, cache)
        rows = np.zeros(cache.num_nodes, dtype=bool)
        # Held pods are attached (p.node set) inside ``holding``; no per-pod check here.
        rows[[p.node.index for p, _ in nominated]] = True  # type: ignore[union-attr]
    if with_nominated.status.is_error():
        return with_nominated
    first_rejections: Callable[[], list[Rejection]]
    if not with_nominated.status.is_success():  # a PreFilter rejection in pass 1: every such node fails it
        reason = with_nominated.status
        first_ok = np.zeros(cache.num_nodes, dtype=bool)

        def first_rejections() -> list[Rejection]:
            return [Rejection(reason.plugin, reason.code, r, rows.copy()) for r in reason.reasons]
    else:
        assert with_nominated.feasible is not None  # a plain pass that succeeded judged every node
        first_ok = with_nominated.feasible
        first_rejections = with_nominated.rejections
    return merge_passes(plain, state, rows, first_ok, first_rejections)


def merge_passes(
    plain: FilterRun,
    state: CycleState,
    rows: np.ndarray,
    first_ok: np.ndarray,
    first_rejections: Callable[[], list[Rejection]],
) -> FilterRun:
    """Feasible where pass 2 (``plain``) passed and, on ``rows``, pass 1 too."""
    assert plain.feasible is not None  # pass 2 judged every node
    feasible = plain.feasible & (first_ok | ~rows)

    def rejections() -> list[Rejection]:
        # Nodes with nominated pods answer for pass 1 when it rejected them, else for pass 2.
        first = [Rejection(r.plugin, r.code, r.reason, r.mask & rows) for r in first_rejections()]
        keep = ~rows | first_ok
        second = [Rejection(r.plugin, r.code, r.reason, r.mask & keep) for r in plain.rejections()]
        return [r for r in first + second if r.mask.any()]

    return FilterRun(SUCCESS, state, plain.allowed, feasible, rejections)
