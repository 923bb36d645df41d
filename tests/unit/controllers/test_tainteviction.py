"""The NoExecute taint manager: who goes when, cancellations, terminating pods, and the
whole path from a dead kubelet to its pods terminating through the apiserver."""

import pytest
from controller_builders import NOT_READY, UNREACHABLE, Loop, node, pod, summary, taint, toleration

from cluster.clock import rfc3339
from cluster.controllers.podrecord import PodRecords
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.tainteviction import (
    TaintEvictionReconciler,
    by_node,
    matching_tolerations,
    min_toleration_seconds,
)


class TaintEvictionController(ReconcilerStep):
    """The reconciler as the manager runs it, with its schedule in view."""

    def __init__(self) -> None:
        super().__init__(TaintEvictionReconciler, sort_keys=True, records=PodRecords(), order=by_node)

    def scheduled(self) -> dict:
        return self.reconciler.scheduled()


DEFAULTS = [toleration(NOT_READY, 300), toleration(UNREACHABLE, 300)]  # DefaultTolerationSeconds


def _evicted(name="p", ns="default"):
    return [
        ("pod-condition", f"{ns}/{name}", "DisruptionTarget", "DeletionByTaintManager"),
        ("delete", f"{ns}/{name}", None),
        ("event", "TaintManagerEviction", f"Marking for deletion Pod {ns}/{name}", "Normal", "Pod"),
    ]


def _cancelled(name="p", ns="default"):
    return [("event", "TaintManagerEviction", f"Cancelling deletion of Pod {ns}/{name}", "Normal", "Pod")]


def _tainted(c, now, taints, rv="2"):
    c.on_event("Node", "MODIFIED", node(rv=rv, taints=taints), now)


# ---- tolerationSeconds ---------------------------------------------------------------------

TIMING = [
    # (case, tolerations, node taints, seconds until deletion or None = never)
    ("DefaultTolerationSeconds: 300 s", DEFAULTS, [taint(UNREACHABLE)], 300.0),
    ("a shorter toleration", [toleration(UNREACHABLE, 60)], [taint(UNREACHABLE)], 60.0),
    ("no tolerationSeconds: forever", [toleration(UNREACHABLE)], [taint(UNREACHABLE)], None),
    ("not tolerated: at once", [], [taint(UNREACHABLE)], 0.0),
    ("no tolerations at all: at once", None, [taint("dedicated", value="x")], 0.0),
    ("one of two not tolerated: at once", DEFAULTS, [taint(UNREACHABLE), taint("dedicated")], 0.0),
    (
        "the smallest of the matched ones",
        [toleration(UNREACHABLE, 300), toleration("dedicated", 30)],
        [taint(UNREACHABLE), taint("dedicated")],
        30.0,
    ),
    (
        "a forever and a limited one: the limited one counts",
        [toleration(UNREACHABLE), toleration("dedicated", 45)],
        [taint(UNREACHABLE), taint("dedicated")],
        45.0,
    ),
    (
        "the first matching toleration is the one used",
        [toleration(""), toleration(UNREACHABLE, 60)],
        [taint(UNREACHABLE)],
        None,
    ),
    ("tolerationSeconds 0: at once", [toleration(UNREACHABLE, 0)], [taint(UNREACHABLE)], 0.0),
    ("negative tolerationSeconds: at once", [toleration(UNREACHABLE, -5)], [taint(UNREACHABLE)], 0.0),
    (
        "Equal needs the value",
        [toleration("dedicated", 10, operator="Equal", value="a")],
        [taint("dedicated", value="b")],
        0.0,
    ),
    ("NoSchedule taints are not this controller's", [], [taint(UNREACHABLE, "NoSchedule")], None),
]


@pytest.mark.parametrize("case,tolerations,taints,seconds", TIMING, ids=[c[0] for c in TIMING])
def test_when_a_pod_on_a_tainted_node_is_deleted(case, tolerations, taints, seconds):
    c = TaintEvictionController()
    c.on_event("Node", "ADDED", node(), 0)
    c.on_event("Pod", "ADDED", pod(tolerations=tolerations), 0)
    assert summary(c.sync(0)) == []
    _tainted(c, 10, taints)
    if seconds is None:
        assert summary(c.sync(10)) == []
        assert c.next_wakeup() is None
        assert summary(c.sync(10_000)) == []
        return
    deadline = 10 + seconds
    if seconds > 0:
        assert summary(c.sync(10)) == []
        assert c.next_wakeup() == deadline
        assert summary(c.sync(deadline - 0.001)) == []
    assert summary(c.sync(deadline)) == _evicted()
    assert c.next_wakeup() is None
    assert summary(c.sync(deadline + 1000)) == []  # fired once


