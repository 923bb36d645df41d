"""``kubemu bench api``: the Kubernetes API over HTTP under load, as an outside client sees it.

Starts ``kubemu serve`` in its own process (N nodes, plain HTTP on loopback, no scheduler:
the figures are the API's, not the scheduler's) and measures from this process:

- ``createsPerSecond``: pods created by 8 concurrent keep-alive clients (aiohttp), each
  POSTing its share one request at a time, with ``fieldValidation=Strict`` as kubectl sends;
- ``watchEventsPerSecond``: events delivered per second, summed over 100 watchers opened
  before 10,000 pods are created, from the first create until every watcher has seen every
  pod;
- ``listSeconds``: the time to LIST the first ``--pods`` pods as JSON (the best of three),
  before the watchers start.

With ``--client python`` the creates and the list use the official Python client
(``kubernetes``) in 8 threads instead, and the watchers its ``watch.Watch`` streams. Prints
a summary and, last, one JSON line.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import orjson

CLIENTS = 8
WATCHERS = 100
PODS_PATH = "/api/v1/namespaces/default/pods"


def _pod(i: int) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{i}", "labels": {"app": "bench"}},
        "spec": spec,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """A ``kubemu serve`` process for the benchmark."""

    def __init__(self, nodes: int):
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="kubemu-bench-api-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        argv = [sys.executable, "-m", "actors.harness.cli", "serve", "--nodes", str(nodes), "--port", str(self.port)]
        argv += ["--insecure-http", "--no-scheduler", "--kubeconfig", self.kubeconfig]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}"

    async def ready(self, session: Any) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"kubemu serve exited: {(self.proc.stderr.read() if self.proc.stderr else '')[-500:]}"
                )
            try:
                async with session.get(f"{self.url}/healthz") as r:
                    if r.status == 200 and os.path.exists(self.kubeconfig):
                        return
            except OSError:
                pass
            await asyncio.sleep(0.2)
        raise RuntimeError("kubemu serve did not answer within 120 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


STRICT = {"fieldValidation": "Strict"}
JSON = {"Content-Type": "application/json"}


async def _create_all(session: Any, url: str, first: int, count: int) -> float:
    """Create ``count`` pods from ``CLIENTS`` concurrent clients; the rate."""

    async def client(k: int) -> None:
        for i in range(first + k, first + count, CLIENTS):
            # As kubectl sends them: strict field validation, so the bench pays for the check.
            body = orjson.dumps(_pod(i))
            async with session.post(url + PODS_PATH, params=STRICT, data=body, headers=JSON) as r:
                if r.status != 201:
                    raise RuntimeError(f"create bench-{i}: HTTP {r.status}: {(await r.text())[:200]}")

    t0 = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(CLIENTS)))
    return count / (time.perf_counter() - t0)


async def _watch(session: Any, url: str, rv: str, want: int, counts: list[int], k: int) -> None:
    params = {"watch": "true", "resourceVersion": rv, "labelSelector": "app=bench"}
    async with session.get(url + PODS_PATH, params=params, timeout=None) as r:
        # Count event lines as the bytes arrive: the load generator should not be what limits.
        async for data in r.content.iter_any():
            counts[k] += data.count(b"\n")
            if counts[k] >= want:
                return


async def _list_seconds(session: Any, url: str) -> tuple[float, int]:
    best, items = float("inf"), 0
    for _ in range(3):
        t0 = time.perf_counter()
        async with session.get(url + PODS_PATH) as r:
            body = orjson.loads(await r.read())
        best, items = min(best, time.perf_counter() - t0), len(body["items"])
    return best, items


async def _aiohttp_bench(server: Server, pods: int, log: Callable[[str], None]) -> dict[str, Any]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=CLIENTS + WATCHERS + 4)
    async with aiohttp.ClientSession(connector=connector) as session:
        await server.ready(session)
        creates = await _create_all(session, server.url, 0, pods)
        log(f"{pods} creates from {CLIENTS} clients: {creates:.0f}/s")
        seconds, items = await _list_seconds(session, server.url)
        log(f"LIST of {items} pods as JSON: {seconds:.3f}s")
        async with session.get(server.url + PODS_PATH, params={"limit": "1"}) as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        counts = [0] * WATCHERS
        watchers = [asyncio.create_task(_watch(session, server.url, rv, pods, counts, k)) for k in range(WATCHERS)]
        await asyncio.sleep(1.0)  # every watcher connected before the creates start
        t0 = time.perf_counter()
        await _create_all(session, server.url, pods, pods)
        await asyncio.wait_for(asyncio.gather(*watchers), 600)
        events = sum(counts) / (time.perf_counter() - t0)
        log(f"{WATCHERS} watchers saw {sum(counts)} events: {events:.0f}/s")
    return figures(creates, events, seconds)


def figures(creates: float, events: float, list_seconds: float) -> dict[str, Any]:
    """The three figures as the last JSON line carries them, whichever client measured."""
    return {
        "createsPerSecond": round(creates, 1),
        "watchEventsPerSecond": round(events, 1),
        "listSeconds": round(list_seconds, 3),
    }


def run_api_bench(nodes: int, pods: int, client: str, log: Callable[[str], None]) -> dict[str, Any]:
    if client not in ("aiohttp", "python"):
        raise ValueError(f"--client: {client!r} is not one of aiohttp, python")
    server = Server(nodes)
    try:
        if client == "python":
            from actors.harness.benchapi_python import python_bench

            figures = python_bench(server, pods, log)
        else:
            figures = asyncio.run(_aiohttp_bench(server, pods, log))
    finally:
        server.stop()
    return {
        "benchmark": "api",
        "client": client,
        "nodes": nodes,
        "pods": pods,
        "clients": CLIENTS,
        "watchers": WATCHERS,
    } | figures
