"""NodeUnschedulable: cordoned nodes, the unschedulable-taint toleration, PreFilter skips."""

from __future__ import annotations

import pytest
from sched_builders import cache_with, make_node, make_pod

from cluster.scheduler.framework import ClusterEvent, CycleState
from cluster.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from cluster.scheduler.status import Code, Diagnosis, Rejection, fit_error_message

REASON = "node(s) were unschedulable"
KEY = "node.kubernetes.io/unschedulable"


def run(nodes, pod, plugin=None):
    c = cache_with(nodes)
    plugin = plugin or NodeUnschedulable()
    state, pinfo, snap = CycleState(), c.new_pod_info(pod), c.snapshot()
    status, result = plugin.pre_filter(state, pinfo, snap)
    assert result is None
    return status, plugin.filter(state, pinfo, snap)


CASES = [
    # (id, node cordoned, pod tolerations, fits)
    ("schedulable node", False, [], True),
    ("cordoned node", True, [], False),
    ("tolerates the taint exactly", True, [dict(key=KEY, operator="Exists", effect="NoSchedule")], True),
    ("tolerates the key for every effect", True, [dict(key=KEY, operator="Exists")], True),
    ("tolerates everything", True, [dict(operator="Exists")], True),
    ("Equal with the empty value", True, [dict(key=KEY, operator="Equal", value="", effect="NoSchedule")], True),
    ("Equal with another value", True, [dict(key=KEY, operator="Equal", value="x", effect="NoSchedule")], False),
    ("NoExecute toleration is not enough", True, [dict(key=KEY, operator="Exists", effect="NoExecute")], False),
    ("another key", True, [dict(key="node.kubernetes.io/not-ready", operator="Exists")], False),
]


@pytest.mark.parametrize("cordoned,tolerations,fits", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(cordoned, tolerations, fits):
    node = make_node("n1")
    if cordoned:
        node.unschedulable()
    pod = make_pod("p")
    pod["spec"]["tolerations"] = tolerations
    status, result = run([node, make_node("n2")], pod)
    assert result.feasible.tolist() == [fits, True]
    expected = [] if fits else [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON, [True, False])]
    assert [(code, reason, mask.tolist()) for code, reason, mask in result.failures] == expected
    assert status.is_skip() == fits  # the Filter is only run when it could reject


def test_unschedulable_false_is_schedulable():
    node = make_node("n1")
    node["spec"]["unschedulable"] = False
    status, result = run([node], make_pod("p"))
    assert status.is_skip() and result.feasible.tolist() == [True]


def test_fit_error_message():
    nodes = [make_node("a").unschedulable(), make_node("b").unschedulable(), make_node("c")]
    _, result = run(nodes, make_pod("p"))
    rej = [Rejection(NodeUnschedulable.NAME, code, reason, mask) for code, reason, mask in result.failures]
    assert fit_error_message(Diagnosis(3, rejections=rej)) == "0/3 nodes are available: 2 node(s) were unschedulable."


def test_follows_cordon_and_uncordon():
    c = cache_with([make_node("a"), make_node("b")])
    plugin, pinfo = NodeUnschedulable(), c.new_pod_info(make_pod("p"))
    assert plugin.pre_filter(CycleState(), pinfo, c.snapshot())[0].is_skip()
    c.update_node(make_node("b").unschedulable())
    assert plugin.pre_filter(CycleState(), pinfo, c.snapshot())[0].is_success()
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [True, False]
    c.update_node(make_node("b"))
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [True, True]


def test_follows_node_removal():
    c = cache_with([make_node("a").unschedulable(), make_node("b"), make_node("c")])
    plugin, pinfo = NodeUnschedulable(), c.new_pod_info(make_pod("p"))
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [False, True, True]
    c.remove_node("a")  # "c" moves into row 0
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [True, True]


def test_bad_args():
    with pytest.raises(ValueError, match="NodeUnschedulable takes no arguments"):
        NodeUnschedulable({"x": 1})


def test_identity():
    p = NodeUnschedulable()
    assert p.NAME == "NodeUnschedulable"
    assert p.EVENTS == {ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT}
