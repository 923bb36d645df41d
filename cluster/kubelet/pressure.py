"""Emulated resource usage on one node: OOM kills, the eviction manager's loop, and the
``pressure`` chaos action.

Owns turning the pods' declared usage (``usage.py``) and the node-level usage a
``pressure`` chaos action adds into what the kubelet acts on: an exact OOM timer per
running container run whose memory profile passes its limit, the ``NodeStats`` and
``PodStats`` the ``EvictionManager`` (``eviction.py``) reads every
``EVICTION_MONITORING_PERIOD`` seconds, carrying out the eviction it returns, and the
pressure node conditions and node events that follow. ``PressureMixin`` is a part of
``Kubelet`` (it uses the kubelet's records, timers and outbox); the lifecycle rows it
drives are in the state table in ``kubelet.py``.

The emulated node (kubemu's model, documented in the README):
- memory: working set = the running containers' memory usage + the pressure action's
  ``memory``; the pods cgroup (allocatableMemory.available) sees the containers only;
- nodefs (and imagefs, which is not separate): capacity = the node's ephemeral-storage;
  the pressure action's ``disk`` is in use; one inode per 16 KiB (ext4's default ratio),
  the action's ``inodes`` in use;
- process IDs: 32768 (the classic pid_max); each running container holds one, plus the
  action's ``pids``.
CPU usage above a container's limit is throttled, never killed: it only shows in the report.
The loop runs only while the node has something to measure (a pod with declared usage,
a pressure action, or a pressure condition still held), so idle nodes cost no timers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..api.annotations import CPU_USAGE, MEMORY_USAGE, AnnotationError
from ..api.events import make_event
from ..api.quantity import resource_int
from ..api.resources import EPHEMERAL, MEMORY
from ..api.usage import container_usage, crossing_time
from .admission import Rejection
from .eviction import EVICTION_MONITORING_PERIOD, POD_CLEANUP_TIMEOUT, ContainerStats, Eviction, NodeStats, PodStats
from .pods import BACKOFF, FAILED, PENDING, RUNNING, STOPPING, PodRecord

if TYPE_CHECKING:
    from ..runtime.timers import Handle
    from .kubeletself import KubeletSelf

OOM, EVICT, UNPRESSURE, LIFT = "oom", "evict", "unpressure", "lift"
PID_MAX = 32768
BYTES_PER_INODE = 16384
EXIT_KILLED = 137  # 128 + SIGKILL: the kernel's OOM killer, or the end of a grace period
EXIT_SIGTERM = 143  # 128 + SIGTERM: the container stopped on its own within the grace period
DISRUPTION_REASON = "TerminationByKubelet"
KERNEL_MONITOR = "kernel-monitor"  # node-problem-detector's source for kernel log events
EXTRA_KEYS = ("memory", "disk", "inodes", "pids")
ACTIVE = (PENDING, RUNNING, BACKOFF)  # what the eviction manager may choose from

# condition -> (event when it turns True, event when it turns False), upstream's reasons.
_NODE_EVENTS = {
    "MemoryPressure": ("NodeHasInsufficientMemory", "NodeHasSufficientMemory"),
    "DiskPressure": ("NodeHasDiskPressure", "NodeHasNoDiskPressure"),
    "PIDPressure": ("NodeHasInsufficientPID", "NodeHasSufficientPID"),
}


def declared_usage(pod: dict) -> dict | None:
    """container -> ContainerUsage when the pod declares any usage, else None."""
    ann = (pod.get("metadata") or {}).get("annotations") or {}
    if not any(k.startswith((MEMORY_USAGE, CPU_USAGE)) for k in ann):
        return None
    try:
        return container_usage(pod)
    except AnnotationError:
        return None  # validation refuses these at create; one that slips through uses nothing


def memory_now(rec: PodRecord, t: float) -> dict[str, int]:
    """Each long-running container's memory usage at ``t`` (0 while it is not running)."""
    if rec.usage is None or rec.state not in (RUNNING, STOPPING) or rec.started_at is None:
        return {}
    since = t - rec.started_at
    return {n: u.memory.at(since) for n, u in rec.usage.items() if u.memory is not None}


