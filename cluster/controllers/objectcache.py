"""The object cache every reconciler reads (client-go's informer store and indexer).

Owns ``ObjectCache``, the latest copy (or projection) of each watched object by kind with
its indexes, the writes a reconcile just sent (read-your-writes until the watch echoes
them), the refused writes, the deleted objects' last copies within a sync and the work
queue's back-off per key; and the vocabulary of keys and objects the controllers share
(``Key``, ``Obj``, ``Indexer``, ``Projection``, ``own_key``). ``reconciler.ReconcilerStep``
fills it from watch events and re-exports these names; reconcilers read it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, KeysView
from typing import Any

from ..api.errors import StatusError
from ..api.requests import Request

Key = tuple[str, str]  # (namespace, name); "" namespace for a cluster-scoped object
Obj = dict[str, Any]


def own_key(event_type: str, obj: Obj) -> Iterable[Key]:
    """The object's own key: the default way an event names what to reconcile."""
    meta = obj.get("metadata") or {}
    return ((meta.get("namespace") or "", meta.get("name") or ""),)


Projection = Callable[[Obj], Any]


_NOTHING = object()  # what ``put`` replaced when the cache held nothing
Indexer = Callable[[Any], Iterable[str]]  # an object (or its projection) to its index values


class ObjectCache:
    """The latest copy of every watched object by kind, with declared indexers (client-go's
    indexer): ``get``, ``list`` (optionally one namespace) and ``by_index``."""

    def __init__(self) -> None:
        self._objs: dict[str, dict[Key, Any]] = {}  # projections of projected kinds
        self._indexers: dict[str, dict[str, Indexer]] = {}
        # (kind, index) -> value -> keys, an insertion-ordered set
        self._index: dict[tuple[str, str], dict[str, dict[Key, None]]] = {}
        self._projections: dict[str, Projection] = {}
        self._watched: dict[tuple[str, Key], Any] = {}  # the watch's copies ``put`` replaced
        self._names: dict[str, dict[str, set[str]]] = {}  # names-only kinds: namespace -> names
        self._refused: dict[Key, list[tuple[Request, StatusError]]] = {}
        # (kind, key) -> what the cache held of an object the watch has just deleted, until
        # the end of the sync (client-go's last known state of a deleted object).
        self._tombstones: dict[tuple[str, Key], Any] = {}
        self._backoffs: dict[Key, float] = {}  # key -> when the work queue's back-off ends

    def backoff_until(self, key: Key) -> float:
        """When the work queue's back-off of ``key`` ends (0.0: not backing off): what a
        reconciler that still claims and reports status while backing off reads."""
        return self._backoffs.get(key, 0.0) if self._backoffs else 0.0

    def set_backoff(self, key: Key, until: float | None) -> None:
        if until is None:
            if self._backoffs:
                self._backoffs.pop(key, None)
        else:
            self._backoffs[key] = until

    def names_only(self, kind: str) -> None:
        """Keep only ``kind``'s names by namespace (``Watches.names_only``)."""
        self._names.setdefault(kind, {})

    def names(self, kind: str, namespace: str) -> builtins.list[str]:
        """The names of a names-only kind's objects in ``namespace``, sorted."""
        return sorted(self._names.get(kind, {}).get(namespace, ()))

    def refuse(self, key: Key, request: Request, error: StatusError) -> None:
        """A write ``key``'s reconcile asked for was refused (``ReconcilerStep.on_failed``)."""
        self._refused.setdefault(key, []).append((request, error))

    def refused(self, key: Key) -> builtins.list[tuple[Request, StatusError]]:
        """The writes of ``key`` refused since its last reconcile, with the errors: what an
        upstream controller's call would have returned. Read once: the next call is empty."""
        return self._refused.pop(key, []) if self._refused else []

    def project(self, kind: str, fn: Projection) -> None:
        """Keep ``fn(obj)`` of each ``kind`` object instead of the object (``Watches.project``)."""
        self._projections[kind] = fn

    def add_indexer(self, kind: str, name: str, fn: Indexer) -> None:
        self._indexers.setdefault(kind, {})[name] = fn
        table = self._index.setdefault((kind, name), {})
        for key, obj in self._objs.get(kind, {}).items():
            for value in fn(obj):
                table.setdefault(value, {})[key] = None

    def apply(self, kind: str, event_type: str, obj: Obj) -> Any:
        """Take a watch event; returns the copy (or projection) it replaced (None if new)."""
        key = next(iter(own_key(event_type, obj)))
        names = self._names.get(kind)
        if names is not None:
            self._apply_name(names, event_type, key)
            return None
        if self._watched:
            self._watched.pop((kind, key), None)  # the watch's word replaces what was put
        project = self._projections.get(kind)
        if project is not None and event_type != "DELETED":
            obj = project(obj)
        return self._store(kind, key, None if event_type == "DELETED" else obj)

    def _store(self, kind: str, key: Key, value: Any) -> Any:
        """Keep ``value`` under ``key`` (None: nothing) and move the indexes; returns the
        value replaced. An index keeps its keys in the order they joined a value, so a
        key whose index values do not change keeps its place."""
        objs = self._objs.setdefault(kind, {})
        old = objs.pop(key, None) if value is None else objs.get(key)
        if value is not None:
            objs[key] = value
        elif old is not None:
            self._tombstones[(kind, key)] = old
        for name, fn in self._indexers.get(kind, {}).items():
            before = tuple(fn(old)) if old is not None else ()
            after = tuple(fn(value)) if value is not None else ()
            if before == after:
                continue  # the common update: nothing moves
            table = self._index[(kind, name)]
            for v in before:
                keys = table.get(v)
                if keys is not None and v not in after:
                    keys.pop(key, None)
                    if not keys:
                        del table[v]
            for v in after:
                if v not in before:
                    table.setdefault(v, {})[key] = None
        return old

    @staticmethod
    def _apply_name(names: dict[str, set[str]], event_type: str, key: Key) -> None:
        ns, name = key
        if event_type == "DELETED":
            left = names.get(ns)
            if left is not None:
                left.discard(name)
                if not left:
                    del names[ns]
        elif event_type == "ADDED":
            names.setdefault(ns, set()).add(name)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self._objs.get(kind, {}).get((namespace, name))

    def projected(self, kind: str, namespace: str, name: str) -> Any:
        """What the cache keeps of a projected kind's object (``Watches.project``), or None."""
        return self._objs.get(kind, {}).get((namespace, name))

    def put(self, kind: str, obj: Obj) -> None:
        """Replace the cached copy with what a reconciler just sent (read-your-writes until
        the watch shows the write: the next reconcile reads what was asked for)."""
        key = next(iter(own_key("MODIFIED", obj)))
        project = self._projections.get(kind)
        old = self._store(kind, key, project(obj) if project is not None else obj)
        self._watched.setdefault((kind, key), _NOTHING if old is None else old)

    def unput(self, kind: str, namespace: str, name: str) -> None:
        """A write ``put`` stood for was refused: the watch's copy again."""
        watched = self._watched.pop((kind, (namespace, name)), None)
        if watched is not None:
            self._store(kind, (namespace, name), None if watched is _NOTHING else watched)

    def last_seen(self, kind: str, key: Key) -> Any:
        """What the cache held of ``key``: its current copy, or, for an object deleted since
        the last sync, the copy it had (a relist's DELETED carries only the key)."""
        current = self._objs.get(kind, {}).get(key)
        return current if current is not None else self._tombstones.get((kind, key))

    def end_sync(self) -> None:
        """The sync is over: the deleted objects' last copies go."""
        if self._tombstones:
            self._tombstones.clear()

    def count(self, kind: str) -> int:
        return len(self._objs.get(kind, ()))

    def keep(self, kind: str, key: Key, value: Any) -> Any:
        """Keep ``value`` as what the cache holds of ``key`` (None: nothing), as a
        projection: the manager's shared pod record (``Watches.records``). Returns the
        value it replaced."""
        if self._watched:
            self._watched.pop((kind, key), None)
        return self._store(kind, key, value)

    def index_values(self, kind: str, index: str) -> KeysView[str]:
        """Every value ``index`` has now (e.g. every node some pod names)."""
        return self._index.get((kind, index), {}).keys()

    def index_keys(self, kind: str, index: str, value: str) -> builtins.list[Key]:
        """The keys whose ``index`` values include ``value``, sorted."""
        return sorted(self._index.get((kind, index), {}).get(value, ()))

    def index_count(self, kind: str, index: str, value: str) -> int:
        return len(self._index.get((kind, index), {}).get(value, ()))

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        objs = self._objs.get(kind, {})
        keys = sorted(k for k in objs if namespace is None or k[0] == namespace)
        return [objs[k] for k in keys]

    def by_index(self, kind: str, index: str, value: str, *, ordered: bool = True) -> builtins.list[Any]:
        """The objects whose ``index`` values include ``value``: in key order, or (``ordered``
        False) in the order they joined the value, which costs no sort."""
        keys: Iterable[Key] = self._index.get((kind, index), {}).get(value, {})
        objs = self._objs.get(kind, {})
        return [objs[k] for k in (sorted(keys) if ordered else keys)]
