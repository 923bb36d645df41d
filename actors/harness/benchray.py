"""``kubemu bench schedule`` and ``bench preempt``: throughput measured through the actors.

``schedule``: scheduler_perf's SchedulingBasic shape (``workloads.py``): N nodes register,
``INIT_PODS`` pods are bound, then M measured pods are created while the scheduler runs;
the rate is measured from the first measured bind to the last, and as scheduler_perf
samples it each second (``throughput.py``). ``preempt``: PreemptionAsync's shape: every
node is first filled with four low-priority 900m pods; then, while a 3-CPU high-priority
pod arrives every 200 ms (each preempting three), M measured 100m pods are created and
scheduled into the room the low-priority pods leave; the rate counts the measured pods'
binds only (``Bind:pod`` in the scheduler's write windows). ``preempt --workload basic``:
PreemptionBasic's shape (``preempt_basic``). ``--no-accelerate`` runs either with the
scheduler's plain reference cycle.

Both run without the controller-manager, as scheduler_perf runs with only an apiserver
and the scheduler (its actor exists but its clock never starts). Both print the CPU
seconds each actor role spent in the measured phase; with ``KUBEMU_PROFILE=DIR`` every
actor profiles the measured phase (``actors/profiling.py``).
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import time
from typing import Any

import ray

from actors.cluster import RayCluster
from actors.harness.throughput import SAMPLE_SECONDS, Throughput
from actors.harness.workloads import (
    BASIC_PRIORITY_CLASS,
    CREATE_BATCH,
    FILL_PER_NODE,
    PREEMPT_ASYNC,
    PREEMPT_BASIC,
    PRIORITY_CLASSES,
    basic_high_pod,
    basic_low_pod,
    bench_pod,
    bench_pools,
    preempt_pod,
    preemptor_pod,
)
from actors.profiling import release_free_memory
from actors.raycluster import init_ray
from cluster.api.requests import Create
from cluster.scenario.layout import expand_pools, layout
from cluster.scheduler import SchedulerConfig
from cluster.scheduler.accel import Accelerate

ROLES = {"controller-manager": "controllers", "host": "hosts"}  # actor role -> how the report names it


def ray_cluster(
    nodes: int,
    nodes_per_host: int,
    seed: int = 1,
    time_scale: float = 1.0,
    schedulers=("default-scheduler",),
    accelerate: bool = True,
    explain: str = "failed",
) -> RayCluster:
    """``accelerate``: False runs the scheduler's plain reference cycle (``--no-accelerate``);
    ``explain``: what the scheduler records as SchedulingResults (``--explain``)."""
    init_ray()
    cpus = int(ray.available_resources().get("CPU", os.cpu_count() or 1))
    config = None if accelerate else SchedulerConfig(accelerate=Accelerate.all(False))
    if explain != "failed":
        config = SchedulerConfig(accelerate=Accelerate.all(accelerate), explain=explain)
    plan = layout(
        expand_pools(bench_pools(nodes)),
        seed=seed,
        nodes_per_host=nodes_per_host,
        cpus=cpus,
        schedulers=schedulers,
        scheduler_config=config,
    )
    return RayCluster(plan, seed=seed, time_scale=time_scale)


def _actors(cluster: RayCluster) -> list[tuple[str, Any]]:
    return [("apiserver", cluster.api), *[(ROLES.get(r, r), a) for r, a in cluster.actors()]]


async def dump_profiles(cluster: RayCluster, log, reset: bool = False) -> None:
    """With KUBEMU_PROFILE set, every actor writes its CPU profile; ``reset`` discards what
    they gathered so far instead."""
    for path in await asyncio.gather(*[a.dump_profile.remote(reset) for _, a in _actors(cluster)]):
        if path:
            log(f"profile written: {path}")


async def settle_gc(cluster: RayCluster) -> None:
    """Every actor runs its full garbage collection (and the apiserver a due snapshot)
    before a measured phase: a pause that would otherwise land at a random point of some
    run's window. This driver does the same, so that what it decoded and let go does not
    count in a memory reading either."""
    await asyncio.gather(*[a.collect_garbage.remote() for _, a in _actors(cluster)])
    gc.collect()
    release_free_memory()


async def cpu_seconds(cluster: RayCluster) -> dict[str, float]:
    """Process CPU seconds so far per actor role (the hosts summed), and this driver's."""
    out: dict[str, float] = {}
    roles = _actors(cluster)
    for (role, _), secs in zip(roles, await asyncio.gather(*[a.cpu_seconds.remote() for _, a in roles])):
        out[role] = out.get(role, 0.0) + secs
    t = os.times()
    out["driver"] = t.user + t.system
    return out


