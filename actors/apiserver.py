"""The apiserver Ray actor: a thin shell around ``cluster.store.apiserver.APIServer``.

It owns the emulated clock's view for writes, turns batch calls into domain calls, and
serves watches as long polls: ``watch`` returns as soon as any requested kind has events
after the caller's resourceVersion (or when the timeout passes), so every reply is a batch.
Event payloads are the msgpack bytes the store encoded once per write.
"""
from __future__ import annotations

import asyncio
import time

import ray

from actors.profiling import GcPacer, Profile, Profiled, tune_gc
from cluster.clock import Clock, ClockSpec
from cluster.store.apiserver import APIServer
from cluster.store.errors import APIError, Expired


@ray.remote(num_cpus=0)
class APIServerActor(Profiled):
    def __init__(self, seed: int = 0, window: int = 50_000, time_scale: float = 1.0):
        self.profile = Profile()
        tune_gc()
        self.clock = Clock(ClockSpec(time_scale), time.time)
        self.api = APIServer(seed=seed, window=window)
        self._changed: asyncio.Event | None = None
        self.writes = 0
        self.gc = GcPacer()
        self._last_write = 0.0

    async def start_clock(self, real_start: float) -> None:
        self.profile.start("apiserver")
        self.clock.start(real_start)

    async def ping(self) -> bool:
        return True

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
        self._wrote(self.api.renew_leases(items, self.clock.now()))

    def _wrote(self, result):
        self.writes += 1
        self._last_write = time.monotonic()
        self.gc.turn_done(idle=False)
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        return result

    # -- reads ----------------------------------------------------------------------------
    async def get(self, kind: str, ns: str, name: str):
        try:
            return self.api.get(kind, ns, name)
        except APIError as e:
            return e.as_tuple()

    async def list(self, kind: str, node_names: list[str] | None = None) -> tuple[int, list[bytes]]:
        return self.api.store.list(kind, set(node_names) if node_names is not None else None)

    async def watch(self, since: dict[str, int], node_names: list[str] | None = None, timeout: float = 1.0) -> dict:
        """Events after ``since[kind]`` for each kind: ``{kind: (events, rv)}`` or ``{kind: "expired: ..."}``.

        ``node_names`` restricts Pod events to pods on those nodes (a host's own nodes).
        """
        names = set(node_names) if node_names is not None else None
        deadline = time.monotonic() + timeout
        while True:
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
                    self.gc.turn_done(idle=time.monotonic() - self._last_write > 1.0)
                return out
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def counts(self) -> dict:
        return {kind: self.api.store.count(kind) for kind in ("Pod", "Node", "Event", "Lease")} | {
            "resourceVersion": self.api.store.rv,
            "writes": self.writes,
        }

