"""The controller manager as a component (``cluster/runtime/component.py``).

Owns the translation between the component protocol and ``ControllerManager``: watch
events go to the controllers that want them, refused requests to the controllers that
asked to hear of them, and what the controllers' syncs return becomes typed requests in
``writes.ORDER``. It asks to run again at the earliest controller timer (a grace period
ending, a tolerationSeconds deadline, an expectation expiring).

A request lost with an unreachable apiserver is not resent: the node lifecycle controller
and pod GC ask again on their own timers, as upstream controllers resync.

A restarted controller manager is a new instance: its first list shows it every node for
the first time, so each gets a full grace period, as after an upstream
kube-controller-manager restart.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import NotAttempted
from ..api.requests import Watch
from ..runtime.component import Batch, Component, Result
from .manager import ControllerManager, default_controllers
from .writes import requests


class ControllerManagerComponent(Component):
    def __init__(self, job_run_seconds: float | None = 5.0) -> None:
        """``job_run_seconds``: how long a Job's pod runs when its template does not say."""
        self.manager = ControllerManager(default_controllers(job_run_seconds))
        self.failed_writes = 0

    def watches(self) -> tuple[Watch, ...]:
        lazy = self.manager.lazy_kinds
        return tuple(Watch(kind, lazy=kind in lazy) for kind in self.manager.kinds)

    def reconcile(self, batch: Batch) -> Result:
        m, now = self.manager, batch.now
        for req, err in batch.failures:
            self.failed_writes += not isinstance(err, NotAttempted)
            m.on_failed(req, err, now)
        m.on_events(batch.events, now)
        writes = requests(m.sync(now))
        wake = m.next_wakeup()
        return Result(writes, wake_at=wake, next_change=wake)

    def inspect(self, now: float) -> dict[str, Any]:
        """``controllers``: each reconciler's counters under upstream's metric names."""
        return {"failedWrites": self.failed_writes, "controllers": self.manager.metrics()}
