"""The Ray runtime: an emulated cluster whose apiserver and components are Ray actors.

Owns bringing the actors up (the apiserver, one ``ComponentActor`` per control-plane
component and per node host, placed by ``raycluster.py``), registering the nodes before
emulated time starts, starting every clock together, and the ``Cluster`` interface the
scenario driver and the benchmarks use (``cluster/runtime/cluster.py``). The faults that
act on processes are ``faults.py``'s. Time goes one of two ways: ``stepped`` (every
scenario run), the clocks held and moved by ``coordinator.py``'s ``RayCoordinator``; or
(the benchmarks, ``kubemu serve``) every clock runs by the wall clock times ``time_scale``.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from collections.abc import Hashable, Sequence
from typing import Any

from actors import raycluster
from actors.apiserver import APIServerActor
from actors.component import ComponentActor
from actors.coordinator import RayCoordinator
from actors.faults import RayFaults
from actors.informer import Informer
from actors.packing import pack
from cluster.api.errors import StatusError
from cluster.api.requests import Outcome, Request, Watch
from cluster.apiserver.storage import DEFAULT_WINDOW, Window
from cluster.clock import Clock, ClockSpec
from cluster.runtime.cluster import SETTLE_HORIZON, Cluster, Layout, RuntimeRefused
from cluster.runtime.cluster import Informer as InformerLike
from cluster.runtime.commands import Command
from cluster.runtime.component import ComponentSpec, WatchEvent

CATCH_UP_WAIT = 10.0  # real seconds the driver's watch has to catch up at the end of a run


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
        """``stepped``: time goes by ``RayCoordinator`` (see the module docstring), ``pace``
        its wall-clock bound; otherwise it runs at ``time_scale``."""
        super().__init__()
        self.time_scale = time_scale
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.virtual = stepped
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
        self.stepped: RayCoordinator | None = None
        if stepped:  # it logs through ``self.log``, which the driver sets after this
            self.stepped = RayCoordinator(self.api, self.clock, self.fleet, pace, self._live, lambda s: self.log(s))

    def _actor(self, spec: ComponentSpec, options: dict[str, Any]) -> Any:
        # An ActorClass at runtime, which mypy cannot see (see __init__).
        return ComponentActor.options(**options).remote(self.api_name, spec, self.time_scale)  # type: ignore[attr-defined]

    def _new_host(self, spec: ComponentSpec) -> Any:
        i = self.fleet.add_host(spec)
        options: dict[str, Any] = {}
        if self.ray_ids:
            self.ray_node_of[i] = raycluster.deal(i, len(self.ray_ids))
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
        await (self.start_clock() if self.stepped is None else self.stepped.start())
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
        if self.stepped is not None:
            return self.stepped.quiet(now)
        rv = await self.api.resource_version.remote()
        answers = await asyncio.gather(*[a.quiet.remote(rv, SETTLE_HORIZON) for _, a in self.actors()])
        return all(answers)

    async def settle_watch(self, informer: InformerLike) -> list[WatchEvent]:
        await self.claim_nodes()  # the driver's Node writes start or stop kubelets first
        if self.stepped is None:
            return await super().settle_watch(informer)
        return await self.stepped.settle_watch(informer)

    async def advance(self, until: float | None) -> None:
        if self.stepped is not None:
            await self.stepped.advance(until)

    def time_report(self) -> dict[str, Any]:
        if self.stepped is None:
            return {"mode": "running", "timeScale": self.time_scale}
        return self.stepped.co.report()

    # -- the driver's view ----------------------------------------------------------------------
    async def write(self, requests: Sequence[Request]) -> list[Outcome]:
        if self.stepped is None:
            return await self.api.write_packed.remote(pack(requests))
        return await self.stepped.write(requests)

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
            out += await informer.poll(0.0 if self.stepped is not None else 0.05)
        return out

    # -- components ---------------------------------------------------------------------------
    def host_of(self, node: str) -> Any:
        i = self.fleet.host_index.get(node)
        if i is None:
            raise RuntimeRefused(f"node: {node!r} is not a node of this cluster")
        return self.hosts[i]

    async def command(self, command: Command) -> str:
        host = self.host_of(command.node)  # at this instant, in a stepped cluster
        answer = await (host.command.remote(command) if self.stepped is None else self.stepped.command(host, command))
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def inspect(self, role: str) -> list[dict]:
        now = None if self.stepped is None else self.clock.now()
        return list(await asyncio.gather(*[a.inspect.remote(now) for r, a in self.actors() if r == role]))

    async def add_host(self, spec: ComponentSpec) -> None:
        """A new host on the running clock: its nodes register at the current emulated time."""
        host = self._new_host(spec)
        if self.stepped is None:
            await host.start_clock.remote(self.clock.spec.real_start)
            await host.prime.remote()
        else:
            await self.stepped.add_host(host, len(self.hosts) - 1)

    def placement(self) -> dict[str, list[str]]:
        """Which Ray node each host ran on, with its nodes (only when spread over Ray nodes)."""
        return raycluster.placement(self.ray_node_of, [spec.nodes for spec in self.fleet.hosts])
