"""The apiserver Ray actor: a thin shell around ``cluster.store.apiserver.APIServer``.

It owns the emulated clock's view for writes, turns batch calls into domain calls, and
serves watches as long polls: ``watch`` returns as soon as any requested kind has events
after the caller's resourceVersion (or when the timeout passes), so every reply is a batch.
Event payloads are the msgpack bytes the store encoded once per write.

With a data directory every write call is committed to the durable log before it is
acknowledged or any watcher can see it (``cluster/store/durable.py``); a restarted actor
recovers from the directory, continues the resourceVersion sequence and the emulated
timeline, and its watchers relist. Ray restarts the actor after a crash or a
``ray.kill(..., no_restart=False)`` and retries the calls that were in flight, so clients
only see a pause (and, for a retried write whose first attempt had committed, the
AlreadyExists or Conflict a lost reply would give against a real apiserver).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import ray

from actors.profiling import GcPacer, Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.store.apiserver import APIServer
from cluster.store.durable import DEFAULT_SNAPSHOT_EVERY, CommitFailed, Durable, Unrecoverable
from cluster.store.errors import APIError, Expired


def _refused(result, error: tuple):
    """A write call's reply when none of its writes was acknowledged: the error for each item
    of a batch, the error itself for a single write, a one-item list for a call that
    otherwise returns nothing (so per-item loops over the reply see it)."""
    if isinstance(result, list):
        return [error] * len(result)
    return [error] if result is None else error


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)
class APIServerActor(Profiled):
    def __init__(
        self,
        seed: int = 0,
        window: int = 50_000,
        time_scale: float = 1.0,
        data_dir: str | None = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ):
        """``data_dir``: where the durable log lives; None keeps everything in memory (a
        restart then starts from nothing)."""
        self.profile = Profile()
        tune_gc()
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.durable = Durable(data_dir, seed, window, snapshot_every) if data_dir else None
        if self.durable is None:
            self.api = APIServer(seed=seed, window=window)
        else:
            self.api = self.durable.api
            real_start = self.durable.saved_clock()
            if real_start is not None:  # a restart: writes go on on the cluster's timeline
                self.clock.start(real_start)
        self._changed: asyncio.Event | None = None
        self.writes = 0
        self.gc = GcPacer()
        self._last_write = 0.0

    async def start_clock(self, real_start: float) -> None:
        self.profile.start("apiserver")
        if self.durable is not None:
            self.durable.save_clock(real_start)
        self.clock.start(real_start)

    async def collect_garbage(self) -> None:
        """Before a benchmark's measured phase: the full collection, and the snapshot if one
        is due, so that neither lands inside the window."""
        await super().collect_garbage()
        if self.durable is not None:
            self.durable.idle()

    # -- writes (each ends by waking the watchers) ----------------------------------------
    async def create(self, objs: list[dict]) -> list:
        # The objects were deserialized for this call: nobody else holds them.
        return self._wrote(self.api.create_many(objs, self.clock.now(), owned=True))

    async def update(self, obj: dict):
        try:
            out = self.api.update(obj, self.clock.now())
            return self._wrote(out)
        except APIError as e:
            return e.as_tuple()

    async def update_status(self, kind: str, items: list) -> list:
        return self._wrote(self.api.update_status(kind, items, self.clock.now()))

    async def patch_pod_status(self, items: list) -> list:
        return self._wrote(self.api.patch_pod_status(items, self.clock.now()))

    async def patch_node_taints(self, items: list) -> list:
        """(node name, taints to add or update, taints to remove) each, from node controllers."""
        return self._wrote(self.api.patch_node_taints(items, self.clock.now()))

    async def bind(self, items: list) -> list:
        return self._wrote(self.api.bind(items, self.clock.now()))

    async def delete(self, kind: str, items: list) -> list:
        return self._wrote(self.api.delete_many(kind, items, self.clock.now()))

    async def evict(self, items: list) -> list:
        """The Eviction subresource: (namespace, name, uid, grace) each; a PDB may refuse (429)."""
        return self._wrote(self.api.evict(items, self.clock.now()))

    async def renew_leases(self, items: list) -> None:
        """None, or a list holding one error when the writes could not be made durable."""
        return self._wrote(self.api.renew_leases(items, self.clock.now()))

    def _wrote(self, result):
        self.writes += 1
        self._last_write = time.monotonic()
        if self.durable is not None:
            result = self._commit(result)
        self.gc.turn_done(idle=False)
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        return result

    def _commit(self, result):
        """Commit what the call wrote before anyone hears of it; refuse it all if that fails."""
        try:
            self.durable.commit()
        except CommitFailed as e:
            self.api = self.durable.api  # reloaded from the log: the refused writes are gone
            return _refused(result, e.as_tuple())
        except Unrecoverable as e:
            # Memory holds writes the disk does not and nothing can take them back: end the
            # process without another reply; Ray restarts the actor from the log and
            # retries this call and every other one there.
            print(f"kubemu apiserver: {e}", file=sys.stderr, flush=True)
            os._exit(1)
        return result

    def _settle(self) -> None:
        """Before a read: commit writes a call made without reaching ``_wrote`` (it raised
        midway), so no reader sees a write a crash could still lose."""
        if self.durable is not None and self.durable.log.pending:
            self._commit(None)

    # -- reads ----------------------------------------------------------------------------
    async def get(self, kind: str, ns: str, name: str):
        self._settle()
        try:
            return self.api.get(kind, ns, name)
        except APIError as e:
            return e.as_tuple()

    async def list(self, kind: str, node_names: list[str] | None = None) -> tuple[int, list[bytes]]:
        self._settle()
        return self.api.store.list(kind, set(node_names) if node_names is not None else None)

    async def watch(self, since: dict[str, int], node_names: list[str] | None = None, timeout: float = 1.0) -> dict:
        """Events after ``since[kind]`` for each kind: ``{kind: (events, rv)}`` or ``{kind: "expired: ..."}``.

        ``node_names`` restricts Pod events to pods on those nodes (a host's own nodes).
        """
        names = set(node_names) if node_names is not None else None
        deadline = time.monotonic() + timeout
        while True:
            self._settle()
            out, any_events = {}, False
            for kind, rv in since.items():
                try:
                    events, resume = self.api.store.events_since(kind, rv, names if kind == "Pod" else None)
                except Expired as e:
                    out[kind] = f"expired: {e.message}"
                    any_events = True
                    continue
                out[kind] = (events, resume)
                any_events |= bool(events)
            remaining = deadline - time.monotonic()
            if any_events or remaining <= 0:
                if not any_events:  # a quiet second is when a full collection costs nothing
                    idle = time.monotonic() - self._last_write > 1.0
                    self.gc.turn_done(idle=idle)
                    if idle and self.durable is not None:
                        self.durable.idle()  # ... and a snapshot
                return out
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def durability(self) -> dict:
        """The durable log's state: {} without a data directory."""
        d = self.durable
        if d is None:
            return {}
        return {
            "dataDir": d.directory,
            "recoveredResourceVersion": d.recovered_rv,
            "snapshotResourceVersion": d.log.snapshot_rv,
            "commitsFailed": d.commits_failed,
            "snapshotError": d.snapshot_error,
        }

    async def counts(self) -> dict:
        return {kind: self.api.store.count(kind) for kind in ("Pod", "Node", "Event", "Lease")} | {
            "resourceVersion": self.api.store.rv,
            "writes": self.writes,
        }

    # -- node lifecycle controller ----------------------------------------------------------
    async def patch_node_conditions(self, items: list) -> list:
        """(node name, conditions) each: set those conditions only, guarded by their heartbeat."""
        return self._wrote(self.api.patch_node_conditions(items, self.clock.now()))
