"""The Ray calls of a stepped cluster's coordinator (``cluster/runtime/coordinator.py``).

Owns ``RayCoordinator``, the part of ``RayCluster`` (``cluster.py``) that moves a stepped
run's clock: it learns what the components watch, reads a watch of its own over those
kinds, asks the components whether they are done with the instant
(``ComponentActor.step``, ``componentclock.py``) until they all are, has the node hosts run
their heartbeats ahead (``ComponentActor.beat``), and gives restarted actors the instant
the cluster stands at. What to ask, when the instant is done, when a stretch stops and
where the clock jumps are ``Coordinator``'s and ``Stepper``'s (``cluster/runtime/``); here
are the Ray calls, the errors Ray raises, and the waiting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ray.exceptions import ActorUnavailableError, RayActorError

from actors.informer import Informer
from actors.packing import pack
from cluster.api.requests import Outcome, Request, Watch
from cluster.clock import Clock
from cluster.runtime.cluster import SETTLE_HORIZON, Fleet, drain
from cluster.runtime.cluster import Informer as InformerLike
from cluster.runtime.commands import Command
from cluster.runtime.component import WatchEvent
from cluster.runtime.coordinator import START_CLOCK, STAY, Coordinator
from cluster.runtime.stepper import Answer, Stepper

UNAVAILABLE_PAUSE = 0.05  # real seconds before asking again an actor Ray cannot reach for now
REVIVE_TIMEOUT = 5.0  # real seconds the apiserver has to say whether its clock runs


class RayCoordinator:
    def __init__(
        self,
        api: Any,
        clock: Clock,
        fleet: Fleet,
        pace: float | None,
        live: Callable[[], dict[Hashable, Any]],
        log: Callable[[str], None],
    ):
        """``live``: every live component actor by its key (role, or host index)."""
        self.api, self.clock, self._live, self._log = api, clock, live, log
        self.co = Coordinator(Stepper(pace), clock, fleet)
        self._watch: Informer | None = None  # over every kind a component or the driver watches

    async def start(self) -> None:
        """Hold every clock at 0 and learn what the components watch."""
        self.clock.hold(0.0)
        await asyncio.gather(*[a.set_clock.remote(self.clock.spec) for a in [self.api, *self._live().values()]])
        await self.watch_components()

    async def watch_components(self, keys: Sequence[Hashable] | None = None) -> None:
        """Learn what the components ``keys`` (all: None) watch."""
        live = self._live()
        keys = list(live) if keys is None else keys
        for key, watches in zip(keys, await asyncio.gather(*[live[k].watching.remote() for k in keys])):
            self.co.stepper.watching(key, watches)

    async def _look(self) -> list[WatchEvent]:
        """Read what was written since the coordinator's watch last looked: whom it concerns."""
        watch = self._watch
        assert watch is not None  # built by settle_watch
        events = await drain(watch)
        self.co.looked(watch.reflector.resource_version(), events)
        return events

    async def settle_watch(self, informer: InformerLike) -> list[WatchEvent]:
        """Ask the components due now, and those that writes concern, until every one is
        done with the instant and nobody wrote since the coordinator's watch looked; then
        the events the driver's ``informer`` has not had."""
        kinds = self.co.cover(informer.reflector.rv, None if self._watch is None else self._watch.reflector.rv)
        if kinds is not None:
            self._watch = Informer(self.api, [Watch(kind, lazy=True) for kind in kinds])
        if self.co.dirty:  # the driver wrote, or a component was told something
            await self._look()
        await self._settle(self.clock.now())
        return await drain(informer) if self.co.driver_due() else []

    async def _settle(self, now: float, move: bool = True) -> None:
        """Ask until every live component is done with the instant ``now`` (``move``: the
        question moves its clock there; else it stays where its events put it)."""
        patience = self.co.patience(time.monotonic())
        while waiting := self.co.round(live := self._live()):
            at = now if move else None
            if any(await asyncio.gather(*[self._ask(key, live[key], at) for key in waiting])):
                await self._look()
            note = self.co.overdue(patience, time.monotonic(), now, list(live))
            if note is not None:
                self._log(note[0])
                if note[1]:
                    break

    async def _ask(self, key: Hashable, actor: Any, now: float | None) -> bool:
        """Ask one component (``ComponentActor.step``); whether the coordinator must look."""
        try:
            answer: Answer = await actor.step.remote(now, self.co.need(key))
        except ActorUnavailableError:  # restarting, or briefly out of reach: ask again
            await asyncio.sleep(UNAVAILABLE_PAUSE)
            return False
        except RayActorError as e:  # gone for good (a dead Ray node)
            self._log(self.co.gone(key, type(e).__name__))
            return True
        meaning = self.co.answered(key, answer)
        if meaning == START_CLOCK:  # a process Ray restarted on its own: it goes on at this instant
            await actor.set_clock.remote(self.clock.spec)
            self._log(f"kubemu: {self.co.name(key)} was restarted by Ray; its clock is running again")
        return meaning != STAY

    async def advance(self, until: float | None) -> None:
        """Move the clock to the next wakeup or ``until``, by a stretch or a jump. A component
        due then is asked (and so moved) by the next ``settle_watch``; the apiserver moves
        with the first write at the new instant, the others with the first watch reply after it."""
        live, now = self._live(), self.clock.now()
        if await self._stretch(live, now, until):
            return
        wait = self.co.jump(list(live), now, until)
        if wait is not None:
            await asyncio.sleep(wait)  # ahead of the pace: the wall clock catches up first

    async def _stretch(self, live: dict[Hashable, Any], now: float, until: float | None) -> bool:
        """Let the node hosts run their heartbeats ahead, the components their writes concern
        catch up, and the clock stand at the last instant run; whether there was such a stretch."""
        plan = self.co.stretch(list(live), now, until)
        if plan is None:
            return False
        end, due = plan
        reached = await asyncio.gather(*[self._beat(k, live[k], end) for k in due])
        # The Lease watchers are asked while the coordinator looks (they had the renewals
        # meanwhile, as they were written); whoever had not seen them all is asked again.
        # None of them moves its clock: each is where its events, one instant a reply, put it.
        watchers = self.co.lease_watchers(live.keys())
        await asyncio.gather(self._look(), *[self._ask(k, live[k], None) for k in watchers])
        await self._settle(now, move=False)
        return self.co.stretched(due, reached, now, live)

    async def _beat(self, key: Hashable, actor: Any, end: float) -> float | None:
        """One host's part of a stretch (``ComponentActor.beat``): the last instant it ran,
        or None when it could not (asked again at the next instant, as ``_ask`` would)."""
        try:
            answer, reached = await actor.beat.remote(end)
        except (ActorUnavailableError, RayActorError):
            self.co.stepper.forget(key)
            return None
        if not answer.running:
            self.co.stepper.forget(key)
            return None
        self.co.stepper.record(key, answer)
        return reached

    # -- what the rest of RayCluster does to a stepped cluster ---------------------------------
    async def restarted(self, component: str, node: str | None) -> None:
        """A restarted actor's new incarnation goes on at this instant."""
        key = self.co.key_of(component, node)
        await (self.api if key is None else self._live()[key]).set_clock.remote(self.clock.spec)
        self.co.restarted(key)

    async def revive(self) -> list[str]:
        """The apiserver's clock, should Ray have restarted it on its own (the components'
        are started by ``settle_watch``)."""
        try:
            started = await asyncio.wait_for(self.api.clock_started.remote(), REVIVE_TIMEOUT)
        except (asyncio.TimeoutError, RayActorError, ActorUnavailableError):
            return []
        if started:
            return []
        await self.api.set_clock.remote(self.clock.spec)
        return ["apiserver"]

    async def write(self, requests: Sequence[Request]) -> list[Outcome]:
        self.co.wrote()
        return await self.api.write_clocked.remote(self.clock.now(), pack(requests))

    async def command(self, host: Any, command: Command) -> Any:
        """At this instant; what the host writes in response is the coordinator's to wait for."""
        answer = await host.command.remote(command, self.clock.now())
        self.co.told(command.node)
        return answer

    async def add_host(self, host: Any, key: int) -> None:
        await host.set_clock.remote(self.clock.spec)
        await host.prime.remote()
        await self.watch_components([key])
        self.co.wrote()

    def quiet(self, now: float) -> bool:
        """What the components answered when the instant settled."""
        return self.co.quiet(self._live(), now, SETTLE_HORIZON)
