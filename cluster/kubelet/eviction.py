"""Node-pressure eviction: the kubelet's eviction manager (upstream pkg/kubelet/eviction).

Owns, per node, the eviction signals observed from emulated usage, which thresholds are
met, the pressure node conditions, which pod to evict and the eviction's message, and the
admit handler that refuses pods while the node is under pressure. The ``Kubelet`` builds
one ``EvictionManager`` from ``parse_eviction_config(NodeConfig.kubelet)``, calls
``synchronize`` every ``EVICTION_MONITORING_PERIOD`` emulated seconds with fresh
``NodeStats`` and the ``PodStats`` of its active pods, carries out the returned eviction
(phase Failed, reason Evicted, the message, the grace period) and publishes the returned
conditions; it calls ``admit`` for every new pod. The node lifecycle controller turns the
conditions into the ``CONDITION_TAINTS`` NoSchedule taints. Nothing here keeps a timer.

Pressure condition lifecycle (per condition; ``T`` = pressure transition period, 5m default;
"seen" = some threshold of the condition's signals met this sync, grace period or not):

| state   | at sync time ``now``                      | next    | ``SyncResult.conditions`` |
|---------|-------------------------------------------|---------|---------------------------|
| False   | not seen                                  | False   | absent |
| False   | seen                                      | True    | present; last_seen = now |
| True    | seen                                      | True    | present; last_seen = now |
| True    | not seen, ``now - last_seen < T``         | True    | present (hysteresis) |
| True    | not seen, ``now - last_seen >= T``        | False   | absent |

As upstream, ``T = 0`` means a condition is never reported (``now - now < 0`` is false).

Departures from upstream, all because nothing runs on an emulated node:
- no node-level reclaim: there are no dead containers or unused images to collect, so a
  disk signal goes straight to ranking pods;
- no local-storage-limit evictions (emptyDir sizeLimit, ephemeral-storage limits), no
  memcg threshold notifier, no stale-stats filter: every ``NodeStats`` is fresh;
- with no dedicated imagefs (``NodeStats.imagefs_capacity is None``) the imagefs signals
  observe nodefs, and a pod's disk usage is the single figure in its ``PodStats``;
- upstream sorts pods and thresholds with unstable sorts and iterates maps; kubemu breaks
  every tie by signal order (hard before soft), then pod namespace, name and uid.
Grace period of an eviction: hard threshold 1 s (``IMMEDIATE_EVICTION_GRACE_PERIOD``);
soft threshold ``min(evictionMaxPodGracePeriod, pod terminationGracePeriodSeconds)``, the
newest upstream rule (the pod's value is ignored when unknown).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..api.qos import BEST_EFFORT
from ..api.quantity import to_units
from .evictionconfig import (
    ALLOCATABLE_MEMORY_AVAILABLE,
    BINARY_SI,
    DECIMAL_SI,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    MEMORY_AVAILABLE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    PID_AVAILABLE,
    SIGNALS,
    EvictionConfig,
    Threshold,
    declared_string,
    quantity_string,
)

EVICTION_MONITORING_PERIOD = 10.0
POD_CLEANUP_TIMEOUT = 30.0  # upstream waits up to this long for an evicted pod before the next sync
IMMEDIATE_EVICTION_GRACE_PERIOD = 1
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
REASON = "Evicted"

MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE = "MemoryPressure", "DiskPressure", "PIDPressure"
CONDITIONS = (MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE)  # kubemu's reporting order
CONDITION_TAINTS = {
    MEMORY_PRESSURE: "node.kubernetes.io/memory-pressure",
    DISK_PRESSURE: "node.kubernetes.io/disk-pressure",
    PID_PRESSURE: "node.kubernetes.io/pid-pressure",
}
TAINT_EFFECT = "NoSchedule"

MEMORY, EPHEMERAL_STORAGE, INODES, PIDS = "memory", "ephemeral-storage", "inodes", "pids"
SIGNAL_CONDITION = {
    MEMORY_AVAILABLE: MEMORY_PRESSURE,
    ALLOCATABLE_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    NODEFS_AVAILABLE: DISK_PRESSURE,
    NODEFS_INODES_FREE: DISK_PRESSURE,
    IMAGEFS_AVAILABLE: DISK_PRESSURE,
    IMAGEFS_INODES_FREE: DISK_PRESSURE,
    PID_AVAILABLE: PID_PRESSURE,
}
SIGNAL_RESOURCE = {
    MEMORY_AVAILABLE: MEMORY,
    ALLOCATABLE_MEMORY_AVAILABLE: MEMORY,
    NODEFS_AVAILABLE: EPHEMERAL_STORAGE,
    IMAGEFS_AVAILABLE: EPHEMERAL_STORAGE,
    NODEFS_INODES_FREE: INODES,
    IMAGEFS_INODES_FREE: INODES,
    PID_AVAILABLE: PIDS,
}
# Inode and pid counts print as decimal quantities, bytes as binary ones.
_AVAILABLE_FORMAT = {INODES: DECIMAL_SI, PIDS: DECIMAL_SI}


# ---- inputs ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeStats:
    """The node's summary at one instant. A ``None`` capacity means "not measured"."""

    memory_capacity: int | None = None
    memory_working_set: int = 0
    allocatable_memory: int | None = None  # the pods cgroup limit (capacity - reserved)
    pods_working_set: int = 0
    nodefs_capacity: int | None = None
    nodefs_available: int = 0
    nodefs_inodes: int | None = None
    nodefs_inodes_free: int = 0
    imagefs_capacity: int | None = None  # None: no dedicated imagefs, observe nodefs
    imagefs_available: int = 0
    imagefs_inodes: int | None = None
    imagefs_inodes_free: int = 0
    pid_max: int | None = None
    pid_running: int = 0


