"""Each node's Filter verdict and Score total for one kind of pod, kept across cycles.

Owns ``RowMemos``, which the scheduler's cycle reads instead of running Filter over the
nodes its search visits when the pod has a signature (``signature.sign_pod``: every
plugin promises that its verdict and raw score for a node depend on the pod's fragment
and on that node's own row and object alone), and instead of running the Score plugins
that normalize nothing (their weighted sum is kept; a normalizing one still runs over the
candidates). Pods of one kind are pods of one signature: a Deployment's replicas, a
benchmark's pods.

An entry of row ``i`` holds while the row's version (``NodeRows.row_versions``: what the
row holds, its allocatable and its pods' requests, count and host ports; not pod start
times or nominations) and the cache's ``node_epoch`` (a node added, removed, relabelled,
retainted, cordoned) hold. A cycle that meets a stale row among the rows it asks for
recomputes every stale row at once through the plugins themselves: a plugin call costs
numpy's overhead whatever its length, and the round-robin search reaches a node placed on
only once per rotation, so that cost is paid about once per rotation instead of per pod.

Decisions are those of the plugins run cycle by cycle (the tests run both ways and compare
every placement). Called by ``Scheduler._schedule_pod``, which scores a signed pod
through ``memo_score`` (``Framework.run_score`` with the kept totals), and by ``kindrun``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from ..search import rotated_take_idx
from ..status import SUCCESS, Status

if TYPE_CHECKING:
    from ..cache import Cache, PodInfo, Snapshot
    from ..framework import CycleState, Framework, ScorePart

MAX_KINDS = 32  # kinds of pods remembered at once; the oldest is dropped beyond it


class RowMemo:
    """One kind of pod: feasibility per row, and per set of row-local Score plugins met the
    weighted sum of their scores per row, each with the row version it was computed at
    (-1: never)."""

    __slots__ = ("_cache", "epoch", "ok", "ok_seen", "scores", "parts", "_idx")

    def __init__(self, cache: Cache, keep_parts: bool = False) -> None:
        n = cache.num_nodes
        self._cache = cache
        self.epoch = cache.node_epoch
        self.ok = np.zeros(n, dtype=bool)
        self.ok_seen = np.full(n, -1, dtype=np.int64)
        self.scores: dict[frozenset[str], tuple[np.ndarray, np.ndarray]] = {}  # plugins -> (total, seen)
        # With ``keep_parts`` (explaining every placement): beside each total, each of its
        # plugins' own score per row, current wherever the total is (plugins -> name -> scores).
        self.parts: dict[frozenset[str], dict[str, np.ndarray]] | None = {} if keep_parts else None
        self._idx: np.ndarray | None = None  # the rows ``ok`` holds feasible (None: not taken yet)

    def judge(self, rows: slice, verdicts: Callable[[np.ndarray], np.ndarray | None]) -> np.ndarray | None:
        """Feasibility of ``rows``; ``verdicts`` judges the rows given (None: a Filter error)."""
        now = self._cache.row_versions()
        # Equal bytes, equal versions: cheaper than numpy's any() for a slice this size.
        if self.ok_seen[rows].tobytes() != now[rows].tobytes() and not self._rejudge(now, verdicts):
            return None
        return self.ok[rows]

    def _rejudge(self, now: np.ndarray, verdicts: Callable[[np.ndarray], np.ndarray | None]) -> bool:
        """Judge every stale row at once; False after a Filter error."""
        stale = (self.ok_seen != now).nonzero()[0]
        ok = verdicts(stale)
        if ok is None:
            return False
        self.ok[stale] = ok
        self.ok_seen[stale] = now[stale]
        self._idx = None
        return True

    def take(
        self,
        start: int,
        k: int,
        verdicts: Callable[[np.ndarray], np.ndarray | None],
        veto: np.ndarray | None = None,
    ) -> tuple[np.ndarray, int] | None:
        """``search.chunked_take`` over every row judged through the memo (and, with
        ``veto``, refused where it is true: the nominated pods' pass 1): the same
        positions and processed count. The take runs on the kept verdicts; only when a
        row it judged is stale are the stale rows judged (all at once, as ``judge``
        does) and the take run again: a stale row beyond them is not one the search
        reached. None after a Filter error (``verdicts`` returned None)."""
        now = self._cache.row_versions()
        n = len(self.ok)
        positions, processed = rotated_take_idx(self._feasible(veto), n, start, k)
        # The rows the search judged: those it processed and, when it stopped early, the
        # feasible one it stopped at. Equal bytes, equal versions (as in ``judge``); the
        # span may wrap past the last row.
        if self._fresh(start, start + processed + (processed < n), now):
            return positions, processed
        if not self._rejudge(now, verdicts):
            return None
        return rotated_take_idx(self._feasible(veto), n, start, k)

    def feasible_count(self) -> int:
        """How many rows the kept verdicts hold feasible (stale rows as last judged)."""
        if self._idx is None:
            self._idx = self.ok.nonzero()[0]
        return len(self._idx)

    def _feasible(self, veto: np.ndarray | None) -> np.ndarray:
        """The rows held feasible, ascending, less those ``veto`` refuses."""
        if self._idx is None:
            self._idx = self.ok.nonzero()[0]
        idx = self._idx
        return idx if veto is None else idx[~veto[idx]]

    def windows(
        self, start: int, k: int, most: int, verdicts: Callable[[np.ndarray], np.ndarray | None]
    ) -> tuple[np.ndarray, list[int]] | None:
        """Up to ``most`` consecutive ``take``s from ``start``, as the next pods of the kind
        would search if each placed one pod within its own window (placing a pod changes
        its own row only): (positions per window, rows each processed). The windows stay
        within one turn of the ring, so none reaches a row an earlier one may place on.
        Every stale row is judged first (``verdicts``): a verdict depends on the row alone,
        so judging it before a search reaches it gives what ``take`` would then. None when
        fewer than two fit, or after a Filter error (the caller's ``take`` meets it)."""
        now = self._cache.row_versions()
        if self.ok_seen.tobytes() != now.tobytes() and not self._rejudge(now, verdicts):
            return None
        if self._idx is None:
            self._idx = self.ok.nonzero()[0]
        idx, n = self._idx, len(self.ok)
        # The feasible rows in search order from ``start``: window j is the k after the
        # first j*k, and stops at the next one, where window j+1 starts. Each stop must come
        # before the turn ends (back at ``start``): at most (len - 1) // k windows.
        count = min(most, (len(idx) - 1) // k)
        if count < 2:
            return None
        split = int(idx.searchsorted(start))
        order = np.concatenate((idx[split:], idx[:split])) if split else idx
        stops = order[k : count * k + 1 : k].tolist()
        processed = [(stop - at) % n for at, stop in zip([start, *stops[:-1]], stops)]
        return order[: count * k].reshape(count, k), processed

    def _fresh(self, start: int, end: int, now: np.ndarray) -> bool:
        """Are the kept verdicts of rows ``start`` to ``end`` (exclusive, wrapping past the
        last row) current? Equal bytes, equal versions."""
        seen, n = self.ok_seen, len(now)
        if end <= n:
            return seen[start:end].tobytes() == now[start:end].tobytes()
        return seen[start:].tobytes() == now[start:].tobytes() and seen[: end - n].tobytes() == now[: end - n].tobytes()

    def totals(
        self, plugins: frozenset[str], candidates: np.ndarray | None, score: Callable[[np.ndarray], np.ndarray | None]
    ) -> np.ndarray | None:
        """The weighted sum of the Score ``plugins`` over ``candidates`` (rows judged
        feasible); ``score`` computes it for the rows given (None: an error, left to the
        caller's status). ``candidates`` None: every row, current for those judged feasible
        with a current verdict (the rest are never scored; read only those)."""
        entry = self.scores.get(plugins)
        if entry is None:
            n = len(self.ok)
            entry = self.scores[plugins] = (np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64))
        total, seen = entry
        now = self._cache.row_versions()
        if candidates is None:
            stale = ((seen != now) & (self.ok_seen == now) & self.ok).nonzero()[0]
            if len(stale):
                computed = score(stale)
                if computed is None:
                    return None
                total[stale] = computed
                seen[stale] = now[stale]
            return total
        if seen[candidates].tobytes() != now[candidates].tobytes():
            # Besides the candidates, only rows whose feasibility is current and positive:
            # a score plugin is never asked about a node its filters reject, as upstream
            # never scores one.
            changed = seen != now
            due = changed & (self.ok_seen == now) & self.ok
            due[candidates] = changed[candidates]
            stale = np.flatnonzero(due)
            computed = score(stale)
            if computed is None:
                return None
            total[stale] = computed
            seen[stale] = now[stale]
        kept: np.ndarray = total[candidates]
        return kept

    def keep(self, plugins: frozenset[str], rows: np.ndarray, parts: list[ScorePart]) -> None:
        """Each plugin's scores of ``rows`` (``Framework.score_candidates``' parts), as the
        total of ``plugins`` is kept for them."""
        assert self.parts is not None  # only a memo keeping parts is given them
        kept = self.parts.setdefault(plugins, {})
        for name, _, raw, _ in parts:
            scores = kept.get(name)
            if scores is None:
                scores = kept[name] = np.zeros(len(self.ok), dtype=np.int64)
            scores[rows] = raw


class RowMemos:
    """The memos of the kinds of pods met lately, for one scheduler's cache, keyed by the
    pods' signature (``signature.sign_pod``); ``keep_parts``: see ``RowMemo``."""

    def __init__(self, cache: Cache, limit: int = MAX_KINDS, keep_parts: bool = False) -> None:
        self._cache = cache
        self._limit = limit
        self._keep_parts = keep_parts
        self._memos: dict[bytes, RowMemo] = {}

    def for_signature(self, signature: bytes | None) -> RowMemo | None:
        """The memo of the pods of ``signature``, or None for an unsignable pod."""
        if signature is None:
            return None
        memo = self._memos.pop(signature, None)  # popped and put back: the dict's order is the recency
        if memo is None or memo.epoch != self._cache.node_epoch:
            memo = RowMemo(self._cache, self._keep_parts)
            if len(self._memos) >= self._limit:
                del self._memos[next(iter(self._memos))]
        self._memos[signature] = memo
        return memo

    def __len__(self) -> int:
        return len(self._memos)


# ---- the Score half: kept totals of the Score plugins that normalize nothing -------------

_KEPT: WeakKeyDictionary[Framework, dict[frozenset[str], tuple[frozenset[str], bool]]] = WeakKeyDictionary()


def kept_scores(fwk: Framework, skips: set[str]) -> tuple[frozenset[str], bool]:
    """For a signed pod: the Score plugins that run (not in ``skips``) and normalize
    nothing (each node's score is its own row's, so their weighted sum is what a memo
    keeps), and whether any other Score plugin runs."""
    by_skips = _KEPT.setdefault(fwk, {})
    key = frozenset(skips)
    found = by_skips.get(key)
    if found is None:
        running = [(p, normalizes) for p, _, normalizes in fwk.score_plugins if p.NAME not in key]
        local = frozenset(p.NAME for p, normalizes in running if not normalizes)
        found = by_skips[key] = (local, len(local) < len(running))
    return found


def kept_totals(
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    snap: Snapshot,
    candidates: np.ndarray | None,
    memo: RowMemo,
    local: frozenset[str],
) -> tuple[np.ndarray | None, Status]:
    """The weighted total of the Score plugins ``local`` (``kept_scores``) per candidate
    (None: per row, ``RowMemo.totals``), kept in ``memo`` and computed after PreScore for
    the rows it lacks."""
    failed: list[Status] = []

    def score(rows: np.ndarray) -> np.ndarray | None:
        parts: list[ScorePart] | None = None if memo.parts is None else []
        total, status = fwk.score_candidates(state, pod, snap, rows, only=local, parts=parts)
        if total is None:
            failed.append(status)
        elif parts is not None:
            memo.keep(local, rows, parts)
        return total

    total = memo.totals(local, candidates, score)
    return (None, failed[0]) if total is None else (total, SUCCESS)


def memo_score(
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    snap: Snapshot,
    candidates: np.ndarray,
    memo: RowMemo,
    parts: list[ScorePart] | None = None,
) -> tuple[np.ndarray | None, Status]:
    """``Framework.run_score`` for a signed pod: the kept part from ``memo``, any
    normalizing Score plugin over the candidates. ``parts`` (with a memo keeping them)
    receives every Score plugin's scores, as ``Framework.score_candidates`` gives them."""
    status = fwk.run_pre_score(state, pod, snap, candidates)
    if not status.is_success():
        return None, status
    local, others = kept_scores(fwk, state.skip_score)
    if not local:
        return fwk.score_candidates(state, pod, snap, candidates, parts=parts)
    total, status = kept_totals(fwk, state, pod, snap, candidates, memo, local)
    rest: np.ndarray | None = None
    rest_parts: list[ScorePart] | None = None if parts is None else []
    if total is not None and others:
        rest, status = fwk.score_candidates(state, pod, snap, candidates, skip=local, parts=rest_parts)
        if rest is None:
            return None, status
    if total is not None and parts is not None:
        parts.extend(memo_parts(fwk, memo, local, candidates, rest_parts or []))
    return (total, status) if rest is None else (total + rest, SUCCESS)


def memo_parts(
    fwk: Framework, memo: RowMemo, local: frozenset[str], candidates: np.ndarray, others: list[ScorePart]
) -> list[ScorePart]:
    """Every Score plugin's scores over ``candidates`` in the profile's order: the kept
    plugins ``local`` (current there: their total was just read) from ``memo``, the rest
    from ``others``."""
    assert memo.parts is not None  # only a memo keeping parts is asked for them
    kept, rest = memo.parts[local], {part[0]: part for part in others}
    out: list[ScorePart] = []
    for p, weight, _ in fwk.score_plugins:
        if p.NAME in local:
            raw = kept[p.NAME][candidates]
            out.append((p.NAME, weight, raw, raw))
        elif p.NAME in rest:
            out.append(rest[p.NAME])
    return out
