"""scheduler_perf's throughput rule on exact reading sequences."""

import pytest

from actors.harness.throughput import Throughput


@pytest.mark.parametrize(
    "readings,samples",
    [
        ([(1, 0), (2, 0)], []),  # nothing bound yet: nothing recorded
        ([(1, 100)], []),  # the first reading only starts the clock
        ([(1, 100), (2, 300), (3, 600)], [200.0, 300.0]),
        ([(1, 100), (2, 100), (3, 100), (4, 700)], [200.0, 200.0, 200.0]),  # idle seconds merge, counted thrice
        ([(1, 0), (2, 50), (2.5, 150)], [200.0]),  # late ticks: the real interval
    ],
)
def test_samples(readings, samples):
    t = Throughput()
    for now, count in readings:
        t.tick(now, count)
    assert t.samples == samples


def test_summary_uses_the_ceil_rank_percentiles():
    t = Throughput()
    t.samples = [float(v) for v in range(1, 11)]  # 1..10
    assert t.summary() == {"average": 5.5, "perc50": 5.0, "perc90": 9.0, "perc95": 10.0, "perc99": 10.0}
    assert Throughput().summary() is None
