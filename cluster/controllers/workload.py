"""What the ReplicaSet and DaemonSet controllers share: ownership, expectations, writes.

Owns the machinery both workload controllers run on, as upstream's ``controller_utils``
and ``ControllerRefManager`` provide it to kube-controller-manager:

- ``PodIndex``: the pods a controller cares about, indexed by controller uid (orphans by
  namespace), so an event costs O(1) and a reconcile looks only at its owner's pods;
- ``Expectations`` (upstream's ControlleeExpectations with uid-tracked deletes);
- ``WorkloadReconciler``: a ``Reconciler`` (``reconciler.py``) keyed by owner: it observes
  its kinds' events itself (``Watches.observed``: the pod index and the expectations are
  informer-side state, as upstream's event handlers keep them) and names the owners an
  event touches; ``reconcile(key, now)`` reads the owner's refused writes, claims (adopt
  orphans, release pods whose labels no longer match), manages and writes status.
  ``replicaset.ReplicaSetReconciler`` and ``daemonset.DaemonSetReconciler`` subclass it
  and decide what each owner needs.

Who calls it: ``workloadstep.WorkloadStep``, the ``ReconcilerStep`` the controller-manager
(``manager.py``) runs each in: one rate-limited work queue, keys in key order, up to
``PASSES`` rounds a sync (a claim can name another owner), refusals due at once. A refused
create or delete backs its owner off: the reconcile that reads it returns an ``error``
and the key is held for the queue's back-off (5 ms doubling to 1,000 s), during which a
reconcile still claims and writes status but manages nothing. Reporting failures is
optional: an expectation nobody fulfils expires after ``EXPECTATIONS_TIMEOUT``, so a lost
or failed write delays an owner, never wedges it.

An owner's lifecycle (each reconcile of its key applies this table):

| state                          | how it is left                               | sync does                       |
|--------------------------------|----------------------------------------------|---------------------------------|
| satisfied (nothing pending)    | sync asks for n creates / deletes            | claim, manage, status           |
| pending (adds > 0 or dels)     | each ADDED pod / each pod seen terminating   | claim, status (no manage)       |
|                                | or gone lowers it; a reported failure too    |                                 |
| expired (pending for 300 s)    | counts as satisfied: the next sync manages   | claim, manage, status           |
| backing off (a write refused)  | the work queue's back-off ends               | claim, status (no manage)       |
| terminating (deletionTimestamp)| DELETED                                      | status only                     |
| deleted (DELETED seen)         | (forgotten; its key reconciles to nothing)   | nothing                         |

A deleted owner's pods are the garbage collector's (``garbagecollector.py``), as upstream:
it deletes them (Background), waits for them (Foreground) or strips their ownerReference
(Orphan). An owner being deleted neither adopts nor releases pods, and manages none.

Slow start, as upstream: one sync asks for up to ``BURST_REPLICAS`` creates; they are sent
as one slowStartBatch (batches of 1, 2, 4, ... in one write call, ``writes.requests``), and
the apiserver stops at the first batch with a refused create, answering the later ones
``NotAttempted``, which only lowers the expectations (no Event, no backoff).

Deviations from upstream, on purpose:

- A ``SuccessfulCreate`` Event is recorded when the new pod is observed (its name comes
  from ``generateName``, so it is known only then), and only while creates are expected,
  so a relist after a restart records none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ..api.codec import decode, encode
from ..api.errors import NotAttempted, StatusError
from ..api.events import EventDraft
from ..api.objects import is_terminating, labels_of, uid_of
from ..api.requests import Create, Delete, Request, Update, UpdateStatus
from .ownedpods import (  # noqa: F401 (re-exported for the two controllers)
    EXPECTATIONS_TIMEOUT,
    Backoff,
    Change,
    Expectations,
    OwnerState,
    ParkedPods,
    PodIndex,
    PodKey,
    _key,
    _not_found,
    _with_refs,
    available_at,
    base_pod,
    controller_ref,
    error_text,
    is_pod_active,
    is_pod_ready,
    owner_reference,
    ready_since,
    selector_of,
)
from .reconciler import Indexer, Obj, ObjectCache, Outcome, Watches
from .writes import Writes, ranked

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "BURST_REPLICAS",
    "Writes",
    "PodIndex",
    "Change",
    "Expectations",
    "OwnerState",
    "WorkloadReconciler",
    "controller_ref",
    "owner_reference",
    "is_pod_active",
    "is_pod_ready",
    "ready_since",
    "available_at",
    "selector_of",
    "base_pod",
    "PodKey",
]

# Upstream's burstReplicas: at most this many creates (and deletes) per owner per sync.
BURST_REPLICAS = 500
# Passes of a sync (``ReconcilerStep(passes=...)``): claiming a pod can name another
# owner within one sync.
PASSES = 3

SUCCESSFUL_CREATE, FAILED_CREATE = "SuccessfulCreate", "FailedCreate"
SUCCESSFUL_DELETE, FAILED_DELETE = "SuccessfulDelete", "FailedDelete"

StateT = TypeVar("StateT", bound=OwnerState)  # a subclass's per-owner state


def backs_off(req: Request, error: StatusError) -> bool:
    """Whether a refused write backs its owner off (``ReconcilerStep(backs_off=...)``): a
    pod create (not one left unattempted by its slow start), a pod delete (not one of a
    pod already gone), a ControllerRevision create or adoption. A refused claim or status
    write is only undone or written again."""
    if isinstance(req, Create):
        return req.obj.get("kind") == "ControllerRevision" or not isinstance(error, NotAttempted)
    if isinstance(req, Delete):
        return req.kind == "Pod" and not req.propagation and not _not_found(error)
    return isinstance(req, Update) and req.obj.get("kind") == "ControllerRevision"


class WorkloadReconciler(Generic[StateT]):
    """Event observation, claiming, refusals and the reconcile of one owner.

    Subclasses set ``KIND``, ``COMPONENT``, ``name`` and ``watches`` and implement:
    ``_new_state(obj)`` (their ``OwnerState``), ``_rebuild(st)`` (recompute everything from
    the owned pods, after a spec change), ``_pod_changed(st, key, old, new)`` (a pod of
    ``st`` changed; keep ``st.release`` up to date), ``_claimable(pod)`` and
    ``_sync_owner(st, now, writes)``; the optional hooks are at the end.
    """

    if TYPE_CHECKING:  # the required hooks, as the subclasses implement them

        def _new_state(self, obj: Obj) -> StateT: ...
        def _rebuild(self, st: StateT) -> None: ...
        def _pod_changed(self, st: StateT, key: PodKey, old: Obj | None, new: Obj | None) -> None: ...
        def _claimable(self, pod: Obj) -> bool: ...
        def _sync_owner(self, st: StateT, now: float, w: Writes) -> None: ...

    KIND = COMPONENT = ""
    name: ClassVar[str] = ""
    watches: ClassVar[tuple[Watches, ...]] = ()  # every kind ``observed``: the state is this class's
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache | None = None) -> None:
        self.cache = cache if cache is not None else ObjectCache()  # read for refusals and back-off
        self._index = PodIndex(self.KIND)
        self._owners: dict[str, StateT] = {}
        self._by_key: dict[PodKey, str] = {}
        self._by_ns: dict[str, dict[str, StateT]] = {}
        self._stale: set[str] = set()  # owners whose last status write failed
        self._claims: dict[PodKey, Obj] = {}  # pod key -> the pod before our claim write
        self._blocked: dict[PodKey, str] = {}  # pod key -> resourceVersion whose claim failed
        # Where ``_event`` puts an Event: while observing, the events the next sync sends
        # first (``observed_events``); while reconciling, that reconcile's.
        self._out = Writes()
        self._named: list[PodKey] = []  # owner keys named by the event or reconcile at hand
        self._backing_off = False  # the owner being reconciled is backing off: no manage
        self._now = 0.0  # the time of the event or reconcile at hand

    # -- events (``Observer.observe``) -----------------------------------------------------
    def observe(self, kind: str, etype: str, obj: Obj, now: float) -> list[PodKey]:
        self._now = now  # the time of the Events and counts a pod change records
        if kind == self.KIND:
            self._on_owner(etype, obj, now)
        elif kind == "Pod":
            key = _key(obj)
            self._claims.pop(key, None)  # the apiserver's word replaces any claim in flight
            unblocked = self._blocked.pop(key, None) is not None  # a new version may be claimed
            self._apply_pod(etype, obj, now, reoffer=unblocked)
        else:
            self._on_other(kind, etype, obj, now)
        return self._take_named()

    def observed_events(self) -> list[Any]:
        events, self._out.events = self._out.events, []
        return events

    def _mark(self, st: StateT) -> None:
        self._named.append(st.key)

    def _take_named(self) -> list[PodKey]:
        named, self._named = self._named, []
        return named

    def _on_owner(self, etype: str, obj: Obj, now: float) -> None:
        uid = self._by_key.get(_key(obj))
        st = self._owners.get(uid) if uid is not None else None
        if st is not None and (etype == "DELETED" or st.uid != uid_of(obj)):
            self._forget(st, now)  # a relist's DELETED carries only the key: look it up
            self._named.append(st.key)  # its reconcile finds it gone and drops any hold
            st = None
        if etype == "DELETED":
            return
        if st is None:
            st = self._new_state(obj)
            self._owners[st.uid], self._by_key[st.key] = st, st.uid
            self._by_ns.setdefault(st.ns, {})[st.uid] = st
            self._respec(st)
        else:
            old, st.obj = st.obj, obj
            if old.get("spec") != obj.get("spec"):
                if not (_only_replicas_differ(old, obj) and self._rescaled(st)):
                    st.selector, st.template = selector_of(obj), None
                    self._respec(st)
            elif old.get("status") == obj.get("status") and is_terminating(old) == is_terminating(obj):
                return  # the echo of our own status write, or metadata only
        self._mark(st)

    def _rescaled(self, st: StateT) -> bool:
        """Only ``spec.replicas`` changed (``st.obj`` is the new object): True when the
        controller took that in without rebuilding its counts from the owner's pods (a
        Deployment rescales its ReplicaSets at every rolling step)."""
        return False

    def _respec(self, st: StateT) -> None:
        self._rebuild(st)
        st.candidates = {
            k for k, p in self._index.orphans(st.ns).items() if self._claimable(p) and st.selector.matches(labels_of(p))
        }

    def _forget(self, st: StateT, now: float) -> None:
        del self._owners[st.uid], self._by_key[st.key], self._by_ns[st.ns][st.uid]
        self._stale.discard(st.uid)

    def _apply_pod(self, etype: str, pod: Obj, now: float, reoffer: bool = False) -> None:
        ch = self._index.apply(etype, pod)
        if ch is None:
            return
        old_st = self._owners.get(ch.old_owner) if ch.old_owner else None
        new_st = self._owners.get(ch.new_owner) if ch.new_owner else None
        if old_st is not None:
            if ch.new is None or ch.created or is_terminating(ch.new):
                old_st.exp.deletion_observed(ch.key)
            self._pod_changed(old_st, ch.key, ch.old, ch.new if new_st is old_st else None)
            self._mark(old_st)
        if new_st is not None:
            if ch.created:
                self._observed(new_st, ch, now)
            if new_st is not old_st:
                self._pod_changed(new_st, ch.key, None, ch.new)
            self._mark(new_st)
        if ch.new is not None and ch.new_owner == "":
            self._offer(ch, reoffer)

    def _observed(self, st: StateT, ch: Change, now: float) -> None:
        assert ch.new is not None  # a created pod
        if is_terminating(ch.new):
            # Seen for the first time already deleting (a relist): a deletion, not a creation.
            st.exp.deletion_observed(ch.key)
        elif st.exp.adds > 0:
            st.exp.creation_observed()
            self._event(st, SUCCESSFUL_CREATE, f"Created pod: {ch.key[1]}", now)

    def _offer(self, ch: Change, force: bool) -> None:
        """An orphan appeared or was relabelled: the owners it matches may adopt it."""
        assert ch.new is not None  # offered only when present
        if not force and ch.old is not None and ch.old_owner == "" and labels_of(ch.old) == labels_of(ch.new):
            return
        if not self._claimable(ch.new):
            return
        labels = labels_of(ch.new)
        for st in self._by_ns.get(ch.key[0], {}).values():
            if st.selector.matches(labels):
                st.candidates.add(ch.key)
                self._mark(st)

    # -- the reconcile --------------------------------------------------------------------
    def reconcile(self, key: PodKey, now: float) -> Outcome:
        """The owner's refused writes first (the sync that sent them learns of them now),
        then its claim, manage (not while its back-off lasts) and status."""
        held, self._out, self._now = self._out, Writes(), now
        try:
            st = self._owners.get(self._by_key.get(key, ""))
            for req, err in self.cache.refused(key):
                self._refused(st, req, err, now)
            named = [k for k in self._take_named() if k != key]  # this reconcile covers its own
            if st is None:
                return Outcome(events=self._out.events, enqueue=named)
            w = Writes()
            self._backing_off = now < self.cache.backoff_until(key)
            self._sync_owner(st, now, w)
            return Outcome(
                writes=[req for _, req in ranked(w)],
                events=self._out.events,
                requeue_at=self._due_at(st, now),
                enqueue=named + self._take_named(),
            )
        finally:
            self._out = held

    def _refused(self, st: StateT | None, req: Request, error: StatusError, now: float) -> None:
        """One refused write (whether it backs the owner off is ``backs_off``'s word)."""
        if isinstance(req, Create) and req.obj.get("kind") == "Pod":
            self._create_refused(st, req.obj, error, now)
        elif isinstance(req, Delete) and req.kind == "Pod" and not req.propagation:
            self._delete_refused(st, (req.namespace, req.name), req.uid, error, now)
        elif isinstance(req, Update) and req.obj.get("kind") == "Pod":
            self._update_refused(req.obj, now)
        elif isinstance(req, UpdateStatus) and st is not None and st.uid == req.uid:
            self._stale.add(st.uid)  # written again even if nothing changed
        else:
            self._other_refused(st, req, error, now)

    def _create_refused(self, st: StateT | None, pod: Obj, error: StatusError, now: float) -> None:
        """A pod create was refused: stop expecting it. One left out because an earlier
        batch of its slow start failed (``NotAttempted``) is only no longer expected, as
        upstream lowers the expectations for skipped pods; any other records an Event."""
        ref = controller_ref(pod)
        if st is None or ref is None or ref.get("uid") != st.uid:
            return
        st.exp.creation_observed()
        if not isinstance(error, NotAttempted):
            self._event(st, FAILED_CREATE, f"Error creating: {error_text(error)}", now, "Warning")
        self._create_failed(st, pod)

    def _delete_refused(self, st: StateT | None, key: PodKey, uid: str, error: StatusError, now: float) -> None:
        """A pod delete failed; NotFound means it is done anyway."""
        got = self._index.get(key)
        if st is None or got is None or got[0] != st.uid:
            return
        st.exp.deletion_observed(key)
        if not _not_found(error):
            self._event(st, FAILED_DELETE, f"Error deleting: {error_text(error)}", now, "Warning")
        self._delete_failed(st, key)

    def _update_refused(self, pod: Obj, now: float) -> None:
        """An adoption or release failed: undo it locally and do not claim this version of
        the pod again (a newer version may be claimed)."""
        key = _key(pod)
        original = self._claims.pop(key, None)
        if original is None:
            return  # a newer event already replaced our optimistic copy
        self._blocked[key] = (original.get("metadata") or {}).get("resourceVersion", "")
        self._apply_pod("MODIFIED", original, now)

    def _may_manage(self, st: StateT, now: float) -> bool:
        """Expectations satisfied, not backing off, not being deleted."""
        if st.selector.matches_nothing or is_terminating(st.obj):
            return False  # upstream refuses a selector that is empty or invalid
        if not st.exp.satisfied(now) or self._backing_off:
            return False
        if not st.exp.fulfilled():
            # Expired: forget it, or its deadline would wake us forever.
            st.exp = Expectations()
            self._expired(st)
        return True

    def _claim(self, st: StateT, now: float, w: Writes) -> None:
        """Release owned pods that no longer match, adopt matching orphans (upstream
        ClaimPods); each is an update of the pod, applied locally at once."""
        release, st.release = sorted(st.release), set()
        if is_terminating(st.obj):
            return  # an owner being deleted neither releases nor adopts
        for key in release:
            got = self._index.get(key)
            if got is None or got[0] != st.uid or not self._claimable(got[1]) or self._is_blocked(key, got[1]):
                continue
            if not st.selector.matches(labels_of(got[1])):
                refs = [r for r in (got[1]["metadata"].get("ownerReferences") or ()) if r.get("uid") != st.uid]
                self._send_claim(key, got[1], _with_refs(got[1], refs), now, w)
        candidates, st.candidates = sorted(st.candidates), set()
        for key in candidates:
            got = self._index.get(key)
            if got is None or got[0] != "" or not self._claimable(got[1]) or self._is_blocked(key, got[1]):
                continue
            if st.selector.matches(labels_of(got[1])):
                refs = list(got[1]["metadata"].get("ownerReferences") or ()) + [owner_reference(st.obj, self.KIND)]
                self._send_claim(key, got[1], _with_refs(got[1], refs), now, w)

    def _send_claim(self, key: PodKey, old: Obj, new: Obj, now: float, w: Writes) -> None:
        w.pod_updates.append(new)
        self._claims[key] = old
        self._apply_pod("MODIFIED", new, now)

    def _is_blocked(self, key: PodKey, pod: Obj) -> bool:
        rv = self._blocked.get(key)
        return rv is not None and rv == (pod.get("metadata") or {}).get("resourceVersion", "")

    def _write_status(self, st: StateT, status: Obj, w: Writes) -> None:
        """Send ``status`` if it differs from what the owner carries (or the last write failed)."""
        if status == (st.obj.get("status") or {}) and st.uid not in self._stale:
            return
        self._stale.discard(st.uid)
        st.obj = {**st.obj, "status": status}
        w.requests.append(UpdateStatus(self.KIND, st.ns, st.name, st.uid, status))

    def _new_pod(self, st: StateT) -> Obj:
        if st.template is None:
            st.template = encode(self._base_pod(st))
        pod: Obj = decode(st.template)  # an independent deep copy per pod
        return pod

    def _base_pod(self, st: StateT) -> Obj:
        return base_pod(st.obj, self.KIND)

    def _event(self, st: StateT, reason: str, message: str, now: float, type: str = "Normal") -> None:
        self._out.events.append(EventDraft(st.obj, reason, message, now, type, self.COMPONENT))

    def _due_at(self, st: StateT, now: float) -> float | None:
        """When ``st`` wants a reconcile without an event: its expectations' deadline, the
        end of its back-off, its own wakeups."""
        times = (st.exp.deadline(), self.cache.backoff_until(st.key), *self._wakeups(st, now))
        return min((t for t in times if t is not None and t > now), default=None)

    # -- reads ---------------------------------------------------------------------------
    def owner(self, namespace: str, name: str) -> Obj | None:
        st = self._owners.get(self._by_key.get((namespace, name), ""))
        return st.obj if st is not None else None

    def expectations(self, namespace: str, name: str) -> Expectations | None:
        st = self._owners.get(self._by_key.get((namespace, name), ""))
        return st.exp if st is not None else None

    # -- optional hooks (the required ones are listed in the class docstring) ------------------
    def _on_other(self, kind: str, etype: str, obj: Obj, now: float) -> None:
        """An event of a kind other than the owner's and Pod (the DaemonSet's Nodes)."""

    def _wakeups(self, st: StateT, now: float) -> tuple[float | None, ...]:
        """Times (or None) at which ``st`` wants a sync without an event."""
        return ()

    def _create_failed(self, st: StateT, pod: Obj) -> None:
        """A create of ``st`` was refused (after its expectations were lowered)."""

    def _delete_failed(self, st: StateT, key: PodKey) -> None:
        """A delete of ``st`` failed (after its expectations were lowered)."""

    def _expired(self, st: StateT) -> None:
        """``st``'s expectations expired unfulfilled; it is about to be managed."""

    def _other_refused(self, st: StateT | None, req: Request, error: StatusError, now: float) -> None:
        """A refused write of another kind than the pods and the status (a DaemonSet's or
        StatefulSet's ControllerRevisions)."""


def _only_replicas_differ(old: Obj, new: Obj) -> bool:
    a, b = old.get("spec") or {}, new.get("spec") or {}
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "replicas")
