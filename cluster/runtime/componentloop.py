"""What the Ray runtime's component shell decides about the one component it drives.

Owns ``ComponentLoop``: the component instance and what it has pending for its next batch
(the failures of its writes, a boot), its latest ``Result``, its writes in flight
(``inflight.py``), and every decision of the shell that needs no process: how long the
watch may block, what the loop does when it wakes, whether a turn is worth taking, what to
answer a stepped cluster's coordinator (``stepper.py``), which instants a heartbeat stretch
runs, and what a fault does. ``actors/component.py``'s ``ComponentActor`` calls it; it keeps
the Ray calls, the watch call and the asyncio waiting. The clock is the shell's
(``cluster/clock.py``: running, or held at a stepped cluster's instant).

The loop, each time it wakes (``after_wake``; ``collect`` has taken the replies first):

| the watch call | work due or a write failed | the loop                                  |
|----------------|----------------------------|-------------------------------------------|
| answered       | either                     | ``TURN_EVENTS``: a turn with its events    |
| pending        | yes                        | ``TURN_EMPTY``: a turn without events      |
| pending        | no                         | ``LOOK_AGAIN``: waits again                |

A held clock's turn is skipped when there is nothing to turn for (``worth_turning``, the
local runtime's rule: ``turns.py``). The component's life (``boot`` of its next batch):

| state     | event                      | next      | what happens                                   |
|-----------|----------------------------|-----------|------------------------------------------------|
| START     | a turn                     | running   | the batch says START (a node host registers)   |
| RESTART   | a turn                     | running   | the batch says RESTART (it adopts what it lists)|
| any       | ``reconcile`` raised       | RESTART   | ``fault``: kept for ``health``, rebuilt, its    |
|           |                            |           | result and failures dropped                    |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api.requests import Patch, Request
from ..clock import Clock
from .commands import Command
from .component import RESTART, Batch, CommandError, ComponentSpec, Failure, Result, WatchEvent
from .inflight import Inflight
from .stepper import Answer
from .turns import due, quiet_after, wants_turn

IDLE_WAIT = 0.25  # real seconds a watch may block when nothing is due sooner
REPLY_WAIT = 0.02  # ... while replies to earlier writes are outstanding (a running clock)

TURN_EVENTS, TURN_EMPTY, LOOK_AGAIN = "events", "empty", "again"

Instants = list[tuple[float, list[Request]]]  # (instant, the writes made at it), oldest first


class ComponentLoop:
    def __init__(self, spec: ComponentSpec, clock: Clock, boot: str):
        self.spec, self.clock = spec, clock
        self.component = spec.build()
        self.boot = boot
        self.result = Result()
        self.failures: list[Failure] = []
        self.faults: list[str] = []  # the component's exceptions, each followed by a rebuild
        self.inflight = Inflight()

    # -- the loop ------------------------------------------------------------------------
    def due(self) -> bool:
        return due(self.result.wake_at, self.clock.now())

    def wait(self) -> float:
        """Real seconds the watch may block: none while the component has work due."""
        if self.due():
            return 0.0
        wake = self.result.wake_at
        wait = IDLE_WAIT if wake is None else min(IDLE_WAIT, self.clock.real_delay(wake - self.clock.now()))
        # A held clock's loop is woken by replies; a running one looks for them this often.
        return min(wait, REPLY_WAIT) if self.inflight and not self.clock.held else wait

    def should_wait(self, watch_done: bool) -> bool:
        """Whether the loop waits to be woken: not when the watch answered, nor when work is
        due and the last turn wrote (the watch is not waited for then)."""
        return not watch_done and not (self.due() and self.result.writes)

    def ready(self) -> bool:
        """Nothing to wait for: work is due or a reply has come in."""
        return self.due() or self.inflight.any_done()

    def collect(self, wall: float) -> None:
        """Take the replies that have come in: failures go into the next batch."""
        self.failures += self.inflight.collect(wall)

    def after_wake(self, watch_done: bool) -> str:
        """What the loop does now (the table in the module docstring)."""
        if watch_done:
            return TURN_EVENTS
        if self.due() or self.failures:
            # The watch has not answered but work is due or a write failed: a turn without
            # events now, the events on a later turn, as upstream's informers deliver
            # alongside the cycles.
            return TURN_EMPTY
        return LOOK_AGAIN

    def events_at(self, server_now: float) -> None:
        """A watch reply came: events written at a later instant move a held clock there."""
        if self.clock.held:
            self.clock.hold(server_now)

    def worth_turning(self, events: list[WatchEvent]) -> bool:
        """A running clock's loop always turns; a held one only for something to do."""
        return not self.clock.held or wants_turn(events, self.failures, self.boot, self.due())

    def turn(self, events: list[WatchEvent]) -> tuple[float, list[Request]]:
        """One batch to the component; (its instant, the writes it asks for)."""
        batch = Batch(self.clock.now(), events, self.failures, self.boot)
        self.failures, self.boot = [], ""
        self.result = self.component.reconcile(batch)
        return batch.now, self.result.writes

    def idle(self) -> bool:
        """The last turn wrote nothing and nothing is due (the collector may run long)."""
        return not (self.result.writes or self.due())

    def fault(self, e: Exception) -> None:
        """``reconcile`` raised: keep the fault (``health`` reports it, so a run still fails
        on it) and rebuild the component, whose next batch is a RESTART (the shell gives it
        a fresh informer, so it starts from a list)."""
        self.faults.append(f"{self.spec.name}: {type(e).__name__}: {e}")
        self.component = self.spec.build()
        self.boot, self.result, self.failures = RESTART, Result(), []

    # -- a stepped cluster's questions -----------------------------------------------------
    def can_step(self, loop_runs: bool) -> bool:
        """Whether it can answer: its loop runs and its clock was started (else Ray restarted
        its process and nobody has started the new one's clock yet)."""
        return loop_runs and self.clock.started

    def move_to(self, now: float) -> bool:
        """Hold the clock at the coordinator's instant; whether work is due there."""
        self.clock.hold(now)
        return self.due()

    def held_up(self, watch_pending: bool, settled: bool) -> bool:
        """Anything to handle before running ahead: a failed write, a boot, a watch reply
        not handled yet (``watch_pending`` False), a list under way (not ``settled``)."""
        return bool(self.failures or self.boot or not watch_pending or not settled)

    def busy(self, watch_pending: bool, settled: bool) -> bool:
        """Anything in flight, due or not yet handled."""
        return bool(self.inflight or self.due() or self.held_up(watch_pending, settled))

    @staticmethod
    def seen_after_probe(seen: int, probed: int | None, busy: bool) -> int:
        """What the component has seen after asking the apiserver (``probed``: None when
        there are events for it, or it became busy meanwhile: it has seen no more)."""
        return seen if probed is None or busy else max(seen, probed)

    def done(self, seen: int, rv: int) -> Answer | None:
        """The idle answer of a component with nothing to do that has seen every write up
        to ``rv`` its watches select; None while it has not."""
        return self.answer(True, seen) if seen >= rv else None

    def answer(self, idle: bool, seen: int) -> Answer:
        return Answer(idle, seen, self.result.wake_at, self.result.next_change, self.inflight.replies)

    def run_ahead(self, until: float, held_up: Callable[[], bool]) -> tuple[Instants, Exception | None]:
        """A heartbeat stretch: run, at each of its instants before ``until``, the timers
        due then (background ones: the coordinator checked), stopping after an instant
        that wrote anything but a Lease (the cluster reacts to it at that instant) or when
        ``held_up``. The instants with writes, and the fault that stopped it (already
        handled by ``fault``), if any."""
        instants: Instants = []
        while not held_up() and (wake := self.result.wake_at) is not None and wake < until:
            self.clock.hold(wake)
            try:
                self.result = self.component.reconcile(Batch(wake, [], [], ""))
            except Exception as e:  # as in a turn: a fault of the component's rebuilds it
                self.fault(e)
                return instants, e
            if self.result.writes:
                instants.append((wake, self.result.writes))
            if not all(heartbeat(req) for req in self.result.writes):
                break
        return instants, None

    # -- what else the shell is asked --------------------------------------------------------
    def command(self, command: Command, now: float | None) -> Any:
        """A chaos command (``now``: a stepped cluster's instant, which a held clock moves
        to); its detail, or the component's refusal."""
        if now is not None and self.clock.held:
            self.clock.hold(now)
        try:
            return self.component.handle(command, self.clock.now())
        except CommandError as e:
            return e

    def inspect(self, now: float | None) -> dict[str, Any]:
        """The component's view (``now``: a stepped cluster's instant, when its clock lags)."""
        return self.component.inspect(self.clock.now() if now is None else max(now, self.clock.now()))

    def health(self, loop_error: BaseException | None) -> list[str]:
        """What went wrong: the loop's own death, the faults, else the component's errors."""
        if loop_error is not None:
            return [*self.faults, repr(loop_error)]
        if self.faults:
            return list(self.faults)
        return list(self.component.inspect(self.clock.now()).get("errors") or ())

    def caught_up(self, seen: int, rv: int) -> bool:
        """Every write up to ``rv`` seen and every reply collected."""
        return seen >= rv and not self.inflight

    def quiet(self, horizon: float) -> bool:
        return quiet_after(self.failures, self.result.next_change, self.clock.now(), horizon)


def heartbeat(req: Any) -> bool:
    """Whether a write is a heartbeat: a kubelet's Lease renewal."""
    return isinstance(req, Patch) and req.kind == "Lease"
