"""``kubemu bench density``: how many nodes and pods a machine holds, and what each costs.

Through the actors (apiserver, scheduler, controller manager and node hosts, as ``bench
schedule`` starts them), ``--nodes`` N nodes of the schedule bench's shape come up; the
bench waits until the driver's watch sees every node Ready (``secondsToReady``: from
creating the actors to the last node Ready), then creates N x ``--pods-per-node`` M small
bare pods (``benchstartup.density_pod``: 10m CPU / 64Mi, so that a node's 110 pods fit) in
create calls of ``CREATE_BATCH``, with at most ``MAX_BACKLOG`` created and not yet Running,
and waits until the watch sees every one Running, as its kubelet reported it
(``secondsToRunning``: from the first create to the last Running).

Memory: a thread samples the RSS of every process of the Ray session once a second
(``rss.py``: the actors, the driver, Ray's gcs_server, raylet, dashboard, agents and idle
workers), grouped per kind; ``peakRssBytes`` is the highest sum of one sample and
``peakRssByKind`` each kind's highest. The two slopes come from steady states in one
command, each the mean of three readings taken ``SETTLE`` seconds after the state was
reached (every node has renewed its Lease once by then) and after every actor's full
garbage collection:

- ``bytesPerNode``: first a cluster of N/10 nodes (at least ``SMALL_MIN`` when N allows)
  with no pods, in as many node hosts as the full cluster will have (so that the per-process
  cost of a host, ~50 MB, is the same in both), is measured and shut down; then the full
  N-node cluster without pods: (RSS(N) - RSS(N/10)) / (N - N/10). Ray's own processes and
  the driver are in both sums, so their fixed cost cancels out. (With ``--nodes-per-host``
  both clusters pack that many nodes a host: the hosts then scale with the nodes, and their
  per-process cost is part of the slope.)
- ``bytesPerPod``: in the full cluster, (RSS with every pod Running - RSS with none) /
  (N x M).

``--explain all`` makes the scheduler record every pod's SchedulingResult (the objects the
apiserver stores and the scheduler's bounded records): their cost is then in ``bytesPerPod``.

Both sums include the driver, whose watch holds a key per node and a bit per (numbered) pod
(``cluster/runtime/nameset.py``): small beside the cluster's cost, and in
``peakRssByKind.driver`` for whoever wants it out. A run in which not
every node is Ready or not every pod Running within its limit says so, reports
``complete: false`` and the CLI exits 1.
"""

from __future__ import annotations

import asyncio
import math
import os
import time

from actors.cluster import RayCluster
from actors.harness.benchray import ray_cluster, settle_gc
from actors.harness.benchstartup import WATCHES, PodWatch, density_pod, nodes_ready, watch_until
from actors.harness.rss import KINDS, Sampler, actor_pids, alive
from actors.harness.workloads import CREATE_BATCH
from cluster.api.requests import Create
from cluster.scenario.layout import pack

MAX_PODS_PER_NODE = 110  # the node shape's pods capacity (upstream kubelet's default maxPods)
SMALL_MIN = 100  # the smaller cluster's nodes when N allows
SETTLE = 12.0  # real seconds a state is left to settle before its memory is read (Lease renewals: 10 s)
RUNNING_STALL = 60.0  # real seconds without a pod starting: the rest will not
# Created pods not yet Running at most: the driver could create pods several times faster
# than a large cluster schedules them, and every watcher that fell a whole watch window
# behind the flood (a million pods) would relist it, over and over.
MAX_BACKLOG = 20_000


def check(nodes: int, pods_per_node: int) -> None:
    """The bench's own argument (``--nodes`` is checked by ``run_bench``)."""
    if pods_per_node < 1:
        raise ValueError(f"--pods-per-node: {pods_per_node} must be at least 1")
    if pods_per_node > MAX_PODS_PER_NODE:
        raise ValueError(
            f"--pods-per-node: {pods_per_node} is more than a node holds (its capacity is {MAX_PODS_PER_NODE} pods)"
        )