def _spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {role: round(after[role] - before[role], 2) for role in after}


async def create_all(cluster: RayCluster, objs: list[dict]) -> None:
    for i in range(0, len(objs), CREATE_BATCH):
        bad = [e for e in await cluster.write([Create(o) for o in objs[i : i + CREATE_BATCH]]) if e is not None]
        if bad:
            raise RuntimeError(f"create failed: {bad[0].reason}: {bad[0].message}")


CHURN_EVERY = 0.2  # PreemptionAsync: a high-priority pod every 200 ms
INIT_PODS = 1_000  # SchedulingBasic's pods bound before the measured ones
STALL_SECONDS = 15.0  # no bind for this long (wall) while pods wait: the rest will not bind
CATCH_UP_LIMIT = 300.0  # real seconds the scheduler may take to read the nodes before the pods come


async def scheduler_caught_up(cluster: RayCluster, limit: float = CATCH_UP_LIMIT) -> bool:
    """Wait until the scheduler has read every write made so far (the nodes' registration),
    at most ``limit`` seconds. At 100,000 nodes its first list takes longer than
    ``STALL_SECONDS``, which ``wait_binds`` would count against the first pods."""
    rv = await cluster.api.resource_version.remote()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        # With no horizon, ``quiet`` asks only: caught up to rv, no write in flight or failed.
        if await cluster.control["scheduler"].quiet.remote(rv, float("-inf")):
            return True
    return False


async def wait_binds(
    cluster: RayCluster,
    want: int,
    seconds: float,
    role: str = "scheduler",
    stall: float = STALL_SECONDS,
    throughput: Throughput | None = None,
    kind: str = "Bind",
) -> tuple:
    """(first, last, count) of the scheduler's binds once ``want`` are done, ``seconds``
    have passed, or no bind came for ``stall`` seconds (a pod that cannot fit waits for
    ever: the bench says so at once instead of at its time limit). ``throughput`` gets a
    reading every ``SAMPLE_SECONDS`` until the last bind."""
    scheduler, now = cluster.control[role], time.time()
    deadline, seen, since, sampled = now + seconds, -1, now, now
    while True:
        first, last, count = await scheduler.write_window.remote(kind)
        now = time.time()
        if count != seen:
            seen, since = count, now
        if count >= want or now > deadline or now - since > stall:
            return first, last, count
        if throughput is not None and now - sampled >= SAMPLE_SECONDS:
            throughput.tick(now, count)
            sampled = now
        await asyncio.sleep(0.2)


def unbound_note(kind: str, count: int, want: int) -> str:
    """The line a bench logs when measured pods stayed unbound, or ""."""
    if count >= want:
        return ""
    return (
        f"{want - count} of {want} {kind} pods never bound (no bind for {STALL_SECONDS:.0f}s, or the time limit): "
        "the cluster cannot fit them, so the rate above is not a throughput"
    )


async def _scheduler_stats(cluster: RayCluster) -> dict:
    stats = (await cluster.inspect("scheduler"))[0]
    problems = await cluster.control["scheduler"].healthy.remote()
    if problems:
        raise RuntimeError(f"scheduler failed: {problems[0]}")
    return stats


