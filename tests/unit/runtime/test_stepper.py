"""The coordinator's decisions in a stepped run (``cluster/runtime/stepper.py``) and the
held clock they move (``cluster/clock.py``): which components are asked, when an instant is
done, where time jumps, the pace, and what the report says."""

import pytest

from cluster.api.codec import encode
from cluster.api.requests import Watch
from cluster.clock import Clock, ClockSpec, save_held, saved_held
from cluster.runtime.component import WatchEvent
from cluster.runtime.stepper import Answer, Stepper


def idle(wake=None, change=None, writes=0) -> Answer:
    return Answer(True, 0, wake, change, writes)


def pod_event(node: str) -> WatchEvent:
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {"nodeName": node}}
    return WatchEvent("Pod", "MODIFIED", pod, encode(pod))


def event(kind: str, name: str = "x") -> WatchEvent:
    return WatchEvent(kind, "ADDED", {"kind": kind, "metadata": {"name": name}})


class Wall:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


# -- the held clock -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("steps", "now", "started"),
    [
        ([], 0.0, False),  # not started: 0
        ([("hold", 5.0)], 5.0, True),
        ([("hold", 5.0), ("hold", 3.0)], 5.0, True),  # never backwards
        ([("hold", 5.0), ("hold", 9.5)], 9.5, True),
        ([("apply", ClockSpec(1.0, None, 7.0))], 7.0, True),
        ([("apply", ClockSpec(1.0, None, None))], 0.0, False),  # nothing to take
    ],
)
def test_a_held_clock_stands_where_it_was_moved_and_never_goes_back(steps, now, started):
    clock = Clock(ClockSpec(2.0), lambda: 1000.0)
    for what, arg in steps:
        getattr(clock, what)(arg)
    assert (clock.now(), clock.started) == (now, started)


def test_a_held_clock_never_moves_by_itself_and_a_running_one_does():
    real = [50.0]
    clock = Clock(ClockSpec(10.0), lambda: real[0])
    clock.apply(ClockSpec(10.0, 40.0))  # running since real 40: emulated 100
    assert clock.now() == 100.0 and clock.real_delay(20.0) == 2.0 and not clock.held
    clock.hold(250.0)
    real[0] = 99.0
    assert clock.now() == 250.0 and clock.held and clock.real_delay(1.0) == float("inf")


def test_the_held_instant_is_kept_beside_the_log_and_read_back(tmp_path):
    assert saved_held(str(tmp_path)) is None
    save_held(str(tmp_path), 42.5)
    save_held(str(tmp_path), 43.0)
    assert saved_held(str(tmp_path)) == 43.0
    (tmp_path / "clock-held.json").write_text("{not json")
    assert saved_held(str(tmp_path)) is None  # unreadable: the coordinator tells it again


# -- asking and settling ---------------------------------------------------------------------
def test_only_components_without_an_idle_answer_are_asked():
    s = Stepper()
    s.record("scheduler", idle())
    s.record("controller-manager", Answer(False, 0, None, None))
    assert s.to_ask(["scheduler", "controller-manager", 0]) == ["controller-manager", 0]


@pytest.mark.parametrize(
    ("events", "concerned"),
    [
        ([event("Lease")], {"controller-manager"}),
        ([pod_event("n1")], {"scheduler", "controller-manager", 0}),  # host 0 runs n1
        ([pod_event("n3")], {"scheduler", "controller-manager", 1}),
        ([pod_event("")], {"scheduler", "controller-manager"}),  # unbound: no host selects it
        ([event("Node", "n2")], {"controller-manager", 0}),
        ([event("ConfigMap")], set()),  # nobody watches it
        ([], set()),
    ],
)
def test_a_write_concerns_the_components_whose_watches_select_it(events, concerned):
    s = Stepper()
    s.watching("scheduler", [Watch("Pod", heads=True)])
    s.watching("controller-manager", [Watch("Pod"), Watch("Node"), Watch("Lease")])
    s.watching(0, [Watch("Node", frozenset({"n1", "n2"})), Watch("Pod", frozenset({"n1", "n2"}))])
    s.watching(1, [Watch("Node", frozenset({"n3"})), Watch("Pod", frozenset({"n3"}))])
    assert s.concerned(events) == concerned
    assert s.kinds() == ["Lease", "Node", "Pod"]


