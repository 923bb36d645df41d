"""The timeline's node steps: ``createNode`` (a Node manifest created through the API),
``deleteNode`` (a Node deleted through the API) and a pool's ``scale`` (nodes added, or
removed newest first): what loads, the one line for what does not, and what the driver's
``Timeline`` sends."""

import asyncio

import pytest

from cluster.api.requests import Create, Delete
from cluster.runtime.cluster import Fleet
from cluster.runtime.component import ComponentSpec
from cluster.scenario.driver import Timeline
from cluster.scenario.schema import NodePool, ScenarioError, load
from cluster.scenario.schema_workloads import PoolScale, ScaleSpec


def scenario(timeline, manage="all"):
    return {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "n"},
        "spec": {
            "runtime": "local",
            "cluster": {
                "manageNodes": manage,
                "nodes": [{"namePrefix": "node", "count": 2, "capacity": {"cpu": "2", "memory": "4Gi"}}],
            },
            "timeline": timeline,
        },
    }


API_NODE = {"metadata": {"name": "api-0"}, "status": {"capacity": {"cpu": "4", "memory": "8Gi"}}}


def test_node_steps_load():
    s = load(
        scenario(
            [
                {"at": "10s", "createNode": API_NODE},
                {"at": "20s", "createNode": [{**API_NODE, "metadata": {"name": "api-1"}}]},
                {"at": "30s", "deleteNode": "api-0"},
                {"at": "30s", "deleteNode": ["api-1", "node-1"]},
                {"at": "40s", "scale": {"pool": "node", "count": 4}},
                {"at": "50s", "deleteNode": "node-3"},  # made by the scale up
                {"at": "60s", "scale": {"name": "web", "replicas": 2}},
            ]
        )
    )
    steps = s.spec.timeline
    assert steps[0].node_creates() == [{"apiVersion": "v1", "kind": "Node", **API_NODE}]
    assert [st.node_deletes() for st in steps[2:4]] == [["api-0"], ["api-1", "node-1"]]
    assert steps[4].scale == PoolScale(pool="node", count=4)
    assert steps[6].scale == ScaleSpec(name="web", replicas=2)
    assert s.spec.cluster.manageNodes == "all"


@pytest.mark.parametrize(
    "step, manage, message",
    [
        (
            {"createNode": {"kind": "Pod", "metadata": {"name": "p"}}},
            "all",
            'spec.timeline[0].createNode.kind: "Pod" must be Node (create other kinds with create)',
        ),
        (
            {"createNode": [API_NODE, {"metadata": {"name": "x"}, "status": {"capacity": {"cpu": "lots"}}}]},
            "all",
            "spec.timeline[0].createNode[1].status.capacity[cpu]",
        ),
        (
            {
                "createNode": {
                    "metadata": {"name": "x"},
                    "status": {"capacity": {"cpu": "2"}, "allocatable": {"cpu": "3"}},
                }
            },
            "all",
            'spec.timeline[0].createNode.status.allocatable.cpu: "3" is more than the capacity "2"',
        ),
        ({"deleteNode": "ghost"}, "all", 'spec.timeline[0].deleteNode: "ghost" is not a node of this scenario'),
        (
            {"deleteNode": ["node-0", "ghost"]},
            "all",
            'spec.timeline[0].deleteNode[1]: "ghost" is not a node of this scenario',
        ),
        (
            {"scale": {"pool": "gpu", "count": 1}},
            "all",
            'spec.timeline[0].scale.pool: "gpu" is not a node pool of this scenario (a namePrefix under '
            "spec.cluster.nodes or an addNodes step)",
        ),
        ({"scale": {"pool": "node", "count": -1}}, "all", "spec.timeline[0].scale.count: -1 Input should be greater"),
        ({"scale": {"pool": "node"}}, "all", "spec.timeline[0].scale.count: Required value"),
        ({"scale": {"name": "web"}}, "all", "spec.timeline[0].scale.replicas: Required value"),
    ],
)
def test_bad_node_steps_are_one_line(step, manage, message):
    with pytest.raises(ScenarioError) as e:
        load(scenario([{"at": "10s", **step}], manage))
    assert str(e.value).startswith(message), str(e.value)


def test_a_node_the_policy_leaves_alone_is_not_checked_as_a_kubelet_would():
    step = {
        "createNode": {"metadata": {"name": "x"}, "status": {"capacity": {"cpu": "2"}, "allocatable": {"cpu": "3"}}}
    }
    load(scenario([{"at": "10s", **step}], "none"))  # stored as is; nothing runs it


def test_manage_nodes_takes_only_the_policies():
    with pytest.raises(
        ScenarioError, match="spec.cluster.manageNodes: \"some\" Input should be 'all', 'annotated' or 'none'"
    ):
        load(scenario([], "some"))


# ---- the driver's timeline -----------------------------------------------------------------


class FakeCluster:
    """What the node steps use of ``Cluster``, recording it."""

    def __init__(self, nodes):
        self.fleet = Fleet()
        self.fleet.add_host(ComponentSpec("host-0", object, nodes=tuple(nodes)))
        self.writes, self.hosts, self.removed = [], [], []

    async def write(self, requests):
        self.writes += requests
        return [None] * len(requests)

    async def add_host(self, spec):
        self.hosts.append(spec)
        self.fleet.add_host(spec)

    async def remove_nodes(self, names):
        self.removed.append(list(names))
        self.fleet.removed_nodes.update(names)
        return [None] * len(names)


def run(coro):
    return asyncio.run(coro)


def test_create_and_delete_node_go_through_the_api():
    s = load(scenario([{"at": "1s", "createNode": API_NODE}, {"at": "2s", "deleteNode": "api-0"}]))
    cluster, lines = FakeCluster(["node-0", "node-1"]), []
    t = Timeline(cluster, lines.append)
    for step in s.spec.timeline:
        run(t.run(step, step.at))
    assert cluster.writes == [Create({"apiVersion": "v1", "kind": "Node", **API_NODE}), Delete("Node", "", "api-0")]
    assert lines == ["createNode api-0: created", "deleteNode api-0: deleted"]


def test_a_pool_scales_up_with_new_names_and_down_newest_first():
    pool = NodePool(namePrefix="node", count=2, capacity={"cpu": "2", "memory": "4Gi"}, labels={"pool": "a"})
    cluster, lines = FakeCluster(["node-0", "node-1", "other-0"]), []
    t = Timeline(cluster, lines.append, taken={"node": 2}, pools={"node": pool})
    run(t.scale_pool(PoolScale(pool="node", count=4)))
    (spec,) = cluster.hosts
    assert spec.nodes == ("node-2", "node-3")
    assert [c.labels for c in spec.kwargs["configs"]] == [{"pool": "a"}, {"pool": "a"}]
    run(t.scale_pool(PoolScale(pool="node", count=4)))  # already there: nothing
    run(t.scale_pool(PoolScale(pool="node", count=1)))
    run(t.scale_pool(PoolScale(pool="node", count=0)))
    assert cluster.removed == [["node-3", "node-2", "node-1"], ["node-0"]]
    assert lines == [
        "scale pool node to 4: added: node-2, node-3",
        "scale pool node to 4: it has 4 nodes",
        "scale pool node to 1: removed node-3, node-2, node-1",
        "scale pool node to 0: removed node-0",
    ]
    run(t.scale_pool(PoolScale(pool="node", count=1)))  # numbering goes on
    assert cluster.hosts[-1].nodes == ("node-4",)