def test_evictions_due_together_go_node_by_node_then_by_name():
    c = TaintEvictionController()
    for name in ("n1", "n2"):
        c.on_event("Node", "ADDED", node(name), 0)
    for name, on in (("a", "n2"), ("z", "n1"), ("b", "n2")):
        c.on_event("Pod", "ADDED", pod(name, node_name=on, tolerations=[]), 0)
    assert summary(c.sync(0)) == []
    for name in ("n2", "n1"):
        c.on_event("Node", "MODIFIED", node(name, rv="2", taints=[taint(UNREACHABLE)]), 10)
    lines = summary(c.sync(10))
    assert [line[1] for line in lines if line[0] == "delete"] == ["default/z", "default/a", "default/b"]


def test_a_status_change_names_no_key_but_the_latest_record_is_kept():
    c = TaintEvictionController()
    c.on_event("Node", "ADDED", node(), 0)
    c.on_event("Pod", "ADDED", pod(tolerations=DEFAULTS), 0)
    assert summary(c.sync(0)) == []
    c.on_event("Pod", "MODIFIED", pod(tolerations=DEFAULTS, phase="Succeeded"), 1)
    assert c.queue.pop_ready(1) == [] and c.cache.projected("Pod", "default", "p").phase == "Succeeded"
    c.on_event("Pod", "MODIFIED", pod(tolerations=[]), 2)  # the tolerations changed: judged again
    assert c.queue.pop_ready(2) == [("default", "p")]


def test_helpers():
    assert matching_tolerations([taint(UNREACHABLE)], DEFAULTS) == (True, [DEFAULTS[1]])
    assert matching_tolerations([taint("x")], DEFAULTS) == (False, [])
    assert min_toleration_seconds([]) == 0.0
    assert min_toleration_seconds([toleration("a"), toleration("b")]) is None
    assert min_toleration_seconds([toleration("a", 20), toleration("b", 10)]) == 10.0


# ---- changes while an eviction is scheduled ----------------------------------------------


UNREACHABLE_TAINTS = (taint(UNREACHABLE),)


def _scheduled_at_10(tolerations=DEFAULTS, taints=UNREACHABLE_TAINTS):
    c = TaintEvictionController()
    c.on_event("Node", "ADDED", node(), 0)
    c.on_event("Pod", "ADDED", pod(tolerations=tolerations), 0)
    _tainted(c, 10, list(taints))
    assert summary(c.sync(10)) == []
    assert c.scheduled() == {("default", "p"): 310.0}
    return c


def test_taints_removed_before_the_deadline_cancel_the_eviction():
    c = _scheduled_at_10()
    _tainted(c, 100, [], rv="3")
    assert summary(c.sync(100)) == _cancelled()
    assert c.scheduled() == {} and c.next_wakeup() is None
    assert summary(c.sync(310)) == []


def test_swapping_unreachable_for_not_ready_keeps_the_first_deadline():
    c = _scheduled_at_10()
    _tainted(c, 100, [taint(NOT_READY)], rv="3")
    assert summary(c.sync(100)) == []
    assert c.scheduled() == {("default", "p"): 310.0}
    assert summary(c.sync(310)) == _evicted()


def test_a_taint_that_is_not_tolerated_moves_the_deadline_to_now():
    c = _scheduled_at_10()
    _tainted(c, 50, [taint(UNREACHABLE), taint("dedicated")], rv="3")
    assert summary(c.sync(50)) == _evicted()[:2] + _cancelled() + _evicted()[2:]


def test_a_pod_deleted_while_scheduled_cancels_with_an_event():
    c = _scheduled_at_10()
    c.on_event("Pod", "DELETED", pod(tolerations=DEFAULTS), 20)
    assert summary(c.sync(20)) == _cancelled()
    assert summary(c.sync(310)) == []


def test_a_relist_delete_with_only_the_key_still_names_the_pod():
    c = _scheduled_at_10()
    c.on_event("Pod", "DELETED", {"kind": "Pod", "metadata": {"namespace": "default", "name": "p"}}, 20)
    assert summary(c.sync(20)) == _cancelled()


