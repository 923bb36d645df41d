"""``kubemu bench startup``: pod startup latency at a steady creation rate, through the actors.

ClusterLoader2's density measurement, on kubemu: ``--nodes`` nodes of the schedule bench's
shape come up through the actors (apiserver, scheduler, controller manager, node hosts);
once every node is Ready, ``--pods`` small bare pods (``density_pod``) are created at
``--rate`` pods per second, in a batch every ``TICK`` seconds (the batch holds what is due
by the end of its tick, so a slow create call is caught up by the next, never skipped).
The driver's own watch (``Cluster.informer``, list + watch like any client) records for
each pod the real time its create call was sent, the time the watch first saw it bound
(``spec.nodeName`` set) and the time it first saw it Running (``status.phase`` as the
kubelet wrote it).

Reported: pod startup latency (creation to Running observed by the watch: upstream's
pod-startup SLI, whose SLO is ``SLO_SECONDS`` at the 99th percentile), scheduling latency
(creation to bound observed) and bound-to-Running, each as nearest-rank p50/p90/p99
(``latency_summary``), and ``p99StartupSeconds`` as the headline. The creation time is
the driver's send time, not the second-granular ``creationTimestamp``: a little earlier
than the apiserver's, so the figures are, if anything, pessimistic. Pods not Running
``START_LIMIT`` seconds after the last create (or once no pod started for ``STALL``
seconds) are counted as ``notStarted``; the run is then incomplete and the CLI exits 1.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable

import msgspec

from actors.cluster import RayCluster
from actors.harness.benchray import ray_cluster
from actors.harness.workloads import CREATE_BATCH
from cluster.api.objects import condition, name_of
from cluster.api.requests import Create, Watch
from cluster.runtime.component import WatchEvent
from cluster.runtime.nameset import NameSet
from cluster.scenario.report import percentile

TICK = 0.1  # seconds between two batches of creates, as ClusterLoader2 paces them
SLO_SECONDS = 5.0  # upstream's pod startup SLO (p99, schedulable stateless pods)
START_LIMIT = 60.0  # real seconds after the last create before a pod not Running counts as never started
STALL = 30.0  # ... or this long without any pod starting
READY_LIMIT = 600.0  # real seconds for every node to be Ready (more for huge clusters: see ready_limit)
POLL = 0.05  # the driver watch's long-poll timeout
POD_CPU, POD_MEMORY = "10m", "64Mi"  # small enough that a node's 110 pods fit its 4 CPUs


def density_pod(i: int, prefix: str = "density") -> dict:
    """A bare pod (no controller), started at once and running for ever."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "labels": {"app": prefix}},
        "spec": {
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": POD_CPU, "memory": POD_MEMORY}}}
            ],
        },
    }


def latency_summary(values: Iterable[float]) -> dict:
    """{"p50", "p90", "p99"} (nearest rank, seconds, rounded to the millisecond; None
    without values) and how many values there were."""
    vals = list(values)

    def p(q: int) -> float | None:
        v = percentile(vals, q)
        return None if v is None else round(v, 3)

    return {"p50": p(50), "p90": p(90), "p99": p(99), "count": len(vals)}


# The driver's watch: a node read only as far as its Ready condition, a pod by its head
# (read from the bytes; ``lazy``, not ``heads``, so the reflector keeps no uid per pod).
# Decoding every node of a registration batch whole left the driver's heap about 7.5 KB a
# node larger at 10,000 nodes, which bench density counted as the cluster's.
WATCHES = (Watch("Node", lazy=True), Watch("Pod", lazy=True))


class _Condition(msgspec.Struct):
    type: str = ""
    status: str = ""


class _NodeStatus(msgspec.Struct):
    conditions: list[_Condition] | None = None


class _NodeMeta(msgspec.Struct):
    name: str = ""


class _Node(msgspec.Struct):
    metadata: _NodeMeta | None = None
    status: _NodeStatus | None = None


_NODE = msgspec.msgpack.Decoder(_Node)


