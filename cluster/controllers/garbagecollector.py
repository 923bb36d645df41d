"""The garbage collector (upstream's ``pkg/controller/garbagecollector``): ownerReferences.

Owns what upstream's collector decides over its dependency graph: deleting dependents whose
owners are all gone, carrying out Foreground deletion (dependents first, then the owner's
``foregroundDeletion`` finalizer) and Orphan deletion (the owner's ownerReference stripped
from every dependent, then its ``orphan`` finalizer). The apiserver sets those finalizers
from DeleteOptions' propagationPolicy (``cluster/apiserver/apiserver.py``).

Who calls it: the controller manager (``manager.py``) runs ``GarbageCollector``, a
``reconciler.ReconcilerStep`` over a ``GarbageCollectorReconciler``: the reconciler observes
the watch events of every kind it watches itself (every kind in ``cluster/api/kinds.py``
but Events, which upstream's collector ignores too; ``Watches.observed``: the dependency
graph is informer-side state, as upstream's graph builder keeps it; a Lease is read by its
head where that is enough, ``Watches.heads``) and names the keys to look at: a dependent
(``("D", kind, namespace, name)``, upstream's attemptToDelete queue) or an owner deleting
in the foreground or orphaning (``("O", kind, namespace, name)``, its attemptToOrphan and
dependents-deleting work), dependents first, each in key order. ``reconcile`` returns
typed requests: ``Patch`` with ``RemoveOwnerReferences`` or ``RemoveFinalizer``, ``Delete``
with a propagation policy.

What it keeps, and what that costs per event: the uid of every object it is told of
(``_live``; an owner is present when the object of the ownerReference's kind and name, in
the dependent's namespace or cluster-wide, has the reference's uid: upstream GETs the owner,
kubemu reads its watch), and the references of objects that HAVE ownerReferences, indexed
by owner uid. An object without owners costs a dict write per event and is kept nowhere else.

A dependent is looked at when it appears or changes and when one of its owners goes or
changes state (upstream ``attemptToDeleteItem``); its owners are classified as solid
(present, not deleting in the foreground), waiting (present, deleting in the foreground),
dangling (gone) or unseen (see the deviations):

| dependent                                         | the collector                               |
|---------------------------------------------------|---------------------------------------------|
| itself being deleted                              | nothing: waits for its DELETED              |
| an owner unseen, for less than OWNER_GRACE        | waits, then looks again                     |
| a solid owner                                     | drops the references to dangling and waiting owners (RemoveOwnerReferences) |
| no solid owner, a waiting one, dependents of its own | Delete, Foreground                       |
| no solid owner                                    | Delete, Background (its own orphan/foregroundDeletion finalizer wins) |

An owner marked for deletion with one of the collector's finalizers
(upstream ``processDeletingDependentsItem`` and ``attemptToOrphan``):

| owner                                  | the collector                               | then                         |
|----------------------------------------|---------------------------------------------|------------------------------|
| deletionTimestamp + foregroundDeletion | looks at every dependent (the table above)  | no dependent with blockOwnerDeletion left: RemoveFinalizer(foregroundDeletion); the apiserver removes it |
| deletionTimestamp + orphan             | RemoveOwnerReferences(owner) on every dependent | no dependent names it: RemoveFinalizer(orphan) |
| gone (DELETED, or a new uid under its name) | looks at every dependent               | a tombstone for TOMBSTONE_SECONDS |

A write is asked for once; the object's next relevant change (its references, its deletion,
its finalizers) or a refusal clears that. A refused write comes back as the next reconcile
of the key that asked for it, after the work queue's back-off (5 ms doubling, as upstream's
rate-limited queues); a refusal a retry can help is asked again then, NotFound and the
other final refusals are left to the watch.

Deviations from upstream, on purpose:

- Unseen owners. Upstream checks an owner it has not observed with a live GET. Here the
  watch is all there is, and a relist lists kinds one after another, so a dependent may be
  seen before its owner. An owner uid never seen counts as dangling only once the dependent
  has been known for OWNER_GRACE; one seen deleted (a tombstone) is dangling at once.
- A reference to a kind the collector does not watch (Events, kinds kubemu does not serve)
  counts as solid: upstream cannot resolve it either, and retries forever.
- The ``orphan`` finalizer comes off once the watch shows no dependent naming the owner;
  upstream removes it as soon as its patches returned. Same result, one round later.
- A reference of an object to itself never blocks its own foreground deletion; upstream's
  collector, as its code reads, waits on it forever.

Cycles (upstream ``attemptToDeleteItem``): owners that own each other are all solid while
they live, and nothing is collected; once one goes, the next one's owner dangles, and so
on round the cycle. A foreground deletion would wait round the cycle forever, so a
dependent that is to be deleted in the foreground while one of its own dependents already
is has its references unblocked first (``RemoveOwnerReferences`` with ``unblock``): its
owner's finalizer can then come off, and the rest follows.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from ..api.objects import KINDS
from ..api.patches import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, RemoveFinalizer, RemoveOwnerReferences
from ..api.requests import Delete, Patch, Request
from .reconciler import Indexer, Obj, ObjectCache, Outcome, ReconcilerStep, Watches, target

if TYPE_CHECKING:
    from ..api.leasehead import LeaseHead

OWNER_GRACE = 5.0  # emulated seconds a dependent waits for an owner uid never seen
TOMBSTONE_SECONDS = 300.0  # how long a vanished uid is remembered as gone
IGNORED_KINDS = ("Event",)  # upstream's collector ignores events too
WATCHED_KINDS = tuple(k for k in KINDS if k not in IGNORED_KINDS)

Key = tuple[str, str, str]  # (kind, namespace, name); "" for a cluster-scoped namespace
# A queue key: ("D", *key) a dependent to look at, ("O", *key) an owner deleting in the
# foreground or orphaning its dependents.
QueueKey = tuple[str, str, str, str]
# A write sent about a key: its kind ("refs", "unblock", "delete", "finalizer"), then its arguments.
_Ask = tuple[str] | tuple[str, str] | tuple[str, tuple[str, ...]]
_POLICY_OF = {ORPHAN_FINALIZER: "Orphan", FOREGROUND_FINALIZER: "Foreground"}


class Owner(NamedTuple):
    uid: str
    kind: str
    name: str
    block: bool  # blockOwnerDeletion


class Dependent:
    """An object with ownerReferences, as the collector last saw it."""

    __slots__ = ("uid", "raw", "owners", "terminating", "finalizers", "since", "policy")

    def __init__(self, uid: str, raw: list[Any], terminating: bool, finalizers: list[str] | None, since: float) -> None:
        # ``raw``: the ownerReferences array as written, entries not yet checked to be objects.
        self.uid, self.raw, self.terminating, self.finalizers, self.since = uid, raw, terminating, finalizers, since
        self.owners = tuple(
            [
                Owner(r["uid"], r.get("kind", ""), r.get("name", ""), bool(r.get("blockOwnerDeletion")))
                for r in raw
                if isinstance(r, dict) and r.get("uid")
            ]
        )
        self.policy = "Background"
        for f in finalizers or ():  # its own GC finalizer decides how it is deleted (upstream)
            if f in _POLICY_OF:
                self.policy = _POLICY_OF[f]
                break


class GarbageCollector(ReconcilerStep):
    """The collector as the manager runs it: its reconciler in a work queue, keys in key
    order (every dependent before any owner)."""

    reconciler: GarbageCollectorReconciler

    def __init__(self) -> None:
        super().__init__(GarbageCollectorReconciler, sort_keys=True)

    def dependents(self, uid: str) -> list[Key]:
        return self.reconciler.dependents(uid)


class GarbageCollectorReconciler:
    """Owners, dependents and the deletions between them (see the module docstring)."""

    name: ClassVar[str] = "garbage-collector"
    watches: ClassVar[tuple[Watches, ...]] = tuple(Watches(k, observed=True, heads=k == "Lease") for k in WATCHED_KINDS)
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache  # read for the refused writes of a key
        self._live: dict[str, dict[tuple[str, str], str]] = {k: {} for k in WATCHED_KINDS}
        self._dependents: dict[Key, Dependent] = {}
        self._deps: dict[str, set[Key]] = {}  # owner uid -> the dependents naming it
        self._foreground: dict[str, Key] = {}  # uid -> key: deleting in the foreground
        self._orphaning: dict[str, Key] = {}  # uid -> key: deleting, orphaning its dependents
        self._gone: dict[str, float] = {}  # tombstones: vanished uid -> when
        self._named: list[QueueKey] = []  # the keys the event at hand names
        self._asked: dict[Key, set[_Ask]] = {}  # writes sent and not yet seen answered
        self._prune_at = TOMBSTONE_SECONDS

    # -- events (``Observer.observe``) -------------------------------------------------------
    def observe(self, kind: str, etype: str, obj: Obj, now: float) -> list[QueueKey]:
        m = obj.get("metadata") or {}
        ns, name = m.get("namespace", ""), m.get("name", "")
        if self._seen(kind, etype, ns, name, m.get("uid", ""), now):
            uid = m.get("uid", "")
            refs, finalizers = m.get("ownerReferences"), m.get("finalizers")
            if refs or (kind, ns, name) in self._dependents:
                self._on_dependent((kind, ns, name), uid, m, refs, finalizers, now)
            if finalizers or self._foreground or self._orphaning:
                self._on_owner_state((kind, ns, name), uid, m)
        return self._take_named()

    def observed_events(self) -> list[Any]:
        return []

    def observe_head(self, etype: str, head: LeaseHead, now: float) -> list[QueueKey] | None:
        """A Lease read by its head (no owners, finalizers or deletion): the keys it names,
        or None when ``observe`` must have the object."""
        key = ("Lease", head.namespace, head.name)
        if etype == "DELETED" or key in self._dependents or self._foreground or self._orphaning:
            return None
        self._seen("Lease", etype, head.namespace, head.name, head.uid, now)
        return self._take_named()

    def _take_named(self) -> list[QueueKey]:
        named, self._named = self._named, []
        return named

    def _name_dependent(self, key: Key) -> None:
        self._named.append(("D", *key))

    def _name_owner(self, uid: str) -> None:
        key = self._foreground.get(uid) or self._orphaning.get(uid)
        if key is not None:
            self._named.append(("O", *key))

    def _seen(self, kind: str, etype: str, ns: str, name: str, uid: str, now: float) -> bool:
        """Note the object's uid (or its going); False for a DELETED, which ends here."""
        live = self._live[kind]
        if etype == "DELETED":  # a relist's DELETED carries only the key: the uid is ours
            gone = live.pop((ns, name), None)
            if gone is not None:
                self._vanished((kind, ns, name), gone, now)
            return False
        old = live.get((ns, name))
        if old != uid:
            # One namespace string for every object kept, not one per object decoded.
            live[(sys.intern(ns), name)] = uid
            if old is not None:
                self._vanished((kind, ns, name), old, now)  # replaced while we were not watching
            for dep in self._deps.get(uid, ()):
                self._name_dependent(dep)  # an owner its dependents saw first
        return True

    def _on_dependent(
        self, key: Key, uid: str, m: Obj, refs: list[Any] | None, fins: list[str] | None, now: float
    ) -> None:
        rec = self._dependents.get(key)
        terminating = bool(m.get("deletionTimestamp"))
        if rec is not None and rec.uid == uid and rec.raw == refs and rec.finalizers == fins:
            if rec.terminating == terminating:
                rec.raw, rec.finalizers = refs, fins  # the common case, a status change: keep the newest
                return
            if terminating:
                # It started terminating, its owners unchanged: nothing to re-index, and a
                # terminating dependent is never queued; whatever was asked was answered,
                # and an owner deleting in the foreground or orphaning looks again.
                rec.raw, rec.terminating = refs, True
                self._asked.pop(key, None)
                self._wake_deleting_owners(rec)
                return
        since = rec.since if rec is not None and rec.uid == uid else now
        if rec is not None:
            self._unindex(key, rec)
        self._asked.pop(key, None)  # whatever was asked of it has been answered
        if not refs:
            return
        rec = self._dependents[key] = Dependent(uid, refs, terminating, fins, since)
        solid = True
        for o in rec.owners:
            keys = self._deps.get(o.uid)
            if keys is None:
                self._deps[o.uid] = {key}
            else:
                keys.add(key)
            if o.uid in self._foreground or o.uid in self._orphaning:
                self._name_owner(o.uid)
            solid = solid and self._is_solid(key[1], o)
        if not solid and not terminating:
            self._name_dependent(key)

    def _on_owner_state(self, key: Key, uid: str, m: Obj) -> None:
        deleting = bool(m.get("deletionTimestamp"))
        finalizers = m.get("finalizers") or ()
        changed = False
        for table, finalizer in ((self._foreground, FOREGROUND_FINALIZER), (self._orphaning, ORPHAN_FINALIZER)):
            want = deleting and finalizer in finalizers
            if want != (uid in table):
                changed = True
                if want:
                    table[uid] = key
                else:
                    del table[uid]
        if changed:
            self._asked.pop(key, None)
            self._named.append(("O", *key))  # its reconcile finds whether it still is
            for dep in self._deps.get(uid, ()):
                self._name_dependent(dep)  # solid <-> waiting for its dependents

    def _vanished(self, key: Key, uid: str, now: float) -> None:
        """The object ``uid`` at ``key`` is gone: its dependents lost an owner."""
        self._asked.pop(key, None)
        rec = self._dependents.get(key)
        if rec is not None and rec.uid == uid:
            self._unindex(key, rec)
        self._foreground.pop(uid, None)
        self._orphaning.pop(uid, None)
        deps = self._deps.get(uid)
        for dep in deps or ():
            self._name_dependent(dep)
        if deps or key[0] != "Pod":  # pods rarely own anything: no tombstone per pod
            self._gone[uid] = now

    def _unindex(self, key: Key, rec: Dependent) -> None:
        del self._dependents[key]
        for o in rec.owners:
            keys = self._deps.get(o.uid)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._deps[o.uid]
        self._wake_deleting_owners(rec)  # one dependent fewer to wait for

    def _wake_deleting_owners(self, rec: Dependent) -> None:
        """Owners of ``rec`` deleting in the foreground or orphaning look at their
        dependents again."""
        if self._foreground or self._orphaning:
            for o in rec.owners:
                self._name_owner(o.uid)

    # -- classification --------------------------------------------------------------------
    def _is_solid(self, ns: str, o: Owner) -> bool:
        if o.kind not in self._live:
            return True  # a kind not watched: cannot be judged, never collected
        scope = ns if KINDS[o.kind][1] else ""
        return self._live[o.kind].get((scope, o.name)) == o.uid and o.uid not in self._foreground

    def _classify(self, ns: str, rec: Dependent, now: float) -> tuple[list[str], list[str], list[str], float | None]:
        """(solid, dangling, waiting) owner uids, and until when an unseen owner is waited for."""
        solid: list[str] = []
        dangling: list[str] = []
        waiting: list[str] = []
        until: float | None = None
        for o in rec.owners:
            live = self._live.get(o.kind)
            if live is None:
                solid.append(o.uid)
                continue
            namespaced = KINDS[o.kind][1]
            if namespaced and not ns:  # a cluster-scoped dependent cannot have a namespaced owner
                dangling.append(o.uid)
            elif live.get((ns if namespaced else "", o.name)) == o.uid:
                (waiting if o.uid in self._foreground else solid).append(o.uid)
            elif o.uid in self._gone or now >= rec.since + OWNER_GRACE:
                dangling.append(o.uid)
            else:
                until = rec.since + OWNER_GRACE
        return solid, dangling, waiting, until

    # -- the reconcile ---------------------------------------------------------------------
    def reconcile(self, qkey: Any, now: float) -> Outcome:
        """``qkey`` (a ``QueueKey``): its refused writes first (one a retry can help is
        asked anew), then the dependent's owners judged, or the owner's dependents."""
        for req, err in self.cache.refused(qkey):
            t = target(req)
            if t is not None and err.retryable:  # final (NotFound): the watch will say it is gone
                self._asked.pop(t, None)
        if now >= self._prune_at:
            self._prune_at = now + TOMBSTONE_SECONDS
            self._gone = {u: t for u, t in self._gone.items() if now - t < TOMBSTONE_SECONDS}
        out: list[Request] = []
        what, key = qkey[0], (qkey[1], qkey[2], qkey[3])
        if what == "D":
            return Outcome(writes=out, requeue_at=self._attempt(key, now, out))
        uid = self._live[key[0]].get(key[1:]) if key[0] in self._live else None
        if uid is not None and (uid in self._foreground or uid in self._orphaning):
            self._sync_owner(uid, out)
        return Outcome(writes=out)

    def _attempt(self, key: Key, now: float, out: list[Request]) -> float | None:
        """Judge a dependent's owners; returns until when an unseen owner is waited for."""
        rec = self._dependents.get(key)
        if rec is None or rec.terminating:
            return None
        solid, dangling, waiting, until = self._classify(key[1], rec, now)
        if until is not None:
            return until
        if solid:
            drop = tuple(dangling + waiting)
            if drop and self._ask(key, ("refs", drop)):
                out.append(Patch(*key, rec.uid, RemoveOwnerReferences(drop)))
            return None
        deps = self._deps.get(rec.uid)
        policy = "Foreground" if waiting and deps else rec.policy
        if policy == "Foreground" and waiting and self._in_foreground_cycle(rec, deps):
            # Upstream's cycle guard: a dependent of its own already waits for its dependents,
            # so this one's references stop blocking before it joins the foreground deletion.
            if self._ask(key, ("unblock",)):
                out.append(Patch(*key, rec.uid, RemoveOwnerReferences((), True)))
        if self._ask(key, ("delete",)):
            out.append(Delete(*key, rec.uid, None, policy))
        return None

    def _in_foreground_cycle(self, rec: Dependent, deps: set[Key] | None) -> bool:
        """Does ``rec`` block an owner while one of its own dependents deletes in the
        foreground (upstream's check, false positives and all)?"""
        if not any(o.block for o in rec.owners):
            return False
        return any(self._dependents[dk].uid in self._foreground for dk in deps or () if dk in self._dependents)

    def _sync_owner(self, uid: str, out: list[Request]) -> None:
        deps = self._deps.get(uid, set())
        if uid in self._orphaning:
            for dk in sorted(deps):
                if self._ask(dk, ("refs", (uid,))):
                    out.append(Patch(*dk, self._dependents[dk].uid, RemoveOwnerReferences((uid,))))
            key = self._orphaning[uid]
            if not deps and self._ask(key, ("finalizer", ORPHAN_FINALIZER)):
                out.append(Patch(*key, uid, RemoveFinalizer(ORPHAN_FINALIZER)))
            return
        key = self._foreground[uid]
        # Its own reference never blocks an object (see the deviations).
        blocking = any(o.uid == uid and o.block for dk in deps if dk != key for o in self._dependents[dk].owners)
        if not blocking and self._ask(key, ("finalizer", FOREGROUND_FINALIZER)):
            out.append(Patch(*key, uid, RemoveFinalizer(FOREGROUND_FINALIZER)))

    def _ask(self, key: Key, what: _Ask) -> bool:
        """Record a write about ``key``; False when the same one is still unanswered."""
        asked = self._asked.setdefault(key, set())
        if what in asked:
            return False
        asked.add(what)
        return True

    # -- reads -----------------------------------------------------------------------------
    def dependents(self, uid: str) -> list[Key]:
        """The objects whose ownerReferences name ``uid``, by key."""
        return sorted(self._deps.get(uid, ()))
