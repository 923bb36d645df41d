"""The YuniKorn-mode scheduler as a component (``cluster/runtime/component.py``).

Owns the translation between the component protocol and ``YuniKorn`` (``core.py``): watch
events go to its handlers, a batch runs up to ``BATCH`` scheduling cycles (``cycle.py``),
and the output becomes requests in the order they must land (binds; victims' deletes;
status writes; events). A refused bind puts the pod back among the asks. ``inspect``
gives the queue tree and the applications in YuniKorn's REST shape (``rest.py``), which the
report, the run summary and the HTTP front end read.

A restarted instance rebuilds everything from its first list: the ConfigMap, the nodes,
and the pods (bound ones as allocations, pending ones as asks).
"""

from __future__ import annotations

from typing import Any

from ..api.errors import AlreadyAssigned
from ..api.eventcorrelation import EventCorrelator
from ..api.patches import PodConditions
from ..api.requests import Bind, Delete, Patch, RecordEvent, Request, UpdateStatus, Watch
from ..runtime.component import Batch, Component, Result
from . import cycle, rest
from .core import YuniKorn
from .output import Output

BATCH = 500
# Pods by head: YuniKorn keeps pods by uid, and a relist then names the pods it drops.
WATCHES = (Watch("PriorityClass"), Watch("ConfigMap"), Watch("Node"), Watch("Pod", heads=True))
_ORDER = {"PriorityClass": 0, "ConfigMap": 1, "Node": 2, "Pod": 3}


class YuniKornComponent(Component):
    def __init__(self) -> None:
        self.yk = YuniKorn()
        self._recorder = EventCorrelator()  # the core/v1 recorder: repeats count up one Event

    def watches(self) -> tuple[Watch, ...]:
        return WATCHES

    def reconcile(self, batch: Batch) -> Result:
        yk, now = self.yk, batch.now
        handlers = {
            "PriorityClass": yk.on_priority_class,
            "ConfigMap": yk.on_configmap,
            "Node": yk.on_node,
            "Pod": yk.on_pod,
        }
        # Classes, the configuration and the nodes before the pods that read them (a list
        # or a busy instant brings several kinds at once); the sort keeps each kind's order.
        for kind, etype, obj, _ in sorted(batch.events, key=lambda e: _ORDER[e.kind]):
            handlers[kind](etype, obj, now)
        for req, err in batch.failures:
            if isinstance(req, Bind) and not (isinstance(err, AlreadyAssigned) and err.node == req.node):
                a = yk.allocs.get(req.uid)
                if a is not None and a.node == req.node:
                    yk.unbind(a)
        done = cycle.run(yk, now, BATCH)
        wake = now if done >= BATCH else cycle.next_wakeup(yk, now)
        out = yk.take_output()
        if out.events:
            out.events = self._recorder.correlate(out.events, now)
        return Result(requests(out), wake_at=wake, next_change=wake)

    def inspect(self, now: float) -> dict[str, Any]:
        yk = self.yk
        return dict(
            yk.stats,
            pending=sum(1 for a in yk.allocs.values() if not a.node),
            queues=rest.queues(yk),
            applications=rest.applications(yk),
        )


def requests(out: Output) -> list[Request]:
    reqs: list[Request] = [Bind(ns, name, uid, node) for ns, name, uid, node in out.binds]
    reqs += [Delete("Pod", ns, name, uid) for ns, name, uid in out.deletes]
    reqs += [Patch("Pod", ns, name, uid, PodConditions((cond,))) for ns, name, uid, cond in out.conditions]
    reqs += [UpdateStatus("Pod", ns, name, uid, status) for ns, name, uid, status in out.failed]
    reqs += [RecordEvent(ev) for ev in out.events]
    return reqs