def node_ready(ev: WatchEvent) -> tuple[str, bool]:
    """A Node event's node name and whether its Ready condition is True, read from the
    event's bytes without decoding the rest (the object itself when there are no bytes, as
    for a relist's DELETED, or when the bytes are not of the usual shape)."""
    if ev.raw is not None:
        try:
            node = _NODE.decode(ev.raw)
        except msgspec.DecodeError:
            node = None
        if node is not None and node.metadata is not None and node.metadata.name:
            conds = (node.status.conditions if node.status is not None else None) or ()
            return node.metadata.name, any(c.type == "Ready" and c.status == "True" for c in conds)
    cond = condition(ev.obj, "Ready")
    return name_of(ev.obj), cond is not None and cond.get("status") == "True"


class PodWatch:
    """What the driver's watch saw: the Ready nodes, and per pod the real time it was first
    seen bound and first seen Running (``times``: keep the times; without, only which pods
    run, for a bench that counts). Fed by an informer of ``WATCHES``.

    Which pods run is a ``NameSet``: the benches' numbered pods cost a bit each, not a
    string, so the driver's own memory (which bench density counts as the cluster's) does
    not grow with the pods."""

    def __init__(self, times: bool = True):
        self.times = times
        self.ready: set[str] = set()
        self.bound_at: dict[str, float] = {}
        self.running_at: dict[str, float] = {}
        self.running = NameSet()
        self.last_start = 0.0  # real time a pod was last first seen Running

    def apply(self, events: Iterable[WatchEvent], now: float) -> None:
        for ev in events:
            if ev.kind == "Node":
                name, ready = node_ready(ev)
                if ev.type != "DELETED" and ready:
                    self.ready.add(name)
                else:
                    self.ready.discard(name)
                continue
            if ev.kind != "Pod" or ev.type == "DELETED":
                continue
            head = ev.head
            name = head.name
            if self.times and name not in self.bound_at and head.node_name:
                self.bound_at[name] = now
            if head.phase == "Running" and name not in self.running:
                self.running.add(name)
                self.last_start = now
                if self.times:
                    self.running_at[name] = now


async def watch_until(informer, watch: PodWatch, done, limit: float, stall: float) -> bool:
    """Poll the driver's watch into ``watch`` until ``done()`` (True), ``limit`` real seconds
    pass or ``stall`` seconds pass without progress: no node newly Ready, no pod newly bound or
    Running (False)."""
    t0 = time.monotonic()
    seen, since = -1, t0
    while True:
        watch.apply(await informer.poll(POLL), time.time())
        now = time.monotonic()
        if done():
            return True
        progress = len(watch.ready) + len(watch.running) + len(watch.bound_at)
        if progress != seen:
            seen, since = progress, now
        if now - t0 > limit or now - since > stall:
            return False


def ready_limit(nodes: int) -> float:
    return max(READY_LIMIT, nodes / 20)


async def nodes_ready(cluster: RayCluster, informer, watch: PodWatch, nodes: int) -> bool:
    """Register every node, start every clock, and watch until all ``nodes`` are Ready."""
    await cluster.prime()
    await cluster.start_clock()
    return await watch_until(informer, watch, lambda: len(watch.ready) >= nodes, ready_limit(nodes), ready_limit(nodes))


def check(rate: float) -> None:
    """The bench's own argument (``--nodes`` and ``--pods`` are checked by ``run_bench``)."""
    if not rate > 0:
        raise ValueError(f"--rate: {rate} must be greater than 0 (pods created per second)")
    if not math.isfinite(rate):
        raise ValueError(f"--rate: {rate} must be a finite number of pods per second")


