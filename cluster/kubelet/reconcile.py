"""Adopting pods after a kubelet restart: the state a pod's API status shows, taken over.

Owns reading a pod's ``status`` back into a ``PodRecord`` (the inverse of
``pods.pod_status``) and resuming the lifecycle from there. Upstream's container runtime
keeps containers running across a kubelet restart; the restarted kubelet lists the pods
bound to its node and reconciles: what runs keeps running, nothing is restarted, admitted
again or announced again. ``ReconcileMixin`` is a part of ``Kubelet``: ``_new_pod`` asks
``_adopt`` first for every pod it sees for the first time; its rows are in the state table
in ``kubelet.py``. ``adopted_first`` is called by ``NodeHost`` on each watch batch.

A pod is past admission on this node when its status says so: phase Succeeded or Failed,
or a ``status.startTime`` (only the kubelet writes it, when it admits the pod) with phase
Pending or Running. In a fresh kubelet nothing else can be both unknown and past admission
(the kubelet forgets a pod only once it is deleted), so the check costs only the restarted
kubelet anything. What an adopted pod gets:
- its resources, taken again without the admission checks (the pod already runs here):
  requests, host ports and cgroups exactly as before; exclusive CPUs and devices are
  allocated afresh through the same allocators (there is no checkpoint to read them back
  from), in list order, so they may differ from the previous process's choice; should the
  allocators refuse (the node's devices changed meanwhile), the pod keeps running without;
- its times from the status: ``startTime`` (admission), the container's ``startedAt``
  (the current run), the Ready condition's transition, the last termination;
- its remaining timers, measured from those times: start at startTime + start-seconds,
  exit at startedAt + run-seconds, OOM when the declared memory passes the limit, a
  CrashLoopBackOff restart at finishedAt + the back-off in the waiting message. A time the
  kubelet slept through fires at once with its own timestamp, as a late tick does (the
  runtime went on while the kubelet was down);
- an eviction in progress (DisruptionTarget from the kubelet on a Running pod) resumes its
  stop, measured from the condition's time with the eviction manager's grace;
- its active deadline, at startTime + activeDeadlineSeconds (``deadline.py``).
Not recovered (a restart forgets them, as it forgets every chaos action on the node): the
exact CrashLoopBackOff delay of a running pod that restarted before (estimated from
restartCount as if the back-off never reset), the eviction manager's observations and
pressure conditions (re-measured on its next pass), a ``pressure`` or ``partition``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeVar

from ..api.objects import is_terminating
from ..api.resources import pod_requests
from ..clock import parse_timestamp
from ..runtime.component import WatchEvent
from . import admission
from .eviction import IMMEDIATE_EVICTION_GRACE_PERIOD, REASON
from .podips import PodIPs
from .pods import (
    BACKOFF,
    BACKOFF_INITIAL,
    BACKOFF_MAX,
    EXIT,
    FAILED,
    PENDING,
    RUNNING,
    START,
    STOPPING,
    SUCCEEDED,
    PodRecord,
    grace_of,
)
from .pressure import DISRUPTION_REASON

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

_T = TypeVar("_T", float, None)

_DURATION = re.compile(r"back-off (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)? ")


def adopted_first(events: list[WatchEvent]) -> list[WatchEvent]:
    """The batch with the ADDED pods that are past admission moved to the front (each group
    in its order), so a relisting kubelet takes the resources of what already runs before
    it admits anything new. Upstream's restarted kubelet sorts by creation time instead."""
    first = [e for e in events if e.type == "ADDED" and e.head.start_time]
    if not first or len(first) == len(events):
        return events
    taken = {id(e) for e in first}
    return first + [e for e in events if id(e) not in taken]


def admitted_state(pod: dict) -> str | None:
    """The lifecycle state the pod's status shows it in on its node, or None when the
    kubelet never admitted it (then it is admitted now)."""
    status = pod.get("status") or {}
    phase = status.get("phase")
    if phase in (SUCCEEDED, FAILED):
        return phase
    if not status.get("startTime") or phase not in ("Pending", "Running"):
        return None
    cs = _first_status(status)
    if phase == "Pending" or cs is None:
        return PENDING if phase == "Pending" else None
    if "running" in (cs.get("state") or {}):
        return RUNNING
    # Not running in a Running pod: it exited and waits for its restart.
    return BACKOFF if cs.get("restartCount") or (cs.get("lastState") or {}).get("terminated") else PENDING


def _first_status(status: dict) -> dict | None:
    """The first regular container's status: kubemu's containers all share one state."""
    statuses = status.get("containerStatuses") or ()
    return statuses[0] if statuses else None


def _ts(value: object, default: _T) -> float | _T:
    t = parse_timestamp(value) if isinstance(value, str) else None
    return default if t is None else t


def _condition(status: dict, ctype: str) -> dict:
    for c in status.get("conditions") or ():
        if c.get("type") == ctype:
            return c
    return {}


