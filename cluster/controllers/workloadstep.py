"""The step every workload controller runs in: its reconciler, one rate-limited work queue.

Owns how a ``workload.WorkloadReconciler`` (ReplicaSet, ReplicationController,
DaemonSet, StatefulSet, Job) is run: a ``reconciler.ReconcilerStep`` with owner keys in
key order, up to ``workload.PASSES`` rounds a sync (a claim can name another owner),
refused writes due at once (the reconcile reads them) and held for the queue's back-off
when ``workload.backs_off`` says so, and the pods parked until the first owner. Who calls it: the controller-manager
(``manager.default_controllers``) builds one per controller; tests drive one as the
manager does (``on_event``, ``sync``, ``on_failed``, ``next_wakeup``).

``sync`` answers a ``writes.Writes`` whose rows hold the writes (``writes.as_rows``), so
a reader finds a ReplicaSet's pod creates in ``pod_creates`` as before; the manager ranks
rows and typed requests alike. The ``on_*_failed`` methods are shorthands for
``on_failed`` with the request they name (tests report refusals with them); the manager
reports every refusal through ``on_failed``.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..api.requests import Create, Delete, Update, UpdateStatus
from .ownedpods import Expectations, ParkedPods
from .reconciler import Obj, ObjectCache, ReconcilerStep
from .workload import PASSES, WorkloadReconciler, backs_off
from .writes import Writes, as_rows, status_row


class WorkloadStep(ReconcilerStep):
    """One workload reconciler in its work queue."""

    writes_class: type[Writes] = Writes  # a test may substitute any class with the same rows
    reconciler: WorkloadReconciler[Any]

    def __init__(self, reconciler: WorkloadReconciler[Any]) -> None:
        def make(cache: ObjectCache) -> WorkloadReconciler[Any]:
            reconciler.cache = cache  # it reads its refusals and back-off there
            return reconciler

        super().__init__(
            make,
            sort_keys=True,
            parking=ParkedPods(),  # until the first owner nothing can own, adopt or collect a pod
            unparked_by=(reconciler.KIND,),
            passes=PASSES,
            backs_off=backs_off,
        )

    def sync(self, now: float) -> Writes:
        return as_rows(super().sync(now), self.writes_class())

    # -- refusals by the request they name -----------------------------------------------
    def on_create_failed(self, obj: Obj, error: StatusError, now: float) -> None:
        self.on_failed(Create(obj), error, now)

    on_object_create_failed = on_create_failed

    def on_update_failed(self, obj: Obj, error: StatusError, now: float) -> None:
        self.on_failed(Update(obj), error, now)

    def on_delete_failed(self, ns: str, name: str, uid: str, error: StatusError, now: float) -> None:
        self.on_failed(Delete("Pod", ns, name, uid), error, now)

    def on_status_failed(self, ns: str, name: str, uid: str, error: StatusError, now: float) -> None:
        self.on_failed(UpdateStatus(self.reconciler.KIND, ns, name, uid, {}), error, now)

    # -- reads -------------------------------------------------------------------------
    @property
    def NAME(self) -> str:  # noqa: N802 (the name the controllers had as a constant)
        return self.reconciler.name

    @property
    def COMPONENT(self) -> str:  # noqa: N802
        return self.reconciler.COMPONENT

    @property
    def STATUS_FIELD(self) -> str:  # noqa: N802 (the ``Writes`` row its status lands in)
        return status_row(self.reconciler.KIND)

    def owner(self, namespace: str, name: str) -> Obj | None:
        return self.reconciler.owner(namespace, name)

    def expectations(self, namespace: str, name: str) -> Expectations | None:
        return self.reconciler.expectations(namespace, name)
