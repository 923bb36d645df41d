"""The scenario run: what happens when, and when the run is over.

Owns the timeline (steps in time order, ties in file order), deciding when the
expectations allow a run to end (at ``spec.duration``, or earlier once the timeline is
done, every ``within`` and ``until`` expectation is decided and every ``at: end``
expectation holds; the driver also waits for the cluster to settle), and the invariants
every run checks. The driver (``driver.py``) asks it what is due and tells it what it
observed.
"""

from __future__ import annotations

from collections import deque

from .expectations import Tracker
from .mirror import Mirror
from .sampler import Sampler
from .schema import INVARIANTS, Expectation, Scenario, Step


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
        self.sampler = Sampler()  # the report's time series (its pictures)

    def due(self, now: float) -> list[Step]:
        out = []
        while self._steps and self._steps[0].at <= now:
            out.append(self._steps.popleft())
        return out

    def next_step_at(self) -> float | None:
        return self._steps[0].at if self._steps else None

    def object_kinds(self) -> list[str]:
        """The kinds ``object`` expectations read: the driver's watch must mirror them."""
        return sorted({e.object.kind for e in self.scenario.spec.expect if e.object is not None})

    def needs_pod_resources(self) -> bool:
        """Whether an expectation reads the kubelets' PodResources view during the run."""
        return any(e.needs_pod_resources() for e in self.scenario.spec.expect)

    def observe(self, mirror: Mirror, now: float) -> None:
        mirror.check_invariants(now)
        self.tracker.observe(mirror, now)
        self.sampler.observe(mirror, now)

    def over(self, mirror: Mirror, now: float) -> bool:
        if now >= self.scenario.spec.duration:
            return True
        return not self._steps and self.tracker.settled(mirror)

    def finish(self, mirror: Mirror, now: float) -> None:
        mirror.check_invariants(now)
        self.tracker.finish(mirror, now)
        self.sampler.observe(mirror, now, final=True)
        self.ended_at = now

    @property
    def passed(self) -> bool:
        return self.tracker.passed