def restore(rec: PodRecord, pod: dict) -> None:
    """Fill the record's times, restarts, last termination, IP and disruption from the
    pod's status (the fields ``pods.pod_status`` renders them into)."""
    status = pod.get("status") or {}
    cs = _first_status(status) or {}
    rec.admitted_at = _ts(status.get("startTime"), rec.admitted_at)
    rec.pod_ip = status.get("podIP") or ""
    rec.restarts = int(cs.get("restartCount") or 0)
    running = (cs.get("state") or {}).get("running")
    rec.started_at = _ts((running or {}).get("startedAt"), None)
    last = (cs.get("lastState") or {}).get("terminated") or (cs.get("state") or {}).get("terminated")
    if last:
        oom = tuple(
            s.get("name", "")
            for s in (*(status.get("containerStatuses") or ()), *(status.get("initContainerStatuses") or ()))
            if ((s.get("lastState") or {}).get("terminated") or {}).get("reason") == "OOMKilled"
        )
        started = _ts(last.get("startedAt"), rec.admitted_at)
        rec.last_exit = (int(last.get("exitCode") or 0), started, _ts(last.get("finishedAt"), started), oom)
        if rec.started_at is None:
            rec.started_at = started  # in back-off the record keeps the previous run's start
    ready = _condition(status, "Ready")
    rec.ready_at = _ts(ready.get("lastTransitionTime"), rec.started_at or rec.admitted_at)
    rec.backoff = _backoff(cs, rec.restarts)
    rec.runs = 1 if rec.started_at is not None else 0
    target = _condition(status, "DisruptionTarget")
    if target.get("status") == "True" and target.get("reason") == DISRUPTION_REASON:
        rec.disruption = (
            DISRUPTION_REASON,
            target.get("message") or "",
            _ts(target.get("lastTransitionTime"), rec.admitted_at),
        )


def _backoff(cs: dict, restarts: int) -> int:
    """The last CrashLoopBackOff delay: from the waiting message when it shows one, else
    as if every restart doubled it (the exact value died with the previous process)."""
    m = _DURATION.match(((cs.get("state") or {}).get("waiting") or {}).get("message") or "")
    if m and any(m.groups()):
        h, mi, s = (int(g or 0) for g in m.groups())
        return h * 3600 + mi * 60 + s
    return 0 if restarts <= 0 else min(BACKOFF_INITIAL * 2 ** min(restarts - 1, 16), BACKOFF_MAX)


class ReconcileMixin:
    """The adoption part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    _pod_ips: PodIPs  # the kubelet's slot this part fills, declared for the type checker (``kubeletself.py``)

    def _adopt(self: KubeletSelf, rec: PodRecord, pod: dict, now: float) -> bool:
        """True when the pod is past admission here and is now adopted (or, terminating,
        on its way out through the deletion rows); False when it is to be admitted."""
        state = admitted_state(pod)
        if state is None:
            return False
        rec.state = state
        if state not in (SUCCEEDED, FAILED):
            restore(rec, pod)
            self._retake(rec, pod)
            self._resume(rec, now)
        if is_terminating(pod):
            self._on_deletion(rec, grace_of(pod), now)
        return True

    def _retake(self: KubeletSelf, rec: PodRecord, pod: dict) -> None:
        """Take the pod's resources again; only the allocators may refuse (see above)."""
        requests = admission.effective_requests(pod_requests(pod), self.allocatable)
        # An empty node without taints: the fit and port checks pass for any pod that once
        # fitted, leaving only the CPU and device allocation to do. The labels are the
        # stored Node's (the host lists Nodes before pods), which the pod was admitted
        # against; should a label it selects have gone since, the check refuses and the
        # pod runs on without exclusive CPUs and devices, as when the allocators refuse.
        view = admission.NodeView(self.name, self.allocatable, {}, 0, self.admitted_node().labels)
        self.alloc.admit(pod, rec, requests, view)
        self._take(rec, pod, requests)
        self._pod_ips.hold(rec.pod_ip)  # no new pod gets the adopted pod's address

    def _resume(self: KubeletSelf, rec: PodRecord, now: float) -> None:
        """Schedule what is left of the adopted state's timers."""
        if rec.state == PENDING:
            self._resume_at(rec, START, rec.admitted_at + rec.emu.start_seconds)
        elif rec.state == BACKOFF and rec.last_exit is not None:
            self._resume_at(rec, START, rec.last_exit[2] + rec.backoff)
        elif rec.state == BACKOFF:
            self._resume_at(rec, START, now)
        else:  # RUNNING
            run = rec.emu.run_seconds
            assert rec.started_at is not None  # a running container has started
            rec.exit_at = None if run is None else rec.started_at + run
            if rec.exit_at is not None:
                self._resume_at(rec, EXIT, rec.exit_at)
            if rec.usage is not None:
                self._schedule_oom(rec, rec.started_at)
            if rec.disruption is not None:
                self._resume_eviction(rec, now)
        if rec.usage is not None:
            self._ensure_sync(now)
        self._arm_deadline(rec)

    def _resume_at(self: KubeletSelf, rec: PodRecord, kind: str, at: float) -> None:
        # Always a timer, never inline, even when ``at`` has passed: the timer queue then
        # orders an overdue exit against an overdue OOM kill by their times.
        rec.gen += 1
        rec.due = at
        rec.timer = self._timers.schedule(at, (self.name, kind, rec.uid, rec.gen))

    def _resume_eviction(self: KubeletSelf, rec: PodRecord, now: float) -> None:
        """An eviction was stopping the pod: carry on from the condition's time. Whether a
        hard or a soft threshold chose it died with the previous process: the soft grace
        when the node has soft thresholds, else the hard one."""
        assert rec.disruption is not None  # called only for a pod with one
        _, message, since = rec.disruption
        rec.state, rec.evicting, rec.stop_begin = STOPPING, True, since
        rec.reason, rec.message = REASON, message
        config = self.eviction.config
        grace = IMMEDIATE_EVICTION_GRACE_PERIOD
        if any(not t.hard for t in config.thresholds):
            grace = config.max_pod_grace_period if rec.grace is None else min(config.max_pod_grace_period, rec.grace)
        self._stop_at(rec, self._stop_end(rec, grace, now), now)
