"""A bench whose measured pods stop binding says so promptly (no Ray: a fake scheduler)."""

import asyncio
import time
from types import SimpleNamespace

import pytest

from actors.harness import benchray


class _Remote:
    def __init__(self, fn):
        self.fn = fn

    def remote(self, *args):
        async def call():
            return self.fn(*args)

        return call()


def _cluster(counts):
    """A scheduler whose bind window reports ``counts`` one poll at a time, then the last."""
    polls = iter(counts)
    last = [0]

    def window(_kind):
        last[0] = next(polls, last[0])
        return 1.0, 2.0, last[0]

    return SimpleNamespace(control={"scheduler": SimpleNamespace(write_window=_Remote(window))})


def test_waiting_stops_once_no_bind_came_for_the_stall_time():
    t0 = time.time()
    first, last, count = asyncio.run(benchray.wait_binds(_cluster([1, 2, 3]), 10, 60.0, stall=0.5))
    waited = time.time() - t0
    assert count == 3
    assert 0.5 < waited < 5.0  # stopped by the stall, long before the 60 s limit


def test_waiting_ends_as_soon_as_every_pod_is_bound():
    t0 = time.time()
    assert asyncio.run(benchray.wait_binds(_cluster([4, 10]), 10, 60.0, stall=30.0))[2] == 10
    assert time.time() - t0 < 5.0


def test_the_note_names_how_many_never_bound():
    assert benchray.unbound_note("high-priority", 10, 10) == ""
    note = benchray.unbound_note("high-priority", 3922, 10000)
    assert note.startswith("6078 of 10000 high-priority pods never bound")


def test_waiting_feeds_the_throughput_sampler_about_once_a_second():
    from actors.harness.throughput import Throughput

    rate = Throughput()
    counts = [100 * i for i in range(1, 13)]  # a poll every 0.2 s: 2.4 s of steady binds
    asyncio.run(benchray.wait_binds(_cluster(counts), 1200, 60.0, stall=5.0, throughput=rate))
    assert 1 <= len(rate.samples) <= 2  # the first reading starts the clock; then one a second
    assert all(300 < s < 700 for s in rate.samples)  # 100 binds per poll of ~0.2 s


def test_binds_are_also_counted_per_pod_name_prefix():
    from actors.component import tally
    from cluster.api.requests import Bind, Create

    windows: dict = {}
    for t, name in enumerate(["pod-1", "churn-0", "pod-2", "pod-3"]):
        tally(windows, Bind("default", name, "u", "n1"), float(t))
    tally(windows, Create({"kind": "Pod"}), 9.0)
    assert windows == {
        "Bind": [0.0, 3.0, 4],
        "Bind:pod": [0.0, 3.0, 3],
        "Bind:churn": [1.0, 1.0, 1],
        "Create": [9.0, 9.0, 1],
    }


@pytest.mark.parametrize(
    "argv,shape",
    [
        (["bench", "schedule"], (5000, 10000)),  # SchedulingBasic
        (["bench", "preempt"], (5000, 5000)),  # PreemptionAsync
        (["bench", "preempt", "--nodes", "100", "--pods", "7"], (100, 7)),
        (["bench", "cycle"], (5000, 10000)),  # SchedulingBasic in the Scheduler alone
        (["bench", "preempt-cycle"], (5000, 5000)),  # PreemptionAsync in the Scheduler alone
        (["bench", "local"], (1000, 10000)),
    ],
)
def test_benches_default_to_upstreams_shapes_and_an_incomplete_run_exits_1(monkeypatch, capsys, argv, shape):
    from actors.harness import bench, cli

    seen = []

    def fake(name, nodes, pods, *args, **kwargs):
        seen.append((nodes, pods))
        return {"benchmark": name, "complete": False}

    monkeypatch.setattr(bench, "run_bench", fake)
    code = cli.main(argv)
    assert seen == [shape]
    assert code == 1


def _catching_up(answers):
    """A cluster whose scheduler answers ``quiet`` with ``answers`` in turn (then False)."""
    asked = []
    replies = iter(answers)

    def quiet(rv, horizon):
        asked.append((rv, horizon))
        return next(replies, False)

    return asked, SimpleNamespace(
        api=SimpleNamespace(resource_version=_Remote(lambda: 42)),
        control={"scheduler": SimpleNamespace(quiet=_Remote(quiet))},
    )


def test_the_pods_wait_until_the_scheduler_has_read_the_nodes():
    asked, cluster = _catching_up([False, False, True])
    assert asyncio.run(benchray.scheduler_caught_up(cluster, limit=5.0)) is True
    assert asked == [(42, float("-inf"))] * 3  # caught up to the rv read first, no horizon


def test_a_scheduler_that_never_catches_up_lets_the_bench_go_on_after_the_limit():
    asked, cluster = _catching_up([])
    t0 = time.time()
    assert asyncio.run(benchray.scheduler_caught_up(cluster, limit=0.3)) is False
    assert 0.3 <= time.time() - t0 < 2.0 and asked
