"""``kubemu bench yunikorn``: YuniKorn mode's throughput and its preemption soak.

``basic`` (the default workload): the schedule bench's nodes and pods, every pod with
``schedulerName: yunikorn``, spread round-robin over the eight leaves of a queue tree whose
four tenants each hold a guarantee, through the actors as ``bench schedule`` runs: the pods
are created while the YuniKorn-mode scheduler is held, and the rate is measured from its
first bind to its last. ``local``: the same in one process (the local runtime: apiserver,
scheduler and every kubelet in turn), as ``bench local``. ``soak`` (local runtime, emulated
time): queue ``root.a`` fills the cluster with one-CPU pods, then queue ``root.b``,
guaranteed half the cluster, submits ``--pods`` more; the figures are the emulated and
wall time until ``root.b`` holds its guarantee, the victims, and two checks: no pod was
preempted twice, and no pod of ``root.b`` was preempted (no preemption back).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import yaml

from actors.harness.benchcycle import settle_and_rate
from actors.harness.workloads import CREATE_BATCH, bench_pod, bench_pools
from cluster.api.codec import decode_many
from cluster.api.requests import Create
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout

WORKLOADS = ("basic", "local", "soak")  # basic: through the actors; local: in this process
TENANTS, LEAVES = ("t0", "t1", "t2", "t3"), ("batch", "service")
APP_SIZE = 50  # pods per application
NODE_CPU = 4  # bench_pools' nodes


def _configmap(queues: list[dict]) -> dict:
    text = yaml.safe_dump(
        {"partitions": [{"name": "default", "queues": [{"name": "root", "submitacl": "*", "queues": queues}]}]}
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "yunikorn-configs", "namespace": "yunikorn"},
        "data": {"queues.yaml": text},
    }


def _tree(nodes: int) -> list[dict]:
    share = max(1, nodes * NODE_CPU // 8)  # each tenant is guaranteed an eighth of the cluster's CPU
    return [
        {
            "name": t,
            "resources": {"guaranteed": {"vcore": share}},
            "queues": [{"name": leaf} for leaf in LEAVES],
        }
        for t in TENANTS
    ]


def _yk_pod(pod: dict, queue: str, app: str) -> dict:
    pod["spec"]["schedulerName"] = "yunikorn"
    pod["metadata"]["labels"] = {"queue": queue, "applicationId": app}
    return pod


def _start(nodes: int, queues: list[dict], log) -> LocalCluster:
    t0 = time.perf_counter()
    plan = layout(expand_pools(bench_pools(nodes)), seed=1, schedulers=("yunikorn",))
    del plan.control["controller-manager"]  # as scheduler_perf: an apiserver and the scheduler
    cluster = LocalCluster(plan, seed=1)
    asyncio.run(cluster.start())
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "yunikorn"}}
    _create(cluster, [ns, _configmap(queues)])
    asyncio.run(cluster.settle())
    log(f"{nodes} nodes on {len(plan.hosts)} hosts in one process in {time.perf_counter() - t0:.1f}s")
    return cluster


def _create(cluster: LocalCluster, objs: list[dict]) -> None:
    for i in range(0, len(objs), CREATE_BATCH):
        bad = [e for e in asyncio.run(cluster.write([Create(o) for o in objs[i : i + CREATE_BATCH]])) if e is not None]
        if bad:
            raise RuntimeError(f"create failed: {bad[0].reason}: {bad[0].message}")


_LEAVES = [f"root.{t}.{leaf}" for t in TENANTS for leaf in LEAVES]


def _pods(pods: int) -> list[dict]:
    """The bench pods, round-robin over the leaves; each application stays in one leaf."""
    n = len(_LEAVES)
    return [_yk_pod(bench_pod(k), _LEAVES[k % n], f"app-{k % n}-{k // (APP_SIZE * n)}") for k in range(pods)]


def throughput(nodes: int, pods: int, log, runtime: str = "ray", nodes_per_host: int = 0) -> dict:
    if runtime == "ray":
        return asyncio.run(_through_actors(nodes, pods, nodes_per_host, log))
    cluster = _start(nodes, _tree(nodes), log)
    _create(cluster, _pods(pods))
    binds, seconds, rate, total = settle_and_rate(cluster)
    view = asyncio.run(cluster.inspect("yunikorn"))[0]
    log(f"bound {len(binds)}/{pods} pods over {len(_LEAVES)} leaf queues in {seconds:.2f}s: {rate} pods/s")
    return {
        "benchmark": "yunikorn",
        "workload": "basic",
        "runtime": "local",
        "nodes": nodes,
        "pods": pods,
        "bound": len(binds),
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "settleSeconds": round(total, 3),
        "queues": {q["queuename"]: q["allocatedResource"].get("pods", 0) for q in _leaves(view["queues"])},
    }


def _leaves(q: dict) -> list[dict]:
    return [q] if q["isLeaf"] else [x for c in q["children"] for x in _leaves(c)]


def _one_cpu(name: str, queue: str, app: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"queue": queue, "applicationId": app}},
        "spec": {
            "schedulerName": "yunikorn",
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1", "memory": "100Mi"}}}],
        },
    }


def soak(nodes: int, pods: int, log) -> dict:
    half = nodes * NODE_CPU // 2
    cluster = _start(nodes, [{"name": "a"}, {"name": "b", "resources": {"guaranteed": {"vcore": half}}}], log)
    fill = nodes * NODE_CPU
    _create(cluster, [_one_cpu(f"a-{k}", "root.a", f"a-{k // APP_SIZE}") for k in range(fill)])
    asyncio.run(cluster.settle())
    t0, wall0 = cluster.now(), time.perf_counter()
    _create(cluster, [_one_cpu(f"b-{k}", "root.b", f"b-{k // APP_SIZE}") for k in range(pods)])
    target = min(half, pods) * 1000
    held = 0
    while True:
        asyncio.run(cluster.settle())
        queues = {q["queuename"]: q for q in _leaves(asyncio.run(cluster.inspect("yunikorn"))[0]["queues"])}
        held = queues["root.b"]["allocatedResource"].get("vcore", 0)
        if held >= target or cluster.next_wakeup() is None or cluster.now() - t0 > 3600:
            break
        asyncio.run(cluster.advance(None))
    emulated, wall = cluster.now() - t0, time.perf_counter() - wall0
    victims = [ev for ev in _events(cluster) if ev.get("reason") == "Preempted"]
    per_pod = Counter(ev["involvedObject"]["uid"] for ev in victims)
    back = sum(1 for ev in victims if ev["involvedObject"]["name"].startswith("b-"))
    log(
        f"root.b holds {held // 1000} of its {half} CPU guarantee after {emulated:.0f}s emulated, {wall:.1f}s wall; "
        f"{len(per_pod)} victims, {sum(1 for n in per_pod.values() if n > 1)} preempted twice, {back} back to root.b"
    )
    return {
        "benchmark": "yunikorn",
        "workload": "soak",
        "nodes": nodes,
        "pods": pods,
        "guaranteeReached": held >= target,
        "emulatedSeconds": round(emulated, 1),
        "seconds": round(wall, 3),
        "victims": len(per_pod),
        "preemptedTwice": sum(1 for n in per_pod.values() if n > 1),
        "preemptedBack": back,
    }


def _events(cluster: LocalCluster) -> list[dict]:
    return decode_many(cluster.api.list("Event").items)


async def _through_actors(nodes: int, pods: int, nodes_per_host: int, log) -> dict:
    from actors.harness import benchray

    t0 = time.perf_counter()
    cluster = benchray.ray_cluster(nodes, nodes_per_host, schedulers=("yunikorn",))
    try:
        await cluster.prime()
        await cluster.start_clock(roles=["host"])
        log(f"{nodes} nodes on {len(cluster.hosts)} hosts up in {time.perf_counter() - t0:.1f}s; creating {pods} pods")
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "yunikorn"}}
        await benchray.create_all(cluster, [ns, _configmap(_tree(nodes)), *_pods(pods)])
        log(f"{pods} pods pending; starting the YuniKorn-mode scheduler")
        await benchray.settle_gc(cluster)
        await cluster.start_clock(roles=["yunikorn"])
        first, last, count = await benchray.wait_binds(cluster, pods, max(120.0, pods / 50), role="yunikorn")
        view = (await cluster.inspect("yunikorn"))[0]
    finally:
        await cluster.shutdown()
    seconds = (last - first) if count > 1 else 0.0
    rate = round(count / seconds, 1) if seconds > 0 else None
    log(
        f"bound {count}/{pods} pods over {len(_LEAVES)} leaf queues in {seconds:.2f}s from first bind to last: {rate} pods/s"
    )
    return {
        "benchmark": "yunikorn",
        "workload": "basic",
        "runtime": "ray",
        "nodes": nodes,
        "pods": pods,
        "bound": count,
        "seconds": round(seconds, 3),
        "podsPerSecond": rate,
        "queues": {q["queuename"]: q["allocatedResource"].get("pods", 0) for q in _leaves(view["queues"])},
    }
