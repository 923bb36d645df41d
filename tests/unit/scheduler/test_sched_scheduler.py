"""The scheduling cycle end to end: search, choice, failures, events, binds, requeues."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import bound, confirm_all, make_node, make_pod, make_scheduler

from cluster.clock import rfc3339
from cluster.scheduler.scheduler import ScheduleOutput
from cluster.scheduler.search import num_feasible_nodes_to_find, rotated_take


@pytest.mark.parametrize(
    "nodes,pct,expected",
    [
        (100, 0, 100),
        (1000, 0, 420),
        (5000, 0, 500),
        (6000, 0, 300),
        (50, 0, 50),
        (99, 0, 99),
        (1000, 10, 100),
        (5000, 50, 2500),
        (1000, 100, 1000),
        (200, 30, 100),
    ],
)
def test_num_feasible_nodes_to_find(nodes, pct, expected):
    assert num_feasible_nodes_to_find(pct, nodes) == expected


@pytest.mark.parametrize(
    "feasible,start,k,positions,processed",
    [
        ("11111", 0, 2, [0, 1], 2),  # stops on the 3rd feasible node, which it drops
        ("10011", 0, 1, [0], 3),  # infeasible nodes before the 2nd feasible were processed
        ("10011", 3, 2, [3, 4], 2),  # wraps to find the 3rd at index 0
        ("10011", 4, 2, [4, 0], 4),
        ("01010", 2, 2, [3, 1], 5),  # exactly k feasible: every node processed
        ("00000", 1, 2, [], 5),
        ("11111", 3, 9, [3, 4, 0, 1, 2], 5),
    ],
)
def test_rotated_take(feasible, start, k, positions, processed):
    mask = np.array([c == "1" for c in feasible])
    got, n = rotated_take(mask, start, k)
    assert (got.tolist(), n) == (positions, processed)


def nodes(n, **alloc):
    return [make_node(f"n{i:03d}", **alloc) for i in range(n)]


def test_scores_pick_the_least_allocated_node():
    s = make_scheduler(
        [make_node("small", cpu="2"), make_node("big", cpu="16"), make_node("mid", cpu="8")],
        [make_pod("p").req(cpu="1", memory="1Gi")],
    )
    out = s.schedule(1.0)
    assert out.binds == [("default", "p", "uid-default-p", "big")]
    ev = out.events[0]
    assert (ev["reason"], ev["type"]) == ("Scheduled", "Normal")
    assert ev["message"] == "Successfully assigned default/p to big"
    assert ev["source"]["component"] == "default-scheduler"
    assert ev["involvedObject"]["name"] == "p" and out.pod_conditions == []
    assert s.stats["attempts"] == s.stats["scheduled"] == 1 and s.pending_count() == 0


def test_round_robin_start_index_follows_upstream_search():
    ns = nodes(200)  # 200 nodes: adaptive 49% = 98, raised to 100
    for n in ns[100:110]:
        n.alloc(cpu="0")  # infeasible for a cpu-requesting pod
    s = make_scheduler(ns)
    candidates = [range(0, 100), [*range(110, 200), *range(0, 10)], [*range(10, 100), *range(110, 120)]]
    pods = {}
    for i in range(3):
        p = make_pod(f"p{i}").req(cpu="100m")
        pods[p["metadata"]["uid"]] = p
        s.on_pod("ADDED", p, 0.0)
        out = s.schedule(1.0, max_pods=1)
        confirm_all(s, out, pods, 1.0)
        # Cycle 1 from 0: the 101st feasible node is n110, so 110 nodes were processed.
        # Cycle 2 from 110: n110..n199 (90) and n000..n009 (10); the 101st is n010.
        # Cycle 3 from 10: n010..n099 (90), n100..n109 fail, n110..n119 (10); the 101st is n120.
        assert s.next_start_node_index == [110, 10, 120][i]
        assert out.binds[0][3] in {f"n{j:03d}" for j in candidates[i]}


def test_small_clusters_search_everything():
    s = make_scheduler(nodes(5), [make_pod("a").req(cpu="1")])
    s.schedule(1.0)
    assert s.next_start_node_index == 0  # (0 + 5) % 5


def test_nominated_node_is_taken_when_feasible():
    ns = [make_node("roomy", cpu="32"), make_node("nominated", cpu="2")]
    s = make_scheduler(ns, [make_pod("p").req(cpu="1").nominated("nominated")])
    s.next_start_node_index = 1
    out = s.schedule(1.0)
    assert out.binds[0][3] == "nominated"
    assert s.next_start_node_index == 0  # upstream searched the one-node list [nominated]


def test_nominated_node_that_does_not_fit_falls_back_to_the_full_search():
    ns = [make_node("roomy", cpu="32"), make_node("nominated", cpu="2")]
    s = make_scheduler(
        ns, [make_pod("p").req(cpu="4").nominated("nominated"), make_pod("q").req(cpu="1").nominated("gone-node")]
    )
    out = s.schedule(1.0)
    assert [b[3] for b in out.binds] == ["roomy", "roomy"]


def test_ties_are_broken_by_the_seed():
    def choices(seed):
        s = make_scheduler(nodes(20), seed=seed)
        got = []
        for i in range(10):
            p = make_pod(f"p{i}").req(cpu="1")
            s.on_pod("ADDED", p, 0.0)
            out = s.schedule(1.0)
            got.append(out.binds[0][3])
            s.on_pod("DELETED", bound(p, got[-1]), 1.0)  # keep every node equally empty
        return got

    assert choices(7) == choices(7)
    assert choices(7) != choices(8)
    assert len(set(choices(7))) > 1


def test_failed_scheduling_event_and_condition():
    ns = [make_node("a", cpu="1"), make_node("b", cpu="1"), make_node("c", memory="1Gi")]
    s = make_scheduler(ns, [make_pod("p").req(cpu="2", memory="2Gi")])
    out = s.schedule(12.0)
    msg = (
        "0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
        " preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    assert out.binds == []
    ev = out.events[0]
    assert (ev["reason"], ev["type"], ev["message"]) == ("FailedScheduling", "Warning", msg)
    assert ev["source"]["component"] == "default-scheduler"
    assert out.pod_conditions == [
        (
            "default",
            "p",
            "uid-default-p",
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": msg,
                "lastTransitionTime": rfc3339(12.0),
            },
        )
    ]
    assert s.stats["unschedulable"] == 1
    assert s.queue.unschedulable_count() == 1 and s.pending_count() == 1
    assert s.schedule(13.0).events == []  # parked: no retry without an event


def test_every_attempt_emits_an_event_but_an_unchanged_condition_is_not_rewritten():
    pod = make_pod("p").req(cpu="2")
    node = make_node("a", cpu="1")
    s = make_scheduler([node], [pod])
    first = s.schedule(1.0)
    cond = first.pod_conditions[0][3]
    updated = pod.copy_()
    updated["status"]["conditions"] = [cond]
    s.on_pod("MODIFIED", updated, 2.0)  # the scheduler's own status write comes back
    assert s.queue.unschedulable_count() == 1  # a status-only update does not wake the pod
    s.on_node("MODIFIED", node.copy_().label("zone", "a"), 3.0)
    assert s.queue.unschedulable_count() == 1  # a relabel cannot make 2 CPUs fit in 1
    second = s.schedule(301.5)  # the 5-minute flush retries it
    assert [e["reason"] for e in second.events] == ["FailedScheduling"]
    assert second.pod_conditions == []
    assert s.stats["attempts"] == 2
    # A new message is written, but the status stays False: lastTransitionTime is kept.
    s.on_node("ADDED", make_node("b", cpu="1"), 302.0)  # does not fit there either: stays parked
    assert s.queue.unschedulable_count() == 1
    third = s.schedule(602.0)
    assert third.pod_conditions[0][3]["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert third.pod_conditions[0][3]["lastTransitionTime"] == rfc3339(1.0)


def test_no_nodes():
    s = make_scheduler([], [make_pod("p").req(cpu="1")])
    out = s.schedule(1.0)
    assert out.events[0]["message"] == "no nodes available to schedule pods"
    assert out.pod_conditions[0][3]["reason"] == "Unschedulable"
    s.on_node("ADDED", make_node("n1"), 2.0)
    assert s.schedule(3.0).binds[0][3] == "n1"


def test_pods_the_scheduler_does_not_handle():
    pods = [
        make_pod("bound").req(cpu="3").node("n1"),
        make_pod("other").scheduler("my-scheduler"),
        make_pod("terminating").terminating(),
        make_pod("done").phase("Succeeded"),
        make_pod("failed").phase("Failed"),
    ]
    s = make_scheduler([make_node("n1")], pods)
    assert s.pending_count() == 0
    assert int(s.cache.snapshot().requested[0, 0]) == 3000  # the bound pod counts
    assert s.schedule(1.0).events == []


def test_pending_pod_leaves_the_queue_when_it_stops_being_ours():
    pod = make_pod("p").req(cpu="1")
    s = make_scheduler([], [pod])
    s.on_pod("MODIFIED", pod.copy_().terminating(), 1.0)
    assert s.pending_count() == 0
    s.on_pod("ADDED", make_pod("q"), 1.0)
    s.on_pod("DELETED", make_pod("q"), 1.0)
    assert s.pending_count() == 0


def test_pod_bound_by_someone_else_leaves_the_queue_and_counts():
    pod = make_pod("p").req(cpu="1")
    s = make_scheduler([make_node("n1")], [pod])
    s.on_pod("MODIFIED", bound(pod, "n1"), 1.0)
    assert s.pending_count() == 0 and s.cache.pod_node("uid-default-p") == "n1"


def parked(s, now=1.0):
    out = s.schedule(now)
    assert out.binds == [] and s.queue.unschedulable_count() >= 1
    return out


@pytest.mark.parametrize(
    "event,moves",
    [
        (lambda s, n: s.on_node("MODIFIED", n.copy_().heartbeat("2026-01-01T00:01:00Z"), 2.0), False),
        (lambda s, n: s.on_node("MODIFIED", n.copy_().alloc(cpu="4"), 2.0), True),
        # A relabel or a new taint cannot make the full node fit (upstream's preCheckForNode).
        (lambda s, n: s.on_node("MODIFIED", n.copy_().label("zone", "b"), 2.0), False),
        (lambda s, n: s.on_node("MODIFIED", n.copy_().taint("k"), 2.0), False),
        (lambda s, n: s.on_node("ADDED", make_node("other", cpu="4"), 2.0), True),
        (lambda s, n: s.on_node("ADDED", make_node("small", cpu="500m"), 2.0), False),
        (lambda s, n: s.on_node("ADDED", make_node("tainted", cpu="4").taint("k"), 2.0), False),
        (lambda s, n: s.on_pod("DELETED", make_pod("big").req(cpu="1").node("n1"), 2.0), True),
        (lambda s, n: s.on_pod("MODIFIED", make_pod("big").req(cpu="1").node("n1").phase("Succeeded"), 2.0), True),
        (lambda s, n: s.on_pod("MODIFIED", make_pod("big").req(cpu="1").node("n1").terminating(), 2.0), False),
        (lambda s, n: s.on_pod("ADDED", make_pod("x").req(cpu="1").node("n1"), 2.0), False),
        (lambda s, n: s.on_node("DELETED", n, 2.0), False),
    ],
    ids=[
        "heartbeat",
        "allocatable",
        "labels",
        "taints",
        "node added",
        "too small node added",
        "tainted node added",
        "assigned pod deleted",
        "assigned pod terminal",
        "assigned pod terminating",
        "assigned pod added",
        "node deleted",
    ],
)
def test_cluster_events_that_wake_unschedulable_pods(event, moves):
    node = make_node("n1", cpu="1").heartbeat("2026-01-01T00:00:00Z")
    s = make_scheduler([node], [make_pod("big").req(cpu="1").node("n1"), make_pod("p").req(cpu="1")])
    parked(s)
    event(s, node)
    assert s.queue.active_count() == int(moves)


def test_terminal_pod_releases_its_resources():
    s = make_scheduler(
        [make_node("n1", cpu="1")], [make_pod("big").req(cpu="1").node("n1"), make_pod("p").req(cpu="1")]
    )
    parked(s)
    s.on_pod("MODIFIED", make_pod("big").req(cpu="1").node("n1").phase("Failed"), 2.0)
    assert s.schedule(3.0).binds[0][3] == "n1"


def test_unschedulable_pods_are_flushed_after_five_minutes():
    s = make_scheduler([make_node("n1", cpu="1")], [make_pod("p").req(cpu="2")])
    parked(s, now=10.0)
    assert s.schedule(310.0).events == []
    assert [e["reason"] for e in s.schedule(310.5).events] == ["FailedScheduling"]


def schedule_one(node_cpu="2"):
    pod = make_pod("a").req(cpu="1")
    s = make_scheduler([make_node("n1", cpu=node_cpu)], [pod])
    out = s.schedule(1.0)
    assert out.binds == [("default", "a", "uid-default-a", "n1")]
    return s, pod


def test_bind_failure_forgets_and_requeues():
    s, pod = schedule_one()
    s.on_bind_failed("default", "a", "uid-default-a", "etcdserver: request timed out", conflict=False, now=2.0)
    assert s.stats["bindFailures"] == 1
    assert int(s.cache.snapshot().requested[0, 0]) == 0  # forgotten
    out = s.schedule(3.0)
    assert out.events[0]["reason"] == "FailedScheduling"
    assert out.events[0]["message"] == "etcdserver: request timed out"
    assert out.pod_conditions[0][3]["reason"] == "SchedulerError"
    assert out.binds == [("default", "a", "uid-default-a", "n1")]  # retried
    assert s.stats["attempts"] == 2


def test_bind_conflict_drops_the_pod():
    s, pod = schedule_one()
    s.on_bind_failed("default", "a", "uid-default-a", "pod a is already assigned", conflict=True, now=2.0)
    assert s.stats["bindConflicts"] == 1 and s.pending_count() == 0
    out = s.schedule(3.0)
    assert out.binds == [] and out.pod_conditions == []
    s.on_pod("MODIFIED", bound(pod, "n1"), 4.0)  # the real binding shows up
    assert int(s.cache.snapshot().pod_count[0]) == 1


def test_bind_failure_after_confirmation_is_ignored():
    s, pod = schedule_one()
    s.on_pod("MODIFIED", bound(pod, "n1"), 2.0)
    s.on_bind_failed("default", "a", "uid-default-a", "late", conflict=False, now=3.0)
    assert s.pending_count() == 0 and int(s.cache.snapshot().pod_count[0]) == 1


def test_bind_failure_wakes_pods_parked_behind_the_assumption():
    s, pod = schedule_one(node_cpu="1")
    s.on_pod("ADDED", make_pod("b").req(cpu="1"), 1.5)
    parked(s, now=1.5)
    s.on_bind_failed("default", "a", "uid-default-a", "boom", conflict=False, now=2.0)
    # Both back off: b's 1 s since it parked at 1.5, a's 1 s since its bind failed at 2.0.
    assert s.queue.backoff_count() == 2 and s.queue.unschedulable_count() == 0
    out = s.schedule(3.0)
    assert [b[1] for b in out.binds] == ["b"]


def test_unconfirmed_assumption_expires_and_the_pod_is_retried():
    s, pod = schedule_one(node_cpu="1")
    assert s.schedule(30.9).binds == []
    assert s.schedule(31.0).binds == []  # forgotten at its 30 s TTL, then backs off 1 s
    out = s.schedule(32.0)
    assert out.binds == [("default", "a", "uid-default-a", "n1")]


def test_confirmed_pod_is_not_retried():
    s, pod = schedule_one()
    s.on_pod("MODIFIED", bound(pod, "n1"), 2.0)
    assert s.schedule(100.0).binds == []


def test_pod_deleted_while_binding_releases_resources():
    s, pod = schedule_one()
    s.on_pod("DELETED", pod, 2.0)
    assert int(s.cache.snapshot().pod_count[0]) == 0
    s.on_bind_failed("default", "a", "uid-default-a", "not found", conflict=True, now=2.5)
    assert s.pending_count() == 0


def test_assumed_pods_count_within_one_schedule_call():
    ns = [make_node("n1", cpu="2", pods="3")]
    pods = [make_pod(f"p{i}").req(cpu="500m") for i in range(5)]
    s = make_scheduler(ns, pods)
    out = s.schedule(1.0)
    assert len(out.binds) == 3
    assert [e["message"] for e in out.events if e["reason"] == "FailedScheduling"] == [
        "0/1 nodes are available: 1 Too many pods."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    ] * 2


def test_max_pods_bounds_one_call():
    s = make_scheduler(nodes(3), [make_pod(f"p{i}").req(cpu="10m") for i in range(10)])
    assert len(s.schedule(1.0, max_pods=4).binds) == 4
    assert s.pending_count() == 6


def test_higher_priority_pod_is_scheduled_first():
    s = make_scheduler(
        [make_node("n1", cpu="1")], [make_pod("low").req(cpu="1").prio(1), make_pod("high").req(cpu="1").prio(100)]
    )
    out = s.schedule(1.0)
    assert [b[1] for b in out.binds] == ["high"]


def test_status_patches_merge_a_pods_condition_and_nomination():
    out = ScheduleOutput()
    out.pod_conditions += [
        ("d", "victim", "u1", {"type": "DisruptionTarget"}),
        ("d", "pre", "u2", {"type": "PodScheduled"}),
    ]
    out.nominations += [("d", "low", "u3", ""), ("d", "pre", "u2", "n1")]
    assert out.status_patches() == [
        ("d", "victim", "u1", [{"type": "DisruptionTarget"}], None),
        ("d", "pre", "u2", [{"type": "PodScheduled"}], "n1"),
        ("d", "low", "u3", [], ""),
    ]