@dataclass(frozen=True, slots=True)
class ContainerStats:
    """One container, for the eviction message. Requests keep their declared spelling."""

    name: str
    memory_usage: int = 0  # working set bytes
    memory_request: str | int | None = None
    disk_usage: int = 0  # rootfs + logs bytes
    disk_request: str | int | None = None


@dataclass(frozen=True, slots=True)
class PodStats:
    """An active pod (not terminal, not being terminated) and its usage."""

    uid: str
    namespace: str
    name: str
    priority: int = 0
    qos: str = BEST_EFFORT  # informational: ranking uses usage against requests, as upstream
    static: bool = False  # static or mirror pod: critical whatever its priority
    grace_period: int | None = None  # spec.terminationGracePeriodSeconds
    memory_request: int = 0  # effective pod requests
    disk_request: int = 0
    memory_usage: int = 0
    disk_usage: int = 0
    inodes_used: int = 0
    processes: int = 0
    containers: tuple[ContainerStats, ...] = ()
    measured: bool = True  # False: the pod has no stats yet (ranked first, as upstream)

    @property
    def critical(self) -> bool:
        """Upstream IsCriticalPod: never evicted, always admitted."""
        return self.static or self.priority >= SYSTEM_CRITICAL_PRIORITY


# ---- outputs --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Observation:
    available: int
    capacity: int


@dataclass(frozen=True, slots=True)
class Eviction:
    uid: str
    namespace: str
    name: str
    grace_period: int
    message: str
    resource: str  # the starved resource: memory, ephemeral-storage, inodes or pids
    threshold: Threshold
    offending_containers: tuple[str, ...] = ()
    offending_usage: tuple[str, ...] = ()
    reason: str = REASON

    def annotations(self) -> dict[str, str]:
        """The annotations upstream puts on the eviction event."""
        return {
            "offending_containers": ",".join(self.offending_containers),
            "offending_containers_usage": ",".join(self.offending_usage),
            "starved_resource": self.resource,
        }


@dataclass(frozen=True, slots=True)
class SyncResult:
    conditions: tuple[str, ...]  # pressure conditions now True, in ``CONDITIONS`` order
    thresholds_met: tuple[Threshold, ...]  # met and past their grace period
    thresholds_pending: tuple[Threshold, ...]  # met, soft grace period still running
    observations: dict[str, Observation] = field(default_factory=dict)
    eviction: Eviction | None = None


# ---- observations and thresholds ------------------------------------------------------------


def observe(stats: NodeStats) -> dict[str, Observation]:
    """Upstream makeSignalObservations over kubemu's node summary."""
    out: dict[str, Observation] = {}
    if stats.memory_capacity is not None:
        # The summary's availableBytes is floored at zero, so capacity = available + working set.
        avail = max(0, stats.memory_capacity - stats.memory_working_set)
        out[MEMORY_AVAILABLE] = Observation(avail, avail + stats.memory_working_set)
    if stats.allocatable_memory is not None:
        avail = max(0, stats.allocatable_memory - stats.pods_working_set)
        out[ALLOCATABLE_MEMORY_AVAILABLE] = Observation(avail, avail + stats.pods_working_set)
    if stats.nodefs_capacity is not None:
        out[NODEFS_AVAILABLE] = Observation(stats.nodefs_available, stats.nodefs_capacity)
    if stats.nodefs_inodes is not None:
        out[NODEFS_INODES_FREE] = Observation(stats.nodefs_inodes_free, stats.nodefs_inodes)
    if stats.imagefs_capacity is not None:
        out[IMAGEFS_AVAILABLE] = Observation(stats.imagefs_available, stats.imagefs_capacity)
    elif NODEFS_AVAILABLE in out:
        out[IMAGEFS_AVAILABLE] = out[NODEFS_AVAILABLE]
    if stats.imagefs_inodes is not None:
        out[IMAGEFS_INODES_FREE] = Observation(stats.imagefs_inodes_free, stats.imagefs_inodes)
    elif stats.imagefs_capacity is None and NODEFS_INODES_FREE in out:
        out[IMAGEFS_INODES_FREE] = out[NODEFS_INODES_FREE]
    if stats.pid_max is not None:
        out[PID_AVAILABLE] = Observation(stats.pid_max - stats.pid_running, stats.pid_max)
    return out


