"""Bringing up an emulated cluster on Ray and driving a scenario through it.

``Cluster`` starts the apiserver, scheduler and node-host actors, registers the nodes
before emulated time starts, then starts every actor's clock together. ``run_scenario``
feeds the timeline to the apiserver, watches Pods, Nodes and Events into a ``Mirror`` like
any other client, lets ``ScenarioRun`` judge the expectations, and builds the report.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time

import ray

from actors.apiserver import APIServerActor
from actors.controllers import ControllerManagerActor
from actors.informer import Informer
from actors.nodehost import NodeHostActor
from actors.scheduler import SchedulerActor
from cluster.api.objects import phase_of
from cluster.clock import Clock, ClockSpec
from cluster.scenario import report as reports
from cluster.scenario.mirror import Mirror
from cluster.scenario.runner import ScenarioRun, expand_pools, pack
from cluster.scenario.schema import Scenario, Step, scheduler_config

PROGRESS_EVERY = 2.0  # real seconds between progress lines
RESOURCES_EVERY = 0.25  # real seconds between polls of the kubelets' PodResources view


def init_ray() -> None:
    """Join the Ray cluster named by RAY_ADDRESS, or start an embedded local Ray."""
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS") or None
    ray.init(address=address, include_dashboard=False, logging_level="ERROR", log_to_driver=True,
             configure_logging=True)


class Cluster:
    def __init__(self, node_configs: list, *, seed: int = 1, time_scale: float = 1.0,
                 nodes_per_host: int = 0, window: int = 50_000, scheduler_config=None, taken=None):
        self.time_scale = time_scale
        self.taken = {} if taken is None else taken  # namePrefix -> next index, for addNodes
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.api = APIServerActor.remote(seed, window, time_scale)
        self.scheduler = SchedulerActor.remote(self.api, seed, time_scale, scheduler_config)
        self.controllers = ControllerManagerActor.remote(self.api, time_scale)
        cpus = int(ray.available_resources().get("CPU", os.cpu_count() or 1))
        self.hosts, self.host_of = [], {}
        first = 0
        for chunk in pack(node_configs, nodes_per_host, cpus):
            host = NodeHostActor.remote(self.api, chunk, first, time_scale)
            self.hosts.append(host)
            for cfg in chunk:
                self.host_of[cfg.name] = host
            first += len(chunk)
        self.next_index = first

    async def add_nodes(self, pool) -> list[str]:
        """A new host for the nodes of ``pool``, registered on the running clock."""
        configs = expand_pools([pool], self.taken)
        if not configs:
            return []
        host = NodeHostActor.remote(self.api, configs, self.next_index, self.time_scale)
        self.next_index += len(configs)
        self.hosts.append(host)
        for cfg in configs:
            self.host_of[cfg.name] = host
        await host.start_clock.remote(self.clock.spec.real_start)
        await host.register.remote()
        return [c.name for c in configs]

    async def register_nodes(self) -> int:
        return sum(await asyncio.gather(*[h.register.remote() for h in self.hosts]))

    async def start_clock(self) -> None:
        start = time.time()
        self.clock.start(start)
        actors = [self.api, self.scheduler, self.controllers, *self.hosts]
        await asyncio.gather(*[a.start_clock.remote(start) for a in actors])

    async def health(self) -> list[str]:
        problems = []
        stats = await self.scheduler.stats.remote()
        if stats.get("error"):
            problems.append(f"scheduler: {stats['error']}")
        problems += [f"controller-manager: {e}" for e in await self.controllers.healthy.remote()]
        for h in self.hosts:
            problems += [f"node host: {e}" for e in await h.healthy.remote()]
        return problems

    def shutdown(self) -> None:
        for a in [self.scheduler, self.controllers, *self.hosts, self.api]:
            ray.kill(a)


async def _execute(cluster: Cluster, step: Step, log) -> None:
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
    if step.chaos is not None:
        await _chaos(cluster, step.chaos, log)


async def _chaos(cluster: Cluster, chaos, log) -> None:
    host = cluster.host_of.get(chaos.node)
    if host is None:
        log(f"chaos {chaos.action}: no node {chaos.node}")
    elif chaos.action == "killNode":
        await host.kill_node.remote(chaos.node)
    elif chaos.action == "pressure":
        await host.pressure.remote(chaos.node, chaos.extra_usage(), chaos.duration_seconds())
    elif chaos.action == "deviceHealth":
        answer = await host.device_health.remote(chaos.node, chaos.resource, chaos.device, chaos.healthy)
        if answer.startswith("error: "):
            log(f"chaos deviceHealth: {answer[7:]}")
    elif chaos.action == "devicePlugin":
        answer = await host.device_plugin.remote(chaos.node, chaos.resource, chaos.running)
        if answer.startswith("error: "):
            log(f"chaos devicePlugin: {answer[7:]}")


async def _poll_resources(cluster: Cluster, mirror: Mirror, now: float) -> None:
    """The kubelets' PodResources view from every node host, into the mirror."""
    pods, nodes = {}, {}
    for p, n in await asyncio.gather(*[h.pod_resources.remote() for h in cluster.hosts]):
        pods.update(p)
        nodes.update(n)
    mirror.set_pod_resources(pods, nodes, now)


