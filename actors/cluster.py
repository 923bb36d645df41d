"""An emulated cluster on Ray: its actors, where they run, and the faults done to them.

Owns bringing up the apiserver, scheduler, controller-manager and node-host actors
(placement: ``raycluster.py``), registering nodes before emulated time starts, starting
every actor's clock together, and the chaos actions that act on actors: kill a node's
kubelet, kill a host process, cut a node's heartbeats, restart a control-plane actor, stop
a whole Ray node. It remembers what it broke (dead hosts and nodes, partitions) so health
checks skip the dead and random chaos picks among the living. Called by the scenario
driver and by ``kubemu bench``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
import uuid

import ray
from ray.exceptions import ActorUnavailableError, RayActorError

from actors import raycluster
from actors.apiserver import APIServerActor
from actors.controllers import ControllerManagerActor
from actors.nodehost import NodeHostActor
from actors.restart import restart as restart_actor
from actors.scheduler import SchedulerActor
from cluster.clock import Clock, ClockSpec
from cluster.scenario.runner import expand_pools, pack

REVIVE_TIMEOUT = 5.0  # real seconds an actor has to say whether its clock runs


class Cluster:
    def __init__(
        self,
        node_configs: list,
        *,
        seed: int = 1,
        time_scale: float = 1.0,
        nodes_per_host: int = 0,
        window: int = 50_000,
        scheduler_config=None,
        taken=None,
        ray_nodes: int = 0,
        durable: bool = True,
    ):
        self.time_scale = time_scale
        self.taken = {} if taken is None else taken  # namePrefix -> next index, for addNodes
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.ray_ids = raycluster.node_ids() if ray_nodes >= 2 else []
        pin = raycluster.pinned(self.ray_ids[0]) if self.ray_ids else {}
        # The apiserver's durable log lives here for the run (DESIGN §4, durability).
        self.data_dir = tempfile.mkdtemp(prefix="kubemu-apiserver-") if durable else None
        # Restartable actors get the apiserver by name: Ray keeps a handle argument in its
        # object store, where a restart cannot count on finding it (Ray issue 53727).
        self.api_name = api_name = f"kubemu-apiserver-{uuid.uuid4().hex[:12]}"
        self.api = APIServerActor.options(name=api_name, **pin).remote(seed, window, time_scale, self.data_dir)
        self.scheduler = SchedulerActor.options(**pin).remote(api_name, seed, time_scale, scheduler_config)
        self.controllers = ControllerManagerActor.options(**pin).remote(api_name, time_scale)
        cpus = int(ray.available_resources().get("CPU", os.cpu_count() or 1))
        self.hosts: list = []
        self.host_index: dict[str, int] = {}  # node name -> its host's index in ``hosts``
        self.nodes_of: dict[int, list[str]] = {}  # host index -> its node names
        self.ray_node_of: dict[int, int] = {}  # host index -> Ray node index
        self.dead_hosts: set[int] = set()
        self.dead_nodes: set[str] = set()
        self.removed_nodes: set[str] = set()
        self.partitioned: dict[str, float] = {}  # node -> emulated time its partition ends
        self.restarts: list[tuple[str, float]] = []  # (component, real seconds until it answered)
        self._carried: dict[str, int] = {}  # the scheduler's counters from before its restarts
        self.next_index = 0
        for chunk in pack(node_configs, nodes_per_host, max(cpus, len(self.ray_ids))):
            self._new_host(chunk)

    def _new_host(self, configs: list):
        i = len(self.hosts)
        options = {}
        if self.ray_ids:
            self.ray_node_of[i] = i % len(self.ray_ids)
            options = raycluster.pinned(self.ray_ids[self.ray_node_of[i]])
        host = NodeHostActor.options(**options).remote(self.api_name, configs, self.next_index, self.time_scale)
        self.next_index += len(configs)
        self.hosts.append(host)
        self.nodes_of[i] = [c.name for c in configs]
        for cfg in configs:
            self.host_index[cfg.name] = i
        return host

    async def add_nodes(self, pool) -> list[str]:
        """A new host for the nodes of ``pool``, registered on the running clock."""
        configs = expand_pools([pool], self.taken)
        if not configs:
            return []
        host = self._new_host(configs)
        await host.start_clock.remote(self.clock.spec.real_start)
        await host.register.remote()
        return [c.name for c in configs]

    async def register_nodes(self) -> int:
        return sum(await asyncio.gather(*[h.register.remote() for h in self.hosts]))

    async def start_clock(self) -> None:
        start = time.time()
        self.clock.start(start)
        actors = [self.api, self.scheduler, self.controllers, *self.hosts]
        await asyncio.gather(*[a.start_clock.remote(start) for a in actors])

    async def scheduler_stats(self) -> dict:
        """The scheduler's counters over the whole run, across its restarts."""
        now = await self.scheduler.stats.remote()
        return {k: v + self._carried.get(k, 0) if k in self._carried else v for k, v in now.items()}

    async def revive(self) -> list[str]:
        """Start the clock of every live actor whose process Ray restarted on its own (a crash
        nobody planned, unlike the ``restart`` action, which starts it itself); returns
        which ones. An actor that does not answer within a few seconds is left for the
        next call."""
        actors = [("apiserver", self.api), ("scheduler", self.scheduler), ("controller-manager", self.controllers)]
        actors += [(f"host of {self.nodes_of[i][0]}", h) for i, h in enumerate(self.hosts) if i not in self.dead_hosts]
        revived = []
        for name, actor in actors:
            try:
                started = await asyncio.wait_for(actor.clock_started.remote(), REVIVE_TIMEOUT)
            except (asyncio.TimeoutError, RayActorError, ActorUnavailableError):
                continue  # restarting still, or gone: nothing to do now
            if not started:
                await actor.start_clock.remote(self.clock.spec.real_start)
                revived.append(name)
        return revived

    def live_hosts(self) -> list:
        return [h for i, h in enumerate(self.hosts) if i not in self.dead_hosts]

    def live_nodes(self, now: float) -> list[str]:
        """Nodes whose kubelet runs and reaches the apiserver: fair game for random chaos."""
        return [
            n
            for n in self.host_index
            if n not in self.dead_nodes and n not in self.removed_nodes and self.partitioned.get(n, -1.0) <= now
        ]

    async def health(self) -> list[str]:
        problems = []
        stats = await self.scheduler.stats.remote()
        if stats.get("error"):
            problems.append(f"scheduler: {stats['error']}")
        problems += [f"controller-manager: {e}" for e in await self.controllers.healthy.remote()]
        for h in self.live_hosts():
            problems += [f"node host: {e}" for e in await h.healthy.remote()]
        return problems

    def shutdown(self) -> None:
        # The apiserver goes last, once its clients are gone: a client's watch in flight
        # when the apiserver dies would be retried (and Ray would say so on the console).
        clients = [self.scheduler, self.controllers, *self.live_hosts()]
        for a in clients:
            _kill(a)
        time.sleep(0.5)  # a killed process takes a moment to exit (asking it would be retried)
        _kill(self.api)
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    # -- chaos on actors ----------------------------------------------------------------
    def host_of(self, node: str):
        return self.hosts[self.host_index[node]]

    async def kill_node(self, node: str) -> str:
        if node in self.dead_nodes:
            return f"{node} is already down"
        await self.host_of(node).kill_node.remote(node)
        self.dead_nodes.add(node)
        return ""

    async def kill_host(self, node: str) -> list[str]:
        """Kill the host process holding ``node``; returns every node that went with it."""
        i = self.host_index[node]
        if i in self.dead_hosts:
            return []
        ray.kill(self.hosts[i], no_restart=True)
        self.dead_hosts.add(i)
        self.dead_nodes.update(self.nodes_of[i])
        return list(self.nodes_of[i])

    async def partition(self, node: str, duration: float | None, now: float) -> None:
        await self.host_of(node).partition.remote(node, duration)
        self.partitioned[node] = float("inf") if duration is None else now + duration

    async def restart(self, component: str, node: str | None = None) -> float:
        """Kill a control-plane actor's process, or the host process holding ``node``, and
        wait until Ray has started it again. A restarted host brings every node in it back
        (a rebooted rack), and its kubelets reconcile the pods they find."""
        if component == "host":
            i = self.host_index[node]
            if i in self.dead_hosts:
                raise ValueError(f"node: the host holding {node} was killed for good")
            handle = self.hosts[i]
        else:
            handle = {"apiserver": self.api, "scheduler": self.scheduler, "controller-manager": self.controllers}[
                component
            ]
        if component == "scheduler":  # a new process counts from zero: keep what the old one counted
            before = await self.scheduler.stats.remote()
            for k, v in before.items():
                if isinstance(v, int) and not isinstance(v, bool) and k != "pending":
                    self._carried[k] = self._carried.get(k, 0) + v
        took = await restart_actor(handle, self.clock.spec.real_start)
        if component == "host":
            self.dead_nodes.difference_update(set(self.nodes_of[i]) - self.removed_nodes)
            for n in self.nodes_of[i]:
                self.partitioned.pop(n, None)
        self.restarts.append((component if node is None else f"host of {node}", took))
        return took

    def kill_ray_node(self, index: int) -> list[str]:
        """Stop Ray node ``index`` and every host on it; returns the nodes that went down."""
        raycluster.kill_ray_node(index)
        down = []
        for i, r in self.ray_node_of.items():
            if r == index and i not in self.dead_hosts:
                self.dead_hosts.add(i)
                self.dead_nodes.update(self.nodes_of[i])
                down += self.nodes_of[i]
        return down

    async def remove_nodes(self, names: list[str]) -> list:
        """Decommission nodes: a live kubelet is stopped first (else it would register its
        Node again), then the Node objects are deleted; pod GC then removes their pods."""
        for n in names:
            if n not in self.dead_nodes:
                await self.kill_node(n)
        self.removed_nodes.update(names)
        return await self.api.delete.remote("Node", [("", n, None, None) for n in names])


def _kill(actor) -> None:
    try:
        ray.kill(actor)
    except Exception:  # already gone with its Ray node; nothing left to stop
        pass
