"""Resource vectors of pods and nodes as ``{name: int}`` (cpu in millicores).

Owns the effective-request rule of upstream ``PodRequests`` (sidecars, the init-container
maximum, pod overhead) and the scheduler's "non-zero" request variant. Called by the
scheduler cache, the kubelet's admission and the invariant checker, so all three agree on
what a pod asks for. Inputs are API-shaped dicts that have passed validation.
"""

from __future__ import annotations

from typing import Any

from .quantity import resource_int

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL = "ephemeral-storage"

# Scheduler scoring treats a container without a cpu/memory request as asking for these.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}

Resources = dict[str, int]


def resource_list(values: dict[str, Any] | None) -> Resources:
    """Parse a ``requests``/``limits``/``capacity`` map into integers."""
    if not values:
        return {}
    return {name: resource_int(name, q) for name, q in values.items()}


def _add(into: Resources, other: Resources) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) + amount


def _max(into: Resources, other: Resources) -> None:
    for name, amount in other.items():
        if amount > into.get(name, 0):
            into[name] = amount


def _container(c: dict[str, Any], field: str, non_missing: Resources | None) -> Resources:
    out = resource_list((c.get("resources") or {}).get(field))
    if non_missing:
        for name, default in non_missing.items():
            if name not in out:
                out[name] = default
    return out


def pod_requests(pod: dict[str, Any], non_missing: Resources | None = None, field: str = "requests") -> Resources:
    """Effective pod requests (or limits with ``field="limits"``) per upstream PodRequests.

    ``non_missing`` gives per-container defaults for absent keys (the scheduler's
    non-zero requests); an explicit ``0`` stays 0.
    """
    spec = pod.get("spec") or {}
    reqs: Resources = {}
    for c in spec.get("containers") or ():
        _add(reqs, _container(c, field, non_missing))
    restartable: Resources = {}
    init_max: Resources = {}
    for ic in spec.get("initContainers") or ():
        r = _container(ic, field, non_missing)
        if ic.get("restartPolicy") == "Always":  # a sidecar runs beside the app containers
            _add(reqs, r)
            _add(restartable, r)
            eff = dict(restartable)
        else:
            eff = dict(r)
            _add(eff, restartable)
        _max(init_max, eff)
    _max(reqs, init_max)
    overhead = resource_list(spec.get("overhead"))
    if field == "limits":
        overhead = {k: v for k, v in overhead.items() if reqs.get(k)}
    _add(reqs, overhead)
    return reqs


def pod_nonzero_requests(pod: dict[str, Any]) -> Resources:
    """Requests as the scheduler's scoring sees them (missing cpu/memory defaulted)."""
    return pod_requests(pod, NON_ZERO_DEFAULTS)


def node_allocatable(node: dict[str, Any]) -> Resources:
    status = node.get("status") or {}
    return resource_list(status.get("allocatable") or status.get("capacity"))


def node_capacity(node: dict[str, Any]) -> Resources:
    return resource_list((node.get("status") or {}).get("capacity"))


def is_extended(name: str) -> bool:
    """Extended resources: a domain-qualified name outside kubernetes.io (e.g. nvidia.com/gpu)."""
    if "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io") or name.startswith("requests."))
