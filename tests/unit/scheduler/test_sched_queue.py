"""SchedulingQueue: order, unschedulable parking, event moves, the 5-minute flush."""
from __future__ import annotations

import pytest
from sched_builders import make_pod

from cluster.clock import FakeClock
from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import ClusterEvent
from cluster.scheduler.plugins.queuesort import PrioritySort
from cluster.scheduler.queue import SchedulingQueue, is_pod_updated

FIT = "NodeResourcesFit"
EVENT_MAP = {ClusterEvent.NODE_ADD: {FIT}, ClusterEvent.ASSIGNED_POD_DELETE: {FIT}}


@pytest.fixture
def clock():
    return FakeClock(100.0)


@pytest.fixture
def q():
    return SchedulingQueue(PrioritySort(), EVENT_MAP)


def info(pod):
    return Cache().new_pod_info(pod)


def drain(q):
    out = []
    while (qp := q.pop()) is not None:
        out.append(qp.pinfo.name)
    return out


@pytest.mark.parametrize("arrivals,expected", [
    ([("a", 0, 0.0), ("b", 10, 1.0), ("c", 5, 2.0)], ["b", "c", "a"]),
    ([("a", 0, 3.0), ("b", 0, 1.0), ("c", 0, 2.0)], ["b", "c", "a"]),
    ([("a", 0, 1.0), ("b", 0, 1.0), ("c", 0, 1.0)], ["a", "b", "c"]),  # equal keys: FIFO
    ([("a", -5, 0.0), ("b", 0, 9.0), ("c", 2000000000, 9.5)], ["c", "b", "a"]),
], ids=["priority first", "then timestamp", "then arrival order", "negative and system priorities"])
def test_active_queue_order(q, arrivals, expected):
    for name, prio, t in arrivals:
        q.add(info(make_pod(name).prio(prio)), t)
    assert drain(q) == expected


def test_pop_counts_attempts_and_cycles(q):
    q.add(info(make_pod("a")), 0.0)
    qp = q.pop()
    assert (qp.attempts, qp.initial_attempt_timestamp, q.scheduling_cycle) == (1, 0.0, 1)
    assert q.pop() is None


def test_priority_update_in_active_queue_reorders(q):
    qa = q.add(info(make_pod("a").prio(1)), 0.0)
    q.add(info(make_pod("b").prio(5)), 0.0)
    old = qa.pinfo.pod
    qa.pinfo.refresh(make_pod("a").prio(10), Cache().columns)
    q.update(qa, old, 1.0)
    assert drain(q) == ["a", "b"]
    assert len(q) == 0


def test_delete_from_each_sub_queue(q, clock):
    q.add(info(make_pod("a")), clock.now())
    qb = q.add(info(make_pod("b")), clock.now())
    assert q.pop() is not None and q.pop() is qb
    qb.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(qb, clock.now(), q.scheduling_cycle)
    q.add(info(make_pod("c")), clock.now())
    assert q.delete("uid-default-b") is qb
    assert q.delete("uid-default-c") is not None
    assert q.delete("uid-default-zz") is None
    assert len(q) == 0 and q.pop() is None


def park(q, name, now, plugins=(FIT,)):
    q.add(info(make_pod(name)), now)
    qp = q.pop()
    qp.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qp, now, q.scheduling_cycle)
    return qp


@pytest.mark.parametrize("event,plugins,moves", [
    (ClusterEvent.NODE_ADD, (FIT,), True),
    (ClusterEvent.ASSIGNED_POD_DELETE, (FIT,), True),
    (ClusterEvent.NODE_LABEL, (FIT,), False),  # not in this test's event map
    (ClusterEvent.NODE_ADD, ("SomeOtherPlugin",), False),
    (ClusterEvent.NODE_LABEL, (), True),  # no rejector (e.g. no nodes at all): every event
    (ClusterEvent.WILDCARD, (FIT,), True),
])
def test_move_on_event(q, clock, event, plugins, moves):
    park(q, "a", clock.now(), plugins)
    assert q.unschedulable_count() == 1
    assert q.move_all_to_active(event, clock.now()) == int(moves)
    assert (q.active_count(), q.unschedulable_count()) == ((1, 0) if moves else (0, 1))
    assert len(q) == 1


def test_move_pre_check(q, clock):
    park(q, "a", clock.now())
    park(q, "b", clock.now())
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now(), pre_check=lambda qp: qp.pinfo.name != "a")
    assert drain(q) == ["b"] and q.unschedulable_count() == 1


def test_flush_after_five_minutes(q, clock):
    park(q, "a", clock.now())
    clock.advance(60)
    park(q, "b", clock.now())
    clock.advance(240)  # a has waited exactly 300 s: not yet (strictly longer, as upstream)
    assert q.flush(clock.now()) == 0
    clock.advance(0.5)
    assert q.flush(clock.now()) == 1 and drain(q) == ["a"]
    clock.advance(60)
    assert q.flush(clock.now()) == 1 and drain(q) == ["b"]


def test_moved_pods_keep_their_failure_timestamp_order(q, clock):
    park(q, "late", clock.now() + 5)
    park(q, "early", clock.now())
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now() + 10)
    assert drain(q) == ["early", "late"]


def test_status_only_update_keeps_pod_parked(q, clock):
    qp = park(q, "a", clock.now())
    old = qp.pinfo.pod
    new = make_pod("a")
    new["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    new["metadata"]["resourceVersion"] = "42"
    qp.pinfo.refresh(new, Cache().columns)
    q.update(qp, old, clock.now())
    assert q.in_unschedulable(qp.uid)


def test_spec_update_moves_parked_pod(q, clock):
    qp = park(q, "a", clock.now())
    old = qp.pinfo.pod
    qp.pinfo.refresh(make_pod("a").req(cpu="1"), Cache().columns)
    q.update(qp, old, clock.now())
    assert q.in_active(qp.uid)


@pytest.mark.parametrize("change,updated", [
    (lambda p: p["status"].update(phase="Running"), False),
    (lambda p: p["metadata"].update(resourceVersion="9", generation=3, finalizers=["x"]), False),
    (lambda p: p["metadata"].update(labels={"a": "b"}), True),
    (lambda p: p["spec"].update(priority=3), True),
])
def test_is_pod_updated(change, updated):
    old = make_pod("a")
    new = old.copy_()
    change(new)
    assert is_pod_updated(old, new) == updated


def test_requeue_after_error_waits_for_the_next_flush(q, clock):
    q.add(info(make_pod("a")), clock.now())
    qp = q.pop()
    q.requeue_after_error(qp, clock.now())
    assert q.pop() is None and len(q) == 1  # not retried inside the same schedule() call
    q.flush(clock.now())
    assert q.pop() is qp


def test_move_during_cycle_retries_instead_of_parking(q, clock):
    q.add(info(make_pod("a")), clock.now())
    qp = q.pop()
    cycle = q.scheduling_cycle
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now())  # arrives while "a" is in flight
    qp.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(qp, clock.now(), cycle)
    assert q.unschedulable_count() == 0
    q.flush(clock.now())
    assert q.pop() is qp


def test_add_unschedulable_ignores_pods_already_queued(q, clock):
    qp = q.add(info(make_pod("a")), clock.now())
    q.add_unschedulable_if_not_present(qp, clock.now(), 0)
    assert (q.active_count(), q.unschedulable_count()) == (1, 0)
