"""The decisions of a stepped cluster's coordinator beyond ``Stepper``'s bookkeeping.

Owns ``Coordinator``: what the Ray runtime's coordinator of stepped time
(``actors/coordinator.py``, for ``RayCluster``) decides between its Ray calls. Its own
watch: which kinds it must cover, when it must look (``dirty``), and whether the driver's
informer has events to take (``driver_behind``). Asking: who is asked in a round, what an
answer (or a process gone for good) means, and when an instant taking too long is noted or
given up on (``Patience``). Moving on: whether node hosts may run their heartbeats ahead
(not while the driver watches Leases), where the clock stands after such a stretch, and
where it jumps otherwise (``Stepper.next_time``, under the pace). The held clock
(``cluster/clock.py``) is the cluster's; this class moves it.

Its two flags:

| event                                                     | ``dirty`` | ``driver_behind``              |
|-----------------------------------------------------------|-----------|--------------------------------|
| the driver writes; a component restarts; a host is added; |  set      | as it was                      |
| the coordinator's watch is built again                    |           |                                |
| the coordinator's watch looked (``looked``)               |  cleared  | set if the driver watches an   |
|                                                           |           | event's kind                   |
| the driver took its events (``driver_due``)               | as it was | cleared                        |

An answer (``answered``): a process Ray restarted on its own (not ``running``) is
forgotten and its clock started again at this instant (``START_CLOCK``); otherwise it is
kept, and the coordinator looks at what was written (``LOOK``) when it says its component
wrote since its previous answer, else nothing (``STAY``).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from .cluster import Fleet
from .component import WatchEvent
from .stepper import Answer, Stepper

SETTLE_PATIENCE = 120.0  # real seconds one instant may take before the run moves on regardless
SETTLE_NOTE_EVERY = 15.0  # real seconds between notes on an instant that is taking long

LOOK, STAY, START_CLOCK = "look", "stay", "start-clock"


@dataclass
class Patience:
    """The real time an instant's settling began and was last noted at."""

    began: float
    noted: float


