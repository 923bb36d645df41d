"""SchedulingQueue: order, backoff, unschedulable parking, event moves, the 5-minute flush."""

from __future__ import annotations

import math

import pytest
from sched_builders import make_pod

from cluster.clock import FakeClock
from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import ClusterEvent
from cluster.scheduler.plugins.queuesort import PrioritySort
from cluster.scheduler.queue import SchedulingQueue, backoff_duration, is_pod_updated
from cluster.scheduler.status import SUCCESS, Code, Status

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


@pytest.mark.parametrize(
    "arrivals,expected",
    [
        ([("a", 0, 0.0), ("b", 10, 1.0), ("c", 5, 2.0)], ["b", "c", "a"]),
        ([("a", 0, 3.0), ("b", 0, 1.0), ("c", 0, 2.0)], ["b", "c", "a"]),
        ([("a", 0, 1.0), ("b", 0, 1.0), ("c", 0, 1.0)], ["a", "b", "c"]),  # equal keys: FIFO
        ([("a", -5, 0.0), ("b", 0, 9.0), ("c", 2000000000, 9.5)], ["c", "b", "a"]),
    ],
    ids=["priority first", "then timestamp", "then arrival order", "negative and system priorities"],
)
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


def park(q, name, now, plugins=(FIT,), priority=None):
    pod = make_pod(name) if priority is None else make_pod(name).prio(priority)
    q.add(info(pod), now)
    qp = q.pop()
    qp.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qp, now, q.scheduling_cycle)
    return qp


@pytest.mark.parametrize(
    "event,plugins,moves",
    [
        (ClusterEvent.NODE_ADD, (FIT,), True),
        (ClusterEvent.ASSIGNED_POD_DELETE, (FIT,), True),
        (ClusterEvent.NODE_LABEL, (FIT,), False),  # not in this test's event map
        (ClusterEvent.NODE_ADD, ("SomeOtherPlugin",), False),
        (ClusterEvent.WILDCARD, (FIT,), True),
    ],
)
def test_move_on_event(q, clock, event, plugins, moves):
    park(q, "a", clock.now(), plugins)
    assert q.unschedulable_count() == 1
    assert q.move_all_to_active(event, clock.now() + 10) == int(moves)  # after its backoff
    assert (q.active_count(), q.unschedulable_count()) == ((1, 0) if moves else (0, 1))
    assert len(q) == 1


def test_move_pre_check(q, clock):
    park(q, "a", clock.now())
    park(q, "b", clock.now())
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now() + 10, pre_check=lambda qp: qp.pinfo.name != "a")
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
    q.update(qp, old, clock.now() + 10)
    assert q.in_active(qp.uid)


@pytest.mark.parametrize(
    "change,updated",
    [
        (lambda p: p["status"].update(phase="Running"), False),
        (lambda p: p["metadata"].update(resourceVersion="9", generation=3, finalizers=["x"]), False),
        (lambda p: p["metadata"].update(labels={"a": "b"}), True),
        (lambda p: p["spec"].update(priority=3), True),
    ],
)
def test_is_pod_updated(change, updated):
    old = make_pod("a")
    new = old.copy_()
    change(new)
    assert is_pod_updated(old, new) == updated


def test_requeue_after_error_backs_off(q, clock):
    q.add(info(make_pod("a")), clock.now())
    qp = q.pop()
    q.requeue_after_error(qp, clock.now())
    assert q.pop() is None and q.in_backoff(qp.uid)
    assert q.next_wakeup() == clock.now() + 1.0
    clock.advance(0.999)
    assert q.flush(clock.now()) == 0
    clock.advance(0.001)
    assert q.flush(clock.now()) == 1 and q.pop() is qp


def test_move_during_cycle_backs_off_instead_of_parking(q, clock):
    q.add(info(make_pod("a")), clock.now())
    qp = q.pop()
    cycle = q.scheduling_cycle
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now())  # arrives while "a" is in flight
    qp.unschedulable_plugins = {FIT}
    q.add_unschedulable_if_not_present(qp, clock.now(), cycle)
    assert q.unschedulable_count() == 0 and q.in_backoff(qp.uid)
    clock.advance(1)
    q.flush(clock.now())
    assert q.pop() is qp


def test_failure_without_rejector_backs_off(q, clock):
    """No plugin rejected the pod (e.g. no nodes at all): backoffQ, not unschedulablePods."""
    park(q, "a", clock.now(), plugins=())
    assert (q.unschedulable_count(), q.backoff_count()) == (0, 1)


@pytest.mark.parametrize("attempts,expected", [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (30, 10)])
def test_backoff_duration(attempts, expected):
    assert backoff_duration(attempts, 1.0, 10.0) == expected


@pytest.mark.parametrize(
    "initial,maximum,expected",
    [
        (2.0, 10.0, [2, 4, 8, 10, 10]),
        (1.0, 1.0, [1, 1, 1, 1, 1]),
        (0.5, 3.0, [0.5, 1, 2, 3, 3]),
    ],
)
def test_backoff_duration_configured(initial, maximum, expected):
    assert [backoff_duration(a, initial, maximum) for a in range(1, 6)] == expected


