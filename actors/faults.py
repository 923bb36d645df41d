"""The faults the Ray runtime does to processes: kill a node host, stop a Ray node, restart
an actor, and start again the clock of an actor Ray restarted on its own.

Owns ``RayFaults``, the part of ``RayCluster`` (``cluster.py``) that acts on actors rather
than on emulated objects; the faults both runtimes carry out alike (a kubelet stopped, a
partition, a node removed) are in ``cluster/runtime/cluster.py``. It remembers what it
broke in the cluster's ``Fleet``, so health checks skip the dead and random chaos picks
among the living.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import ActorUnavailableError, RayActorError

from actors import raycluster
from actors.restart import restart as restart_actor
from cluster.runtime.cluster import Fleet, RuntimeRefused

if TYPE_CHECKING:
    from cluster.clock import Clock

REVIVE_TIMEOUT = 5.0  # real seconds an actor has to say whether its clock runs


class RayFaults:
    # Set by RayCluster (the handles are Ray actor handles) and by Cluster (``fleet``).
    api: Any
    control: dict[str, Any]
    hosts: list[Any]
    ray_node_of: dict[int, int]
    fleet: Fleet
    clock: Clock

    if TYPE_CHECKING:  # defined by RayCluster and Cluster, which this is mixed into

        def actors(self) -> list[tuple[str, Any]]: ...

        async def _carry_counters(self, role: str) -> None: ...

    async def kill_host(self, node: str) -> list[str]:
        """Kill the host process holding ``node``; returns every node that went with it."""
        i = self.fleet.host_index[node]
        if i not in self.fleet.dead_hosts:
            ray.kill(self.hosts[i], no_restart=True)
        return self.fleet.host_died(i)

    def kill_ray_node(self, index: int) -> list[str]:
        """Stop Ray node ``index`` and every host on it; returns the nodes that went down."""
        try:
            raycluster.kill_ray_node(index)
        except raycluster.RayClusterError as e:
            raise RuntimeRefused(str(e)) from None
        down: list[str] = []
        for i, r in self.ray_node_of.items():
            if r == index:
                down += self.fleet.host_died(i)
        return down

    async def restart(self, component: str, node: str | None = None) -> float:
        """Kill a control-plane actor's process, or the host process holding ``node``, and
        wait until Ray has started it again. A restarted host brings every node in it back
        (a rebooted rack), and its kubelets reconcile the pods they find."""
        if component == "host":
            i = self.fleet.host_index[node or ""]
            if i in self.fleet.dead_hosts:
                raise RuntimeRefused(f"node: the host holding {node} was killed for good")
            handle = self.hosts[i]
        elif component == "apiserver":
            handle = self.api
        elif component in self.control:
            handle = self.control[component]
        else:
            raise RuntimeRefused(f"component: {component!r} is not a component of this cluster")
        await self._carry_counters(component)
        took = await restart_actor(handle, self.clock.spec.real_start)
        if component == "host":
            self.fleet.host_restarted(i)
        self.fleet.restarts.append((component if node is None else f"host of {node}", took))
        return took

    async def revive(self) -> list[str]:
        """Start the clock of every live actor whose process Ray restarted on its own (a crash
        nobody planned, unlike the ``restart`` action, which starts it itself); returns
        which ones. An actor that does not answer within a few seconds is left for the
        next call."""
        actors = [("apiserver", self.api), *self.control.items()]
        actors += [(f"host of {self.fleet.hosts[i].nodes[0]}", self.hosts[i]) for i in self.fleet.live_hosts()]
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

    async def health(self) -> list[str]:
        problems = []
        for role, actor in self.actors():
            problems += [f"{role}: {e}" for e in await actor.healthy.remote()]
        return problems
