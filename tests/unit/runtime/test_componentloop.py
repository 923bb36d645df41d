"""The Ray component shell's decisions without Ray (``cluster/runtime/componentloop.py``, with
``turns.py`` and ``inflight.py``): the batches a component gets, what the loop does when it
wakes, how long its watch may block, a fault, a heartbeat stretch, and what it answers a
stepped cluster's coordinator. A scripted component records every batch it is handed."""

import concurrent.futures

import pytest

from cluster.api.errors import Conflict, NotFound
from cluster.api.requests import Bind, Create, Patch
from cluster.clock import Clock, ClockSpec
from cluster.runtime.commands import KillNode
from cluster.runtime.component import RESTART, START, Batch, CommandError, Component, ComponentSpec, Result
from cluster.runtime.componentloop import (
    IDLE_WAIT,
    LOOK_AGAIN,
    REPLY_WAIT,
    TURN_EMPTY,
    TURN_EVENTS,
    ComponentLoop,
    heartbeat,
)
from cluster.runtime.turns import due, quiet_after, wants_turn

LEASE = Patch("Lease", "kube-node-lease", "n1", "", None)  # type: ignore[arg-type]
CREATE = Create({"kind": "Pod", "metadata": {"name": "p"}})

SCRIPTS: dict[str, list] = {}  # script name -> what each reconcile returns (or raises), in order
TRACES: dict[str, list] = {}  # script name -> (instance, now, events, failures, boot) per batch


class Scripted(Component):
    """Returns (or raises) the script's next item; records each batch."""

    instances = 0

    def __init__(self, script: str):
        Scripted.instances += 1
        self.instance, self.script = Scripted.instances, script

    def watches(self):
        return []

    def reconcile(self, batch: Batch) -> Result:
        TRACES[self.script].append(
            (self.instance, batch.now, len(batch.events), [f.error.reason for f in batch.failures], batch.boot)
        )
        item = SCRIPTS[self.script].pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def handle(self, command, now):
        if command.node != "n1":
            raise CommandError(f"node: {command.node!r} is not one of this host's")
        return f"killed at {now}"

    def inspect(self, now):
        return {"now": now, "errors": ["disk full"] if now > 100 else []}


def loop(script: list, boot: str = START, held: float | None = 0.0, wall: list | None = None) -> ComponentLoop:
    name = f"s{len(SCRIPTS)}"
    SCRIPTS[name], TRACES[name] = list(script), []
    source = wall or [1000.0]
    clock = Clock(ClockSpec(1.0), lambda: source[0])
    if held is None:
        clock.start(source[0])  # running: emulated 0 at the wall's start
    else:
        clock.hold(held)
    return ComponentLoop(ComponentSpec(name, Scripted, {"script": name}), clock, boot)


def trace(lp: ComponentLoop) -> list:
    return TRACES[lp.spec.name]


def reply(result=None, error: Exception | None = None) -> concurrent.futures.Future:
    fut: concurrent.futures.Future = concurrent.futures.Future()
    if error is not None:
        fut.set_exception(error)
    elif result is not None:
        fut.set_result(result)
    return fut


# -- the rules both runtimes share (turns.py) ----------------------------------------------
@pytest.mark.parametrize(
    ("events", "failures", "boot", "is_due", "turn"),
    [
        ([], [], "", False, False),
        (["e"], [], "", False, True),
        ([], ["f"], "", False, True),
        ([], [], START, False, True),
        ([], [], "", True, True),
    ],
)
def test_a_batch_is_worth_giving_for_events_failures_a_boot_or_due_work(events, failures, boot, is_due, turn):
    assert wants_turn(events, failures, boot, is_due) is turn


@pytest.mark.parametrize(
    ("wake_at", "now", "failures", "change", "is_due", "quiet"),
    [
        (None, 5.0, [], None, False, True),
        (5.0, 5.0, [], 15.0, True, False),  # a change exactly at the horizon keeps it busy
        (6.0, 5.0, [], 15.5, False, True),
        (4.0, 5.0, ["f"], None, True, False),  # a failed write to look at
    ],
)
def test_due_and_quiet(wake_at, now, failures, change, is_due, quiet):
    assert due(wake_at, now) is is_due
    assert quiet_after(failures, change, now, 10.0) is quiet


