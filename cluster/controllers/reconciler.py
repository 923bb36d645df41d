"""The controller runtime: the ``Reconciler`` contract and the loop that feeds one.

Owns the one shape a controller written against it has (as controller-runtime's): the
controller declares the kinds it watches and how an event names the keys to reconcile
(``Watches``), the indexers it reads the cache by (``indexers``), and
``reconcile(key, now) -> Outcome``: level-based, it reads what stands from the shared
``ObjectCache`` (``objectcache.py``) and returns typed requests (``cluster/api/requests.py``), when to look
again (``requeue_after``) and a transient ``error`` (the key comes back after the work
queue's back-off). A request the apiserver refuses comes back the same way: its key is
queued again, rate-limited, and the next reconcile sees what stands.

``ReconcilerStep`` wraps one reconciler in the controller shape the manager drives
(``manager.py``: ``kinds``, ``on_event``, ``sync``, ``next_wakeup``, ``on_failed``), so a
reconciler is registered as any controller is.

Lifecycle of a key:

| state    | enters on                                  | leaves to                                  |
|----------|--------------------------------------------|--------------------------------------------|
| ready    | an event naming it, a due requeue          | reconcile at the next sync                 |
| held     | ``requeue_after``/``requeue_at``, an error, a refusal | ready when due (earlier wins); a reconcile of the key drops its hold |
| idle     | a reconcile with no error (failures forgotten, but a key whose writes were refused keeps them until a reconcile of it asks for nothing) | ready on the next event |
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from ..api.errors import StatusError
from ..api.requests import Create, Delete, Patch, RecordEvent, Request, Update, UpdateStatus

# The cache and the key and object types live in ``objectcache``; re-exported for the controllers.
from .objectcache import Indexer as Indexer
from .objectcache import Key as Key
from .objectcache import Obj as Obj
from .objectcache import ObjectCache as ObjectCache
from .objectcache import Projection as Projection
from .objectcache import own_key as own_key
from .workqueue import WorkQueue
from .writes import Writes


@dataclass(frozen=True)
class Watches:
    """A kind the reconciler hears, and the keys an event of it names (its own by default;
    e.g. a pod's event may name the Services selecting it).

    ``project``, when given, is what the cache keeps of each object instead of the object
    (what the reconciler reads of it, e.g. a Node's taint verdict): the cache then costs a
    few bytes per object, not a decoded dict. A projection of None keeps nothing, so
    ``get`` answers None as for an object never seen. Indexers of a projected kind see the
    projection; a projected kind's ``keys`` see only the new object (the cache has no old
    one to ask)."""

    kind: str
    keys: Callable[[str, Obj], Iterable[Key]] = own_key
    project: Projection | None = None
    # The cache keeps only the kind's names by namespace (``ObjectCache.names``), and an
    # update (MODIFIED) is not read at all: for a reconciler that only asks what is left
    # in a namespace (a Lease renewal then costs nothing, not even its decoding).
    names_only: bool = False
    # Keys that depend on what the cache holds (e.g. the budgets whose selector matches a
    # pod): called with the cache, instead of ``keys``.
    route: Callable[[ObjectCache, str, Obj], Iterable[Key]] | None = None
    # Pods kept as the records the manager builds once per event and shares among the
    # controllers that keep records (``podrecord.PodRecord``: its bytes and a few fields,
    # a fifth of a decoded pod); ``keys``/``route`` and the indexers then see the record.
    records: bool = False
    # An event names keys only when what the cache keeps of the object changed (with
    # ``project``: e.g. a Node's NoExecute taints, not its every heartbeat); a DELETED names
    # none when ``deletes`` is False (the object's last state stands, as a deleted node's
    # taints for the pods still bound to it).
    on_change: bool = False
    deletes: bool = True
    # With ``records``: an update names keys only when ``changed`` of the record differs
    # from the previous record's (e.g. a pod's node and tolerations: its status changes
    # then cost the cache's update alone).
    changed: Callable[[Any], Any] | None = None
    # What the cache keeps of an object is ``fold(what it kept, the object, the event's
    # time)`` (None for a DELETED): state stamped as events arrive, e.g. a node's latest
    # Lease renewal and when it rose. An event names keys only when the kept value is a new
    # one. A Lease read by its head alone (``cluster/api/leasehead.py``) is folded as its
    # ``LeaseHead``, so a renewal is never decoded.
    fold: Callable[[Any, Any, float], Any] | None = None
    # The reconciler's own ``observe`` (``Observer``) hears the event and names the keys;
    # the cache keeps nothing of it: for informer-side state an upstream event handler
    # keeps, e.g. a workload's expectations lowered as its pods are seen.
    observed: bool = False
    # With ``observed``, for Leases: an event read by its head alone goes to the reconciler's
    # ``observe_head`` (``HeadObserver``), which names keys or asks for the object.
    heads: bool = False

    def keys_of(self, cache: ObjectCache, event_type: str, obj: Obj) -> Iterable[Key]:
        return self.keys(event_type, obj) if self.route is None else self.route(cache, event_type, obj)


@dataclass
class Outcome:
    writes: list[Request] = field(default_factory=list)
    requeue_after: float | None = None  # emulated seconds until the key is looked at again
    error: str | None = None  # transient: retried after the rate limiter's back-off
    # Events about the writes (``events.make_event`` drafts or Event dicts): they land after
    # every write and go through the manager's event correlator.
    events: list[Any] = field(default_factory=list)
    # An emulated time to look again at (a deadline the object states): exact where
    # ``now + requeue_after`` would round; the earlier of the two wins.
    requeue_at: float | None = None
    # Keys this reconcile made due (this one again, or another owner a claimed pod moved):
    # reconciled in the same sync's next pass (``ReconcilerStep(passes=...)``).
    enqueue: list[Key] = field(default_factory=list)


class Parking(Protocol):
    """Events of one kind kept aside until the reconciler has anything to do with them
    (``ownedpods.ParkedPods``: pods before the first owner or budget)."""

    @property
    def on(self) -> bool: ...

    def park(self, etype: str, obj: Obj) -> bool: ...

    def release(self) -> builtins.list[Obj]: ...


class RecordMaker(Protocol):
    """``podrecord.PodRecords``: a pod dict to its record."""

    def make(self, pod: Obj, raw: bytes | None) -> Any: ...


class Reconciler(Protocol):
    name: ClassVar[str]
    watches: ClassVar[tuple[Watches, ...]]
    # (kind, index name, function of an object to its index values), read by ``by_index``.
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]]

    def reconcile(self, key: Key, now: float) -> Outcome: ...


class Observer(Reconciler, Protocol):
    """A reconciler with ``Watches.observed`` kinds: it hears their events itself."""

    def observe(self, kind: str, event_type: str, obj: Obj, now: float) -> Iterable[Key]:
        """Take the event into the reconciler's own state; returns the keys it names."""
        ...

    def observed_events(self) -> builtins.list[Any]:
        """Events raised while observing (e.g. a pod seen created), taken once: they go out
        first at the next sync, as upstream's handlers record them when they come."""
        ...


class HeadObserver(Observer, Protocol):
    """An observer whose Lease watch declares ``heads``."""

    def observe_head(self, event_type: str, head: Any, now: float) -> Iterable[Key] | None:
        """The keys a Lease event read by its head names, or None: ``observe`` must have
        the decoded object."""
        ...


def target(req: Request) -> tuple[str, str, str] | None:
    """(kind, namespace, name) a write is about, to route its refusal back to a key."""
    if isinstance(req, (Create, Update)):
        meta = req.obj.get("metadata") or {}
        # A create named by the server has only its prefix (one owner's pods share it).
        name = meta.get("name") or ("generateName:" + meta["generateName"] if meta.get("generateName") else "")
        return (str(req.obj.get("kind") or ""), meta.get("namespace") or "", name)
    if isinstance(req, (UpdateStatus, Patch, Delete)):
        return (req.kind, req.namespace, req.name)
    return None


class ReconcilerStep:
    """One reconciler in the manager's controller shape, with its work queue.

    ``make(cache)`` builds the reconciler over the cache it reads; the step keeps the
    cache current from the watch, queues the keys each event names, and at ``sync`` runs
    ``reconcile`` for every due key: in the order they became due, or, with
    ``sort_keys``, in key order (what a controller that must replay the same whatever
    order its events came in asks for).

    ``passes`` > 1 reconciles, within the same sync, the keys a reconcile made due
    (``Outcome.enqueue``), up to that many rounds; any still due are next at once. With
    ``backs_off`` a refused write makes its key due at once (its reconcile reads the
    refusal: the workload controllers lower expectations and raise Events for it at
    once), and a refusal ``backs_off`` says backs off also holds the key for the queue's
    back-off, counted once per key until its next reconcile, which reads the end of it
    (``ObjectCache.backoff_until``); its failures are kept while it lasts."""

    def __init__(
        self,
        make: Callable[[ObjectCache], Reconciler],
        cache: ObjectCache | None = None,
        *,
        sort_keys: bool = False,
        parking: Parking | None = None,
        parked_kind: str = "Pod",
        unparked_by: tuple[str, ...] | None = None,
        records: RecordMaker | None = None,
        order: Callable[[ObjectCache, Key], Any] | None = None,
        passes: int = 1,
        backs_off: Callable[[Request, StatusError], bool] | None = None,
    ) -> None:
        self.cache = cache or ObjectCache()
        self.reconciler = make(self.cache)
        self.passes, self._backs_off = passes, backs_off
        self._counted: set[Key] = set()  # keys backed off since their last reconcile
        self._leftover: float | None = None  # when a sync's last pass left keys due
        observer: Any = self.reconciler if any(w.observed for w in self.reconciler.watches) else None
        self._observer: Observer | None = observer
        for w in self.reconciler.watches:
            if w.project is not None:
                self.cache.project(w.kind, w.project)
            if w.names_only:
                self.cache.names_only(w.kind)
        for kind, name, fn in self.reconciler.indexers:
            self.cache.add_indexer(kind, name, fn)
        self.queue: WorkQueue[Key] = WorkQueue()
        self.sort_keys = sort_keys
        # With ``sort_keys``, the sort key of a due key (default: the key itself), e.g. a
        # pod's node first, so a sync's writes come in the order an upstream pass makes them.
        self._order = order
        # ``parked_kind`` events go to ``parking`` until the first event of a kind in
        # ``unparked_by`` (None: any other kind); the manager shares one parked copy among
        # the controllers that park.
        self._parking, self._parked_kind, self._unparked_by = parking, parked_kind, unparked_by
        self._routes = {w.kind: w for w in self.reconciler.watches}
        # Pod events as records (``Watches.records``): ``records`` makes them of the pods
        # handed over as dicts; the manager hands its shared ones to ``on_pod_record``.
        self._records = records
        pods = self._routes.get("Pod")
        self.takes_records = pods is not None and pods.records
        if self.takes_records and records is None:
            raise ValueError(f"{self.reconciler.name}: a records watch needs records= (podrecord.PodRecords())")
        self.kinds = tuple(self._routes)
        # Write target -> the key that asked, for this sync's writes and the last one's (a
        # refusal comes back in the batch after the sync that sent it).
        self._issued: dict[tuple[str, str, str], Key] = {}
        self._issued_before: dict[tuple[str, str, str], Key] = {}
        # Reconciles by controller-runtime's result label: success, error, requeue_after.
        self.results: dict[str, int] = {"success": 0, "error": 0, "requeue_after": 0}
        self.refused = 0
        # Keys whose writes were refused and not yet seen through: their failures are kept
        # (the back-off grows) until a reconcile of theirs asks for nothing more.
        self._refused_keys: set[Key] = set()

    @property
    def name(self) -> str:
        return self.reconciler.name

    @property
    def parking(self) -> Parking | None:
        return self._parking

    def on_event(self, kind: str, event_type: str, obj: Obj, now: float) -> None:
        route = self._routes.get(kind)
        if route is None:
            return  # a kind it does not watch (a driver may hand it any event)
        if route.names_only and event_type == "MODIFIED":
            return  # an update changes no name
        parking = self._parking
        if parking is not None and parking.on:
            if kind == self._parked_kind:
                parking.park(event_type, obj)
                return
            if self._unparked_by is None or kind in self._unparked_by:
                for parked in parking.release():  # the first event that ends the parking
                    self.on_event(self._parked_kind, "ADDED", parked, now)
        if route.observed:
            assert self._observer is not None
            for key in self._observer.observe(kind, event_type, obj, now):
                self.queue.add(key)
            return
        if route.fold is not None:
            self._fold(route, own_key(event_type, obj), event_type, obj, now)
            return
        if self.takes_records and kind == "Pod":
            assert self._records is not None
            self.on_pod_record(event_type, self._records.make(obj, None), now)
            return
        old = self.cache.apply(kind, event_type, obj)
        cache = self.cache
        if route.on_change and not self._changed(route, event_type, obj, old):
            return
        for key in route.keys_of(cache, event_type, obj):
            self.queue.add(key)
        if old is not None and route.project is None:
            for key in route.keys_of(cache, event_type, old):  # keys the object named before it changed
                self.queue.add(key)

    def _fold(self, route: Watches, keys: Iterable[Key], event_type: str, obj: Any, now: float) -> None:
        """An event of a folded kind (``Watches.fold``): keep the new value, name keys if new."""
        if event_type == "DELETED" and not route.deletes:
            return
        key = next(iter(keys))
        old = self.cache.projected(route.kind, *key)
        new = route.fold(old, None if event_type == "DELETED" else obj, now)  # type: ignore[misc]
        if new is old:
            return
        self.cache.keep(route.kind, key, new)
        for k in route.keys_of(self.cache, event_type, obj):
            self.queue.add(k)

    def _changed(self, route: Watches, event_type: str, obj: Obj, old: Any) -> bool:
        if event_type == "DELETED":
            return route.deletes and old is not None
        key = next(iter(own_key(event_type, obj)))
        return bool(self.cache.projected(route.kind, *key) != old)

    def on_pod_record(self, event_type: str, rec: Any, now: float) -> None:
        """A pod event as its record (``Watches.records``)."""
        route, cache = self._routes["Pod"], self.cache
        old = cache.keep("Pod", rec.key, None if event_type == "DELETED" else rec)
        changed = route.changed
        if changed is not None and old is not None and event_type != "DELETED" and changed(old) == changed(rec):
            return
        for key in route.keys_of(cache, event_type, rec):
            self.queue.add(key)
        if old is not None:
            for key in route.keys_of(cache, event_type, old):
                self.queue.add(key)

    def sync(self, now: float) -> Writes:
        out = Writes()
        self._issued_before, self._issued = self._issued, {}
        if self._observer is not None:
            out.events += self._observer.observed_events()
        order, cache = self._order, self.cache
        by = None if order is None else lambda k: order(cache, k)
        for _ in range(self.passes):
            keys = self.queue.pop_ready(now)
            if not keys:
                break
            if self.sort_keys:
                keys.sort(key=by)
            for key in keys:
                self._reconcile(key, now, out)
        self._leftover = now if self.passes > 1 and self.queue.has_ready() else None
        self.cache.end_sync()
        return out

    def _reconcile(self, key: Key, now: float, out: Writes) -> None:
        self.queue.unhold(key)  # this reconcile's outcome says when to look again
        if self._counted:
            self._counted.discard(key)
        outcome = self.reconciler.reconcile(key, now)
        self.cache.refused(key)  # what it did not read of its refusals is past
        for req in outcome.writes:
            if isinstance(req, RecordEvent):
                out.events.append(req.event)  # through the correlator, as every event
                continue
            t = target(req)
            if t is not None:
                self._issued[t] = key
            out.requests.append(req)
        out.events += outcome.events
        for k in outcome.enqueue:
            self.queue.add(k)
        if outcome.error is not None:
            self.results["error"] += 1
            delay = self.queue.add_rate_limited(key, now)
            if self._backs_off is not None:
                self.cache.set_backoff(key, now + delay)
            return
        if self._backs_off is not None and now < self.cache.backoff_until(key):
            pass  # backing off from a refusal: its failures stay counted
        elif not outcome.writes or key not in self._refused_keys:
            self.queue.forget(key)
            self._refused_keys.discard(key)
            self.cache.set_backoff(key, None)
        requeue = outcome.requeue_after is not None or outcome.requeue_at is not None
        self.results["requeue_after" if requeue else "success"] += 1
        if outcome.requeue_after is not None:
            self.queue.add_after(key, outcome.requeue_after, now)
        if outcome.requeue_at is not None:
            self.queue.add_at(key, outcome.requeue_at, now)

    def next_wakeup(self) -> float | None:
        if self._leftover is not None:
            return self._leftover  # the last pass left keys due: at once
        return self.queue.next_ready()

    def on_lease_head(self, event_type: str, head: Any, now: float) -> bool:
        """Whether a Lease event read by its head alone is handled (``manager.py``): a
        renewal (MODIFIED) is, when the reconciler keeps only the Leases' names; any is,
        when it folds Leases (``Watches.fold``), which then sees the head."""
        route = self._routes.get("Lease")
        if route is not None and route.fold is not None:
            self._fold(route, ((head.namespace, head.name),), event_type, head, now)
            return True
        if route is not None and route.heads:
            observer: HeadObserver = self._observer  # type: ignore[assignment]
            keys = observer.observe_head(event_type, head, now)
            if keys is None:
                return False
            for key in keys:
                self.queue.add(key)
            return True
        return route is not None and route.names_only and event_type == "MODIFIED"

    def on_failed(self, request: Request, error: StatusError, now: float) -> None:
        t = target(request)
        key = (self._issued.get(t) or self._issued_before.get(t)) if t is not None else None
        if key is not None and t is not None:
            self.refused += 1
            self._refused_keys.add(key)
            self.cache.unput(*t)
            self.cache.refuse(key, request, error)
            if self._backs_off is None:
                # One failed reconcile is one rate-limited retry, however many of its
                # writes were refused (controller-runtime counts the reconcile's error).
                if key not in self._counted:
                    self._counted.add(key)
                    self.queue.add_rate_limited(key, now)
                return
            self.queue.add(key)  # its reconcile reads the refusal at the next sync
            if key not in self._counted and self._backs_off(request, error):
                self._counted.add(key)  # the refusals of one sync back off one step
                self.cache.set_backoff(key, self.queue.back_off(key, now))

    def metrics(self) -> dict[str, Any]:
        """Counters under upstream's names: client-go's workqueue metrics (depth, adds,
        retries: a retry is a reconcile error's or a refused write's) and
        controller-runtime's reconciles by result and reconcile errors; ``refused_writes``
        is kubemu's own (the writes of this controller the apiserver refused)."""
        return {
            "workqueue_depth": self.queue.depth(),
            "workqueue_adds_total": self.queue.adds,
            "workqueue_retries_total": self.queue.retries,
            "controller_runtime_reconcile_total": dict(self.results),
            "controller_runtime_reconcile_errors_total": self.results["error"],
            "refused_writes": self.refused,
        }