def test_watching_again_replaces_what_a_component_watched():
    s = Stepper()
    s.watching(0, [Watch("Pod", frozenset({"a"}))])
    s.watching(0, [Watch("Pod", frozenset({"b"}))])
    assert s.concerned([pod_event("a")]) == set() and s.concerned([pod_event("b")]) == {0}


def test_the_components_a_write_concerns_are_asked_again_and_must_have_seen_it():
    s = Stepper()
    s.watching("controller-manager", [Watch("Lease")])
    s.watching("scheduler", [Watch("Pod")])
    s.record("controller-manager", idle())
    s.record("scheduler", idle())
    s.polled(17, [event("Lease")])
    assert s.to_ask(["controller-manager", "scheduler"]) == ["controller-manager"]
    assert s.need == {"controller-manager": 17}


def test_an_answer_says_whether_the_component_wrote_since_its_last_one():
    s = Stepper()
    assert s.record("scheduler", idle(writes=0)) is False
    assert s.record("scheduler", idle(writes=2)) is True
    assert s.record("scheduler", idle(writes=2)) is False
    s.forget("scheduler")  # a restart: its counter starts again
    assert s.record("scheduler", idle(writes=0)) is True


def test_giving_up_an_instant_counts_it_and_lets_time_go_on():
    s = Stepper()
    s.record("scheduler", Answer(False, 3, 5.0, 5.0))
    s.give_up(["scheduler", "host"])
    assert s.to_ask(["scheduler", "host"]) == [] and s.forced == 1
    assert s.report(5.0)["forcedSteps"] == 1


# -- moving on ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("wakes", "until", "next_time"),
    [
        ([10.0, 20.0], 30.0, 10.0),
        ([None, 20.0], 15.0, 15.0),
        ([None, None], 15.0, 15.0),
        ([None], None, None),
        ([3.0, 12.0], 30.0, 12.0),  # a wakeup already past (a component given up on) is no target
    ],
)
def test_time_jumps_to_the_earliest_wakeup_or_the_drivers_next_time(wakes, until, next_time):
    s = Stepper()
    for i, w in enumerate(wakes):
        s.record(i, idle(wake=w))
    assert s.next_time(range(len(wakes)), 5.0, until) == next_time


def test_a_dead_components_answer_does_not_hold_time():
    s = Stepper()
    s.record("live", idle(wake=50.0))
    s.record("dead", idle(wake=6.0))
    assert s.next_time(["live"], 5.0, 100.0) == 50.0


@pytest.mark.parametrize(
    ("changes", "quiet"),
    [
        ([None, None], True),
        ([None, 30.0], True),  # beyond the horizon
        ([None, 14.0], False),
        ([None, "busy"], False),
    ],
)
def test_the_cluster_is_quiet_when_nobody_changes_anything_within_the_horizon(changes, quiet):
    s = Stepper()
    for i, c in enumerate(changes):
        s.record(i, Answer(False, 0, None, None) if c == "busy" else idle(change=c))
    assert s.quiet(range(len(changes)), 5.0, 10.0) is quiet


def test_without_a_pace_time_jumps_at_once():
    s = Stepper(wall=Wall())
    assert s.paced(0.0, 500.0) == (500.0, 0.0)
    assert s.report(500.0) == {"mode": "stepped", "steps": 0, "rounds": 0}


def test_a_paced_clock_waits_for_the_wall_and_reports_its_lag():
    wall = Wall()
    s = Stepper(pace=10.0, wall=wall)
    assert s.paced(0.0, 5.0) == (None, 0.25)  # 5 s ahead of the wall at 10x: wait (at most 0.25 s)
    wall.t += 0.5  # the wall says 5 s now
    assert s.paced(0.0, 5.0) == (5.0, 0.0)
    s.jumped()
    wall.t += 3.0  # a slow instant: the wall says 35 s, the next wakeup was at 10 s
    assert s.paced(5.0, 10.0) == (10.0, 0.0)
    s.jumped()
    report = s.report(10.0)
    assert report["mode"] == "paced" and report["timeScale"] == 10.0 and report["steps"] == 2
    assert report["maxLagSeconds"] == 25.0
    assert report["achievedScale"] == pytest.approx(10.0 / 3.5, abs=0.01)


