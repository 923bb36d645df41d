"""NodePorts: PreFilter Skip, HostPortInfo.CheckConflict rules, memo invalidation, FitError text."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import cache_with, make_node, make_pod

from cluster.scheduler.framework import ClusterEvent, CycleState
from cluster.scheduler.plugins.nodeports import ERR_REASON, NodePorts
from cluster.scheduler.status import Code, Diagnosis, Rejection, fit_error_message

REASON = "node(s) didn't have free ports for the requested pod ports"


def run(plugin, c, pod):
    pinfo = c.new_pod_info(pod)
    snap = c.snapshot()
    status, result = plugin.pre_filter(CycleState(), pinfo, snap)
    assert result is None
    return status, plugin.filter(CycleState(), pinfo, snap)


def with_ports(pod, ports):
    for port, protocol, ip in ports:
        pod.host_port(port, protocol, ip)
    return pod


CONFLICT_CASES = [
    # (id, ports held on the node, ports the pod wants, conflict); a port is (hostPort, protocol, hostIP)
    ("same ip protocol port", [(80, "TCP", "127.0.0.1")], [(80, "TCP", "127.0.0.1")], True),
    ("other port", [(80, "TCP", "")], [(81, "TCP", "")], False),
    ("other protocol", [(80, "TCP", "")], [(80, "UDP", "")], False),
    ("wildcard held, specific wanted", [(80, "TCP", "")], [(80, "TCP", "127.0.0.1")], True),
    ("specific held, wildcard wanted", [(80, "TCP", "127.0.0.1")], [(80, "TCP", "")], True),
    ("explicit 0.0.0.0 equals empty", [(80, "TCP", "0.0.0.0")], [(80, "TCP", "")], True),
    ("two specific ips", [(80, "TCP", "127.0.0.1")], [(80, "TCP", "127.0.0.2")], False),
    ("wildcard vs other protocol on specific ip", [(80, "UDP", "10.0.0.1")], [(80, "TCP", "")], False),
    ("empty protocol is TCP", [(80, "", "")], [(80, "TCP", "")], True),
    ("SCTP only against SCTP", [(80, "SCTP", "")], [(80, "SCTP", "10.0.0.1")], True),
    ("second of several ports conflicts", [(8080, "TCP", "")], [(80, "TCP", ""), (8080, "TCP", "")], True),
]


@pytest.mark.parametrize("held,wanted,conflict", [c[1:] for c in CONFLICT_CASES], ids=[c[0] for c in CONFLICT_CASES])
def test_conflict_rules(held, wanted, conflict):
    c = cache_with([make_node("n1"), make_node("n2")], [with_ports(make_pod("b"), held).node("n1")])
    status, result = run(NodePorts(), c, with_ports(make_pod("p"), wanted))
    assert status.is_success()
    assert result.feasible.tolist() == [not conflict, True]
    if conflict:
        assert [(code, reason, mask.tolist()) for code, reason, mask in result.failures] == [
            (Code.UNSCHEDULABLE, REASON, [True, False])
        ]
    else:
        assert result.failures == []


def test_pod_without_host_ports_skips():
    c = cache_with([make_node("n1")], [make_pod("b").host_port(80).node("n1")])
    pod = make_pod("p").req(cpu="1")
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]  # no hostPort: not a host port
    status, _ = run(NodePorts(), c, pod)
    assert status.code == Code.SKIP


@pytest.mark.parametrize("held_init,want_init", [(True, False), (False, True)], ids=["held", "wanted"])
def test_init_container_ports_count(held_init, want_init):
    c = cache_with([make_node("n1")], [make_pod("b").host_port(80, init=held_init).node("n1")])
    status, result = run(NodePorts(), c, make_pod("p").host_port(80, init=want_init))
    assert status.is_success() and result.feasible.tolist() == [False]


def test_memo_follows_pods_and_node_rows():
    plugin = NodePorts()
    c = cache_with([make_node(f"n{i}") for i in range(4)])
    pod = make_pod("p").host_port(80)
    assert run(plugin, c, pod)[1].feasible.tolist() == [True] * 4
    c.add_pod(make_pod("b1").host_port(80).node("n3"))
    assert run(plugin, c, pod)[1].feasible.tolist() == [True, True, True, False]
    c.remove_node("n0")  # n3 moves into row 0
    assert run(plugin, c, pod)[1].feasible.tolist() == [False, True, True]
    c.remove_pod("uid-default-b1")
    assert run(plugin, c, pod)[1].feasible.tolist() == [True, True, True]
    # A second cache with the same counters must not reuse the first one's memo.
    other = cache_with([make_node(f"m{i}") for i in range(3)])
    assert run(plugin, other, pod)[1].feasible.tolist() == [True, True, True]


def test_port_freed_only_when_last_holder_leaves():
    plugin = NodePorts()
    c = cache_with(
        [make_node("n1")], [make_pod("b1").host_port(80).node("n1"), make_pod("b2").host_port(80).node("n1")]
    )
    pod = make_pod("p").host_port(80)
    c.remove_pod("uid-default-b1")
    assert run(plugin, c, pod)[1].feasible.tolist() == [False]
    c.remove_pod("uid-default-b2")
    assert run(plugin, c, pod)[1].feasible.tolist() == [True]


def test_fit_error_message():
    c = cache_with(
        [make_node("n1"), make_node("n2"), make_node("n3")],
        [make_pod("b1").host_port(80).node("n1"), make_pod("b2").host_port(80, ip="10.0.0.2").node("n3")],
    )
    _, result = run(NodePorts(), c, make_pod("p").host_port(80))
    diag = Diagnosis(
        3, rejections=[Rejection(NodePorts.NAME, code, reason, mask) for code, reason, mask in result.failures]
    )
    assert fit_error_message(diag) == f"0/3 nodes are available: 2 {REASON}."
    assert np.flatnonzero(~result.feasible).tolist() == [0, 2]


def test_plugin_identity_and_args():
    assert NodePorts.NAME == "NodePorts" and ERR_REASON == REASON
    assert NodePorts.EVENTS == {ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD}
    with pytest.raises(ValueError, match="NodePorts takes no arguments"):
        NodePorts({"ports": [80]})
