"""The one Ray actor shell every component runs in (``cluster/runtime/component.py``).

Builds the component from its ``ComponentSpec`` and runs one loop: long-poll the apiserver
for the kinds the component watches, hand it the events and the failures of its earlier
writes, and send what it returns as one ``write_packed`` call, without waiting for the reply
(replies are collected on later turns, so the scheduler's binds stream). The watch waits
no longer than the component's ``wake_at``, converted from emulated to real seconds. While
work is due and the watch call has not answered, the loop turns without events rather than
wait for it (the apiserver answers a watch only after the writes sent before it).

In a stepped cluster (``cluster/runtime/stepper.py``; the coordinator is
``actors/cluster.py``) the clock is held: it stands at an instant until ``step`` moves it
(work due then runs at once) or a watch reply brings events written at a later instant
(``Informer.server_now``), and ``step`` answers once the component is done with the
instant; ``beat`` runs a node host's heartbeats ahead of it (a stretch). A held clock's
loop turns only for events, failures, a boot or due work, as the local runtime's does; a write's reply wakes the loop, so nothing waits for a watch to time
out.

Restartable (``max_restarts=-1``): Ray re-runs the constructor after a crash or
``ray.kill(..., no_restart=False)``; the new incarnation's first batch says ``RESTART``
(a node host then registers its nodes again and adopts the pods its first list brings),
and ``actors/restart.py`` (or ``Cluster.revive``) starts its clock on the cluster's
timeline. ``api`` may be the apiserver's actor name: a handle argument would sit in Ray's
object store, which a restart cannot count on (Ray issue 53727).
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
import warnings
from concurrent.futures import Future
from typing import Any

import ray

from actors.informer import Informer
from actors.packing import pack
from actors.profiling import GcPacer, Profile, Profiled, tune_gc
from cluster.api.errors import ServiceUnavailable, StatusError
from cluster.api.requests import Bind, Patch
from cluster.clock import Clock, ClockSpec
from cluster.runtime.component import RESTART, START, Batch, CommandError, ComponentSpec, Failure, Result
from cluster.runtime.stepper import NOT_RUNNING, Answer

IDLE_WAIT = 0.25  # real seconds a watch may block when nothing is due sooner
REPLY_WAIT = 0.02  # ... while replies to earlier writes are outstanding
QUIET_WAIT = 2.0  # real seconds ``quiet`` waits for the watch to catch up
STEP_WAIT = 1.0  # real seconds ``step`` waits for the component to be done with an instant
FAULT_BACKOFF = 1.0  # real seconds between a component's fault and its restart (no hot crash loop)


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class ComponentActor(Profiled):
    def __init__(self, api, spec: ComponentSpec, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        self.api = ray.get_actor(api) if isinstance(api, str) else api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.spec, self.component = spec, spec.build()
        self.informer = Informer(self.api, self.component.watches(), clocked=True)
        self.boot = RESTART if _reconstructed() else START
        self.result = Result()
        self.failures: list[Failure] = []
        self.inflight: list[tuple[Future[Any], list]] = []  # (future of a write call, its requests)
        self.windows: dict[str, list] = {}  # request type -> [first, last, count] of successes, real time
        self.gc = GcPacer()
        self._task: asyncio.Task | None = None
        self.faults: list[str] = []  # the component's exceptions, each followed by a restart
        self._turned = asyncio.Event()  # the loop did something (for ``quiet`` and ``step``)
        self._wake = asyncio.Event()  # the loop should look again: a reply, or the clock moved
        self._poll: asyncio.Future | None = None  # the loop's watch call, while it has one
        self.replies = 0  # write calls the apiserver has answered (``step`` reports it)

    async def prime(self) -> None:
        """The first batch before the clock starts (a node host registers its nodes at
        emulated 0), its writes awaited."""
        if self.boot:
            self._turn([])
            await asyncio.gather(*[asyncio.wrap_future(fut) for fut, _ in self.inflight], return_exceptions=True)
            self._collect()

    async def start_clock(self, real_start: float) -> None:
        """Start emulated time and the loop; a second call does nothing."""
        if self._task is None or self._task.done():
            await self.set_clock(ClockSpec(self.clock.spec.time_scale, real_start))

    async def set_clock(self, spec: ClockSpec) -> None:
        """Take the cluster's clock (running, or held at a stepped cluster's instant: see
        ``Clock.apply``), start the loop if it does not run, and run what is due now."""
        self.clock.apply(spec)
        if self._task is None or self._task.done():
            self.profile.start(self.spec.name)
            self._task = asyncio.get_running_loop().create_task(self._run())
        if self._due():
            self._wake.set()

    async def step(self, now: float | None, rv: int) -> Answer:
        """A stepped cluster's question: move the held clock to ``now`` (None: stay) and run
        what is due, then answer once done with the instant and caught up with every write
        up to ``rv`` that its watches select; not idle after ``STEP_WAIT`` real seconds."""
        if self._task is None or self._task.done() or not self.clock.started:
            return NOT_RUNNING
        if now is not None:
            self.clock.hold(now)
            if self._due():
                self._wake.set()
        deadline = time.monotonic() + STEP_WAIT
        while True:
            self._turned.clear()
            if not self._busy():
                seen = self.informer.reflector.resource_version()
                if seen < rv:  # its watch may be parked with nothing for it: ask without taking
                    probed = await self.informer.probe()
                    seen = seen if probed is None or self._busy() else max(seen, probed)
                if seen >= rv:
                    return Answer(True, seen, self.result.wake_at, self.result.next_change, self.replies)
            remaining = deadline - time.monotonic()
            try:
                await asyncio.wait_for(self._turned.wait(), max(0.0, remaining))
            except asyncio.TimeoutError:
                seen = self.informer.reflector.resource_version()
                return Answer(False, seen, self.result.wake_at, self.result.next_change, self.replies)

    async def beat(self, until: float) -> tuple[Answer, float]:
        """A stepped cluster's heartbeat stretch (``Stepper.stretch``): run, at each of their
        instants before ``until``, the timers due then, which the coordinator knows to be
        background ones, sending each instant's writes at that instant without waiting
        for the coordinator; stop early after an instant that wrote anything but a Lease
        (what it wrote is the cluster's to react to at that instant). Answers as ``step``
        does once the reply is in, with the last instant it ran."""
        if self._task is None or self._task.done() or not self.clock.started or not self.clock.held:
            return NOT_RUNNING, self.clock.now()
        if not (await self.step(None, 0)).idle:  # whatever came in first is handled first
            return await self.step(None, 0), self.clock.now()
        instants: list[tuple[float, list]] = []  # (instant, its writes), sent in one call
        while not self._held_up() and (wake := self.result.wake_at) is not None and wake < until:
            self.clock.hold(wake)
            try:
                self.result = self.component.reconcile(Batch(wake, [], [], ""))
            except Exception as e:  # as in ``_run``: a fault of the component's restarts it
                self._restart_after(e)
                self._poll = None  # the old informer's watch goes with it (``_run`` sees this)
                self._wake.set()
                break
            if self.result.writes:
                instants.append((wake, self.result.writes))
            if not all(heartbeat(req) for req in self.result.writes):
                break
        if instants:
            # One call: Ray runs an async actor's calls in no set order, and these must be
            # applied instant after instant.
            blobs = [(at, pack(writes)) for at, writes in instants]
            fut = self.api.write_instants.remote(blobs).future()
            fut.add_done_callback(_waker(asyncio.get_running_loop(), self._wake))
            self.inflight.append((fut, [req for _, writes in instants for req in writes]))
        return await self.step(None, 0), self.clock.now()

    def _held_up(self) -> bool:
        """Anything to handle before running ahead: a failed write, a boot, events, a list."""
        poll = self._poll
        return bool(self.failures or self.boot or poll is None or poll.done() or not self.informer.settled())

    def _busy(self) -> bool:
        """Anything in flight, due or not yet handled (a reply, a watch reply, a list)."""
        return bool(self.inflight or self._due() or self._held_up())

    async def command(self, command, now: float | None = None) -> str | CommandError:
        """A chaos command; ``now``: a stepped cluster's instant, which the held clock moves to."""
        if now is not None and self.clock.held:
            self.clock.hold(now)
        try:
            detail = self.component.handle(command, self.clock.now())
        except CommandError as e:
            return e
        self._turn([])  # what it wrote goes out now
        return detail

    async def inspect(self, now: float | None = None) -> dict:
        """The component's view (``now``: a stepped cluster's instant, when its clock may lag)."""
        return self.component.inspect(self.clock.now() if now is None else max(now, self.clock.now()))

    async def watching(self) -> list:
        """What the component watches (a stepped cluster's coordinator selects by it)."""
        return list(self.component.watches())

    async def healthy(self) -> list[str]:
        if self._task is not None and self._task.done() and self._task.exception():
            return [*self.faults, repr(self._task.exception())]
        if self.faults:
            return list(self.faults)
        return list(self.component.inspect(self.clock.now()).get("errors") or ())

    async def quiet(self, rv: int, horizon: float) -> bool:
        """Has this component seen every write up to ``rv``, collected every reply, and
        nothing it will change by itself within ``horizon`` emulated seconds?"""
        deadline = time.monotonic() + QUIET_WAIT
        while self.informer.reflector.resource_version() < rv or self.inflight:
            if time.monotonic() > deadline:
                return False
            self._turned.clear()
            try:
                await asyncio.wait_for(self._turned.wait(), deadline - time.monotonic())
            except asyncio.TimeoutError:
                return False
        change = self.result.next_change
        return not self.failures and (change is None or change > self.clock.now() + horizon)

    async def write_window(self, kind: str = "Bind") -> tuple[float | None, float | None, int]:
        """(first, last, count) of this component's successful writes of ``kind`` (real time);
        ``Bind:<prefix>`` counts the binds of pods whose name starts ``<prefix>-``."""
        first, last, count = self.windows.get(kind, (None, None, 0))
        return first, last, count

    async def reset_write_window(self, kind: str = "Bind") -> int:
        return self.windows.pop(kind, (None, None, 0))[2]

    async def _run(self) -> None:
        poll: asyncio.Future | None = None
        while True:
            if poll is not self._poll:  # dropped with a component restarted by ``beat``
                poll = None
            if poll is None:
                poll = self._poll = asyncio.ensure_future(self.informer.poll(self._wait()))
                self._turned.set()  # a new watch call: whoever waits for quiet looks again
            if not poll.done() and not (self._due() and self.result.writes):
                await self._until_woken(poll)
            self._collect()
            if poll.done():
                events = poll.result()
                poll = self._poll = None
                if self.clock.held:  # events written at a later instant: we are there too
                    self.clock.hold(self.informer.server_now)
            elif self._due() or self.failures:
                # Work is due (the last turn did some, or the clock moved on) or a write
                # failed, but the watch has not answered: turn without events, and take them on
                # a later turn, as upstream's informers deliver alongside the cycles.
                await asyncio.sleep(0)
                events = []
            else:
                self._turned.set()  # a reply came in: whoever waits for quiet looks again
                continue
            if self.clock.held and not (events or self.failures or self.boot or self._due()):
                self._turned.set()  # an empty watch reply: nothing to turn for, as on the local runtime
                continue
            try:
                self._turn(events)
            except Exception as e:  # a fault of the component's: restart it, as a crashed controller is
                self._restart_after(e)
                poll = self._poll = None  # the old informer's watch is dropped with it
                await asyncio.sleep(FAULT_BACKOFF)
                continue
            self.gc.turn_done(idle=not (self.result.writes or self._due()))
            self._turned.set()

    async def _until_woken(self, poll: asyncio.Future) -> None:
        """Until the watch answers, a write's reply comes in, or (the clock moved) work is due."""
        self._wake.clear()
        if self._due() or any(fut.done() for fut, _ in self.inflight):
            return
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait((poll, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()

    def _restart_after(self, e: Exception) -> None:
        """Report the fault (``healthy`` keeps it, so a run still fails on it), then rebuild the
        component and its informer: its next batch is a RESTART from a fresh list."""
        self.faults.append(f"{self.spec.name}: {type(e).__name__}: {e}")
        traceback.print_exception(e, file=sys.stderr)
        self.component = self.spec.build()
        self.informer = Informer(self.api, self.component.watches(), clocked=True)
        self.boot, self.result, self.failures = RESTART, Result(), []

    def _due(self) -> bool:
        wake = self.result.wake_at
        return wake is not None and wake <= self.clock.now()

    def _wait(self) -> float:
        """Real seconds the watch may block: none while the component has work due."""
        if self._due():
            return 0.0
        wake = self.result.wake_at
        wait = IDLE_WAIT if wake is None else min(IDLE_WAIT, self.clock.real_delay(wake - self.clock.now()))
        # A held clock's loop is woken by replies; a running one looks for them this often.
        return min(wait, REPLY_WAIT) if self.inflight and not self.clock.held else wait

    def _turn(self, events: list) -> None:
        batch = Batch(self.clock.now(), events, self.failures, self.boot)
        self.failures, self.boot = [], ""
        self.result = self.component.reconcile(batch)
        if self.result.writes:
            writes = self.result.writes
            if self.clock.held:  # the write carries its instant (``APIServerClock.write_clocked``)
                fut = self.api.write_clocked.remote(batch.now, pack(writes)).future()
            else:
                fut = self.api.write_packed.remote(pack(writes)).future()
            fut.add_done_callback(_waker(asyncio.get_running_loop(), self._wake))
            self.inflight.append((fut, writes))

    def _collect(self) -> None:
        """Take the replies that have arrived: failures go into the next batch."""
        keep, now = [], time.time()
        for fut, writes in self.inflight:
            if not fut.done():
                keep.append((fut, writes))
                continue
            self.replies += 1
            for req, err in zip(writes, _outcomes(fut, len(writes))):
                if err is not None:
                    self.failures.append(Failure(req, err))
                else:
                    tally(self.windows, req, now)
        self.inflight = keep


def heartbeat(req: Any) -> bool:
    """Whether a write is a heartbeat: a kubelet's Lease renewal."""
    return isinstance(req, Patch) and req.kind == "Lease"


def tally(windows: dict[str, list], req: Any, now: float) -> None:
    """Count one successful write in ``windows`` under its request type and, for a Bind,
    also under ``Bind:<the pod name's prefix before its first '-'>`` (benches measure one
    group of pods among others)."""
    keys = [type(req).__name__]
    if isinstance(req, Bind):
        keys.append(f"Bind:{req.name.split('-', 1)[0]}")
    for key in keys:
        w = windows.setdefault(key, [now, now, 0])
        w[1], w[2] = now, w[2] + 1


def _waker(loop: asyncio.AbstractEventLoop, wake: asyncio.Event):
    """A done-callback (run on Ray's thread) that wakes the actor loop waiting for a reply."""

    def done(_fut) -> None:
        try:
            loop.call_soon_threadsafe(wake.set)
        except RuntimeError:  # the loop is gone with the actor: nobody to wake
            pass

    return done


def _outcomes(fut, n: int) -> list:
    """The per-request outcomes of a write call; when the call itself failed (the apiserver
    unreachable for good), a retryable error for each, so the component tries again."""
    try:
        return fut.result()
    except Exception as e:  # Ray wraps the cause in types of its own
        first = (str(e).splitlines() or [""])[0]
        err: StatusError = ServiceUnavailable(f"write call failed: {type(e).__name__}: {first}")
        return [err] * n


def _reconstructed() -> bool:
    """Whether Ray restarted this actor (its own property reads a deprecated attribute and
    warns on every call; the answer is what we need)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ray.get_runtime_context().was_current_actor_reconstructed