def test_a_pace_must_be_positive():
    with pytest.raises(ValueError, match=r"^timeScale: 0 must be positive$"):
        Stepper(pace=0)


# -- heartbeat stretches --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hosts", "others", "until", "plan"),
    [
        # hosts renew every 10 s, the controller manager's next grace expiry bounds the stretch
        ({0: idle(wake=20.0)}, {"cm": idle(wake=50.0, change=50.0)}, 100.0, (50.0, [0])),
        ({0: idle(wake=20.0)}, {"cm": idle(wake=50.0)}, 35.0, (35.0, [0])),  # the driver's next time
        ({0: idle(wake=20.0, change=30.0)}, {"cm": idle(wake=50.0)}, 100.0, (30.0, [0])),  # a pod ends at 30
        ({0: idle(wake=20.0), 1: idle(wake=25.0)}, {"cm": idle()}, 100.0, (100.0, [0, 1])),
        ({0: idle(wake=20.0), 1: idle(wake=60.0)}, {"cm": idle(wake=50.0)}, 100.0, (50.0, [0])),
        ({0: idle(wake=60.0)}, {"cm": idle(wake=50.0)}, 100.0, None),  # the controller manager is first
        ({0: idle(wake=20.0, change=20.0)}, {"cm": idle()}, 100.0, None),  # foreground work first
        ({0: idle()}, {"cm": idle(wake=50.0)}, 100.0, None),  # no heartbeats
        ({0: idle(wake=20.0)}, {"cm": Answer(False, 0, 50.0, 50.0)}, 100.0, None),  # not done with now
        ({0: idle(wake=20.0)}, {"cm": idle(wake=5.0)}, 100.0, None),  # given up on: due already
    ],
)
def test_hosts_run_heartbeats_ahead_until_anything_else_may_happen(hosts, others, until, plan):
    s = Stepper()
    for key, answer in [*hosts.items(), *others.items()]:
        s.record(key, answer)
    assert s.stretch(list(hosts), list(others), 10.0, until) == plan


def test_a_host_not_asked_yet_or_a_paced_run_has_no_stretch():
    s = Stepper()
    s.record("cm", idle(wake=50.0))
    assert s.stretch([0], ["cm"], 10.0, 100.0) is None
    paced = Stepper(pace=5.0)
    paced.record(0, idle(wake=20.0))
    assert paced.stretch([0], [], 10.0, 100.0) is None


def test_the_report_counts_stretches_and_spills():
    s = Stepper()
    s.stretches, s.spills = 3, 1
    assert s.report(0.0) == {"mode": "stepped", "steps": 0, "rounds": 0, "stretches": 3, "stretchSpills": 1}


def test_an_answer_that_already_saw_the_write_stands_when_the_coordinator_looks():
    s = Stepper()
    s.watching("controller-manager", [Watch("Lease")])
    s.watching("gc", [Watch("Lease")])
    s.record("controller-manager", Answer(True, 20, None, None))  # asked while the coordinator looked
    s.record("gc", Answer(True, 12, None, None))
    s.polled(17, [event("Lease")])
    assert s.to_ask(["controller-manager", "gc"]) == ["gc"]
    s.record("gc", Answer(True, 15, None, None))  # a late answer that had not seen it all
    assert s.to_ask(["controller-manager", "gc"]) == ["gc"]
    assert s.watchers("Lease") == ["controller-manager", "gc"] and s.watchers("Pod") == []


def test_giving_up_also_forgets_what_a_component_had_to_see():
    s = Stepper()
    s.watching("controller-manager", [Watch("Lease")])
    s.polled(17, [event("Lease")])
    s.give_up(["controller-manager"])
    assert s.to_ask(["controller-manager"]) == []
