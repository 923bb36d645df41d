"""Filtering with nominated pods in two passes (reference §7.3), through the Scheduler."""
from __future__ import annotations

import pytest
from sched_builders import make_node, make_pod, make_scheduler


def nominate(s, pod):
    """``pod`` waits nominated to its status.nominatedNodeName (kept out of the queue)."""
    s.queue.nominator.add(s.cache.new_pod_info(pod))


@pytest.mark.parametrize("name,prio,expected", [
    ("b", 100, None),   # A (100) counts: 600m + 500m > 1000m
    ("c", 50, None),    # A outranks it too
    ("d", 200, "n1"),   # A (100 < 200) is ignored: D may take the room
])
def test_reference_worked_example(name, prio, expected):
    s = make_scheduler([make_node("n1", cpu="1")])
    nominate(s, make_pod("a").prio(100).req(cpu="600m").nominated("n1"))
    s.on_pod("ADDED", make_pod(name).prio(prio).req(cpu="500m"), 0.0)
    out = s.schedule(0.0)
    if expected is None:
        assert out.binds == []
        assert out.events[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu. preemption: ")
    else:
        assert [b[3] for b in out.binds] == [expected]


def test_nominated_pod_itself_is_not_counted_against_itself():
    s = make_scheduler([make_node("n1", cpu="1")])
    a = make_pod("a").prio(100).req(cpu="600m").nominated("n1")
    s.on_pod("ADDED", a, 0.0)
    assert [b[3] for b in s.schedule(0.0).binds] == ["n1"]


def test_other_nodes_are_judged_without_the_nominated_pods():
    s = make_scheduler([make_node("n1", cpu="1"), make_node("n2", cpu="1")])
    nominate(s, make_pod("a").prio(100).req(cpu="600m").nominated("n1"))
    s.on_pod("ADDED", make_pod("b").prio(100).req(cpu="500m"), 0.0)
    assert [b[3] for b in s.schedule(0.0).binds] == ["n2"]


def test_affinity_that_leans_on_a_nominated_pod_fails_the_second_pass():
    """The nominated db pod is not running yet: pass 2 (without it) finds no db pod."""
    host = "kubernetes.io/hostname"
    s = make_scheduler([make_node("n1").label(host, "n1")], [make_pod("other").label("app", "x").node("n1")])
    nominate(s, make_pod("db").prio(100).label("app", "db").nominated("n1"))
    s.on_pod("ADDED", make_pod("f").prio(10).pod_affinity(host, {"matchLabels": {"app": "db"}}), 0.0)
    out = s.schedule(0.0)
    assert out.binds == []
    assert out.events[0]["message"].startswith("0/1 nodes are available: 1 node(s) didn't match pod affinity rules.")


def test_anti_affinity_against_a_nominated_pod_fails_the_first_pass():
    host = "kubernetes.io/hostname"
    s = make_scheduler([make_node("n1").label(host, "n1")])
    nominate(s, make_pod("db").prio(100).label("app", "db").nominated("n1"))
    s.on_pod("ADDED", make_pod("f").prio(100).pod_anti_affinity(host, {"matchLabels": {"app": "db"}}), 0.0)
    out = s.schedule(0.0)
    assert out.events[0]["message"].startswith("0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.")


def test_the_cache_is_unchanged_after_the_first_pass():
    s = make_scheduler([make_node("n1", cpu="1")])
    nominate(s, make_pod("a").prio(100).req(cpu="600m").nominated("n1"))
    s.on_pod("ADDED", make_pod("b").prio(100).req(cpu="500m"), 0.0)
    s.schedule(0.0)
    snap = s.cache.snapshot()
    assert int(snap.requested[0, 0]) == 0 and int(snap.pod_count[0]) == 0
    assert s.cache.node_info("n1").pods == {}