def small_size(nodes: int) -> int:
    """The nodes of the smaller cluster ``bytesPerNode`` is measured against: N/10, at least
    ``SMALL_MIN`` while that stays below N; 0 (no slope) for a cluster under 10 nodes."""
    small = max(nodes // 10, SMALL_MIN)
    return small if small < nodes else nodes // 10


def hosts_for(nodes: int, nodes_per_host: int) -> int:
    """How many node hosts ``ray_cluster`` packs ``nodes`` into (Ray must be up)."""
    import ray

    cpus = int(ray.available_resources().get("CPU", os.cpu_count() or 1))
    return len(pack(list(range(nodes)), nodes_per_host, cpus))


def running_limit(pods: int) -> float:
    return max(300.0, pods / 20)


def total(rss: dict[str, int] | None) -> int | None:
    return None if rss is None else sum(rss.values())


def per(more: int | None, less: int | None, count: int) -> int | None:
    """Bytes per unit between two sums (None when either is missing or there is no unit)."""
    if more is None or less is None or count <= 0:
        return None
    return round((more - less) / count)


async def _explained(cluster: RayCluster, log) -> tuple[int, int]:
    """The SchedulingResult objects the apiserver holds and their encoded bytes."""
    listed = await cluster.api.list.remote("SchedulingResult")
    found = (len(listed.items), sum(len(b) for b in listed.items))
    log(f"{found[0]} SchedulingResults stored, {found[1]} bytes encoded")
    return found


class Phase:
    """One cluster brought up with the sampler told which processes are its actors."""

    def __init__(self, cluster: RayCluster, sampler: Sampler):
        self.cluster, self.sampler = cluster, sampler
        self.watch = PodWatch(times=False)
        self.informer = cluster.informer(WATCHES)
        self.pids: dict[int, str] = {}

    @classmethod
    async def up(
        cls, nodes: int, nodes_per_host: int, sampler: Sampler, explain: str = "failed"
    ) -> tuple[Phase, float, bool]:
        t0 = time.time()
        phase = cls(ray_cluster(nodes, nodes_per_host, explain=explain), sampler)
        c = phase.cluster
        phase.pids = await actor_pids([("apiserver", c.api), *c.actors()])
        sampler.set_roles(phase.pids)
        ready = await nodes_ready(c, phase.informer, phase.watch, nodes)
        return phase, time.time() - t0, ready

    async def settled_rss(self) -> dict[str, int]:
        """The mean RSS per kind once the state has settled (the watch kept up meanwhile)."""
        end = time.monotonic() + SETTLE
        while time.monotonic() < end:
            self.watch.apply(await self.informer.poll(0.2), time.time())
        await settle_gc(self.cluster)
        return await self.sampler.mean()

    async def down(self) -> None:
        await self.cluster.shutdown()
        deadline = time.monotonic() + 15.0
        while any(alive(p) for p in self.pids) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        self.sampler.set_roles({})


async def density(nodes: int, pods_per_node: int, nodes_per_host: int, log, explain: str = "failed") -> dict:
    from actors.raycluster import init_ray

    check(nodes, pods_per_node)
    t_start = time.time()
    sampler = Sampler().start()
    pods = nodes * pods_per_node
    rss_small = rss_nodes = rss_pods = None
    explained = (0, 0)
    to_ready, to_running, ready, running = 0.0, None, False, False
    try:
        init_ray()
        hosts = hosts_for(nodes, nodes_per_host)
        small = small_size(nodes)
        if small:
            per_host = nodes_per_host or math.ceil(small / hosts)
            phase, took, small_ready = await Phase.up(small, per_host, sampler, explain)
            try:
                log(f"small cluster: {len(phase.watch.ready)}/{small} nodes Ready in {took:.1f}s")
                if small_ready:
                    rss_small = _logged(log, "small cluster", await phase.settled_rss())
            finally:
                await phase.down()
        phase, to_ready, ready = await Phase.up(nodes, nodes_per_host, sampler, explain)
        watch = phase.watch
        try:
            log(f"{len(watch.ready)}/{nodes} nodes Ready on {len(phase.cluster.hosts)} hosts in {to_ready:.1f}s")
            if ready:
                rss_nodes = _logged(log, f"{nodes} nodes, no pods", await phase.settled_rss())
                log(f"creating {pods} pods")
                t0 = time.time()
                created = await _create(phase, pods)
                running = created and await watch_until(
                    phase.informer, watch, lambda: len(watch.running) >= pods, running_limit(pods), RUNNING_STALL
                )
                to_running = (watch.last_start or time.time()) - t0
                log(f"{len(watch.running)}/{pods} pods Running {to_running:.1f}s after the first create")
                if running:
                    rss_pods = _logged(log, f"{pods} pods Running", await phase.settled_rss())
                explained = await _explained(phase.cluster, log)  # after the reading: the list is the driver's
        finally:
            await phase.down()
    finally:
        sampler.stop()
    complete = ready and running
    if not complete:
        log(
            f"NOT complete: {len(watch.ready)}/{nodes} nodes Ready, {len(watch.running)}/{pods} pods Running "
            "within the limits"
        )
    result = {
        "benchmark": "density",
        "nodes": nodes,
        "podsPerNode": pods_per_node,
        "pods": pods,
        "explain": explain,
        "schedulingResults": explained[0],
        "schedulingResultBytes": explained[1],
        "hosts": len(phase.cluster.hosts),
        "seconds": round(time.time() - t_start, 1),
        "secondsToReady": round(to_ready, 2),
        "secondsToRunning": None if to_running is None else round(to_running, 2),
        "peakRssBytes": sampler.peaks.total,
        "peakRssByKind": {k: sampler.peaks.by_kind[k] for k in KINDS},
        "bytesPerNode": per(total(rss_nodes), total(rss_small), nodes - small),
        "bytesPerPod": per(total(rss_pods), total(rss_nodes), pods),
        "smallNodes": small,
        "rssBytes": {"smallCluster": rss_small, "nodesReady": rss_nodes, "podsRunning": rss_pods},
        "readyNodes": len(watch.ready),
        "runningPods": len(watch.running),
        "complete": complete,
    }
    log(
        f"peak RSS {_mb(sampler.peaks.total)} MB; {result['bytesPerNode']} bytes per node, "
        f"{result['bytesPerPod']} bytes per pod"
    )
    return result


async def _create(phase: Phase, pods: int) -> bool:
    """Every pod, ``CREATE_BATCH`` a call, the watch kept up between calls, and never more
    than ``MAX_BACKLOG`` created pods not yet Running. False when the backlog stalls (no pod
    started for ``RUNNING_STALL`` seconds): the rest are not created."""
    watch = phase.watch
    for i in range(0, pods, CREATE_BATCH):
        # Past the backlog: create again once half of it has started.
        if i - len(watch.running) > MAX_BACKLOG and not await _running(phase, i - MAX_BACKLOG // 2, pods):
            return False
        batch = [Create(density_pod(k)) for k in range(i, min(pods, i + CREATE_BATCH))]
        errors = [e for e in await phase.cluster.write(batch) if e is not None]
        if errors:
            raise RuntimeError(f"create failed: {errors[0].reason}: {errors[0].message}")
        watch.apply(await phase.informer.poll(0), time.time())
    return True


async def _running(phase: Phase, count: int, pods: int) -> bool:
    """Watch until ``count`` pods are Running (False: the pods stalled or ran out of time)."""
    watch = phase.watch
    return await watch_until(
        phase.informer, watch, lambda: len(watch.running) >= count, running_limit(pods), RUNNING_STALL
    )


def _logged(log, what: str, rss: dict[str, int]) -> dict[str, int]:
    log(f"{what}: RSS {_mb(total(rss))} MB: {_by_kind_mb(rss)}")
    return rss


def _mb(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.0f}"


def _by_kind_mb(rss: dict[str, int]) -> str:
    return ", ".join(f"{k} {_mb(v)}" for k, v in rss.items())
