"""``kubemu bench preempt-cycle --workload basic``: PreemptionBasic in the Scheduler alone.

Owns ``preempt_basic_cycle``: scheduler_perf's PreemptionBasic shape (``workloads.py``:
every node holds four priority-0 900m pods with grace period 0; each measured pod asks 3
CPU at priority 10, so it must preempt three of them) fed straight into a ``Scheduler``
in this process, no apiserver and no Ray. The driver plays the apiserver's part: it
echoes the scheduler's status patches (nominations) and binds as watch events, and each
victim's delete as its DELETED event at once (grace 0, no kubelet), on an emulated clock
that moves 10 ms per round, so the scheduler's backoff of a preemptor (1 s) is waited
out as it would be in real time. What it measures is the scheduler's own work per
preemption and bind; ``bench preempt --workload basic`` adds the hops through the actors.
Called by ``bench.run_bench``.
"""

from __future__ import annotations

import time
from typing import cast

from actors.harness.benchcycle import _add_pending, _confirm_binds, _echo_status_patches, _scheduler_with_nodes
from actors.harness.workloads import BASIC_PRIORITY_CLASS, FILL_PER_NODE, basic_high_pod, basic_low_pod
from cluster.scheduler import Scheduler

ROUND = 0.01  # emulated seconds per round: the actor's poll when pods are ready
STALL = 30.0  # emulated seconds without a bind or a victim: the rest will not bind
HIGH_PRIORITY = cast(int, BASIC_PRIORITY_CLASS["value"])  # what Priority admission would set


def _fill(sched: Scheduler, names: list[str]) -> int:
    """Every node's four priority-0 pods, Running (as the informer lists them)."""
    k = 0
    for name in names:
        for _ in range(FILL_PER_NODE):
            pod = basic_low_pod(k)
            pod["metadata"]["uid"] = pod["metadata"]["name"]
            pod["spec"].update(priority=0, nodeName=name)
            pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
            sched.on_pod("ADDED", pod, 0.0)
            k += 1
    return k


def _delete_victims(sched: Scheduler, out, now: float) -> None:
    for _, _, uid in out.deletes:  # grace 0 and no kubelet: gone at once
        victim = sched.cache.pod_info(uid)
        if victim is not None:
            sched.on_pod("DELETED", victim.pod, now)


def preempt_basic_cycle(nodes: int, pods: int, log) -> dict:
    sched, names = _scheduler_with_nodes(nodes)
    fill = _fill(sched, names)
    high = [basic_high_pod(i) for i in range(pods)]
    for pod in high:
        pod["spec"]["priority"] = HIGH_PRIORITY
    pending = _add_pending(sched, high)
    log(f"{nodes} nodes with {fill} priority-0 pods, {pods} priority-10 pods pending (no Ray); scheduling")
    bound, now, progress = 0, 1.0, 1.0
    start, cpu0 = time.perf_counter(), time.process_time()
    busy = 0.0  # seconds inside Scheduler.schedule
    while bound < pods and now - progress < STALL:
        t = time.perf_counter()
        out = sched.schedule(now, 500)
        busy += time.perf_counter() - t
        if out.binds or out.deletes:
            progress = now
        _echo_status_patches(sched, out, pending, now)
        _delete_victims(sched, out, now)
        bound += _confirm_binds(sched, out, pending, now)
        now += ROUND if out.binds or out.deletes or sched.has_ready() else 0.1
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu0
    rate = round(bound / seconds, 1) if seconds > 0 else None
    stats = sched.stats
    log(
        f"bound {bound}/{pods} pods in {seconds:.2f}s ({cpu:.2f}s CPU, {busy:.2f}s scheduling; "
        f"{now - 1.0:.1f} emulated seconds): {rate} pods/s; {stats['preemptions']} preemptions, "
        f"{stats['victims']} victims"
    )
    if bound < pods:
        log(f"{pods - bound} of {pods} pods never bound: the rate above is not a throughput")
    return {
        "benchmark": "preempt-cycle",
        "workload": "basic",
        "nodes": nodes,
        "pods": pods,
        "bound": bound,
        "complete": bound == pods,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "cpuSeconds": round(cpu, 3),
        "scheduleSeconds": round(busy, 3),
        "emulatedSeconds": round(now - 1.0, 2),
        "preemptions": stats["preemptions"],
        "victims": stats["victims"],
    }
