"""``kubemu bench rollout``: a full rolling update of one large Deployment.

In one process (the local runtime: apiserver, scheduler, controller-manager and every
kubelet in turn, on emulated time), ``--nodes`` nodes of the schedule bench's shape run a
Deployment of ``--replicas`` SchedulingBasic pods (defaults 25%/25%). Once it is rolled
out, its image changes, and the bench runs the cluster until the Deployment reports the
rollout complete (every replica updated and available, the old ReplicaSet at 0 and its
pods gone). The figures: emulated and wall seconds of the first rollout and of the update,
and new pods per wall second, to compare with ``bench schedule``'s rate (the goal: at least
half of it, so that the controllers are never the bottleneck).
"""

from __future__ import annotations

import asyncio
import time

from actors.harness.workloads import bench_pod, bench_pools
from cluster.api.requests import Create, Update
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout

EMULATED_LIMIT = 7200.0  # a rollout not done after two emulated hours is reported as such


def _deployment(replicas: int) -> dict:
    pod = bench_pod(0)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "bench"}},
            "template": {"metadata": {"labels": {"app": "bench"}}, "spec": pod["spec"]},
        },
    }


def _rolled_out(cluster: LocalCluster, replicas: int) -> bool:
    d = cluster.api.get("Deployment", "default", "bench")
    s = d.get("status") or {}
    return (
        (s.get("observedGeneration") or 0) >= d["metadata"]["generation"]
        and s.get("updatedReplicas") == replicas
        and s.get("replicas") == replicas
        and s.get("availableReplicas") == replicas
        and cluster.api.store.count("Pod") == replicas
    )


def _until_rolled_out(cluster: LocalCluster, replicas: int) -> tuple[float, float, bool]:
    t0, wall0 = cluster.now(), time.perf_counter()
    while True:
        asyncio.run(cluster.settle())
        done = _rolled_out(cluster, replicas)
        if done or cluster.next_wakeup() is None or cluster.now() - t0 > EMULATED_LIMIT:
            return cluster.now() - t0, time.perf_counter() - wall0, done
        asyncio.run(cluster.advance(None))


def rollout(nodes: int, replicas: int, log) -> dict:
    if replicas < 1:
        raise ValueError(f"--replicas: {replicas} must be at least 1")
    t0 = time.perf_counter()
    plan = layout(expand_pools(bench_pools(nodes)), seed=1)
    cluster = LocalCluster(plan, seed=1)
    asyncio.run(cluster.start())
    log(f"{nodes} nodes on {len(plan.hosts)} hosts in one process in {time.perf_counter() - t0:.1f}s")
    (err,) = asyncio.run(cluster.write([Create(_deployment(replicas))]))
    if err is not None:
        raise RuntimeError(f"create failed: {err.reason}: {err.message}")
    first = _until_rolled_out(cluster, replicas)
    log(f"created: {replicas} replicas available after {first[0]:.0f}s emulated, {first[1]:.1f}s wall")
    d = cluster.api.get("Deployment", "default", "bench")
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "pause:2"
    (err,) = asyncio.run(cluster.write([Update(d)]))
    if err is not None:
        raise RuntimeError(f"update failed: {err.reason}: {err.message}")
    emulated, wall, done = _until_rolled_out(cluster, replicas)
    rate = round(replicas / wall, 1) if wall > 0 else None
    log(
        f"rolled: {replicas} replicas replaced in {emulated:.0f}s emulated, {wall:.1f}s wall: "
        f"{rate} new pods/s{'' if done else ' (NOT complete)'}"
    )
    return {
        "benchmark": "rollout",
        "runtime": "local",
        "nodes": nodes,
        "replicas": replicas,
        "complete": done,
        "createEmulatedSeconds": round(first[0], 1),
        "createSeconds": round(first[1], 3),
        "createPodsPerSecond": round(replicas / first[1], 1) if first[1] > 0 else None,
        "emulatedSeconds": round(emulated, 1),
        "seconds": round(wall, 3),
        "newPodsPerSecond": rate,
    }
