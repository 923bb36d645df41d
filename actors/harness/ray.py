"""Running a scenario on the Ray runtime: join or start Ray, build the actors, run the driver.

Owns the Ray side of ``kubemu run``: ``init_ray`` (the cluster ``RAY_ADDRESS`` names, an
embedded one, or a local multi-node one for ``spec.cluster.rayNodes``), the layout packed
for the CPUs Ray offers, a ``RayCluster`` (``actors/cluster.py``) for
``cluster/scenario/driver.py`` to drive, and stopping the Ray this command started before
the summary is printed (actors killed at the end of a run still have retries in flight, and
Ray's log monitor would print its notes about them after our last line).
"""

from __future__ import annotations

import asyncio
import os

import ray

from actors import raycluster
from actors.cluster import RayCluster
from cluster.scenario.driver import Log, run_scenario
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import Scenario, scheduler_config


def run_on_ray(scenario: Scenario, log: Log) -> dict:
    spec = scenario.spec
    started_here = not ray.is_initialized()
    raycluster.init_ray(spec.cluster.rayNodes)  # raises RayClusterError before any actor starts
    try:
        cpus = int(ray.available_resources().get("CPU", os.cpu_count() or 1))
        ray_ids = raycluster.node_ids() if spec.cluster.rayNodes >= 2 else []
        plan = layout(
            expand_pools(spec.cluster.nodes),
            seed=spec.seed,
            nodes_per_host=spec.cluster.nodesPerHost,
            cpus=max(cpus, len(ray_ids)),
            scheduler_config=scheduler_config(scenario),
            schedulers=spec.cluster.schedulers,
            job_run_seconds=spec.cluster.jobRunSeconds,
        )
        cluster = RayCluster(
            plan, seed=spec.seed, ray_nodes=spec.cluster.rayNodes, stepped=True, pace=spec.pace()
        )  # stepped time: cluster/runtime/stepper.py
        return asyncio.run(run_scenario(scenario, cluster, log))
    finally:
        raycluster.shutdown()
        if started_here and ray.is_initialized():
            ray.shutdown()
