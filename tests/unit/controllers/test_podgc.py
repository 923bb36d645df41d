"""Pod GC: orphans after the quarantine, terminated pods beyond the threshold (in order),
unscheduled and out-of-service terminating pods, and lost deletes asked again."""

import pytest
from controller_builders import NOT_READY, Loop, node, pod, summary, taint

from cluster.api.requests import Delete, UpdateStatus
from cluster.controllers.podgc import GC_CHECK_PERIOD, PodGCReconciler, failed_status, out_of_service
from cluster.controllers.podrecord import PodRecords
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.writes import Writes


def PodGC(**kw) -> ReconcilerStep:  # noqa: N802 - reads as the controller it builds
    return ReconcilerStep(lambda cache: PodGCReconciler(cache, **kw), records=PodRecords())


def pod_status(w: Writes) -> list[tuple]:
    return [(r.namespace, r.name, r.uid, r.status) for r in w.requests if isinstance(r, UpdateStatus)]


OOS = "node.kubernetes.io/out-of-service"


def _orphaned(name="p", ns="default"):
    return [("pod-status", f"{ns}/{name}", "Failed"), ("delete", f"{ns}/{name}", 0)]


def _feed(gc, events):
    """As the manager feeds it: each event, then a sync at its time."""
    for now, kind, etype, obj in events:
        gc.on_event(kind, etype, obj, now)
        assert summary(gc.sync(now)) == []


# ---- orphans -------------------------------------------------------------------------------

ORPHANS = [
    # (case, events, time the orphans are deleted or None)
    ("a pod on a node never seen: 40 s after it was first seen", [(0, "Pod", "ADDED", pod(node_name="ghost"))], 40.0),
    (
        "a node deleted under its pods: 40 s after the delete",
        [(0, "Node", "ADDED", node()), (0, "Pod", "ADDED", pod()), (25, "Node", "DELETED", node())],
        65.0,
    ),
    (
        "a relist that lists pods before nodes: no orphan",
        [(0, "Pod", "ADDED", pod()), (0, "Node", "ADDED", node())],
        None,
    ),
    (
        "a node that registers within the quarantine: no orphan",
        [(0, "Pod", "ADDED", pod()), (39, "Node", "ADDED", node())],
        None,
    ),
    (
        "a node deleted with no pods: nothing to wait for",
        [(0, "Node", "ADDED", node()), (5, "Node", "DELETED", node())],
        None,
    ),
    (
        "the orphan's pod deleted meanwhile: nothing left",
        [(0, "Pod", "ADDED", pod(node_name="ghost")), (10, "Pod", "DELETED", pod(node_name="ghost"))],
        None,
    ),
]


@pytest.mark.parametrize("case,events,expiry", ORPHANS, ids=[c[0] for c in ORPHANS])
def test_orphans_are_force_deleted_after_the_quarantine(case, events, expiry):
    gc = PodGC()
    _feed(gc, events)
    assert summary(gc.sync(events[-1][0])) == []
    if expiry is None:
        assert gc.next_wakeup() is None
        assert summary(gc.sync(1000)) == []
        return
    assert gc.next_wakeup() == expiry
    assert summary(gc.sync(expiry - 0.001)) == []
    assert summary(gc.sync(expiry)) == _orphaned()
    assert gc.next_wakeup() == expiry + GC_CHECK_PERIOD  # asked; asked again if it never goes


def test_the_orphan_status_is_failed_with_the_podgc_disruption_target():
    gc = PodGC()
    gc.on_event("Pod", "ADDED", pod(node_name="ghost", conditions=[{"type": "Ready", "status": "True"}]), 0)
    assert summary(gc.sync(0)) == []
    writes = gc.sync(40)
    ((_, _, uid, status),) = pod_status(writes)
    assert uid == "uid-p"
    assert status["phase"] == "Failed"
    assert status["conditions"] == [
        {"type": "Ready", "status": "True"},
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists",
            "lastTransitionTime": "2026-01-01T00:00:40Z",
        },
    ]
    assert [r for r in writes.requests if isinstance(r, Delete)] == [Delete("Pod", "default", "p", "uid-p", 0)]


def test_a_terminal_orphan_is_only_deleted():
    gc = PodGC()
    gc.on_event("Pod", "ADDED", pod(node_name="ghost", phase="Succeeded"), 0)
    assert summary(gc.sync(0)) == []
    assert summary(gc.sync(40)) == [("delete", "default/p", 0)]


def test_a_delete_that_never_comes_back_is_asked_again_after_the_check_period():
    gc = PodGC()
    gc.on_event("Pod", "ADDED", pod(node_name="ghost"), 0)
    assert summary(gc.sync(0)) == []
    assert summary(gc.sync(40)) == _orphaned()
    assert summary(gc.sync(59.9)) == []
    assert summary(gc.sync(60)) == _orphaned()
    gc.on_event("Pod", "DELETED", pod(node_name="ghost"), 61)
    assert summary(gc.sync(61)) == [] and gc.next_wakeup() is None


# ---- terminated pods beyond the threshold -----------------------------------------------------


