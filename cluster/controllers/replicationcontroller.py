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

Who calls it: the controller-manager (``manager.default_controllers``), as any
controller in the manager's shape. A bare DELETE of an RC orphans its pods, as upstream's
v1 default (``cluster/apiserver/deletion.py``).
"""

from __future__ import annotations

from ..api.requests import UpdateStatus
from .replicaset import ReplicaSetController
from .workload import OwnerState, Writes


def as_replicaset(rc: dict) -> dict:
    """``rc`` as the ReplicaSet logic reads an owner: its map selector as ``matchLabels``
    (an empty one stays empty, which selects nothing and is never managed)."""
    spec = rc.get("spec")
    if not isinstance(spec, dict):
        return rc
    selector = spec.get("selector")
    shaped = {"matchLabels": dict(selector)} if isinstance(selector, dict) and selector else None
    return {**rc, "spec": {**spec, "selector": shaped}}


class ReplicationControllerController(ReplicaSetController):
    NAME = "replicationcontroller"
    KIND = "ReplicationController"
    COMPONENT = "replication-controller"
    kinds = ("ReplicationController", "Pod")

    def on_event(self, kind: str, etype: str, obj: dict, now: float) -> None:
        super().on_event(kind, etype, as_replicaset(obj) if kind == self.KIND else obj, now)

    def _write_status(self, st: OwnerState, status: dict, w: Writes) -> None:
        """The ReplicaSet's rule (write only a changed status), sent to the
        ReplicationController's status subresource instead of a ReplicaSet's."""
        held, w.replicaset_status = w.replicaset_status, []
        try:
            super()._write_status(st, status, w)  # type: ignore[arg-type]
            w.requests += [UpdateStatus(self.KIND, *item) for item in w.replicaset_status]
        finally:
            w.replicaset_status = held
