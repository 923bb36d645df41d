"""A pod's ``spec.activeDeadlineSeconds``, enforced on its node.

Owns the deadline timer of each pod that sets the field. ``DeadlineMixin`` is a part of
``Kubelet``: ``_new_pod`` arms the timer when it admits a pod, ``ReconcileMixin._resume``
when it adopts one, and ``Kubelet.on_timer`` hands the timer back here.

Upstream's kubelet counts the deadline from the pod's ``status.startTime`` (admission on
the node) and checks it on every pass of its sync loop (each second); kubemu fires at the
exact instant. An update may set the field on a bound pod or shorten it (the apiserver
refuses a longer one or its removal); the kubelet rearms the timer from the same
startTime, so a deadline already past stops the pod at once. Past the deadline, a pod not
already being deleted gets a Normal event ``DeadlineExceeded`` with the message below, and
ends in phase Failed with that reason and message:

| state            | at startTime + activeDeadlineSeconds | next                 | outputs |
|------------------|--------------------------------------|----------------------|---------|
| PENDING, BACKOFF | timer deadline                       | FAILED               | event; status Failed; resources released |
| RUNNING          | timer deadline                       | STOPPING (to Failed) | event; Killing per container; timer stopped @ t+min(stop-seconds, grace) |
| STOPPING (to Failed) | timer stopped (or oom)           | FAILED               | status Failed, exit 143 (or 137 if the grace ran out); resources released |
| any other        | timer deadline                       | unchanged            | none |

The stop is the eviction path's (``PressureMixin._finish_eviction`` writes the phase once
the containers are gone, as upstream's status manager holds a terminal phase back until
then) with the pod's own grace (``terminationGracePeriodSeconds``, 30 s by default) and no
DisruptionTarget condition. Not modelled: a stop under way when a restarted kubelet adopts
the pod (its status shows Running, so the overdue deadline stops it afresh).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pods import BACKOFF, DEFAULT_GRACE, PENDING, RUNNING, STOPPING, PodRecord, deadline_seconds

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

DEADLINE = "deadline"  # the timer kind
REASON = "DeadlineExceeded"
MESSAGE = "Pod was active on the node longer than the specified deadline"


class DeadlineMixin:
    """The active-deadline part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    def _arm_deadline(self: KubeletSelf, rec: PodRecord, not_before: float = 0.0) -> None:
        """Schedule the deadline of an admitted or adopted pod (at once when it passed: at
        its own time, as any timer a restarted kubelet slept through, or at ``not_before``)."""
        self._timers.cancel(rec.deadline_timer)
        rec.deadline_timer = None
        if rec.active_deadline is not None:
            at = max(rec.admitted_at + rec.active_deadline, not_before)
            # The token carries the time: a deadline moved by an update may fire later than it says.
            rec.deadline_timer = self._timers.schedule(at, (self.name, DEADLINE, rec.uid, at))

    def _deadline_changed(self: KubeletSelf, rec: PodRecord, seconds: int | None, now: float) -> None:
        """An update set or shortened the deadline (validation allows nothing else): the
        new one counts from the same startTime; one already past acts now."""
        rec.active_deadline = deadline_seconds(seconds)
        if rec.state in (PENDING, RUNNING, BACKOFF) and not rec.deleting:
            self._arm_deadline(rec, not_before=now)

    def _on_deadline(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        rec.deadline_timer = None
        if rec.state not in (PENDING, RUNNING, BACKOFF) or rec.deleting or rec.active_deadline is None:
            return
        self._event(rec, REASON, MESSAGE, t)
        rec.reason, rec.message = REASON, MESSAGE
        if rec.state != RUNNING:
            self._finish_eviction(rec, t)
            return
        rec.state, rec.stop_begin, rec.evicting = STOPPING, t, True
        for name in rec.app_names():
            self._event(rec, "Killing", f"Stopping container {name}", t)
        grace = DEFAULT_GRACE if rec.grace is None else rec.grace
        self._stop_at(rec, self._stop_end(rec, max(0.0, float(grace)), t), t)
