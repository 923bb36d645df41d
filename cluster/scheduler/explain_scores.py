"""The Score figures of placed pods, ranked in one batch: per plugin its top nodes, the final ranking.

Owns the cheap half of explaining every placement. When the cycle chose, ``explain.py``
keeps only what the cycle already holds (``Scores``: the candidates' node indices and each
Score plugin's arrays over them, references, no copy) and the attempt's dict; ``rank``
later fills in every kept attempt's ``scores``, ``ranking``, ``chosenTotal`` and ``note``
at once: the attempts whose plugins and candidate counts agree are stacked into one array,
so the top-N selection, the gathers and the totals are a few numpy calls per batch rather
than per pod. Node indices are turned into names by ``rank``'s caller's ``name``, which
must still see the nodes the cycle saw (``Explainer.flush`` runs before any node changes:
at the end of each ``Scheduler.schedule`` call).

The figures are those the per-pod code gave: per plugin the ``top`` candidates by weighted
score (ties in search order) with raw, normalised and weighted scores; the ``top``
candidates by total with their weighted score per plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .framework import ScorePart

NOT_CHOSEN_BY_REFERENCE = "the reference cycle would not have chosen this node"


class Scores:
    """What one placed pod's Score figures are made from: its ``attempt`` (filled in by
    ``rank``), the ``candidates`` (node indices, search order), the Score plugins'
    ``parts`` over them, the ``chosen`` node's index (-1: not a node of this snapshot) and
    ``error``: why the scores stop short (a recomputed cycle's), or ''."""

    __slots__ = ("attempt", "candidates", "parts", "chosen", "error")

    def __init__(
        self, attempt: dict[str, Any], candidates: np.ndarray, parts: list[ScorePart], chosen: int, error: str
    ):
        self.attempt, self.candidates, self.parts, self.chosen, self.error = attempt, candidates, parts, chosen, error

    def shape(self) -> tuple[Any, ...]:
        """Attempts of one shape stack into one array: the candidates' count and, per
        plugin, its name, its weight and whether its raw scores are its normalised ones."""
        return (len(self.candidates), *((p[0], p[1], p[2] is p[3]) for p in self.parts))


def top_positions(values: np.ndarray, top: int) -> np.ndarray:
    """Along the last axis of ``values``, the positions of its ``top`` largest, ties in
    position order: a stable sort of the negated values, without sorting them all."""
    k = values.shape[-1]
    if k <= top:
        return np.argsort(-values, axis=-1, kind="stable")
    # Distinct keys ordered as that sort: the position breaks ties, and is the key mod k.
    # In 32 bits when they fit: numpy partitions those several times faster.
    bound = max(int(values.max()), -int(values.min())) + 1 if values.size else 1
    dtype = np.int32 if bound * k < 2**31 else np.int64
    key = np.arange(k, dtype=dtype) - values.astype(dtype) * k
    best = np.partition(key, top, axis=-1)[..., :top]
    best.sort(axis=-1)
    positions: np.ndarray = best % k
    return positions


def rank(batch: list[Scores], name: Callable[[int], str], top: int) -> None:
    """Fill in the Score figures of every attempt in ``batch``."""
    groups: dict[tuple[Any, ...], list[Scores]] = {}
    for s in batch:
        if s.parts:
            groups.setdefault(s.shape(), []).append(s)
        else:
            _fill_unscored(s, name, top)
    for group in groups.values():
        _rank_group(group, name, top)


def _fill_unscored(s: Scores, name: Callable[[int], str], top: int) -> None:
    """No Score plugin ran: every candidate totals 0, the ranking is the search order."""
    ranking = [{"node": name(c), "total": 0, "byPlugin": {}} for c in s.candidates[:top].tolist()]
    _finish(s, [], ranking, 0 if bool((s.candidates == s.chosen).any()) else None, 0)


def _rank_group(group: list[Scores], name: Callable[[int], str], top: int) -> None:
    """Attempts of one shape: ``b`` pods, ``p`` plugins, ``k`` candidates each."""
    first = group[0]
    plugins = [part[0] for part in first.parts]
    weights = np.array([part[1] for part in first.parts], dtype=np.int64)
    b, p = len(group), len(plugins)
    normalized = np.array([[part[3] for part in s.parts] for s in group], dtype=np.int64)  # (b, p, k)
    weighted = normalized * weights[None, :, None] if bool((weights != 1).any()) else normalized
    total = weighted.sum(axis=1)  # (b, k)
    best = top_positions(np.concatenate((weighted, total[:, None, :]), axis=1), top)  # (b, p + 1, top)
    pods, rows = np.arange(b)[:, None, None], np.arange(p)[None, :, None]
    plugin_best, ranked = best[:, :p], best[:, p]
    candidates = np.array([s.candidates for s in group], dtype=np.int64)  # (b, k)
    # One flat list per pod (few objects alive at once: the collector's young generations
    # then have little to promote), sliced per plugin below; kk = min(top, k) per row.
    kk = best.shape[-1]
    nodes = candidates[pods, best].reshape(b, -1).tolist()
    if all(part[2] is part[3] for part in first.parts):
        raws = normalized[pods, rows, plugin_best].reshape(b, -1).tolist()
    else:
        raw = np.array([[part[2] for part in s.parts] for s in group], dtype=np.int64)
        raws = raw[pods, rows, plugin_best].reshape(b, -1).tolist()
    tops = weighted[pods, rows, plugin_best].reshape(b, -1).tolist()
    totals = np.take_along_axis(total, ranked, axis=1).tolist()
    by_plugin = weighted[pods, rows, ranked[:, None, :]].transpose(0, 2, 1).reshape(b, -1).tolist()
    at = candidates == np.array([s.chosen for s in group], dtype=np.int64)[:, None]
    found = at.any(axis=1).tolist()
    chosen_totals = total[np.arange(b), at.argmax(axis=1)].tolist()
    best_totals = total.max(axis=1).tolist()
    wlist = weights.tolist()
    for i, s in enumerate(group):
        node_i, raw_i, top_i, by_i = nodes[i], raws[i], tops[i], by_plugin[i]
        entries = [
            {
                "plugin": plugin,
                "weight": weight,
                "top": [
                    {
                        "node": name(node_i[q]),
                        "raw": raw_i[q],
                        "normalized": top_i[q] // weight,
                        "weighted": top_i[q],
                    }
                    for q in range(j * kk, (j + 1) * kk)
                ],
            }
            for j, (plugin, weight) in enumerate(zip(plugins, wlist))
        ]
        ranking = [
            {"node": name(node_i[p * kk + r]), "total": t, "byPlugin": dict(zip(plugins, by_i[r * p : (r + 1) * p]))}
            for r, t in enumerate(totals[i])
        ]
        _finish(s, entries, ranking, chosen_totals[i] if found[i] else None, best_totals[i])


def _finish(
    s: Scores, entries: list[dict[str, Any]], ranking: list[dict[str, Any]], chosen_total: int | None, best_total: int
) -> None:
    out = s.attempt
    if s.error:
        out.update(scores=entries, ranking=[], note=s.error)
        return
    out.update(scores=entries, ranking=ranking)
    if chosen_total is not None:
        out["chosenTotal"] = chosen_total
        if chosen_total != best_total:
            out["note"] = NOT_CHOSEN_BY_REFERENCE
