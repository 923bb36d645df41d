"""``kubemu bench``: throughput measured through the real actors.

``schedule``: N nodes register, M pods are created pending while the scheduler is held,
then the scheduler starts and the rate is measured from its first successful bind to its
last (scheduler_perf's SchedulingBasic shape: nodes of 4 CPU / 32Gi / 110 pods, pods of
100m / 500Mi). Nodes are spread over ``ZONES`` zones. ``--workload mixed`` gives a third
of the pods inter-pod or spread constraints (see ``bench_pod``). Prints a human summary
and, last, one JSON line.

``schedule`` and ``preempt`` run without the controller-manager, as scheduler_perf runs
with only an apiserver and the scheduler (its actor exists but its clock never starts).

``preempt``: scheduler_perf's preemption shape: N nodes are first filled with four
low-priority pods each (900m / 500Mi, grace period 0), then M high-priority pods of 900m
are created, each of which fits only by preempting one low-priority pod. The rate is
measured over the high-priority pods, from the moment their creation starts to their
last bind: the preemptions happen before the first of those binds, so a first-to-last
window would leave them out.

``preempt-cycle``: the preempt shape fed straight into a ``Scheduler`` (no Ray): the
low-priority pods arrive bound, victims vanish as soon as the scheduler deletes them, and
the scheduler sees the watch events its writes would cause (status patches, binds, the
kubelet's Running status).

``cycle``: the same nodes and pods fed straight into a ``Scheduler`` in this process (no
Ray, no apiserver): what the scheduling algorithm alone costs per pod, bind confirmations
included. Comparing it with ``schedule`` shows how much the actor path adds.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from actors.cluster import Cluster
from actors.raycluster import init_ray
from cluster.clock import rfc3339
from cluster.kubelet.node import node_object
from cluster.scenario.runner import expand_pools
from cluster.scenario.schema import NodePool
from cluster.scheduler import Scheduler

CREATE_BATCH = 1000
ZONES = 10
GROUP = 50  # pods per app label in the mixed workload
WORKLOADS = ("basic", "mixed")
ZONE_KEY, HOST_KEY = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def bench_pod(i: int, workload: str = "basic") -> dict:
    """Pod ``i`` of a workload. ``mixed``: pods belong to apps of ``GROUP``; every third
    pod carries, in turn, preferred anti-affinity to its app on the hostname, a zone
    spread constraint (maxSkew 1, DoNotSchedule) over its app, or required affinity to its
    app's zone."""
    app = f"app-{i // GROUP}" if workload == "mixed" else "bench"
    spec: dict = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]
    }
    same_app = {"matchLabels": {"app": app}}
    if workload == "mixed" and i % 3 == 0:
        kind = (i // 3) % 3
        if kind == 0:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": {"labelSelector": same_app, "topologyKey": HOST_KEY}}
                    ]
                }
            }
        elif kind == 1:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": same_app}
            ]
        else:
            spec["affinity"] = {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": same_app, "topologyKey": ZONE_KEY}
                    ]
                }
            }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default", "labels": {"app": app}},
        "spec": spec,
    }


def _actors(cluster) -> list[tuple[str, object]]:
    return [
        ("apiserver", cluster.api),
        ("scheduler", cluster.scheduler),
        ("controllers", cluster.controllers),
        *[("hosts", h) for h in cluster.hosts],
    ]


async def _dump_profiles(cluster, log, reset: bool = False) -> None:
    """With KUBEMU_PROFILE set, every actor writes its CPU profile (see actors/profiling.py);
    ``reset`` discards what they gathered so far instead."""
    for path in await asyncio.gather(*[a.dump_profile.remote(reset) for _, a in _actors(cluster)]):
        if path:
            log(f"profile written: {path}")


async def _settle(cluster) -> None:
    """Every actor runs its full garbage collection (and the apiserver a due snapshot)
    before a measured phase: a pause that would otherwise land at a random point of some
    run's window."""
    await asyncio.gather(*[a.collect_garbage.remote() for _, a in _actors(cluster)])


async def _cpu(cluster) -> dict[str, float]:
    """Process CPU seconds so far per actor role (the hosts summed), and this driver's."""
    out: dict[str, float] = {}
    roles = _actors(cluster)
    for (role, _), secs in zip(roles, await asyncio.gather(*[a.cpu_seconds.remote() for _, a in roles])):
        out[role] = out.get(role, 0.0) + secs
    t = os.times()
    out["driver"] = t.user + t.system
    return out


