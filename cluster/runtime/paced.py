"""The local runtime paced by the wall clock, for clients outside the process.

Owns ``PacedCluster``: a ``LocalCluster`` whose virtual clock may not run ahead of the wall
clock (times ``time_scale``), because kubectl, client libraries and external schedulers
act in real time. ``advance`` waits (at most ``TICK`` real seconds at a time, and less when
a client writes: ``poke``) and then moves the clock to the earlier of the next wakeup and
the wall time. Everything else is the local runtime's. Used by ``kubemu serve`` and
``kubemu run --serve`` (``actors/harness/serve.py``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .cluster import Layout
from .local import LocalCluster

TICK = 0.02  # real seconds the clock may stand still before it catches up with the wall


class PacedCluster(LocalCluster):
    def __init__(self, layout: Layout, *, time_scale: float = 1.0, keep: bool = False, **kw: Any):
        super().__init__(layout, **kw)
        self.time_scale = time_scale
        self.keep = keep  # shutdown leaves the components running (serve goes on after a scenario)
        self._t0: float | None = None
        self._e0 = self._now
        self._poked = asyncio.Event()

    def poke(self) -> None:
        """A client wrote: the next ``advance`` returns at once so the cluster reacts."""
        self._poked.set()

    def wall_now(self) -> float:
        """Emulated time as the wall clock says it should be."""
        if self._t0 is None:
            self._t0, self._e0 = time.monotonic(), self._now
        return self._e0 + (time.monotonic() - self._t0) * self.time_scale

    async def advance(self, until: float | None) -> None:
        target = min((t for t in (self.next_wakeup(), until) if t is not None), default=None)
        wall = self.wall_now()
        if target is None or target > wall:
            delay = TICK if target is None else min(TICK, (target - wall) / self.time_scale)
            try:
                await asyncio.wait_for(self._poked.wait(), max(0.0, delay))
            except asyncio.TimeoutError:
                pass
            self._poked.clear()
            wall = self.wall_now()
        self._now = max(self._now, wall if target is None else min(target, wall))
        self._release_held()

    async def shutdown(self) -> None:
        if not self.keep:
            await super().shutdown()
