"""The figures of one scheduling attempt, per plugin, as the plain reference cycle computes them.

Owns turning a cycle into the plain-data parts of a ``SchedulingResult`` attempt: the
Filter verdicts of a failed cycle (from its ``Diagnosis``, the record its FailedScheduling
message is written from, so the counts agree by construction), and, for a pod that found
a node, the whole cycle again without any accelerator (``explain_choice``): PreFilter and
Filter over every node with the nominated pods' two passes (``run_filters``, not lazy, no
memo), upstream's round-robin search from the cycle's start index (``rotated_take``), and
PreScore, Score and NormalizeScore per plugin over the nodes it collected. Nothing here
draws from the scheduler's RNG or changes its cache. Called by ``explain.Explainer``.

Everything kept is bounded: per (plugin, reason) the count and at most ``names`` node
names; per Score plugin the ``top`` best nodes; a final ranking of ``top`` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .cache import Cache, PodInfo, Snapshot
from .filtering import run_filters
from .framework import CycleState, Framework, PluginError
from .nominator import PodNominator
from .search import rotated_take
from .status import PREFILTER_ABSENT_REASON, Diagnosis, Rejection, Status


@dataclass(frozen=True)
class Limits:
    """What one record keeps: attempts per pod, pods in all, nodes per score list and ranking,
    node names per rejection reason."""

    attempts: int = 3
    pods: int = 10_000
    top: int = 5
    names: int = 10


def _names(snap: Snapshot, idx: np.ndarray, cap: int) -> list[str]:
    return [snap.node_name(int(i)) for i in idx[:cap]]


def _filter_entries(found: dict[str, dict[str, tuple[int, list[str]]]]) -> list[dict[str, Any]]:
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


def _add(found: dict, plugin: str, reason: str, count: int, names: list[str], cap: int) -> None:
    n, kept = found.setdefault(plugin, {}).get(reason, (0, []))
    found[plugin][reason] = (n + count, (kept + names)[:cap])


def rejections_entries(
    snap: Snapshot, rejections: list[Rejection], within: np.ndarray | None, cap: int, single: str = ""
) -> list[dict[str, Any]]:
    """Filter entries from ``rejections`` (masks over the snapshot's nodes, or over the one
    node ``single`` of a Reserve/Permit rejection), counting only nodes in ``within``."""
    found: dict[str, dict[str, tuple[int, list[str]]]] = {}
    for r in rejections:
        mask = r.mask if within is None or len(r.mask) != len(within) else r.mask & within
        idx = np.flatnonzero(mask)
        if not len(idx):
            continue
        names = [single] if len(mask) != snap.num_nodes and single else _names(snap, idx, cap)
        _add(found, r.plugin, r.reason, len(idx), names, cap)
    return _filter_entries(found)


def diagnosis_entries(snap: Snapshot, diag: Diagnosis, status: Status, cap: int, single: str = "") -> list[dict]:
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
            found: dict = {}
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


def explain_choice(
    fwk: Framework,
    cache: Cache,
    nominator: PodNominator,
    pod: PodInfo,
    start: int,
    nodes_to_find,
    chosen: str,
    limits: Limits,
) -> dict[str, Any]:
    """The attempt record of a pod the cycle placed on ``chosen``, recomputed on the plain
    path from the cycle's round-robin ``start``. ``nodes_to_find(fwk, m)``: how many
    feasible nodes the search collects among ``m``."""
    snap = cache.snapshot()
    n = snap.num_nodes
    state = CycleState()
    run = run_filters(fwk, cache, nominator, pod, state)
    out: dict[str, Any] = {"nodes": n, "node": chosen}
    if not run.status.is_success():
        return dict(out, evaluated=0, feasible=0, filters=[], scores=[], ranking=[], note=run.status.message())
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
    window = np.zeros(m, dtype=bool)  # the search positions judged: from start, wrapping
    first = start % m
    window[first : first + processed] = True
    window[: max(0, first + processed - m)] = True
    judged = window if search is None else np.zeros(n, dtype=bool)
    if search is not None:
        judged[search[window]] = True
    candidates = positions if search is None else search[positions]
    filters = rejections_entries(snap, run.rejections(), judged, limits.names)
    out.update(evaluated=int(processed), feasible=len(candidates), filters=filters)
    if len(candidates) < 2:
        return dict(out, scores=[], ranking=[], note="one feasible node: chosen without scoring")
    scores, total, error = _scores(fwk, state, pod, snap, candidates, limits.top)
    if error:
        for e in scores:
            e.pop("_weighted", None)
        return dict(out, scores=scores, ranking=[], note=error)
    out.update(scores=scores, ranking=_ranking(snap, candidates, total, scores, limits.top))
    mine = np.flatnonzero(candidates == snap.index_of(chosen))
    if len(mine):
        out["chosenTotal"] = int(total[mine[0]])
        if out["chosenTotal"] != int(total.max()):
            out["note"] = "the reference cycle would not have chosen this node"
    return out


def _scores(
    fwk: Framework, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray, top: int
) -> tuple[list[dict[str, Any]], np.ndarray, str]:
    """PreScore, then per Score plugin its raw, normalised and weighted scores; kept: the
    ``top`` nodes by weighted score (ties in search order). (entries, totals, error)."""
    total = np.zeros(len(candidates), dtype=np.int64)
    entries: list[dict[str, Any]] = []
    try:
        for pre in fwk.pre_score_plugins:
            status = pre.pre_score(state, pod, snap, candidates)
            if status.is_skip():
                state.skip_score.add(pre.NAME)
            elif not status.is_success():
                return entries, total, f"PreScore plugin {pre.NAME}: {status.message()}"
        for p, weight, normalizes in fwk.score_plugins:
            if p.NAME in state.skip_score:
                continue
            scores = np.asarray(p.score(state, pod, snap, candidates), dtype=np.int64)
            raw = scores.copy()
            if normalizes:
                p.normalize(state, pod, scores)
            weighted = scores * weight
            total += weighted
            best = np.argsort(-weighted, kind="stable")[:top]  # ties in search order
            entries.append(
                {
                    "plugin": p.NAME,
                    "weight": weight,
                    "top": [
                        {
                            "node": snap.node_name(int(candidates[i])),
                            "raw": int(raw[i]),
                            "normalized": int(scores[i]),
                            "weighted": int(weighted[i]),
                        }
                        for i in best
                    ],
                    "_weighted": weighted,
                }
            )
    except PluginError as exc:
        return entries, total, f"Score: {exc}"
    return entries, total, ""


def _ranking(
    snap: Snapshot, candidates: np.ndarray, total: np.ndarray, scores: list[dict[str, Any]], top: int
) -> list[dict[str, Any]]:
    """The ``top`` candidates by total score (ties in search order), each with its weighted
    score per plugin; drops the per-candidate arrays ``_scores`` left in ``scores``."""
    best = np.argsort(-total, kind="stable")[:top]
    weighted = [(e["plugin"], e.pop("_weighted")) for e in scores]
    return [
        {
            "node": snap.node_name(int(candidates[i])),
            "total": int(total[i]),
            "byPlugin": {name: int(w[i]) for name, w in weighted},
        }
        for i in best
    ]
