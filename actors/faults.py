"""The faults the Ray runtime does to processes: kill a node host, stop a Ray node, restart
an actor, and start again the clock of an actor Ray restarted on its own; and the end of
every process when the cluster shuts down.

Owns ``RayFaults``, the part of ``RayCluster`` (``cluster.py``) that acts on actors rather
than on emulated objects; the faults both runtimes carry out alike (a kubelet stopped, a
partition, a node removed) are in ``cluster/runtime/cluster.py``. In a stepped cluster a
restarted actor is given the instant the cluster stands at (``coordinator.py``). It remembers what it
broke in the cluster's ``Fleet``, so health checks skip the dead and random chaos picks
among the living.
"""

from __future__ import annotations

import asyncio
import shutil
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import ActorUnavailableError, RayActorError

from actors import raycluster
from actors.restart import restart as restart_actor
from cluster.runtime.cluster import Fleet, RuntimeRefused

if TYPE_CHECKING:
    from actors.coordinator import RayCoordinator
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
    stepped: RayCoordinator | None
    data_dir: str | None

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
        if self.stepped is not None:  # the new incarnation goes on at this instant
            await self.stepped.restarted(component, node)
        return took

    async def revive(self) -> list[str]:
        """Start the clock of every live actor whose process Ray restarted on its own (a crash
        nobody planned, unlike the ``restart`` action, which starts it itself); returns
        which ones. An actor that does not answer within a few seconds is left for the
        next call."""
        if self.stepped is not None:  # the components' clocks are started as they are asked
            return await self.stepped.revive()
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
    try:
        ray.kill(actor)
    except Exception:  # already gone with its Ray node; nothing left to stop
        pass
