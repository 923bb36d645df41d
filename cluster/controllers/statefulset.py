"""The StatefulSet controller: pods with stable names, created, replaced and rolled in order.

Owns what upstream's ``pkg/controller/statefulset`` decides:
pod ``i`` is ``<set>-<i>`` for i from ``ordinals.start``, with ``hostname`` = its name,
``subdomain`` = ``serviceName`` and the labels ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index`` and ``controller-revision-hash`` (the name of the
ControllerRevision it was made from; ``statefulsetrevisions`` owns those). One sync
(upstream ``updateStatefulSet``), in order:

1. replicas, ascending ordinal: a Failed (or Succeeded) pod is deleted to be created again
   (``RecreatingFailedPod`` / ``RecreatingTerminatedPod``); a missing pod is created at the
   current revision below the partition, at the update revision otherwise. OrderedReady
   stops after a create, and at a pod that is terminating, not Running and Ready, or not yet
   available (minReadySeconds): successors wait for their predecessors.
2. condemned pods (ordinals outside the range), highest first: OrderedReady deletes one and
   waits for it to go, and blocks while a condemned pod other than the first unhealthy one
   is not Running, Ready and available; Parallel deletes them all at once.
3. OnDelete stops here. RollingUpdate: from the highest ordinal down to ``partition``, the
   first pod not at the update revision is deleted (it comes back at the update revision
   under the same name, after its DELETED event), and an unhealthy pod on the way waits.
4. Status (``statefulset_status``): replicas, ready, available, current and updated counts,
   currentRevision / updateRevision (the update becomes current once every pod is updated
   and ready under RollingUpdate), collisionCount, observedGeneration; then revisions past
   ``revisionHistoryLimit`` that no pod uses are deleted.

Who calls it: the controller-manager runs ``StatefulSetController``, a
``workloadstep.WorkloadStep`` over a ``StatefulSetReconciler``, with StatefulSet, Pod and
ControllerRevision events; a reconcile of a set's key returns ControllerRevisions to
create, to adopt or renumber and to delete (Background), pods to create by name, to adopt
or relabel and to delete, the status and Events. A refused write comes back as the set's
next reconcile (``_create_refused``, ``_delete_refused``, ``_other_refused``); a refused
create or delete backs the set off through its work queue.

One pod slot (an ordinal in range), as the sync sees it:

| state       | how it is left                                 | the sync                             |
|-------------|------------------------------------------------|--------------------------------------|
| missing     | a create is sent                               | create (OrderedReady: then stop)     |
| creating    | ADDED (``SuccessfulCreate``), a refusal, or    | OrderedReady: stop                   |
|             | 300 s without either                           |                                      |
| unhealthy   | Running, Ready (and available)                 | OrderedReady: stop                   |
| finished    | (Failed/Succeeded) deleted                     | delete, Recreating* event;           |
|             |                                                | OrderedReady: stop                   |
| terminating | DELETED: missing again (``SuccessfulDelete``   | OrderedReady: stop                   |
|             | once the delete sent is seen)                  |                                      |
| healthy     | out of date and its turn (RollingUpdate)       | labels repaired; delete when rolled  |

Kubemu's choices: writes land after the sync, so a pod is created again only once the old
one is gone from the watch (never in the sync that deleted it); a create not yet seen is
remembered by name (a refused one is forgotten; AlreadyExists without an Event) and a
delete not yet seen by uid, each for at most 300 s. ``SuccessfulCreate`` and
``SuccessfulDelete`` are recorded when the watch shows the write landed, ``Failed*`` when
it is refused. A pod recreated because it finished backs off per ordinal (5 ms doubling,
reset once the ordinal's pod is Running and Ready): upstream recreates at once, which at one
emulated instant would never end. Orphan pods named ``<set>-<n>`` and orphan
ControllerRevisions the selector matches are adopted; an owned pod whose labels stop
matching is released, one that matches under another name is ignored (upstream releases
it). A set being deleted only reports status (its pods and revisions are the garbage
collector's). Claims from volumeClaimTemplates: ``statefulsetclaims.py``. Not modelled: ``maxUnavailable``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..api.errors import AlreadyExists, NotAttempted, NotFound, StatusError
from ..api.objects import is_terminal, is_terminating, labels_of, name_of, namespace_of, phase_of, uid_of
from ..api.requests import Create, Delete, Request, Update
from .ownedpods import (
    EXPECTATIONS_TIMEOUT,
    Backoff,
    Change,
    OwnerState,
    PodKey,
    _key,
    available_at,
    base_pod,
    controller_ref,
    error_text,
    is_pod_ready,
)
from .reconciler import Obj, Watches
from .statefulsetclaims import add_claims, release_claims
from .statefulsetrevisions import RevisionBook, RevisionIndex, RevisionPlan, pod_revision_for, template_of
from .workload import WorkloadReconciler, Writes
from .workloadstep import WorkloadStep

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"


def member_ordinal(set_name: str, pod_name: str) -> int | None:
    """The ordinal of ``<set>-<n>`` (upstream getParentNameAndOrdinal), or None."""
    prefix = set_name + "-"
    digits = pod_name[len(prefix) :] if pod_name.startswith(prefix) else ""
    if not digits.isascii() or not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
        return None
    return int(digits)


@dataclass(slots=True)
class Replica:
    """One ordinal as a sync found it, and what that sync did to it."""

    ordinal: int
    name: str
    pod: Obj | None  # None: missing, or created and not yet seen
    revision: str
    creating: bool = False
    deleting: bool = False  # deletionTimestamp set, or our delete sent and not yet seen
    acted: bool = False  # deleted by this sync
    replaced: bool = False  # a finished pod being deleted to be created again

    @property
    def running_ready(self) -> bool:
        return self.pod is not None and phase_of(self.pod) == "Running" and is_pod_ready(self.pod)

    @property
    def healthy(self) -> bool:
        return self.running_ready and not (self.deleting or self.acted)


class _Set(OwnerState):
    __slots__ = ("awaiting", "deleting", "recreations", "wake")

    def configure(self) -> None:
        self.awaiting: dict[str, tuple[str, float]] = {}  # pod name -> (revision, sent at)
        self.deleting: dict[str, float] = {}  # pod uid -> sent at
        self.recreations: dict[int, Backoff] = {}  # ordinal -> backoff of finished-pod recreation
        self.wake: float | None = None


class StatefulSetReconciler(WorkloadReconciler[_Set]):
    """A StatefulSet's key in; the writes for its pods, claims and revisions out."""

    name = "statefulset"
    KIND = "StatefulSet"
    COMPONENT = "statefulset-controller"
    watches = tuple(Watches(k, observed=True) for k in ("StatefulSet", "Pod", "ControllerRevision"))

    def __init__(self) -> None:
        super().__init__()
        self._book = RevisionBook()

    def _new_state(self, obj: Obj) -> _Set:
        st = _Set(obj)
        st.configure()
        return st

    def _claimable(self, pod: Obj) -> bool:
        return not is_terminating(pod)

    def _releasable(self, st: _Set, pod: Obj) -> bool:
        if is_terminating(pod):
            return False
        return not st.selector.matches(labels_of(pod)) or member_ordinal(st.name, name_of(pod)) is None

    def _rebuild(self, st: _Set) -> None:
        st.release = {key for key, pod in self._index.owned(st.uid).items() if self._releasable(st, pod)}

    def _pod_changed(self, st: _Set, key: PodKey, old: Obj | None, new: Obj | None) -> None:
        if old is not None and (new is None or is_terminating(new) or uid_of(new) != uid_of(old)):
            if st.deleting.pop(uid_of(old), None) is not None:
                message = f"delete Pod {key[1]} in StatefulSet {st.name} successful"
                self._event(st, "SuccessfulDelete", message, self._now)
        if new is not None and self._releasable(st, new):
            st.release.add(key)
        else:
            st.release.discard(key)

    def _observed(self, st: _Set, ch: Change, now: float) -> None:
        if st.awaiting.pop(ch.key[1], None) is None:
            return
        self._event(st, "SuccessfulCreate", f"create Pod {ch.key[1]} in StatefulSet {st.name} successful", now)

    def _on_other(self, kind: str, etype: str, obj: Obj, now: float) -> None:
        if kind != "ControllerRevision":
            return
        for rev in self._book.observe(etype, obj):
            self._revision_touched(rev)

    def _revision_touched(self, rev: Obj) -> None:
        owner = RevisionIndex.owner_of(rev)
        if owner:
            if owner in self._owners:
                self._mark(self._owners[owner])
            return
        labels = labels_of(rev)
        for st in self._by_ns.get(namespace_of(rev), {}).values():
            if st.selector.matches(labels):
                self._mark(st)

    # -- refusals (read by the reconcile of the set's key) ---------------------------------
    def _create_refused(self, st: _Set | None, pod: Obj, error: StatusError, now: float) -> None:
        """A pod create was refused: forget it (``workload.backs_off`` backs the set off);
        AlreadyExists records no Event (upstream sinks it: the pod is there, the watch will
        show it), nor does a create an earlier Parallel slow-start batch left unattempted."""
        if st is None or self._owner_of(pod) is not st or st.awaiting.pop(name_of(pod), None) is None:
            return
        if not isinstance(error, (NotAttempted, AlreadyExists)):
            message = f"create Pod {name_of(pod)} in StatefulSet {st.name} failed error: {error_text(error)}"
            self._event(st, "FailedCreate", message, now, "Warning")

    def _delete_refused(self, st: _Set | None, key: PodKey, uid: str, error: StatusError, now: float) -> None:
        got = self._index.get(key)
        if st is None or got is None or got[0] != st.uid or st.deleting.pop(uid, None) is None:
            return  # not a delete of ours (pod GC, eviction)
        if not isinstance(error, NotFound):
            message = f"delete Pod {key[1]} in StatefulSet {st.name} failed error: {error_text(error)}"
            self._event(st, "FailedDelete", message, now, "Warning")

    def _other_refused(self, st: _Set | None, req: Request, error: StatusError, now: float) -> None:
        """A revision create, adoption or renumbering refused is forgotten; a revision
        delete refused is asked again."""
        if isinstance(req, (Create, Update)) and req.obj.get("kind") == "ControllerRevision":
            self._book.refused(req.obj)
        elif isinstance(req, Delete) and req.kind == "ControllerRevision":
            self._book.delete_failed((req.namespace, req.name))

    def _owner_of(self, obj: Obj) -> _Set | None:
        ref = controller_ref(obj)
        if ref is None or ref.get("kind") != self.KIND:
            return None
        return self._owners.get(ref.get("uid", ""))

    # -- the reconcile ---------------------------------------------------------------------
    def _sync_owner(self, st: _Set, now: float, w: Writes) -> None:
        st.wake = None
        act = not is_terminating(st.obj) and not st.selector.matches_nothing and not self._backing_off
        if not st.selector.matches_nothing:
            st.candidates = {k for k in st.candidates if member_ordinal(st.name, k[1]) is not None}
            self._claim(st, now, w)
        plan = self._book.plan(st.obj, lambda rev: st.selector.matches(labels_of(rev)), act, w.creates, w.updates)
        replicas, condemned = self._view(st, now)
        rolled = self._manage(st, plan, replicas, condemned, now, w) if act else False
        self._write_status(st, self._status(st, plan, replicas + condemned, rolled, now), w)
        if act:
            live = {name_of(plan.current), name_of(plan.update)}
            live.update(r.revision for r in replicas + condemned if r.pod is not None)
            self._book.truncate(st.obj, plan, live, now, w.deletes)

    def _view(self, st: _Set, now: float) -> tuple[list[Replica], list[Replica]]:
        """The replicas (ordinals in range, ascending) and the condemned pods (highest first)."""
        for name, (_, sent) in list(st.awaiting.items()):
            if sent + EXPECTATIONS_TIMEOUT <= now:
                del st.awaiting[name]
        for uid, sent in list(st.deleting.items()):
            if sent + EXPECTATIONS_TIMEOUT <= now:
                del st.deleting[uid]
        members: dict[int, Obj] = {}
        for (_, name), owned in self._index.owned(st.uid).items():
            ordinal = member_ordinal(st.name, name)
            if ordinal is not None:
                members[ordinal] = owned
        spec = st.obj.get("spec") or {}
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        count = spec.get("replicas")
        replicas = []
        for ordinal in range(start, start + (1 if count is None else int(count))):
            name = f"{st.name}-{ordinal}"
            pod = members.pop(ordinal, None)
            if pod is not None:
                r = self._replica(st, ordinal, pod)
                r.replaced = r.deleting and is_terminal(pod)
            elif name in st.awaiting:
                r = Replica(ordinal, name, None, st.awaiting[name][0], creating=True)
            else:
                r = Replica(ordinal, name, None, "")
            replicas.append(r)
        condemned = [self._replica(st, o, members[o]) for o in sorted(members, reverse=True)]
        return replicas, condemned

    def _replica(self, st: _Set, ordinal: int, pod: Obj) -> Replica:
        deleting = is_terminating(pod) or uid_of(pod) in st.deleting
        return Replica(ordinal, name_of(pod), pod, labels_of(pod).get(REVISION_LABEL, ""), deleting=deleting)

    def _manage(
        self, st: _Set, plan: RevisionPlan, replicas: list[Replica], condemned: list[Replica], now: float, w: Writes
    ) -> bool:
        """Steps 1-3 of the module docstring; True when a pod was deleted to roll it."""
        spec = st.obj.get("spec") or {}
        monotonic = spec.get("podManagementPolicy") != "Parallel"
        min_ready = float(spec.get("minReadySeconds") or 0)
        first_unhealthy = next((r for r in [*replicas, *reversed(condemned)] if not r.healthy), None)
        for r in replicas:
            if self._process_replica(st, plan, r, monotonic, min_ready, now, w) and monotonic:
                return False
        for r in condemned:
            if self._process_condemned(st, r, monotonic, r is first_unhealthy, min_ready, now, w) and monotonic:
                return False
        strategy = spec.get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return False  # OnDelete: a pod takes the new template only when someone deletes it
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for r in reversed(replicas[partition:]):
            if r.pod is None:
                return False  # its replacement is not there yet
            if r.revision != name_of(plan.update) and not (r.deleting or r.acted):
                self._delete(st, r, now, w)
                return True
            if not r.healthy:
                return False
        return False

    def _process_replica(
        self, st: _Set, plan: RevisionPlan, r: Replica, monotonic: bool, min_ready: float, now: float, w: Writes
    ) -> bool:
        """True where an OrderedReady set stops (Parallel goes on regardless)."""
        if r.pod is None:
            if not r.creating:
                self._create(st, plan, r, now, w)
            return True
        if is_terminal(r.pod):
            if not r.deleting:
                self._recreate(st, r, now, w)
            return True
        if r.running_ready:
            st.recreations.pop(r.ordinal, None)
        if monotonic and not self._available(st, r, min_ready, now):
            return True
        self._repair_identity(st, r, now, w)
        return False

    def _process_condemned(
        self, st: _Set, r: Replica, monotonic: bool, first_unhealthy: bool, min_ready: float, now: float, w: Writes
    ) -> bool:
        if r.deleting:
            return True  # OrderedReady waits for it to be gone
        if monotonic and not first_unhealthy and not self._available(st, r, min_ready, now):
            return True
        release_claims(st.obj, r.pod, r.ordinal, w.requests)  # whenScaled: Delete (statefulsetclaims.py)
        self._delete(st, r, now, w)
        return True

    def _available(self, st: _Set, r: Replica, min_ready: float, now: float) -> bool:
        """Running, Ready, not terminating and ready for minReadySeconds (else a wakeup then)."""
        if r.deleting or r.acted or not r.running_ready:
            return False
        assert r.pod is not None
        at = available_at(r.pod, min_ready)
        if at is not None and at > now:
            st.wake = at if st.wake is None else min(st.wake, at)
        return at is not None and at <= now

    # -- pod writes ------------------------------------------------------------------------
    def _create(self, st: _Set, plan: RevisionPlan, r: Replica, now: float, w: Writes) -> None:
        spec = st.obj.get("spec") or {}
        rev = pod_revision_for(st.obj, r.ordinal, plan)
        template = template_of(rev) or spec.get("template") or {}
        pod = base_pod({**st.obj, "spec": {**spec, "template": template}}, self.KIND)
        m = pod["metadata"]
        del m["generateName"]
        m["name"] = r.name
        m["labels"].update({POD_NAME_LABEL: r.name, POD_INDEX_LABEL: str(r.ordinal), REVISION_LABEL: name_of(rev)})
        pod["spec"]["hostname"] = r.name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        add_claims(st.obj, pod, r.ordinal, w.creates)  # volumeClaimTemplates (statefulsetclaims.py)
        st.awaiting[r.name] = (name_of(rev), now)
        r.creating, r.revision = True, name_of(rev)
        w.pod_creates.append(pod)

    def _recreate(self, st: _Set, r: Replica, now: float, w: Writes) -> None:
        assert r.pod is not None
        backoff = st.recreations.setdefault(r.ordinal, Backoff())
        if not backoff.ready(now):
            st.wake = backoff.retry_at if st.wake is None else min(st.wake, backoff.retry_at)
            return
        if phase_of(r.pod) == "Failed":
            reason, kind, word = "RecreatingFailedPod", "Warning", "failed"
        else:
            reason, kind, word = "RecreatingTerminatedPod", "Normal", "terminated"
        self._event(st, reason, f"StatefulSet {st.ns}/{st.name} is recreating {word} Pod {r.name}", now, kind)
        self._delete(st, r, now, w)
        r.replaced = True
        backoff.fail(now)

    def _delete(self, st: _Set, r: Replica, now: float, w: Writes) -> None:
        assert r.pod is not None
        uid = uid_of(r.pod)
        w.pod_deletes.append((namespace_of(r.pod), r.name, uid, None))
        st.deleting[uid] = now
        r.acted = True

    def _repair_identity(self, st: _Set, r: Replica, now: float, w: Writes) -> None:
        """Put back the identity labels someone removed (upstream UpdateStatefulPod)."""
        assert r.pod is not None
        labels = labels_of(r.pod)
        want = {POD_NAME_LABEL: r.name, POD_INDEX_LABEL: str(r.ordinal)}
        key = _key(r.pod)
        if all(labels.get(k) == v for k, v in want.items()) or key in self._claims or self._is_blocked(key, r.pod):
            return
        fixed = {**r.pod, "metadata": {**r.pod["metadata"], "labels": {**labels, **want}}}
        self._send_claim(key, r.pod, fixed, now, w)

    # -- status and history ----------------------------------------------------------------
    def _status(self, st: _Set, plan: RevisionPlan, pods: list[Replica], rolled: bool, now: float) -> Obj:
        spec = st.obj.get("spec") or {}
        min_ready = float(spec.get("minReadySeconds") or 0)
        current_name, update_name = name_of(plan.current), name_of(plan.update)
        created = ready = available = current = updated = 0
        for r in pods:
            if r.pod is None or r.replaced:
                continue
            created += 1
            if r.running_ready:
                ready += 1
                at = available_at(r.pod, min_ready)
                if at is not None and at <= now:
                    available += 1
                elif at is not None:
                    st.wake = at if st.wake is None else min(st.wake, at)
            if not r.deleting:
                current += r.revision == current_name
                updated += r.revision == update_name
        if rolled:
            current -= 1  # the pod just deleted is no longer current
        rolling = ((spec.get("updateStrategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate"
        if rolling and updated == created and ready == created:
            current_name, current = update_name, updated  # the rollout is complete
        status = {
            **(st.obj.get("status") or {}),
            "replicas": created,
            "readyReplicas": ready,
            "availableReplicas": available,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": plan.collisions,
        }
        if st.generation is not None:
            status["observedGeneration"] = st.generation
        return status

    def _wakeups(self, st: _Set, now: float) -> tuple[float | None, ...]:
        sent = [t for _, t in st.awaiting.values()] + list(st.deleting.values())
        return st.wake, (min(sent) + EXPECTATIONS_TIMEOUT if sent else None)

    # -- reads -----------------------------------------------------------------------------
    def revisions(self, namespace: str, name: str) -> list[Obj]:
        """The ControllerRevisions of a StatefulSet as this controller knows them, oldest first."""
        st = self._owners.get(self._by_key.get((namespace, name), ""))
        return self._book.of(st.uid) if st is not None else []


class StatefulSetController(WorkloadStep):
    """The StatefulSet controller as the manager runs it."""

    reconciler: StatefulSetReconciler

    def __init__(self) -> None:
        super().__init__(StatefulSetReconciler())

    def revisions(self, namespace: str, name: str) -> list[Obj]:
        return self.reconciler.revisions(namespace, name)
