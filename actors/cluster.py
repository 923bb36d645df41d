"""The Ray runtime: an emulated cluster whose apiserver and components are Ray actors.

Owns bringing the actors up (the apiserver, one ``ComponentActor`` per control-plane
component and per node host; placement in ``raycluster.py``), registering the nodes before
emulated time starts, starting every clock together, and the ``Cluster`` interface the
scenario driver and the benchmarks use (``cluster/runtime/cluster.py``). The faults that
act on processes are in ``faults.py``.

Two ways for time to go. ``stepped`` (every scenario run): the clocks are held and this
class is the coordinator of ``cluster/runtime/stepper.py``'s discrete-event loop: it asks
the components whether they are done with the instant (``ComponentActor.step``) until they
all are, then moves the apiserver's clock to the next wakeup, as fast as the components
keep up or, with a ``pace``, no faster than the wall clock times it. Otherwise (the
benchmarks, ``kubemu serve``) every clock runs by the wall clock times ``time_scale``.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
from collections.abc import Hashable, Sequence
from typing import Any

from ray.exceptions import ActorUnavailableError, RayActorError

from actors import raycluster
from actors.apiserver import APIServerActor
from actors.component import ComponentActor
from actors.faults import RayFaults
from actors.informer import Informer
from actors.packing import pack
from cluster.api.errors import StatusError
from cluster.api.requests import Outcome, Request, Watch
from cluster.apiserver.storage import DEFAULT_WINDOW, Window
from cluster.clock import Clock, ClockSpec
from cluster.runtime.cluster import SETTLE_HORIZON, Cluster, Layout, RuntimeRefused, drain
from cluster.runtime.cluster import Informer as InformerLike
from cluster.runtime.commands import Command
from cluster.runtime.component import ComponentSpec, WatchEvent
from cluster.runtime.stepper import Answer, Stepper

CATCH_UP_WAIT = 10.0  # real seconds the driver's watch has to catch up at the end of a run
SETTLE_PATIENCE = 120.0  # real seconds one instant may take before the run moves on regardless
SETTLE_NOTE_EVERY = 15.0  # real seconds between notes on an instant that is taking long
UNAVAILABLE_PAUSE = 0.05  # real seconds before asking again an actor Ray cannot reach for now


class RayCluster(RayFaults, Cluster):
    runtime = "ray"

    def __init__(
        self,
        layout: Layout,
        *,
        seed: int = 1,
        time_scale: float = 1.0,
        window: Window = DEFAULT_WINDOW,
        ray_nodes: int = 0,
        durable: bool = True,
        stepped: bool = False,
        pace: float | None = None,
    ):
        """``stepped``: time goes by ``Stepper`` (see the module docstring), ``pace`` its
        wall-clock bound; otherwise it runs at ``time_scale``."""
        super().__init__()
        self.time_scale = time_scale
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.stepper = Stepper(pace) if stepped else None
        self.virtual = stepped
        self._rv = 0  # the resourceVersion the coordinator's watch has looked up to
        self._watch: Informer | None = None  # the coordinator's watch over every kind a component watches
        self._dirty = True  # something was written (or told) since the coordinator's watch looked
        self._driver_behind = True  # the driver's watch has events to take
        self._driver_kinds: set[str] = set()
        self.ray_ids = raycluster.node_ids() if ray_nodes >= 2 else []
        self._pin = raycluster.pinned(self.ray_ids[0]) if self.ray_ids else {}
        # The apiserver's durable log lives here for the run (docs/architecture.md §6).
        self.data_dir = tempfile.mkdtemp(prefix="kubemu-apiserver-") if durable else None
        # Components get the apiserver by name: Ray keeps a handle argument in its object
        # store, where a restart cannot count on finding it (Ray issue 53727).
        self.api_name = f"kubemu-apiserver-{uuid.uuid4().hex[:12]}"
        # mypy ignores class decorators (python/mypy#3135): @ray.remote made these ActorClasses.
        self.api = APIServerActor.options(name=self.api_name, **self._pin).remote(  # type: ignore[attr-defined]
            seed, window, time_scale, self.data_dir
        )
        self.control = {role: self._actor(spec, self._pin) for role, spec in layout.control.items()}
        self.hosts: list[Any] = []  # actor handles, by fleet index
        self.ray_node_of: dict[int, int] = {}  # host index -> Ray node index
        for spec in layout.hosts:
            self._new_host(spec)

    def _actor(self, spec: ComponentSpec, options: dict[str, Any]) -> Any:
        # An ActorClass at runtime, which mypy cannot see (see __init__).
        return ComponentActor.options(**options).remote(self.api_name, spec, self.time_scale)  # type: ignore[attr-defined]

    def _new_host(self, spec: ComponentSpec) -> Any:
        i = self.fleet.add_host(spec)
        options: dict[str, Any] = {}
        if self.ray_ids:
            self.ray_node_of[i] = i % len(self.ray_ids)
            options = raycluster.pinned(self.ray_ids[self.ray_node_of[i]])
        self.hosts.append(self._actor(spec, options))
        return self.hosts[-1]

    def actors(self) -> list[tuple[str, Any]]:
        """(role, handle) of every live component actor."""
        return [*self.control.items(), *[("host", self.hosts[i]) for i in self.fleet.live_hosts()]]

    def _live(self) -> dict[Hashable, Any]:
        """Every live component actor by a key its restarts keep: its role, or its host index."""
        live: dict[Hashable, Any] = {role: actor for role, actor in self.control.items()}
        live.update((i, self.hosts[i]) for i in self.fleet.live_hosts())
        return live

    # -- time ---------------------------------------------------------------------------------
    def now(self) -> float:
        return self.clock.now()

    async def start(self) -> int:
        await self.prime()
        if self.stepper is None:
            await self.start_clock()
        else:
            self.clock.hold(0.0)
            await asyncio.gather(*[a.set_clock.remote(self.clock.spec) for a in [self.api, *self._live().values()]])
            await self._watch_components()
        return sum(len(spec.nodes) for spec in self.fleet.hosts)

    async def prime(self) -> None:
        """Every component's first batch before emulated time starts: the nodes register."""
        await asyncio.gather(*[a.prime.remote() for _, a in self.actors()])

    async def start_clock(self, roles: Sequence[str] | None = None) -> None:
        """Start emulated time now: on the apiserver and the components of ``roles`` (all)."""
        if not self.clock.started:
            self.clock.start(time.time())
        start = self.clock.spec.real_start
        actors = [a for role, a in self.actors() if roles is None or role in roles]
        await asyncio.gather(*[a.start_clock.remote(start) for a in [self.api, *actors]])

    async def quiet(self, now: float) -> bool:
        if self.stepper is not None:  # what they answered when the instant settled
            return self.stepper.quiet(self._live(), now, SETTLE_HORIZON)
        rv = await self.api.resource_version.remote()
        answers = await asyncio.gather(*[a.quiet.remote(rv, SETTLE_HORIZON) for _, a in self.actors()])
        return all(answers)

    # -- stepped time (cluster/runtime/stepper.py) ---------------------------------------------
    async def _watch_components(self, keys: Sequence[Hashable] | None = None) -> None:
        """Learn what the components ``keys`` (all: None) watch."""
        stepper = self.stepper
        assert stepper is not None  # a stepped cluster's
        live = self._live()
        keys = list(live) if keys is None else keys
        for key, watches in zip(keys, await asyncio.gather(*[live[k].watching.remote() for k in keys])):
            stepper.watching(key, watches)

    def _cover(self, kinds: set[str]) -> None:
        """The coordinator's own watch covers every kind a component or the driver watches
        (built again, from a list, when one is added)."""
        assert self.stepper is not None  # a stepped cluster's
        kinds = kinds | set(self.stepper.kinds())  # a new set: the driver's own kinds stay as they are
        if self._watch is None or kinds - set(self._watch.reflector.rv):
            self._watch = Informer(self.api, [Watch(kind, lazy=True) for kind in sorted(kinds)])
            self._dirty = True

    async def _look(self) -> list[WatchEvent]:
        """Read what was written since the coordinator's watch last looked: whom it concerns."""
        stepper, watch = self.stepper, self._watch
        assert stepper is not None and watch is not None  # a started stepped cluster's
        events = await drain(watch)
        self._rv = watch.reflector.resource_version()
        stepper.polled(self._rv, events)
        self._driver_behind |= any(ev.kind in self._driver_kinds for ev in events)
        self._dirty = False
        return events

    async def settle_watch(self, informer: InformerLike) -> list[WatchEvent]:
        """Ask the components due now, and those that writes concern, until every one is
        done with the instant and nobody wrote since the coordinator's watch looked; then
        the events the driver's ``informer`` has not had."""
        await self.claim_nodes()  # the driver's Node writes start or stop kubelets first
        stepper = self.stepper
        if stepper is None:
            return await super().settle_watch(informer)
        self._driver_kinds = set(informer.reflector.rv)
        self._cover(self._driver_kinds)
        if self._dirty:  # the driver wrote, or a component was told something
            await self._look()
        await self._settle(self.clock.now())
        if not self._driver_behind:
            return []
        self._driver_behind = False
        return await drain(informer)

    async def _settle(self, now: float, move: bool = True) -> None:
        """Ask until every live component is done with the instant ``now`` (``move``: the
        question moves its clock there; else it stays where its events put it)."""
        stepper = self.stepper
        assert stepper is not None  # a stepped cluster's
        began = noted = time.monotonic()
        while waiting := stepper.to_ask(live := self._live()):
            stepper.rounds += 1
            at = now if move else None
            if any(await asyncio.gather(*[self._ask(key, live[key], at) for key in waiting])):
                await self._look()
            if time.monotonic() - noted >= SETTLE_NOTE_EVERY:
                noted = time.monotonic()
                names = ", ".join(self._name(k) for k in stepper.to_ask(live))
                if noted - began >= SETTLE_PATIENCE:
                    self.log(f"kubemu: at {now:.1f}s {names} not done after {noted - began:.0f}s real; moving on")
                    stepper.give_up(live)
                    break
                self.log(f"kubemu: at {now:.1f}s waiting for {names} ({noted - began:.0f}s real so far)")

    async def _ask(self, key: Hashable, actor: Any, now: float | None) -> bool:
        """Ask one component (``ComponentActor.step``); whether it wrote since it last said."""
        stepper = self.stepper
        assert stepper is not None  # asked only in a stepped cluster
        try:
            answer: Answer = await actor.step.remote(now, stepper.need.get(key, 0))
        except ActorUnavailableError:  # restarting, or briefly out of reach: ask again
            await asyncio.sleep(UNAVAILABLE_PAUSE)
            return False
        except RayActorError as e:  # gone for good (a dead Ray node): it holds nothing up
            self.log(f"kubemu: {self._name(key)} is gone ({type(e).__name__}); the clock goes on without it")
            stepper.record(key, Answer(True, 1 << 62, None, None, writes=-1))
            return True
        if not answer.running:  # a process Ray restarted on its own: it goes on at this instant
            stepper.forget(key)
            await actor.set_clock.remote(self.clock.spec)
            self.log(f"kubemu: {self._name(key)} was restarted by Ray; its clock is running again")
            return True
        return stepper.record(key, answer)

    def _name(self, key: Hashable) -> str:
        return f"host of {self.fleet.hosts[key].nodes[0]}" if isinstance(key, int) else str(key)

    async def advance(self, until: float | None) -> None:
        """Move the clock to the next wakeup or ``until``. A component due then is asked (and
        so moved) by the next ``settle_watch``; the apiserver moves with the first write at
        the new instant, the other components with the first watch reply after it."""
        stepper = self.stepper
        if stepper is None:
            return
        live, now = self._live(), self.clock.now()
        if await self._stretch(live, now, until):
            return
        target = stepper.next_time(live, now, until)
        if target is None or target <= now:
            return
        at, wait = stepper.paced(now, target)
        if at is None:
            await asyncio.sleep(wait)  # ahead of the pace: the wall clock catches up first
            return
        self.clock.hold(at)  # the apiserver's moves with the first write at it (write_clocked)
        stepper.jumped()
        for key in live:
            answer = stepper.answers.get(key)
            if answer is not None and answer.wake_at is not None and answer.wake_at <= at:
                stepper.forget(key)

    async def _stretch(self, live: dict[Hashable, Any], now: float, until: float | None) -> bool:
        """Let the node hosts run their heartbeats ahead (``Stepper.stretch``), the components
        their writes concern catch up, and the clock stand at the last instant run; whether
        there was such a stretch. Not while the driver watches Leases (it would miss the
        renewals' instants)."""
        stepper = self.stepper
        assert stepper is not None  # a stepped cluster's
        plan = None
        if "Lease" not in self._driver_kinds:
            hosts = [k for k in live if isinstance(k, int)]
            plan = stepper.stretch(hosts, [k for k in live if not isinstance(k, int)], now, until)
        if plan is None:
            return False
        end, due = plan
        reached = [r for r in await asyncio.gather(*[self._beat(k, live[k], end) for k in due]) if r is not None]
        # The Lease watchers are asked while the coordinator looks (they had the renewals
        # meanwhile, as they were written); whoever had not seen them all is asked again.
        # None of them moves its clock: each is where its events, one instant a reply, put it.
        watchers = [k for k in stepper.watchers("Lease") if k in live]
        await asyncio.gather(self._look(), *[self._ask(k, live[k], None) for k in watchers])
        await self._settle(now, move=False)
        at = max([now, *reached])
        if at <= now:  # nobody ran ahead (busy, or restarted): the plain jump instead
            return False
        stepper.stretches += 1
        # A host that stopped short (it wrote more than a heartbeat, or could not run) while
        # another ran past it: its later renewals come after the others' (the report says so).
        if any((a := stepper.answers.get(k)) is None or (a.wake_at is not None and a.wake_at < at) for k in due):
            stepper.spills += 1
        self.clock.hold(at)
        stepper.jumped()
        for key in live:  # a host that stopped early is due again at once
            answer = stepper.answers.get(key)
            if answer is not None and answer.wake_at is not None and answer.wake_at <= at:
                stepper.forget(key)
        return True

    async def _beat(self, key: Hashable, actor: Any, end: float) -> float | None:
        """One host's part of a stretch (``ComponentActor.beat``): the last instant it ran,
        or None when it could not (asked again at the next instant, as ``_ask`` would)."""
        stepper = self.stepper
        assert stepper is not None  # a stepped cluster's
        try:
            answer, reached = await actor.beat.remote(end)
        except (ActorUnavailableError, RayActorError):
            stepper.forget(key)
            return None
        if not answer.running:
            stepper.forget(key)
            return None
        stepper.record(key, answer)
        return reached

    async def restart(self, component: str, node: str | None = None) -> float:
        took = await super().restart(component, node)
        if self.stepper is not None:  # the new incarnation goes on at this instant
            if component == "apiserver":
                await self.api.set_clock.remote(self.clock.spec)
                self.stepper.forget()  # every watch relists
            else:
                key: Hashable = self.fleet.host_index[node or ""] if component == "host" else component
                await self._live()[key].set_clock.remote(self.clock.spec)
                self.stepper.forget(key)
            self._dirty = True
        return took

    async def revive(self) -> list[str]:
        if self.stepper is None:
            return await super().revive()
        revived = []  # settle_watch starts the components' clocks; the apiserver's is here
        try:
            started = await asyncio.wait_for(self.api.clock_started.remote(), 5.0)
        except (asyncio.TimeoutError, RayActorError, ActorUnavailableError):
            return []
        if not started:
            await self.api.set_clock.remote(self.clock.spec)
            revived.append("apiserver")
        return revived

    def time_report(self) -> dict[str, Any]:
        if self.stepper is None:
            return {"mode": "running", "timeScale": self.time_scale}
        return self.stepper.report(self.clock.now())

    # -- the driver's view ----------------------------------------------------------------------
    async def write(self, requests: Sequence[Request]) -> list[Outcome]:
        if self.stepper is None:
            return await self.api.write_packed.remote(pack(requests))
        self._dirty = True
        return await self.api.write_clocked.remote(self.clock.now(), pack(requests))

    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]:
        got = await self.api.get.remote(kind, ns, name)
        if isinstance(got, StatusError):
            raise got
        return got

    def informer(self, watches: Sequence[str] | Sequence[Watch]) -> Informer:
        return Informer(self.api, watches)

    async def catch_up(self, informer: InformerLike) -> list[WatchEvent]:
        rv, out = await self.api.resource_version.remote(), []
        deadline = time.monotonic() + CATCH_UP_WAIT
        while informer.reflector.resource_version() < rv and time.monotonic() < deadline:
            out += await informer.poll(0.0 if self.stepper is not None else 0.05)
        return out

    # -- components ---------------------------------------------------------------------------
    def host_of(self, node: str) -> Any:
        i = self.fleet.host_index.get(node)
        if i is None:
            raise RuntimeRefused(f"node: {node!r} is not a node of this cluster")
        return self.hosts[i]

    async def command(self, command: Command) -> str:
        if self.stepper is None:
            answer = await self.host_of(command.node).command.remote(command)
        else:  # at this instant; what the host writes in response is the coordinator's to wait for
            answer = await self.host_of(command.node).command.remote(command, self.clock.now())
            self.stepper.forget(self.fleet.host_index[command.node])
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def inspect(self, role: str) -> list[dict]:
        now = None if self.stepper is None else self.clock.now()
        return list(await asyncio.gather(*[a.inspect.remote(now) for r, a in self.actors() if r == role]))

    async def add_host(self, spec: ComponentSpec) -> None:
        """A new host on the running clock: its nodes register at the current emulated time."""
        host = self._new_host(spec)
        if self.stepper is None:
            await host.start_clock.remote(self.clock.spec.real_start)
        else:
            await host.set_clock.remote(self.clock.spec)
        await host.prime.remote()
        if self.stepper is not None:
            await self._watch_components([len(self.hosts) - 1])
            self._dirty = True

    def placement(self) -> dict[str, list[str]]:
        """Which Ray node each host ran on, with its nodes (only when spread over Ray nodes)."""
        out: dict[str, list[str]] = {}
        for i, r in self.ray_node_of.items():
            out.setdefault(str(r), []).extend(self.fleet.hosts[i].nodes)
        return out

    async def shutdown(self) -> None:
        # The apiserver goes last, once its clients are gone: a client's watch in flight
        # when the apiserver dies would be retried (and Ray would say so on the console).
        for _, a in self.actors():
            _kill(a)
        await asyncio.sleep(0.5)  # a killed process takes a moment to exit (asking it would be retried)
        _kill(self.api)
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def _kill(actor) -> None:
    import ray

    try:
        ray.kill(actor)
    except Exception:  # already gone with its Ray node; nothing left to stop
        pass
