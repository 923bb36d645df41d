"""``kubemu bench chaos``: a soak with random faults; does the cluster lose any pod?

N nodes (the ``schedule`` bench's node shape, in hosts of ``--nodes-per-host``, 50 by
default, so that a killed host takes a rack and not a quarter of the cluster) run M pods
owned by ReplicaSets of at most ``RS_SIZE`` replicas each. Once every pod runs, random
chaos (``randomchaos.py``) kills node actors, host processes or cuts heartbeats at
``--kill-rate`` faults per emulated second for ``--duration`` emulated seconds, optionally
restarting components at even intervals (``--restart``). Then the cluster is given time to
heal: nodes that died go NotReady after 40 s, their pods are evicted after their 300 s
tolerations, and the ReplicaSets replace them on the living nodes.

The verdict comes from watch events only, as in a scenario (``Mirror``). When healing
ends, the replicas not running on a live node are either lost (the live nodes had room
for them: ``podsLost``, which must be 0) or beyond what the faults left
(``capacityShortfall``: more pods than the Ready nodes can hold). ``violations`` counts
noOvercommit, noDoubleBinding and noLostPods lines. Prints a human summary and, last, one
JSON line.
"""

from __future__ import annotations

import math
import time

from actors.cluster import RayCluster
from actors.harness.benchray import create_all, ray_cluster
from cluster.api.objects import condition, is_terminating, node_name_of, phase_of
from cluster.api.resources import PODS, node_allocatable, pod_requests
from cluster.scenario.chaos import RANDOM_TARGETS, ChaosSpec
from cluster.scenario.driver import Timeline
from cluster.scenario.mirror import Mirror
from cluster.scenario.ownership import controller_uid

RS_SIZE = 1000
HEAL_LIMIT = 900.0  # emulated seconds after the soak before a pod still missing counts
INVARIANTS = ("noOvercommit", "noDoubleBinding", "noLostPods")
REVIVE_EVERY = 2.0  # real seconds between looks for actors Ray restarted on its own


def replica_set(i: int, replicas: int) -> dict:
    labels = {"app": f"soak-{i}"}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": f"soak-{i}", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "containers": [
                        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}
                    ],
                },
            },
        },
    }