async def _create_paced(cluster: RayCluster, pods: int, rate: float, created_at: dict[str, float]) -> None:
    """Create ``pods`` pods at ``rate`` per second, a batch every ``TICK`` seconds."""
    t0, made, tick = time.monotonic(), 0, 0
    while made < pods:
        tick += 1
        due = min(pods, math.floor(rate * TICK * tick + 1e-9))
        while made < due:
            batch = [density_pod(i) for i in range(made, min(due, made + CREATE_BATCH))]
            sent = time.time()
            errors = [e for e in await cluster.write([Create(p) for p in batch]) if e is not None]
            if errors:
                raise RuntimeError(f"create failed: {errors[0].reason}: {errors[0].message}")
            for p in batch:
                created_at[p["metadata"]["name"]] = sent
            made += len(batch)
        await asyncio.sleep(max(0.0, t0 + TICK * tick - time.monotonic()))


async def startup(nodes: int, pods: int, rate: float, nodes_per_host: int, log) -> dict:
    check(rate)
    t0 = time.time()
    cluster = ray_cluster(nodes, nodes_per_host)
    watch = PodWatch()
    created_at: dict[str, float] = {}
    create_seconds, complete = 0.0, False
    try:
        informer = cluster.informer(WATCHES)
        ready = await nodes_ready(cluster, informer, watch, nodes)
        log(f"{len(watch.ready)}/{nodes} nodes Ready on {len(cluster.hosts)} hosts after {time.time() - t0:.1f}s")
        if not ready:
            return _result(nodes, pods, rate, cluster, watch, created_at, 0.0, False, log)
        log(f"creating {pods} pods at {rate:g} pods/s")
        c0 = time.time()
        creating = asyncio.ensure_future(_create_paced(cluster, pods, rate, created_at))
        while not creating.done():  # watch while creating: the times are the watch's
            watch.apply(await informer.poll(POLL), time.time())
        await creating  # a failed create raises here
        create_seconds = time.time() - c0
        log(f"{pods} pods created in {create_seconds:.1f}s; waiting for every one to run")
        complete = await watch_until(informer, watch, lambda: len(watch.running) >= pods, START_LIMIT, STALL)
    finally:
        await cluster.shutdown()
    return _result(nodes, pods, rate, cluster, watch, created_at, create_seconds, complete, log)


def _result(nodes, pods, rate, cluster, watch: PodWatch, created_at, create_seconds: float, complete: bool, log):
    startup_lat = latency_summary(watch.running_at[n] - t for n, t in created_at.items() if n in watch.running_at)
    sched_lat = latency_summary(watch.bound_at[n] - t for n, t in created_at.items() if n in watch.bound_at)
    bound_to_running = latency_summary(
        watch.running_at[n] - watch.bound_at[n] for n in watch.running_at if n in watch.bound_at
    )
    not_started = pods - len(watch.running)
    p99 = startup_lat["p99"]
    log(
        f"pod startup latency (create -> Running seen by the watch): p50 {startup_lat['p50']}s "
        f"p90 {startup_lat['p90']}s p99 {p99}s; scheduling (create -> bound): p50 {sched_lat['p50']}s "
        f"p90 {sched_lat['p90']}s p99 {sched_lat['p99']}s"
    )
    if not_started:
        log(
            f"{not_started} of {pods} pods were not seen Running (limit {START_LIMIT:.0f}s after the last create, "
            f"or {STALL:.0f}s without a start): the run is NOT complete"
        )
    return {
        "benchmark": "startup",
        "nodes": nodes,
        "pods": pods,
        "rate": rate,
        "hosts": len(cluster.hosts),
        "readyNodes": len(watch.ready),
        "seconds": round(create_seconds, 3),
        "createdPerSecond": round(len(created_at) / create_seconds, 1) if create_seconds > 0 else None,
        "running": len(watch.running),
        "notStarted": not_started,
        "complete": complete and not_started == 0,
        "podStartupLatency": startup_lat,
        "schedulingLatency": sched_lat,
        "boundToRunningLatency": bound_to_running,
        "sli": {
            "name": "pod startup latency, create to Running observed by watch, p99",
            "seconds": p99,
            "sloSeconds": SLO_SECONDS,
            "met": p99 is not None and p99 <= SLO_SECONDS and not_started == 0,
        },
        "p99StartupSeconds": p99,
    }
