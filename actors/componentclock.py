"""The component shell's clock: started, held and moved, and a stepped cluster's questions.

Owns the clock methods of ``ComponentActor`` (``component.py``, which keeps the loop), as
``apiserverclock.py`` does for the apiserver actor: ``start_clock`` (a running clock),
``set_clock`` (the cluster's clock, running or held at a stepped cluster's instant),
``step`` (the coordinator's question: move to the instant, run what is due, answer once
done with it) and ``beat`` (a node host's heartbeat stretch). What they decide is
``cluster/runtime/componentloop.py``'s; here are the waiting and the Ray calls. The
coordinator that asks is ``actors/coordinator.py``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from actors.packing import pack
from cluster.clock import Clock, ClockSpec
from cluster.runtime.componentloop import ComponentLoop
from cluster.runtime.stepper import NOT_RUNNING, Answer

if TYPE_CHECKING:
    from actors.informer import Informer
    from actors.profiling import Profile
    from cluster.runtime.component import ComponentSpec

STEP_WAIT = 1.0  # real seconds ``step`` waits for the component to be done with an instant


class ComponentClock:
    # Set by ComponentActor's constructor.
    api: Any
    clock: Clock
    loop: ComponentLoop
    informer: Informer
    profile: Profile
    spec: ComponentSpec
    _task: asyncio.Task | None
    _turned: asyncio.Event
    _wake: asyncio.Event
    _poll: asyncio.Future | None

    if TYPE_CHECKING:  # defined by ComponentActor, which this is mixed into

        async def _run(self) -> None: ...

        def _restarted(self, e: Exception) -> None: ...

        def _sent(self, fut: Any, writes: list) -> None: ...

    async def start_clock(self, real_start: float) -> None:
        """Start emulated time and the loop; a second call does nothing."""
        if not self._running():
            await self.set_clock(ClockSpec(self.clock.spec.time_scale, real_start))

    async def set_clock(self, spec: ClockSpec) -> None:
        """Take the cluster's clock (running, or held at a stepped cluster's instant: see
        ``Clock.apply``), start the loop if it does not run, and run what is due now."""
        self.clock.apply(spec)
        if not self._running():
            self.profile.start(self.spec.name)
            self._task = asyncio.get_running_loop().create_task(self._run())
        if self.loop.due():
            self._wake.set()

    async def step(self, now: float | None, rv: int) -> Answer:
        """A stepped cluster's question: move the held clock to ``now`` (None: stay) and run
        what is due, then answer once done with the instant and caught up with every write
        up to ``rv`` that its watches select; not idle after ``STEP_WAIT`` real seconds."""
        if not self.loop.can_step(self._running()):
            return NOT_RUNNING
        if now is not None and self.loop.move_to(now):
            self._wake.set()
        deadline = time.monotonic() + STEP_WAIT
        while True:
            self._turned.clear()
            if not self._busy():
                seen = self.informer.reflector.resource_version()
                if seen < rv:  # its watch may be parked with nothing for it: ask without taking
                    seen = self.loop.seen_after_probe(seen, await self.informer.probe(), self._busy())
                if (answer := self.loop.done(seen, rv)) is not None:
                    return answer
            try:
                await asyncio.wait_for(self._turned.wait(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                return self.loop.answer(False, self.informer.reflector.resource_version())

    async def beat(self, until: float) -> tuple[Answer, float]:
        """A stepped cluster's heartbeat stretch (``ComponentLoop.run_ahead``), each instant's
        writes sent at that instant in one call; answers as ``step`` does once the reply is
        in, with the last instant it ran."""
        if not self.loop.can_step(self._running()) or not self.clock.held:
            return NOT_RUNNING, self.clock.now()
        if not (await self.step(None, 0)).idle:  # whatever came in first is handled first
            return await self.step(None, 0), self.clock.now()
        instants, fault = self.loop.run_ahead(until, self._held_up)
        if fault is not None:
            self._restarted(fault)
            self._poll = None  # the old informer's watch goes with it (``_run`` sees this)
            self._wake.set()
        if instants:
            # One call: Ray runs an async actor's calls in no set order, and these must be
            # applied instant after instant.
            call = self.api.write_instants.remote([(at, pack(writes)) for at, writes in instants])
            self._sent(call.future(), [req for _, writes in instants for req in writes])
        return await self.step(None, 0), self.clock.now()

    def _watch_pending(self) -> bool:
        return self._poll is not None and not self._poll.done()

    def _held_up(self) -> bool:
        return self.loop.held_up(self._watch_pending(), self.informer.settled())

    def _busy(self) -> bool:
        return self.loop.busy(self._watch_pending(), self.informer.settled())

    def _running(self) -> bool:
        return self._task is not None and not self._task.done()