def cpu_now(rec: PodRecord, t: float) -> dict[str, int]:
    if rec.usage is None or rec.state not in (RUNNING, STOPPING) or rec.started_at is None:
        return {}
    since = t - rec.started_at
    return {n: u.cpu.at(since) for n, u in rec.usage.items() if u.cpu is not None}


def _limit(rec: PodRecord, container: str, key: str) -> int | None:
    return (((rec.cgroup or {}).get("containers") or {}).get(container) or {}).get(key)


def oom_delay(rec: PodRecord) -> float | None:
    """Seconds after the containers start until the first one passes its memory limit."""
    best = None
    for name, u in (rec.usage or {}).items():
        limit = _limit(rec, name, "memoryLimit")
        if u.memory is None or not limit:
            continue
        t = crossing_time(u.memory, limit)
        if t is not None and (best is None or t < best):
            best = t
    return best


def usage_view(rec: PodRecord, t: float) -> dict | None:
    """The report's ``usage``: memory and cpu now, and whether cpu is being throttled."""
    mem, cpu = memory_now(rec, t), cpu_now(rec, t)
    if not mem and not cpu:
        return None
    throttled = False
    for name, used in cpu.items():
        quota, period = _limit(rec, name, "cpuQuota"), _limit(rec, name, "cpuPeriod")
        if quota and period and used * period > quota * 1000:
            throttled = True
    return {
        "memory": sum(mem.values()) if mem else None,
        "cpu": sum(cpu.values()) if cpu else None,
        "cpuThrottled": throttled,
    }


