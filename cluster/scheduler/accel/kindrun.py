"""A run of pods of one kind: what one cycle leaves to the next pod of its kind.

Owns ``KindRun`` and ``start_run``. A benchmark's pods, a Deployment's replicas and a
Job's completions leave the queue one after another with the same spec. The full cycle
of such a pod runs every PreFilter and PreScore plugin again and finds, pod after pod,
the same answers: when the pod has a signature (``signature.py``), every plugin promised
that placing a pod of the signature does not change what it computes for the next one.
The next pod of the signature popped in the same ``Scheduler.schedule`` call then skips them: its search and its
scores run through the kind's row memo (``rowmemo.py``) with the state the run kept, and
everything after the choice (Reserve, Permit, Bind, the event) runs as for any pod.

The decisions are those of the full cycle (the tests run both ways and compare every
placement): the run stands only while nothing but its own pods' placements changed the
cluster (one ``schedule`` call: watch events arrive between calls), while no pod is
nominated anywhere (the full cycle's pass 1 would judge nominated load), and only for
pods with the run's signature. A pod the search finds no
node for, or whose plugins fail, goes through the full cycle, which explains it.

Unlike upstream's OpportunisticBatching (a kept list of nodes reused for up to 500 ms),
this changes no decision, so it needs no feature gate. Called by ``Scheduler``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..search import draw_tied
from .lazyfilter import LazyFilterRun, lazy_run
from .rowmemo import RowMemo, kept_scores, kept_totals, memo_parts
from .signature import sign_pod

if TYPE_CHECKING:
    from ..cache import PodInfo
    from ..framework import CycleState, Framework, ScorePart
    from ..snapshot import Snapshot


def nominated_in_status(pinfo: PodInfo) -> bool:
    """A pod carrying a nominated node name is never served by a run: the full cycle
    tries that node first."""
    return bool((pinfo.pod.get("status") or {}).get("nominatedNodeName"))


PLAN_AHEAD = 16  # searches a run plans at once (RowMemo.windows); fewer if the ring ends


class KindRun:
    """The kept state of one kind's last full cycle: its framework, the CycleState after
    PreFilter and PreScore (each pod of the run gets a copy for Reserve onwards), the pod
    that cycle judged (the plugins recompute stale rows for it: same kind, same answers),
    the row memo and the row-local Score plugins it keeps totals of.

    ``ahead`` holds the searches planned for the next pods of the run (``choose``), last
    first: (start row, rows processed, the candidate rows tied for the best total, every
    candidate row); ``window``: every candidate row of the last planned search chosen."""

    __slots__ = ("fwk", "key", "state", "pod", "memo", "local", "epoch", "ahead", "template", "window")

    def __init__(
        self,
        fwk: Framework,
        key: bytes,
        state: CycleState,
        pod: PodInfo,
        memo: RowMemo,
        local: frozenset[str],
        epoch: int,
    ) -> None:
        self.fwk, self.key, self.state, self.pod = fwk, key, state, pod
        self.memo, self.local, self.epoch = memo, local, epoch
        self.ahead: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        self.window: np.ndarray | None = None
        # The bytes the kind's pods came from (PodInfo.template), when the first knew them.
        self.template = pod.template

    def choose(self, snap: Snapshot, start: int, k: int, draw: Callable[[int], int]) -> tuple[int, int] | None:
        """(row chosen, rows processed) of this pod's search from ``start`` collecting ``k``
        nodes and its selection, ties broken by ``draw(n)`` (``search.draw_tied``), from
        the searches planned ahead; None when none is planned and none can be (the caller
        then searches and scores as usual). A run's pods follow one another with nothing
        but their own placements changing the cluster, each in its own window, so the
        searches and totals of several are found at once, with the same answers."""
        if not self.ahead or self.ahead[-1][0] != start:
            self.ahead = []
            if k < 2 or not self._plan(snap, start, k):
                return None
        _, processed, tied, self.window = self.ahead.pop()
        return draw_tied(tied, draw), processed

    def _plan(self, snap: Snapshot, start: int, k: int) -> bool:
        run = self.filter_run(snap)
        taken = run.windows(start, k, PLAN_AHEAD) if run.takes_kept else None
        if taken is None:
            return False
        positions, processed = taken
        every = self.totals(snap, None)  # windows() left every verdict current
        if every is None:
            return False  # the usual way reports the plugin's error
        total = every[positions]
        best = total == total.max(axis=1, keepdims=True)
        ahead, n = [], snap.num_nodes
        for j, p in enumerate(processed):
            ahead.append((start, p, positions[j][best[j]], positions[j]))
            start = (start + p) % n
        self.ahead = ahead[::-1]
        return True

    def serves(self, fwk: Framework | None, pinfo: PodInfo, node_epoch: int) -> bool:
        """Does ``pinfo`` have the run's signature? A pod that came from the same encoded
        spec, labels, owners and namespace as the run's first, none nominated, has (and
        stays as its bytes); any other is decoded and signed with the run's state (equal
        fragments: its PreFilter would have filled the same)."""
        if fwk is not self.fwk or node_epoch != self.epoch:
            return False
        if self.template is not None and pinfo.template is self.template:
            return True
        pinfo.expand()
        return not nominated_in_status(pinfo) and sign_pod(fwk, self.state, pinfo) == self.key

    def filter_run(self, snap: Snapshot) -> LazyFilterRun:
        """A lazy Filter run judging rows through the memo, as the full cycle's would (a
        new one per pod: rows its placement changed are judged anew)."""
        run = lazy_run(self.fwk, self.state, self.pod, snap)
        run.memo = self.memo
        return run

    def totals(self, snap: Snapshot, candidates: np.ndarray | None) -> np.ndarray | None:
        """The weighted Score total per candidate (None: per row, current for the feasible
        ones); None after a plugin error (the full cycle then reports it)."""
        return kept_totals(self.fwk, self.state, self.pod, snap, candidates, self.memo, self.local)[0]

    def parts(self, candidates: np.ndarray) -> list[ScorePart] | None:
        """Every Score plugin's scores over ``candidates`` (whose totals were just read),
        for the scheduling explanation; None when the memo keeps no parts."""
        if self.memo.parts is None:
            return None
        return memo_parts(self.fwk, self.memo, self.local, candidates, [])


def start_run(
    fwk: Framework, state: CycleState, pinfo: PodInfo, memo: RowMemo | None, signature: bytes | None, epoch: int
) -> KindRun | None:
    """The run a full cycle that chose a node through ``memo`` (the pod's ``signature``'s)
    with no nominated pods about and no PreFilter narrowing may start, or None when a
    Score plugin outside the memo ran."""
    if memo is None or signature is None or state.narrowed_by or nominated_in_status(pinfo):
        return None
    local, others = kept_scores(fwk, state.skip_score)
    if others or not local:
        return None
    return KindRun(fwk, signature, state.clone(), pinfo, memo, local, epoch)
