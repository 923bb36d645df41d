"""Driving a scenario through an emulated cluster on Ray.

``run_scenario`` brings up a ``Cluster`` (``actors/cluster.py``), feeds the timeline to the
apiserver and the chaos actions to the cluster, watches Pods, Nodes, Events and
ReplicaSets into a ``Mirror`` like any other client, lets ``ScenarioRun`` judge the
expectations, and builds the report.
"""

from __future__ import annotations

import asyncio
import sys
import time

from actors import raycluster
from actors.cluster import Cluster
from actors.informer import Informer
from cluster.api.objects import phase_of
from cluster.scenario import report as reports
from cluster.scenario.mirror import Mirror
from cluster.scenario.randomchaos import RandomChaos
from cluster.scenario.runner import ScenarioRun, expand_pools
from cluster.scenario.schema import Scenario, Step, scheduler_config

PROGRESS_EVERY = 2.0  # real seconds between progress lines
RESOURCES_EVERY = 0.25  # real seconds between polls of the kubelets' PodResources view


class Timeline:
    """Runs due steps against the cluster; random chaos steps keep running on later turns."""

    def __init__(self, cluster: Cluster, log):
        self.cluster, self.log = cluster, log
        self.randoms: list[RandomChaos] = []
        self.chaos_log: list[dict] = []  # what chaos did, for the report

    async def run(self, step: Step, now: float) -> None:
        cluster, log = self.cluster, self.log
        if step.create:
            for obj, r in zip(step.create, await cluster.api.create.remote(step.create)):
                if r is not None:
                    log(f"create {obj.get('kind')}/{obj.get('metadata', {}).get('name')}: {r[1]}: {r[2]}")
        for d in step.deletes():
            (r,) = await cluster.api.delete.remote(d.kind, [(d.namespace, d.name, None, d.gracePeriodSeconds)])
            if r is not None:
                log(f"delete {d.kind}/{d.namespace}/{d.name}: {r[1]}: {r[2]}")
        if step.addNodes is not None:
            names = await cluster.add_nodes(step.addNodes)
            log(f"addNodes: {', '.join(names) or 'none'}")
        if step.removeNodes is not None:
            for name, r in zip(step.removeNodes.names, await cluster.remove_nodes(step.removeNodes.names)):
                if r is not None:
                    log(f"removeNodes {name}: {r[1]}: {r[2]}")
        if step.chaos is not None:
            await self.chaos(step.chaos, now)

    async def tick(self, now: float) -> None:
        """Run the random faults now due."""
        for rc in self.randoms:
            for at, spec in rc.due(now, self.cluster.live_nodes(now)):
                await self.chaos(spec, at)
        self.randoms = [rc for rc in self.randoms if not rc.done]

    async def chaos(self, chaos, now: float) -> None:
        detail = await self._chaos(chaos, now)
        target = (
            (f"host of {chaos.node}" if chaos.component == "host" else chaos.component)
            or chaos.node
            or (f"ray node {chaos.rayNode}" if chaos.rayNode is not None else "")
        )
        self.chaos_log.append({"time": round(now, 3), "action": chaos.action, "target": target, "detail": detail})
        shown = detail if len(detail) <= 160 else detail[:150] + f" ... ({detail.count(',') + 1} in all)"
        self.log(f"[{now:8.1f}s] chaos {chaos.action} {target}{': ' + shown if detail else ''}")

    async def _chaos(self, chaos, now: float) -> str:
        cluster, action = self.cluster, chaos.action
        if action == "random":
            self.randoms.append(RandomChaos(chaos, now))
            return f"{chaos.rate}/s for {chaos.duration_seconds():g}s on {', '.join(chaos.targets)}"
        if action == "restart":
            try:
                return f"answered again after {await cluster.restart(chaos.component, chaos.node):.1f}s real"
            except ValueError as e:
                return f"error: {e}"
        if action == "killRayNode":
            try:
                return "nodes down: " + ", ".join(cluster.kill_ray_node(chaos.rayNode))
            except raycluster.RayClusterError as e:
                return f"error: {e}"
        if chaos.node in cluster.dead_nodes:
            return f"error: {chaos.node} is down"
        if action == "killNode":
            return await cluster.kill_node(chaos.node)
        if action == "killHost":
            return "nodes down: " + ", ".join(await cluster.kill_host(chaos.node))
        if action == "partition":
            await cluster.partition(chaos.node, chaos.duration_seconds(), now)
            return ""
        host = cluster.host_of(chaos.node)
        if action == "pressure":
            await host.pressure.remote(chaos.node, chaos.extra_usage(), chaos.duration_seconds())
            return ""
        if action == "deviceHealth":
            answer = await host.device_health.remote(chaos.node, chaos.resource, chaos.device, chaos.healthy)
        else:
            answer = await host.device_plugin.remote(chaos.node, chaos.resource, chaos.running)
        return answer if answer.startswith("error: ") else ""


