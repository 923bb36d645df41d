"""Explaining every placement from what the cycle saw (``explain_cycle.Choice``) gives
the figures the plain reference cycle, run again for the pod, gives: the random workloads
of the differential test with ``explain: all``, accelerated and not, against the same
workloads with every explanation recomputed; and the top-N selection those figures use
against a stable sort."""

from __future__ import annotations

import numpy as np
import pytest
from test_accel_differential import drive

from cluster.scheduler import explain
from cluster.scheduler.accel import Accelerate
from cluster.scheduler.explain_scores import top_positions as _top

SEEDS = range(0, 200, 5)


def _results(trail: list) -> list:
    return [w for rnd in trail for w in rnd if w[0] == "Patch" and "SchedulingResult" in str(w[2])]


# Every accelerator, and the lazy runs without a row memo (their rejections judged again
# over every judged row) or without kind runs (every pod through the full cycle).
ACCELERATIONS = {
    "all": Accelerate(),
    "no row memo": Accelerate(row_memo=False),
    "no kind runs": Accelerate(kind_runs=False),
}


@pytest.fixture(scope="module")
def recomputed() -> list:
    """The trails of the workloads with every placement's figures recomputed on the plain cycle."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(explain, "choice_record", lambda *args, **kwargs: None)
        return [drive(seed, Accelerate.all(False), explain="all") for seed in SEEDS]


@pytest.mark.parametrize("name", [*ACCELERATIONS, "none"])
def test_the_cycles_own_figures_are_those_of_the_recomputed_reference_cycle(monkeypatch, recomputed, name):
    served = []
    real = explain.choice_record

    def counting(*args, **kwargs):
        record = real(*args, **kwargs)
        served.append(record is not None)
        return record

    monkeypatch.setattr(explain, "choice_record", counting)
    accelerate = ACCELERATIONS.get(name, Accelerate.all(False))
    for seed, want in zip(SEEDS, recomputed):
        got = drive(seed, accelerate, explain="all")
        assert got == want, f"{name}, seed {seed}: the cycle's explanations differ from the recomputed ones"
    # Most placements were explained from their cycle: a lazy run vetoed by nominated
    # load, or a nominated node retried, recompute.
    assert len(served) > 1000 and sum(served) > 0.9 * len(served), (len(served), sum(served))
    results = [w for trail in recomputed for w in _results(trail)]
    assert len(results) > 1000 and sum("ranking" in str(w[2]) and "byPlugin" in str(w[2]) for w in results) > 500


@pytest.mark.parametrize(
    "rows,top",
    [
        ([[3, 1, 3, 2]], 5),  # fewer values than top
        ([[3, 1, 3, 2]], 4),
        ([[0] * 30], 5),  # all tied: the first five positions
        ([[5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0]], 5),
        ([list(range(25)), list(range(25, 0, -1))], 5),
    ],
)
def test_top_is_a_stable_sort_of_the_negated_values(rows, top):
    values = np.array(rows, dtype=np.int64)
    assert _top(values, top).tolist() == np.argsort(-values, axis=1, kind="stable")[:, :top].tolist()


def test_top_agrees_with_a_stable_sort_on_random_ties():
    rng = np.random.default_rng(7)
    for k in (1, 5, 6, 21, 200, 501):
        values = rng.integers(0, 4, size=(3, k)) * rng.choice([1, 2, 3])
        want = np.argsort(-values, axis=1, kind="stable")[:, :5]
        assert _top(values, 5).tolist() == want.tolist(), k
