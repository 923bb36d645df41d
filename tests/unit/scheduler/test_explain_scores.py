"""Ranking placed pods' Score figures in one batch (``explain_scores.rank``) gives each pod
the figures a plain per-pod computation gives: per plugin its top nodes by weighted
score (ties in search order), the ranking by total, the chosen node's total and the note
when the reference would have chosen otherwise; and the top-N selection in 32 and 64 bits."""

from __future__ import annotations

import numpy as np
import pytest

from cluster.scheduler.explain_scores import NOT_CHOSEN_BY_REFERENCE, Scores, rank, top_positions


def _name(i: int) -> str:
    return f"n{i}"


def _expected(candidates: list[int], parts: list[tuple], chosen: int, top: int) -> dict:
    """The figures by a stable sort, one pod at a time."""
    cand = np.array(candidates)
    weighted = [np.array(p[3]) * p[1] for p in parts]
    total = sum(weighted) if parts else np.zeros(len(cand), dtype=np.int64)
    scores = []
    for (plugin, weight, raw, _), w in zip(parts, weighted):
        order = np.argsort(-w, kind="stable")[:top]
        rows = [
            {"node": _name(cand[i]), "raw": int(raw[i]), "normalized": int(w[i]) // weight, "weighted": int(w[i])}
            for i in order
        ]
        scores.append({"plugin": plugin, "weight": weight, "top": rows})
    order = np.argsort(-total, kind="stable")[:top]
    plugins = [p[0] for p in parts]
    ranking = [
        {"node": _name(cand[i]), "total": int(total[i]), "byPlugin": {p: int(w[i]) for p, w in zip(plugins, weighted)}}
        for i in order
    ]
    out = {"scores": scores, "ranking": ranking}
    if chosen in candidates:
        out["chosenTotal"] = int(total[candidates.index(chosen)])
        if out["chosenTotal"] != int(total.max()):
            out["note"] = NOT_CHOSEN_BY_REFERENCE
    return out


def _pod(rng: np.random.Generator, k: int, weights: tuple[int, ...], raw_differs: bool, chosen_at: int | None):
    candidates = [int(c) for c in rng.choice(1000, size=k, replace=False)]
    parts = []
    for j, weight in enumerate(weights):
        normalized = rng.integers(0, 4, size=k).astype(np.int64) * 25  # many ties
        raw = normalized * 3 + 1 if raw_differs else normalized
        parts.append((f"P{j}", weight, raw, normalized))
    chosen = candidates[chosen_at] if chosen_at is not None else 5000
    return candidates, parts, chosen


@pytest.mark.parametrize(
    "k,weights,raw_differs",
    [
        (2, (1,), False),  # fewer candidates than top
        (5, (1, 1), False),
        (40, (1, 1), False),
        (40, (2, 1, 3), True),
        (300, (1, 100), True),
    ],
)
def test_a_batch_ranks_each_pod_as_alone(k, weights, raw_differs):
    rng = np.random.default_rng(k + len(weights))
    pods = [_pod(rng, k, weights, raw_differs, int(rng.integers(0, k)) if i % 3 else None) for i in range(7)]
    batch = [Scores({"node": "x"}, np.array(c), parts, chosen, "") for c, parts, chosen in pods]
    rank(batch, _name, 5)
    for s, (c, parts, chosen) in zip(batch, pods):
        assert s.attempt == {"node": "x", **_expected(c, parts, chosen, 5)}


def test_pods_of_different_shapes_in_one_batch_and_no_score_plugin():
    rng = np.random.default_rng(3)
    a, b = _pod(rng, 10, (1,), False, 2), _pod(rng, 12, (1, 2), True, 0)
    batch = [
        Scores({}, np.array(a[0]), a[1], a[2], ""),
        Scores({}, np.array(b[0]), b[1], b[2], ""),
        Scores({}, np.array([7, 3, 9]), [], 3, ""),
    ]
    rank(batch, _name, 5)
    assert batch[0].attempt == _expected(*a, 5)
    assert batch[1].attempt == _expected(*b, 5)
    unscored = {"node": "n7", "total": 0, "byPlugin": {}}
    assert batch[2].attempt == {
        "scores": [],
        "ranking": [unscored, dict(unscored, node="n3"), dict(unscored, node="n9")],
        "chosenTotal": 0,
    }


def test_scores_that_stopped_short_keep_their_error_and_no_ranking():
    rng = np.random.default_rng(4)
    c, parts, chosen = _pod(rng, 8, (1,), False, 1)
    s = Scores({}, np.array(c), parts, chosen, "Score: boom")
    rank([s], _name, 5)
    assert s.attempt == {"scores": _expected(c, parts, chosen, 5)["scores"], "ranking": [], "note": "Score: boom"}


@pytest.mark.parametrize("scale", [1, 10**6, 10**9])  # keys in 32 bits, then past them (64 bits)
def test_top_positions_is_a_stable_sort_in_either_width(scale):
    rng = np.random.default_rng(scale)
    values = rng.integers(0, 5, size=(3, 4, 200)).astype(np.int64) * scale
    want = np.argsort(-values, axis=-1, kind="stable")[..., :5]
    assert top_positions(values, 5).tolist() == want.tolist()
