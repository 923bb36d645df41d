"""``kubemu serve --runtime ray``: the Kubernetes API in front of the Ray runtime.

Owns ``RayBackend``, the front end's ``Backend`` over the apiserver actor (reads, one
write at a time through ``write_one``, watches), ``RayViews`` (the YuniKorn-mode
scheduler's view, fetched from its actor before each request that reads it: its REST API
and ``/metrics``), and starting it all: an embedded or joined Ray, the components in their
actors, the HTTP server in this process. Emulated time runs by the wall clock as in every
Ray run, from the scenario epoch (2026-01-01), so ``AGE`` is right but timestamps are not
today's.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import ray

from actors import raycluster
from actors.cluster import RayCluster
from actors.harness.serve import ServeOptions, listen, node_claimer, serve_options_layout
from cluster.api import codec
from cluster.api.errors import Expired, StatusError
from cluster.api.kubeletcalls import KubeletCall
from cluster.api.requests import Request, WatchChunk
from cluster.frontend.backend import Backend, KubeletUnreachable
from cluster.frontend.metrics import Metrics
from cluster.scenario.layout import YUNIKORN

POLL = 0.05  # real seconds between looks at the resourceVersion while a watch waits
CLAIM_POLL = 0.1  # real seconds between looks for Nodes created or deleted through the API


class RayBackend(Backend):
    def __init__(self, cluster: RayCluster):
        self.cluster, self.api = cluster, cluster.api

    def now(self) -> float:
        return self.cluster.now()

    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]:
        return await self.cluster.get(kind, ns, name)

    async def list(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, list[dict[str, Any]]]:
        result = await self.api.list.remote(kind, node_names)
        return result.resource_version, [codec.decode(b) for b in result.items]

    async def list_encoded(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, Sequence[bytes]]:
        result = await self.api.list.remote(kind, node_names)
        return result.resource_version, result.items

    async def write(self, req: Request, dry_run: bool = False) -> dict[str, Any] | None:
        out = await self.api.write_one.remote(req, dry_run)
        if isinstance(out, StatusError):
            raise out
        return out

    async def watch(self, kind: str, rv: int, node_names: frozenset[str] | None) -> WatchChunk | Expired:
        chunk: WatchChunk | Expired = (await self.api.watch.remote({kind: rv}, node_names, 0.0))[kind]
        return chunk

    async def resource_version(self) -> int:
        rv: int = await self.api.resource_version.remote()
        return rv

    async def kubelet(self, call: KubeletCall) -> Any:
        """The node's kubelet asked through its host actor (the route chaos commands take)."""
        try:
            return await self.cluster.command(call)
        except (ValueError, ray.exceptions.RayError) as e:  # the host refused, or its actor is gone
            raise KubeletUnreachable(str(e).splitlines()[0]) from None

    async def changed(self, rv: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and await self.resource_version() <= rv:
            await asyncio.sleep(POLL)


class RayViews:
    """Components' views for the front end, whose callables cannot wait on an actor:
    ``refresh`` (awaited by the handler before ``/metrics`` and ``/ws/v1/...``) fetches
    them, the callables hand out what it fetched last."""

    def __init__(self, cluster: RayCluster):
        self.cluster = cluster
        self.latest: dict[str, Any] | None = None

    async def refresh(self) -> None:
        views = await self.cluster.inspect(YUNIKORN)
        self.latest = views[0] if views else None

    def yunikorn(self) -> dict[str, Any] | None:
        return self.latest


async def serve_on_ray(opts: ServeOptions, log: Callable[[str], None], stop: asyncio.Event) -> None:
    started_here = not ray.is_initialized()
    raycluster.init_ray(0)
    cpus = int(ray.available_resources().get("CPU", os.cpu_count() or 1))
    cluster = RayCluster(serve_options_layout(opts, cpus), seed=opts.seed, time_scale=opts.time_scale)
    cluster.log = log
    cluster.manage_nodes(node_claimer(opts))
    try:
        log(f"kubemu: {await cluster.start()} nodes registered on Ray")
        claims = asyncio.create_task(claim_nodes(cluster, stop, log))
        backend = RayBackend(cluster)
        views = RayViews(cluster)
        metrics = Metrics(yunikorn=views.yunikorn)
        runner = await listen(backend, metrics, opts, log, yunikorn=views.yunikorn, refresh=views.refresh)
        try:
            await stop.wait()
        finally:
            claims.cancel()
            await runner.cleanup()
    finally:
        await cluster.shutdown()
        if started_here and ray.is_initialized():
            ray.shutdown()
        log("kubemu: stopped")


async def claim_nodes(cluster: RayCluster, stop: asyncio.Event, log: Callable[[str], None]) -> None:
    """Start and stop kubelets for the Nodes clients create and delete, until ``stop``
    (the local runtime does it within its instants; a running Ray clock has none)."""
    while not stop.is_set():
        try:
            await cluster.claim_nodes()
        except Exception as e:  # an actor out of reach for now: the next look tries again
            log(f"kubemu: taking over Nodes created through the API: {type(e).__name__}: {e}")
        await asyncio.sleep(CLAIM_POLL)
