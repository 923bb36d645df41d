"""A stepped cluster's coordinator without Ray (``cluster/runtime/coordinator.py`` over
``stepper.py``): its own watch and the driver's, what an answer means, patience with a slow
instant, heartbeat stretches and jumps, restarts and commands. Keys are as ``RayCluster``
gives them: a control-plane role, or a host's index."""

import pytest

from cluster.clock import Clock, ClockSpec
from cluster.runtime.cluster import Fleet
from cluster.runtime.component import ComponentSpec, WatchEvent
from cluster.runtime.coordinator import LOOK, START_CLOCK, STAY, Coordinator
from cluster.runtime.stepper import GONE, NOT_RUNNING, Answer, Stepper


def idle(wake=None, change=None, writes=0, seen=0) -> Answer:
    return Answer(True, seen, wake, change, writes)


class Wall:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def coordinator(pace=None, wall=None, hosts=2) -> Coordinator:
    fleet = Fleet()
    for i in range(hosts):
        fleet.add_host(ComponentSpec(f"host-{i}", dict, nodes=(f"n{i}a", f"n{i}b")))
    clock = Clock(ClockSpec(1.0), lambda: 0.0)
    clock.hold(10.0)
    return Coordinator(Stepper(pace, wall or Wall()), clock, fleet)


def event(kind: str) -> WatchEvent:
    return WatchEvent(kind, "ADDED", {"kind": kind, "metadata": {"name": "x"}})


# -- the coordinator's watch and the driver's ----------------------------------------------------
def test_its_watch_covers_the_driver_and_every_component_and_is_rebuilt_only_for_a_new_kind():
    co = coordinator()
    co.stepper.watching("scheduler", [])
    co.stepper.watching("controller-manager", [])
    co.stepper._watching["Pod"] = [("scheduler", None)]
    co.dirty = False
    assert co.cover(["Node"], None) == ["Node", "Pod"] and co.dirty
    co.dirty = False
    assert co.cover(["Node"], ["Node", "Pod"]) is None and not co.dirty
    assert co.cover(["Lease"], ["Node", "Pod"]) == ["Lease", "Pod"] and co.dirty
    assert co.driver_kinds == {"Lease"}


def test_the_driver_is_behind_only_after_a_look_that_saw_its_kinds():
    co = coordinator()
    co.cover(["Pod"], None)
    trail = [co.driver_due(), co.driver_due()]  # behind at first: it has never taken anything
    co.looked(7, [event("Node")])
    trail += [co.rv, co.dirty, co.driver_due()]
    co.wrote()
    co.looked(9, [event("Node"), event("Pod")])
    trail += [co.rv, co.driver_due(), co.driver_due()]
    assert trail == [True, False, 7, False, False, 9, True, False]


# -- asking ------------------------------------------------------------------------------------
def test_what_an_answer_means():
    co = coordinator()
    assert co.answered("scheduler", idle(writes=0)) == STAY
    assert co.answered("scheduler", idle(writes=2)) == LOOK  # it wrote since: the coordinator looks
    assert co.answered("scheduler", idle(writes=2)) == STAY
    assert co.answered(0, NOT_RUNNING) == START_CLOCK and 0 not in co.stepper.answers
    assert co.round(["scheduler", 0, 1]) == [0, 1] and co.stepper.rounds == 1
    co.answered(0, idle())
    co.answered(1, idle())
    assert co.round(["scheduler", 0, 1]) == [] and co.stepper.rounds == 1  # no round counted


def test_a_component_gone_for_good_never_holds_an_instant_up():
    co = coordinator()
    co.stepper.need[1] = 500
    assert co.gone(1, "ActorDiedError") == "kubemu: host of n1a is gone (ActorDiedError); the clock goes on without it"
    assert co.stepper.answers[1] == GONE and co.round([1]) == []
    assert co.stepper.next_time([1], 10.0, None) is None and co.quiet([1], 10.0, 10.0)


