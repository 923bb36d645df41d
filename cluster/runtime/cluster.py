"""An emulated cluster as a driver sees it, whatever runs it: the interface both runtimes
implement, and the bookkeeping of what chaos did to it.

Owns ``Cluster``, the one interface the scenario driver (``cluster/scenario/driver.py``)
and the benchmarks use, implemented by the local runtime (``local.py``: every component in
this process over a virtual clock) and the Ray runtime (``actors/cluster.py``: components
in actors). Also owns ``Fleet``: which host runs which node, and which nodes and hosts are
dead, removed or partitioned, so chaos picks among the living and health checks skip the
dead; and the chaos operations both runtimes implement alike on top of node commands.
With a ``NodeClaimer`` (``manage_nodes``), ``claim_nodes`` starts a kubelet for each Node
created through the API that kubemu takes over and stops that of each Node deleted
(``nodeclaim.py``): the local runtime at the end of each round of an instant, the Ray
runtime before it settles one (and ``kubemu serve --runtime ray`` on a timer).

Time, as the driver sees it: ``now()`` is emulated seconds. In a ``virtual`` cluster
nothing moves until the driver calls ``advance``, which jumps to the next thing that
happens, and ``settle_watch`` returns once the cluster is done with the instant, with the
events of it: the local runtime (one process), and the Ray runtime when it steps
(``stepper.py``: what every scenario run on Ray does, with ``timeScale`` as a pace at most).
A running Ray cluster (benchmarks, ``kubemu serve``) has its time run by the wall clock:
``settle``/``advance`` return at once and a poll of the driver's informer is what waits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..api.requests import Delete, Outcome, Request, Watch
from .commands import Command, KillNode, Partition
from .component import CommandError, ComponentSpec, WatchEvent
from .nodeclaim import NodeClaimer
from .reflector import Reflector

SETTLE_HORIZON = 10.0  # emulated seconds: a change due sooner than this keeps a run going
RUNNING_POLL = 0.05  # real seconds the driver's watch may wait on a cluster whose clock runs


class Informer(Protocol):
    reflector: Reflector

    async def poll(self, timeout: float) -> list[WatchEvent]: ...


@dataclass
class Layout:
    """Which components make a cluster: the control plane by role ("scheduler",
    "controller-manager") and the node hosts, each with the nodes it runs."""

    control: dict[str, ComponentSpec]
    hosts: list[ComponentSpec]


class RuntimeRefused(ValueError):
    """An action this runtime cannot carry out (the message is one line naming it)."""


class Fleet:
    """The node hosts of a cluster, and what chaos has done to them."""

    def __init__(self) -> None:
        self.hosts: list[ComponentSpec] = []
        self.host_index: dict[str, int] = {}  # node name -> its host's index in ``hosts``
        self.dead_hosts: set[int] = set()
        self.dead_nodes: set[str] = set()
        self.removed_nodes: set[str] = set()
        self.partitioned: dict[str, float] = {}  # node -> emulated time its partition ends
        self.restarts: list[tuple[str, float]] = []  # (component, real seconds until it answered)

    def add_host(self, spec: ComponentSpec) -> int:
        i = len(self.hosts)
        self.hosts.append(spec)
        for name in spec.nodes:
            self.host_index[name] = i
        return i

    def live_nodes(self, now: float) -> list[str]:
        """Nodes whose kubelet runs and reaches the apiserver: fair game for random chaos."""
        return [
            n
            for n in self.host_index
            if n not in self.dead_nodes and n not in self.removed_nodes and self.partitioned.get(n, -1.0) <= now
        ]

    def live_hosts(self) -> list[int]:
        return [i for i in range(len(self.hosts)) if i not in self.dead_hosts]

    def host_died(self, i: int) -> list[str]:
        """Host ``i`` is gone for good: every node in it is dead; returns them."""
        if i in self.dead_hosts:
            return []
        self.dead_hosts.add(i)
        self.dead_nodes.update(self.hosts[i].nodes)
        return list(self.hosts[i].nodes)

    def host_restarted(self, i: int) -> None:
        """A restarted host brings every node in it back (a rebooted rack)."""
        nodes = set(self.hosts[i].nodes)
        self.dead_nodes.difference_update(nodes - self.removed_nodes)
        for n in nodes:
            self.partitioned.pop(n, None)


class Cluster(ABC):
    """A running emulated cluster (see the module docstring)."""

    runtime = ""
    virtual = True  # time moves only when the driver advances it (see the module docstring)

    def __init__(self) -> None:
        self.log: Callable[[str], None] = _quiet  # where the runtime says what the driver should show
        self.fleet = Fleet()
        # Per role ("scheduler", "yunikorn"): the counters of its instances before restarts.
        self.carried: dict[str, dict[str, int]] = {}
        self.claimer: NodeClaimer | None = None  # takes over Nodes created through the API
        self._claims: Informer | None = None  # the claimer's watch on Nodes

    # -- time and the driver's view -----------------------------------------------------
    @abstractmethod
    def now(self) -> float: ...

    @abstractmethod
    async def start(self) -> int:
        """Bring every component up, register the nodes, start emulated time; returns how
        many nodes registered."""

    @abstractmethod
    async def write(self, requests: Sequence[Request]) -> list[Outcome]: ...

    @abstractmethod
    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]:
        """One object as stored; raises the apiserver's ``StatusError`` (NotFound, ...)."""

    @abstractmethod
    def informer(self, kinds: Sequence[str] | Sequence[Watch]) -> Informer: ...

    async def settle(self) -> None:  # noqa: B027 - only the local runtime has instants to settle
        """Run everything due now until nothing more happens at this instant (local)."""

    async def advance(self, until: float | None) -> None:  # noqa: B027 - the wall clock moves ray's time
        """Move time on to the next thing that happens, at most to ``until`` (local)."""

    async def settle_watch(self, informer: Informer) -> list[WatchEvent]:
        """Let the cluster finish the instant (``settle``), then the events the driver's
        ``informer`` has not had: every write so far, in a virtual cluster."""
        await self.settle()
        return await drain(informer) if self.virtual else await informer.poll(RUNNING_POLL)

    def time_report(self) -> dict[str, Any]:
        """How emulated time went, for the run's report."""
        return {"mode": "virtual" if self.virtual else "running"}

    @abstractmethod
    async def quiet(self, now: float) -> bool:
        """Has the cluster settled: every component has seen every write, none is in flight,
        and no component will change anything by itself within ``SETTLE_HORIZON``?"""

    @abstractmethod
    async def catch_up(self, informer: Informer) -> list[WatchEvent]:
        """Poll ``informer`` until it has seen every write made so far; returns the events
        those polls gave."""

    # -- components ----------------------------------------------------------------------
    @abstractmethod
    async def command(self, command: Command) -> Any:
        """Hand a node command to the host running ``command.node``; returns its detail (a
        call's answer for ``ContainerExec`` and ``ContainerGet``)."""

    @abstractmethod
    async def inspect(self, role: str) -> list[dict[str, Any]]:
        """The ``inspect`` views of the live components of a role (scheduler, host, ...)."""

    @abstractmethod
    async def restart(self, component: str, node: str | None = None) -> float:
        """Restart a control-plane component, or the host holding ``node``; returns the real
        seconds it took."""

    @abstractmethod
    async def add_host(self, spec: ComponentSpec) -> None:
        """Start a new node host on the running clock (its nodes register)."""

    async def kill_host(self, node: str) -> list[str]:
        raise RuntimeRefused(f"killHost: the {self.runtime} runtime has no processes to kill (use runtime: ray)")

    def kill_ray_node(self, index: int) -> list[str]:
        raise RuntimeRefused(f"killRayNode: the {self.runtime} runtime has no Ray nodes (use runtime: ray)")

    async def health(self) -> list[str]:
        return []

    async def revive(self) -> list[str]:
        return []

    def placement(self) -> dict[str, list[str]]:
        return {}

    @abstractmethod
    async def shutdown(self) -> None: ...

    # -- chaos both runtimes carry out alike ---------------------------------------------
    async def kill_node(self, node: str) -> str:
        if node in self.fleet.dead_nodes:
            return f"{node} is already down"
        await self.command(KillNode(node))
        self.fleet.dead_nodes.add(node)
        return ""

    async def partition(self, node: str, duration: float | None, now: float) -> None:
        await self.command(Partition(node, duration))
        self.fleet.partitioned[node] = float("inf") if duration is None else now + duration

    async def remove_nodes(self, names: Sequence[str]) -> list[Outcome]:
        """Decommission nodes: a live kubelet is stopped first (else it would register its
        Node again), then the Node objects are deleted; pod GC then removes their pods."""
        for n in names:
            if n not in self.fleet.dead_nodes:
                await self.kill_node(n)
        self.fleet.removed_nodes.update(names)
        return await self.write([Delete("Node", "", n) for n in names])

    def manage_nodes(self, claimer: NodeClaimer | None) -> None:
        """Take over the Nodes created through the API that ``claimer`` says (none: None)."""
        self.claimer, self._claims = claimer, None

    async def claim_nodes(self) -> bool:
        """Start a kubelet for each Node the claimer takes over and stop the kubelet of each
        Node deleted through the API (``nodeclaim.py``); whether it did either."""
        if self.claimer is None:
            return False
        if self._claims is None:
            self._claims = self.informer([Watch("Node", lazy=True)])
        events = await self._claims.poll(0.0)
        if not events:
            return False
        adopt, release = self.claimer.decide(events, self.fleet, self.log)
        for name in release:
            try:
                await self.kill_node(name)  # "already down" for a node chaos killed
            except (RuntimeRefused, CommandError) as e:  # its host is gone: nothing runs it anyway
                self.log(f"kubemu: node {name} was deleted; stopping its kubelet: {e}")
            self.fleet.removed_nodes.add(name)
            self.log(f"kubemu: node {name} was deleted through the API; its kubelet stopped")
        for spec in adopt:
            self.fleet.dead_nodes.difference_update(spec.nodes)  # a name used again
            self.fleet.removed_nodes.difference_update(spec.nodes)
            await self.add_host(spec)
            self.log(f"kubemu: node {', '.join(spec.nodes)} was created through the API; a kubelet runs it")
        return bool(adopt or release)

    async def scheduler_stats(self, role: str = "scheduler") -> dict[str, Any]:
        """A scheduler's view with its counters over the whole run, across its restarts
        (``role``: the default scheduler, or ``yunikorn``); {} when it does not run."""
        views = await self.inspect(role)
        return self.with_carried(views[0] if views else {}, role)

    def with_carried(self, view: dict[str, Any], role: str = "scheduler") -> dict[str, Any]:
        """The live instance's counters plus those of the instances before its restarts."""
        carried = self.carried.get(role, {})
        return {k: v + carried.get(k, 0) if k in carried else v for k, v in view.items()}

    async def _carry_counters(self, role: str) -> None:
        """Before a scheduler restarts: a new instance counts from zero, keep the old counts."""
        if role not in ("scheduler", "yunikorn"):
            return
        carried = self.carried.setdefault(role, {})
        for k, v in (await self.scheduler_stats(role)).items():
            if isinstance(v, int) and not isinstance(v, bool) and k != "pending":
                carried[k] = v


def _quiet(_line: str) -> None:
    pass


async def drain(informer: Informer) -> list[WatchEvent]:
    """Everything written so far that ``informer`` watches, without waiting: a watch reply
    holds at most 10,000 events of a kind, and after a whole one every kind it watches has
    reached the same resourceVersion (the store's)."""
    out = await informer.poll(0.0)
    for _ in range(100_000):
        marks = informer.reflector.rv.values()
        if None not in marks and len(set(marks)) <= 1:
            break
        out += await informer.poll(0.0)
    return out
