"""The apiserver actor's clock: started, held and moved, and told to its watchers.

Owns the clock methods of ``APIServerActor`` (``apiserver.py``, which stays a thin shell
around the store): ``start_clock`` (a running clock, saved in the durable log's
``clock.json``), ``set_clock`` (a stepped cluster's clock, moved here first, before anyone
acts at the new instant, and kept beside the log: ``cluster/clock.py`` ``save_held``),
``write_clocked`` (a write at its writer's instant: a held clock moves on to it before the
write is applied, so a stepped cluster's clock needs no call of its own to move), and
``watch_clocked`` (a watch reply and the emulated time after it, so a stepped cluster's
components learn a new instant with the first events written at it), and what a restarted
incarnation's clock starts from. The coordinator is ``actors/cluster.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cluster.clock import Clock, ClockSpec, save_held, saved_held

if TYPE_CHECKING:
    from actors.profiling import Profile
    from cluster.api.requests import Outcome
    from cluster.apiserver.durable import Durable


class APIServerClock:
    # Set by APIServerActor's constructor.
    clock: Clock
    durable: Durable | None
    profile: Profile
    data_dir: str | None

    if TYPE_CHECKING:  # defined by APIServerActor, which this is mixed into

        async def watch_packed(self, since: dict[str, int], node_names=None, timeout: float = 1.0) -> bytes: ...

        async def write_packed(self, blob: bytes) -> list[Outcome]: ...

    def restore_clock(self) -> None:
        """A restarted incarnation goes on on the cluster's timeline: running from the saved
        real start, or held at the saved instant (else 0 until somebody starts it)."""
        if self.durable is not None and (real_start := self.durable.saved_clock()) is not None:
            self.clock.start(real_start)
        elif self.data_dir is not None and (held := saved_held(self.data_dir)) is not None:
            self.clock.hold(held)

    async def start_clock(self, real_start: float) -> None:
        self.profile.start("apiserver")
        if self.durable is not None:
            self.durable.save_clock(real_start)
        self.clock.start(real_start)

    async def set_clock(self, spec: ClockSpec) -> None:
        """Take the cluster's clock (``Clock.apply``); a held one is kept for a restart."""
        if spec.real_start is not None and spec.held is None:
            await self.start_clock(spec.real_start)
            return
        self.profile.start("apiserver")
        self.clock.apply(spec)
        if self.data_dir is not None and self.clock.held:
            save_held(self.data_dir, self.clock.now())

    async def write_clocked(self, at: float, blob: bytes) -> list[Outcome]:
        """``write_packed`` at the writer's instant ``at``: a held clock moves on to it first
        (never back: a writer behind the cluster's instant writes at the cluster's)."""
        if self.clock.held and at > self.clock.now():
            await self.set_clock(ClockSpec(self.clock.spec.time_scale, None, at))
        return await self.write_packed(blob)

    async def watch_clocked(
        self, since: dict[str, int], node_names: frozenset[str] | None = None, timeout: float = 1.0
    ) -> tuple[float, bytes]:
        """``watch_packed``, and the emulated time once it answers."""
        blob = await self.watch_packed(since, node_names, timeout)
        return self.clock.now(), blob
