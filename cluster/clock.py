"""Emulated time.

Every component reads time through a ``Clock``; no component reads the wall clock itself
(the few modules that must are listed in docs/architecture.md §15). The actor shells
build a ``Clock`` from a ``ClockSpec`` (shared by the whole emulation) and a real-time
source they pass in; tests use ``FakeClock`` and move it by
hand. Emulated time is in seconds since the scenario started, and 0 until the clock is
started, so slow actor start-up never eats into a scenario's timeline. A clock either runs
(``start``: ``emulated = (source() - real_start) * time_scale``; benchmarks, ``kubemu
serve`` on Ray) or is held (``hold``): it stands at an instant until the coordinator of a
stepped run moves it on (``cluster/runtime/stepper.py``), never backwards. ``ClockSpec``
is what travels between processes; ``save_held``/``saved_held`` keep a held instant beside
the apiserver's log, so a restarted apiserver stamps writes at the instant the cluster is at.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

# Object timestamps are rendered against a fixed epoch so that a replay with the same seed
# writes the same creationTimestamps.
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


HELD_FILE = "clock-held.json"  # beside the apiserver's log: the instant a stepped cluster is at


@dataclass(frozen=True)
class ClockSpec:
    time_scale: float = 1.0
    real_start: float | None = None  # seconds of the real source at emulated 0; None = not running
    held: float | None = None  # a held clock stands here (real_start is then None)


class Clock:
    def __init__(self, spec: ClockSpec, source: Callable[[], float]):
        if spec.time_scale <= 0:
            raise ValueError(f"timeScale: {spec.time_scale!r} must be positive")
        self._source = source
        self.spec = spec

    def start(self, real_start: float) -> None:
        """Run by the real source from emulated 0 at ``real_start``."""
        self.spec = ClockSpec(self.spec.time_scale, real_start)

    def hold(self, at: float) -> None:
        """Stand at ``at`` (or where it stands, if that is later) until moved again."""
        held = self.spec.held
        self.spec = ClockSpec(self.spec.time_scale, None, at if held is None else max(held, at))

    def apply(self, spec: ClockSpec) -> None:
        """Take the cluster's clock: held at its instant, or running from its real start."""
        if spec.held is not None:
            self.hold(spec.held)
        elif spec.real_start is not None:
            self.start(spec.real_start)

    @property
    def started(self) -> bool:
        return self.spec.real_start is not None or self.spec.held is not None

    @property
    def held(self) -> bool:
        return self.spec.held is not None

    def now(self) -> float:
        if self.spec.held is not None:
            return self.spec.held
        if self.spec.real_start is None:
            return 0.0
        return max(0.0, (self._source() - self.spec.real_start) * self.spec.time_scale)

    def real_delay(self, emulated_seconds: float) -> float:
        """Real seconds until ``emulated_seconds`` from now have passed (a held clock never
        moves by itself: infinity)."""
        if self.spec.held is not None:
            return math.inf
        return max(0.0, emulated_seconds) / self.spec.time_scale


def save_held(directory: str, at: float) -> None:
    """Keep the instant a held clock stands at in ``directory`` (replaced whole: a reader
    sees the old instant or the new one). A process crash keeps what the OS was given."""
    path = os.path.join(directory, HELD_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump({"held": at}, f)
    os.replace(path + ".tmp", path)


def saved_held(directory: str) -> float | None:
    """The instant ``save_held`` kept, or None (none kept, or unreadable: the caller then
    waits for the coordinator to tell it)."""
    try:
        with open(os.path.join(directory, HELD_FILE)) as f:
            value = json.load(f).get("held")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class FakeClock(Clock):
    """A clock that only moves when a test says so."""

    def __init__(self, now: float = 0.0, time_scale: float = 1.0):
        self._now = now
        super().__init__(ClockSpec(time_scale, 0.0), lambda: self._now / self.spec.time_scale)

    def advance(self, seconds: float) -> float:
        self._now += seconds
        return self._now

    def set(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def rfc3339(t: float) -> str:
    """An emulated time as an RFC 3339 timestamp (second precision, as the API writes)."""
    return _rfc3339_second(int(t))


@functools.lru_cache(maxsize=1024)
def _rfc3339_second(second: int) -> str:
    # Every write of a busy second formats the same instant: strftime once per second.
    return (EPOCH + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(t: float) -> str:
    """An emulated time with microseconds (a Lease's renewTime is a MicroTime)."""
    return rfc3339(t)[:-1] + f".{int((t % 1) * 1e6):06d}Z"


def from_rfc3339(s: str) -> float:
    return (datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) - EPOCH).total_seconds()


@functools.lru_cache(maxsize=8192)
def parse_timestamp(s: str) -> float | None:
    """Any RFC 3339 timestamp as emulated seconds (kubemu's own form first, it is the
    fast path); None when it cannot be read. Shared by preemption's pod ordering and the
    scheduler's pod table so both read start times alike."""
    try:
        return from_rfc3339(s)
    except ValueError:
        pass
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return (t - EPOCH).total_seconds()