def _cpu_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {role: round(after[role] - before[role], 2) for role in after}


def bench_pools(nodes: int) -> list[NodePool]:
    per_zone, extra = divmod(nodes, ZONES)
    return [
        NodePool(
            namePrefix=f"z{z}-node",
            count=per_zone + (z < extra),
            labels={ZONE_KEY: f"zone-{z}"},
            capacity={"cpu": "4", "memory": "32Gi", "pods": "110"},
        )
        for z in range(ZONES)
        if per_zone + (z < extra)
    ]


async def _schedule(nodes: int, pods: int, nodes_per_host: int, workload: str, log) -> dict:
    t0 = time.time()
    init_ray()
    cluster = Cluster(expand_pools(bench_pools(nodes)), seed=1, nodes_per_host=nodes_per_host)
    try:
        await cluster.register_nodes()
        start = time.time()
        cluster.clock.start(start)
        await asyncio.gather(*[a.start_clock.remote(start) for a in [cluster.api, *cluster.hosts]])
        log(f"{nodes} nodes on {len(cluster.hosts)} hosts up in {time.time() - t0:.1f}s; creating {pods} pods")
        for i in range(0, pods, CREATE_BATCH):
            batch = [bench_pod(k, workload) for k in range(i, min(pods, i + CREATE_BATCH))]
            results = await cluster.api.create.remote(batch)
            bad = [r for r in results if r is not None]
            if bad:
                raise RuntimeError(f"create failed: {bad[0]}")
        log(f"{pods} pods pending; starting the scheduler")
        await _settle(cluster)
        await _dump_profiles(cluster, log, reset=True)
        cpu0 = await _cpu(cluster)
        await cluster.scheduler.start_clock.remote(start)
        deadline = time.time() + max(120.0, pods / 50)
        while True:
            first, last, count = await cluster.scheduler.bind_window.remote()
            if count >= pods or time.time() > deadline:
                break
            await asyncio.sleep(0.2)
        cpu = _cpu_spent(cpu0, await _cpu(cluster))
        stats = await cluster.scheduler.stats.remote()
        await _dump_profiles(cluster, log)
        if stats.get("error"):
            raise RuntimeError(f"scheduler failed: {stats['error']}")
        seconds = (last - first) if count > 1 else 0.0
        rate = round(count / seconds, 1) if seconds > 0 else None
        log(f"bound {count}/{pods} pods in {seconds:.2f}s from first bind to last: {rate} pods/s")
        log(f"CPU seconds from the scheduler's start to the last poll: {cpu}")
        return {
            "benchmark": "schedule",
            "workload": workload,
            "nodes": nodes,
            "pods": pods,
            "bound": count,
            "hosts": len(cluster.hosts),
            "seconds": round(seconds, 3),
            "podsPerSecond": rate,
            "bindConflicts": stats.get("bindConflicts", 0),
            "cpuSeconds": cpu,
        }
    finally:
        cluster.shutdown()


PRIORITY_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "bench-low"}, "value": 10},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "bench-high"}, "value": 1000},
]
FILL_PER_NODE = 4


def preempt_pod(name: str, priority_class: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": priority_class}},
        "spec": {
            "priorityClassName": priority_class,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "900m", "memory": "500Mi"}}}
            ],
        },
    }


async def _create(cluster, objs: list[dict]) -> None:
    for i in range(0, len(objs), CREATE_BATCH):
        bad = [r for r in await cluster.api.create.remote(objs[i : i + CREATE_BATCH]) if r is not None]
        if bad:
            raise RuntimeError(f"create failed: {bad[0]}")


async def _wait_binds(cluster, want: int, seconds: float) -> tuple:
    deadline = time.time() + seconds
    while True:
        first, last, count = await cluster.scheduler.bind_window.remote()
        if count >= want or time.time() > deadline:
            return first, last, count
        await asyncio.sleep(0.2)


