"""The ReplicationController controller: the ReplicaSet controller through an adapter.

Owns what distinguishes upstream's ``pkg/controller/replication`` from the ReplicaSet
controller it wraps: the RC's selector is a plain label map (equality only), so each RC
is shown to the ReplicaSet logic with ``spec.selector`` as ``matchLabels``; its pods get
an ownerReference of kind ``ReplicationController`` (``v1``); its Events come from
``replication-controller``; and its status (``replicas``, ``fullyLabeledReplicas``,
``readyReplicas``, ``availableReplicas``, ``observedGeneration``) is written to the
ReplicationController's status subresource. Everything else (claiming, expectations,
slow-start creates, the deletion ranking, ``FailedCreate`` Events) is the ReplicaSet
controller's, unchanged (``replicaset.py``).

Who calls it: the controller-manager (``manager.default_controllers``) runs
``ReplicationControllerController``, a ``workloadstep.WorkloadStep``. A bare DELETE of an RC orphans its pods, as upstream's
v1 default (``cluster/apiserver/deletion.py``).
"""

from __future__ import annotations

from .reconciler import Obj, Watches
from .replicaset import ReplicaSetReconciler
from .workloadstep import WorkloadStep


def as_replicaset(rc: Obj) -> Obj:
    """``rc`` as the ReplicaSet logic reads an owner: its map selector as ``matchLabels``
    (an empty one stays empty, which selects nothing and is never managed)."""
    spec = rc.get("spec")
    if not isinstance(spec, dict):
        return rc
    selector = spec.get("selector")
    shaped = {"matchLabels": dict(selector)} if isinstance(selector, dict) and selector else None
    return {**rc, "spec": {**spec, "selector": shaped}}


class ReplicationControllerReconciler(ReplicaSetReconciler):
    """The ReplicaSet reconciler over ReplicationControllers: its status goes to the
    ReplicationController's status subresource (``UpdateStatus`` of ``KIND``)."""

    name = "replicationcontroller"
    KIND = "ReplicationController"
    COMPONENT = "replication-controller"
    watches = (Watches("ReplicationController", observed=True), Watches("Pod", observed=True))

    def observe(self, kind: str, etype: str, obj: Obj, now: float) -> list[tuple[str, str]]:
        return super().observe(kind, etype, as_replicaset(obj) if kind == self.KIND else obj, now)


class ReplicationControllerController(WorkloadStep):
    """The ReplicationController controller as the manager runs it."""

    def __init__(self) -> None:
        super().__init__(ReplicationControllerReconciler())
