"""The local runtime: the apiserver and every component in this process, over a virtual clock.

Owns a discrete-event loop in the manner of SimPy. Time stands still while the cluster
works through an instant and jumps to the next wakeup when nothing more happens at it;
nothing ever waits on the wall clock. Within an instant, ``settle`` runs rounds: in each,
every live component (in a fixed order: the control plane, then the hosts in index order)
whose watch has new events, whose earlier writes failed, whose ``wake_at`` has come or
which has just started gets one batch, and its writes are applied at once, in order.
Events written in a round reach watchers in the next, so a write takes no emulated time
to be seen. The same scenario and seed therefore give the same trace of writes, byte for
byte (``trace.py``).

A run and a server differ in one thing: what a component's fault does. Under ``kubemu
run`` (no ``on_fault``) a component that raises, or that keeps asking to run at one
instant without writing (a livelock), stops the run loudly (``Stuck`` names it). Under
``kubemu serve`` (``on_fault`` given) nothing a client sends may stop the server: the
fault is reported to ``on_fault`` with the component's state, a raising component is
rebuilt and restarts from its informers (as a crashed controller restarts), and a
spinning one is held until the clock next moves.

Chaos that needs processes (``killHost``, ``killRayNode``) is refused; a restart builds a
new instance of the component (the apiserver keeps its objects and continues its
resourceVersion sequence, as one recovering from a complete log does).

Called by the scenario driver and ``kubemu bench local`` through the ``Cluster`` interface.
"""

from __future__ import annotations

import asyncio
import gc
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..api import codec
from ..api.requests import Bind, Outcome, Request, Watch
from ..apiserver.apiserver import APIServer
from ..apiserver.hosted import restart_in_memory
from ..apiserver.storage import DEFAULT_WINDOW, Window
from . import gcpolicy
from .cluster import SETTLE_HORIZON, Cluster, Informer, Layout, RuntimeRefused
from .commands import Command
from .component import RESTART, START, Batch, Component, ComponentSpec, Failure, WatchEvent
from .reflector import Reflector
from .trace import Trace
from .turns import due, quiet_after, wants_turn

MAX_IDLE_SPINS = 100  # batches a component may ask for at one instant without writing anything
REPORT_EVERY = 60.0  # emulated seconds between two reports of one component's spin


YIELD_EVERY = 64  # rounds of one settle between turns of the event loop


class Stuck(RuntimeError):
    """A component keeps asking to run at the same instant without doing anything."""


@dataclass(eq=False)
class Member:
    """A running component and what the runtime keeps for it."""

    role: str
    spec: ComponentSpec
    component: Component
    reflector: Reflector
    boot: str = START
    failures: list[Failure] = field(default_factory=list)
    wake_at: float | None = None
    next_change: float | None = None
    alive: bool = True
    spins: int = 0
    held: bool = False  # a server's faulty component, skipped until the clock moves


def _state(m: Member, now: float) -> str:
    try:
        return repr(m.component.inspect(now))[:2000]
    except Exception as e:  # the report of a fault must not fail in turn
        return f"(inspect failed: {type(e).__name__}: {e})"


class LocalInformer:
    def __init__(self, cluster: LocalCluster, kinds: Sequence[str] | Sequence[Watch]):
        self.cluster = cluster
        self.reflector = Reflector(kinds)

    async def poll(self, timeout: float = 0.0) -> list[WatchEvent]:
        return self.cluster.poll(self.reflector)


