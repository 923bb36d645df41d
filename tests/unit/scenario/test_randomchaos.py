"""Random chaos: a seeded Poisson process of faults over the live nodes."""

from cluster.scenario.chaos import ChaosSpec
from cluster.scenario.randomchaos import RandomChaos


def spec(**kw):
    base = {"action": "random", "rate": 0.5, "seed": 7, "targets": ["killNode", "partition"], "duration": 60}
    return ChaosSpec(**{**base, **kw})


def run(rc, nodes, until, step=1.0):
    out, live, t = [], set(nodes), 0.0
    while t <= until:
        for at, action in rc.due(t, live):
            out.append((round(at, 3), action.action, action.node, action.duration))
            live.discard(action.node)
        t += step
    return out


def test_same_seed_same_trace_and_different_seed_differs():
    nodes = [f"n-{i}" for i in range(20)]
    a = run(RandomChaos(spec(), 10.0), nodes, 100)
    b = run(RandomChaos(spec(), 10.0), nodes, 100)
    c = run(RandomChaos(spec(seed=8), 10.0), nodes, 100)
    assert a == b and a != c
    assert all(10.0 < at <= 70.0 for at, *_ in a)  # inside the window that starts at the step
    assert all(d == 60.0 for _, action, _, d in a if action == "partition")
    assert {action for _, action, _, _ in a} <= {"killNode", "partition"}


def test_rate_gives_about_rate_times_duration_faults():
    rc = RandomChaos(spec(rate=2.0, duration=500, targets=["killNode"]), 0.0)
    faults = run(rc, [f"n-{i}" for i in range(5000)], 600, step=5.0)
    assert 900 <= len(faults) <= 1100  # Poisson with mean 1000: 3 standard deviations is ~95
    assert rc.done


def test_a_picked_node_is_not_picked_again_and_no_live_node_skips():
    rc = RandomChaos(spec(rate=10.0, duration=10, targets=["killHost"]), 0.0)
    faults = run(rc, ["a", "b"], 20, step=20.0)  # one call: all faults due at once
    assert sorted(n for _, _, n, _ in faults) == ["a", "b"]
    assert len(faults) == 2 and rc.skipped >= 1  # at rate 10/s over 10 s, far more than two came due


def test_partition_duration_is_used():
    rc = RandomChaos(spec(targets=["partition"], partitionDuration="15s"), 0.0)
    assert {d for *_, d in run(rc, ["x", "y", "z"], 60)} == {15.0}
