"""The scheduler as a component (``cluster/runtime/component.py``).

Owns the translation between the component protocol and ``Scheduler``: watch events go to
its ``on_*`` handlers, a batch then runs up to ``BATCH`` scheduling cycles, and the
``ScheduleOutput`` becomes requests in the order upstream sends them (binds; then status
patches, so a victim's DisruptionTarget condition lands before its delete; then the
victims' deletes; events last). A refused bind is forgotten and requeued by
``Scheduler.on_bind_failed``; a bind whose first attempt had landed before a lost reply
(the apiserver restarted and the call was retried) comes back as ``AlreadyAssigned`` to
the very node chosen, which counts as done.

A restarted scheduler is a new instance: its first list brings the pods the old one bound
into the cache and the pending ones (nominations included, from their status) into the
queue; the apiserver refuses any second bind, so no pod is bound twice.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import AlreadyAssigned, Conflict, NotFound
from ..api.eventcorrelation import EventCorrelator
from ..api.patches import PodConditions
from ..api.requests import Bind, Delete, Patch, RecordEvent, Request, Watch
from ..runtime.component import Batch, Component, Result
from .output import ScheduleOutput
from .plugins.volumebinding import KINDS as VOLUME_KINDS
from .plugins.volumebinding import VolumeFeed
from .scheduler import Scheduler, SchedulerConfig

BATCH = 500  # scheduling cycles per batch before the writes go out
WATCHES: tuple[Watch, ...] = (Watch("Namespace"), Watch("Node"), Watch("Pod", heads=True), Watch("PodDisruptionBudget"))
WATCHES += tuple(Watch(kind) for kind in VOLUME_KINDS)  # VolumeBinding's (issue 40)


class SchedulerComponent(Component):
    def __init__(self, config: SchedulerConfig | None = None, seed: int = 0):
        self.scheduler = Scheduler(config, seed=seed)
        self.binds_done = 0
        self._recorder = EventCorrelator()  # the core/v1 recorder: repeats count up one Event
        self.volumes = VolumeFeed(self.scheduler)  # claims, volumes, classes for VolumeBinding

    def watches(self) -> tuple[Watch, ...]:
        return WATCHES

    def reconcile(self, batch: Batch) -> Result:
        s, now = self.scheduler, batch.now
        handlers = {"PodDisruptionBudget": s.on_pdb, "Namespace": s.on_namespace}
        for ev in batch.events:
            # Pods and nodes are kept as the bytes the watch delivered (raw).
            kind = ev.kind
            if kind == "Pod":
                s.on_pod_event(ev, now)
            elif kind == "Node":
                s.on_node(ev.type, ev.obj, now, ev.raw)
            elif kind in VOLUME_KINDS:
                self.volumes.on_event(kind, ev.type, ev.obj, now)
            else:
                handlers[kind](ev.type, ev.obj, now)
        for req, err in batch.failures:
            if not isinstance(req, Bind):
                continue  # a refused patch, delete or event: the watch shows what stands
            if isinstance(err, AlreadyAssigned) and err.node == req.node:
                continue  # our own bind, retried after its reply was lost
            conflict = isinstance(err, (NotFound, Conflict))
            s.on_bind_failed(req.namespace, req.name, req.uid, err.message, conflict, now)
        out = s.schedule(now, BATCH)
        if out.events:
            out.events = self._recorder.correlate(out.events, now)
        ready = s.has_ready()
        wake = now if ready else s.next_wakeup()
        writes = self.volumes.writes() + requests(out)  # PreBind's volume writes before the binds
        if s.explain is not None:
            writes += s.explain.writes()  # SchedulingResult objects (explain.py), after the pods' writes
        return Result(writes, wake_at=wake, next_change=wake)

    def inspect(self, now: float) -> dict[str, Any]:
        return dict(self.scheduler.stats, pending=self.scheduler.pending_count())


def requests(out: ScheduleOutput) -> list[Request]:
    """A schedule call's writes, in the order they must land."""
    reqs: list[Request] = [Bind(ns, name, uid, node) for ns, name, uid, node in out.binds]
    for ns, name, uid, conditions, nominated in out.status_patches():
        reqs.append(Patch("Pod", ns, name, uid, PodConditions(tuple(conditions), nominated)))
    reqs += [Delete("Pod", ns, name, uid) for ns, name, uid in out.deletes]
    reqs += [RecordEvent(ev) for ev in out.events]
    return reqs