class Soak:
    """The watch side of the soak: a Mirror, and how many replicas run on live nodes."""

    def __init__(self, cluster: RayCluster):
        self.cluster = cluster
        self.mirror = Mirror()
        self.informer = cluster.informer(["Node", "Pod", "ReplicaSet"])
        self.created: set[str] = set()  # uids of every owned pod seen
        self.revived: list[str] = []  # actors Ray restarted on its own, started again
        self._revived_at = time.time()

    async def observe(self, timeline: Timeline | None = None) -> float:
        now = self.cluster.now()
        if timeline is not None:
            await timeline.tick(now)
        for kind, etype, obj, _ in await self.informer.poll(0.05):
            self.mirror.apply(kind, etype, obj, now, time.time())
            if kind == "Pod" and controller_uid(obj):
                self.created.add(obj["metadata"].get("uid", ""))
        self.mirror.check_invariants(now)
        if time.time() - self._revived_at >= REVIVE_EVERY:
            self._revived_at = time.time()
            self.revived += await self.cluster.revive()
        return now

    def running(self) -> int:
        """Owned pods Running, not terminating, on a node whose kubelet is alive."""
        dead = self.cluster.fleet.dead_nodes
        return sum(
            1
            for p in self.mirror.pods.values()
            if controller_uid(p) and phase_of(p) == "Running" and not is_terminating(p) and node_name_of(p) not in dead
        )

    def room(self, pod: dict) -> int:
        """How many more pods shaped like ``pod`` the live, Ready nodes could hold now."""
        want = {**pod_requests(pod), PODS: 1}
        dead, total = self.cluster.fleet.dead_nodes, 0
        for name, node in self.mirror.nodes.items():
            if name in dead or (condition(node, "Ready") or {}).get("status") != "True":
                continue
            free, used = node_allocatable(node), self.mirror.requested_on(name)
            fits = [(free.get(r, 0) - used.get(r, 0)) // amount for r, amount in want.items() if amount > 0]
            total += max(0, min(fits, default=0))
        return total

    async def wait_running(self, want: int, limit: float, timeline: Timeline | None = None) -> tuple[float, bool]:
        """Observe until ``want`` replicas run or ``limit`` emulated seconds pass."""
        start = self.cluster.now()
        while True:
            now = await self.observe(timeline)
            if self.running() >= want and not (timeline and timeline.randoms):
                return now - start, True
            if now - start > limit:
                return now - start, False


def _chaos_spec(rate: float, seed: int, targets: list[str], duration: float) -> ChaosSpec:
    for t in targets:
        if t not in RANDOM_TARGETS:
            raise ValueError(
                f"--targets: {t!r} is not an action random chaos runs (supported: {', '.join(RANDOM_TARGETS)})"
            )
    if not rate > 0:
        raise ValueError(f"--kill-rate: {rate} must be greater than 0 (faults per emulated second)")
    return ChaosSpec(action="random", rate=rate, seed=seed, targets=targets, duration=duration)


async def run_chaos(
    nodes: int,
    pods: int,
    *,
    kill_rate: float,
    duration: float,
    time_scale: float,
    seed: int,
    targets: list[str],
    restarts: list[str],
    nodes_per_host: int,
    log,
) -> dict:
    spec = _chaos_spec(kill_rate, seed, targets, duration)
    t0 = time.time()
    cluster = ray_cluster(nodes, nodes_per_host, seed=seed, time_scale=time_scale)
    try:
        await cluster.start()
        sets = [replica_set(i, min(RS_SIZE, pods - i * RS_SIZE)) for i in range(math.ceil(pods / RS_SIZE))]
        await create_all(cluster, sets)
        soak, timeline = Soak(cluster), Timeline(cluster, log)
        took, ok = await soak.wait_running(pods, max(600.0, pods / 10) * time_scale)
        log(
            f"{nodes} nodes on {len(cluster.hosts)} hosts; {soak.running()}/{pods} pods running after "
            f"{took:.0f}s emulated ({time.time() - t0:.0f}s real)"
        )
        if not ok:
            raise RuntimeError(f"only {soak.running()} of {pods} pods ran before the soak; nothing measured")
        healed = await _soak(cluster, soak, timeline, spec, restarts, log)
        return _result(cluster, soak, timeline, nodes, pods, spec, healed, time.time() - t0, log)
    finally:
        await cluster.shutdown()


async def _soak(cluster: RayCluster, soak: Soak, timeline: Timeline, spec: ChaosSpec, restarts: list[str], log):
    start = await soak.observe()
    await timeline.chaos(spec, start)
    soak_seconds = spec.duration_seconds() or 0.0  # _chaos_spec always sets a duration
    due = [(start + soak_seconds * (i + 1) / (len(restarts) + 1), c) for i, c in enumerate(restarts)]
    while timeline.randoms or due:
        now = await soak.observe(timeline)
        while due and due[0][0] <= now:
            component = due.pop(0)[1]
            live = sorted(cluster.fleet.live_nodes(now))
            node = live[len(timeline.chaos_log) * 7919 % len(live)] if component == "host" and live else None
            await timeline.chaos(ChaosSpec(action="restart", component=component, node=node), now)
    end = cluster.now()
    log(f"soak over at {end:.0f}s emulated: {len(timeline.chaos_log) - 1} faults; healing")
    took, ok = await soak.wait_running(soak.mirror.owned.wanted(), HEAL_LIMIT, timeline)
    return took if ok else None


def split_missing(missing: int, room: int) -> tuple[int, int]:
    """Replicas not running, as (lost: the Ready nodes had room for them, shortfall: beyond it)."""
    missing = max(0, missing)
    lost = min(missing, max(0, room))
    return lost, missing - lost


def _result(cluster, soak: Soak, timeline: Timeline, nodes, pods, spec: ChaosSpec, healed, wall: float, log) -> dict:
    faults: dict[str, int] = {}
    for entry in timeline.chaos_log[1:]:
        faults[entry["action"]] = faults.get(entry["action"], 0) + 1
    lost, shortfall = split_missing(pods - soak.running(), soak.room(replica_set(0, 1)["spec"]["template"]))
    violations = {name: len(soak.mirror.violations[name]) for name in INVARIANTS}
    for name in INVARIANTS:
        for line in soak.mirror.violations[name][:3]:
            log(f"violation {name}: {line}")
    log(
        f"faults {faults}; nodes down {len(cluster.fleet.dead_nodes)}; pods created {len(soak.created)}; "
        f"healed {f'in {healed:.0f}s emulated' if healed is not None else f'NOT within {HEAL_LIMIT:.0f}s'}; "
        f"pods lost {lost}; capacity shortfall {shortfall}; violations {sum(violations.values())}"
    )
    return {
        "benchmark": "chaos",
        "nodes": nodes,
        "pods": pods,
        "hosts": len(cluster.hosts),
        "seconds": round(wall, 1),
        "killRate": spec.rate,
        "soakSeconds": spec.duration_seconds(),
        "timeScale": cluster.time_scale,
        "targets": spec.targets,
        "faults": faults,
        "nodesDown": len(cluster.fleet.dead_nodes),
        "restarts": [{"component": c, "realSeconds": round(s, 2)} for c, s in cluster.fleet.restarts],
        "podsCreated": len(soak.created),
        "revived": soak.revived,
        "healSeconds": None if healed is None else round(healed, 1),
        "podsLost": lost,
        "capacityShortfall": shortfall,
        "violations": sum(violations.values()),
        "violationsBy": violations,
    }
