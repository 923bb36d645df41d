"""noLostPods: a ReplicaSet short of pods for longer than the grace breaks the invariant."""

from cluster.scenario.mirror import Mirror
from cluster.scenario.ownership import LOST_GRACE, OwnedPods


def rs(name="web", replicas=3, uid="rs-1"):
    return {
        "kind": "ReplicaSet",
        "metadata": {"namespace": "default", "name": name, "uid": uid},
        "spec": {"replicas": replicas},
    }


def pod(name, owner="rs-1", phase="Running", terminating=False, controller=True):
    m = {
        "namespace": "default",
        "name": name,
        "uid": "u-" + name,
        "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "uid": owner, "controller": controller}],
    }
    if terminating:
        m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"kind": "Pod", "metadata": m, "spec": {"nodeName": "n-0"}, "status": {"phase": phase}}


def test_short_beyond_the_grace_is_one_violation_then_recovers():
    o = OwnedPods()
    o.on_replicaset("ADDED", rs())
    for n in "abc":
        o.on_pod("ADDED", pod(n))
    assert o.check(0.0) == [] and o.shortfall() == {}
    o.on_pod("MODIFIED", pod("a", terminating=True))  # terminating: no longer counts
    o.on_pod("MODIFIED", pod("b", phase="Failed"))
    assert o.check(10.0) == [] and o.shortfall() == {"default/web": 2}
    assert o.check(10.0 + LOST_GRACE) == []  # exactly the grace: still in time
    lines = o.check(10.0 + LOST_GRACE + 1)
    assert lines == [f"at {71.0:.1f}s ReplicaSet default/web: 1 of 3 pods active since 10.0s (2 lost, not replaced)"]
    assert o.check(200.0) == []  # reported once per episode
    o.on_pod("ADDED", pod("d"))
    o.on_pod("ADDED", pod("e"))
    assert o.check(201.0) == [] and o.shortfall() == {}


def test_replaced_in_time_is_fine_and_other_owners_are_ignored():
    o = OwnedPods()
    o.on_replicaset("ADDED", rs(replicas=1))
    o.on_pod("ADDED", pod("a"))
    o.on_pod("ADDED", pod("x", owner="someone-else"))
    o.on_pod("ADDED", pod("y", controller=False))
    o.on_pod("DELETED", pod("a"))
    assert o.check(5.0) == []
    o.on_pod("ADDED", pod("b"))
    assert o.check(5.0 + 2 * LOST_GRACE) == []
    o.on_replicaset("DELETED", rs())
    o.on_pod("DELETED", pod("b"))
    assert o.check(500.0) == [] and o.shortfall() == {}


def test_a_slow_scale_up_loses_nothing_and_scale_down_is_not_a_loss():
    o = OwnedPods()
    o.on_replicaset("ADDED", rs(replicas=3))
    o.on_pod("ADDED", pod("a"))
    assert o.check(0.0) == [] and o.check(10 * LOST_GRACE) == [] and o.shortfall() == {}  # 1 of 3, none lost
    o.on_pod("ADDED", pod("b"))
    o.on_replicaset("MODIFIED", rs(replicas=1))  # scaled down: one of the two goes
    o.on_pod("DELETED", pod("b"))
    assert o.check(700.0) == [] and o.check(700.0 + 2 * LOST_GRACE) == []


def test_the_mirror_reports_it():
    m = Mirror()
    m.apply("ReplicaSet", "ADDED", rs(replicas=2), 0.0, 0.0)
    m.apply("Pod", "ADDED", pod("a"), 0.0, 0.0)
    m.apply("Pod", "ADDED", pod("b"), 0.0, 0.0)
    m.apply("Pod", "DELETED", pod("b"), 1.0, 0.0)
    m.check_invariants(1.0)
    m.check_invariants(LOST_GRACE + 2)
    assert len(m.violations["noLostPods"]) == 1 and "1 of 2 pods active" in m.violations["noLostPods"][0]


def test_a_replicaset_being_deleted_loses_nothing_as_its_pods_go():
    o = OwnedPods()
    o.on_replicaset("ADDED", rs())
    for n in "abc":
        o.on_pod("ADDED", pod(n))
    deleting = rs()
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z"  # a foreground deletion
    o.on_replicaset("MODIFIED", deleting)
    for n in "abc":
        o.on_pod("MODIFIED", pod(n, terminating=True))
    assert o.check(5.0) == [] and o.check(5.0 + LOST_GRACE + 1) == [] and o.shortfall() == {}
