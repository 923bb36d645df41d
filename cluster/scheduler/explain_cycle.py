"""The figures of one scheduling attempt, per plugin, as the plain reference cycle computes them.

Owns turning a cycle into the plain-data parts of a ``SchedulingResult`` attempt: the
Filter verdicts of a failed cycle (from its ``Diagnosis``, the record its FailedScheduling
message is written from, so the counts agree by construction), and, for a pod that found
a node, its search, the rejections among the nodes it judged and every Score plugin's
scores: from what the cycle saw (``Choice``, filled in by ``Scheduler``; ``choice_record``)
or, when it cannot tell, from the whole cycle again without any accelerator
(``explain_choice``): PreFilter and Filter over every node with the nominated pods' two
passes (``run_filters``, not lazy, no memo), upstream's round-robin search from the
cycle's start index (``rotated_take``), and PreScore, Score and NormalizeScore per plugin
over the nodes it collected. For a placed pod ``choice_record`` gives the attempt without
its Score figures, and the arrays they are made from (``explain_scores.Scores``), which
the explainer ranks later with the rest of its batch. Nothing here draws from the
scheduler's RNG or changes its cache. Called by ``explain.Explainer``.

Everything kept is bounded: per (plugin, reason) the count and at most ``names`` node
names; per Score plugin the ``top`` best nodes; a final ranking of ``top`` nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cache import Cache, PodInfo, Snapshot
from .explain_scores import Scores, rank
from .filtering import run_filters
from .framework import CycleState, Framework, PluginError, ScorePart
from .nominator import PodNominator
from .search import rotated_take
from .status import PREFILTER_ABSENT_REASON, Diagnosis, Rejection, Status

_NONE = np.empty(0, dtype=np.intp)
# plugin -> reason -> (nodes rejected, the first node names)
Found = dict[str, dict[str, tuple[int, list[str]]]]


@dataclass(frozen=True)
class Limits:
    """What one record keeps: attempts per pod, pods in all, nodes per score list and ranking,
    node names per rejection reason."""

    attempts: int = 3
    pods: int = 10_000
    top: int = 5
    names: int = 10


def _names(snap: Snapshot, idx: np.ndarray, cap: int) -> list[str]:
    return [snap.node_name(i) for i in idx[:cap].tolist()]


def _counted(mask: np.ndarray, cap: int) -> tuple[int, np.ndarray]:
    """(how many nodes ``mask`` holds, the first ``cap`` of them): the count without
    listing every one, since a failed cycle's rejections usually cover most nodes."""
    count = int(np.count_nonzero(mask))
    if not count:
        return 0, _NONE
    head = 8 * cap
    while True:
        idx = np.flatnonzero(mask[:head])
        if len(idx) >= min(cap, count) or head >= len(mask):
            return count, idx[:cap]
        head *= 8


def _filter_entries(found: Found) -> list[dict[str, Any]]:
    """Per plugin (in the order they rejected), its reasons by count, most first."""
    out = []
    for plugin, reasons in found.items():
        rows = sorted(reasons.items(), key=lambda kv: (-kv[1][0], kv[0]))
        out.append(
            {
                "plugin": plugin,
                "rejected": sum(n for n, _ in reasons.values()),
                "reasons": [{"reason": r, "count": n, "nodes": names} for r, (n, names) in rows],
            }
        )
    return out


def _add(found: Found, plugin: str, reason: str, count: int, names: list[str], cap: int) -> None:
    n, kept = found.setdefault(plugin, {}).get(reason, (0, []))
    found[plugin][reason] = (n + count, (kept + names)[:cap])