class Coordinator:
    def __init__(self, stepper: Stepper, clock: Clock, fleet: Fleet):
        self.stepper, self.clock, self.fleet = stepper, clock, fleet
        self.rv = 0  # the resourceVersion the coordinator's watch has looked up to
        self.dirty = True  # something was written (or told) since the coordinator's watch looked
        self.driver_behind = True  # the driver's watch has events to take
        self.driver_kinds: set[str] = set()

    # -- the coordinator's watch and the driver's ---------------------------------------------
    def cover(self, driver_kinds: Iterable[str], watched: Collection[str] | None) -> list[str] | None:
        """The driver watches ``driver_kinds``; the coordinator's watch (over ``watched``,
        None: none yet) must cover those and every kind a component watches: the kinds of a
        new watch, or None when it does."""
        self.driver_kinds = set(driver_kinds)
        kinds = self.driver_kinds | set(self.stepper.kinds())
        if watched is None or kinds - set(watched):
            self.dirty = True
            return sorted(kinds)
        return None

    def looked(self, rv: int, events: Sequence[WatchEvent]) -> None:
        """The coordinator's watch read every write up to ``rv``: ``events`` since it last did."""
        self.rv = rv
        self.stepper.polled(rv, events)
        self.driver_behind |= any(ev.kind in self.driver_kinds for ev in events)
        self.dirty = False

    def driver_due(self) -> bool:
        """Whether the driver's informer has events to take (it takes them now)."""
        if not self.driver_behind:
            return False
        self.driver_behind = False
        return True

    def wrote(self) -> None:
        """Something was written or told that the coordinator's watch has not read."""
        self.dirty = True

    # -- asking ---------------------------------------------------------------------------
    def round(self, keys: Iterable[Hashable]) -> list[Hashable]:
        """The live components ``keys`` to ask in the next round (counted if any)."""
        waiting = self.stepper.to_ask(keys)
        if waiting:
            self.stepper.rounds += 1
        return waiting

    def need(self, key: Hashable) -> int:
        """The resourceVersion ``key`` must have seen when it answers."""
        return self.stepper.need.get(key, 0)

    def answered(self, key: Hashable, answer: Answer) -> str:
        """What ``key``'s answer means: ``LOOK``, ``STAY`` or ``START_CLOCK`` (see above)."""
        if not answer.running:
            self.stepper.forget(key)
            return START_CLOCK
        return LOOK if self.stepper.record(key, answer) else STAY

    def gone(self, key: Hashable, why: str) -> str:
        """``key``'s process is gone for good: it holds nothing up; what to tell."""
        self.stepper.gone(key)
        return f"kubemu: {self.name(key)} is gone ({why}); the clock goes on without it"

    def name(self, key: Hashable) -> str:
        return f"host of {self.fleet.hosts[key].nodes[0]}" if isinstance(key, int) else str(key)

    def patience(self, wall: float) -> Patience:
        return Patience(wall, wall)

    def overdue(self, p: Patience, wall: float, now: float, keys: Sequence[Hashable]) -> tuple[str, bool] | None:
        """Every ``SETTLE_NOTE_EVERY`` real seconds of settling the instant ``now``: what to
        tell, and whether to move on regardless (after ``SETTLE_PATIENCE``: the components
        ``keys`` are then treated as done, ``Stepper.give_up``)."""
        if wall - p.noted < SETTLE_NOTE_EVERY:
            return None
        p.noted = wall
        names = ", ".join(self.name(k) for k in self.stepper.to_ask(keys))
        if wall - p.began >= SETTLE_PATIENCE:
            self.stepper.give_up(keys)
            return f"kubemu: at {now:.1f}s {names} not done after {wall - p.began:.0f}s real; moving on", True
        return f"kubemu: at {now:.1f}s waiting for {names} ({wall - p.began:.0f}s real so far)", False

    # -- moving on ------------------------------------------------------------------------
    def stretch(self, keys: Sequence[Hashable], now: float, until: float | None) -> tuple[float, list[Hashable]] | None:
        """A heartbeat stretch of the node hosts (int keys) among the live ``keys``
        (``Stepper.stretch``); never while the driver watches Leases (it would miss the
        renewals' instants)."""
        if "Lease" in self.driver_kinds:
            return None
        hosts = [k for k in keys if isinstance(k, int)]
        return self.stepper.stretch(hosts, [k for k in keys if not isinstance(k, int)], now, until)

    def lease_watchers(self, keys: Collection[Hashable]) -> list[Hashable]:
        """The live components that watch Leases: they catch up with a stretch's renewals."""
        return [k for k in self.stepper.watchers("Lease") if k in keys]

    def stretched(
        self, due: Sequence[Hashable], reached: Iterable[float | None], now: float, keys: Iterable[Hashable]
    ) -> bool:
        """The hosts ``due`` ran ahead to ``reached``: the clock stands at the last instant
        run (``Stepper.stretched``); False when nobody ran ahead."""
        at = self.stepper.stretched(due, reached, now)
        if at is None:
            return False
        self.clock.hold(at)
        self.stepper.jump(at, keys)
        return True

    def jump(self, keys: Sequence[Hashable], now: float, until: float | None) -> float | None:
        """Jump the clock from ``now`` to the next wakeup of ``keys`` or ``until``; None, or
        the real seconds to wait first when that is ahead of the pace (no jump then)."""
        target = self.stepper.next_time(keys, now, until)
        if target is None or target <= now:
            return None
        at, wait = self.stepper.paced(now, target)
        if at is None:
            return wait
        self.clock.hold(at)  # the apiserver's moves with the first write at it (write_clocked)
        self.stepper.jump(at, keys)
        return None

    # -- what else changes whom to ask ------------------------------------------------------
    def key_of(self, component: str, node: str | None) -> Hashable | None:
        """The key of a restarted component (None: the apiserver, whose restart every watch sees)."""
        if component == "apiserver":
            return None
        return self.fleet.host_index[node or ""] if component == "host" else component

    def restarted(self, key: Hashable | None) -> None:
        """The new incarnation goes on at this instant: asked again (everyone, for None)."""
        self.stepper.forget(key)
        self.dirty = True

    def told(self, node: str) -> None:
        """The host of ``node`` was handed a command: what it writes in response is waited for."""
        self.stepper.forget(self.fleet.host_index[node])

    def quiet(self, keys: Iterable[Hashable], now: float, horizon: float) -> bool:
        """What the components answered when the instant settled (``Stepper.quiet``)."""
        return self.stepper.quiet(keys, now, horizon)

    def report(self) -> dict[str, Any]:
        return self.stepper.report(self.clock.now())