async def _preempt(nodes: int, pods: int, nodes_per_host: int, log) -> dict:
    init_ray()
    cluster = Cluster(expand_pools(bench_pools(nodes)), seed=1, nodes_per_host=nodes_per_host)
    try:
        await cluster.register_nodes()
        # Like scheduler_perf, no controller-manager: its actor stays idle (clock not started).
        start = time.time()
        cluster.clock.start(start)
        await asyncio.gather(*[a.start_clock.remote(start) for a in [cluster.api, cluster.scheduler, *cluster.hosts]])
        fill = nodes * FILL_PER_NODE
        await _create(cluster, PRIORITY_CLASSES + [preempt_pod(f"low-{i}", "bench-low") for i in range(fill)])
        _, _, count = await _wait_binds(cluster, fill, max(120.0, fill / 50))
        log(f"{count}/{fill} low-priority pods bound on {nodes} nodes; creating {pods} high-priority pods")
        await cluster.scheduler.reset_bind_window.remote()
        await _settle(cluster)
        await _dump_profiles(cluster, log, reset=True)
        high = [preempt_pod(f"high-{i}", "bench-high") for i in range(pods)]
        cpu0, start = await _cpu(cluster), time.time()
        await _create(cluster, high)
        first, last, count = await _wait_binds(cluster, pods, max(120.0, pods / 20))
        cpu = _cpu_spent(cpu0, await _cpu(cluster))
        stats = await cluster.scheduler.stats.remote()
        if stats.get("error"):
            raise RuntimeError(f"scheduler failed: {stats['error']}")
        await _dump_profiles(cluster, log)
        seconds = (last - start) if count else 0.0
        rate = round(count / seconds, 1) if seconds > 0 else None
        log(
            f"bound {count}/{pods} high-priority pods {seconds:.2f}s after their creation began: {rate} pods/s; "
            f"{stats['preemptions']} preemptions, {stats['victims']} victims"
        )
        log(f"CPU seconds meanwhile (the window runs on past the last bind by up to 0.2 s): {cpu}")
        return {
            "benchmark": "preempt",
            "nodes": nodes,
            "pods": pods,
            "bound": count,
            "seconds": round(seconds, 3),
            "podsPerSecond": rate,
            "preemptions": stats["preemptions"],
            "victims": stats["victims"],
            "cpuSeconds": cpu,
        }
    finally:
        cluster.shutdown()


def _scheduler_with_nodes(nodes: int) -> tuple[Scheduler, list[str]]:
    sched = Scheduler(seed=1)
    names = []
    for i, cfg in enumerate(expand_pools(bench_pools(nodes))):
        sched.on_node("ADDED", node_object(cfg, i, 0.0, cfg.allocatable()), 0.0)
        names.append(cfg.name)
    return sched, names


def _add_pending(sched: Scheduler, pods: list[dict]) -> dict:
    pending = {}
    for pod in pods:
        pod["metadata"]["uid"] = pod["metadata"]["name"]
        pending[pod["metadata"]["uid"]] = pod
        sched.on_pod("ADDED", pod, 0.0)
    return pending


def _confirm_binds(sched: Scheduler, out, pending: dict, now: float) -> int:
    """What the watch would deliver for the binds: each pod with its nodeName."""
    for _, _, uid, node in out.binds:
        sched.on_pod("MODIFIED", dict(pending[uid], spec=dict(pending[uid]["spec"], nodeName=node)), now)
    return len(out.binds)


def _cycle(nodes: int, pods: int, workload: str, log) -> dict:
    sched, _ = _scheduler_with_nodes(nodes)
    pending = _add_pending(sched, [bench_pod(i, workload) for i in range(pods)])
    log(f"{nodes} nodes, {pods} pending pods in a Scheduler (no Ray); scheduling")
    bound, now, start = 0, 1.0, time.perf_counter()
    while bound < pods and now < 10_000:
        out = sched.schedule(now, 500)
        bound += _confirm_binds(sched, out, pending, now)
        now += 0.01 if out.binds or sched.has_ready() else 2.0
    seconds = time.perf_counter() - start
    rate = round(bound / seconds, 1) if seconds > 0 else None
    log(f"bound {bound}/{pods} pods in {seconds:.2f}s: {rate} pods/s, {1e6 * seconds / max(bound, 1):.0f} us per pod")
    return {
        "benchmark": "cycle",
        "workload": workload,
        "nodes": nodes,
        "pods": pods,
        "bound": bound,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
    }


