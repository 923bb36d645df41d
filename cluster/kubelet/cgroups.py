"""The cgroup values a real kubelet would write for a pod (upstream's pkg/kubelet/cm).

Owns the kernel constants, the integer cpu conversions (Go int64 truncating division), the
pod-level cgroup (upstream ResourceConfigForPod with enforceCPULimits on, the default
100 ms CFS period and no memory QoS), the per-container values the container runtime is
given (upstream calculateLinuxResources) and the node-level QoS cgroups (``kubepods`` and
its ``burstable`` and ``besteffort`` tiers). The kubelet computes a pod's cgroups at
admission and keeps them, and the node's tiers, for the report; nothing is written
anywhere because no container runs.
"""

from __future__ import annotations

from ..api.qos import BEST_EFFORT, GUARANTEED, get_pod_qos
from ..api.quantity import resource_int
from ..api.resources import pod_requests

MIN_SHARES = 2  # kernel minimum (kernel/sched/sched.h)
MAX_SHARES = 262144
SHARES_PER_CPU = 1024
MILLI_CPU_TO_CPU = 1000
QUOTA_PERIOD = 100000  # µs: the default cfs_period_us
MIN_QUOTA_PERIOD = 1000  # µs: the smallest quota the kernel accepts
MIN_MILLI_CPU_LIMIT = MIN_QUOTA_PERIOD * MILLI_CPU_TO_CPU // QUOTA_PERIOD

ROOT = "kubepods"
BURSTABLE_PARENT = ROOT + "/burstable"
BEST_EFFORT_PARENT = ROOT + "/besteffort"


def milli_cpu_to_shares(milli_cpu: int) -> int:
    if milli_cpu == 0:
        return MIN_SHARES  # the kernel's default for "no request"
    shares = milli_cpu * SHARES_PER_CPU // MILLI_CPU_TO_CPU
    return max(MIN_SHARES, min(MAX_SHARES, shares))


def milli_cpu_to_quota(milli_cpu: int, period: int = QUOTA_PERIOD) -> int:
    """cfs_quota_us for a cpu limit; 0 means no quota (no limit declared)."""
    if milli_cpu == 0:
        return 0
    return max(MIN_QUOTA_PERIOD, milli_cpu * period // MILLI_CPU_TO_CPU)


def shares_to_milli_cpu(shares: int) -> int:
    if shares < MIN_SHARES:
        return 0
    return -(-shares * MILLI_CPU_TO_CPU // SHARES_PER_CPU)  # ceiling division


def quota_to_milli_cpu(quota: int, period: int = QUOTA_PERIOD) -> int:
    return 0 if quota == -1 else quota * MILLI_CPU_TO_CPU // period


def _limits_declared(pod: dict, name: str) -> bool:
    """True when every container (regular and init) sets a non-zero limit for ``name``."""
    spec = pod.get("spec") or {}
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        raw = ((c.get("resources") or {}).get("limits") or {}).get(name)
        if raw is None or resource_int(name, raw) == 0:
            return False
    return True


def parent_of(qos: str, uid: str) -> str:
    if qos == GUARANTEED:
        return f"{ROOT}/pod{uid}"  # Guaranteed pods sit directly under the allocatable root
    if qos == BEST_EFFORT:
        return f"{BEST_EFFORT_PARENT}/pod{uid}"
    return f"{BURSTABLE_PARENT}/pod{uid}"


def pod_cgroup(pod: dict, uid: str, qos: str | None = None) -> dict:
    """Pod-level cgroup: ``parent``, ``cpuShares``, ``cpuQuota``, ``cpuPeriod``, ``memoryLimit``.

    Values a kubelet would leave unset are None. ``qos`` saves recomputing a known class.
    """
    qos = qos or get_pod_qos(pod)
    out = {
        "parent": parent_of(qos, uid),
        "cpuShares": MIN_SHARES,
        "cpuQuota": None,
        "cpuPeriod": None,
        "memoryLimit": None,
    }
    if qos == BEST_EFFORT:
        return out
    requests = pod_requests(pod)
    limits = pod_requests(pod, field="limits")
    out["cpuShares"] = milli_cpu_to_shares(requests.get("cpu", 0))
    quota = milli_cpu_to_quota(limits.get("cpu", 0))
    guaranteed = qos == GUARANTEED
    if guaranteed or _limits_declared(pod, "cpu"):
        out["cpuQuota"], out["cpuPeriod"] = quota, QUOTA_PERIOD
    if guaranteed or _limits_declared(pod, "memory"):
        out["memoryLimit"] = limits.get("memory", 0)
    return out


def container_cgroup(container: dict) -> dict:
    """One container's values: ``cpuShares``, ``cpuQuota`` (None: no limit, the runtime
    writes no quota), ``cpuPeriod`` (always set, as upstream) and ``memoryLimit`` (None: none)."""
    res = container.get("resources") or {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    cpu_req = resource_int("cpu", req["cpu"]) if "cpu" in req else None
    cpu_lim = resource_int("cpu", lim["cpu"]) if "cpu" in lim else 0
    mem_lim = resource_int("memory", lim["memory"]) if "memory" in lim else 0
    # A limit without a request means request = limit (the apiserver defaults it; the
    # kubelet repeats the rule for old objects). An explicit request of 0 stays 0.
    shares = milli_cpu_to_shares(cpu_lim if cpu_req is None else cpu_req)
    quota = milli_cpu_to_quota(cpu_lim)
    return {"cpuShares": shares, "cpuQuota": quota or None, "cpuPeriod": QUOTA_PERIOD, "memoryLimit": mem_lim or None}


def pod_cgroups(pod: dict, uid: str, qos: str | None = None) -> dict:
    """The pod cgroup with its long-running containers' values under ``containers``."""
    out = pod_cgroup(pod, uid, qos)
    spec = pod.get("spec") or {}
    running = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    running += list(spec.get("containers") or ())
    out["containers"] = {c.get("name", ""): container_cgroup(c) for c in running}
    return out


def without_parent(cgroups: dict) -> dict:
    """``pod_cgroups`` less the ``parent`` path: the values, which pods of one template
    share (the kubelet keeps one copy of them; ``with_parent`` gives the whole back)."""
    return {k: v for k, v in cgroups.items() if k != "parent"}


def with_parent(values: dict, qos: str, uid: str) -> dict:
    """``pod_cgroups`` again from ``without_parent``'s values, the pod's QoS class and uid."""
    return {"parent": parent_of(qos, uid), **values}


def qos_cgroups(allocatable_cpu: int, allocatable_memory: int | None, burstable_cpu_requests: int) -> dict:
    """The node's QoS-level cgroups: the node-allocatable root and its two tiers.

    ``allocatable_*`` are capacity minus reserved (upstream sizes ``kubepods`` without the
    hard eviction threshold); ``burstable_cpu_requests`` sums the cpu requests (millicores)
    of the Burstable pods holding resources. Guaranteed pods sit directly under the root.
    """
    return {
        ROOT: {"cpuShares": milli_cpu_to_shares(allocatable_cpu), "memoryLimit": allocatable_memory},
        BURSTABLE_PARENT: {"cpuShares": milli_cpu_to_shares(burstable_cpu_requests)},
        BEST_EFFORT_PARENT: {"cpuShares": MIN_SHARES},
    }