def test_error_retries_follow_the_backoff_sequence(clock):
    """A pod failing with an error every cycle is retried after 1, 2, 4, 8, 10, 10 s."""
    q = SchedulingQueue(PrioritySort(), EVENT_MAP)
    q.add(info(make_pod("a")), clock.now())
    gaps, last = [], None
    for _ in range(7):
        qp = q.pop()
        while qp is None:
            clock.set(q.next_wakeup())
            q.flush(clock.now())
            qp = q.pop()
        if last is not None:
            gaps.append(clock.now() - last)
        last = clock.now()
        q.requeue_after_error(qp, clock.now())
    assert gaps == [1, 2, 4, 8, 10, 10]


def test_event_move_respects_remaining_backoff(clock):
    q = SchedulingQueue(PrioritySort(), EVENT_MAP, pop_from_backoff=False)
    qp = park(q, "a", clock.now())
    assert qp.attempts == 1
    clock.advance(0.5)  # 1 s backoff not over
    assert q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now()) == 1
    assert q.in_backoff(qp.uid) and q.pop() is None
    clock.advance(0.5)
    q.flush(clock.now())
    assert q.pop() is qp


def test_empty_activeq_pops_a_rejected_pod_still_backing_off(q, clock):
    qp = park(q, "a", clock.now())
    clock.advance(0.5)
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now())
    assert q.in_backoff(qp.uid) and q.has_ready()
    assert q.pop() is qp and qp.attempts == 2 and not q.has_ready()


def test_backoffq_pops_by_expiry_then_priority(q, clock):
    low, high = park(q, "low", clock.now()), park(q, "high", clock.now(), priority=100)
    later = park(q, "later", clock.now() + 0.2, priority=1000)
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now() + 0.3)
    assert [q.pop(), q.pop(), q.pop()] == [high, low, later]


def test_error_backoff_is_never_cut_short(q, clock):
    qp = q.add(info(make_pod("a")), clock.now())
    assert q.pop() is qp
    q.requeue_after_error(qp, clock.now())
    assert q.in_backoff(qp.uid) and not q.has_ready() and q.pop() is None
    clock.advance(1.0)
    q.flush(clock.now())
    assert q.pop() is qp


def test_event_move_after_backoff_goes_straight_to_active(q, clock):
    qp = park(q, "a", clock.now())
    clock.advance(5)
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now())
    assert q.in_active(qp.uid)


def test_next_wakeup_includes_the_leftover_flush(q, clock):
    assert q.next_wakeup() is None
    qp = park(q, "a", clock.now())
    wake = q.next_wakeup()
    assert wake == math.nextafter(clock.now() + 300, math.inf)  # the first instant past the limit
    assert q.flush(clock.now() + 300) == 0 and q.flush(wake) == 1 and not q.in_unschedulable(qp.uid)


def test_delete_from_backoff(q, clock):
    park(q, "a", clock.now(), plugins=())
    assert q.delete("uid-default-a") is not None
    assert len(q) == 0 and q.next_wakeup() is None


def test_add_unschedulable_ignores_pods_already_queued(q, clock):
    qp = q.add(info(make_pod("a")), clock.now())
    q.add_unschedulable_if_not_present(qp, clock.now(), 0)
    assert (q.active_count(), q.unschedulable_count()) == (1, 0)


def test_deleted_parked_pod_is_not_moved_by_a_later_event(q, clock):
    park(q, "a", clock.now())
    park(q, "b", clock.now())
    assert q.delete("uid-default-a") is not None
    assert q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now() + 10) == 1
    assert drain(q) == ["b"] and len(q) == 0


def test_event_moves_only_pods_whose_rejector_registered_for_it(clock):
    q = SchedulingQueue(PrioritySort(), {ClusterEvent.NODE_ADD: {FIT, "Other"}, ClusterEvent.NODE_LABEL: {"Other"}})
    park(q, "fit", clock.now(), plugins=(FIT,))
    park(q, "other", clock.now(), plugins=("Other",))
    park(q, "both", clock.now(), plugins=(FIT, "Other"))
    assert q.move_all_to_active(ClusterEvent.NODE_LABEL, clock.now() + 10) == 2
    assert drain(q) == ["other", "both"]
    assert q.move_all_to_active(ClusterEvent.ASSIGNED_POD_ADD, clock.now() + 10) == 0
    assert q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now() + 10) == 1
    assert drain(q) == ["fit"]


def test_a_move_into_activeq_goes_through_preenqueue_and_activate_lets_it_in(clock):
    blocked = {"uid-default-a"}
    q = SchedulingQueue(
        PrioritySort(),
        EVENT_MAP,
        pre_enqueue=lambda pinfo: (
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting",), "Gate") if pinfo.uid in blocked else SUCCESS
        ),
    )
    blocked.clear()
    qp = park(q, "a", clock.now())
    blocked.add(qp.uid)
    clock.advance(5)  # past its backoff: the move goes straight for activeQ
    q.move_all_to_active(ClusterEvent.NODE_ADD, clock.now())
    assert q.is_gated(qp.uid) and q.pop() is None
    assert qp.unschedulable_plugins == {"Gate"}
    assert not q.activate(qp.uid, clock.now())  # still refused
    blocked.clear()
    assert q.activate(qp.uid, clock.now()) and q.pop() is qp
