"""The scheduler Ray actor: a thin shell around ``cluster.scheduler.scheduler.Scheduler``.

One loop: take the watch events for namespaces, nodes and pods, run scheduling cycles for
the pods in the active queue, and send their binds, condition writes and events as
batches without waiting for the replies; replies are collected on later turns (a failed
bind is forgotten and requeued by the domain object). The watch is a long poll only when
nothing is ready, and never longer than the time to the scheduler's next wakeup (a
backoff ending, an assumption expiring), converted from emulated to real seconds.

Restartable: Ray restarts the actor after a crash or ``ray.kill(..., no_restart=False)``
with a fresh constructor, and the driver starts its clock again once ``ping`` answers
(``actors/restart.py``). The new instance lists everything: pods the old one bound arrive
bound and go to the cache, pending ones (nominations included, from their status) to the
queue. A bind the old instance sent may still land after that list; the apiserver then
refuses the second bind with Conflict, the assumption is dropped and the watch brings the
pod in bound, so no pod is bound twice. Likewise Ray retries a bind call that was in flight
when the apiserver restarted; a bind whose first attempt had committed comes back as
"already assigned" to the node this scheduler chose, which counts as success.
"""

from __future__ import annotations

import asyncio
import time

import ray

from actors.informer import Informer
from actors.profiling import GcPacer, Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.scheduler.scheduler import Scheduler

BATCH = 500  # scheduling cycles per turn before the results are sent
IDLE_WAIT = 0.25


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class SchedulerActor(Profiled):
    def __init__(self, api, seed: int = 0, time_scale: float = 1.0, config=None):
        """``api``: the apiserver's handle, or the name it was created under. A name keeps
        the constructor's arguments out of Ray's object store, where a handle would go and
        could be evicted before a restart needs it (Ray issue 53727)."""
        self.profile = Profile()
        tune_gc()
        self.api = ray.get_actor(api) if isinstance(api, str) else api
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.scheduler = Scheduler(config, seed=seed)
        self.informer = Informer(self.api, ["Namespace", "Node", "Pod", "PodDisruptionBudget"])
        self._inflight: list[tuple[object, list]] = []  # (concurrent future, binds)
        self._task: asyncio.Task | None = None
        self.bind_times: list[float] = []  # real time of each bind reply, for benchmarks
        self.gc = GcPacer()

    async def start_clock(self, real_start: float) -> None:
        self.profile.start("scheduler")
        self.clock.start(real_start)
        if self._task is None or self._task.done():  # told twice (a restart helper's retry): one loop
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stats(self) -> dict:
        err = None
        if self._task is not None and self._task.done() and self._task.exception():
            err = repr(self._task.exception())
        return dict(self.scheduler.stats, pending=self.scheduler.pending_count(), error=err)

    async def reset_bind_window(self) -> int:
        """Start a new measurement window; returns how many binds the old one held."""
        n, self.bind_times = len(self.bind_times), []
        return n

    async def bind_window(self) -> tuple[float | None, float | None, int]:
        """(first, last, count) of successful binds, in real seconds."""
        if not self.bind_times:
            return None, None, 0
        return self.bind_times[0], self.bind_times[-1], len(self.bind_times)

    async def _run(self) -> None:
        while True:
            events = await self.informer.poll(self._wait())
            now = self.clock.now()
            for kind, etype, obj in events:
                if kind == "Pod":
                    self.scheduler.on_pod(etype, obj, now)
                elif kind == "Node":
                    self.scheduler.on_node(etype, obj, now)
                elif kind == "PodDisruptionBudget":
                    self.scheduler.on_pdb(etype, obj, now)
                else:
                    self.scheduler.on_namespace(etype, obj, now)
            await self._collect(now)
            out = self.scheduler.schedule(now, BATCH)
            self._send(out)
            self.gc.turn_done(idle=not (out.binds or out.deletes or self.scheduler.has_ready()))
            if not out.binds and self._inflight:
                await asyncio.sleep(0.005)  # let bind replies arrive instead of spinning

    def _wait(self) -> float:
        """Real seconds the watch may block: none while pods are ready to schedule."""
        if self.scheduler.has_ready():
            return 0.0
        wake = self.scheduler.next_wakeup()
        if wake is None:
            return IDLE_WAIT
        real = (wake - self.clock.now()) / self.clock.spec.time_scale
        return min(IDLE_WAIT, max(0.0, real))

    def _send(self, out) -> None:
        if out.binds:
            self._inflight.append((self.api.bind.remote(out.binds).future(), out.binds))
        patches = out.status_patches()
        if patches:
            # Before the deletes: a victim's DisruptionTarget condition is written first.
            self.api.patch_pod_status.remote(patches)
        if out.deletes:
            self.api.delete.remote("Pod", [(ns, name, uid, None) for ns, name, uid in out.deletes])
        if out.events:
            self.api.create.remote(out.events)

    async def _collect(self, now: float) -> None:
        keep = []
        for fut, binds in self._inflight:
            if not fut.done():
                keep.append((fut, binds))
                continue
            results, t = _bind_results(fut, len(binds)), time.time()
            for (ns, name, uid, node), r in zip(binds, results):
                if r is None or _own_bind_retried(r, node):
                    self.bind_times.append(t)
                else:
                    self.scheduler.on_bind_failed(ns, name, uid, r[2], r[0] in (404, 409), now)
        self._inflight = keep


def _bind_results(fut, n: int) -> list:
    """The per-pod replies of a bind call; when the call itself failed (the apiserver
    unreachable for good, or raising), a retryable error for each pod, so the binds are
    forgotten and the pods tried again; a bind that did land comes back through the watch."""
    try:
        return fut.result()
    except Exception as e:  # Ray wraps the cause in types of its own
        first = (str(e).splitlines() or [""])[0]
        return [(503, "ServiceUnavailable", f"bind call failed: {type(e).__name__}: {first}")] * n


def _own_bind_retried(result: tuple, node: str) -> bool:
    """A Conflict saying the pod is already on ``node``: Ray retried a bind whose first
    attempt the apiserver had committed (its reply was lost in a restart)."""
    return result[0] == 409 and result[2].endswith(f'is already assigned to node "{node}"')
