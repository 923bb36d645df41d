"""``kubemu bench api --client python``: the same three figures as ``benchapi.py`` with the
official Python client (``kubernetes``) as the load generator: creates from 8 threads,
watchers as ``watch.Watch`` streams in 100 threads (each event parsed into a ``V1Pod``,
as the client does), and the LIST read raw (``_preload_content=False``) and parsed as JSON.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from actors.harness.benchapi import CLIENTS, WATCHERS, Server, _pod, figures


def _ready(server: Server) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{server.url}/healthz", timeout=1)
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("kubemu serve did not answer within 120 s")


def python_bench(server: Server, pods: int, log: Callable[[str], None]) -> dict[str, Any]:
    from kubernetes import client, config, watch

    _ready(server)
    config.load_kube_config(config_file=server.kubeconfig)
    local = threading.local()

    def api() -> Any:
        if not hasattr(local, "api"):
            local.api = client.CoreV1Api(client.ApiClient())
        return local.api

    def create_range(first: int, k: int) -> None:
        for i in range(first + k, first + pods, CLIENTS):
            api().create_namespaced_pod("default", _pod(i))

    def create_all(first: int) -> float:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            list(pool.map(lambda k: create_range(first, k), range(CLIENTS)))
        return pods / (time.perf_counter() - t0)

    creates = create_all(0)
    log(f"{pods} creates from {CLIENTS} threads: {creates:.0f}/s")
    best = float("inf")
    for _ in range(3):
        t1 = time.perf_counter()
        raw = api().list_namespaced_pod("default", _preload_content=False)
        items = len(json.loads(raw.data)["items"])
        best = min(best, time.perf_counter() - t1)
    log(f"LIST of {items} pods as JSON: {best:.3f}s")
    rv = api().list_namespaced_pod("default", limit=1).metadata.resource_version
    counts = [0] * WATCHERS

    def watcher(k: int) -> None:
        w = watch.Watch()
        for _event in w.stream(
            client.CoreV1Api().list_namespaced_pod, "default", resource_version=rv, label_selector="app=bench"
        ):
            counts[k] += 1
            if counts[k] >= pods:
                w.stop()

    threads = [threading.Thread(target=watcher, args=(k,), daemon=True) for k in range(WATCHERS)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    t0 = time.perf_counter()
    create_all(pods)
    for t in threads:
        t.join(600)
    events = sum(counts) / (time.perf_counter() - t0)
    log(f"{WATCHERS} watch streams saw {sum(counts)} events: {events:.0f}/s")
    return figures(creates, events, best)