def test_terminated_pods_beyond_the_threshold_go_evicted_first_then_oldest_then_by_name():
    gc = PodGC(terminated_threshold=2)
    gc.on_event("Node", "ADDED", node(), 0)
    pods = [
        pod("old", phase="Succeeded", created=1),
        pod("b", phase="Failed", created=5),
        pod("a", phase="Failed", created=5),
        pod("evicted", phase="Failed", created=9, reason="Evicted"),
        pod("young", phase="Succeeded", created=8),
        pod("running", created=0),
    ]
    for p in pods:
        gc.on_event("Pod", "ADDED", p, 10)
    assert summary(gc.sync(10)) == [("delete", f"default/{n}", 0) for n in ("evicted", "old", "a")]
    assert summary(gc.sync(11)) == []  # asked; the watch will confirm
    gc.on_event("Pod", "DELETED", pods[0], 12)
    gc.on_event("Pod", "ADDED", pod("newest", phase="Failed", created=12), 12)
    # Five terminated, two of them already asked: one more must go, the oldest left.
    assert summary(gc.sync(12)) == [("delete", "default/b", 0)]


@pytest.mark.parametrize("threshold,count,deleted", [(3, 3, 0), (3, 4, 1), (0, 50, 0)])
def test_threshold_boundaries(threshold, count, deleted):
    gc = PodGC(terminated_threshold=threshold)
    gc.on_event("Node", "ADDED", node(), 0)
    for i in range(count):
        gc.on_event("Pod", "ADDED", pod(f"p{i:02d}", phase="Succeeded", created=i), 0)
    assert summary(gc.sync(0)) == [("delete", f"default/p{i:02d}", 0) for i in range(deleted)]


# ---- terminating pods nobody will finish ------------------------------------------------------


def test_an_unscheduled_terminating_pod_is_failed_and_deleted():
    gc = PodGC()
    gc.on_event("Pod", "ADDED", pod(node_name=None, terminating=True), 0)
    gc.on_event("Pod", "ADDED", pod("pending", node_name=None), 0)
    assert summary(gc.sync(0)) == _orphaned()
    ((_, _, _, status),) = pod_status(gc.sync(20))
    assert status["phase"] == "Failed" and "conditions" not in status


OUT_OF_SERVICE = [
    ("not ready and out of service", node(ready="False", taints=[taint(OOS)]), True),
    ("unknown and out of service (NoSchedule)", node(ready="Unknown", taints=[taint(OOS, "NoSchedule")]), True),
    ("no Ready condition and out of service", node(ready=None, taints=[taint(OOS)]), True),
    ("ready, though tainted", node(taints=[taint(OOS)]), False),
    ("not ready, other taints", node(ready="False", taints=[taint(NOT_READY)]), False),
]


@pytest.mark.parametrize("case,n,oos", OUT_OF_SERVICE, ids=[c[0] for c in OUT_OF_SERVICE])
def test_terminating_pods_on_out_of_service_nodes(case, n, oos):
    assert out_of_service(n) is oos
    gc = PodGC()
    gc.on_event("Node", "ADDED", n, 0)
    gc.on_event("Pod", "ADDED", pod("going", terminating=True), 0)
    gc.on_event("Pod", "ADDED", pod("staying"), 0)
    assert summary(gc.sync(0)) == (_orphaned("going") if oos else [])


def test_failed_status_replaces_the_condition_and_keeps_the_rest():
    p = pod(conditions=[{"type": "DisruptionTarget", "status": "False"}], podIP="10.0.0.1")
    status = failed_status(p, {"type": "DisruptionTarget", "status": "True"}, 3)
    assert status == {
        "phase": "Failed",
        "podIP": "10.0.0.1",
        "conditions": [{"type": "DisruptionTarget", "status": "True", "lastTransitionTime": "2026-01-01T00:00:03Z"}],
    }
    assert p["status"]["phase"] == "Running"  # the cached pod is not touched


# ---- through the apiserver ----------------------------------------------------------------


def test_pods_of_a_removed_node_are_gone_40s_after_it():
    loop = Loop()
    loop.register("n1", 0)
    for name in ("a", "b"):
        p = pod(name)
        for key in ("uid", "creationTimestamp"):
            del p["metadata"][key]
        loop.api.create(p, 0)
    loop.at(0)
    loop.renew(["n1"], 10)
    loop.at(10)
    loop.api.delete("Node", "", "n1", None, None, 15)
    loop.at(15)
    loop.run(until=54.9)
    assert [line[1:3] for _, line in loop.trace] == [  # the node controller's only
        ("RegisteredNode", "Node n1 event: Registered Node n1 in Controller"),
        ("RemovingNode", "Node n1 event: Removing Node n1 from Controller"),
    ]
    loop.trace.clear()
    loop.run(until=55)
    assert [line for _, line in loop.trace] == [
        ("pod-status", "default/a", "Failed"),
        ("pod-status", "default/b", "Failed"),
        ("delete", "default/a", 0),
        ("delete", "default/b", 0),
    ]
    assert loop.api.store.count("Pod") == 0
    assert all(err is None for _, err in loop.results)
    assert loop.manager.next_wakeup() is None