def thresholds_met(
    thresholds: Iterable[Threshold], observations: dict[str, Observation], enforce_min_reclaim: bool
) -> list[Threshold]:
    """Thresholds whose amount (plus minimum reclaim if enforced) exceeds what is available."""
    met = []
    for t in thresholds:
        obs = observations.get(t.signal)
        if obs is None:
            continue
        amount = t.value.amount(obs.capacity)
        if enforce_min_reclaim and t.min_reclaim is not None:
            amount += t.min_reclaim.amount(obs.capacity)
        if amount > obs.available:
            met.append(t)
    return met


def _eviction_order(t: Threshold) -> tuple:
    return SIGNALS.index(t.signal), not t.hard, t.grace_period


# ---- ranking (upstream's rankMemoryPressure) -------------------------------------------------


def _tie_break(p: PodStats) -> tuple:
    return p.namespace, p.name, p.uid


def _rank_memory(p: PodStats) -> tuple:
    if not p.measured:
        return (0, 0, p.priority, 0, *_tie_break(p))
    exceeds = p.memory_usage > p.memory_request
    return (1, not exceeds, p.priority, p.memory_request - p.memory_usage, *_tie_break(p))


def _rank_pids(p: PodStats) -> tuple:
    # Priority comes first here: a pod without stats only goes first among equal priorities.
    if not p.measured:
        return (p.priority, 0, 0, *_tie_break(p))
    return (p.priority, 1, -p.processes, *_tie_break(p))


def _rank_disk(p: PodStats, inodes: bool) -> tuple:
    if not p.measured:
        return (0, 0, p.priority, 0, *_tie_break(p))
    usage = p.inodes_used if inodes else p.disk_usage
    # Pods have no inode request, so any inode use "exceeds" it; the excess still subtracts
    # the ephemeral-storage request from the inode count, as upstream's disk() does.
    exceeds = usage > (0 if inodes else p.disk_request)
    return (1, not exceeds, p.priority, p.disk_request - usage, *_tie_break(p))


def rank_pods(signal: str, pods: Iterable[PodStats]) -> list[PodStats]:
    """Pods in the order the eviction manager tries them for a threshold on ``signal``."""
    resource = SIGNAL_RESOURCE[signal]
    if resource == MEMORY:
        key = _rank_memory
    elif resource == PIDS:
        key = _rank_pids
    else:
        key = lambda p: _rank_disk(p, resource == INODES)  # noqa: E731
    return sorted(pods, key=key)


# ---- the eviction message -------------------------------------------------------------------


def _offenders(resource: str, pod: PodStats) -> list[tuple[str, str, str]]:
    """(container, usage, request) for each container using more than it requested."""
    out = []
    for c in pod.containers:
        if resource == MEMORY:
            usage, request = c.memory_usage, c.memory_request
        elif resource == EPHEMERAL_STORAGE:
            usage, request = c.disk_usage, c.disk_request
        else:
            continue  # upstream has no per-container usage for inodes or pids
        if usage > _request_amount(request):
            out.append((c.name, quantity_string(usage), declared_string(request)))
    return out


def _request_amount(request: str | int | None) -> int:
    return 0 if request is None else to_units(request)


def eviction_message(
    resource: str, pod: PodStats, threshold: Threshold, observation: Observation | None
) -> tuple[str, list[tuple[str, str, str]]]:
    """Upstream's message for an evicted pod, and the offending containers it names."""
    message = f"The node was low on resource: {resource}. "
    if observation is not None:
        available = quantity_string(observation.available, _AVAILABLE_FORMAT.get(resource, BINARY_SI))
        message += f"Threshold quantity: {threshold.value.display(observation.capacity)}, available: {available}. "
    offenders = _offenders(resource, pod) if pod.measured else []
    for name, usage, request in offenders:
        message += f"Container {name} was using {usage}, request is {request}, has larger consumption of {resource}. "
    return message, offenders


# ---- the manager ----------------------------------------------------------------------------


