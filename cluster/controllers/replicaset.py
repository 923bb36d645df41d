"""The ReplicaSet controller: keep ``spec.replicas`` active pods per ReplicaSet.

Owns what upstream's ``pkg/controller/replicaset`` decides: which pods a ReplicaSet counts,
how many it creates or deletes and which it deletes first (``scaledown``), and the
status it reports (``replicaset_status``). The shared machinery (ownership index,
claiming, expectations, refusals) is ``workload.WorkloadReconciler``.

Who calls it: the controller-manager runs ``ReplicaSetController``, a
``workloadstep.WorkloadStep`` over a ``ReplicaSetReconciler``: ReplicaSet and Pod events
in, ``reconcile(key, now)`` per ReplicaSet key out, looked at again at its expectation
timeout, the end of its back-off or the next pod's minReadySeconds.

A ReplicaSet moves through the states of the table in ``workload`` (expectations
satisfied, pending, expired; backing off; terminating; deleted). The rules, as upstream
applies them:

- A ReplicaSet's pods are those whose controller ownerReference names it (kind, uid);
  an orphan (no controller) in its namespace that matches ``spec.selector`` is adopted,
  an owned pod that no longer matches is released (both by updating the pod), and a pod
  controlled by anything else is ignored.
- Counted ("active") pods are neither Succeeded/Failed nor terminating: a pod stuck
  Terminating on a dead node is replaced at once.
- Too few: create ``replicas - active`` pods from ``spec.template`` (``generateName:
  <name>-``), in slow-start batches (see ``workload``), at most 500 per sync.
- Too many: delete the excess, at most 500 per sync, first by ``deletion_order``.
- While creates or deletes asked for are not yet observed (expectations), the
  ReplicaSet is not managed again; its status still is.
- Status: ``replicas`` (active), ``fullyLabeledReplicas`` (active pods carrying every
  template label), ``readyReplicas`` (Ready=True), ``availableReplicas`` (ready for
  ``minReadySeconds``), ``observedGeneration`` (when the object has a generation); other
  status fields are kept, and a status is written only when it changed.
- A deleted ReplicaSet's pods are the garbage collector's (``garbagecollector.py``),
  through their ownerReferences, as the delete's propagation policy says.

- A refused pod create or delete (a quota, say) sets the ``ReplicaFailure`` condition
  (reason ``FailedCreate`` or ``FailedDelete``, the apiserver's message), beside the
  Event; it is removed once the pod count is as wanted.

Deviations: the refusal is read by the reconcile after the one that asked (upstream
sees it within the same sync), so the condition comes one reconcile later;
``SuccessfulDelete`` is recorded when the delete is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..api.errors import NotAttempted, StatusError
from ..api.objects import labels_of
from ..clock import rfc3339
from .ownedpods import _not_found, error_text
from .reconciler import Obj, Watches
from .scaledown import DELETION_COST, Ranked, deletion_order, pods_to_delete
from .workload import (
    BURST_REPLICAS,
    SUCCESSFUL_DELETE,
    OwnerState,
    PodKey,
    WorkloadReconciler,
    Writes,
    available_at,
    controller_ref,
    is_pod_active,
    is_pod_ready,
)
from .workloadstep import WorkloadStep

__all__ = [
    "ReplicaSetController",
    "ReplicaSetReconciler",
    "deletion_order",
    "pods_to_delete",
    "replicaset_status",
    "DELETION_COST",
]

_ZERO = (0, 0, 0)
REPLICA_FAILURE = "ReplicaFailure"


# ---- the status ----------------------------------------------------------------------


def replicaset_status(rs: Obj, pods: list[Obj], now: float) -> Obj:
    """The status for ``rs`` given its counted pods (active, owned, matching); for tests
    and one-off use, the controller keeps the same numbers incrementally."""
    spec = rs.get("spec") or {}
    tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = spec.get("minReadySeconds") or 0
    status = {
        **(rs.get("status") or {}),
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(1 for p in pods if _fully_labeled(tlabels.items(), p)),
        "readyReplicas": sum(1 for p in pods if is_pod_ready(p)),
        "availableReplicas": sum(1 for p in pods if _available(p, min_ready, now)),
    }
    generation = (rs.get("metadata") or {}).get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    return status


def _fully_labeled(template_labels: Iterable[tuple[str, str]], pod: Obj) -> bool:
    labels = labels_of(pod)
    return all(labels.get(k) == v for k, v in template_labels)


def _available(pod: Obj, min_ready: float, now: float) -> bool:
    at = available_at(pod, min_ready)
    return at is not None and at <= now


# ---- the controller ------------------------------------------------------------------


class _ReplicaSet(OwnerState):
    __slots__ = (
        "template_labels",
        "replicas",
        "min_ready",
        "active",
        "labeled",
        "ready",
        "next_available",
        "facts",
        "seen",
        "failure",
    )

    def __init__(self, obj: Obj) -> None:
        super().__init__(obj)
        self.failure: tuple[str, str] | None = None  # (reason, message) of the last refused create or delete

    def configure(self) -> None:
        spec = self.obj.get("spec") or {}
        tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        self.template_labels = tuple(sorted(tlabels.items()))
        replicas = spec.get("replicas")
        self.replicas = 1 if replicas is None else replicas  # apps/v1 defaults to 1
        self.min_ready = spec.get("minReadySeconds") or 0
        self.active = self.labeled = self.ready = 0
        self.next_available: float | None = None
        self.facts: dict[int, Ranked] = {}  # their deletion-ranking facts by id(pod) (pods_to_delete)
        self.seen: dict[PodKey, tuple[Obj, tuple[int, int, int]]] = {}  # each owned pod and its counts


class ReplicaSetReconciler(WorkloadReconciler[_ReplicaSet]):
    """A ReplicaSet's key in; the writes that converge its pods out.

    Incremental: a pod event updates its ReplicaSet's counters (active, fully labeled,
    ready) in O(1) and names its key; a reconcile looks at a ReplicaSet's pods only to
    pick victims or, with minReadySeconds, to count available.
    """

    name = "replicaset"
    KIND = "ReplicaSet"
    COMPONENT = "replicaset-controller"
    watches = (Watches("ReplicaSet", observed=True), Watches("Pod", observed=True))

    def _new_state(self, obj: Obj) -> _ReplicaSet:
        return _ReplicaSet(obj)

    def _create_refused(self, rs: _ReplicaSet | None, pod: Obj, error: StatusError, now: float) -> None:
        super()._create_refused(rs, pod, error, now)
        ref = controller_ref(pod)
        if rs is not None and ref is not None and ref.get("uid") == rs.uid and not isinstance(error, NotAttempted):
            rs.failure = ("FailedCreate", error_text(error))

    def _delete_refused(self, rs: _ReplicaSet | None, key: PodKey, uid: str, error: StatusError, now: float) -> None:
        owned = rs is not None and key in self._index.owned(rs.uid)
        super()._delete_refused(rs, key, uid, error, now)
        if rs is not None and owned and not _not_found(error):
            rs.failure = ("FailedDelete", error_text(error))

    def _claimable(self, pod: Obj) -> bool:
        return is_pod_active(pod)  # upstream claims among active pods only

    def _rebuild(self, rs: _ReplicaSet) -> None:
        rs.configure()
        rs.release = set()
        for key, pod in self._index.owned(rs.uid).items():
            self._pod_changed(rs, key, None, pod)

    def _counts(self, rs: _ReplicaSet, pod: Obj) -> tuple[int, int, int]:
        if not is_pod_active(pod) or not rs.selector.matches(labels_of(pod)):
            return _ZERO
        return 1, int(_fully_labeled(rs.template_labels, pod)), int(is_pod_ready(pod))

    def _rescaled(self, rs: _ReplicaSet) -> bool:
        replicas = (rs.obj.get("spec") or {}).get("replicas")
        rs.replicas = 1 if replicas is None else replicas
        return True

    def _pod_changed(self, rs: _ReplicaSet, key: PodKey, old: Obj | None, new: Obj | None) -> None:
        held = rs.seen.pop(key, None)
        if old is not None:
            # What ``old`` added when it came, unless the pod changed under another owner since.
            a, b, c = held[1] if held is not None and held[0] is old else self._counts(rs, old)
            rs.active, rs.labeled, rs.ready = rs.active - a, rs.labeled - b, rs.ready - c
        if new is not None:
            counts = a, b, c = self._counts(rs, new)
            rs.seen[key] = (new, counts)
            rs.active, rs.labeled, rs.ready = rs.active + a, rs.labeled + b, rs.ready + c
            if is_pod_active(new) and not a:
                rs.release.add(key)  # owned and active but no longer selected
                return
        rs.release.discard(key)

    def _counted(self, rs: _ReplicaSet) -> list[Obj]:
        return [pod for pod, counts in rs.seen.values() if counts[0]]

    def _sync_owner(self, rs: _ReplicaSet, now: float, w: Writes) -> None:
        self._claim(rs, now, w)
        if self._may_manage(rs, now):
            self._manage(rs, now, w)
        if rs.active == rs.replicas:
            rs.failure = None  # as wanted (even while backing off): upstream's next manage has no error
        self._write_status(rs, self._status(rs, now), w)

    def _manage(self, rs: _ReplicaSet, now: float, w: Writes) -> None:
        diff = rs.active - rs.replicas
        if diff < 0:
            n = min(-diff, BURST_REPLICAS)
            rs.exp.expect(n, (), now)
            w.pod_creates.extend(self._new_pod(rs) for _ in range(n))
            return
        if diff == 0:
            return
        victims = pods_to_delete(self._counted(rs), min(diff, BURST_REPLICAS), now, rs.facts)
        victims.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
        rs.exp.expect(0, [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in victims], now)
        for p in victims:
            m = p["metadata"]
            w.pod_deletes.append((m["namespace"], m["name"], m.get("uid", ""), None))
            self._event(rs, SUCCESSFUL_DELETE, f"Deleted pod: {m['name']}", now)

    def _status(self, rs: _ReplicaSet, now: float) -> Obj:
        available, rs.next_available = rs.ready, None
        if rs.min_ready > 0 and rs.ready:
            available, times = 0, []
            for p in self._counted(rs):
                at = available_at(p, rs.min_ready)
                if at is not None and at <= now:
                    available += 1
                elif at is not None:
                    times.append(at)
            rs.next_available = min(times, default=None)
        status = {
            **(rs.obj.get("status") or {}),
            "replicas": rs.active,
            "fullyLabeledReplicas": rs.labeled,
            "readyReplicas": rs.ready,
            "availableReplicas": available,
        }
        if rs.generation is not None:
            status["observedGeneration"] = rs.generation
        return _with_failure(status, rs.failure, now)

    def _wakeups(self, rs: _ReplicaSet, now: float) -> tuple[float | None, ...]:
        return (rs.next_available,)


def _with_failure(status: Obj, failure: tuple[str, str] | None, now: float) -> Obj:
    """``status`` with its ``ReplicaFailure`` condition added (kept as it is if present)
    or removed, as upstream's calculateStatus."""
    conds = list(status.get("conditions") or ())
    present = any(c.get("type") == REPLICA_FAILURE for c in conds)
    if failure is not None and not present:
        reason, message = failure
        cond = {"type": REPLICA_FAILURE, "status": "True", "lastTransitionTime": rfc3339(now)}
        return {**status, "conditions": [*conds, {**cond, "reason": reason, "message": message}]}
    if failure is None and present:
        kept = [c for c in conds if c.get("type") != REPLICA_FAILURE]
        return {**{k: v for k, v in status.items() if k != "conditions"}, **({"conditions": kept} if kept else {})}
    return status


class ReplicaSetController(WorkloadStep):
    """The ReplicaSet controller as the manager runs it."""

    def __init__(self) -> None:
        super().__init__(ReplicaSetReconciler())
