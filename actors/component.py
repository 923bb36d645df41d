"""The one Ray actor shell every component runs in (``cluster/runtime/component.py``).

Builds the component from its ``ComponentSpec`` and runs one loop: long-poll the apiserver
for the kinds the component watches, hand it the events and the failures of its earlier
writes, and send what it returns as one ``write_packed`` call, without waiting for the reply
(replies are collected on later turns, so the scheduler's binds stream). Every decision of
the loop (how long the watch may block, when to turn, what a fault does) is
``cluster/runtime/componentloop.py``'s; the clock and a stepped cluster's questions
(``step``, ``beat``) are ``componentclock.py``'s. This shell makes the Ray calls and waits.

Restartable (``max_restarts=-1``): Ray re-runs the constructor after a crash or
``ray.kill(..., no_restart=False)``; the new incarnation's first batch says ``RESTART``,
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

import ray

from actors.componentclock import ComponentClock
from actors.informer import Informer
from actors.packing import pack
from actors.profiling import GcPacer, Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.runtime.component import RESTART, START, CommandError, ComponentSpec
from cluster.runtime.componentloop import LOOK_AGAIN, TURN_EVENTS, ComponentLoop
from cluster.runtime.inflight import outcomes as _outcomes
from cluster.runtime.inflight import tally

__all__ = ["ComponentActor", "_outcomes", "tally"]  # the two helpers: where tests and benches find them

QUIET_WAIT = 2.0  # real seconds ``quiet`` waits for the watch to catch up
FAULT_BACKOFF = 1.0  # real seconds between a component's fault and its restart (no hot crash loop)


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class ComponentActor(ComponentClock, Profiled):
    def __init__(self, api, spec: ComponentSpec, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        self.api = ray.get_actor(api) if isinstance(api, str) else api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.spec, self.loop = spec, ComponentLoop(spec, self.clock, RESTART if _reconstructed() else START)
        self.informer = Informer(self.api, self.loop.component.watches(), clocked=True)
        self.gc = GcPacer()
        self._task: asyncio.Task | None = None
        self._turned = asyncio.Event()  # the loop did something (for ``quiet`` and ``step``)
        self._wake = asyncio.Event()  # the loop should look again: a reply, or the clock moved
        self._poll: asyncio.Future | None = None  # the loop's watch call, while it has one

    async def prime(self) -> None:
        """The first batch before the clock starts (a node host registers its nodes at
        emulated 0), its writes awaited."""
        if self.loop.boot:
            self._turn([])
            pending = [asyncio.wrap_future(fut) for fut in self.loop.inflight.pending()]
            await asyncio.gather(*pending, return_exceptions=True)
            self.loop.collect(time.time())

    async def command(self, command, now: float | None = None) -> str | CommandError:
        """A chaos command; ``now``: a stepped cluster's instant, which the held clock moves to."""
        detail = self.loop.command(command, now)
        if not isinstance(detail, CommandError):
            self._turn([])  # what it wrote goes out now
        return detail

    async def inspect(self, now: float | None = None) -> dict:
        return self.loop.inspect(now)

    async def watching(self) -> list:
        """What the component watches (a stepped cluster's coordinator selects by it)."""
        return list(self.loop.component.watches())

    async def healthy(self) -> list[str]:
        task = self._task
        return self.loop.health(task.exception() if task is not None and task.done() else None)

    async def quiet(self, rv: int, horizon: float) -> bool:
        """Has this component seen every write up to ``rv``, collected every reply, and
        nothing it will change by itself within ``horizon`` emulated seconds?"""
        deadline = time.monotonic() + QUIET_WAIT
        while not self.loop.caught_up(self.informer.reflector.resource_version(), rv):
            if time.monotonic() > deadline:
                return False
            self._turned.clear()
            try:
                await asyncio.wait_for(self._turned.wait(), deadline - time.monotonic())
            except asyncio.TimeoutError:
                return False
        return self.loop.quiet(horizon)

    async def write_window(self, kind: str = "Bind") -> tuple[float | None, float | None, int]:
        """(first, last, count) of this component's successful writes of ``kind`` (real time);
        ``Bind:<prefix>`` counts the binds of pods whose name starts ``<prefix>-``."""
        return self.loop.inflight.window(kind)

    async def reset_write_window(self, kind: str = "Bind") -> int:
        return self.loop.inflight.reset_window(kind)

    async def _run(self) -> None:
        poll: asyncio.Future | None = None
        while True:
            if poll is not self._poll:  # dropped with a component restarted by ``beat``
                poll = None
            if poll is None:
                poll = self._poll = asyncio.ensure_future(self.informer.poll(self.loop.wait()))
                self._turned.set()  # a new watch call: whoever waits for quiet looks again
            if self.loop.should_wait(poll.done()):
                await self._until_woken(poll)
            self.loop.collect(time.time())
            move = self.loop.after_wake(poll.done())
            if move == LOOK_AGAIN:
                self._turned.set()  # a reply came in: whoever waits for quiet looks again
                continue
            if move == TURN_EVENTS:
                events = poll.result()
                poll = self._poll = None
                self.loop.events_at(self.informer.server_now)
            else:
                await asyncio.sleep(0)
                events = []
            if not self.loop.worth_turning(events):
                self._turned.set()  # an empty watch reply: nothing to turn for, as on the local runtime
                continue
            try:
                self._turn(events)
            except Exception as e:  # a fault of the component's: rebuilt, as a crashed controller is
                self.loop.fault(e)
                self._restarted(e)
                poll = self._poll = None  # the old informer's watch is dropped with it
                await asyncio.sleep(FAULT_BACKOFF)
                continue
            self.gc.turn_done(idle=self.loop.idle())
            self._turned.set()

    async def _until_woken(self, poll: asyncio.Future) -> None:
        """Until the watch answers, a write's reply comes in, or (the clock moved) work is due."""
        self._wake.clear()
        if self.loop.ready():
            return
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait((poll, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()

    def _restarted(self, e: Exception) -> None:
        """The component was rebuilt after ``e`` (``ComponentLoop.fault``): its trace on the
        console, and a fresh informer, so its next batch comes from a fresh list."""
        traceback.print_exception(e, file=sys.stderr)
        self.informer = Informer(self.api, self.loop.component.watches(), clocked=True)

    def _turn(self, events: list) -> None:
        at, writes = self.loop.turn(events)
        if writes:
            if self.clock.held:  # the write carries its instant (``APIServerClock.write_clocked``)
                call = self.api.write_clocked.remote(at, pack(writes))
            else:
                call = self.api.write_packed.remote(pack(writes))
            self._sent(call.future(), writes)

    def _sent(self, fut, writes: list) -> None:
        """A write call is under way: its reply wakes the loop and is collected there."""
        fut.add_done_callback(_waker(asyncio.get_running_loop(), self._wake))
        self.loop.inflight.add(fut, writes)


def _waker(loop: asyncio.AbstractEventLoop, wake: asyncio.Event):
    """A done-callback (run on Ray's thread) that wakes the actor loop waiting for a reply."""

    def done(_fut) -> None:
        try:
            loop.call_soon_threadsafe(wake.set)
        except RuntimeError:  # the loop is gone with the actor: nobody to wake
            pass

    return done


def _reconstructed() -> bool:
    """Whether Ray restarted this actor (its own property reads a deprecated attribute and
    warns on every call; the answer is what we need)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ray.get_runtime_context().was_current_actor_reconstructed