# -- turns --------------------------------------------------------------------------------------
def test_the_first_batch_boots_and_failed_writes_come_back_in_the_next():
    lp = loop([Result([CREATE, Bind("default", "p", "u", "n1")], wake_at=3.0), Result(), Result()])
    assert lp.turn(["ev"]) == (0.0, [CREATE, Bind("default", "p", "u", "n1")])
    lp.inflight.add(reply([None, Conflict("bound already")]), lp.result.writes)
    lp.collect(wall=1000.5)
    assert lp.inflight.replies == 1 and lp.inflight.window("Bind") == (None, None, 0)
    assert lp.inflight.window("Create") == (1000.5, 1000.5, 1)
    lp.move_to(3.0)
    assert lp.turn([]) == (3.0, [])
    assert lp.turn([]) == (3.0, [])
    assert trace(lp) == [
        (1, 0.0, 1, [], START),
        (1, 3.0, 0, ["Conflict"], ""),  # the refused bind, once
        (1, 3.0, 0, [], ""),
    ]


@pytest.mark.parametrize(
    ("watch_done", "wake_at", "failed", "move"),
    [
        (True, None, False, TURN_EVENTS),
        (True, 0.0, True, TURN_EVENTS),
        (False, 0.0, False, TURN_EMPTY),  # work due: no waiting for the watch
        (False, None, True, TURN_EMPTY),  # a failed write
        (False, 1.0, False, LOOK_AGAIN),  # due later
        (False, None, False, LOOK_AGAIN),
    ],
)
def test_what_the_loop_does_when_it_wakes(watch_done, wake_at, failed, move):
    lp = loop([Result(wake_at=wake_at)])
    lp.turn([])
    if failed:
        lp.inflight.add(reply([NotFound("gone")]), [CREATE])
        lp.collect(0.0)
    assert lp.after_wake(watch_done) == move


def test_a_held_clock_turns_only_for_something_to_do_and_a_running_one_always():
    held = loop([Result(wake_at=5.0)], held=2.0)
    held.turn([])
    assert not held.worth_turning([]) and held.worth_turning(["ev"])
    held.events_at(5.0)  # a reply of a later instant moves the held clock: work is due there
    assert held.clock.now() == 5.0 and held.worth_turning([])
    running = loop([Result(wake_at=50.0)], held=None)
    running.turn([])
    assert running.worth_turning([])
    running.events_at(99.0)  # a running clock is the wall's
    assert running.clock.now() == 0.0


def test_the_loop_waits_for_the_watch_unless_work_due_wrote():
    lp = loop([Result([CREATE], wake_at=0.0), Result(wake_at=0.0)])
    lp.turn([])
    assert not lp.should_wait(False) and not lp.should_wait(True) and lp.ready()
    lp.turn([])  # due again, but the last turn wrote nothing: the watch is waited for
    assert lp.should_wait(False) and not lp.should_wait(True) and not lp.idle()


@pytest.mark.parametrize(
    ("held", "wake_at", "inflight", "wait"),
    [
        (None, None, False, IDLE_WAIT),
        (None, 0.1, False, 0.1),  # emulated 0.1 s away at scale 1
        (None, 0.1, True, REPLY_WAIT),  # a running clock looks for replies this often
        (None, 0.0, False, 0.0),  # due: no blocking
        (0.0, 7.0, True, IDLE_WAIT),  # a held clock never moves by itself; replies wake it
    ],
)
def test_how_long_the_watch_may_block(held, wake_at, inflight, wait):
    lp = loop([Result(wake_at=wake_at)], held=held)
    lp.turn([])
    if inflight:
        lp.inflight.add(reply(), [CREATE])
    assert lp.wait() == pytest.approx(wait)


# -- faults -------------------------------------------------------------------------------------
def test_a_fault_rebuilds_the_component_whose_next_batch_is_a_restart():
    lp = loop([Result(wake_at=1.0), ValueError("bad spec"), Result()])
    lp.turn([])
    lp.inflight.add(reply([Conflict("x")]), [CREATE])
    lp.collect(0.0)
    first = lp.component
    with pytest.raises(ValueError):
        lp.turn(["ev"])
    lp.fault(ValueError("bad spec"))
    assert lp.component is not first and lp.faults == [f"{lp.spec.name}: ValueError: bad spec"]
    assert (lp.boot, lp.result, lp.failures) == (RESTART, Result(), [])
    lp.turn([])
    n = first.instance  # type: ignore[attr-defined]
    assert trace(lp) == [(n, 0.0, 0, [], START), (n, 0.0, 1, ["Conflict"], ""), (n + 1, 0.0, 0, [], RESTART)]
    assert lp.health(None) == lp.faults
    assert lp.health(RuntimeError("loop died")) == [*lp.faults, "RuntimeError('loop died')"]


def test_health_without_faults_is_the_components_errors():
    lp = loop([], held=101.0)
    assert lp.health(None) == ["disk full"]


