"""The apiserver actor's clock: started, held and moved, and told to its watchers.

Owns the clock methods of ``APIServerActor`` (``apiserver.py``, which stays a thin shell
around the store): ``start_clock`` (a running clock, saved in the durable log's
``clock.json``), ``set_clock`` (a stepped cluster's clock, moved here first, before anyone
acts at the new instant, and kept beside the log: ``cluster/clock.py`` ``save_held``),
``write_clocked`` (a write at its writer's instant: a held clock moves on to it before the
write is applied, so a stepped cluster's clock needs no call of its own to move; and
``write_instants``, several instants' writes in order in one call), and
``watch_clocked`` (a watch reply and the emulated time its events were written at, so a
stepped cluster's components learn a new instant with the first events written at it; a
reply holds the events of one instant only, ``cluster/runtime/instants.py``, so a
component that falls behind writers who ran ahead still hands each event to its logic at
its own instant), and what a restarted incarnation's clock starts from. The coordinator is ``actors/coordinator.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from actors.packing import pack_reply
from cluster.api.errors import Expired
from cluster.api.requests import WatchChunk
from cluster.clock import Clock, ClockSpec, save_held, saved_held
from cluster.runtime.instants import Instants

if TYPE_CHECKING:
    from actors.profiling import Profile
    from cluster.api.requests import Outcome
    from cluster.apiserver.apiserver import APIServer
    from cluster.apiserver.hosted import Durable


class APIServerClock:
    # Set by APIServerActor's constructor.
    clock: Clock
    api: APIServer
    instants: Instants
    durable: Durable | None
    profile: Profile
    data_dir: str | None

    if TYPE_CHECKING:  # defined by APIServerActor, which this is mixed into

        async def watch_packed(self, since: dict[str, int], node_names=None, timeout: float = 1.0) -> bytes: ...

        async def watch(
            self, since: dict[str, int], node_names=None, timeout: float = 1.0
        ) -> dict[str, WatchChunk | Expired]: ...

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
        if self.clock.held:
            self.instants.moved(self.api.resource_version(), self.clock.now())
            if self.data_dir is not None:
                save_held(self.data_dir, self.clock.now())

    async def write_clocked(self, at: float, blob: bytes) -> list[Outcome]:
        """``write_packed`` at the writer's instant ``at``: a held clock moves on to it first
        (never back: a writer behind the cluster's instant writes at the cluster's)."""
        if self.clock.held and at > self.clock.now():
            await self.set_clock(ClockSpec(self.clock.spec.time_scale, None, at))
        return await self.write_packed(blob)

    async def write_instants(self, instants: list[tuple[float, bytes]]) -> list[Outcome]:
        """``write_clocked`` for each (instant, requests) in order, in one call (a node host
        running its heartbeats ahead: ``ComponentActor.beat``); the outcomes of all."""
        out: list[Outcome] = []
        for at, blob in instants:
            out += await self.write_clocked(at, blob)
        return out

    async def watch_clocked(
        self, since: dict[str, int], node_names: frozenset[str] | None = None, timeout: float = 1.0
    ) -> tuple[float, bytes]:
        """``watch_packed``, and the emulated time: a held clock's reply holds the events of
        one instant and says which; else (or with no events) the time once it answers."""
        if not self.clock.held:
            return self.clock.now(), await self.watch_packed(since, node_names, timeout)
        reply = await self.watch(since, node_names, timeout)

        def count_after(kind: str, rv: int) -> int | None:
            part = self.api.watch({kind: rv}, node_names)[kind]
            return len(part.events) if isinstance(part, WatchChunk) else None

        at, reply = self.instants.cut(since, reply, count_after)
        return (self.clock.now() if at is None else at), pack_reply(reply)