async def schedule(
    nodes: int,
    pods: int,
    nodes_per_host: int,
    workload: str,
    log,
    kubelets: bool = True,
    accelerate: bool = True,
    explain: str = "failed",
) -> dict:
    """SchedulingBasic: ``INIT_PODS`` pods are bound first, then ``pods`` measured pods are
    created while the scheduler runs, as scheduler_perf does. Without ``kubelets`` the node
    hosts' clocks never start: the nodes are API objects only (registered Ready, no Lease
    renewals) and bound pods never start, as in scheduler_perf."""
    t0 = time.time()
    cluster = ray_cluster(nodes, nodes_per_host, accelerate=accelerate, explain=explain)
    try:
        await cluster.prime()
        await cluster.start_clock(roles=["host", "scheduler"] if kubelets else ["scheduler"])
        await scheduler_caught_up(cluster)
        log(f"{nodes} nodes on {len(cluster.hosts)} hosts up in {time.time() - t0:.1f}s; {INIT_PODS} init pods")
        await create_all(cluster, [bench_pod(pods + k, workload) for k in range(INIT_PODS)])
        _, _, init = await wait_binds(cluster, INIT_PODS, max(120.0, INIT_PODS / 50))
        if init < INIT_PODS:
            raise RuntimeError(unbound_note("init", init, INIT_PODS))
        await cluster.control["scheduler"].reset_write_window.remote("Bind")
        await settle_gc(cluster)
        await dump_profiles(cluster, log, reset=True)
        log(f"creating {pods} measured pods")
        cpu0, rate_of = await cpu_seconds(cluster), Throughput()
        creating = asyncio.ensure_future(create_all(cluster, [bench_pod(k, workload) for k in range(pods)]))
        first, last, count = await wait_binds(cluster, pods, max(120.0, pods / 50), throughput=rate_of)
        await creating
        cpu = _spent(cpu0, await cpu_seconds(cluster))
        stats = await _scheduler_stats(cluster)
        await dump_profiles(cluster, log)
    finally:
        await cluster.shutdown()
    out = _measured("schedule", nodes, INIT_PODS, pods, (first, last, count), rate_of, cpu, log)
    return {
        **out,
        "workload": workload,
        "hosts": len(cluster.hosts),
        "kubelets": kubelets,
        "bindConflicts": stats.get("bindConflicts", 0),
        "accelerate": accelerate,
        "explain": explain,
    }


def _measured(
    benchmark: str, nodes: int, init: int, pods: int, window: tuple, rate_of: Throughput, cpu: dict, log, note=""
) -> dict:
    """What every scheduling bench reports of its measured pods' binds (``window``: first,
    last, count), logged as well; ``note`` goes on the bind line."""
    first, last, count = window
    seconds = (last - first) if count > 1 else 0.0
    rate = round(count / seconds, 1) if seconds > 0 else None
    sampled = rate_of.summary()
    log(f"bound {count}/{pods} measured pods in {seconds:.2f}s from first bind to last: {rate} pods/s{note}")
    log(f"scheduler_perf's throughput (pods/s sampled each second): {sampled}")
    log(f"CPU seconds from the first measured create to the last poll: {cpu}")
    if count < pods:
        log(unbound_note("measured", count, pods))
    return {
        "benchmark": benchmark,
        "nodes": nodes,
        "initPods": init,
        "pods": pods,
        "bound": count,
        "complete": count >= pods,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "throughput": sampled,
        "cpuSeconds": cpu,
    }


async def preempt(
    nodes: int, pods: int, nodes_per_host: int, log, workload: str = PREEMPT_ASYNC, accelerate: bool = True
) -> dict:
    """PreemptionAsync (``workload`` async, the default): every node holds four
    low-priority 900m pods; while a 3-CPU high-priority pod arrives every ``CHURN_EVERY``
    seconds (each preempting three), the ``pods`` measured 100m pods are created and
    scheduled into the room left. PreemptionBasic (``basic``): ``preempt_basic``."""
    if workload == PREEMPT_BASIC:
        return await preempt_basic(nodes, pods, nodes_per_host, log, accelerate)
    cluster = ray_cluster(nodes, nodes_per_host, accelerate=accelerate)
    fill = nodes * FILL_PER_NODE
    try:
        await cluster.prime()
        # Like scheduler_perf, no controller-manager: its actor stays idle (clock not started).
        await cluster.start_clock(roles=["host", "scheduler"])
        await scheduler_caught_up(cluster)
        await create_all(cluster, PRIORITY_CLASSES + [preempt_pod(f"low-{i}", "bench-low") for i in range(fill)])
        _, _, count = await wait_binds(cluster, fill, max(120.0, fill / 50))
        if count < fill:
            raise RuntimeError(unbound_note("low-priority", count, fill))
        log(f"{fill} low-priority pods bound on {nodes} nodes; high-priority churn and {pods} measured pods")
        await settle_gc(cluster)
        await dump_profiles(cluster, log, reset=True)
        churn = asyncio.ensure_future(_churn(cluster))
        cpu0, rate_of = await cpu_seconds(cluster), Throughput()
        measured = [bench_pod(k) for k in range(pods)]
        creating = asyncio.ensure_future(create_all(cluster, measured))
        kind = f"Bind:{_prefix(measured[0])}"
        first, last, count = await wait_binds(cluster, pods, max(120.0, pods / 20), throughput=rate_of, kind=kind)
        churn.cancel()
        await creating
        cpu = _spent(cpu0, await cpu_seconds(cluster))
        stats = await _scheduler_stats(cluster)
        await dump_profiles(cluster, log)
    finally:
        await cluster.shutdown()
    note = f"; {stats['preemptions']} preemptions, {stats['victims']} victims meanwhile"
    out = _measured("preempt", nodes, fill, pods, (first, last, count), rate_of, cpu, log, note)
    return {**out, "preemptions": stats["preemptions"], "victims": stats["victims"], "accelerate": accelerate}


