"""``kubemu bench density`` and ``bench startup``: their argument errors, their helpers
(percentiles, the pod watch, RSS grouping and peaks) without Ray, and one small run each
through the actors on the shared local Ray."""

import json

import pytest

from actors.harness import benchdensity, benchstartup, rss
from actors.harness.benchstartup import PodWatch, density_pod, latency_summary
from actors.harness.cli import main
from cluster.runtime.component import WatchEvent


@pytest.mark.parametrize(
    "argv,message",
    [
        (["bench", "density", "--nodes", "0"], "--nodes: 0 must be at least 1"),
        (["bench", "density", "--pods-per-node", "0"], "--pods-per-node: 0 must be at least 1"),
        (
            ["bench", "density", "--pods-per-node", "111"],
            "--pods-per-node: 111 is more than a node holds (its capacity is 110 pods)",
        ),
        (["bench", "density", "--nodes-per-host", "-1"], "--nodes-per-host: -1 must be >= 0"),
        (["bench", "startup", "--nodes", "0"], "--nodes: 0 must be at least 1"),
        (["bench", "startup", "--pods", "0"], "--pods: 0 must be at least 1"),
        (["bench", "startup", "--rate", "0"], "--rate: 0.0 must be greater than 0 (pods created per second)"),
        (["bench", "startup", "--rate", "-5"], "--rate: -5.0 must be greater than 0 (pods created per second)"),
        (["bench", "startup", "--rate", "nan"], "--rate: nan must be greater than 0 (pods created per second)"),
        (["bench", "startup", "--rate", "inf"], "--rate: inf must be a finite number of pods per second"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"kubemu: {message}"
    assert captured.out == ""


def test_latency_summary_is_nearest_rank():
    got = latency_summary(float(i) for i in range(1, 101))
    assert got == {"p50": 50.0, "p90": 90.0, "p99": 99.0, "count": 100}
    assert latency_summary([0.25]) == {"p50": 0.25, "p90": 0.25, "p99": 0.25, "count": 1}
    assert latency_summary([]) == {"p50": None, "p90": None, "p99": None, "count": 0}
    assert latency_summary([0.0004, 0.0016])["p99"] == 0.002  # rounded to the millisecond


def _node(name: str, ready: str) -> dict:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}


def _pod(name: str, node: str = "", phase: str = "Pending") -> dict:
    pod = density_pod(0)
    pod["metadata"]["name"] = name
    if node:
        pod["spec"]["nodeName"] = node
    pod["status"] = {"phase": phase}
    return pod


def test_pod_watch_keeps_the_first_bound_and_running_times():
    w = PodWatch()
    w.apply([WatchEvent("Node", "ADDED", _node("n1", "True")), WatchEvent("Node", "ADDED", _node("n2", "False"))], 1.0)
    assert w.ready == {"n1"}
    w.apply([WatchEvent("Pod", "ADDED", _pod("p"))], 2.0)
    w.apply([WatchEvent("Pod", "MODIFIED", _pod("p", "n1"))], 3.0)
    w.apply([WatchEvent("Pod", "MODIFIED", _pod("p", "n1", "Running"))], 4.0)
    w.apply([WatchEvent("Pod", "MODIFIED", _pod("p", "n1", "Running"))], 5.0)  # a later status write
    assert (w.bound_at, w.running_at, w.running, w.last_start) == ({"p": 3.0}, {"p": 4.0}, {"p"}, 4.0)
    w.apply([WatchEvent("Node", "MODIFIED", _node("n1", "Unknown"))], 6.0)
    assert w.ready == set()
    counting = PodWatch(times=False)
    counting.apply([WatchEvent("Pod", "ADDED", _pod("q", "n1", "Running"))], 1.0)
    assert (counting.running, counting.bound_at, counting.running_at) == ({"q"}, {}, {})


def test_pod_watch_reads_nodes_and_pods_from_their_bytes_through_the_bench_watches():
    """Through a reflector of ``WATCHES``, as the benches' driver watches: the same
    readings, and no node event's object is ever decoded whole."""
    from cluster.api.codec import encode
    from cluster.api.requests import WatchChunk
    from cluster.runtime.reflector import Reflector

    r = Reflector(benchstartup.WATCHES)
    r.rv = {"Node": 0, "Pod": 0}
    nodes = [_node("n1", "True"), _node("n2", "False"), {"kind": "Node", "metadata": {"name": "n3"}}]
    pods = [_pod("p"), _pod("p", "n1"), _pod("p", "n1", "Running"), _pod("q", "n2", "Running")]
    node_events = r.on_watch("Node", WatchChunk([("ADDED", encode(n)) for n in nodes], 3))
    pod_events = r.on_watch("Pod", WatchChunk([("MODIFIED", encode(p)) for p in pods], 7))
    assert all(ev._head is not None for ev in pod_events)  # read with the key, not again later
    w = PodWatch()
    for t, ev in enumerate(node_events + pod_events):
        w.apply([ev], float(t))
    assert w.ready == {"n1"}
    assert (w.bound_at, w.running_at, w.running) == ({"p": 4.0, "q": 6.0}, {"p": 5.0, "q": 6.0}, {"p", "q"})
    assert all(ev._obj is None for ev in node_events + pod_events)
    assert r._known["Pod"] == {("default", "p"), ("default", "q")}  # the keys, no uids kept
    w.apply(r.on_watch("Node", WatchChunk([("MODIFIED", encode(_node("n1", "Unknown")))], 8)), 9.0)
    assert w.ready == set()


def test_node_ready_reads_the_object_when_the_bytes_say_too_little():
    from cluster.api.codec import encode

    assert benchstartup.node_ready(WatchEvent("Node", "DELETED", {"kind": "Node", "metadata": {"name": "gone"}})) == (
        "gone",
        False,
    )
    odd = {"kind": "Node", "metadata": {"name": "n9"}, "status": {"conditions": [{"type": "Ready", "status": 1}]}}
    assert benchstartup.node_ready(WatchEvent("Node", "ADDED", raw=encode(odd))) == ("n9", False)
    odd["status"]["conditions"].append({"type": "Ready", "status": "True"})  # the whole object decides
    assert benchstartup.node_ready(WatchEvent("Node", "ADDED", raw=encode(odd))) == ("n9", False)


def test_density_pods_fit_a_full_node():
    from cluster.api.quantity import to_milli

    cpu = to_milli(density_pod(7)["spec"]["containers"][0]["resources"]["requests"]["cpu"])
    assert cpu * benchdensity.MAX_PODS_PER_NODE <= 4000  # the bench node's 4 CPUs
    assert density_pod(7)["metadata"]["name"] == "density-7"


def test_rss_is_grouped_per_kind():
    roles = {10: "apiserver", 11: "scheduler", 12: "controller-manager", 13: "host", 14: "host"}
    sizes = [(10, 100), (11, 200), (12, 300), (13, 40), (14, 60), (99, 7), (98, 3), (1, 1000)]
    assert rss.group(sizes, roles, driver=1) == {
        "apiserver": 100,
        "scheduler": 200,
        "controller-manager": 300,
        "hosts": 100,  # the node hosts summed
        "driver": 1000,
        "ray": 10,  # the session's other processes: gcs_server, raylet, idle workers...
    }
    assert rss.group([], {}, driver=1) == dict.fromkeys(rss.KINDS, 0)


def test_peaks_keep_each_kind_and_the_sum_apart():
    peaks = rss.Peaks()
    peaks.add({**dict.fromkeys(rss.KINDS, 0), "apiserver": 5, "hosts": 1})
    peaks.add({**dict.fromkeys(rss.KINDS, 0), "apiserver": 2, "hosts": 3})
    assert (peaks.by_kind["apiserver"], peaks.by_kind["hosts"], peaks.total, peaks.samples) == (5, 3, 6, 2)


def test_the_sampler_reads_this_process_as_the_driver():
    sampler = rss.Sampler()
    sample = sampler.sample()
    assert sample["driver"] > 10 * 2**20 and set(sample) == set(rss.KINDS)
    assert sampler.peaks.samples == 0  # no actor known yet: not a reading of the cluster
    sampler.set_roles({2**22 + 7: "apiserver"})  # above any pid: a process that is not there
    assert sampler.sample()["apiserver"] == 0 and sampler.peaks.total >= sample["driver"]


def test_bytes_per_unit_and_the_smaller_cluster():
    assert benchdensity.per(1_500, 500, 10) == 100
    assert benchdensity.per(None, 500, 10) is None and benchdensity.per(1_500, 500, 0) is None
    assert benchdensity.small_size(1000) == 100
    assert benchdensity.small_size(100_000) == 10_000
    assert benchdensity.small_size(500) == 100  # at least SMALL_MIN while it stays below N
    assert benchdensity.small_size(100) == 10
    assert benchdensity.small_size(9) == 0  # no slope to measure


@pytest.mark.ray
def test_density_bench_runs_every_pod_through_the_actors(ray_local, capsys, monkeypatch):
    monkeypatch.setattr(benchdensity, "SETTLE", 0.5)
    assert main(["bench", "density", "--nodes", "12", "--pods-per-node", "3"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["benchmark"], result["complete"], result["pods"], result["runningPods"]) == ("density", True, 36, 36)
    assert result["readyNodes"] == 12 and result["smallNodes"] == 1
    assert result["secondsToReady"] > 0 and result["secondsToRunning"] >= 0
    assert result["peakRssBytes"] >= sum(result["rssBytes"]["podsRunning"].values())
    assert all(result["peakRssByKind"][k] > 0 for k in ("apiserver", "scheduler", "controller-manager", "hosts"))
    assert isinstance(result["bytesPerNode"], int) and isinstance(result["bytesPerPod"], int)
    assert (result["explain"], result["schedulingResults"]) == ("failed", 0)  # every pod fit at once


@pytest.mark.ray
def test_density_with_explain_all_stores_a_scheduling_result_per_pod(ray_local, capsys, monkeypatch):
    monkeypatch.setattr(benchdensity, "SETTLE", 0.5)
    assert main(["bench", "density", "--nodes", "12", "--pods-per-node", "2", "--explain", "all"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["complete"], result["explain"], result["schedulingResults"]) == (True, "all", 24)
    assert result["schedulingResultBytes"] > 24 * 300  # each holds its attempt's scores and ranking


@pytest.mark.ray
def test_startup_bench_reports_percentiles_through_the_actors(ray_local, capsys):
    assert main(["bench", "startup", "--nodes", "10", "--pods", "200", "--rate", "200"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["benchmark"], result["complete"], result["running"], result["notStarted"]) == (
        "startup",
        True,
        200,
        0,
    )
    lat, sched = result["podStartupLatency"], result["schedulingLatency"]
    assert lat["count"] == sched["count"] == 200
    assert 0 < sched["p50"] <= lat["p50"] <= lat["p90"] <= lat["p99"] == result["p99StartupSeconds"]
    assert result["sli"]["met"] is (result["p99StartupSeconds"] <= benchstartup.SLO_SECONDS)


@pytest.mark.ray
def test_a_run_whose_pods_never_start_is_incomplete_and_exits_1(ray_local, capsys, monkeypatch):
    monkeypatch.setattr(benchstartup, "STALL", 1.0)
    monkeypatch.setattr(benchstartup, "START_LIMIT", 2.0)

    def unschedulable(i, prefix="density"):  # a pod no node can hold never binds, so never runs
        pod = density_pod(i, prefix)
        pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
        return pod

    monkeypatch.setattr(benchstartup, "density_pod", unschedulable)
    assert main(["bench", "startup", "--nodes", "2", "--pods", "5", "--rate", "50"]) == 1
    captured = capsys.readouterr()
    result = json.loads(captured.out.strip().splitlines()[-1])
    assert (result["complete"], result["notStarted"], result["p99StartupSeconds"]) == (False, 5, None)
    assert "5 of 5 pods were not seen Running" in captured.err


@pytest.mark.ray
def test_a_density_run_whose_pods_never_run_is_incomplete_and_exits_1(ray_local, capsys, monkeypatch):
    monkeypatch.setattr(benchdensity, "SETTLE", 0.2)
    monkeypatch.setattr(benchdensity, "RUNNING_STALL", 1.0)

    def unschedulable(i, prefix="density"):
        pod = density_pod(i, prefix)
        pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
        return pod

    monkeypatch.setattr(benchdensity, "density_pod", unschedulable)
    assert main(["bench", "density", "--nodes", "2", "--pods-per-node", "2"]) == 1
    captured = capsys.readouterr()
    result = json.loads(captured.out.strip().splitlines()[-1])
    assert (result["complete"], result["runningPods"], result["bytesPerPod"]) == (False, 0, None)
    assert result["readyNodes"] == 2 and result["smallNodes"] == 0 and result["bytesPerNode"] is None
    assert "NOT complete: 2/2 nodes Ready, 0/4 pods Running" in captured.err


class _FakeBacklog:
    """A cluster that starts ``per_poll`` of the created pods each time the driver polls,
    and records how many were created and not Running before each create call."""

    def __init__(self, per_poll: int):
        self.per_poll, self.created, self.backlogs = per_poll, 0, []
        self.watch = PodWatch(times=False)
        self.cluster, self.informer = self, self

    async def write(self, batch):
        self.backlogs.append(self.created - len(self.watch.running))
        self.created += len(batch)
        return [None] * len(batch)

    async def poll(self, timeout):
        for _ in range(self.per_poll):
            if len(self.watch.running) < self.created:
                self.watch.running.add(f"uid-{len(self.watch.running)}")
        return []


def test_the_density_bench_creates_no_more_than_the_backlog_ahead(monkeypatch):
    import asyncio

    monkeypatch.setattr(benchdensity, "MAX_BACKLOG", 3_000)
    phase = _FakeBacklog(per_poll=250)
    assert asyncio.run(benchdensity._create(phase, 20_000)) is True
    assert phase.created == 20_000
    assert max(phase.backlogs) <= 3_000 + benchdensity.CREATE_BATCH
    assert max(phase.backlogs) > 3_000 - benchdensity.CREATE_BATCH  # it did create ahead


def test_the_density_bench_stops_creating_when_the_backlog_stalls(monkeypatch):
    import asyncio

    monkeypatch.setattr(benchdensity, "MAX_BACKLOG", 2_000)
    monkeypatch.setattr(benchdensity, "RUNNING_STALL", 0.3)
    monkeypatch.setattr(benchstartup, "POLL", 0.01)
    phase = _FakeBacklog(per_poll=0)  # nothing ever starts
    assert asyncio.run(benchdensity._create(phase, 20_000)) is False
    assert phase.created == 3_000  # past the backlog by at most one batch, then no more
