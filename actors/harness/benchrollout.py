"""``kubemu bench rollout``: a full rolling update of one large Deployment.

In one process (the local runtime: apiserver, scheduler, controller-manager and every
kubelet in turn, on emulated time), ``--nodes`` nodes of the schedule bench's shape run a
Deployment of ``--replicas`` SchedulingBasic pods (defaults 25%/25%). Once it is rolled
out, its image changes, and the bench runs the cluster until the Deployment reports the
rollout complete (every replica updated and available, the old ReplicaSet at 0 and its
pods gone). The figures: emulated and wall seconds of the first rollout and of the update,
and new pods per wall second, to compare with ``bench schedule``'s rate (the goal: at least
half of it, so that the controllers are never the bottleneck).

``--against-schedule N`` makes that comparison itself (``against_schedule``): N rounds of
the rollout through the actors and ``bench schedule`` with as many nodes and pods, the
order swapped every round, each round's ratio of the two rates, and their median. On a
shared machine the same bench varies by a third from one minute to the next, so only
rounds taken side by side, and many of them, say where the ratio stands.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable

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
        and cluster.api.count("Pod") == replicas
    )


def _until_rolled_out(cluster: LocalCluster, replicas: int) -> tuple[float, float, bool]:
    t0, wall0 = cluster.now(), time.perf_counter()
    while True:
        asyncio.run(cluster.settle())
        done = _rolled_out(cluster, replicas)
        if done or cluster.next_wakeup() is None or cluster.now() - t0 > EMULATED_LIMIT:
            return cluster.now() - t0, time.perf_counter() - wall0, done
        asyncio.run(cluster.advance(None))


def rollout(nodes: int, replicas: int, log, runtime: str = "local") -> dict:
    if nodes < 1:
        raise ValueError(f"--nodes: {nodes} must be at least 1")
    if replicas < 1:
        raise ValueError(f"--replicas: {replicas} must be at least 1")
    if runtime == "ray":
        return asyncio.run(_through_actors(nodes, replicas, log))
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


def _done(d: dict, replicas: int) -> bool:
    s = d.get("status") or {}
    return (s.get("observedGeneration") or 0) >= d["metadata"]["generation"] and all(
        s.get(f) == replicas for f in ("updatedReplicas", "replicas", "availableReplicas")
    )


async def _wait(cluster, replicas: int, limit: float) -> tuple[float, bool]:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        if _done(await cluster.get("Deployment", "default", "bench"), replicas):
            return time.perf_counter() - t0, True
        await asyncio.sleep(0.1)
    return time.perf_counter() - t0, False


async def _through_actors(nodes: int, replicas: int, log) -> dict:
    """The same through the actors (apiserver, scheduler, controller-manager and node hosts
    in their own processes), as ``bench schedule`` runs; emulated time is wall time."""
    import ray

    from actors.harness import benchray

    started_here = not ray.is_initialized()
    cluster = benchray.ray_cluster(nodes, 0)
    try:
        await cluster.prime()
        await cluster.start_clock()
        (err,) = await cluster.write([Create(_deployment(replicas))])
        if err is not None:
            raise RuntimeError(f"create failed: {err.reason}: {err.message}")
        limit = max(120.0, replicas / 20)
        created, ok = await _wait(cluster, replicas, limit)
        log(
            f"created: {replicas} replicas available after {created:.1f}s wall ({'complete' if ok else 'NOT complete'})"
        )
        d = await cluster.get("Deployment", "default", "bench")
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "pause:2"
        d.pop("status", None)
        (err,) = await cluster.write([Update(d)])
        if err is not None:
            raise RuntimeError(f"update failed: {err.reason}: {err.message}")
        d["metadata"]["generation"] += 1
        await benchray.dump_profiles(cluster, log, reset=True)  # with KUBEMU_PROFILE: the update only
        cpu0 = await benchray.cpu_seconds(cluster)
        rolled, done = await _wait(cluster, replicas, limit)
        cpu = {k: round(v - cpu0.get(k, 0.0), 2) for k, v in (await benchray.cpu_seconds(cluster)).items()}
        await benchray.dump_profiles(cluster, log)
    finally:
        await cluster.shutdown()
        if started_here and ray.is_initialized():
            ray.shutdown()
    rate = round(replicas / rolled, 1) if rolled > 0 else None
    log(
        f"rolled: {replicas} replicas replaced in {rolled:.1f}s wall: {rate} new pods/s{'' if done else ' (NOT complete)'}"
    )
    log(f"CPU seconds during the rolling update: {cpu}")
    return {
        "benchmark": "rollout",
        "runtime": "ray",
        "cpuSeconds": cpu,
        "nodes": nodes,
        "replicas": replicas,
        "complete": ok and done,
        "createSeconds": round(created, 3),
        "createPodsPerSecond": round(replicas / created, 1) if created > 0 else None,
        "seconds": round(rolled, 3),
        "newPodsPerSecond": rate,
    }


def against_schedule(rounds: int, run_rollout: Callable[[], dict], run_schedule: Callable[[], dict], log) -> dict:
    """``rounds`` rounds of ``run_rollout`` (``rollout`` through the actors) and
    ``run_schedule`` (``bench schedule`` of as many pods on as many nodes), the rollout
    first in odd rounds and second in even ones, so that neither always runs on the
    machine the other left; each round's ratio of new pods/s to scheduled pods/s."""
    if rounds < 1:
        raise ValueError(f"--against-schedule: {rounds} must be at least 1")
    out, complete = [], True
    for i in range(rounds):
        if i % 2 == 0:
            roll, sched = run_rollout(), run_schedule()
        else:
            sched, roll = run_schedule(), run_rollout()
        complete = complete and bool(roll.get("complete")) and bool(sched.get("complete"))
        new, base = roll.get("newPodsPerSecond"), sched.get("podsPerSecond")
        ratio = round(new / base, 3) if new and base else None
        out.append({"newPodsPerSecond": new, "schedulePodsPerSecond": base, "ratio": ratio})
        log(f"round {i + 1}/{rounds}: rollout {new} new pods/s, schedule {base} pods/s, ratio {ratio}")
    ratios = [r["ratio"] for r in out if r["ratio"] is not None]
    median = round(statistics.median(ratios), 3) if ratios else None
    return {
        "benchmark": "rollout",
        "runtime": "ray",
        "complete": complete,
        "rounds": out,
        "medianRatio": median,
        "roundsAtOrAboveHalf": sum(1 for r in ratios if r >= 0.5),
    }
