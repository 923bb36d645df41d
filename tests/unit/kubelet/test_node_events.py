"""What a kubelet says about its own node: the startup Events (all of them at a first
registration, Starting and NodeAllocatableEnforced after a restart, none past the first
1,000 nodes), the cordon and uncordon Events, and the node status posted again every 5
minutes when nothing changed, moving every lastHeartbeatTime and no lastTransitionTime
(nothing while partitioned)."""

import pytest
from conftest import Driver, build_config
from test_adopt import node as api_node
from test_node_from_api import node_event, stored

from cluster.clock import rfc3339
from cluster.kubelet import NodeHost
from cluster.kubelet.adopt import adopting_host
from cluster.kubelet.nodestatus import STARTUP_EVENT_NODES
from cluster.runtime.component import RESTART, START, Batch

FRESH = [
    ("Starting", "Starting kubelet."),
    ("NodeHasSufficientMemory", "Node node-0 status is now: NodeHasSufficientMemory"),
    ("NodeHasNoDiskPressure", "Node node-0 status is now: NodeHasNoDiskPressure"),
    ("NodeHasSufficientPID", "Node node-0 status is now: NodeHasSufficientPID"),
    ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"),
]


@pytest.mark.parametrize(
    "first_index, restarted, expected",
    [
        (0, False, FRESH),
        (0, True, [FRESH[0], FRESH[4]]),
        (STARTUP_EVENT_NODES - 1, False, FRESH),
        (STARTUP_EVENT_NODES, False, []),  # bench scale: the nodes past the first thousand say nothing
    ],
)
def test_the_startup_events(first_index, restarted, expected):
    host = NodeHost([build_config()], first_index)
    host.register_all(0.0, restarted)
    events = host.drain().events
    assert [(e["reason"], e["message"]) for e in events] == expected
    assert all(
        # Upstream's kubelet names its node by name as its uid too (kubectl describe node asks both ways).
        e["involvedObject"] == {"kind": "Node", "namespace": "", "name": "node-0", "uid": "node-0", "apiVersion": "v1"}
        and e["source"] == {"component": "kubelet", "host": "node-0"}
        and e["type"] == "Normal"
        for e in events
    )


def test_a_cordon_and_an_uncordon_are_told_once_each(driver):
    d = driver()
    config = build_config()
    for t, node in (
        (0.0, stored(config)),
        (5.0, stored(config, unschedulable=True)),
        (6.0, stored(config, unschedulable=True, labels={"x": "y"})),  # still cordoned
        (9.0, stored(config)),
    ):
        d.clock.set(t)
        node_event(d, "MODIFIED", node)
    assert [(t, reason, message) for t, _, reason, message in d.events] == [
        (5.0, "NodeNotSchedulable", "Node node-0 status is now: NodeNotSchedulable"),
        (9.0, "NodeSchedulable", "Node node-0 status is now: NodeSchedulable"),
    ]


def conditions(status):
    return {c["type"]: (c["lastHeartbeatTime"], c["lastTransitionTime"]) for c in status["conditions"]}


def test_an_unchanged_status_is_posted_every_five_minutes():
    d = Driver([build_config()])
    d.register()
    d.run_until(1000.0)
    assert [t for t, _, _ in d.node_statuses] == [300.0, 600.0, 900.0]
    for t, _, status in d.node_statuses:
        assert set(conditions(status).values()) == {(rfc3339(t), rfc3339(0))}


def test_a_status_posted_for_a_change_restarts_the_five_minutes(driver):
    d = driver()
    d.run_until(120.0)
    d.host.kubelet("node-0").post_node_status(120.0)  # as a change would
    d.flush()
    d.run_until(700.0)
    assert [t for t, _, _ in d.node_statuses] == [120.0, 420.0]


def test_no_report_while_partitioned_and_one_at_the_heal():
    d = Driver([build_config()])
    d.register()
    d.host.partition("node-0", 100.0, 400.0)
    d.run_until(1000.0)
    assert [t for t, _, _ in d.node_statuses] == [500.0, 800.0]  # the heal's post, then 5 minutes on


def reasons(writes):
    return [w.event["reason"] for w in writes if type(w).__name__ == "RecordEvent"]


def test_a_node_created_through_the_api_gets_a_first_start_and_a_restart_does_not():
    # The Node exists (its create is never sent), but its kubelet starts for the first time.
    spec = adopting_host(api_node(), 7)
    assert reasons(spec.build().reconcile(Batch(0.0, boot=START)).writes) == [r for r, _ in FRESH]
    assert reasons(spec.build().reconcile(Batch(9.0, boot=RESTART)).writes) == ["Starting", "NodeAllocatableEnforced"]