def _echo_status_patches(sched: Scheduler, out, pending: dict, now: float) -> None:
    """What the watch would deliver for the scheduler's status patches (victims'
    conditions, preemptors' nominations): each pod again, with the new status."""
    for _, _, uid, conditions, nominated in out.status_patches():
        known = sched.cache.pod_info(uid)
        pod = pending.get(uid) or (known.pod if known is not None else None)
        if pod is None:
            continue
        status = dict(pod.get("status") or {}, conditions=conditions)
        if nominated is not None:
            status["nominatedNodeName"] = nominated
        pod = dict(pod, status=status)
        if uid in pending:
            pending[uid] = pod
        sched.on_pod("MODIFIED", pod, now)


def _preempt_cycle(nodes: int, pods: int, log) -> dict:
    sched, names = _scheduler_with_nodes(nodes)
    k = 0
    for name in names:
        for _ in range(FILL_PER_NODE):
            pod = preempt_pod(f"low-{k}", "bench-low")
            pod["metadata"]["uid"] = f"low-{k}"
            pod["spec"].update(priority=10, nodeName=name)
            pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
            sched.on_pod("ADDED", pod, 0.0)
            k += 1
    high = [preempt_pod(f"high-{i}", "bench-high") for i in range(pods)]
    for pod in high:
        pod["spec"]["priority"] = 1000  # what Priority admission would set
    pending = _add_pending(sched, high)
    log(f"{nodes} nodes with {k} low-priority pods, {pods} high-priority pods pending (no Ray); scheduling")
    bound, now, start = 0, 1.0, time.perf_counter()
    while bound < pods and now < 100_000:
        out = sched.schedule(now, 500)
        _echo_status_patches(sched, out, pending, now)
        for _, _, uid in out.deletes:  # victims go at once (grace period 0)
            victim = sched.cache.pod_info(uid)
            if victim is not None:  # two preemptors in one batch may name the same victim
                sched.on_pod("DELETED", victim.pod, now)
        bound += _confirm_binds(sched, out, pending, now)
        for _, _, uid, node in out.binds:  # the kubelet's Running status
            pod = pending[uid]
            sched.on_pod(
                "MODIFIED",
                dict(
                    pod, spec=dict(pod["spec"], nodeName=node), status={"phase": "Running", "startTime": rfc3339(now)}
                ),
                now,
            )
        now += 1.0  # past every backoff of the previous round
    seconds = time.perf_counter() - start
    rate = round(bound / seconds, 1) if seconds > 0 else None
    log(f"bound {bound}/{pods} pods in {seconds:.2f}s: {rate} pods/s; {sched.stats['victims']} victims")
    return {
        "benchmark": "preempt-cycle",
        "nodes": nodes,
        "pods": pods,
        "bound": bound,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "victims": sched.stats["victims"],
    }


def run_bench(
    name: str,
    nodes: int,
    pods: int,
    nodes_per_host: int = 0,
    log=None,
    workload: str = "basic",
    chaos: dict | None = None,
) -> dict:
    """``chaos``: the chaos bench's options (kill_rate, duration, time_scale, seed, targets,
    restarts), as ``actors/benchchaos.py`` takes them."""
    log = log or (lambda s: print(s, file=sys.stderr))
    if nodes < 1:
        raise ValueError(f"--nodes: {nodes} must be at least 1")
    if pods < 1:
        raise ValueError(f"--pods: {pods} must be at least 1")
    if nodes_per_host < 0:
        raise ValueError(f"--nodes-per-host: {nodes_per_host} must be >= 0")
    if workload not in WORKLOADS:
        raise ValueError(f"--workload: {workload!r} is not one of {', '.join(WORKLOADS)}")
    if name == "cycle":
        return _cycle(nodes, pods, workload, log)
    if name == "preempt":
        return asyncio.run(_preempt(nodes, pods, nodes_per_host, log))
    if name == "preempt-cycle":
        return _preempt_cycle(nodes, pods, log)
    if name == "chaos":
        from actors.benchchaos import run_chaos

        return asyncio.run(run_chaos(nodes, pods, nodes_per_host=nodes_per_host, log=log, **(chaos or {})))
    return asyncio.run(_schedule(nodes, pods, nodes_per_host, workload, log))