def rejections_entries(
    snap: Snapshot, rejections: list[Rejection], within: np.ndarray | None, cap: int, single: str = ""
) -> list[dict[str, Any]]:
    """Filter entries from ``rejections`` (masks over the snapshot's nodes, or over the one
    node ``single`` of a Reserve/Permit rejection), counting only nodes in ``within``."""
    found: Found = {}
    for r in rejections:
        mask = r.mask if within is None or len(r.mask) != len(within) else r.mask & within
        count, idx = _counted(mask, cap)
        if not count:
            continue
        names = [single] if len(mask) != snap.num_nodes and single else _names(snap, idx, cap)
        _add(found, r.plugin, r.reason, count, names, cap)
    return _filter_entries(found)


def diagnosis_entries(
    snap: Snapshot, diag: Diagnosis, status: Status, cap: int, single: str = ""
) -> list[dict[str, Any]]:
    """A failed cycle's Filter verdicts: a PreFilter rejection stands for every node; nodes a
    PreFilterResult left out count under upstream's reason, for the plugins that narrowed."""
    if diag.pre_filter_msg:
        plugin = status.plugin or "PreFilter"
        entry = {"reason": diag.pre_filter_msg, "count": diag.num_all_nodes, "nodes": []}
        return [{"plugin": plugin, "point": "PreFilter", "rejected": diag.num_all_nodes, "reasons": [entry]}]
    out = rejections_entries(snap, diag.rejections, None, cap, single)
    if diag.absent is not None:
        idx = np.flatnonzero(diag.absent)
        if len(idx):
            narrowing = sorted(diag.unschedulable_plugins - {r.plugin for r in diag.rejections})
            found: Found = {}
            _add(
                found,
                ",".join(narrowing) or "PreFilter",
                PREFILTER_ABSENT_REASON,
                len(idx),
                _names(snap, idx, cap),
                cap,
            )
            out += [dict(e, point="PreFilter") for e in _filter_entries(found)]
    return out


def reason_counts(filters: list[dict[str, Any]]) -> dict[str, int]:
    """Rejected nodes per reason summed over plugins: the FailedScheduling message's histogram."""
    counts: dict[str, int] = {}
    for entry in filters:
        for r in entry["reasons"]:
            counts[r["reason"]] = counts.get(r["reason"], 0) + r["count"]
    return counts


@dataclass
class Choice:
    """What the cycle that placed a pod saw, so its explanation needs no second cycle: the
    search's round-robin ``start`` among the nodes searched (``search``, PreFilter's
    allowed nodes in order; None: every node), the positions it ``processed``, the
    ``candidates`` it collected (node indices, in search order), ``rejected(judged)``: the
    Filter rejections among the ``judged`` nodes (a mask over every node; None: it cannot
    tell, the explanation is then recomputed), and the Score
    plugins' ``parts`` over the candidates, in the profile's order."""

    start: int
    search: np.ndarray | None
    processed: int
    candidates: np.ndarray
    rejected: Callable[[np.ndarray], list[Rejection] | None]
    parts: list[ScorePart]


