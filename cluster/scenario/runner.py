"""The scenario run: what happens when, and when the run is over.

Owns the timeline (steps in time order, ties in file order), expanding node pools into
per-node configs, packing nodes into hosts, and deciding when a run ends: at
``spec.duration``, or earlier once the timeline is done, every ``within`` expectation is
decided and every ``at: end`` expectation holds; and the invariants every run checks.
The driver (``actors/driver.py``) asks
it what is due and tells it what it observed; it never touches Ray.
"""

from __future__ import annotations

import math
from collections import deque

from ..kubelet.node import NodeConfig
from .expectations import Tracker
from .mirror import Mirror
from .schema import DEFAULT_CAPACITY, INVARIANTS, Expectation, NodePool, Scenario, Step

MIN_AUTO_NODES_PER_HOST = 50


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
    host process costs about 0.6 s and 50 MB to start (DESIGN §3).
    """
    if not nodes:
        return []
    if nodes_per_host <= 0:
        hosts = max(1, min(math.ceil(len(nodes) / MIN_AUTO_NODES_PER_HOST), 2 * max(1, cpus)))
        nodes_per_host = math.ceil(len(nodes) / hosts)
    return [nodes[i : i + nodes_per_host] for i in range(0, len(nodes), nodes_per_host)]


class ScenarioRun:
    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        spec = scenario.spec
        order = sorted(range(len(spec.timeline)), key=lambda i: (spec.timeline[i].at, i))
        self._steps: deque[Step] = deque(spec.timeline[i] for i in order)
        # Every invariant is checked in every run; those the file does not ask for are
        # added here ("implicit" in the report), so no scenario can break one unnoticed.
        asked = {e.invariant for e in spec.expect if e.invariant is not None and e.mode() == "always"}
        self.implicit_from = len(spec.expect)
        self.tracker = Tracker(
            list(spec.expect) + [Expectation(always=True, invariant=name) for name in INVARIANTS if name not in asked]
        )
        self.ended_at: float | None = None

    def due(self, now: float) -> list[Step]:
        out = []
        while self._steps and self._steps[0].at <= now:
            out.append(self._steps.popleft())
        return out

    def next_step_at(self) -> float | None:
        return self._steps[0].at if self._steps else None

    def needs_pod_resources(self) -> bool:
        """Whether an expectation reads the kubelets' PodResources view during the run."""
        return any(e.needs_pod_resources() for e in self.scenario.spec.expect)

    def observe(self, mirror: Mirror, now: float) -> None:
        mirror.check_invariants(now)
        self.tracker.observe(mirror, now)

    def over(self, mirror: Mirror, now: float) -> bool:
        if now >= self.scenario.spec.duration:
            return True
        return not self._steps and self.tracker.settled(mirror)

    def finish(self, mirror: Mirror, now: float) -> None:
        mirror.check_invariants(now)
        self.tracker.finish(mirror, now)
        self.ended_at = now

    @property
    def passed(self) -> bool:
        return self.tracker.passed
