"""Graceful deletion of a pod on one kubelet: stopping its containers and confirming it is gone.

Owns the STOPPING rows of ``kubelet.py``'s lifecycle table: a deletionTimestamp stops a
running pod (a Killing event per container; the stop ends after its preStop hooks and the
grace period, or earlier if the containers exit on their own), a shorter grace moves the
end earlier, and the end of a stop confirms the delete (grace 0) or, for an eviction not
deleted meanwhile, leaves the pod Failed. A pod not running is confirmed at once. Part of
``Kubelet`` as a mixin; called from its watch and timer handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pods import DELETED, RUNNING, STOPPED, STOPPING, PodRecord
from .probes import stop_seconds

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf


class StopMixin:
    """The graceful-deletion part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    def _on_deletion(self: KubeletSelf, rec: PodRecord, grace: float, now: float) -> None:
        if rec.state == DELETED:
            return
        rec.deleting = True
        if rec.state == RUNNING:
            rec.state, rec.stop_begin = STOPPING, now
            for name in rec.app_names():
                self._event(rec, "Killing", f"Stopping container {name}", now)
            self._stop_at(rec, self._stop_end(rec, grace, now), now)
        elif rec.state == STOPPING:
            end = self._stop_end(rec, grace, now)
            assert rec.stop_end is not None  # set when the stop began
            if end < rec.stop_end:  # only a shorter grace changes anything
                self._stop_at(rec, end, now)
        else:
            self._confirm(rec, now)

    def _stop_end(self: KubeletSelf, rec: PodRecord, grace: float, now: float) -> float:
        assert rec.stop_begin is not None  # called once the pod is STOPPING
        end = rec.stop_begin + stop_seconds(rec, grace)[0]  # preStop hooks first, then SIGTERM
        if rec.exit_at is not None:
            end = min(end, rec.exit_at)  # the container may exit on its own before SIGKILL
        return max(end, now)

    def _stop_at(self: KubeletSelf, rec: PodRecord, end: float, now: float) -> None:
        rec.stop_end = end
        self._after(rec, end - now, STOPPED, now)

    def _stop_done(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        """A stop ended: an evicted pod stays as Failed unless it was deleted meanwhile."""
        if rec.evicting and not rec.deleting:
            self._finish_eviction(rec, t)
        else:
            self._confirm(rec, t)

    def _confirm(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        """Containers are gone: release the resources and ask for the grace-0 delete."""
        self._cancel_timers(rec)
        rec.state = DELETED
        self._release(rec)
        self._outbox.pod_deletes[rec.uid] = rec.key()

    def _cancel_timers(self: KubeletSelf, rec: PodRecord) -> None:
        """Cancel every timer of the pod: its next lifecycle step, its OOM kill, its deadline."""
        timers = self._timers
        timers.cancel(rec.timer)
        timers.cancel(rec.oom_timer)
        timers.cancel(rec.deadline_timer)
        rec.timer = rec.oom_timer = rec.deadline_timer = None
        self._cancel_ephemeral(rec)
        self._probes_stop(rec)
