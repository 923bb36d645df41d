"""Which components make a scenario's cluster: node pools expanded into nodes, nodes
packed into hosts, and the component specs both runtimes start.

Owns ``expand_pools`` (a pool becomes one ``NodeConfig`` per node, numbered per prefix),
``pack`` (nodes into node hosts: docs/architecture.md §7) and ``layout`` (the scheduler, the controller
manager and one node host per pack, as ``ComponentSpec``s). Called by the scenario driver's
callers (the CLI) and the benchmarks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..controllers.component import ControllerManagerComponent
from ..kubelet.component import NodeHostComponent
from ..kubelet.node import NodeConfig
from ..runtime.cluster import Layout
from ..runtime.component import ComponentSpec
from ..scheduler.component import SchedulerComponent
from ..scheduler.scheduler import SchedulerConfig
from ..yunikorn.component import YuniKornComponent
from .schema import DEFAULT_CAPACITY, NodePool

DEFAULT_SCHEDULER, YUNIKORN = "default-scheduler", "yunikorn"
MIN_AUTO_NODES_PER_HOST = 50
LOCAL_CPUS = 2  # the local runtime packs as on a 2-core machine, whatever it runs on: same trace everywhere


def expand_pools(pools: list[NodePool], taken: dict[str, int] | None = None) -> list[NodeConfig]:
    """One NodeConfig per node; ``taken`` numbers pools sharing a prefix consecutively."""
    taken = {} if taken is None else taken
    out = []
    for pool in pools:
        capacity = {**DEFAULT_CAPACITY, **{k: str(v) for k, v in pool.capacity.items()}}
        for _ in range(pool.count):
            i = taken.get(pool.namePrefix, 0)
            taken[pool.namePrefix] = i + 1
            out.append(
                NodeConfig(
                    name=f"{pool.namePrefix}-{i}",
                    capacity=dict(capacity),
                    reserved={k: str(v) for k, v in pool.reserved.items()},
                    labels=dict(pool.labels),
                    taints=[dict(t) for t in pool.taints],
                    kubelet=dict(pool.kubelet),
                )
            )
    return out


def pack(nodes: list, nodes_per_host: int, cpus: int) -> list[list]:
    """Split nodes into hosts: ``nodes_per_host`` each, or (0) up to two hosts per CPU.

    Automatic packing starts a new host only per ``MIN_AUTO_NODES_PER_HOST`` nodes, since a
    host process costs about 0.6 s and 50 MB to start (docs/architecture.md §7).
    """
    if not nodes:
        return []
    if nodes_per_host <= 0:
        hosts = max(1, min(math.ceil(len(nodes) / MIN_AUTO_NODES_PER_HOST), 2 * max(1, cpus)))
        nodes_per_host = math.ceil(len(nodes) / hosts)
    return [nodes[i : i + nodes_per_host] for i in range(0, len(nodes), nodes_per_host)]


def host_spec(configs: list[NodeConfig], first_index: int) -> ComponentSpec:
    """A node host running ``configs``; ``first_index`` numbers its nodes' IPs."""
    return ComponentSpec(
        f"host-{configs[0].name}",
        NodeHostComponent,
        {"configs": configs, "first_index": first_index},
        nodes=tuple(c.name for c in configs),
    )


def layout(
    nodes: list[NodeConfig],
    *,
    seed: int = 1,
    nodes_per_host: int = 0,
    cpus: int = LOCAL_CPUS,
    scheduler_config: SchedulerConfig | None = None,
    schedulers: Sequence[str] = (DEFAULT_SCHEDULER,),
    job_run_seconds: float | None = 5.0,
) -> Layout:
    """The schedulers asked for (the default one, YuniKorn mode or both), the controller
    manager and the node hosts for ``nodes``."""
    control = {}
    if DEFAULT_SCHEDULER in schedulers:
        control["scheduler"] = ComponentSpec(
            "scheduler", SchedulerComponent, {"config": scheduler_config, "seed": seed}
        )
    if YUNIKORN in schedulers:
        control[YUNIKORN] = ComponentSpec(YUNIKORN, YuniKornComponent)  # nothing random to seed
    control["controller-manager"] = ComponentSpec(
        "controller-manager", ControllerManagerComponent, {"job_run_seconds": job_run_seconds}
    )
    hosts, first = [], 0
    for chunk in pack(nodes, nodes_per_host, cpus):
        hosts.append(host_spec(chunk, first))
        first += len(chunk)
    return Layout(control, hosts)
