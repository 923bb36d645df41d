"""Driving a scenario through an emulated cluster, under either runtime.

Owns the run loop: it feeds the timeline to the cluster (creates, deletes, patches, node
pools added, removed and scaled, Nodes created and deleted through the API, chaos, scale,
rollback), watches Pods, Nodes, Events and the
workload kinds (``KINDS``) into a ``Mirror`` like any other client, lets ``ScenarioRun``
judge the expectations, ends the run when they allow it and the cluster has settled, and
builds the report. It talks to the cluster only through ``cluster/runtime/cluster.py``'s
``Cluster``, so the same loop drives both runtimes alike: at each instant it runs the steps
due, lets the cluster finish the instant (``settle_watch``: the local runtime's rounds, or
the Ray runtime's coordinator asking its actors, ``cluster/runtime/stepper.py``), observes
what its watch brought, and advances the clock to the next thing that happens. Emulated 0
is therefore the instant at which the scenario's objects exist and the cluster has reacted
to them, on either runtime; ``until`` and ``within`` windows count from there.

A run ends at ``spec.duration``, or earlier once the timeline (random chaos included) is
done, the expectations are decided (``ScenarioRun.over``) and the cluster is quiet: every
component has seen every write and tried what it had, and none will change anything on
its own within ``SETTLE_HORIZON`` emulated seconds (heartbeats aside). The driver's own
watch then catches up with the last write, so the report holds every event.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..api import kindspec
from ..api.errors import StatusError
from ..api.objects import phase_of
from ..api.requests import Create, Delete, Update
from ..kubelet.adopt import adopting_host
from ..runtime.cluster import Cluster, Informer, RuntimeRefused
from ..runtime.commands import DeviceHealth, DevicePlugin, Pressure
from ..runtime.component import CommandError
from ..runtime.nodeclaim import NodeClaimer
from . import report as reports
from .chaos import ChaosSpec
from .layout import expand_pools, host_spec
from .mirror import Mirror
from .patchstep import PatchSpec
from .randomchaos import RandomChaos
from .repeat import batches
from .rollout import Refused, rolled_back, scaled
from .runner import ScenarioRun
from .schema import NodePool, Scenario, Step
from .schema_workloads import PoolScale, RollbackSpec, ScaleSpec

PROGRESS_EVERY = 2.0  # real seconds between progress lines
RESOURCES_EVERY = 0.25  # real seconds between reads of the kubelets' PodResources view (a running clock)
LAG_NOTE = 1.0  # emulated seconds behind a paced run's timeScale worth a line in the summary
# What the driver's watch mirrors: what expectations, invariants and the report read
# (and any other kind an ``object`` expectation names). A kind without objects costs one
# empty watch entry per poll, and the invariants that read these look only while some exist.
# Each kind's place is its spec's ``mirror_order`` (``cluster/api/kinds.py``); SchedulingResult
# feeds the report's schedulingResults (cluster/scheduler/explain.py).
KINDS = kindspec.ordered("mirror_order")

Log = Callable[[str], None]


class Timeline:
    """Runs due steps against the cluster; random chaos steps keep running on later turns."""

    def __init__(
        self,
        cluster: Cluster,
        log: Log,
        taken: dict[str, int] | None = None,
        mirror: Mirror | None = None,
        pools: dict[str, NodePool] | None = None,
    ):
        self.cluster, self.log = cluster, log
        self.pools = pools or {}  # namePrefix -> the pool a ``scale: {pool}`` step adds nodes of
        self.mirror = mirror or Mirror()  # what the watch shows, for rollback (as kubectl lists)
        self.taken = {} if taken is None else taken  # namePrefix -> next index, for addNodes
        self.randoms: list[RandomChaos] = []
        self.chaos_log: list[dict] = []  # what chaos did, for the report

    async def run(self, step: Step, now: float) -> None:
        await self.objects(step)
        for p in step.patches():
            await self.patch(p)
        if isinstance(step.scale, PoolScale):
            await self.scale_pool(step.scale)
        elif step.scale is not None:
            await self.scale(step.scale)
        if step.rollback is not None:
            await self.rollback(step.rollback)
        await self.nodes(step)
        if step.chaos is not None:
            await self.chaos(step.chaos, now)

    async def objects(self, step: Step) -> None:
        """The step's creates and deletes, as kubectl would make them."""
        cluster, log = self.cluster, self.log
        for batch in batches(step.create):  # a repeat's copies are made batch by batch
            for obj, err in zip(batch, await cluster.write([Create(o) for o in batch])):
                if err is not None:
                    log(f"create {obj.get('kind')}/{obj.get('metadata', {}).get('name')}: {err.reason}: {err.message}")
        for d in step.deletes():
            (err,) = await cluster.write([Delete(d.kind, d.namespace, d.name, "", d.gracePeriodSeconds)])
            if err is not None:
                log(f"delete {d.kind}/{d.namespace}/{d.name}: {err.reason}: {err.message}")

    async def nodes(self, step: Step) -> None:
        """The step's nodes added and removed: pools (hosts started or stopped) and Node
        objects written as kubectl would."""
        cluster, log = self.cluster, self.log
        if step.addNodes is not None:
            await self.add_nodes(step.addNodes, "addNodes")
        for node in step.node_creates():  # as kubectl create: a kubelet takes it over (nodeclaim.py)
            (err,) = await cluster.write([Create(node)])
            log(f"createNode {node['metadata'].get('name')}: " + (f"{err.reason}: {err.message}" if err else "created"))
        for name in step.node_deletes():  # as kubectl delete: its kubelet stops, pod GC takes its pods
            (err,) = await cluster.write([Delete("Node", "", name)])
            log(f"deleteNode {name}: " + (f"{err.reason}: {err.message}" if err else "deleted"))
        if step.removeNodes is not None:
            names = step.removeNodes.names
            for name, err in zip(names, await cluster.remove_nodes(names)):
                if err is not None:
                    log(f"removeNodes {name}: {err.reason}: {err.message}")

    async def add_nodes(self, pool: NodePool, what: str) -> None:
        configs = expand_pools([pool], self.taken)
        if configs:
            await self.cluster.add_host(host_spec(configs, len(self.cluster.fleet.host_index)))
        self.log(f"{what}: {', '.join(c.name for c in configs) or 'none'}")

    async def scale_pool(self, s: PoolScale) -> None:
        """A node pool to ``s.count`` nodes: new ones numbered on, or the newest removed
        (``removeNodes``'s way: kubelet stopped, Node deleted, pods to pod GC)."""
        fleet, prefix = self.cluster.fleet, s.pool + "-"
        members = sorted(
            (int(n[len(prefix) :]), n)
            for n in fleet.host_index
            if n.startswith(prefix) and n[len(prefix) :].isdigit() and n not in fleet.removed_nodes
        )
        if s.count > len(members):
            pool = self.pools[s.pool].model_copy(update={"count": s.count - len(members)})
            await self.add_nodes(pool, f"scale pool {s.pool} to {s.count}: added")
            return
        gone = [n for _, n in reversed(members[s.count :])]
        if not gone:
            self.log(f"scale pool {s.pool} to {s.count}: it has {s.count} nodes")
            return
        for name, err in zip(gone, await self.cluster.remove_nodes(gone)):
            if err is not None:
                self.log(f"scale pool {s.pool} {name}: {err.reason}: {err.message}")
        self.log(f"scale pool {s.pool} to {s.count}: removed {', '.join(gone) or 'none'}")

    async def patch(self, p: PatchSpec) -> None:
        kind, ns, name = p.target()
        try:
            new = p.applied_to(await self.cluster.get(kind, ns, name))
        except StatusError as e:
            self.log(f"patch {kind}/{ns}/{name}: {e.reason}: {e.message}")
            return
        (err,) = await self.cluster.write([Update(new)])
        if err is not None:
            self.log(f"patch {kind}/{ns}/{name}: {err.reason}: {err.message}")

    async def scale(self, s: ScaleSpec) -> None:
        await self._rewrite(s.kind, s.namespace, s.name, "scale", lambda obj: scaled(obj, s.replicas))

    async def rollback(self, r: RollbackSpec) -> None:
        # As kubectl lists them: the ReplicaSets of the namespace (the watch's copies).
        replicasets = [rs for (ns, _), rs in self.mirror.objects.get("ReplicaSet", {}).items() if ns == r.namespace]
        await self._rewrite(
            "Deployment", r.namespace, r.name, "rollback", lambda d: rolled_back(d, replicasets, r.toRevision)
        )

    async def _rewrite(self, kind: str, ns: str, name: str, what: str, change) -> None:
        """Read an object, change it as kubectl would, write it; failures are logged."""
        try:
            new = change(await self.cluster.get(kind, ns, name))
        except StatusError as e:
            self.log(f"{what} {kind}/{ns}/{name}: {e.reason}: {e.message}")
            return
        except Refused as e:
            self.log(f"{what} {kind}/{ns}/{name}: {e}")
            return
        (err,) = await self.cluster.write([Update(new)])
        self.log(f"{what} {kind}/{ns}/{name}: " + (f"{err.reason}: {err.message}" if err else "done"))

    async def tick(self, now: float) -> None:
        """Run the random faults now due."""
        for rc in self.randoms:
            for at, spec in rc.due(now, self.cluster.fleet.live_nodes(now)):
                await self.chaos(spec, at)
        self.randoms = [rc for rc in self.randoms if not rc.done]

    def next_at(self) -> float | None:
        return min((rc.next_at for rc in self.randoms if rc.next_at is not None), default=None)

    async def chaos(self, chaos: ChaosSpec, now: float) -> None:
        try:
            detail = await self._chaos(chaos, now)
        except (RuntimeRefused, CommandError) as e:
            detail = f"error: {e}"
        target = (
            (f"host of {chaos.node}" if chaos.component == "host" else chaos.component)
            or chaos.node
            or (f"ray node {chaos.rayNode}" if chaos.rayNode is not None else "")
        )
        self.chaos_log.append({"time": round(now, 3), "action": chaos.action, "target": target, "detail": detail})
        shown = detail if len(detail) <= 160 else detail[:150] + f" ... ({detail.count(',') + 1} in all)"
        self.log(f"[{now:8.1f}s] chaos {chaos.action} {target}{': ' + shown if detail else ''}")

    async def _chaos(self, chaos: ChaosSpec, now: float) -> str:
        cluster, action = self.cluster, chaos.action
        if action == "random":
            self.randoms.append(RandomChaos(chaos, now))
            return f"{chaos.rate}/s for {chaos.duration_seconds():g}s on {', '.join(chaos.targets or ())}"
        if action == "restart":
            return f"answered again after {await cluster.restart(chaos.component or '', chaos.node):.1f}s real"
        if action == "killRayNode":
            return "nodes down: " + ", ".join(cluster.kill_ray_node(chaos.rayNode or 0))
        node = chaos.node or ""
        if node in cluster.fleet.dead_nodes:
            return f"error: {node} is down"
        if action == "killNode":
            return await cluster.kill_node(node)
        if action == "killHost":
            return "nodes down: " + ", ".join(await cluster.kill_host(node))
        if action == "partition":
            await cluster.partition(node, chaos.duration_seconds(), now)
            return ""
        if action == "pressure":
            return await cluster.command(Pressure(node, chaos.extra_usage(), chaos.duration_seconds()))
        if action == "deviceHealth":
            return await cluster.command(
                DeviceHealth(node, chaos.resource or "", chaos.device or 0, bool(chaos.healthy))
            )
        return await cluster.command(DevicePlugin(node, chaos.resource or "", bool(chaos.running)))


