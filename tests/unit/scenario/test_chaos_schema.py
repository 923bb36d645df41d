"""Loading the cluster-level chaos actions (killHost, partition, restart, killRayNode,
random) and removeNodes steps: what loads, and one-line errors naming field and value."""

import pytest

from cluster.scenario.schema import ScenarioError, load


def scenario(timeline, ray_nodes=0):
    cluster = {"nodes": [{"namePrefix": "n", "count": 3, "capacity": {"cpu": "4", "memory": "8Gi"}}]}
    if ray_nodes:
        cluster["rayNodes"] = ray_nodes
    return {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "t"},
        "spec": {"cluster": cluster, "timeline": timeline},
    }


def chaos(ray_nodes=0, **c):
    return scenario([{"at": "5s", "chaos": c}], ray_nodes)


def test_cluster_chaos_actions_load():
    s = load(
        scenario(
            [
                {"at": "1s", "chaos": {"action": "killHost", "node": "n-0"}},
                {"at": "2s", "chaos": {"action": "partition", "node": "n-1", "duration": "90s"}},
                {"at": "3s", "chaos": {"action": "restart", "component": "controller-manager"}},
                {"at": "3s", "chaos": {"action": "restart", "component": "host", "node": "n-2"}},
                {"at": "4s", "chaos": {"action": "killRayNode", "rayNode": 2}},
                {
                    "at": "5s",
                    "chaos": {
                        "action": "random",
                        "rate": 0.5,
                        "seed": 3,
                        "targets": ["killNode", "partition"],
                        "duration": "2m",
                        "partitionDuration": "30s",
                    },
                },
                {"at": "6s", "removeNodes": {"names": ["n-0", "n-2"]}},
            ],
            ray_nodes=3,
        )
    )
    steps = s.spec.timeline
    assert steps[1].chaos.duration_seconds() == 90.0
    assert steps[5].chaos.duration_seconds() == 120.0 and steps[5].chaos.partition_seconds() == 30.0
    assert steps[6].removeNodes.names == ["n-0", "n-2"]


@pytest.mark.parametrize(
    "doc, message",
    [
        (chaos(action="killHost"), "spec.timeline[0].chaos.node: Required value for killHost"),
        (
            chaos(action="killHost", node="n-9"),
            'spec.timeline[0].chaos.node: "n-9" is not a node of this scenario (nodes: n-0, n-1, n-2)',
        ),
        (
            chaos(action="partition", node="n-0", duration="0s"),
            'spec.timeline[0].chaos.duration: "0s" must be greater than 0',
        ),
        (
            chaos(action="partition", node="n-0", duration="a while"),
            'spec.timeline[0].chaos.duration: "a while" is not a duration (use e.g. 30s, 5m, 1h30m)',
        ),
        (
            chaos(action="restart", component="etcd"),
            'spec.timeline[0].chaos.component: "etcd" is not a component kubemu restarts '
            "(supported: apiserver, scheduler, yunikorn, controller-manager, host)",
        ),
        (
            chaos(action="restart", component="scheduler", node="n-0"),
            "spec.timeline[0].chaos.node: not a field of restart of the scheduler (only a host restart takes it)",
        ),
        (
            chaos(action="restart", component="host"),
            "spec.timeline[0].chaos.node: Required value for restart of a host (the host holding that node)",
        ),
        (
            chaos(action="restart", component="host", node="x-1"),
            'spec.timeline[0].chaos.node: "x-1" is not a node of this scenario (nodes: n-0, n-1, n-2)',
        ),
        (
            chaos(action="killRayNode", rayNode=1),
            "spec.timeline[0].chaos.rayNode: killRayNode needs spec.cluster.rayNodes of 2 or more (it is 0)",
        ),
        (
            chaos(ray_nodes=3, action="killRayNode", rayNode=0),
            "spec.timeline[0].chaos.rayNode: 0 is not a Ray node kubemu may stop (1..2; node 0 holds the control plane)",
        ),
        (
            chaos(ray_nodes=3, action="killRayNode", rayNode=3),
            "spec.timeline[0].chaos.rayNode: 3 is not a Ray node kubemu may stop (1..2; node 0 holds the control plane)",
        ),
        (
            chaos(action="random", rate=0, targets=["killNode"], duration="1m"),
            "spec.timeline[0].chaos.rate: 0.0 must be greater than 0 (faults per emulated second)",
        ),
        (
            chaos(action="random", rate=1, targets=[], duration="1m"),
            "spec.timeline[0].chaos.targets: Required value: at least one of killNode, killHost, partition",
        ),
        (
            chaos(action="random", rate=1, targets=["killNode", "restart"], duration="1m"),
            'spec.timeline[0].chaos.targets[1]: "restart" is not an action random chaos runs '
            "(supported: killNode, killHost, partition)",
        ),
        (
            chaos(action="random", rate=1, targets=["killNode"]),
            "spec.timeline[0].chaos.duration: Required value for random",
        ),
        (
            chaos(action="random", rate=1, targets=["killNode"], duration="1m", partitionDuration="-"),
            'spec.timeline[0].chaos.partitionDuration: "-" is not a duration (use e.g. 30s, 5m, 1h30m)',
        ),
        (chaos(action="reboot"), "spec.timeline[0].chaos.action"),
        (
            scenario([{"at": "1s", "removeNodes": {"names": ["n-0", "m-1"]}}]),
            'spec.timeline[0].removeNodes.names[1]: "m-1" is not a node of this scenario',
        ),
        (scenario([{"at": "1s", "removeNodes": {"names": []}}]), "spec.timeline[0].removeNodes.names"),
        (scenario([], ray_nodes=17), "spec.cluster.rayNodes"),
    ],
)
def test_bad_chaos_is_one_line(doc, message):
    with pytest.raises(ScenarioError) as err:
        load(doc)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(message), text


@pytest.mark.parametrize(
    "count, message",
    [
        (
            {"kind": "Node", "terminating": False},
            "spec.expect[0].count.terminating: only a Pod count takes it (kind is Node)",
        ),
        ({"kind": "Pod", "ready": True}, "spec.expect[0].count.ready: only a Node count takes it (kind is Pod)"),
    ],
)
def test_count_filters_belong_to_their_kind(count, message):
    doc = scenario([])
    doc["spec"]["expect"] = [{"at": "end", "count": count, "equals": 1}]
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert str(err.value) == message
