"""The live part of the web view: what one open ``/ui`` page is sent as the cluster changes.

Owns ``LiveView``, a watcher's summary of Pods and Nodes (pods by phase, nodes by pool and
state, the pending pods with the message of their last scheduling failure, the pods that
changed last) and the points of the live charts (binds and starts per second, the
startup latency p50/p90/p99 of the pods that started, the pending pods by queue as the
watch shows them), and ``stream``, the server-sent events of one page: the summary and a
chart point when something changed (at most every ``EVERY`` seconds), and a point every
``QUIET`` seconds otherwise. It is fed by the front end's watch (the same chunks an HTTP
watch reads, relisting on Expired), never by re-reading the whole state. Called by
``ui.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from ..api.errors import Expired
from ..api.objects import condition, node_name_of, phase_of
from ..clock import rfc3339
from .watch import _shared

if TYPE_CHECKING:
    from .handler import Handler

EVERY = 0.25  # real seconds between two updates of a busy page
QUIET = 1.0  # real seconds between chart points while nothing happens
RECENT = 25  # pods shown as changed last
PENDING_SHOWN = 100
POOL_LABELS = ("pool", "kubemu.io/pool", "node.kubernetes.io/instance-type", "topology.kubernetes.io/zone")


def node_pool(node: dict[str, Any]) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key in POOL_LABELS:
        if labels.get(key):
            return str(labels[key])
    name = str(node["metadata"]["name"])
    return name.rstrip("0123456789").rstrip("-") or name


def node_state(node: dict[str, Any]) -> str:
    if (condition(node, "Ready") or {}).get("status") != "True":
        return "NotReady"
    return "SchedulingDisabled" if (node.get("spec") or {}).get("unschedulable") else "Ready"


def pending_state(pod: dict[str, Any]) -> tuple[str, str]:
    """(queue as the watch shows it, the message of the last scheduling failure)."""
    st = pod.get("status") or {}
    scheduled = condition(pod, "PodScheduled") or {}
    failed = scheduled.get("message", "") if scheduled.get("status") == "False" else ""
    if st.get("nominatedNodeName"):
        return "nominated", failed
    if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
        return "unschedulable", failed
    return "waiting", failed


class LiveView:
    def __init__(self) -> None:
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.nodes: dict[str, tuple[str, str]] = {}  # name -> (pool, state)
        self.recent: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._created: dict[str, float] = {}  # uid -> emulated time first seen (pods created while watched)
        self._bound: set[str] = set()
        self._started: set[str] = set()
        self._binds = self._starts = 0
        self._latencies: list[float] = []

    def load(self, pods: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> None:
        """The state at the start (or after a relist); nothing of it counts as a change."""
        self.pods.clear()
        self.nodes.clear()
        for p in pods:
            self._pod("ADDED", p, None)
        for n in nodes:
            self.node("ADDED", n)
        self._binds = self._starts = 0
        self._latencies.clear()

    def node(self, etype: str, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        if etype == "DELETED":
            self.nodes.pop(name, None)
        else:
            self.nodes[name] = (node_pool(node), node_state(node))

    def pod(self, etype: str, pod: dict[str, Any], now: float) -> None:
        self._pod(etype, pod, now)

    def _pod(self, etype: str, pod: dict[str, Any], now: float | None) -> None:
        m = pod["metadata"]
        key, uid = (m.get("namespace", ""), m["name"]), m.get("uid", "")
        self.recent.pop(key, None)
        if etype == "DELETED":
            self.pods.pop(key, None)
            self._created.pop(uid, None)
            return
        phase, node = phase_of(pod) or "Pending", node_name_of(pod)
        queue, failed = pending_state(pod) if phase == "Pending" and not node else ("", "")
        self.pods[key] = {
            "namespace": key[0],
            "name": key[1],
            "phase": "Terminating" if m.get("deletionTimestamp") else phase,
            "node": node,
            "queue": queue,
            "failed": failed,
        }
        self.recent[key] = None
        while len(self.recent) > RECENT:
            self.recent.popitem(last=False)
        if now is None:  # already there when the page opened: no creation time to measure from
            if node:
                self._bound.add(uid)
            if phase == "Running":
                self._started.add(uid)
            return
        self._created.setdefault(uid, now)
        if node and uid not in self._bound:
            self._bound.add(uid)
            self._binds += 1
        if phase == "Running" and uid not in self._started:
            self._started.add(uid)
            self._starts += 1
            if uid in self._created:
                self._latencies.append(now - self._created[uid])

    def summary(self) -> dict[str, Any]:
        phases: dict[str, int] = {}
        queues = {"waiting": 0, "unschedulable": 0, "nominated": 0}
        pending: list[dict[str, Any]] = []
        for p in self.pods.values():
            phases[p["phase"]] = phases.get(p["phase"], 0) + 1
            if p["queue"]:
                queues[p["queue"]] += 1
                if len(pending) < PENDING_SHOWN:
                    pending.append(p)
        pools: dict[str, dict[str, int]] = {}
        for pool, state in self.nodes.values():
            counts = pools.setdefault(pool, {"Ready": 0, "NotReady": 0, "SchedulingDisabled": 0})
            counts[state] += 1
        return {
            "phases": phases,
            "queues": queues,
            "pending": pending,
            "pendingTotal": sum(queues.values()),
            "pools": pools,
            "nodes": len(self.nodes),
            "recent": [self.pods[k] for k in reversed(self.recent) if k in self.pods],
        }

    def point(self, now: float, seconds: float) -> dict[str, Any]:
        """One point of the live charts for the last ``seconds`` of real time; resets it."""
        lat = sorted(self._latencies)

        def pct(p: int) -> float | None:
            return round(lat[max(0, -(-p * len(lat) // 100) - 1)], 3) if lat else None

        out = {
            "t": rfc3339(now)[:-1] + f".{int((now % 1) * 1000):03d}Z",
            "bindsPerSecond": round(self._binds / seconds, 2) if seconds > 0 else 0.0,
            "startsPerSecond": round(self._starts / seconds, 2) if seconds > 0 else 0.0,
            "p50": pct(50),
            "p90": pct(90),
            "p99": pct(99),
        }
        self._binds = self._starts = 0
        self._latencies.clear()
        return out


def sse(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def stream(h: Handler, extra: Any = None) -> AsyncIterator[bytes]:
    """The events of one page until it goes away. ``extra()``: more of the summary (the
    scheduler's counters, YuniKorn's queues), read at each update."""
    view = LiveView()
    rvs = await _relist(h, view)
    last = time.monotonic()
    yield sse("state", {**view.summary(), **(extra() if extra else {}), "point": view.point(h.backend.now(), 0.0)})
    while True:
        changed = False
        for kind in ("Pod", "Node"):
            chunk = await h.backend.watch(kind, rvs[kind], None)
            if isinstance(chunk, Expired):  # too far behind: start again from a list, as an informer
                rvs = await _relist(h, view)
                changed = True
                break
            now = h.backend.now()
            for etype, data in chunk.events:
                obj = _shared(data).obj
                if kind == "Pod":
                    view.pod(etype, obj, now)
                else:
                    view.node(etype, obj)
            changed = changed or bool(chunk.events)
            rvs[kind] = chunk.resume
        elapsed = time.monotonic() - last
        if (changed and elapsed >= EVERY) or elapsed >= QUIET:
            last = time.monotonic()
            summary = view.summary()
            yield sse("state", {**summary, **(extra() if extra else {}), "point": view.point(h.backend.now(), elapsed)})
        elif changed:  # busy: gather what comes until the next update is due
            await asyncio.sleep(EVERY - elapsed)
        else:
            await h.backend.changed(max(rvs.values()), min(EVERY, QUIET - elapsed))


async def _relist(h: Handler, view: LiveView) -> dict[str, int]:
    pod_rv, pods = await h.backend.list("Pod", None)
    node_rv, nodes = await h.backend.list("Node", None)
    view.load(pods, nodes)
    return {"Pod": pod_rv, "Node": node_rv}
