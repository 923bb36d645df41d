"""Pod QoS class (upstream ComputePodQOS, the 1.30-1.33 aggregate rule).

Owns the mapping pod -> Guaranteed / Burstable / BestEffort. The kubelet writes it to
status.qosClass, the cgroup module picks the pod's parent cgroup from it, and eviction
ranking (later) reads it. Pod-level resources (the PodLevelResources gate, alpha in 1.32
and off by default) are not modelled: only container and init-container resources count.
"""

from __future__ import annotations

from typing import Any

from .quantity import resource_int

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

# Extended resources, hugepages and ephemeral-storage never influence the QoS class.
_QOS_RESOURCES = ("cpu", "memory")


def _add_positive(into: dict[str, int], values: dict[str, Any] | None) -> int:
    """Sum the positive cpu/memory amounts into ``into``; return how many were > 0."""
    positive = 0
    if not values:
        return positive
    for name in _QOS_RESOURCES:
        raw = values.get(name)
        if raw is None:
            continue
        amount = resource_int(name, raw)
        if amount > 0:  # an explicit "0" counts as not set
            into[name] = into.get(name, 0) + amount
            positive += 1
    return positive


def compute_pod_qos(pod: dict[str, Any]) -> str:
    """The QoS class from the pod's spec alone (ignores any persisted status.qosClass)."""
    spec = pod.get("spec") or {}
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or ():
            res = c.get("resources") or {}
            _add_positive(requests, res.get("requests"))
            if _add_positive(limits, res.get("limits")) != len(_QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and requests == limits:
        return GUARANTEED
    return BURSTABLE


def pod_qos_class(pod: dict[str, Any]) -> str:
    """ComputePodQOS: what the kubelet writes to status.qosClass for a new pod."""
    return compute_pod_qos(pod)


def get_pod_qos(pod: dict[str, Any]) -> str:
    """Upstream GetPodQOS: a persisted status.qosClass wins over recomputation."""
    return (pod.get("status") or {}).get("qosClass") or compute_pod_qos(pod)
