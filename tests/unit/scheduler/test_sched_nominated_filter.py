"""Filtering with nominated pods in two passes (upstream's RunFilterPluginsWithNominatedPods), through the Scheduler."""

from __future__ import annotations

import pytest
from sched_builders import last_given, make_node, make_pod, make_scheduler


def nominate(s, pod):
    """``pod`` waits nominated to its status.nominatedNodeName (kept out of the queue)."""
    s.queue.nominator.add(s.cache.new_pod_info(pod))


@pytest.mark.parametrize(
    "name,prio,expected",
    [
        ("b", 100, None),  # A (100) counts: 600m + 500m > 1000m
        ("c", 50, None),  # A outranks it too
        ("d", 200, "n1"),  # A (100 < 200) is ignored: D may take the room
    ],
)
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
    assert out.events[0]["message"].startswith(
        "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."
    )


def test_the_cache_is_unchanged_after_the_first_pass():
    s = make_scheduler([make_node("n1", cpu="1")])
    nominate(s, make_pod("a").prio(100).req(cpu="600m").nominated("n1"))
    s.on_pod("ADDED", make_pod("b").prio(100).req(cpu="500m"), 0.0)
    s.schedule(0.0)
    snap = s.cache.snapshot()
    assert int(snap.requested[0, 0]) == 0 and int(snap.pod_count[0]) == 0
    assert s.cache.node_info("n1").pods == {}


def _preempted(s, now=0.0):
    """One cycle of the preemptor; its victims vanish at once. Returns the nominated node."""
    out = s.schedule(now)
    ((_, _, _, node),) = out.nominations
    for _, _, uid in out.deletes:
        s.on_pod("DELETED", last_given(s, uid), now)
    return node


def _full_cluster():
    nodes = [make_node("n1", cpu="1"), make_node("n2", cpu="1")]
    low = [make_pod(f"low{i}").prio(1).req(cpu="900m").node(f"n{i + 1}") for i in range(2)]
    s = make_scheduler(nodes, low)
    s.on_pod("ADDED", make_pod("p").prio(100).req(cpu="900m"), 0.0)
    return s, nodes


def test_retry_on_the_nominated_node_skips_the_full_filter(monkeypatch):
    s, _ = _full_cluster()
    node = _preempted(s)
    import cluster.scheduler.scheduler as sched_mod

    calls = []
    monkeypatch.setattr(sched_mod, "run_filters", lambda *a, **k: calls.append(a) or pytest.fail("full filter"))
    assert [b[3] for b in s.schedule(2.0).binds] == [node]
    assert calls == []


def test_a_node_change_after_the_nomination_sends_the_retry_through_every_filter():
    s, nodes = _full_cluster()
    node = _preempted(s)
    tainted = next(n for n in nodes if n["metadata"]["name"] == node).copy_().taint("dedicated")
    s.on_node("MODIFIED", tainted, 1.0)
    out = s.schedule(2.0)
    assert out.binds == []
    other = "n2" if node == "n1" else "n1"
    assert [n[3] for n in out.nominations] == [other]  # preempts again, on the untainted node


def test_a_preemptor_waits_until_its_own_victims_are_seen_gone():
    """Async preemption's gate: another preemption's victim going away must not send a
    preemptor whose victims are still there into a second preemption."""
    nodes = [make_node("n1", cpu="1"), make_node("n2", cpu="1")]
    low = [make_pod(f"low{i}").prio(1).req(cpu="900m").node(f"n{i + 1}") for i in range(2)]
    s = make_scheduler(nodes, low)
    for name in ("p1", "p2"):
        s.on_pod("ADDED", make_pod(name).prio(100).req(cpu="900m"), 0.0)
    out = s.schedule(0.0)
    victim_of = {nom[1]: victim for nom, victim in zip(out.nominations, out.deletes)}
    assert s.stats["preemptions"] == 2 and len(victim_of) == 2
    first, second = sorted(victim_of)
    s.on_pod("DELETED", last_given(s, victim_of[second][2]), 0.5)
    out = s.schedule(0.5)  # both were moved to backoffQ; only the second may leave it
    assert [b[1] for b in out.binds] == [second]
    assert out.deletes == [] and s.stats["preemptions"] == 2
    assert s.queue.is_gated(f"uid-default-{first}")
    s.on_pod("DELETED", last_given(s, victim_of[first][2]), 0.7)
    assert not s.queue.is_gated(f"uid-default-{first}")
    assert [b[1] for b in s.schedule(0.7).binds] == [first]
    assert s.stats["preemptions"] == 2


def test_a_victim_seen_terminating_ends_the_wait():
    s, _ = _full_cluster()
    out = s.schedule(0.0)
    ((_, _, uid),) = out.deletes
    victim = last_given(s, uid)
    assert s.queue.is_gated("uid-default-p") is False  # parked, not yet moved
    going = dict(
        victim,
        metadata=dict(victim["metadata"], deletionTimestamp="2026-01-01T00:00:01Z", deletionGracePeriodSeconds=30),
    )
    s.on_pod("MODIFIED", going, 1.0)
    assert not s.host.preemption_pending("uid-default-p")
