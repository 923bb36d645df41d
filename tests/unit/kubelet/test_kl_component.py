"""A node host as a component: registration on the first batch, typed writes in the order
they must land, timers and heartbeats, chaos commands, and refused writes."""

import pytest
from conftest import build_config, build_pod, terminating

from cluster.api.errors import Conflict, InternalError, NotFound
from cluster.api.patches import Apply
from cluster.api.requests import Create, Delete, Patch, RecordEvent, UpdateStatus, Watch
from cluster.runtime.commands import DeviceHealth, KillNode, Partition, Pressure
from cluster.runtime.component import RESTART, START, Batch, CommandError, Failure, WatchEvent
from cluster.scenario.layout import host_spec


def host(*names, **config):
    return host_spec([build_config(n, **config) for n in names or ("node-0",)], 0).build()


def kinds(writes):
    return [(type(w).__name__, getattr(w, "kind", "")) for w in writes]


def test_it_watches_its_own_nodes_first_then_configmaps_and_secrets_then_their_pods():
    assert host("node-0", "node-1").watches() == (
        Watch("Node", frozenset({"node-0", "node-1"}), lazy=True),
        Watch("ConfigMap"),
        Watch("Secret"),
        Watch("Pod", frozenset({"node-0", "node-1"}), heads=True),
    )


def test_the_first_batch_registers_each_node_with_its_lease():
    result = host("node-0", "node-1").reconcile(Batch(0.0, boot=START))
    events = [("RecordEvent", "")] * 10  # each kubelet's five startup Events
    assert kinds(result.writes) == [("Create", ""), ("Create", ""), *events, ("Patch", "Lease"), ("Patch", "Lease")]
    assert [w.obj["metadata"]["name"] for w in result.writes[:2]] == ["node-0", "node-1"]
    renew = result.writes[12]
    assert isinstance(renew.patch, Apply) and renew.patch.obj["spec"]["renewTime"] == "2026-01-01T00:00:00.000000Z"
    assert result.wake_at == 10.0  # the next renewal...
    assert result.next_change is None  # ...is a heartbeat: nothing else is pending


def test_a_restarted_host_posts_status_after_the_create_it_expects_to_fail():
    result = host().reconcile(Batch(30.0, boot=RESTART))
    assert kinds(result.writes) == [
        ("Create", ""),
        ("UpdateStatus", "Node"),
        *[("RecordEvent", "")] * 2,  # Starting, NodeAllocatableEnforced
        ("Patch", "Lease"),
    ]


def test_a_pod_starts_then_its_containers_exit_on_their_timer():
    c = host()
    c.reconcile(Batch(0.0, boot=START))
    pod = build_pod("job", annotations={"start-seconds": 2, "run-seconds": 5}, restart_policy="Never")
    r = c.reconcile(Batch(1.0, [WatchEvent("Pod", "ADDED", pod)]))
    assert kinds(r.writes) == [("UpdateStatus", "Pod")] and r.writes[0].status["phase"] == "Pending"
    assert r.next_change == 3.0 and r.wake_at == 3.0
    r = c.reconcile(Batch(3.0))
    assert r.writes[0].status["phase"] == "Running" and r.next_change == 8.0
    r = c.reconcile(Batch(8.0))
    assert r.writes[0].status["phase"] == "Succeeded" and r.next_change is None


def test_a_graceful_delete_ends_in_the_final_status_then_the_grace_zero_delete():
    c = host()
    c.reconcile(Batch(0.0, boot=START))
    pod = build_pod("web", annotations={"stop-seconds": 3})
    c.reconcile(Batch(1.0, [WatchEvent("Pod", "ADDED", pod)]))
    r = c.reconcile(Batch(2.0, [WatchEvent("Pod", "MODIFIED", terminating(pod, 30, at=2.0))]))
    assert [w.event["reason"] for w in r.writes if isinstance(w, RecordEvent)] == ["Killing"]
    r = c.reconcile(Batch(5.0))
    (delete,) = [w for w in r.writes if isinstance(w, Delete)]
    assert (delete.name, delete.grace) == ("web", 0)


def test_commands_reach_the_named_kubelet_and_bad_ones_are_one_line():
    c = host("node-0", "node-1", extra={"nvidia.com/gpu": "2"})
    c.reconcile(Batch(0.0, boot=START))
    assert c.handle(Pressure("node-0", {"memory": 10 * 2**30}, 60.0), 1.0) == ""
    assert c.reconcile(Batch(1.0)).next_change == 10.0  # the eviction manager's look, then it lifts at 61
    assert c.handle(DeviceHealth("node-1", "nvidia.com/gpu", 1, False), 2.0) == ""
    (status,) = [w for w in c.reconcile(Batch(2.0)).writes if isinstance(w, UpdateStatus)]
    assert (status.name, status.status["allocatable"]["nvidia.com/gpu"]) == ("node-1", "1")
    with pytest.raises(CommandError, match="^node: 'node-9' is not a node of host-node-0$"):
        c.handle(KillNode("node-9"), 3.0)
    with pytest.raises(CommandError, match="example.com/fpga"):
        c.handle(DeviceHealth("node-1", "example.com/fpga", 0, False), 3.0)
    c.handle(Partition("node-1", 30.0), 4.0)
    assert c.handle(KillNode("node-0"), 5.0) == ""
    r = c.reconcile(Batch(20.0))
    assert not [w for w in r.writes if isinstance(w, Patch)]  # node-0 dead, node-1 cut off: no renewals
    assert c.reconcile(Batch(34.0)).writes[0].name == "node-1"  # healed: it posts at once


def test_refusals_that_only_say_the_object_moved_on_are_not_errors():
    c = host()
    req = Create({"kind": "Node"})
    churn = [Failure(req, NotFound("gone")), Failure(req, Conflict("moved on"))]
    c.reconcile(Batch(1.0, failures=churn))
    assert c.inspect(1.0)["errors"] == []
    c.reconcile(Batch(2.0, failures=[Failure(req, InternalError("disk full"))]))
    assert c.inspect(2.0)["errors"] == ["Create: InternalError: disk full"]


def test_inspect_shows_what_each_pod_holds():
    c = host()
    c.reconcile(Batch(0.0, boot=START))
    c.reconcile(Batch(1.0, [WatchEvent("Pod", "ADDED", build_pod("p", cpu="1", uid="u1"))]))
    view = c.inspect(1.0)
    assert view["podResources"]["u1"]["node"] == "node-0" and "node-0" in view["nodeResources"]
