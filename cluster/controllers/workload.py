"""What the ReplicaSet and DaemonSet controllers share: ownership, expectations, writes.

Owns the machinery both workload controllers run on, as upstream's ``controller_utils``
and ``ControllerRefManager`` provide it to kube-controller-manager:

- the use of ``writes.Writes`` (pods to create, update, delete, owner statuses, Events),
  the plain-data result of a ``sync``;
- ``PodIndex``: the pods a controller cares about, indexed by controller uid (orphans by
  namespace), so an event costs O(1) and a sync looks only at its owner's pods;
- ``Expectations`` (upstream's ControlleeExpectations with uid-tracked deletes) and
  ``Backoff`` (the workqueue's per-item failure backoff);
- ``WorkloadController``: the event routing, claiming (adopt orphans, release pods whose
  labels no longer match), failure callbacks, timers and the ``sync`` loop.
  ``replicaset.ReplicaSetController`` and ``daemonset.DaemonSetController`` subclass it and
  decide what each owner needs.

Who calls it: the controller-manager actor (through ``cluster/controllers/manager.py`` or
directly) feeds watch events to ``on_event``, calls ``sync(now)`` after each batch, sends
the ``Writes`` and, when it sees per-item errors, reports them through ``on_create_failed``
/ ``on_delete_failed`` / ``on_update_failed`` / ``on_status_failed``. Reporting failures is
optional: an expectation nobody fulfils expires after ``EXPECTATIONS_TIMEOUT``, so a lost
or failed write delays an owner, never wedges it.

An owner's lifecycle (the sync loop applies this table to each dirty owner, in key order):

| state                          | how it is left                               | sync does                       |
|--------------------------------|----------------------------------------------|---------------------------------|
| satisfied (nothing pending)    | sync asks for n creates / deletes            | claim, manage, status           |
| pending (adds > 0 or dels)     | each ADDED pod / each pod seen terminating   | claim, status (no manage)       |
|                                | or gone lowers it; a reported failure too    |                                 |
| expired (pending for 300 s)    | counts as satisfied: the next sync manages   | claim, manage, status           |
| backing off (a write failed)   | retry_at passes (5 ms doubling to 1000 s)    | claim, status (no manage)       |
| terminating (deletionTimestamp)| DELETED                                      | status only                     |
| deleted (DELETED seen)         | (forgotten)                                  | nothing                         |

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

from typing import TYPE_CHECKING, Generic, TypeVar

from ..api.codec import decode, encode
from ..api.errors import NotAttempted
from ..api.events import EventDraft
from ..api.objects import is_terminating, labels_of, uid_of
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
from .writes import Writes

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "BURST_REPLICAS",
    "Writes",
    "PodIndex",
    "Change",
    "Expectations",
    "Backoff",
    "OwnerState",
    "WorkloadController",
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
# Passes of the sync loop: claiming a pod can make another owner dirty within one sync.
_MAX_PASSES = 3

SUCCESSFUL_CREATE, FAILED_CREATE = "SuccessfulCreate", "FailedCreate"
SUCCESSFUL_DELETE, FAILED_DELETE = "SuccessfulDelete", "FailedDelete"

StateT = TypeVar("StateT", bound=OwnerState)  # a subclass's per-owner state


class WorkloadController(Generic[StateT]):
    """Event routing, claiming, failure reports and the sync loop.

    Subclasses set ``KIND``, ``COMPONENT``, ``STATUS_FIELD`` and ``kinds`` and implement:
    ``_new_state(obj)`` (their ``OwnerState``), ``_rebuild(st)`` (recompute everything from
    the owned pods, after a spec change), ``_pod_changed(st, key, old, new)`` (a pod of
    ``st`` changed; keep ``st.release`` up to date), ``_claimable(pod)`` and
    ``_sync_owner(st, now, writes)``; the optional hooks are at the end.
    """

    if TYPE_CHECKING:  # the required hooks, as the subclasses implement them

        def _new_state(self, obj: dict) -> StateT: ...
        def _rebuild(self, st: StateT) -> None: ...
        def _pod_changed(self, st: StateT, key: PodKey, old: dict | None, new: dict | None) -> None: ...
        def _claimable(self, pod: dict) -> bool: ...
        def _sync_owner(self, st: StateT, now: float, w: Writes) -> None: ...

    KIND = COMPONENT = STATUS_FIELD = ""
    kinds: tuple[str, ...] = ()
    writes_class = Writes  # a test may substitute any class with the same list attributes

    def __init__(self) -> None:
        self._index = PodIndex(self.KIND)
        self._owners: dict[str, StateT] = {}
        self._by_key: dict[PodKey, str] = {}
        self._by_ns: dict[str, dict[str, StateT]] = {}
        self._dirty: set[str] = set()
        self._timers: dict[str, float] = {}
        self._stale: set[str] = set()  # owners whose last status write failed
        self._claims: dict[PodKey, dict] = {}  # pod key -> the pod before our claim write
        self._blocked: dict[PodKey, str] = {}  # pod key -> resourceVersion whose claim failed
        self._out = self.writes_class()  # raised by events and failure reports; sent at the next sync
        # Until the first owner nothing can own, adopt or collect a pod: the common cluster
        # without ReplicaSets or DaemonSets pays a dict write per pod event.
        self._parked = ParkedPods()

    @property
    def parking(self) -> ParkedPods:
        """The pods kept until this controller's first owner (the manager may share them)."""
        return self._parked

    # -- events --------------------------------------------------------------------------
    def on_event(self, kind: str, etype: str, obj: dict, now: float) -> None:
        if kind == self.KIND:
            for pod in self._parked.release():
                self._apply_pod("ADDED", pod, now)
            self._on_owner(etype, obj, now)
        elif kind == "Pod":
            if self._parked.park(etype, obj):
                return
            key = _key(obj)
            self._claims.pop(key, None)  # the apiserver's word replaces any claim in flight
            unblocked = self._blocked.pop(key, None) is not None  # a new version may be claimed
            self._apply_pod(etype, obj, now, reoffer=unblocked)
        else:
            self._on_other(kind, etype, obj, now)

    def _on_owner(self, etype: str, obj: dict, now: float) -> None:
        uid = self._by_key.get(_key(obj))
        st = self._owners.get(uid) if uid is not None else None
        if st is not None and (etype == "DELETED" or st.uid != uid_of(obj)):
            self._forget(st, now)  # a relist's DELETED carries only the key: look it up
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
        self._dirty.add(st.uid)

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
        self._dirty.discard(st.uid)
        self._timers.pop(st.uid, None)
        self._stale.discard(st.uid)

    def _apply_pod(self, etype: str, pod: dict, now: float, reoffer: bool = False) -> None:
        ch = self._index.apply(etype, pod)
        if ch is None:
            return
        old_st = self._owners.get(ch.old_owner) if ch.old_owner else None
        new_st = self._owners.get(ch.new_owner) if ch.new_owner else None
        if old_st is not None:
            if ch.new is None or ch.created or is_terminating(ch.new):
                old_st.exp.deletion_observed(ch.key)
            self._pod_changed(old_st, ch.key, ch.old, ch.new if new_st is old_st else None)
            self._dirty.add(old_st.uid)
        if new_st is not None:
            if ch.created:
                self._observed(new_st, ch, now)
            if new_st is not old_st:
                self._pod_changed(new_st, ch.key, None, ch.new)
            self._dirty.add(new_st.uid)
        if ch.new is not None and ch.new_owner == "":
            self._offer(ch, reoffer)

    def _observed(self, st: StateT, ch: Change, now: float) -> None:
        assert ch.new is not None  # a created pod
        if is_terminating(ch.new):
            # Seen for the first time already deleting (a relist): a deletion, not a creation.
            st.exp.deletion_observed(ch.key)
        elif st.exp.adds > 0:
            st.exp.creation_observed()
            st.backoff.reset()
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
                self._dirty.add(st.uid)

    # -- failure reports -----------------------------------------------------------------
    def on_create_failed(self, pod: dict, error, now: float) -> None:
        """A pod from ``Writes.pod_creates`` was refused: stop expecting it and back off. One
        left out because an earlier batch of its slow start failed (``NotAttempted``) is only
        no longer expected, as upstream lowers the expectations for skipped pods."""
        ref = controller_ref(pod)
        st = self._owners.get(ref.get("uid", "")) if ref is not None else None
        if st is None:
            return
        st.exp.creation_observed()
        if not isinstance(error, NotAttempted):
            st.backoff.fail(now)
            self._event(st, FAILED_CREATE, f"Error creating: {error_text(error)}", now, "Warning")
        self._create_failed(st, pod)
        self._dirty.add(st.uid)

    def on_delete_failed(self, ns: str, name: str, uid: str, error, now: float) -> None:
        """A delete from ``Writes.pod_deletes`` failed; NotFound means it is done anyway."""
        key = (ns, name)
        got = self._index.get(key)
        st = self._owners.get(got[0]) if got is not None and got[0] else None
        if st is None:
            return
        st.exp.deletion_observed(key)
        if not _not_found(error):
            st.backoff.fail(now)
            self._event(st, FAILED_DELETE, f"Error deleting: {error_text(error)}", now, "Warning")
        self._delete_failed(st, key)
        self._dirty.add(st.uid)

    def on_update_failed(self, pod: dict, error, now: float) -> None:
        """An adoption or release from ``Writes.pod_updates`` failed: undo it locally and do
        not claim this version of the pod again (a newer version may be claimed)."""
        key = _key(pod)
        original = self._claims.pop(key, None)
        if original is None:
            return  # a newer event already replaced our optimistic copy
        self._blocked[key] = (original.get("metadata") or {}).get("resourceVersion", "")
        self._apply_pod("MODIFIED", original, now)

    def on_status_failed(self, ns: str, name: str, uid: str, error, now: float) -> None:
        """A status write failed: write it again at the next sync even if nothing changed."""
        st = self._owners.get(self._by_key.get((ns, name), ""))
        if st is not None and st.uid == uid:
            self._stale.add(uid)
            self._dirty.add(uid)

    # -- sync ----------------------------------------------------------------------------
    def sync(self, now: float) -> Writes:
        """Everything the dirty owners (and due timers) want written now, by owner key."""
        w, self._out = self._out, self.writes_class()
        for uid, t in list(self._timers.items()):
            if t <= now:
                del self._timers[uid]
                self._dirty.add(uid)
        for _ in range(_MAX_PASSES):
            todo = sorted((self._owners[u] for u in self._dirty if u in self._owners), key=lambda s: s.key)
            self._dirty.clear()
            for st in todo:
                self._sync_owner(st, now, w)
                self._arm(st, now)
            if not self._dirty:
                break
        for uid in self._dirty:  # still dirty after the last pass: come back at once
            self._timers[uid] = now
        self._dirty.clear()
        w.events.extend(self._out.events)  # raised while syncing (FailedDaemonPod)
        self._out = self.writes_class()
        return w

    def next_wakeup(self) -> float | None:
        """The emulated time of the next time-driven action, or None."""
        return min(self._timers.values(), default=None)

    def _may_manage(self, st: StateT, now: float) -> bool:
        """Expectations satisfied, not backing off, not being deleted."""
        if st.selector.matches_nothing or is_terminating(st.obj):
            return False  # upstream refuses a selector that is empty or invalid
        if not st.exp.satisfied(now) or not st.backoff.ready(now):
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

    def _send_claim(self, key: PodKey, old: dict, new: dict, now: float, w: Writes) -> None:
        w.pod_updates.append(new)
        self._claims[key] = old
        self._apply_pod("MODIFIED", new, now)

    def _is_blocked(self, key: PodKey, pod: dict) -> bool:
        rv = self._blocked.get(key)
        return rv is not None and rv == (pod.get("metadata") or {}).get("resourceVersion", "")

    def _write_status(self, st: StateT, status: dict, w: Writes) -> None:
        """Send ``status`` if it differs from what the owner carries (or the last write failed)."""
        if status == (st.obj.get("status") or {}) and st.uid not in self._stale:
            return
        self._stale.discard(st.uid)
        st.obj = {**st.obj, "status": status}
        getattr(w, self.STATUS_FIELD).append((st.ns, st.name, st.uid, status))

    def _new_pod(self, st: StateT) -> dict:
        if st.template is None:
            st.template = encode(self._base_pod(st))
        return decode(st.template)  # an independent deep copy per pod

    def _base_pod(self, st: StateT) -> dict:
        return base_pod(st.obj, self.KIND)

    def _event(self, st: StateT, reason: str, message: str, now: float, type: str = "Normal") -> None:
        self._out.events.append(EventDraft(st.obj, reason, message, now, type, self.COMPONENT))

    def _arm(self, st: StateT, now: float) -> None:
        times = [
            t for t in (st.exp.deadline(), st.backoff.retry_at, *self._wakeups(st, now)) if t is not None and t > now
        ]
        if times:
            self._timers[st.uid] = min(times)
        else:
            self._timers.pop(st.uid, None)

    # -- reads ---------------------------------------------------------------------------
    def owner(self, namespace: str, name: str) -> dict | None:
        st = self._owners.get(self._by_key.get((namespace, name), ""))
        return st.obj if st is not None else None

    def expectations(self, namespace: str, name: str) -> Expectations | None:
        st = self._owners.get(self._by_key.get((namespace, name), ""))
        return st.exp if st is not None else None

    # -- optional hooks (the required ones are listed in the class docstring) ------------------
    def _on_other(self, kind: str, etype: str, obj: dict, now: float) -> None:
        """An event of a kind other than the owner's and Pod (the DaemonSet's Nodes)."""

    def _wakeups(self, st: StateT, now: float) -> tuple[float | None, ...]:
        """Times (or None) at which ``st`` wants a sync without an event."""
        return ()

    def _create_failed(self, st: StateT, pod: dict) -> None:
        """A create of ``st`` was refused (after expectations and backoff were updated)."""

    def _delete_failed(self, st: StateT, key: PodKey) -> None:
        """A delete of ``st`` failed (after expectations and backoff were updated)."""

    def _expired(self, st: StateT) -> None:
        """``st``'s expectations expired unfulfilled; it is about to be managed."""


def _only_replicas_differ(old: dict, new: dict) -> bool:
    a, b = old.get("spec") or {}, new.get("spec") or {}
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "replicas")