async def run_scenario(scenario: Scenario, log=lambda s: print(s, file=sys.stderr)) -> dict:
    spec = scenario.spec
    wall0 = time.time()
    init_ray()
    taken: dict[str, int] = {}
    nodes = expand_pools(spec.cluster.nodes, taken)
    cluster = Cluster(nodes, seed=spec.seed, time_scale=spec.timeScale, nodes_per_host=spec.cluster.nodesPerHost,
                      scheduler_config=scheduler_config(scenario), taken=taken)
    try:
        registered = await cluster.register_nodes()
        log(f"kubemu: {registered} nodes on {len(cluster.hosts)} hosts registered in {time.time() - wall0:.1f}s")
        mirror, run = Mirror(), ScenarioRun(scenario)
        informer = Informer(cluster.api, ["Node", "Pod", "Event"])
        await cluster.start_clock()
        if spec.objects:
            await _execute(cluster, Step(at=0, create=spec.objects), log)
        now = await _loop(cluster, run, mirror, informer, log)
        await _poll_resources(cluster, mirror, now)
        run.finish(mirror, now)
        counters = await cluster.scheduler.stats.remote()
        return reports.build(run, mirror, counters, time.time() - wall0)
    finally:
        cluster.shutdown()


async def _loop(cluster: Cluster, run: ScenarioRun, mirror: Mirror, informer: Informer, log) -> float:
    clock, last_progress = cluster.clock, time.time()
    # The PodResources view is polled only when an expectation reads it; the report's copy
    # is taken once at the end.
    poll_every = RESOURCES_EVERY if run.needs_pod_resources() else None
    last_resources = 0.0
    while True:
        now = clock.now()
        for step in run.due(now):
            await _execute(cluster, step, log)
        for kind, etype, obj in await informer.poll(0.05):
            mirror.apply(kind, etype, obj, now, time.time())
        now = clock.now()
        if poll_every is not None and time.time() - last_resources >= poll_every:
            last_resources = time.time()
            await _poll_resources(cluster, mirror, now)
        run.observe(mirror, now)
        if run.over(mirror, now):
            return now
        if time.time() - last_progress >= PROGRESS_EVERY:
            last_progress = time.time()
            log(_progress(mirror, run, now))
            for problem in await cluster.health():
                log(f"kubemu: {problem}")


def _progress(mirror: Mirror, run: ScenarioRun, now: float) -> str:
    phases: dict[str, int] = {}
    for pod in mirror.pods.values():
        p = phase_of(pod) or "?"
        phases[p] = phases.get(p, 0) + 1
    decided = sum(v.ok is not None for v in run.tracker.verdicts)
    return (f"[{now:8.1f}s] nodes {len(mirror.nodes)}; pods "
            + (", ".join(f"{v} {k}" for k, v in sorted(phases.items())) or "none")
            + f"; expectations decided {decided}/{len(run.tracker.verdicts)}")
