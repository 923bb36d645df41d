"""The writes a controller asks for, and the order they land in.

Owns ``Writes``, what a controller's ``sync(now)`` returns: typed requests of
``cluster/api/requests.py`` (``requests``: what reconcilers return) and Events (``events``:
drafts the manager's correlator completes), plus one list of plain tuples per kind of
write for the controllers not yet written as reconcilers. ``ORDER`` is the order writes
land in, one row per kind of write: a pod's DisruptionTarget condition or Failed phase
before its delete, a namespace's Terminating phase before its content goes, the removal
of a finalizer, which may let its object go, after every other write, Events last, so a
report never shows an Event for a write that was not made. ``rank`` places a typed
request in its row (the row of the tuple field the same write would have been put in);
``ranked`` and ``requests`` sort a sync's writes by row, stably, so one controller's
writes of a row keep their order and a merged sync keeps its controllers' order within
a row. A refused request comes back to the reconciler whose key asked for it
(``reconciler.ReconcilerStep.on_failed``).

Deletes come in two shapes. Pod deletes that name no propagation policy (the workload
controllers, pod GC, taint eviction: upstream's pod deletes send none) land with the
pods' writes; deletes that name one (the garbage collector's, the namespace controller's,
a Job's TTL) land after them, as upstream's cascades.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from ..api.events import built
from ..api.patches import (
    FinalizeNamespace,
    NodeConditions,
    NodeTaints,
    PodConditions,
    RemoveFinalizer,
    RemoveOwnerReferences,
)
from ..api.requests import Create, Delete, Patch, RecordEvent, Request, Update, UpdateStatus


@dataclass
class Writes:
    node_conditions: list[Any] = field(default_factory=list)  # (node, [conditions])
    node_taints: list[Any] = field(default_factory=list)  # (node, taints to add, taints to remove)
    # Full objects of any kind but Pod (a Deployment's ReplicaSets, a CronJob's Jobs, a
    # StatefulSet's ControllerRevisions), created before any pod.
    creates: list[Any] = field(default_factory=list)
    # Full objects of any kind but Pod carrying the resourceVersion they were read at (a
    # stale one is a Conflict): a ReplicaSet scaled by its Deployment, an HPA's target.
    updates: list[Any] = field(default_factory=list)
    pod_creates: list[Any] = field(default_factory=list)  # full Pod dicts (ReplicaSet, DaemonSet)
    # Full Pod dicts carrying the resourceVersion they were read at: ownerReference
    # adoptions and releases.
    pod_updates: list[Any] = field(default_factory=list)
    pod_conditions: list[Any] = field(default_factory=list)  # (ns, name, uid, [conditions], None)
    pod_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    pod_deletes: list[Any] = field(default_factory=list)  # (ns, name, uid, grace)
    namespace_status: list[Any] = field(default_factory=list)  # ("", name, uid, status)
    owner_refs: list[Any] = field(default_factory=list)  # (kind, ns, name, uid, owner uids to drop[, unblock the rest])
    deletes: list[Any] = field(default_factory=list)  # (kind, ns, name, uid, propagation): cascades
    pdb_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    replicaset_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    daemonset_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    deployment_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    statefulset_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    job_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    cronjob_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    hpa_status: list[Any] = field(default_factory=list)  # (ns, name, uid, status)
    # Typed requests from reconcilers (``reconciler.py``), sent as they are.
    requests: list[Any] = field(default_factory=list)
    finalizers: list[Any] = field(default_factory=list)  # (kind, ns, name, uid, metadata finalizer to drop)
    namespace_finalize: list[Any] = field(default_factory=list)  # (name, uid): drop spec.finalizers' kubernetes
    events: list[Any] = field(default_factory=list)  # Event objects, or ``EventDraft``s of them

    def extend(self, other: Writes) -> None:
        for f in fields(self):
            getattr(self, f.name).extend(getattr(other, f.name))

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def count(self) -> int:
        return sum(len(getattr(self, f.name)) for f in fields(self))


def _status(kind: str) -> Callable[[Any], Request]:
    return lambda item: UpdateStatus(kind, item[0], item[1], item[2] or "", item[3])


# (Writes field, how an item becomes a request), in the order they are sent.
ORDER: tuple[tuple[str, Callable[[Any], Request] | None], ...] = (
    ("node_conditions", lambda item: Patch("Node", "", item[0], "", NodeConditions(tuple(item[1])))),
    ("node_taints", lambda item: Patch("Node", "", item[0], "", NodeTaints(tuple(item[1]), tuple(item[2])))),
    ("creates", Create),
    ("updates", Update),
    ("pod_creates", None),  # as slow starts: ``_slow_start``
    ("pod_updates", Update),
    ("pod_conditions", lambda item: Patch("Pod", item[0], item[1], item[2], PodConditions(tuple(item[3]), item[4]))),
    ("pod_status", _status("Pod")),
    ("pod_deletes", lambda item: Delete("Pod", item[0], item[1], item[2] or "", item[3])),
    ("namespace_status", _status("Namespace")),
    (
        "owner_refs",
        lambda item: Patch(item[0], item[1], item[2], item[3], RemoveOwnerReferences(tuple(item[4]), *item[5:])),
    ),
    ("deletes", lambda item: Delete(item[0], item[1], item[2], item[3], None, item[4])),
    ("pdb_status", _status("PodDisruptionBudget")),
    ("replicaset_status", _status("ReplicaSet")),
    ("daemonset_status", _status("DaemonSet")),
    ("deployment_status", _status("Deployment")),
    ("statefulset_status", _status("StatefulSet")),
    ("job_status", _status("Job")),
    ("cronjob_status", _status("CronJob")),
    ("hpa_status", _status("HorizontalPodAutoscaler")),
    ("requests", lambda item: item),
    # A finalizer may be the last thing holding its object: after every other write about it.
    ("finalizers", lambda item: Patch(item[0], item[1], item[2], item[3], RemoveFinalizer(item[4]))),
    ("namespace_finalize", lambda item: Patch("Namespace", "", item[0], item[1], FinalizeNamespace())),
    ("events", lambda item: RecordEvent(built(item))),  # drafts the spam filter did not build
)


_SLOT = {name: i for i, (name, _) in enumerate(ORDER)}
_STATUS_SLOT = {
    "Pod": _SLOT["pod_status"],
    "Namespace": _SLOT["namespace_status"],
    "PodDisruptionBudget": _SLOT["pdb_status"],
    "ReplicaSet": _SLOT["replicaset_status"],
    "DaemonSet": _SLOT["daemonset_status"],
    "Deployment": _SLOT["deployment_status"],
    "StatefulSet": _SLOT["statefulset_status"],
    "Job": _SLOT["job_status"],
    "CronJob": _SLOT["cronjob_status"],
    "HorizontalPodAutoscaler": _SLOT["hpa_status"],
}
_PATCH_SLOT = {
    NodeConditions: _SLOT["node_conditions"],
    NodeTaints: _SLOT["node_taints"],
    PodConditions: _SLOT["pod_conditions"],
    RemoveOwnerReferences: _SLOT["owner_refs"],
    RemoveFinalizer: _SLOT["finalizers"],
    FinalizeNamespace: _SLOT["namespace_finalize"],
}
_OTHER = _SLOT["requests"]


def rank(req: Request) -> int:
    """Where a typed request lands among a sync's writes: its ``ORDER`` row (the row of the
    ``Writes`` field the same write would have been put in); writes no row names land at
    the ``requests`` row."""
    if isinstance(req, Patch):
        return _PATCH_SLOT.get(type(req.patch), _OTHER)
    if isinstance(req, UpdateStatus):
        return _STATUS_SLOT.get(req.kind, _OTHER)
    if isinstance(req, Create):
        return _SLOT["pod_creates"] if req.obj.get("kind") == "Pod" else _SLOT["creates"]
    if isinstance(req, Update):
        return _SLOT["pod_updates"] if req.obj.get("kind") == "Pod" else _SLOT["updates"]
    if isinstance(req, Delete):
        return _SLOT["pod_deletes"] if req.kind == "Pod" and not req.propagation else _SLOT["deletes"]
    if isinstance(req, RecordEvent):
        return _SLOT["events"]
    return _OTHER


def ranked(w: Writes) -> list[tuple[int, Request]]:
    """``w``'s writes but its events as typed requests, each with its ``rank``, in that order
    (stable: a controller's writes of one row keep the order it made them in)."""
    out: list[tuple[int, Request]] = []
    if not any(vars(w).values()):
        return out  # most syncs of most controllers write nothing: skip the walk over ORDER
    for slot, (name, make) in enumerate(ORDER):
        if name in ("requests", "events"):
            continue
        items = getattr(w, name)
        if items:
            maker = Create if make is None else make
            out += [(slot, maker(item)) for item in items]
    if w.requests:
        out += [(rank(r), r) for r in w.requests]
        out.sort(key=_first)
    return out


def _first(pair: tuple[int, Request]) -> int:
    return pair[0]


def requests(w: Writes) -> list[Request]:
    """``w`` as typed requests, in ``ORDER``: a stable sort by ``rank``, so writes of one
    row keep their order (a merged ``Writes``, ``ControllerManager.sync``'s, holds its
    controllers' writes in controller order); a pod create with a controller gets its
    slow-start batch; events last."""
    out = _slow_start(ranked(w))
    out += [RecordEvent(built(item)) for item in w.events]
    return out


def _slow_start(pairs: list[tuple[int, Request]]) -> list[Request]:
    """One owner's pod creates of one sync, as upstream's slowStartBatch sends them: in
    batches of 1, 2, 4, ... (the i-th create is in batch log2(i + 1)); once one is refused,
    the apiserver attempts none of the owner's later batches (``Create.slow_start``). A
    create that names its batch already keeps it."""
    sent: dict[str, int] = {}
    out: list[Request] = []
    pod_creates = _SLOT["pod_creates"]
    for slot, req in pairs:
        if slot == pod_creates and isinstance(req, Create) and req.slow_start is None:
            uid = _controller_uid(req.obj)
            if uid:
                i = sent.get(uid, 0)
                sent[uid] = i + 1
                req = Create(req.obj, (uid, (i + 1).bit_length() - 1))
        out.append(req)
    return out


def _controller_uid(pod: dict[str, Any]) -> str:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


_STATUS_ROW = {kind: ORDER[slot][0] for kind, slot in _STATUS_SLOT.items()}


def status_row(kind: str) -> str:
    """The ``Writes`` row a ``kind``'s status write lands in ("requests" for the others)."""
    return _STATUS_ROW.get(kind, "requests")


def as_rows(w: Writes, into: Writes) -> Writes:
    """``w``'s typed requests put in ``into``'s rows where a row holds them as they are
    (``ranked`` makes the same requests of them again), the rest left as requests; the
    events follow. A ``workloadstep.WorkloadStep`` answers its sync so."""
    for req in w.requests:
        if isinstance(req, Create) and req.slow_start is None:
            (into.pod_creates if req.obj.get("kind") == "Pod" else into.creates).append(req.obj)
        elif isinstance(req, Update):
            (into.pod_updates if req.obj.get("kind") == "Pod" else into.updates).append(req.obj)
        elif isinstance(req, Delete) and req.kind == "Pod" and not req.propagation:
            into.pod_deletes.append((req.namespace, req.name, req.uid, req.grace))
        elif isinstance(req, Delete) and req.propagation and req.grace is None:
            into.deletes.append((req.kind, req.namespace, req.name, req.uid, req.propagation))
        elif isinstance(req, UpdateStatus) and req.kind in _STATUS_ROW and req.meta is None:
            getattr(into, _STATUS_ROW[req.kind]).append((req.namespace, req.name, req.uid, req.status))
        else:
            into.requests.append(req)
    into.events += w.events
    return into
