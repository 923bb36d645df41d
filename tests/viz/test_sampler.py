"""The run's time series (``cluster/scenario/sampler.py``): what each sample counts, the
bounds that keep a large run's report small, and the latency bins and CDF."""

from __future__ import annotations

from sampler_builders import feed, node, pod, unschedulable

from cluster.scenario import sampler as sampling
from cluster.scenario.mirror import Mirror
from cluster.scenario.sampler import Sampler, cdf, latency_bins


def test_a_sample_counts_phases_queues_nodes_and_the_cumulative_counts():
    m, s = Mirror(), Sampler()
    feed(m, "Node", node("n-0"), 0.0)
    feed(m, "Node", node("n-1", ready=False), 0.0)
    feed(m, "Pod", pod("a", "ua", "Running", "n-0", cpu="2"), 0.0)
    feed(m, "Pod", pod("b", "ub"), 0.0)
    feed(m, "Pod", unschedulable("c", "uc"), 0.0)
    feed(m, "Pod", pod("d", "ud", nominatedNodeName="n-0"), 0.0)
    s.observe(m, 0.0)
    feed(m, "Pod", pod("b", "ub", "Running", "n-0"), 5.0)
    s.observe(m, 5.0)
    r = s.report(m)["series"]
    assert r["t"] == [0.0, 5.0]
    assert (r["Running"], r["Pending"]) == ([1, 2], [3, 2])
    assert (r["waiting"], r["unschedulable"], r["nominated"]) == ([1, 0], [1, 1], [1, 1])
    assert (r["nodesReady"], r["nodesNotReady"]) == ([1, 1], [1, 1])
    assert (r["created"], r["scheduled"], r["started"]) == ([4, 4], [1, 2], [1, 2])
    heat = s.report(m)["heatmap"]
    assert heat["rows"] == ["n-0", "n-1"]
    assert heat["cpu"] == [[0.5, 0.75], [0.0, 0.0]]  # 2 then 3 of n-0's 4 CPUs; n-1 idle


def test_one_sample_per_instant_the_latest_wins():
    m, s = Mirror(), Sampler()
    s.observe(m, 1.0)
    feed(m, "Pod", pod("a", "ua"), 1.0)
    s.observe(m, 1.0, final=True)
    r = s.report(m)["series"]
    assert r["t"] == [1.0] and r["Pending"] == [1]


def test_samples_stay_bounded_and_keep_both_ends():
    m, s = Mirror(), Sampler()
    for k in range(1000):
        s.observe(m, float(k))
    s.observe(m, 1000.0, final=True)
    t = s.report(m)["series"]["t"]
    assert len(t) <= sampling.MAX_SAMPLES
    assert t[0] == 0.0 and t[-1] == 1000.0
    assert t == sorted(t)


def test_past_200_nodes_the_heatmap_buckets_nodes_in_name_order():
    m, s = Mirror(), Sampler()
    for i in range(450):
        feed(m, "Node", node(f"node-{i}"), 0.0)
    feed(m, "Pod", pod("a", "ua", "Running", "node-0", cpu="4"), 0.0)
    s.observe(m, 0.0)
    heat = s.report(m)["heatmap"]
    assert len(heat["rows"]) == 150  # buckets of 3
    assert heat["rows"][0] == "node-0 … node-2 (3)"
    assert heat["cpu"][0] == [round(1 / 3, 3)]  # node-0 full, node-1 and node-2 idle


def test_latency_bins_and_cdf():
    started = [(1.0, 0.5), (1.5, 1.5), (9.0, 2.0)]
    bins = latency_bins(started, 0.0, 10.0)
    assert bins["t"] == [1.167, 1.667, 9.167]  # 60 intervals of 1/6 s; empty ones left out
    assert (bins["p50"], bins["count"]) == ([0.5, 1.5, 2.0], [1, 1, 1])
    one = latency_bins([(1.0, 0.5), (1.01, 1.5)], 0.0, 6.0)  # both in the interval ending at 1.1
    assert (one["t"], one["p50"], one["p99"], one["count"]) == ([1.1], [0.5], [1.5], [2])
    assert latency_bins([], 0.0, 1.0)["t"] == []
    c = cdf([3.0, 1.0, 2.0])
    assert c == {"seconds": [1.0, 2.0, 3.0], "fraction": [0.3333, 0.6667, 1.0]}
    big = cdf([float(i) for i in range(10000)])
    assert len(big["seconds"]) <= sampling.CDF_POINTS + 1 and big["fraction"][-1] == 1.0
    assert cdf([]) == {"seconds": [], "fraction": []}
