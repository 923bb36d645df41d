"""The driver's ``Timeline``: chaos steps dispatched to the cluster, what the report
records, random chaos picking only live nodes, and actions on a node that is down."""

import asyncio

from cluster.runtime.cluster import Fleet, RuntimeRefused
from cluster.runtime.commands import Pressure
from cluster.runtime.component import ComponentSpec
from cluster.scenario.chaos import ChaosSpec
from cluster.scenario.driver import Timeline


class FakeCluster:
    """The part of ``Cluster`` the timeline uses, recording what it is asked."""

    runtime = "fake"

    def __init__(self, nodes):
        self.fleet = Fleet()
        for i in range(0, len(nodes), 2):
            self.fleet.add_host(ComponentSpec(f"host-{i}", object, nodes=tuple(nodes[i : i + 2])))
        self.calls = []

    async def kill_node(self, node):
        self.calls.append(("killNode", node))
        self.fleet.dead_nodes.add(node)
        return ""

    async def kill_host(self, node):
        self.calls.append(("killHost", node))
        return self.fleet.host_died(self.fleet.host_index[node])

    async def partition(self, node, duration, now):
        self.calls.append(("partition", node, duration, now))

    async def restart(self, component, node=None):
        self.calls.append(("restart", component, node))
        if component == "host" and self.fleet.host_index[node] in self.fleet.dead_hosts:
            raise RuntimeRefused(f"node: the host holding {node} was killed for good")
        return 1.25

    async def command(self, command):
        self.calls.append(("command", command))
        return ""

    def kill_ray_node(self, index):
        raise RuntimeRefused("killRayNode: the fake runtime has no Ray nodes (use runtime: ray)")


def run(coro):
    return asyncio.run(coro)


def test_actions_reach_the_cluster_and_the_log():
    cluster, lines = FakeCluster(["a", "b", "c"]), []
    t = Timeline(cluster, lines.append)
    run(t.chaos(ChaosSpec(action="killHost", node="a"), 5.0))
    run(t.chaos(ChaosSpec(action="restart", component="scheduler"), 6.0))
    run(t.chaos(ChaosSpec(action="partition", node="c", duration="30s"), 7.0))
    run(t.chaos(ChaosSpec(action="pressure", node="b", memory="1Gi"), 8.0))  # b went with a's host
    run(t.chaos(ChaosSpec(action="pressure", node="c", memory="1Gi", duration="1m"), 8.5))
    run(t.chaos(ChaosSpec(action="restart", component="host", node="b"), 9.0))
    run(t.chaos(ChaosSpec(action="killRayNode", rayNode=1), 10.0))
    assert cluster.calls == [
        ("killHost", "a"),
        ("restart", "scheduler", None),
        ("partition", "c", 30.0, 7.0),
        ("command", Pressure("c", {"memory": 1024**3}, 60.0)),
        ("restart", "host", "b"),
    ]
    assert t.chaos_log == [
        {"time": 5.0, "action": "killHost", "target": "a", "detail": "nodes down: a, b"},
        {"time": 6.0, "action": "restart", "target": "scheduler", "detail": "answered again after 1.2s real"},
        {"time": 7.0, "action": "partition", "target": "c", "detail": ""},
        {"time": 8.0, "action": "pressure", "target": "b", "detail": "error: b is down"},
        {"time": 8.5, "action": "pressure", "target": "c", "detail": ""},
        {
            "time": 9.0,
            "action": "restart",
            "target": "host of b",
            "detail": "error: node: the host holding b was killed for good",
        },
        {
            "time": 10.0,
            "action": "killRayNode",
            "target": "ray node 1",
            "detail": "error: killRayNode: the fake runtime has no Ray nodes (use runtime: ray)",
        },
    ]
    assert lines[0] == "[     5.0s] chaos killHost a: nodes down: a, b"


def test_random_chaos_runs_on_later_turns_over_live_nodes_only():
    cluster = FakeCluster([f"n-{i}" for i in range(10)])
    t = Timeline(cluster, lambda s: None)
    run(t.chaos(ChaosSpec(action="random", rate=0.5, seed=3, targets=["killNode"], duration=20), 0.0))
    first = t.next_at()
    assert first is not None and 0.0 < first <= 20.0
    for now in range(0, 30):
        run(t.tick(float(now)))
    killed = [c[1] for c in cluster.calls]
    assert killed and len(killed) == len(set(killed))  # never a node already down
    assert not t.randoms and t.next_at() is None  # the window is over
    assert t.chaos_log[0]["detail"] == "0.5/s for 20s on killNode"
    assert [e["target"] for e in t.chaos_log[1:]] == killed
