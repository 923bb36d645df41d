"""The local runtime: every component in one process over a virtual clock. Time stands still
until the driver advances it, an instant settles in rounds, the same inputs give the same
trace, and chaos and restarts work without processes."""

import asyncio
import gc
import io

import pytest

from cluster.api.codec import decode
from cluster.api.requests import Create, Watch
from cluster.runtime.cluster import Layout, RuntimeRefused
from cluster.runtime.commands import KillNode
from cluster.runtime.component import Batch, Component, ComponentSpec, Result
from cluster.runtime.local import LocalCluster, Stuck
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool


def run(coro):
    return asyncio.run(coro)


def cluster(nodes=2, per_host=0, trace=None, seed=1):
    pools = [NodePool(namePrefix="n", count=nodes, capacity={"cpu": "4", "memory": "8Gi"})]
    return LocalCluster(layout(expand_pools(pools), seed=seed, nodes_per_host=per_host), seed=seed, trace=trace)


def pod(name, restart="Always", **annotations):
    meta = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = {f"kubemu.io/{k.replace('_', '-')}": str(v) for k, v in annotations.items()}
    spec = {
        "restartPolicy": restart,
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def phase(c, name):
    return c.api.get("Pod", "default", name).get("status", {}).get("phase")


def test_start_registers_every_node_and_time_stands_still_until_advanced():
    c = cluster(3)
    assert run(c.start()) == 3 and c.now() == 0.0
    assert sorted(decode(b)["metadata"]["name"] for b in c.api.list("Node").items) == ["n-0", "n-1", "n-2"]
    run(c.write([Create(pod("web"))]))
    run(c.settle())
    assert phase(c, "web") == "Running" and c.now() == 0.0  # scheduled, bound and started in one instant
    run(c.advance(100.0))
    assert c.now() == 10.0  # the next wakeup: the kubelets' lease renewals, before the driver's 100
    run(c.settle())
    assert c.api.get("Lease", "kube-node-lease", "n-0")["spec"]["renewTime"].startswith("2026-01-01T00:00:10")


def test_quiet_waits_for_pod_timers_but_not_heartbeats():
    c = cluster(1)
    run(c.start())
    assert run(c.quiet(0.0))  # only lease renewals are pending
    run(c.write([Create(pod("slow", start_seconds=25))]))
    run(c.settle())
    assert run(c.quiet(0.0))  # it starts at 25: not within 10 s
    while c.now() < 16.0:  # the lease renewal at 10 s stops the clock first
        run(c.advance(16.0))
        run(c.settle())
    assert c.now() == 16.0 and not run(c.quiet(c.now()))
    while c.now() < 25.0:
        run(c.advance(25.0))
        run(c.settle())
    assert phase(c, "slow") == "Running" and run(c.quiet(c.now()))


def test_the_same_scenario_and_seed_give_the_same_trace_byte_for_byte():
    def traced():
        out = io.StringIO()
        c = cluster(4, trace=out)
        run(c.start())
        run(c.write([Create(pod(f"p{i}", run_seconds=5 + i)) for i in range(6)]))
        for _ in range(30):
            run(c.settle())
            run(c.advance(60.0))
        return out.getvalue()

    first, second = traced(), traced()
    assert first == second and first.count("\n") > 50
    assert " ADDED Pod default/p0 " in first and " MODIFIED Pod default/p5 " in first


def test_commands_reach_the_host_of_the_node_and_unknown_nodes_are_refused():
    c = cluster(4, per_host=2)
    run(c.start())
    assert [len(h.nodes) for h in c.fleet.hosts] == [2, 2]
    assert run(c.kill_node("n-3")) == "" and c.fleet.live_nodes(0.0) == ["n-0", "n-1", "n-2"]
    assert run(c.kill_node("n-3")) == "n-3 is already down"
    with pytest.raises(RuntimeRefused, match="^node: 'n-9' is not a node of this cluster$"):
        run(c.command(KillNode("n-9")))
    with pytest.raises(RuntimeRefused, match="^killHost: the local runtime has no processes to kill"):
        run(c.kill_host("n-0"))


def test_a_restarted_apiserver_keeps_every_object_and_continues_the_sequence():
    c = cluster(1)
    run(c.start())
    run(c.write([Create(pod("before"))]))
    run(c.settle())
    rv, uid = c.api.store.rv, c.api.get("Pod", "default", "before")["metadata"]["uid"]
    run(c.restart("apiserver"))
    assert c.api.store.rv == rv and c.api.get("Pod", "default", "before")["metadata"]["uid"] == uid
    run(c.write([Create(pod("after"))]))
    run(c.settle())
    after = c.api.get("Pod", "default", "after")
    assert int(after["metadata"]["resourceVersion"]) > rv and phase(c, "after") == "Running"


def test_a_restarted_host_adopts_its_pods_and_a_restarted_scheduler_keeps_counting():
    c = cluster(2, per_host=1)
    run(c.start())
    run(c.write([Create(pod("job", restart="Never", run_seconds=30))]))
    run(c.settle())
    started = c.api.get("Pod", "default", "job")["status"]["startTime"]
    node = c.api.get("Pod", "default", "job")["spec"]["nodeName"]
    run(c.kill_node(node))
    run(c.restart("host", node))
    run(c.restart("scheduler"))
    run(c.settle())
    assert node not in c.fleet.dead_nodes
    got = c.api.get("Pod", "default", "job")
    assert got["status"]["startTime"] == started and got["status"]["containerStatuses"][0]["restartCount"] == 0
    run(c.write([Create(pod("later"))]))
    run(c.settle())
    assert run(c.scheduler_stats())["scheduled"] == 2  # one before the restart, one after
    while phase(c, "job") != "Succeeded" and c.now() < 100.0:
        run(c.advance(100.0))
        run(c.settle())
    assert c.now() == 30.0  # it ends when it was due, not 30 s after the restart


class Spinner(Component):
    def watches(self):
        return (Watch("Namespace"),)

    def reconcile(self, batch: Batch) -> Result:
        return Result(wake_at=batch.now)  # again, now, and never writes


def test_a_component_that_asks_to_run_now_forever_is_named():
    c = LocalCluster(Layout({"spinner": ComponentSpec("spinner", Spinner)}, []))
    with pytest.raises(Stuck, match="^spinner: asks to run again at 0.0s without writing anything$"):
        run(c.start())


@pytest.mark.parametrize(
    "caller, running",
    [((700, 10, 10), (20_000, 20, 500)), ((50_000, 5, 1_000), (50_000, 20, 1_000))],
    ids=["defaults raised", "a caller's higher threshold kept"],
)
def test_a_running_cluster_raises_the_collector_thresholds_and_shutdown_restores_the_callers(caller, running):
    before = gc.get_threshold()
    gc.set_threshold(*caller)
    try:
        c = cluster(1)
        run(c.start())
        assert gc.get_threshold() == running
        run(c.shutdown())
        assert gc.get_threshold() == caller
    finally:
        gc.set_threshold(*before)


def test_a_server_reports_a_spinning_component_once_a_minute_and_goes_on():
    faults = []
    c = LocalCluster(Layout({"spinner": ComponentSpec("spinner", Spinner)}, []), on_fault=faults.append)
    run(c.start())  # held, not raised
    assert len(faults) == 1
    assert faults[0].startswith("kubemu: spinner: asks to run again at 0.0s without writing anything; held until")
    assert "Its state: " in faults[0]
    for t in (1.0, 30.0, 59.0, 60.0, 61.0):
        run(c.advance(t))
        run(c.settle())  # released at the new instant, spins, held again
    assert [f.split(" asks")[0] for f in faults] == ["kubemu: spinner:"] * 2  # at 0 s and at 60 s
    assert "at 60.0s" in faults[1]


class Crasher(Component):
    builds = 0

    def __init__(self):
        type(self).builds += 1
        self.boots = []

    def watches(self):
        return (Watch("Namespace"),)

    def reconcile(self, batch: Batch) -> Result:
        self.boots.append(batch.boot)
        if any(e.obj.get("metadata", {}).get("name") == "boom" for e in batch.events if e.obj):
            raise ValueError("a bug")
        return Result()


def test_a_component_that_raises_ends_a_run_but_a_server_restarts_it_from_its_informers():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "boom"}}
    strict = LocalCluster(Layout({"crasher": ComponentSpec("crasher", Crasher)}, []))
    run(strict.start())
    run(strict.write([Create(ns)]))
    with pytest.raises(ValueError, match="a bug"):
        run(strict.settle())

    faults = []
    Crasher.builds = 0
    c = LocalCluster(Layout({"crasher": ComponentSpec("crasher", Crasher)}, []), on_fault=faults.append)
    run(c.start())
    run(c.write([Create(ns)]))
    run(c.settle())  # raises on the event: reported, rebuilt, held until the clock moves
    assert len(faults) == 1 and Crasher.builds == 2 and c.members[0].component.boots == []
    assert faults[0].startswith("kubemu: crasher failed at 0.0s and restarts from its informers:")
    assert "ValueError: a bug" in faults[0]
    run(c.advance(5.0))
    run(c.settle())  # restarts at 5 s, relists the namespace, fails again: a crash loop, once an instant
    assert c.now() == 5.0 and len(faults) == 2 and "failed at 5.0s" in faults[1] and Crasher.builds == 3