def explain_choice(
    fwk: Framework,
    cache: Cache,
    nominator: PodNominator,
    pod: PodInfo,
    start: int,
    nodes_to_find: Callable[[Framework, int], int],
    chosen: str,
    limits: Limits,
) -> dict[str, Any]:
    """The attempt record of a pod the cycle placed on ``chosen``, recomputed on the plain
    path from the cycle's round-robin ``start``, for a cycle that supplied no ``Choice``.
    ``nodes_to_find(fwk, m)``: how many feasible nodes the search collects among ``m``."""
    snap = cache.snapshot()
    n = snap.num_nodes
    state = CycleState()
    run = run_filters(fwk, cache, nominator, pod, state)
    out: dict[str, Any] = {"nodes": n, "node": chosen}
    if not run.status.is_success():
        return dict(out, evaluated=0, feasible=0, filters=[], scores=[], ranking=[], note=run.status.message())
    assert run.feasible is not None  # a plain run that succeeded judged every node
    nominated = nominator.node_of(pod.uid) or pod.nominated_node_name
    at = snap.index_of(nominated) if nominated else None
    if at is not None:
        if run.feasible[at] and (run.allowed is None or run.allowed[at]):
            note = f"the nominated node {nominated} fits: chosen without a search"
            return dict(out, evaluated=1, feasible=1, filters=[], scores=[], ranking=[], note=note)
        start = 0  # upstream's one-node search of the nominated node leaves its start at 0
    search = None if run.allowed is None else np.flatnonzero(run.allowed)
    m = n if search is None else len(search)
    if m == 0:
        return dict(out, evaluated=0, feasible=0, filters=[], scores=[], ranking=[])
    feasible = run.feasible if search is None else run.feasible[search]
    positions, processed = rotated_take(feasible, start % m, nodes_to_find(fwk, m))
    candidates = positions if search is None else search[positions]
    parts: list[ScorePart] = []
    error = _scores(fwk, state, pod, snap, candidates, parts) if len(candidates) > 1 else ""
    choice = Choice(start % m, search, processed, candidates, lambda judged: run.rejections(), parts)
    captured = choice_record(snap, chosen, choice, limits, error)
    assert captured is not None  # a complete run tells every rejection
    record, scores = captured
    if scores is not None:
        rank([scores], snap.node_name, limits.top)
    return record


def choice_record(
    snap: Snapshot, chosen: str, choice: Choice, limits: Limits, error: str = ""
) -> tuple[dict[str, Any], Scores | None] | None:
    """The attempt record of a pod placed on ``chosen`` by the cycle ``choice`` describes
    (``error``: why its scores stop short, for a recomputed cycle), and what its Score
    figures are made from (``Scores``, for ``explain_scores.rank`` to fill into that record;
    None: it is complete); None when the choice cannot tell its rejections."""
    n, search, candidates = snap.num_nodes, choice.search, choice.candidates
    processed = int(choice.processed)
    out: dict[str, Any] = {"nodes": n, "node": chosen, "evaluated": processed, "feasible": len(candidates)}
    if processed == len(candidates):
        # Every node the search judged was collected: none was rejected, nothing to judge again.
        out["filters"] = []
    else:
        judged = _judged(n, search, choice.start, processed)
        rejected = choice.rejected(judged)
        if rejected is None:
            return None
        out["filters"] = rejections_entries(snap, rejected, judged, limits.names)
    if len(candidates) < 2:
        return dict(out, scores=[], ranking=[], note="one feasible node: chosen without scoring"), None
    at = snap.index_of(chosen)
    return out, Scores(out, candidates, choice.parts, -1 if at is None else at, error)


def _judged(n: int, search: np.ndarray | None, first: int, processed: int) -> np.ndarray:
    """The nodes (a mask over all ``n``) at the search positions judged: from ``first``, wrapping."""
    m = n if search is None else len(search)
    window = np.zeros(m, dtype=bool)
    window[first : first + processed] = True
    window[: max(0, first + processed - m)] = True
    if search is None:
        return window
    judged = np.zeros(n, dtype=bool)
    judged[search[window]] = True
    return judged


def _scores(
    fwk: Framework, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray, parts: list[ScorePart]
) -> str:
    """PreScore, then per Score plugin its raw and normalised scores into ``parts``; the
    error that stopped them, or ''."""
    try:
        for pre in fwk.pre_score_plugins:
            status = pre.pre_score(state, pod, snap, candidates)
            if status.is_skip():
                state.skip_score.add(pre.NAME)
            elif not status.is_success():
                return f"PreScore plugin {pre.NAME}: {status.message()}"
        for p, weight, normalizes in fwk.score_plugins:
            if p.NAME in state.skip_score:
                continue
            scores = np.asarray(p.score(state, pod, snap, candidates), dtype=np.int64)
            raw = scores.copy()
            if normalizes:
                p.normalize(state, pod, scores)
            parts.append((p.NAME, weight, raw, scores))
    except PluginError as exc:
        return f"Score: {exc}"
    return ""
