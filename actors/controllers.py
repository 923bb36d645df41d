"""The controller-manager Ray actor: a thin shell around the controllers in ``cluster/controllers``.

Hosts the disruption controller and the node lifecycle controller's NoSchedule tainting
pass (Taint Nodes by Condition; issue 6 adds the rest of the node lifecycle controller and
the ReplicaSet and DaemonSet controllers). One loop: watch PodDisruptionBudgets, Nodes and,
once there is a PDB, pods; feed the events to the controllers, write the PDB statuses that
changed as one batched ``update_status`` call and the taint patches as one
``patch_node_taints`` call. (Watching pods costs a decode per pod event, which a cluster
without budgets should not pay.) The watch waits no longer than the controller's next
recheck (a ``disruptedPods`` entry expiring).
"""
from __future__ import annotations

import asyncio
import time

import ray

from actors.informer import Informer
from actors.profiling import Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.controllers.disruption import DisruptionController
from cluster.controllers.nodetaints import NodeTaintController

MAX_WAIT = 0.25


@ray.remote(num_cpus=0)
class ControllerManagerActor(Profiled):
    def __init__(self, api, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        self.api = api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.disruption = DisruptionController()
        self.node_taints = NodeTaintController()
        self.informer = Informer(api, ["PodDisruptionBudget", "Node"])
        self.pod_informer: Informer | None = None  # started with the first PDB
        self._task: asyncio.Task | None = None

    async def start_clock(self, real_start: float) -> None:
        self.profile.start("controllers")
        self.clock.start(real_start)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def healthy(self) -> list[str]:
        if self._task is not None and self._task.done() and self._task.exception():
            return [repr(self._task.exception())]
        return []

    async def _run(self) -> None:
        while True:
            nxt = self.disruption.next_recheck()
            wait = MAX_WAIT if nxt is None else min(MAX_WAIT, self.clock.real_delay(nxt - self.clock.now()))
            events = await self.informer.poll(0.0 if self.pod_informer is not None else max(0.0, wait))
            patches = []
            for kind, etype, obj in events:
                if kind == "Node":
                    patch = self.node_taints.on_node(etype, obj)
                    if patch is not None:
                        patches.append(patch)
                else:
                    self.disruption.on_pdb(etype, obj)
            if patches:
                await self.api.patch_node_taints.remote(patches)
            if self.pod_informer is None and self.disruption.pdb_count():
                self.pod_informer = Informer(self.api, ["Pod"])
            if self.pod_informer is not None:
                for _, etype, obj in await self.pod_informer.poll(max(0.0, wait)):
                    self.disruption.on_pod(etype, obj)
            writes = []
            for ns, name, status in self.disruption.sync(self.clock.now()):
                pdb = self.disruption.pdb(ns, name)
                uid = ((pdb or {}).get("metadata") or {}).get("uid", "")
                writes.append((ns, name, uid, status))
            if writes:
                await self.api.update_status.remote("PodDisruptionBudget", writes)

