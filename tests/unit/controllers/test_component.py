"""The controller manager as a component: what it watches, its writes as typed requests,
its wakeups, and refused requests reaching the controllers that asked."""

from controller_builders import lease, node, taint
from workload_builders import rs

from cluster.api.errors import Forbidden, NotAttempted
from cluster.api.objects import KINDS, uid_of
from cluster.api.patches import NodeConditions, NodeTaints
from cluster.api.requests import Create, Patch, RecordEvent, Watch
from cluster.controllers.component import ControllerManagerComponent
from cluster.controllers.manager import ControllerManager
from cluster.runtime.component import START, Batch, Failure, WatchEvent


def test_it_watches_nodes_and_owners_before_pods():
    kinds = [w.kind for w in ControllerManagerComponent().watches()]
    assert kinds == ControllerManager().kinds  # nodes and owners before pods (test_manager.py)
    # then every other kind for the garbage collector and the namespace controller, but Events
    assert sorted(kinds) == sorted(k for k in KINDS if k != "Event")
    assert all(isinstance(w, Watch) and w.node_names is None for w in ControllerManagerComponent().watches())


def test_a_silent_node_is_marked_unknown_and_tainted_at_its_grace_period():
    c = ControllerManagerComponent()
    first = c.reconcile(
        Batch(0.0, [WatchEvent("Node", "ADDED", node("n1")), WatchEvent("Lease", "ADDED", lease("n1"))], boot=START)
    )
    assert [w.event["reason"] for w in first.writes] == ["RegisteredNode"]
    assert first.wake_at == 40.0 and first.next_change == 40.0
    late = c.reconcile(Batch(40.0))
    conds = [w for w in late.writes if isinstance(w, Patch) and isinstance(w.patch, NodeConditions)]
    taints = [w for w in late.writes if isinstance(w, Patch) and isinstance(w.patch, NodeTaints)]
    assert [c["status"] for c in conds[0].patch.conditions] == ["Unknown"] * 4
    assert late.writes.index(conds[0]) < late.writes.index(taints[0]) < len(late.writes)
    assert isinstance(late.writes[-1], RecordEvent) and late.writes[-1].event["reason"] == "NodeNotReady"


def test_a_replicaset_creates_pods_and_hears_of_a_refused_create():
    c = ControllerManagerComponent()
    web = rs("web", replicas=2)
    result = c.reconcile(Batch(1.0, [WatchEvent("ReplicaSet", "ADDED", web)]))
    first, second = [w for w in result.writes if isinstance(w, Create)]
    assert first.obj["metadata"]["generateName"] == "web-"
    assert (first.slow_start, second.slow_start) == ((uid_of(web), 0), (uid_of(web), 1))  # batches of 1, 2, ...
    failures = [Failure(first, Forbidden("exceeded quota")), Failure(second, NotAttempted("not attempted"))]
    refused = c.reconcile(Batch(1.1, failures=failures))
    events = [w.event for w in refused.writes if isinstance(w, RecordEvent)]
    assert [(e["reason"], e["message"]) for e in events] == [("FailedCreate", "Error creating: exceeded quota")]
    assert c.inspect(1.1)["failedWrites"] == 1  # the create not attempted is no failed write
    assert refused.wake_at is not None and refused.wake_at > 1.1  # it backs off before trying again


def test_node_taints_from_conditions_go_out_as_a_taint_patch():
    c = ControllerManagerComponent()
    pressured = node("n1")
    pressured["status"]["conditions"][0]["status"] = "True"  # MemoryPressure
    result = c.reconcile(Batch(1.0, [WatchEvent("Node", "ADDED", pressured)]))
    (patch,) = [w for w in result.writes if isinstance(w, Patch)]
    assert patch.patch == NodeTaints((taint("node.kubernetes.io/memory-pressure", "NoSchedule"),), ())