class LocalCluster(Cluster):
    runtime = "local"

    def __init__(
        self,
        layout: Layout,
        *,
        seed: int = 1,
        window: Window = DEFAULT_WINDOW,
        trace: TextIO | None = None,
        start: float = 0.0,
        on_fault: Callable[[str], None] | None = None,
    ):
        super().__init__()
        self.seed, self.window = seed, window
        self.on_fault = on_fault  # None: a component's fault ends the run (see the module docstring)
        self.api = APIServer(seed=seed, window=window, start=start)  # built-in objects created at the start
        if trace is not None:
            self.api.set_journal(Trace(trace, self.now))
        self._now = start  # emulated seconds since the clock's epoch; ``kubemu serve`` starts at the wall time
        self.members: list[Member] = [self._member(role, spec) for role, spec in layout.control.items()]
        for spec in layout.hosts:
            self.fleet.add_host(spec)
            self.members.append(self._member("host", spec))
        self.binds: list[float] = []  # wall time of each successful bind, for benchmarks
        self._gc_before: tuple[int, int, int] | None = None  # the caller's collector thresholds
        self._held: list[Member] = []  # spinning components held until the clock moves (serve only)
        self._reported: dict[str, float] = {}  # when each component's spin was last reported

    def _member(self, role: str, spec: ComponentSpec, boot: str = START) -> Member:
        component = spec.build()
        return Member(role, spec, component, Reflector(component.watches()), boot)

    # -- time ------------------------------------------------------------------------------
    def now(self) -> float:
        return self._now

    async def start(self) -> int:
        if self._gc_before is None:
            self._gc_before = gcpolicy.raised()  # the caller's, restored at shutdown
        await self.settle()
        return sum(len(spec.nodes) for spec in self.fleet.hosts)

    async def settle(self) -> None:
        # Once the components are done, Nodes created or deleted through the API start or
        # stop kubelets (``nodeclaim.py``), whose first batches run at this instant too.
        rounds = 0
        while self._round() or await self.claim_nodes():
            rounds += 1
            if rounds % YIELD_EVERY == 0:
                # A component writing at one instant without end (a controller whose pods never
                # match its own selector) must not stop the server answering: let the event
                # loop serve requests between rounds. A run is unaffected (nothing else waits).
                await asyncio.sleep(0)

    async def advance(self, until: float | None) -> None:
        times = [m.wake_at for m in self.members if m.alive and not m.held and m.wake_at is not None]
        if until is not None:
            times.append(until)
        if times:
            self._now = max(self._now, min(times))
        self._release_held()

    def _release_held(self) -> None:
        """Components held for a fault run again at the new instant."""
        for m in self._held:
            m.held = False
        self._held = []

    def next_wakeup(self) -> float | None:
        return min((m.wake_at for m in self.members if m.alive and not m.held and m.wake_at is not None), default=None)

    async def quiet(self, now: float) -> bool:
        return all(quiet_after(m.failures, m.next_change, now, SETTLE_HORIZON) for m in self.members if m.alive)

    # -- the loop ----------------------------------------------------------------------------
    def _round(self) -> bool:
        """One round at the current instant; whether any component ran."""
        ran = False
        for m in list(self.members):
            if not m.alive or m.held:
                continue
            try:
                ran = self._step(m) or ran
            except Stuck:
                raise
            except Exception as e:
                if self.on_fault is None:
                    raise
                self._crashed(m, e)
                ran = True
        return ran

    def _step(self, m: Member) -> bool:
        events = self.poll(m.reflector)
        timer = due(m.wake_at, self._now)
        if not wants_turn(events, m.failures, m.boot, timer):
            return False
        self._reconcile(m, events, timer_only=not (events or m.failures or m.boot))
        return True

    def _reconcile(self, m: Member, events: list[WatchEvent], timer_only: bool) -> None:
        batch = Batch(self._now, events, m.failures, m.boot)
        m.failures, m.boot = [], ""
        result = m.component.reconcile(batch)
        m.wake_at, m.next_change = result.wake_at, result.next_change
        if timer_only and not result.writes and m.wake_at is not None and m.wake_at <= self._now:
            m.spins += 1
            if m.spins > MAX_IDLE_SPINS:
                self._spinning(m)
        else:
            m.spins = 0
        if result.writes:
            self._write(m, result.writes)

    def _spinning(self, m: Member) -> None:
        """A livelock: fatal for a run; for a server, reported and held until the clock moves."""
        what = f"{m.spec.name}: asks to run again at {self._now}s without writing anything"
        if self.on_fault is None:
            raise Stuck(what)
        if self._now >= self._reported.get(m.spec.name, -REPORT_EVERY) + REPORT_EVERY:
            self._reported[m.spec.name] = self._now  # a spin that recurs every tick is told once a minute
            self.on_fault(f"kubemu: {what}; held until the clock moves. Its state: {_state(m, self._now)}")
        m.spins, m.wake_at, m.held = 0, self._now, True  # runs again once the clock has moved
        self._held.append(m)

    def _crashed(self, m: Member, e: Exception) -> None:
        """A component raised while serving: reported with its trace, rebuilt, restarted."""
        trace = "".join(traceback.format_exception(e)).rstrip()
        assert self.on_fault is not None
        self.on_fault(f"kubemu: {m.spec.name} failed at {self._now}s and restarts from its informers:\n{trace}")
        if m in self.members:
            # Held until the clock moves, so a component that fails on what it relists
            # restarts once an instant (a crash loop), not forever within one.
            new = self._member(m.role, m.spec, RESTART)
            new.held = True
            self.members[self.members.index(m)] = new
            self._held.append(new)

    def _write(self, m: Member, writes: list[Request]) -> None:
        outcomes = self.api.write(writes, self._now)
        m.failures = [Failure(req, err) for req, err in zip(writes, outcomes) if err is not None]
        if m.role in ("scheduler", "yunikorn"):
            t = time.perf_counter()
            self.binds += [t for req, err in zip(writes, outcomes) if err is None and isinstance(req, Bind)]

    def poll(self, reflector: Reflector) -> list[WatchEvent]:
        """Everything ``reflector``'s watch has not seen yet (a list for kinds it must list)."""
        api, out = self.api, []
        for kind in reflector.rv:
            selector = reflector.node_names(kind)
            rv = reflector.rv[kind]
            if rv is None:
                out += reflector.on_list(kind, api.list(kind, selector))
            else:
                out += reflector.on_watch(kind, api.watch({kind: rv}, selector)[kind])
        return out

    # -- the driver's view --------------------------------------------------------------------
    async def write(self, requests: Sequence[Request]) -> list[Outcome]:
        return self.api.write(list(requests), self._now)

    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]:
        got: dict[str, Any] = codec.clone(self.api.get(kind, ns, name))
        return got

    def informer(self, kinds: Sequence[str] | Sequence[Watch]) -> LocalInformer:
        return LocalInformer(self, kinds)

    async def catch_up(self, informer: Informer) -> list[WatchEvent]:
        return await informer.poll(0.0)

    def resource_version(self) -> int:
        return self.api.resource_version()

    # -- components ----------------------------------------------------------------------------
    def _host_member(self, node: str) -> Member:
        i = self.fleet.host_index.get(node)
        if i is None:
            raise RuntimeRefused(f"node: {node!r} is not a node of this cluster")
        spec = self.fleet.hosts[i]
        return next(m for m in self.members if m.spec is spec and m.alive)

    async def command(self, command: Command) -> Any:
        m = self._host_member(command.node)
        detail = m.component.handle(command, self._now)
        m.wake_at = self._now  # what it wrote goes out in a batch at this instant
        return detail

    async def inspect(self, role: str) -> list[dict[str, Any]]:
        return [m.component.inspect(self._now) for m in self.members if m.alive and m.role == role]

    async def restart(self, component: str, node: str | None = None) -> float:
        if component == "apiserver":
            self.api = restart_in_memory(self.api, self.seed, self.window)
            return 0.0
        old: Member | None
        if component == "host":
            old = self._host_member(node or "")
            self.fleet.host_restarted(self.fleet.hosts.index(old.spec))
        else:
            old = next((m for m in self.members if m.alive and m.role == component), None)
            if old is None:
                raise RuntimeRefused(f"component: {component!r} is not a component of this cluster")
            await self._carry_counters(component)
        new = self._member(old.role, old.spec, RESTART)
        self.members[self.members.index(old)] = new
        return 0.0

    async def add_host(self, spec: ComponentSpec) -> None:
        self.fleet.add_host(spec)
        self.members.append(self._member("host", spec))

    async def shutdown(self) -> None:
        self.members = []
        if self._gc_before is not None:
            gc.set_threshold(*self._gc_before)
            self._gc_before = None
