"""A node's configuration and the Node object its kubelet registers.

Owns ``NodeConfig`` (built by the scenario layer, one per emulated node), the allocatable
rule (capacity - reserved - the memory.available hard eviction threshold, as upstream's
node-allocatable), the fake addresses derived from a node's index, and the shape of the
Node object and its status. Called by ``Kubelet`` at registration and on status changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from ..api.quantity import format_resource, parse, resource_int
from ..api.resources import MEMORY, resource_list
from ..clock import rfc3339
from .podips import node_pod_cidr

KUBELET_VERSION = "v1.31.0-kubemu"
INSTANCE_TYPE = "kubemu"
DEFAULT_EVICTION_HARD = {"memory.available": "100Mi"}
# What a node pool's (and an adopted Node's) capacity gets when it does not say.
DEFAULT_CAPACITY = {"pods": "110", "ephemeral-storage": "100Gi"}

# Node condition type -> (reason when healthy, message when healthy), upstream wording.
_PRESSURE = {
    "MemoryPressure": ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
}
# ... and (reason, message) when the eviction manager reports the pressure.
_UNDER_PRESSURE = {
    "MemoryPressure": ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    "DiskPressure": ("KubeletHasDiskPressure", "kubelet has disk pressure"),
    "PIDPressure": ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
}


def _threshold(raw: str, capacity: int) -> int:
    """A hard threshold in bytes: a quantity, or a percentage of capacity ("10%")."""
    raw = str(raw).strip()
    if raw.endswith("%"):
        pct = Fraction(raw[:-1])
        if pct in (0, 100):  # upstream ignores "0%" and "100%" thresholds
            return 0
        return math.floor(pct * capacity / 100)
    return math.ceil(parse(raw))


@dataclass
class NodeConfig:
    name: str
    capacity: dict[str, str]  # the caller has applied the pods/ephemeral-storage defaults
    reserved: dict[str, str] = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    taints: list[dict] = field(default_factory=list)
    kubelet: dict = field(default_factory=dict)

    def eviction_hard(self) -> dict[str, str]:
        # A partial evictionHard keeps the memory default: kubemu's choice (see docs/architecture.md §9).
        return {**DEFAULT_EVICTION_HARD, **(self.kubelet.get("evictionHard") or {})}

    def capacity_ints(self) -> dict[str, int]:
        return resource_list(self.capacity)

    def allocatable(self) -> dict[str, int]:
        cap = self.capacity_ints()
        out = dict(cap)
        for name, raw in (self.reserved or {}).items():
            out[name] = out.get(name, 0) - resource_int(name, raw)
        if MEMORY in cap:
            hard = self.eviction_hard().get("memory.available")
            if hard is not None:
                out[MEMORY] -= _threshold(hard, cap[MEMORY])
        return {name: max(0, amount) for name, amount in out.items()}


def internal_ip(index: int) -> str:
    """Node addresses come from 10.0.0.0/9: index 0 is 10.0.0.1."""
    n = index + 1
    return f"10.{(n >> 16) & 0x7F}.{(n >> 8) & 0xFF}.{n & 0xFF}"


def node_labels(config: NodeConfig) -> dict:
    return {
        **(config.labels or {}),
        "kubernetes.io/hostname": config.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": INSTANCE_TYPE,
    }


def _condition(ctype: str, status: str, reason: str, message: str, ts: str) -> dict:
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "lastHeartbeatTime": ts,
        "lastTransitionTime": ts,
    }


def healthy_conditions(now: float, since: float | None = None) -> list[dict]:
    """Every condition healthy, heartbeat ``now``, each unchanged since ``since`` (default ``now``)."""
    return node_conditions(now, None, since)


def node_conditions(
    now: float, pressure: dict[str, tuple[bool, float]] | None = None, since: float | None = None
) -> list[dict]:
    """The node's conditions as the kubelet posts them at ``now`` (every lastHeartbeatTime).
    ``pressure`` maps a pressure condition to (True?, since when); a condition it does not
    name, and Ready, has been as it is since ``since`` (the kubelet's registration)."""
    ts = rfc3339(now)
    first = rfc3339(now if since is None else since)
    conds = []
    for ctype, healthy in _PRESSURE.items():
        on, changed = (pressure or {}).get(ctype, (False, None))
        reason, message = _UNDER_PRESSURE[ctype] if on else healthy
        cond = _condition(ctype, "True" if on else "False", reason, message, ts)
        cond["lastTransitionTime"] = first if changed is None else rfc3339(changed)
        conds.append(cond)
    ready = _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", ts)
    ready["lastTransitionTime"] = first
    conds.append(ready)
    return conds


def _formatted(values: dict[str, int]) -> dict[str, str]:
    return {name: format_resource(name, amount) for name, amount in values.items()}


def node_status(
    config: NodeConfig,
    index: int,
    now: float,
    allocatable: dict[str, int],
    capacity: dict[str, int] | None = None,
    conditions: list[dict] | None = None,
) -> dict:
    """``capacity`` defaults to the configured one (the kubelet passes the device
    manager's counts for extended resources); ``conditions`` to all healthy."""
    return {
        "capacity": _formatted(config.capacity_ints() if capacity is None else capacity),
        "allocatable": _formatted(allocatable),
        "conditions": healthy_conditions(now) if conditions is None else conditions,
        "addresses": [
            {"type": "InternalIP", "address": internal_ip(index)},
            {"type": "Hostname", "address": config.name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": "amd64",
            "containerRuntimeVersion": "kubemu://0",
            "osImage": "kubemu",
            "kernelVersion": "",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
        },
    }


def node_object(
    config: NodeConfig, index: int, now: float, allocatable: dict[str, int], capacity: dict[str, int] | None = None
) -> dict:
    cidr = node_pod_cidr(index)  # the node IPAM's block (podips.py)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": config.name, "labels": node_labels(config)},
        "spec": {"taints": [dict(t) for t in config.taints or ()], "podCIDR": cidr, "podCIDRs": [cidr]},
        "status": node_status(config, index, now, allocatable, capacity),
    }
