"""The benchmarks that run in this process, without Ray: ``cycle``, ``preempt-cycle`` and
``local``.

``cycle``: the schedule bench's nodes and pods fed straight into a ``Scheduler`` (no
apiserver): what the scheduling algorithm alone costs per pod, bind confirmations
included. ``preempt-cycle``: the preempt shape the same way (victims vanish as soon as the
scheduler deletes them; the scheduler sees the watch events its writes would cause).
``local``: the schedule bench's SchedulingBasic shape through the local runtime
(``cluster/runtime/local.py``): the apiserver, the scheduler and every kubelet in one
process, the rate measured from the first bind to the last in wall time. Comparing the
three with ``schedule`` shows what each layer adds.
"""

from __future__ import annotations

import asyncio
import time

from actors.harness.workloads import CREATE_BATCH, FILL_PER_NODE, bench_pod, bench_pools, preempt_pod
from cluster.api.requests import Create
from cluster.clock import rfc3339
from cluster.kubelet.node import node_object
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scheduler import Scheduler, SchedulerConfig

# Emulated seconds without a bind (or, for preempt-cycle, a victim) after which the pods
# still pending are reported as never bound: past the longest backoff (10 s), only a
# cluster change would let them in, and in these benches nothing else changes the cluster.
STALL_SECONDS = 30.0


def _scheduler_with_nodes(nodes: int, explain: str = "failed") -> tuple[Scheduler, list[str]]:
    sched = Scheduler(SchedulerConfig(explain=explain), seed=1)
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


def cycle(nodes: int, pods: int, workload: str, log, explain: str = "failed") -> dict:
    """``explain``: what the scheduler records (``--explain``); its SchedulingResult
    writes are taken after every batch, as the scheduler component takes them."""
    sched, _ = _scheduler_with_nodes(nodes, explain)
    pending = _add_pending(sched, [bench_pod(i, workload) for i in range(pods)])
    log(f"{nodes} nodes, {pods} pending pods in a Scheduler (no Ray); scheduling")
    bound, now, start, progress, explained = 0, 1.0, time.perf_counter(), 1.0, 0
    while bound < pods and now - progress < STALL_SECONDS:
        out = sched.schedule(now, 500)
        if sched.explain is not None:
            explained += len(sched.explain.writes())
        bound += _confirm_binds(sched, out, pending, now)
        if out.binds:
            progress = now
        now += 0.01 if out.binds or sched.has_ready() else 2.0
    seconds = time.perf_counter() - start
    rate = round(bound / seconds, 1) if seconds > 0 else None
    log(f"bound {bound}/{pods} pods in {seconds:.2f}s: {rate} pods/s, {1e6 * seconds / max(bound, 1):.0f} us per pod")
    _note_unbound(bound, pods, log)
    return {
        "benchmark": "cycle",
        "workload": workload,
        "explain": explain,
        "schedulingResultWrites": explained,
        "nodes": nodes,
        "pods": pods,
        "bound": bound,
        "complete": bound == pods,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
    }


def _note_unbound(bound: int, pods: int, log, why: str = "") -> None:
    if bound < pods:
        why = why or f"nothing bound for {STALL_SECONDS:.0f} emulated seconds"
        log(
            f"{pods - bound} of {pods} pods never bound ({why}): the cluster cannot fit them, "
            "so the rate above is not a throughput"
        )


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


def preempt_cycle(nodes: int, pods: int, log) -> dict:
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
    bound, now, start, progress = 0, 1.0, time.perf_counter(), 1.0
    while bound < pods and now - progress < STALL_SECONDS:
        out = sched.schedule(now, 500)
        if out.binds or out.deletes:
            progress = now
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
    _note_unbound(bound, pods, log)
    return {
        "benchmark": "preempt-cycle",
        "nodes": nodes,
        "pods": pods,
        "bound": bound,
        "complete": bound == pods,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "victims": sched.stats["victims"],
    }


def settle_and_rate(cluster: LocalCluster) -> tuple[list[float], float, float | None, float]:
    """Run the local cluster until it settles: the binds' wall times, the seconds from the
    first bind to the last, the rate over them, and the seconds the settling took."""
    start = time.perf_counter()
    asyncio.run(cluster.settle())
    total = time.perf_counter() - start
    binds = cluster.binds
    seconds = binds[-1] - binds[0] if len(binds) > 1 else 0.0
    return binds, seconds, (round(len(binds) / seconds, 1) if seconds > 0 else None), total


def local(nodes: int, pods: int, nodes_per_host: int, workload: str, log) -> dict:
    t0 = time.perf_counter()
    plan = layout(expand_pools(bench_pools(nodes)), seed=1, nodes_per_host=nodes_per_host)
    del plan.control["controller-manager"]  # as scheduler_perf: an apiserver and the scheduler
    cluster = LocalCluster(plan, seed=1)
    asyncio.run(cluster.start())
    log(f"{nodes} nodes on {len(plan.hosts)} hosts in one process in {time.perf_counter() - t0:.1f}s; {pods} pods")
    for i in range(0, pods, CREATE_BATCH):
        batch = [Create(bench_pod(k, workload)) for k in range(i, min(pods, i + CREATE_BATCH))]
        bad = [e for e in asyncio.run(cluster.write(batch)) if e is not None]
        if bad:
            raise RuntimeError(f"create failed: {bad[0].reason}: {bad[0].message}")
    binds, seconds, rate, total = settle_and_rate(cluster)
    log(
        f"bound {len(binds)}/{pods} pods in {seconds:.2f}s from first bind to last: {rate} pods/s "
        f"(the instant settled in {total:.2f}s: every kubelet started its pods too)"
    )
    _note_unbound(len(binds), pods, log, "the cluster settled with them pending")
    return {
        "benchmark": "local",
        "workload": workload,
        "nodes": nodes,
        "pods": pods,
        "bound": len(binds),
        "complete": len(binds) == pods,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "settleSeconds": round(total, 3),
    }
