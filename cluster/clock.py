"""Emulated time.

Every component reads time through a ``Clock``; nothing under ``cluster/`` reads the wall
clock itself. The actor shells build a ``Clock`` from a ``ClockSpec`` (shared by the whole
emulation) and a real-time source they pass in; tests use ``FakeClock`` and move it by
hand. Emulated time is in seconds since the scenario started:
``emulated = (source() - real_start) * time_scale``, and 0 until ``start`` is called, so
slow actor start-up never eats into a scenario's timeline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

# Object timestamps are rendered against a fixed epoch so that a replay with the same seed
# writes the same creationTimestamps.
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class ClockSpec:
    time_scale: float = 1.0
    real_start: float | None = None  # seconds of the real source at emulated 0; None = not started


class Clock:
    def __init__(self, spec: ClockSpec, source: Callable[[], float]):
        if spec.time_scale <= 0:
            raise ValueError(f"timeScale: {spec.time_scale!r} must be positive")
        self._source = source
        self.spec = spec

    def start(self, real_start: float) -> None:
        self.spec = ClockSpec(self.spec.time_scale, real_start)

    @property
    def started(self) -> bool:
        return self.spec.real_start is not None

    def now(self) -> float:
        if self.spec.real_start is None:
            return 0.0
        return max(0.0, (self._source() - self.spec.real_start) * self.spec.time_scale)

    def real_delay(self, emulated_seconds: float) -> float:
        """Real seconds until ``emulated_seconds`` from now have passed."""
        return max(0.0, emulated_seconds) / self.spec.time_scale


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