def test_a_terminating_pod_is_not_deleted_again():
    c = _scheduled_at_10()
    c.on_event("Pod", "MODIFIED", pod(tolerations=DEFAULTS, terminating=True), 200)
    assert summary(c.sync(310)) == []
    assert c.scheduled() == {}


def test_a_pod_already_marked_keeps_its_condition_and_is_only_deleted():
    target = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "DeletionByTaintManager",
        "message": "Taint manager: deleting due to NoExecute taint",
        "lastTransitionTime": rfc3339(5),
    }
    c = TaintEvictionController()
    c.on_event("Node", "ADDED", node(taints=[taint("dedicated")]), 0)
    c.on_event("Pod", "ADDED", pod(tolerations=[], conditions=[target]), 0)
    assert summary(c.sync(0)) == _evicted()[1:]


def test_a_pod_arriving_on_a_tainted_node_gets_its_time_from_then():
    c = TaintEvictionController()
    c.on_event("Node", "ADDED", node(taints=[taint(UNREACHABLE, added=0)]), 0)
    assert summary(c.sync(0)) == []
    c.on_event("Pod", "ADDED", pod(node_name=None, tolerations=DEFAULTS), 50)
    assert summary(c.sync(50)) == [] and c.next_wakeup() is None
    c.on_event("Pod", "MODIFIED", pod(tolerations=DEFAULTS), 60)  # bound
    assert summary(c.sync(60)) == []
    assert c.scheduled() == {("default", "p"): 360.0}


def test_a_fired_eviction_is_not_fired_again_on_a_tolerated_change():
    c = _scheduled_at_10()
    assert summary(c.sync(310)) == _evicted()
    _tainted(c, 320, [taint(NOT_READY)], rv="3")
    assert summary(c.sync(320)) == []
    assert summary(c.sync(1000)) == []


def test_a_deleted_node_leaves_the_schedule_to_pod_gc():
    c = _scheduled_at_10()
    c.on_event("Node", "DELETED", node(), 100)
    assert summary(c.sync(100)) == []
    assert summary(c.sync(310)) == _evicted()


def test_ties_are_evicted_in_name_order():
    c = TaintEvictionController()
    c.on_event("Node", "ADDED", node(), 0)
    for name, ns in (("b", "x"), ("a", "y"), ("a", "x")):
        c.on_event("Pod", "ADDED", pod(name, ns=ns, tolerations=DEFAULTS), 0)
    _tainted(c, 0, [taint(UNREACHABLE)])
    c.sync(0)
    lines = summary(c.sync(300))
    assert [line[1] for line in lines if line[0] == "delete"] == ["x/a", "x/b", "y/a"]


# ---- through the apiserver ----------------------------------------------------------------


def test_a_dead_kubelets_pods_terminate_300s_after_the_unreachable_taint():
    loop = Loop()
    loop.register("n1", 0)
    loop.register("n2", 0)
    for name, tolerations in (("web", None), ("db", [toleration(UNREACHABLE, 30)]), ("agent", [toleration("")])):
        p = pod(name, tolerations=tolerations)
        for key in ("uid", "creationTimestamp"):
            del p["metadata"][key]
        del p["status"]
        loop.api.create(p, 0)  # admission adds the 300 s defaults where not tolerated already
    for t in range(0, 350, 10):
        loop.renew(["n2"], t)
        loop.at(t)
        loop.run(until=t + 9.99)
    events = [(t, line[1], line[2]) for t, line in loop.trace if line[0] == "event"]
    assert events == [
        (0, "RegisteredNode", "Node n1 event: Registered Node n1 in Controller"),
        (0, "RegisteredNode", "Node n2 event: Registered Node n2 in Controller"),
        (40, "NodeNotReady", "Node n1 status is now: NodeNotReady"),
        (70, "TaintManagerEviction", "Marking for deletion Pod default/db"),
        (340, "TaintManagerEviction", "Marking for deletion Pod default/web"),
    ]
    web = loop.api.get("Pod", "default", "web")
    assert web["metadata"]["deletionTimestamp"] == rfc3339(370)  # the pod's own 30 s grace
    target = next(c for c in web["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["reason"], target["lastTransitionTime"]) == ("DeletionByTaintManager", rfc3339(340))
    assert not loop.api.get("Pod", "default", "agent")["metadata"].get("deletionTimestamp")
    assert all(err is None for _, err in loop.results)