class PressureMixin:
    """The usage-driven part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    # The kubelet's slots this part assigns, declared for the type checker (``kubeletself.py``).
    _extra: dict[str, int]
    _extra_timer: Handle | None
    _evict_timer: Handle | None
    _evict_due: float
    _lift_timer: Handle | None

    # ---- OOM ------------------------------------------------------------------------------

    def _schedule_oom(self: KubeletSelf, rec: PodRecord, started: float) -> None:
        self._timers.cancel(rec.oom_timer)
        rec.oom_timer = None
        delay = oom_delay(rec)
        if delay is not None:
            rec.oom_at = started + delay
            rec.oom_timer = self._timers.schedule(rec.oom_at, (self.name, OOM, rec.uid, rec.runs))

    def _on_oom(self: KubeletSelf, rec: PodRecord, runs: int) -> None:
        rec.oom_timer = None
        if runs != rec.runs or rec.state not in (RUNNING, STOPPING):
            return
        # Scheduled only for a run of a pod that declares usage (``_schedule_oom``).
        assert rec.started_at is not None and rec.usage is not None
        t = rec.oom_at
        since = t - rec.started_at
        killed = tuple(
            n
            for n, u in rec.usage.items()
            if u.memory is not None and (limit := _limit(rec, n, "memoryLimit")) and u.memory.at(since) > limit
        )
        for name in killed:
            # Not the kubelet's: upstream's kubelet records only system-wide OOMs (SystemOOM).
            # This is the event node-problem-detector's kernel monitor makes of the kernel log.
            self._node_event(
                "OOMKilling",
                f"Memory cgroup out of memory: Killed process of container {name} in pod {rec.namespace}/{rec.name}",
                t,
                "Warning",
                component=KERNEL_MONITOR,
            )
        self._timers.cancel(rec.timer)
        rec.timer = None
        if rec.state == STOPPING:
            self._stop_done(rec, t)  # the container died before its stop completed
        else:
            self._exit(rec, t, EXIT_KILLED, killed)

    # ---- the pressure chaos action -----------------------------------------------------------

    def set_pressure(self: KubeletSelf, extra: dict[str, int], now: float, duration: float | None = None) -> None:
        """Node-level usage on top of the pods' (replaces the previous action's)."""
        if self._stopped:
            return
        self._extra = {k: int(v) for k, v in extra.items() if k in EXTRA_KEYS and v}
        self._timers.cancel(self._extra_timer)
        self._extra_timer = None
        if duration is not None and self._extra:
            self._extra_timer = self._timers.schedule(now + duration, (self.name, UNPRESSURE, "", 0))
        self._ensure_sync(now)

    def _unpressure(self: KubeletSelf, now: float) -> None:
        self._extra_timer = None
        self._extra = {}

    # ---- the eviction manager's loop ---------------------------------------------------------

    def _ensure_sync(self: KubeletSelf, now: float) -> None:
        """Start the 10 s loop on its grid if it is not running."""
        if self._evict_timer is None and not self._stopped:
            period = EVICTION_MONITORING_PERIOD
            # The first look after something new to measure is a pending change; later
            # looks that find no threshold met are only monitoring (``_sync``).
            self._schedule_sync((math.floor(now / period) + 1) * period, background=False)

    def _schedule_sync(self: KubeletSelf, at: float, background: bool) -> None:
        # A look that only monitors is a background timer (it changes nothing a scenario
        # waits for); one that follows a met threshold or an eviction may act.
        self._evict_due = at
        self._evict_timer = self._timers.schedule(at, (self.name, EVICT, "", 0), background)

    def _needs_sync(self: KubeletSelf) -> bool:
        if self._extra or self.eviction.conditions:
            return True
        return any(rec.usage is not None and rec.state in (*ACTIVE, STOPPING) for rec in self._pods.values())

    def _sync(self: KubeletSelf, t: float) -> None:
        self._evict_timer = None
        active = [rec for rec in self._pods.values() if rec.state in ACTIVE and rec.requests is not None]
        result = self.eviction.synchronize(t, self._node_stats(t), [self._pod_stats(r, t) for r in active])
        self._set_conditions(result.conditions, t)
        wait = EVICTION_MONITORING_PERIOD
        if result.eviction is not None:
            wait = self._evict(self._pods[result.eviction.uid], result.eviction, t)
        acting = result.eviction is not None or bool(result.thresholds_met or result.thresholds_pending)
        if self._needs_sync() or acting:
            self._schedule_sync(t + wait, background=not acting)
        # A held condition lifts at a later look; mark when, so the node counts as busy until then.
        self._timers.cancel(self._lift_timer)
        lift = self.eviction.lifts_at()
        self._lift_timer = None if lift is None else self._timers.schedule(lift, (self.name, LIFT, "", 0))

    def _node_stats(self: KubeletSelf, t: float) -> NodeStats:
        cap, extra = self.config.capacity_ints(), self._extra
        pods_ws = processes = 0
        for rec in self._pods.values():
            if rec.state in (RUNNING, STOPPING):
                pods_ws += sum(memory_now(rec, t).values())
                processes += len(rec.app_names())
        mem_cap = cap.get(MEMORY)
        reserved = (self.config.reserved or {}).get(MEMORY)
        pods_limit = None if mem_cap is None else mem_cap - (resource_int(MEMORY, reserved) if reserved else 0)
        disk_cap = cap.get(EPHEMERAL)
        inodes = None if disk_cap is None else disk_cap // BYTES_PER_INODE
        return NodeStats(
            memory_capacity=mem_cap,
            memory_working_set=pods_ws + extra.get("memory", 0),
            allocatable_memory=pods_limit,
            pods_working_set=pods_ws,
            nodefs_capacity=disk_cap,
            nodefs_available=max(0, (disk_cap or 0) - extra.get("disk", 0)),
            nodefs_inodes=inodes,
            nodefs_inodes_free=max(0, (inodes or 0) - extra.get("inodes", 0)),
            pid_max=PID_MAX,
            pid_running=processes + extra.get("pids", 0),
        )

    def _pod_stats(self: KubeletSelf, rec: PodRecord, t: float) -> PodStats:
        assert rec.requests is not None  # only pods holding resources are measured
        mem = memory_now(rec, t)
        running = rec.state == RUNNING
        containers = tuple(
            ContainerStats(name, memory_usage=mem.get(name, 0), memory_request=raw) for name, raw in rec.mem_requests
        )
        return PodStats(
            rec.uid,
            rec.namespace,
            rec.name,
            priority=rec.priority,
            qos=rec.qos,
            static=rec.static,
            grace_period=rec.grace,
            memory_request=rec.requests.get(MEMORY, 0),
            disk_request=rec.requests.get(EPHEMERAL, 0),
            memory_usage=sum(mem.values()),
            processes=len(rec.app_names()) if running else 0,
            containers=containers,
            measured=rec.state != PENDING,
        )

    def _evict(self: KubeletSelf, rec: PodRecord, ev: Eviction, t: float) -> float:
        """Carry out the eviction manager's choice; returns how long to wait for the cleanup."""
        self._event(rec, ev.reason, ev.message, t, "Warning")
        # Upstream records the eviction with AnnotatedEventf: the starved resource and the
        # offending containers ride on the event as annotations.
        self._outbox.events[-1]["metadata"]["annotations"].update(ev.annotations())
        rec.reason, rec.message = ev.reason, ev.message
        rec.disruption = (DISRUPTION_REASON, ev.message, t)
        if rec.state != RUNNING:
            self._finish_eviction(rec, t)
            return 1.0
        rec.state, rec.stop_begin, rec.evicting = STOPPING, t, True
        for name in rec.app_names():
            self._event(rec, "Killing", f"Stopping container {name}", t)
        self._write(rec)
        self._stop_at(rec, self._stop_end(rec, ev.grace_period, t), t)
        # Upstream polls every second, for at most 30 s, until the pod's containers are gone.
        return min(POD_CLEANUP_TIMEOUT, max(1.0, math.ceil((rec.stop_end or t) - t)))

    def _finish_eviction(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        """The evicted (or past its deadline) pod's containers are gone: phase Failed with
        the record's reason and message."""
        self._cancel_timers(rec)
        if rec.state == STOPPING and rec.started_at is not None:
            assert rec.stop_begin is not None and rec.stop_end is not None  # set when the stop began
            hook = min(rec.life.pre_stop, rec.stop_end - rec.stop_begin) if rec.life is not None else 0.0
            on_its_own = rec.stop_end >= rec.stop_begin + hook + rec.emu.stop_seconds
            rec.last_exit = (EXIT_SIGTERM if on_its_own else EXIT_KILLED, rec.started_at, t, ())
        rec.state, rec.evicting, rec.ready_at = FAILED, False, t
        self._release(rec)
        self._write(rec)

    # ---- admission and conditions ----------------------------------------------------------

    def _eviction_admit(self: KubeletSelf, pod: dict, rec: PodRecord) -> Rejection | None:
        if not self.eviction.conditions:
            return None
        critical = rec.static or rec.priority >= 2_000_000_000
        refused = self.eviction.admit(rec.qos, (pod.get("spec") or {}).get("tolerations"), critical)
        return None if refused is None else Rejection(*refused)

    def _set_conditions(self: KubeletSelf, conditions: tuple[str, ...], t: float) -> None:
        changed = False
        for ctype, (on_reason, off_reason) in _NODE_EVENTS.items():
            on = ctype in conditions
            if self._pressure.get(ctype, (False, 0.0))[0] != on:
                self._pressure[ctype] = (on, t)
                reason = on_reason if on else off_reason
                self._node_event(reason, f"Node {self.name} status is now: {reason}", t)
                changed = True
        if changed:
            self.post_node_status(t)

    def _node_event(
        self: KubeletSelf, reason: str, message: str, t: float, type: str = "Normal", component: str = "kubelet"
    ) -> None:
        ref = {"kind": "Node", "metadata": {"name": self.name, "uid": self.name}}
        self._outbox.events.append(make_event(ref, reason, message, t, type=type, component=component, host=self.name))