class EvictionManager:
    """One node's eviction state between synchronize calls (upstream managerImpl)."""

    __slots__ = ("config", "_met", "_first_observed", "_condition_seen", "_conditions")

    def __init__(self, config: EvictionConfig):
        self.config = config
        self._met: tuple[Threshold, ...] = ()  # met and past grace at the last sync
        self._first_observed: dict[Threshold, float] = {}
        self._condition_seen: dict[str, float] = {}  # condition -> last time a threshold signalled it
        self._conditions: tuple[str, ...] = ()

    @property
    def conditions(self) -> tuple[str, ...]:
        """The pressure conditions the last synchronize reported."""
        return self._conditions

    def lifts_at(self) -> float | None:
        """When the last of the conditions now held would lift if no threshold were met again."""
        period = self.config.pressure_transition_period
        times = [self._condition_seen[c] + period for c in self._conditions]
        return max(times) if times else None

    def synchronize(self, now: float, stats: NodeStats, pods: Iterable[PodStats]) -> SyncResult:
        """One monitoring pass; evicts at most one pod. ``pods`` are the active pods only."""
        observations = observe(stats)
        met = thresholds_met(self.config.thresholds, observations, False)
        # Hysteresis: a threshold acted on last time stays met until its minimum reclaim is freed.
        for t in thresholds_met(self._met, observations, True):
            if t not in met:
                met.append(t)
        met.sort(key=_eviction_order)
        self._first_observed = {t: self._first_observed.get(t, now) for t in met}
        for t in met:
            self._condition_seen[SIGNAL_CONDITION[t.signal]] = now
        period = self.config.pressure_transition_period
        self._conditions = tuple(
            c for c in CONDITIONS if c in self._condition_seen and now - self._condition_seen[c] < period
        )
        ready = tuple(t for t in met if now - self._first_observed[t] >= t.grace_period)
        self._met = ready
        eviction = self._evict(ready, observations, pods) if ready else None
        return SyncResult(self._conditions, ready, tuple(t for t in met if t not in ready), observations, eviction)

    def _evict(
        self, ready: tuple[Threshold, ...], observations: dict[str, Observation], pods: Iterable[PodStats]
    ) -> Eviction | None:
        # Already in eviction order (memory first). The first threshold is also the one
        # upstream's message quotes: the first met threshold of the starved resource.
        threshold = ready[0]
        resource = SIGNAL_RESOURCE[threshold.signal]
        for pod in rank_pods(threshold.signal, pods):
            if pod.critical:
                continue  # upstream's evictPod refuses critical pods; try the next one
            message, offenders = eviction_message(resource, pod, threshold, observations.get(threshold.signal))
            return Eviction(
                pod.uid,
                pod.namespace,
                pod.name,
                self._grace(threshold, pod),
                message,
                resource,
                threshold,
                tuple(o[0] for o in offenders),
                tuple(o[1] for o in offenders),
            )
        return None

    def _grace(self, threshold: Threshold, pod: PodStats) -> int:
        if threshold.hard:
            return IMMEDIATE_EVICTION_GRACE_PERIOD
        limit = self.config.max_pod_grace_period
        return limit if pod.grace_period is None else min(limit, pod.grace_period)

    def admit(self, pod_qos: str, tolerations: Iterable[dict] | None, critical: bool) -> tuple[str, str] | None:
        return admit(pod_qos, tolerations, critical, self._conditions)


# ---- admission under pressure (upstream's evictionAdmitHandler) ------------------------------


def _tolerates_memory_pressure(tolerations: Iterable[dict] | None) -> bool:
    # Upstream ToleratesTaint for the one fixed taint {memory-pressure, NoSchedule, no value};
    # written out here so the kubelet need not import the scheduler's plugin package.
    for t in tolerations or ():
        if (t.get("effect") or TAINT_EFFECT) != TAINT_EFFECT:
            continue
        if (t.get("key") or CONDITION_TAINTS[MEMORY_PRESSURE]) != CONDITION_TAINTS[MEMORY_PRESSURE]:
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" or (op == "Equal" and not t.get("value")):
            return True
    return False


def admit(
    pod_qos: str, tolerations: Iterable[dict] | None, critical: bool, conditions: Iterable[str]
) -> tuple[str, str] | None:
    """The eviction manager's admit handler: None to admit, else (reason, message)."""
    conditions = tuple(c for c in CONDITIONS if c in set(conditions))
    if not conditions or critical:
        return None
    if conditions == (MEMORY_PRESSURE,):
        if pod_qos != BEST_EFFORT or _tolerates_memory_pressure(tolerations):
            return None
    return REASON, f"The node had condition: [{' '.join(conditions)}]. "
