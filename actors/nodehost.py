"""A node-host Ray actor: many emulated nodes (kubelets) in one process (DESIGN §3).

A thin shell around ``cluster.kubelet.host.NodeHost``. One loop per host: long-poll the
apiserver for pods on this host's nodes, hand the events to the kubelets, run the timers
that are due, and flush everything the kubelets wrote as one batched call per kind of write.
"""
from __future__ import annotations

import asyncio
import time

import ray

from actors.informer import Informer
from actors.profiling import Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.kubelet.host import NodeHost

MAX_WAIT = 0.25  # real seconds a host sleeps in a watch when no timer is due sooner


@ray.remote(num_cpus=0)
class NodeHostActor(Profiled):
    def __init__(self, api, configs: list, first_index: int, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        self.api = api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.host = NodeHost(configs, first_index)
        self.informer = Informer(api, ["Pod"], sorted(self.host.node_names()))
        self._task: asyncio.Task | None = None
        self.errors: list[str] = []

    async def register(self) -> int:
        """Create this host's Node objects (before the clock starts: emulated time 0)."""
        self.host.register_all(self.clock.now())
        await self._flush()
        return len(self.host.node_names())

    async def start_clock(self, real_start: float) -> None:
        self.profile.start("nodehost")
        self.clock.start(real_start)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def kill_node(self, name: str) -> bool:
        return self.host.kill_node(name)

    async def pressure(self, name: str, extra: dict, duration: float | None) -> None:
        self.host.pressure(name, extra, self.clock.now(), duration)
        await self._flush()

    async def device_health(self, name: str, resource: str, device, healthy: bool) -> str:
        """The device's ID, or ``error: <one line>`` for an unknown resource or device."""
        try:
            device_id = self.host.device_health(name, resource, device, healthy, self.clock.now())
        except ValueError as e:
            return f"error: {e}"
        await self._flush()
        return device_id

    async def device_plugin(self, name: str, resource: str, running: bool) -> str:
        """An empty string when done, or ``error: <one line>`` for a resource without a plugin."""
        try:
            self.host.device_plugin(name, resource, running, self.clock.now())
        except ValueError as e:
            return f"error: {e}"
        await self._flush()
        return ""

    async def pod_resources(self) -> tuple[dict, dict]:
        """(uid -> what the pod holds, node -> QoS cgroups, shared CPUs and devices)."""
        return self.host.pod_resources(self.clock.now()), self.host.node_resources()

    async def healthy(self) -> list[str]:
        if self._task is not None and self._task.done() and self._task.exception():
            return [repr(self._task.exception())]
        return self.errors

    async def _run(self) -> None:
        while True:
            now = self.clock.now()
            nxt = self.host.next_timer()
            wait = MAX_WAIT if nxt is None else min(MAX_WAIT, self.clock.real_delay(nxt - now))
            events = await self.informer.poll(wait)
            now = self.clock.now()
            if events:
                self.host.on_pod_events([(etype, obj) for _, etype, obj in events], now)
            self.host.tick(now)
            await self._flush()

    async def _flush(self) -> None:
        out = self.host.drain()
        if out.empty():
            return
        api, calls = self.api, []
        if out.node_creates:
            calls.append(api.create.remote(out.node_creates))
        if out.node_status:
            calls.append(api.update_status.remote("Node", [("", n, "", s) for n, s in out.node_status.items()]))
        if out.pod_status:
            calls.append(api.update_status.remote("Pod", list(out.pod_status.values())))
        if out.pod_deletes:
            calls.append(api.delete.remote("Pod", [(ns, n, uid, 0) for ns, n, uid in out.pod_deletes.values()]))
        if out.events:
            calls.append(api.create.remote(out.events))
        if out.leases:
            calls.append(api.renew_leases.remote(list(out.leases.items())))
        # Calls from one caller start in submission order, so statuses land before deletes.
        for result in await asyncio.gather(*calls):
            for r in result or ():
                if r is not None and r[0] not in (404, 409):
                    self.errors.append(f"{r[1]}: {r[2]}")
        del self.errors[:-20]