async def preempt_basic(nodes: int, pods: int, nodes_per_host: int, log, accelerate: bool = True) -> dict:
    """scheduler_perf's PreemptionBasic: every node (4 CPU) is filled with four priority-0
    900m pods (grace period 0); then ``pods`` measured 3-CPU priority-10 pods are created,
    each of which must preempt three of them. No kubelet runs (the nodes are API objects,
    as in scheduler_perf), so a victim's delete removes it at once. The rate is the
    measured pods' binds from the first to the last, or from the first measured create when
    the binds came in under a second (a wave bound in a batch or two)."""
    cluster = ray_cluster(nodes, nodes_per_host, accelerate=accelerate)
    fill = nodes * FILL_PER_NODE
    try:
        await cluster.prime()
        await cluster.start_clock(roles=["scheduler"])
        await scheduler_caught_up(cluster)
        await create_all(cluster, [BASIC_PRIORITY_CLASS] + [basic_low_pod(i) for i in range(fill)])
        _, _, count = await wait_binds(cluster, fill, max(120.0, fill / 50), kind="Bind:low")
        if count < fill:
            raise RuntimeError(unbound_note("low-priority", count, fill))
        log(f"{fill} priority-0 pods bound on {nodes} nodes; {pods} measured priority-10 pods")
        await settle_gc(cluster)
        await dump_profiles(cluster, log, reset=True)
        cpu0, rate_of = await cpu_seconds(cluster), Throughput()
        created = time.time()
        creating = asyncio.ensure_future(create_all(cluster, [basic_high_pod(i) for i in range(pods)]))
        # The first wave's preemptions all come before its first bind (each preemptor is
        # retried once its victims are gone), so no bind for a while is not yet a stall.
        # The reference path (--no-accelerate) dry-runs every candidate node through the
        # plugins: minutes for the first wave, so only its time limit ends the wait.
        limit = max(120.0, pods / 10) if accelerate else max(1200.0, float(pods))
        first, last, count = await wait_binds(
            cluster,
            pods,
            limit,
            stall=max(STALL_SECONDS, pods / 20) if accelerate else limit,
            throughput=rate_of,
            kind="Bind:high",
        )
        if not count:
            raise RuntimeError(unbound_note("priority-10", count, pods))
        # A wave of preemptors is bound in a few batches, so first bind to last can be ~0:
        # the window then starts at the first create instead (a lower bound on the rate).
        window = (min(first, created) if last - first < 1.0 else first, last, count)
        await creating
        cpu = _spent(cpu0, await cpu_seconds(cluster))
        stats = await _scheduler_stats(cluster)
        await dump_profiles(cluster, log)
    finally:
        await cluster.shutdown()
    note = f"; {stats['preemptions']} preemptions, {stats['victims']} victims"
    out = _measured("preempt", nodes, fill, pods, window, rate_of, cpu, log, note)
    seconds = out["seconds"]
    preemption_rate = round(stats["preemptions"] / seconds, 1) if seconds else None
    return {
        **out,
        "workload": PREEMPT_BASIC,
        "preemptions": stats["preemptions"],
        "victims": stats["victims"],
        "preemptionsPerSecond": preemption_rate,
        "accelerate": accelerate,
    }


def _prefix(pod: dict) -> str:
    return pod["metadata"]["name"].split("-", 1)[0]


async def _churn(cluster: RayCluster) -> None:
    """One high-priority preemptor every ``CHURN_EVERY`` seconds until cancelled."""
    for i in itertools.count():
        await create_all(cluster, [preemptor_pod(f"churn-{i}")])
        await asyncio.sleep(CHURN_EVERY)