async def _poll_resources(cluster: Cluster, mirror: Mirror, now: float) -> None:
    """The kubelets' PodResources view from every node host, into the mirror."""
    pods, nodes = {}, {}
    for p, n in await asyncio.gather(*[h.pod_resources.remote() for h in cluster.live_hosts()]):
        pods.update(p)
        nodes.update(n)
    mirror.set_pod_resources(pods, nodes, now)


async def run_scenario(scenario: Scenario, log=lambda s: print(s, file=sys.stderr)) -> dict:
    spec = scenario.spec
    wall0 = time.time()
    raycluster.init_ray(spec.cluster.rayNodes)
    taken: dict[str, int] = {}
    nodes = expand_pools(spec.cluster.nodes, taken)
    cluster = Cluster(
        nodes,
        seed=spec.seed,
        time_scale=spec.timeScale,
        nodes_per_host=spec.cluster.nodesPerHost,
        scheduler_config=scheduler_config(scenario),
        taken=taken,
        ray_nodes=spec.cluster.rayNodes,
    )
    try:
        registered = await cluster.register_nodes()
        spread = f" over {len(cluster.ray_ids)} Ray nodes" if cluster.ray_ids else ""
        log(
            f"kubemu: {registered} nodes on {len(cluster.hosts)} hosts{spread} registered in {time.time() - wall0:.1f}s"
        )
        mirror, run, timeline = Mirror(), ScenarioRun(scenario), Timeline(cluster, log)
        informer = Informer(cluster.api, ["Node", "Pod", "Event", "ReplicaSet"])
        await cluster.start_clock()
        if spec.objects:
            await timeline.run(Step(at=0, create=spec.objects), 0.0)
        now = await _loop(cluster, run, mirror, informer, timeline, log)
        await _poll_resources(cluster, mirror, now)
        run.finish(mirror, now)
        counters = await cluster.scheduler_stats()
        report = reports.build(run, mirror, counters, time.time() - wall0)
        report["chaos"] = timeline.chaos_log
        report["watch"] = {"relists": informer.reflector.relists}  # the driver's own watch
        report["placement"] = _placement(cluster)
        return report
    finally:
        cluster.shutdown()
        raycluster.shutdown()


def _placement(cluster: Cluster) -> dict:
    """Which Ray node each host ran on, with its nodes (only when spread over Ray nodes)."""
    if not cluster.ray_ids:
        return {}
    out: dict[str, list[str]] = {}
    for i, r in cluster.ray_node_of.items():
        out.setdefault(str(r), []).extend(cluster.nodes_of[i])
    return out


async def _loop(
    cluster: Cluster, run: ScenarioRun, mirror: Mirror, informer: Informer, timeline: Timeline, log
) -> float:
    clock, last_progress = cluster.clock, time.time()
    # The PodResources view is polled only when an expectation reads it; the report's copy
    # is taken once at the end.
    poll_every = RESOURCES_EVERY if run.needs_pod_resources() else None
    last_resources = 0.0
    while True:
        now = clock.now()
        for step in run.due(now):
            await timeline.run(step, step.at)
        await timeline.tick(now)
        for kind, etype, obj in await informer.poll(0.05):
            mirror.apply(kind, etype, obj, now, time.time())
        now = clock.now()
        if poll_every is not None and time.time() - last_resources >= poll_every:
            last_resources = time.time()
            await _poll_resources(cluster, mirror, now)
        run.observe(mirror, now)
        if run.over(mirror, now) and (not timeline.randoms or now >= run.scenario.spec.duration):
            return now
        if time.time() - last_progress >= PROGRESS_EVERY:
            last_progress = time.time()
            log(_progress(mirror, run, now))
            for problem in await cluster.health():
                log(f"kubemu: {problem}")
            for name in await cluster.revive():
                log(f"kubemu: {name} was restarted by Ray; its clock is running again")


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