def test_a_slow_instant_is_noted_every_so_often_and_given_up_on_at_last():
    co = coordinator()
    co.stepper.need["scheduler"] = 4
    co.answered("controller-manager", idle())
    co.answered("scheduler", Answer(False, 3, 12.0, None))
    keys = ["controller-manager", "scheduler", 0]
    p = co.patience(1000.0)
    notes = [co.overdue(p, wall, 10.0, keys) for wall in (1010.0, 1015.0, 1020.0, 1030.0, 1119.0, 1134.0)]
    assert notes == [
        None,
        ("kubemu: at 10.0s waiting for scheduler, host of n0a (15s real so far)", False),
        None,
        ("kubemu: at 10.0s waiting for scheduler, host of n0a (30s real so far)", False),
        ("kubemu: at 10.0s waiting for scheduler, host of n0a (119s real so far)", False),
        ("kubemu: at 10.0s scheduler, host of n0a not done after 134s real; moving on", True),
    ]
    assert co.stepper.forced == 1 and co.round(keys) == []  # done with what they last said
    assert co.stepper.answers["scheduler"] == Answer(True, 3, 12.0, None)


# -- moving on -----------------------------------------------------------------------------------
def test_no_stretch_while_the_driver_watches_leases():
    co = coordinator()
    for key in ("scheduler", 0, 1):
        co.answered(key, idle(wake=40.0 if key != "scheduler" else None))
    co.cover(["Pod"], None)
    assert co.stretch(["scheduler", 0, 1], 10.0, 100.0) == (100.0, [0, 1])
    co.cover(["Pod", "Lease"], None)
    assert co.stretch(["scheduler", 0, 1], 10.0, 100.0) is None


def test_after_a_stretch_the_clock_stands_at_the_last_instant_run_and_spills_are_counted():
    co = coordinator()
    co.answered("scheduler", idle(wake=90.0))
    co.answered(0, idle(wake=50.0))  # stopped short at 40: due again at 50
    co.answered(1, idle(wake=80.0))
    assert co.stretched([0, 1], [40.0, 70.0], 10.0, ["scheduler", 0, 1])
    assert co.clock.now() == 70.0 and (co.stepper.stretches, co.stepper.spills, co.stepper.steps) == (1, 1, 1)
    assert sorted(co.stepper.answers, key=str) == [1, "scheduler"]  # host 0 is due by 70: asked again


def test_a_stretch_nobody_ran_is_no_stretch():
    co = coordinator()
    co.answered(0, idle(wake=50.0))
    assert not co.stretched([0], [None], 10.0, [0]) and not co.stretched([0], [10.0], 10.0, [0])
    assert co.clock.now() == 10.0 and co.stepper.stretches == 0 and co.stepper.steps == 0


def test_a_jump_goes_to_the_next_wakeup_and_asks_whoever_is_due_there():
    co = coordinator()
    co.answered("scheduler", idle(wake=30.0))
    co.answered(0, idle(wake=25.0))
    co.answered(1, idle(wake=None))
    assert co.jump(["scheduler", 0, 1], 10.0, 60.0) is None
    assert co.clock.now() == 25.0 and sorted(co.stepper.answers, key=str) == [1, "scheduler"]
    assert co.jump([1], 25.0, None) is None and co.clock.now() == 25.0  # nowhere to go
    assert co.stepper.steps == 1


def test_a_paced_jump_waits_for_the_wall_clock_first():
    wall = Wall()
    co = coordinator(pace=2.0, wall=wall)
    co.answered("scheduler", idle(wake=11.0))
    assert co.jump(["scheduler"], 10.0, None) == pytest.approx(0.25)  # at most a quarter second at once
    wall.t += 0.4  # the wall says emulated 10.8
    assert co.jump(["scheduler"], 10.0, None) == pytest.approx(0.1)
    wall.t += 0.1
    assert co.jump(["scheduler"], 10.0, None) is None and co.clock.now() == 11.0


# -- restarts and commands ---------------------------------------------------------------------
def test_restarts_and_commands_say_whom_to_ask_again():
    co = coordinator()
    for key in ("scheduler", 0, 1):
        co.answered(key, idle())
    co.dirty = False
    assert co.key_of("apiserver", None) is None
    assert co.key_of("host", "n1b") == 1 and co.key_of("scheduler", None) == "scheduler"
    co.told("n0b")
    assert 0 not in co.stepper.answers and not co.dirty  # it writes in response: waited for
    co.restarted("scheduler")
    assert sorted(co.stepper.answers, key=str) == [1] and co.dirty
    co.restarted(None)  # the apiserver: every watch relists
    assert co.stepper.answers == {}


def test_quiet_and_report():
    co = coordinator()
    co.answered("scheduler", idle(change=25.0))
    assert not co.quiet(["scheduler"], 15.0, 10.0) and co.quiet(["scheduler"], 14.5, 10.0)
    assert co.report() == {"mode": "stepped", "steps": 0, "rounds": 0}