async def poll_resources(cluster: Cluster, mirror: Mirror, now: float) -> None:
    """The kubelets' PodResources view from every node host, into the mirror."""
    pods: dict[str, dict[str, Any]] = {}
    nodes: dict[str, dict[str, Any]] = {}
    for view in await cluster.inspect("host"):
        pods.update(view.get("podResources") or {})
        nodes.update(view.get("nodeResources") or {})
    mirror.set_pod_resources(pods, nodes, now)


async def run_scenario(scenario: Scenario, cluster: Cluster, log: Log) -> dict:
    """Run ``scenario`` on ``cluster`` (built from its layout, not yet started); the report."""
    spec, wall0 = scenario.spec, time.time()
    taken: dict[str, int] = {}
    expand_pools(spec.cluster.nodes, taken)
    cluster.log = log
    pools = {p.namePrefix: p for p in spec.cluster.nodes}
    for step in spec.timeline:
        if step.addNodes is not None:
            pools.setdefault(step.addNodes.namePrefix, step.addNodes)
    if spec.cluster.manageNodes != "none":
        cluster.manage_nodes(NodeClaimer(spec.cluster.manageNodes, adopting_host))
    try:
        registered = await cluster.start()
        log(f"kubemu: {registered} nodes on {len(cluster.fleet.hosts)} hosts registered in {time.time() - wall0:.1f}s")
        mirror, run = Mirror(), ScenarioRun(scenario)
        timeline = Timeline(cluster, log, taken, mirror, pools)
        informer = cluster.informer(KINDS + tuple(k for k in run.object_kinds() if k not in KINDS))
        # Every component has listed what it watches before the first object exists (a
        # component listing kind by kind while they are created would see them out of order).
        _apply(mirror, await cluster.settle_watch(informer), 0.0)
        if spec.objects:
            await timeline.run(Step(at=0, create=spec.objects), 0.0)
        now = await _loop(cluster, run, mirror, informer, timeline, log)
        await poll_resources(cluster, mirror, now)
        run.finish(mirror, now)
        counters = await cluster.scheduler_stats()
        yunikorn = await cluster.scheduler_stats("yunikorn")
        if yunikorn:
            counters["scheduled"] = counters.get("scheduled", 0) + yunikorn.get("scheduled", 0)
        report = reports.build(run, mirror, counters, time.time() - wall0)
        if yunikorn:
            report["yunikorn"] = reports.yunikorn(yunikorn)
        report["runtime"] = cluster.runtime
        report["clock"] = clock = cluster.time_report()
        if clock.get("maxLagSeconds", 0.0) >= LAG_NOTE:
            log(
                f"kubemu: the cluster did not keep up with timeScale {clock['timeScale']:g}: emulated time "
                f"ran {clock.get('achievedScale', 0):g}x real, up to {clock['maxLagSeconds']:g}s behind the pace"
            )
        report["chaos"] = timeline.chaos_log
        report["watch"] = {"relists": informer.reflector.relists}  # the driver's own watch
        report["placement"] = cluster.placement()
        return report
    finally:
        await cluster.shutdown()


