"""Random chaos: faults as a seeded Poisson process over emulated time.

Owns the expansion of one ``{action: random, rate, seed, targets, duration}`` step into
concrete chaos actions. Gaps between faults are exponential with mean ``1 / rate``
emulated seconds; each fault picks its action from ``targets`` and its node from the
nodes still live at that moment (sorted, so the pick depends only on the seed and the
cluster's history, not on dict order). Called by the scenario driver and by
``kubemu bench chaos``: both ask ``due(now, live)`` on every turn and run what it returns.

| state   | event                          | next state | effect                         |
|---------|--------------------------------|------------|--------------------------------|
| ARMED   | ``due`` at or after next fault | ARMED      | one action per fault now due   |
| ARMED   | a fault falls after ``end``    | DONE       | none                           |
| ARMED   | no live node at a fault        | ARMED      | the fault is skipped (counted) |
"""

from __future__ import annotations

import random
from typing import Any

from .chaos import ChaosSpec


class RandomChaos:
    def __init__(self, spec: ChaosSpec, start: float):
        self.spec = spec
        self.rng = random.Random(spec.seed if spec.seed is not None else 1)
        assert spec.rate is not None  # chaos.check requires it of a random step
        self.rate = float(spec.rate)
        self.end = start + (spec.duration_seconds() or 0.0)
        self.partition = spec.partition_seconds()
        self.next_at: float | None = start + self.rng.expovariate(self.rate)
        self.skipped = 0
        self._settle()

    def _settle(self) -> None:
        if self.next_at is not None and self.next_at > self.end:
            self.next_at = None

    @property
    def done(self) -> bool:
        return self.next_at is None

    def due(self, now: float, live: list[str] | set[str]) -> list[tuple[float, ChaosSpec]]:
        """The faults due at or before ``now``, each as (its time, the action to run).

        ``live`` is what the caller considers a fair target now (nodes neither killed nor
        partitioned); a node picked by one fault is not picked again in the same call."""
        out = []
        candidates = sorted(live)
        while self.next_at is not None and self.next_at <= now:
            at = self.next_at
            assert self.spec.targets is not None  # chaos.check requires it of a random step
            action = self.rng.choice(self.spec.targets)
            if candidates:
                node = candidates.pop(self.rng.randrange(len(candidates)))
                extra: dict[str, Any] = {"duration": self.partition} if action == "partition" else {}
                out.append((at, ChaosSpec(action=action, node=node, **extra)))
            else:
                self.skipped += 1
            self.next_at = at + self.rng.expovariate(self.rate)
            self._settle()
        return out
