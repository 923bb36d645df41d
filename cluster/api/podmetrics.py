"""Emulated resource usage as metrics-server reports it: PodMetrics and NodeMetrics.

Owns how a pod's declared usage (``kubemu.io/cpu-usage`` / ``memory-usage``, see
``usage.py``) becomes the figures ``kubectl top`` and the HorizontalPodAutoscaler read: per
running container, the profile's value at ``now`` minus the container's ``startedAt``
(0 for a container that declares nothing). metrics-server averages real usage over a
window (typically 15-30 s); kubemu reports the instantaneous emulated value. Called by the
HTTP front end (``cluster/frontend/metricsapi.py``); pure.
"""

from __future__ import annotations

from typing import Any

from ..clock import parse_timestamp
from .annotations import AnnotationError
from .quantity import format_resource
from .usage import container_usage

WINDOW = "30s"


def _started(status: dict[str, Any], name: str) -> float | None:
    for cs in status.get("containerStatuses") or ():
        if cs.get("name") == name:
            running = (cs.get("state") or {}).get("running") or {}
            stamp = running.get("startedAt")
            return parse_timestamp(stamp) if stamp else None
    return None


def container_usage_now(pod: dict[str, Any], now: float) -> dict[str, tuple[int, int]] | None:
    """container -> (cpu millicores, memory bytes) at ``now``; None unless the pod runs."""
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    try:
        declared = container_usage(pod)
    except AnnotationError:
        declared = {}
    out: dict[str, tuple[int, int]] = {}
    for c in (pod.get("spec") or {}).get("containers") or ():
        name = c.get("name", "")
        started = _started(status, name)
        if started is None:
            continue
        usage = declared.get(name)
        since = now - started
        cpu = usage.cpu.at(since) if usage is not None and usage.cpu is not None else 0
        mem = usage.memory.at(since) if usage is not None and usage.memory is not None else 0
        out[name] = (cpu, mem)
    return out


def _quantities(cpu_milli: int, mem_bytes: int) -> dict[str, str]:
    return {"cpu": format_resource("cpu", cpu_milli), "memory": format_resource("memory", mem_bytes)}


def pod_metrics(pod: dict[str, Any], now: float, stamp: str) -> dict[str, Any] | None:
    per = container_usage_now(pod, now)
    if per is None:
        return None
    m = pod.get("metadata") or {}
    return {
        "kind": "PodMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {"name": m.get("name"), "namespace": m.get("namespace"), "labels": m.get("labels") or {}},
        "timestamp": stamp,
        "window": WINDOW,
        "containers": [{"name": n, "usage": _quantities(*u)} for n, u in per.items()],
    }


def node_metrics(node: dict[str, Any], pods: list[dict[str, Any]], now: float, stamp: str) -> dict[str, Any]:
    cpu = mem = 0
    for pod in pods:
        for c, m in (container_usage_now(pod, now) or {}).values():
            cpu, mem = cpu + c, mem + m
    meta = node.get("metadata") or {}
    return {
        "kind": "NodeMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {"name": meta.get("name"), "labels": meta.get("labels") or {}},
        "timestamp": stamp,
        "window": WINDOW,
        "usage": _quantities(cpu, mem),
    }