# -- a stepped cluster's questions ---------------------------------------------------------------
def test_a_heartbeat_stretch_runs_lease_instants_and_stops_after_anything_else():
    lp = loop([Result([LEASE], 10.0), Result([LEASE], 20.0), Result([], 25.0), Result([CREATE], 30.0)])
    lp.turn([])
    instants, fault = lp.run_ahead(100.0, lambda: False)
    assert fault is None and lp.clock.now() == 25.0  # stopped after the instant that created a pod
    assert instants == [(10.0, [LEASE]), (25.0, [CREATE])]
    assert [t[1] for t in trace(lp)] == [0.0, 10.0, 20.0, 25.0]


def test_a_stretch_stops_at_its_end_or_when_held_up():
    lp = loop([Result([LEASE], 10.0), Result([LEASE], 20.0), Result([LEASE], 30.0)])
    lp.turn([])
    assert lp.run_ahead(20.0, lambda: False) == ([(10.0, [LEASE])], None)  # 20 is the end: not run
    checks = iter([False, True])
    assert lp.run_ahead(99.0, lambda: next(checks)) == ([(20.0, [LEASE])], None)
    assert lp.clock.now() == 20.0 and lp.result.wake_at == 30.0


def test_a_fault_in_a_stretch_keeps_the_instants_run_before_it():
    boom = KeyError("lease")
    lp = loop([Result([LEASE], 10.0), Result([LEASE], 20.0), boom])
    lp.turn([])
    instants, fault = lp.run_ahead(99.0, lambda: False)
    assert instants == [(10.0, [LEASE])] and fault is boom and lp.boot == RESTART and len(lp.faults) == 1


def test_heartbeats_are_lease_patches():
    assert heartbeat(LEASE) and not heartbeat(CREATE) and not heartbeat(Patch("Node", "", "n1", "", None))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seen", "probed", "busy", "rv", "after", "answer"),
    [
        (5, None, False, 7, 5, None),  # the apiserver holds events for it: not done
        (5, 9, False, 7, 9, (True, 9)),  # nothing for it up to 9: done with 7
        (5, 9, True, 7, 5, None),  # it became busy while asking
        (8, None, False, 7, 8, (True, 8)),
    ],
)
def test_a_component_is_done_once_it_has_seen_what_the_coordinator_needs(seen, probed, busy, rv, after, answer):
    lp = loop([Result(wake_at=4.0, next_change=9.0)])
    lp.turn([])
    assert ComponentLoop.seen_after_probe(seen, probed, busy) == after
    got = lp.done(after, rv)
    assert (None if got is None else (got.idle, got.seen)) == answer
    if got is not None:
        assert (got.wake_at, got.next_change, got.writes, got.running) == (4.0, 9.0, 0, True)


def test_busy_and_held_up():
    lp = loop([Result()], boot="")
    assert not lp.busy(watch_pending=True, settled=True)
    assert lp.held_up(watch_pending=False, settled=True)  # a watch reply not handled yet
    assert lp.held_up(watch_pending=True, settled=False)  # a list under way
    lp.inflight.add(reply(), [CREATE])
    assert lp.busy(True, True) and not lp.held_up(True, True)
    assert loop([]).held_up(True, True)  # it boots


def test_it_can_step_once_its_loop_runs_and_its_clock_started():
    lp = loop([])
    assert lp.can_step(True) and not lp.can_step(False)
    unstarted = ComponentLoop(lp.spec, Clock(ClockSpec(1.0), lambda: 0.0), START)
    assert not unstarted.can_step(True)


def test_commands_move_a_held_clock_and_refusals_come_back_as_values():
    lp = loop([], held=4.0)
    assert lp.command(KillNode("n1"), 6.0) == "killed at 6.0" and lp.clock.now() == 6.0
    refused = lp.command(KillNode("n9"), None)
    assert isinstance(refused, CommandError) and str(refused) == "node: 'n9' is not one of this host's"
    assert lp.inspect(None) == {"now": 6.0, "errors": []} and lp.inspect(8.0)["now"] == 8.0
    assert lp.inspect(2.0)["now"] == 6.0  # never behind its own clock


def test_quiet_needs_every_write_seen_every_reply_in_and_no_change_soon():
    lp = loop([Result(next_change=30.0)], held=10.0)
    lp.turn([])
    assert lp.caught_up(5, 5) and not lp.caught_up(4, 5)
    assert not lp.quiet(20.0) and lp.quiet(19.0)
    lp.inflight.add(reply(), [CREATE])
    assert not lp.caught_up(5, 5)
