"""Emulated resource usage as metrics-server reports it: PodMetrics and NodeMetrics.

Owns the one rule for what a pod is measured to use now, which ``kubectl top`` (through
the resource metrics API, ``cluster/frontend/metricsapi.py``) and the
HorizontalPodAutoscaler (``cluster/controllers/hpametrics.py``) both read, so the two
always show the same figures: a Running pod not being deleted is measured per running
long-running container (sidecars, then regular containers), each at its declared usage
(``kubemu.io/cpu-usage`` / ``memory-usage``, see ``usage.py``) read at ``now`` minus the
container's ``startedAt``, and 0 for a container that declares nothing (an idle process
still reports a figure, as metrics-server would); a Running pod without container
statuses (a hand-made one) is measured from ``status.startTime``. A pod with no running
container has no metrics. metrics-server averages real usage over a window (typically
15-30 s); kubemu reports the instantaneous emulated value. Pure.
"""

from __future__ import annotations

from typing import Any

from ..clock import parse_timestamp
from .annotations import AnnotationError
from .quantity import format_resource
from .usage import container_usage

WINDOW = "30s"
CPU, MEMORY = "cpu", "memory"


def _running_starts(status: dict[str, Any]) -> tuple[dict[str, float], set[str]]:
    """(container -> when its current run started, for the running ones; every container
    the status lists)."""
    starts: dict[str, float] = {}
    listed: set[str] = set()
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        name = cs.get("name", "")
        listed.add(name)
        stamp = ((cs.get("state") or {}).get("running") or {}).get("startedAt")
        started = parse_timestamp(stamp) if stamp else None
        if started is not None:
            starts[name] = started
    return starts, listed


def container_usage_now(pod: dict[str, Any], now: float) -> dict[str, tuple[int, int]] | None:
    """container -> (cpu millicores, memory bytes) at ``now``, for each running container;
    None when the pod has no metrics (not Running, being deleted, or nothing running)."""
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    try:
        declared = container_usage(pod)
    except AnnotationError:
        return None  # refused at create; a pod stored before that has no metrics
    starts, listed = _running_starts(status)
    fallback = parse_timestamp(status["startTime"]) if status.get("startTime") else None
    out: dict[str, tuple[int, int]] = {}
    for name, usage in declared.items():
        started = starts.get(name, fallback if name not in listed else None)
        if started is None:
            continue
        since = now - started
        cpu = usage.cpu.at(since) if usage is not None and usage.cpu is not None else 0
        mem = usage.memory.at(since) if usage is not None and usage.memory is not None else 0
        out[name] = (cpu, mem)
    return out or None


def pod_usage_now(pod: dict[str, Any], resource: str, now: float) -> int | None:
    """The pod's usage of ``resource`` at ``now`` (cpu in millicores, memory in bytes),
    summed over its containers as ``container_usage_now`` measures them; None when the pod
    has no metrics or ``resource`` is neither cpu nor memory."""
    per = container_usage_now(pod, now)
    if per is None or resource not in (CPU, MEMORY):
        return None
    i = 0 if resource == CPU else 1
    return sum(u[i] for u in per.values())


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
