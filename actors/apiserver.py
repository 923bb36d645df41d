"""The apiserver Ray actor: a thin shell around ``cluster.apiserver.apiserver.APIServer``.

Stamps writes with its emulated clock (its clock methods, for a running or a stepped
cluster, are ``apiserverclock.py``'s), applies each batch of typed requests in order, and
serves watches as long polls: ``watch`` returns as soon as any requested kind has events
after the caller's resourceVersion (or when the timeout passes), so every reply is a batch.
Event payloads are the msgpack bytes the store encoded once per write.

With a data directory every write call is committed to the durable log before it is
acknowledged or any watcher can see it (``cluster/apiserver/hosted.py``); a restarted actor
recovers from the directory, continues the resourceVersion sequence and the emulated
timeline, and its watchers relist. Ray restarts the actor after a crash or a
``ray.kill(..., no_restart=False)`` and retries the calls that were in flight, so clients
only see a pause (and, for a retried write whose first attempt had committed, the
AlreadyExists or AlreadyAssigned a lost reply would give against a real apiserver).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import ray

from actors.apiserverclock import APIServerClock
from actors.packing import pack_reply, unpack
from actors.profiling import GcPacer, Profile, Profiled, tune_gc
from cluster.api.errors import Expired, StatusError
from cluster.api.requests import ListPage, ListResult, Outcome, Request, WatchChunk
from cluster.apiserver.hosted import DEFAULT_SNAPSHOT_EVERY, HostedAPIServer, Unrecoverable
from cluster.apiserver.storage import DEFAULT_WINDOW, Window
from cluster.clock import Clock, ClockSpec
from cluster.frontend.backend import apply_one
from cluster.runtime.instants import Instants


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class APIServerActor(APIServerClock, Profiled):
    def __init__(
        self,
        seed: int = 0,
        window: Window = DEFAULT_WINDOW,
        time_scale: float = 1.0,
        data_dir: str | None = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ):
        """``data_dir``: where the durable log lives; None keeps everything in memory (a
        restart then starts from nothing)."""
        self.profile = Profile()
        tune_gc()
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.hosted = HostedAPIServer(seed, window, data_dir, snapshot_every)
        self.durable, self.api = self.hosted.durable, self.hosted.api
        self.data_dir = data_dir
        self.instants = Instants()  # where a held clock moved on (apiserverclock.py)
        self.restore_clock()  # a restart: writes go on on the cluster's timeline (apiserverclock.py)
        self._changed: asyncio.Event | None = None
        self.writes = 0
        self.gc = GcPacer()
        self._last_write = 0.0

    async def collect_garbage(self) -> None:
        """Before a benchmark's measured phase: the full collection, and the snapshot if one
        is due, so that neither lands inside the window."""
        await super().collect_garbage()
        self.hosted.idle()

    # -- writes ----------------------------------------------------------------------------
    async def write(self, requests: list[Request]) -> list[Outcome]:
        """Apply ``requests`` in order; one outcome each (None: done). The objects in them
        were deserialized for this call: nobody else holds them."""
        outcomes = self.api.write(requests, self.clock.now(), owned=True)
        self.writes += 1
        self._last_write = time.monotonic()
        if self.durable is not None:
            outcomes = self._commit(outcomes)
        self.gc.turn_done(idle=False)
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        return outcomes

    async def write_packed(self, blob: bytes) -> list[Outcome]:
        """``write`` with the requests in one blob (``actors/packing.py``): what the
        components and the driver send, as Ray would serialize a list request by request."""
        return await self.write(unpack(blob))

    async def write_one(self, request: Request, dry_run: bool = False) -> dict | None | StatusError:
        """One write from an HTTP client, answered with the object (``apply_one``)."""
        try:
            out = apply_one(self.api, request, self.clock.now(), dry_run)
        except StatusError as e:
            return e
        if dry_run:
            return out  # nothing to commit, nobody to wake
        (outcome,) = self._commit([None]) if self.durable is not None else (None,)
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        return outcome if outcome is not None else out

    def _commit(self, outcomes: list[Outcome]) -> list[Outcome]:
        """Commit what the call wrote before anyone hears of it; refuse it all if that fails."""
        try:
            outcomes = self.hosted.commit(outcomes)
        except Unrecoverable as e:
            # Memory holds writes the disk does not and nothing can take them back: end the
            # process without another reply; Ray restarts the actor from the log and
            # retries this call and every other one there.
            print(f"kubemu apiserver: {e}", file=sys.stderr, flush=True)
            os._exit(1)
        self.api = self.hosted.api  # reloaded from the log after a refused commit
        return outcomes

    def _settle(self) -> None:
        """Before a read: commit writes a call made without finishing (it raised midway), so
        no reader sees a write a crash could still lose."""
        if self.hosted.unsettled():
            self._commit([])

    # -- reads -----------------------------------------------------------------------------
    async def get(self, kind: str, ns: str, name: str) -> dict | StatusError:
        self._settle()
        try:
            return self.api.get(kind, ns, name)
        except StatusError as e:
            return e

    async def list(self, kind: str, node_names: frozenset[str] | None = None) -> ListResult:
        self._settle()
        return self.api.list(kind, node_names)

    async def list_page(
        self, kind: str, node_names: frozenset[str] | None, limit: int, continue_token: str = ""
    ) -> ListPage | StatusError:
        """One page of a list (``APIServer.list_page``); an Expired continue is returned."""
        self._settle()
        try:
            return self.api.list_page(kind, node_names, limit, continue_token)
        except StatusError as e:
            return e

    async def resource_version(self) -> int:
        self._settle()
        return self.api.resource_version()

    async def watch(
        self, since: dict[str, int], node_names: frozenset[str] | None = None, timeout: float = 1.0
    ) -> dict[str, WatchChunk | Expired]:
        """Events after ``since[kind]`` for each kind (``node_names``: only pods on those
        nodes), as soon as there are any, or empty chunks after ``timeout`` real seconds."""
        deadline = time.monotonic() + timeout
        while True:
            self._settle()
            out = self.api.watch(since, node_names)
            if any(not isinstance(part, WatchChunk) or part.events for part in out.values()):
                return out
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                idle = time.monotonic() - self._last_write > 1.0
                self.gc.turn_done(idle=idle)  # a quiet second is when a full collection costs nothing
                if idle:
                    self.hosted.idle()  # ... and a snapshot
                return out
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def watch_packed(
        self, since: dict[str, int], node_names: frozenset[str] | None = None, timeout: float = 1.0
    ) -> bytes:
        """``watch`` with the reply in one blob (``actors/packing.py``): what the informers ask."""
        return pack_reply(await self.watch(since, node_names, timeout))

    async def durability(self) -> dict:
        """The durable log's state: {} without a data directory."""
        return self.hosted.durability()

    async def counts(self) -> dict:
        return self.hosted.counts() | {"writes": self.writes}
