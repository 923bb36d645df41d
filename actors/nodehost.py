"""A node-host Ray actor: many emulated nodes (kubelets) in one process (DESIGN §3).

A thin shell around ``cluster.kubelet.host.NodeHost``. One loop per host: long-poll the
apiserver for pods on this host's nodes, hand the events to the kubelets, run the timers
that are due, and flush everything the kubelets wrote as one batched call per kind of write.

Restartable (``max_restarts=-1``): ``actors/restart.py``'s ``restart(handle, real_start)``
kills the process, waits for Ray's new one to answer ``ping`` and calls ``start_clock``
once, which in a restarted process re-registers the nodes (the Node objects exist: their
status and Lease are posted again, so the node lifecycle controller lifts Unknown and the
unreachable taints) before the loop starts; the loop's fresh informer lists the pods bound
to the host's nodes, and the kubelets adopt them without restarting anything (upstream's
kubelet restart). Nodes stopped by ``kill_node`` come back alive with the process. A host
killed with ``ray.kill(h, no_restart=True)`` (the killHost chaos) stays dead. ``api`` may
be the apiserver's actor name: a handle argument would sit in Ray's object store, which a
restart cannot count on (Ray issue 53727).
"""

from __future__ import annotations

import asyncio
import time
import warnings

import ray

from actors.informer import Informer
from actors.profiling import Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.kubelet.host import NodeHost

MAX_WAIT = 0.25  # real seconds a host sleeps in a watch when no timer is due sooner


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class NodeHostActor(Profiled):
    def __init__(self, api, configs: list, first_index: int, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        self.api = api = ray.get_actor(api) if isinstance(api, str) else api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.host = NodeHost(configs, first_index)
        self.informer = Informer(api, ["Pod"], sorted(self.host.node_names()))
        self._task: asyncio.Task | None = None
        self._clock_started = False
        self.errors: list[str] = []

    async def register(self) -> int:
        """Create this host's Node objects (before the clock starts: emulated time 0)."""
        self.host.register_all(self.clock.now())
        await self._flush()
        return len(self.host.node_names())

    async def start_clock(self, real_start: float) -> None:
        """Start emulated time and the loop; a second call does nothing. In a restarted
        process (Ray re-ran ``__init__``) the nodes are registered again first."""
        if self._clock_started:
            return
        self._clock_started = True  # before any await: a concurrent call must see it
        self.profile.start("nodehost")
        self.clock.start(real_start)
        if _reconstructed():
            self.host.register_all(self.clock.now(), restarted=True)
            await self._flush()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def kill_node(self, name: str) -> bool:
        return self.host.kill_node(name)

    async def partition(self, name: str, duration: float | None) -> None:
        self.host.partition(name, self.clock.now(), duration)

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


def _reconstructed() -> bool:
    """Whether Ray restarted this actor (its own property reads a deprecated attribute and
    warns on every call; the answer is what we need)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ray.get_runtime_context().was_current_actor_reconstructed
