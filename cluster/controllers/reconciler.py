"""The controller runtime: the ``Reconciler`` contract and the loop that feeds one.

Owns the one shape a controller written against it has (as controller-runtime's): the
controller declares the kinds it watches and how an event names the keys to reconcile
(``Watches``), the indexers it reads the cache by (``indexers``), and
``reconcile(key, now) -> Outcome``: level-based, it reads what stands from the shared
``ObjectCache`` and returns typed requests (``cluster/api/requests.py``), when to look
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
| held     | ``requeue_after``, an error, a refusal     | ready when due (earlier wins)              |
| idle     | a reconcile with no error (failures forgotten) | ready on the next event                |
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from ..api.errors import StatusError
from ..api.requests import Create, Delete, Patch, Request, Update, UpdateStatus
from .workqueue import WorkQueue
from .writes import Writes

Key = tuple[str, str]  # (namespace, name); "" namespace for a cluster-scoped object
Obj = dict[str, Any]


def own_key(event_type: str, obj: Obj) -> Iterable[Key]:
    """The object's own key: the default way an event names what to reconcile."""
    meta = obj.get("metadata") or {}
    return ((meta.get("namespace") or "", meta.get("name") or ""),)


@dataclass(frozen=True)
class Watches:
    """A kind the reconciler hears, and the keys an event of it names (its own by default;
    e.g. a pod's event may name the Services selecting it)."""

    kind: str
    keys: Callable[[str, Obj], Iterable[Key]] = own_key


@dataclass
class Outcome:
    writes: list[Request] = field(default_factory=list)
    requeue_after: float | None = None  # emulated seconds until the key is looked at again
    error: str | None = None  # transient: retried after the rate limiter's back-off


Indexer = Callable[[Obj], Iterable[str]]


class ObjectCache:
    """The latest copy of every watched object by kind, with declared indexers (client-go's
    indexer): ``get``, ``list`` (optionally one namespace) and ``by_index``."""

    def __init__(self) -> None:
        self._objs: dict[str, dict[Key, Obj]] = {}
        self._indexers: dict[str, dict[str, Indexer]] = {}
        self._index: dict[tuple[str, str], dict[str, set[Key]]] = {}

    def add_indexer(self, kind: str, name: str, fn: Indexer) -> None:
        self._indexers.setdefault(kind, {})[name] = fn
        table = self._index.setdefault((kind, name), {})
        for key, obj in self._objs.get(kind, {}).items():
            for value in fn(obj):
                table.setdefault(value, set()).add(key)

    def apply(self, kind: str, event_type: str, obj: Obj) -> Obj | None:
        """Take a watch event; returns the copy it replaced (None if new)."""
        key = next(iter(own_key(event_type, obj)))
        objs = self._objs.setdefault(kind, {})
        old = objs.pop(key, None) if event_type == "DELETED" else objs.get(key)
        if event_type != "DELETED":
            objs[key] = obj
        for name, fn in self._indexers.get(kind, {}).items():
            table = self._index[(kind, name)]
            if old is not None:
                for value in fn(old):
                    keys = table.get(value)
                    if keys is not None:
                        keys.discard(key)
                        if not keys:
                            del table[value]
            if event_type != "DELETED":
                for value in fn(obj):
                    table.setdefault(value, set()).add(key)
        return old

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self._objs.get(kind, {}).get((namespace, name))

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        objs = self._objs.get(kind, {})
        keys = sorted(k for k in objs if namespace is None or k[0] == namespace)
        return [objs[k] for k in keys]

    def by_index(self, kind: str, index: str, value: str) -> builtins.list[Obj]:
        keys = self._index.get((kind, index), {}).get(value, ())
        objs = self._objs.get(kind, {})
        return [objs[k] for k in sorted(keys)]


class Reconciler(Protocol):
    name: ClassVar[str]
    watches: ClassVar[tuple[Watches, ...]]
    # (kind, index name, function of an object to its index values), read by ``by_index``.
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]]

    def reconcile(self, key: Key, now: float) -> Outcome: ...


def target(req: Request) -> tuple[str, str, str] | None:
    """(kind, namespace, name) a write is about, to route its refusal back to a key."""
    if isinstance(req, (Create, Update)):
        meta = req.obj.get("metadata") or {}
        return (str(req.obj.get("kind") or ""), meta.get("namespace") or "", meta.get("name") or "")
    if isinstance(req, (UpdateStatus, Patch, Delete)):
        return (req.kind, req.namespace, req.name)
    return None


class ReconcilerStep:
    """One reconciler in the manager's controller shape, with its work queue.

    ``make(cache)`` builds the reconciler over the cache it reads; the step keeps the
    cache current from the watch, queues the keys each event names, and at ``sync`` runs
    ``reconcile`` for every due key."""

    def __init__(self, make: Callable[[ObjectCache], Reconciler], cache: ObjectCache | None = None) -> None:
        self.cache = cache or ObjectCache()
        self.reconciler = make(self.cache)
        for kind, name, fn in self.reconciler.indexers:
            self.cache.add_indexer(kind, name, fn)
        self.queue: WorkQueue[Key] = WorkQueue()
        self._routes = {w.kind: w.keys for w in self.reconciler.watches}
        self.kinds = tuple(self._routes)
        # Write target -> the key that asked, for this sync's writes and the last one's (a
        # refusal comes back in the batch after the sync that sent it).
        self._issued: dict[tuple[str, str, str], Key] = {}
        self._issued_before: dict[tuple[str, str, str], Key] = {}
        self.reconciles = 0
        self.errors = 0

    @property
    def name(self) -> str:
        return self.reconciler.name

    def on_event(self, kind: str, event_type: str, obj: Obj, now: float) -> None:
        old = self.cache.apply(kind, event_type, obj)
        keys = self._routes[kind]
        for key in keys(event_type, obj):
            self.queue.add(key)
        if old is not None and event_type == "MODIFIED":
            for key in keys(event_type, old):  # keys the object named before it changed
                self.queue.add(key)

    def sync(self, now: float) -> Writes:
        out = Writes()
        self._issued_before, self._issued = self._issued, {}
        for key in self.queue.pop_ready(now):
            self.reconciles += 1
            outcome = self.reconciler.reconcile(key, now)
            for req in outcome.writes:
                t = target(req)
                if t is not None:
                    self._issued[t] = key
            out.requests.extend(outcome.writes)
            if outcome.error is not None:
                self.errors += 1
                self.queue.add_rate_limited(key, now)
                continue
            self.queue.forget(key)
            if outcome.requeue_after is not None:
                self.queue.add_after(key, outcome.requeue_after, now)
        return out

    def next_wakeup(self) -> float | None:
        return self.queue.next_ready()

    def on_failed(self, request: Request, error: StatusError, now: float) -> None:
        t = target(request)
        key = (self._issued.get(t) or self._issued_before.get(t)) if t is not None else None
        if key is not None:
            self.errors += 1
            self.queue.add_rate_limited(key, now)

    def metrics(self) -> dict[str, float]:
        """Counters with upstream's workqueue and controller-runtime meanings."""
        return {
            "depth": self.queue.depth(),
            "adds": self.queue.adds,
            "retries": self.queue.retries,
            "reconciles": self.reconciles,
            "errors": self.errors,
        }