async def _loop(
    cluster: Cluster, run: ScenarioRun, mirror: Mirror, informer: Informer, timeline: Timeline, log: Log
) -> float:
    virtual = cluster.virtual
    duration = run.scenario.spec.duration
    # The PodResources view is read only when an expectation needs it; the report's copy
    # is taken once at the end.
    resources = run.needs_pod_resources()
    last_progress = last_resources = time.time()
    while True:
        now = cluster.now()
        for step in run.due(now):
            await timeline.run(step, step.at)
        await timeline.tick(now)
        _apply(mirror, await cluster.settle_watch(informer), now)
        now = cluster.now()
        if resources and (virtual or time.time() - last_resources >= RESOURCES_EVERY):
            last_resources = time.time()
            await poll_resources(cluster, mirror, now)
        run.observe(mirror, now)
        if now >= duration or (run.over(mirror, now) and not timeline.randoms and await cluster.quiet(now)):
            _apply(mirror, await cluster.catch_up(informer), now)
            return now
        if time.time() - last_progress >= PROGRESS_EVERY:
            last_progress = time.time()
            log(_progress(mirror, run, now))
            for problem in await cluster.health():
                log(f"kubemu: {problem}")
            for name in await cluster.revive():
                log(f"kubemu: {name} was restarted by Ray; its clock is running again")
        await cluster.advance(_next_time(run, timeline, now, duration))


def _apply(mirror: Mirror, events: list, now: float) -> None:
    real = time.time()
    for kind, etype, obj, _ in events:
        mirror.apply(kind, etype, obj, now, real)


def _next_time(run: ScenarioRun, timeline: Timeline, now: float, duration: float) -> float:
    """The next time the driver must look (the local runtime jumps no further): a step, a
    random fault, just past an expectation's deadline, or the end."""
    times = [duration, run.next_step_at(), timeline.next_at(), run.tracker.next_deadline(now)]
    return min(t for t in times if t is not None)


def _progress(mirror: Mirror, run: ScenarioRun, now: float) -> str:
    phases: dict[str, int] = {}
    for pod in mirror.pods.values():
        p = phase_of(pod) or "?"
        phases[p] = phases.get(p, 0) + 1
    decided = sum(v.ok is not None for v in run.tracker.verdicts)
    return (
        f"[{now:8.1f}s] nodes {len(mirror.nodes)}; pods "
        + (", ".join(f"{v} {k}" for k, v in sorted(phases.items())) or "none")
        + f"; expectations decided {decided}/{len(run.tracker.verdicts)}"
    )
