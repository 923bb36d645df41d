"""The controller-manager Ray actor: a thin shell around ``cluster.controllers.manager``.

Hosts the node lifecycle controller (heartbeats, Unknown conditions, NoExecute taints),
Taint Nodes by Condition, the NoExecute taint manager, pod GC, the disruption controller
and the ReplicaSet and DaemonSet controllers. One loop: poll one informer for the kinds
they watch (Nodes, Leases, Pods, PodDisruptionBudgets, ReplicaSets, DaemonSets),
hand the batch to the ``ControllerManager``, send the writes it returns as one batched
call per kind of call (in ``writes.CALLS`` order; refused items are reported back to the
controllers), and wait for the next batch no longer
than the earliest controller timer (a grace period ending, a tolerationSeconds deadline).

Restartable (chaos ``restart``): Ray re-runs ``__init__`` and the driver calls
``start_clock`` again; the fresh informer relists everything and the fresh controllers see
every node for the first time, so each gets a full grace period, as after an upstream
kube-controller-manager restart.
"""

from __future__ import annotations

import asyncio
import time

import ray
from ray.exceptions import RayActorError

from actors.informer import Informer
from actors.profiling import Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.controllers.manager import ControllerManager
from cluster.controllers.writes import CALLS, SINGLE, Writes

MAX_WAIT = 0.25  # real seconds: the longest one watch poll may block


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class ControllerManagerActor(Profiled):
    def __init__(self, api, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        # A name, not a handle: a handle argument sits in Ray's object store, where a restart
        # cannot count on finding it (Ray issue 53727).
        self.api = ray.get_actor(api) if isinstance(api, str) else api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.manager = ControllerManager()
        self.informer = Informer(self.api, self.manager.kinds)
        self.failed_writes = 0  # items the apiserver refused, or calls that never arrived
        self.last_error = ""
        self._task: asyncio.Task | None = None

    async def start_clock(self, real_start: float) -> None:
        self.clock.start(real_start)
        if self._task is None or self._task.done():
            self.profile.start("controllers")
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def healthy(self) -> list[str]:
        if self._task is not None and self._task.done() and self._task.exception():
            return [repr(self._task.exception())]
        return []

    async def _run(self) -> None:
        while True:
            events = await self.informer.poll(self._wait())
            self.manager.on_events(events, self.clock.now())
            writes = self.manager.sync(self.clock.now())
            if writes:
                await self._send(writes)

    def _wait(self) -> float:
        nxt = self.manager.next_wakeup()
        if nxt is None:
            return MAX_WAIT
        return min(MAX_WAIT, self.clock.real_delay(nxt - self.clock.now()))

    async def _send(self, writes: Writes) -> None:
        for field, method, lead in CALLS:
            items = getattr(writes, field)
            if not items:
                continue
            # A refused item is learnt about through the watch (the object moved on, or is
            # gone). A call lost with an unreachable apiserver is not resent: the node
            # lifecycle controller and pod GC ask again on their own timers, as upstream
            # controllers resync; the counts are for anyone debugging a run.
            try:
                call = getattr(self.api, method)
                if field in SINGLE:
                    results = [_as_result(r) for r in await asyncio.gather(*[call.remote(i) for i in items])]
                else:
                    results = await call.remote(*lead, items)
            except RayActorError as e:
                self.failed_writes += len(items)
                self.last_error = f"{method}: {type(e).__name__}"
                continue
            now = self.clock.now()
            for item, r in zip(items, results or ()):
                if r is not None:
                    self.failed_writes += 1
                    self.manager.on_failed(field, item, r, now)


def _as_result(reply):
    """``update`` answers with the stored object or an error tuple; as a batch result."""
    return reply if isinstance(reply, tuple) else None
