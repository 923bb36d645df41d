"""Running a scenario on the local runtime: one process, a virtual clock, no Ray.

Owns the local side of ``kubemu run --runtime local`` (the Ray side is
``actors/harness/ray.py``): the layout with the scenario's packing, a ``LocalCluster``
(``cluster/runtime/local.py``) writing its event trace where asked, and the driver
(``driver.py``). Tests call ``run_local`` directly; it never imports Ray.
"""

from __future__ import annotations

import asyncio
from typing import TextIO

from ..runtime.local import LocalCluster
from .driver import Log, run_scenario
from .layout import expand_pools, layout
from .schema import Scenario, scheduler_config


def run_local(scenario: Scenario, log: Log, trace: TextIO | None = None) -> dict:
    """Run ``scenario`` to its end in this process; the report. ``trace``: where the
    journal of every write goes (``cluster/runtime/trace.py``)."""
    spec = scenario.spec
    plan = layout(
        expand_pools(spec.cluster.nodes),
        seed=spec.seed,
        nodes_per_host=spec.cluster.nodesPerHost,
        scheduler_config=scheduler_config(scenario),
        schedulers=spec.cluster.schedulers,
        job_run_seconds=spec.cluster.jobRunSeconds,
    )
    cluster = LocalCluster(plan, seed=spec.seed, trace=trace)
    return asyncio.run(run_scenario(scenario, cluster, log))
