"""The versioned object store and its watch window.

Owns every object the apiserver serves, the global resourceVersion counter and, per kind, a
bounded window of recent change events for watchers. The apiserver logic
(``cluster/apiserver/apiserver.py``) is its only writer; the apiserver actor calls ``list`` and
``events_since`` to serve clients. With a ``journal`` (the durable log, see
``cluster/apiserver/durable.py``) every write is also recorded there, reusing the bytes encoded
for the window.

Each stored object is kept only as its msgpack bytes, encoded once on write (a decoded
dict is about five times larger); ``get`` decodes a fresh copy, which the caller may change
and ``put`` back. Watch events share those bytes with every watcher (docs/architecture.md
§2). The window (``window.py``) keeps every event of the last 75 s of the apiserver's
clock, at least a floor of events, at most a cap of bytes per kind; a watcher that asks for
a resourceVersion older than what it still holds gets ``Expired`` and must relist.

An object whose latest version has left the watch window (no watcher can be served those
bytes any more: the store alone holds them) is kept compressed against a recent object of
its kind (``cluster/api/settledbytes.py``): a settled pod's 1 KB become about 200 bytes.
Reads decompress (a few microseconds an object); a write stores plain bytes again, which
the window's event shares. Leases are never compressed: their renewals splice the bytes.

Pod events carry the pod's node name before and after the change so a node host can watch
"pods on my nodes" with upstream's selector semantics: an event that moves a pod into the
selection is delivered as ADDED, one that moves it out as DELETED.
"""

from __future__ import annotations

import builtins
import sys
from bisect import bisect_right
from collections.abc import Set
from functools import partial
from typing import TYPE_CHECKING

import msgspec

from ..api import codec
from ..api.errors import Expired
from ..api.settledbytes import Packer, unpack
from .leaserenew import LeaseRenewals
from .window import COALESCED_KINDS, DEFAULT_WINDOW, Event, KindLog, Window

if TYPE_CHECKING:
    from .storage import Journal, Storage


# What a kind with no objects reads as: one shared empty map (never written), not a new
# one per read (every create counts, tests and peeks a few kinds).
_NONE: dict = {}

# One stored object: its bytes, its node name when stored, and the preset dictionary its
# bytes are compressed against (None: the bytes are plain).
Entry = tuple[bytes, str, bytes | None]


class Store:
    """The in-memory ``Storage`` (``storage.py``): see the module docstring."""

    def __init__(self, window: Window = DEFAULT_WINDOW, start_rv: int = 0, journal: Journal | None = None):
        self.rv = start_rv
        # The apiserver's clock as of its latest write (``at``): the window keeps events by
        # their age on it.
        self.now = 0.0
        # Anything with ``record_put``/``record_remove`` (the apiserver's ``DurableLog``):
        # told of every write, with the bytes encoded for the watch window. None: no
        # durability, and no cost beyond one attribute test per write.
        self.journal: Journal | None = journal
        # kind -> (namespace, name) -> the object (``Entry``).
        self._objects: dict[str, dict[tuple[str, str], Entry]] = {}
        self._packers: dict[str, Packer] = {}  # per kind: compresses its settled objects
        self._guess_ns = ""  # the namespace of the last object compressed: most share one
        self._logs: dict[str, KindLog] = {}
        self._window = window.check()
        # (kind, namespace, name) -> (the bytes it was decoded from, the decoded object), for
        # ``peek``; only the kinds admission reads ever land here, so it stays small.
        self._peeked: dict[tuple[str, str, str], tuple[bytes, dict]] = {}
        self._renewals = LeaseRenewals()  # Leases whose next renewal can be spliced in

    # -- reads -------------------------------------------------------------------------
    def get(self, kind: str, ns: str, name: str) -> dict | None:
        """A fresh copy of the object (the caller may change it and ``put`` it), or None."""
        hit = self._objects.get(kind, _NONE).get((ns, name))
        return codec.decode(_plain(hit)) if hit else None

    def peek(self, kind: str, ns: str, name: str) -> dict | None:
        """The object for reading only (never change it): decoded once per stored version.
        For admission's lookups of the few objects every create reads (its Namespace, its
        PriorityClass), which a fresh decode per create would make cost more than the
        create itself."""
        hit = self._objects.get(kind, _NONE).get((ns, name))
        if hit is None:
            return None
        cached = self._peeked.get((kind, ns, name))
        if cached is None or cached[0] is not hit[0]:
            cached = self._peeked[(kind, ns, name)] = (hit[0], codec.decode(_plain(hit)))
        return cached[1]

    def peek_all(self, kind: str) -> builtins.list[dict]:
        """Every object of ``kind`` for reading only (``peek``)."""
        return [o for ns, name in self.keys(kind) if (o := self.peek(kind, ns, name)) is not None]

    def kind_revision(self, kind: str) -> int:
        """Moves with every write of ``kind``: what a reader keeping something derived
        from its objects compares (admission's default PriorityClass)."""
        log = self._logs.get(kind)
        return 0 if log is None else log.last_rv

    def has(self, kind: str, ns: str, name: str) -> bool:
        return (ns, name) in self._objects.get(kind, _NONE)

    def keys(self, kind: str) -> builtins.list[tuple[str, str]]:
        """The (namespace, name) of every object of ``kind``."""
        return builtins.list(self._objects.get(kind, _NONE))

    def objects(self, kind: str):
        """A fresh copy of every object of ``kind``, one at a time."""
        return (codec.decode(_plain(entry)) for entry in self._objects.get(kind, _NONE).values())

    def count(self, kind: str) -> int:
        return len(self._objects.get(kind, _NONE))

    def list(self, kind: str, node_names: Set[str] | None = None) -> tuple[int, list[bytes]]:
        """Current objects of a kind as encoded bytes, and the rv they are current at."""
        items = self._objects.get(kind, _NONE).values()
        if node_names is None:
            return self.rv, [data if z is None else unpack(data, z) for data, _, z in items]
        return self.rv, [data if z is None else unpack(data, z) for data, node, z in items if node in node_names]

    def events_since(
        self, kind: str, since_rv: int, node_names: Set[str] | None = None, limit: int = 10_000
    ) -> tuple[builtins.list[tuple[str, bytes]], int]:  # builtins: ``list`` here is the method above
        """Events of ``kind`` after ``since_rv`` as (type, bytes), and the rv to resume from.

        At most ``limit`` events a call (superseded slots not counted, ``KindLog.after``).
        The resume rv moves past filtered-out events too, so a quiet, selective watcher
        never falls behind the window (it acts as a bookmark).
        """
        if since_rv > self.rv:
            # Only a store that lost history (a restart without a durable log) is behind a
            # watcher: without the relist it would wait silently until the rv caught up.
            raise Expired(f"too large resource version: {since_rv} (current {self.rv})")
        log = self._logs.get(kind)
        if log is None:
            return [], self.rv
        if since_rv < log.evicted_upto:
            raise Expired(f"too old resource version: {since_rv} ({log.evicted_upto})")
        chunk, end = log.after(bisect_right(log.rvs, since_rv), limit)
        resume = log.rvs[end - 1] if end < len(log.rvs) else max(since_rv, self.rv)
        if node_names is None:
            return [(e.type, e.data) for e in chunk], resume
        out = []
        for e in chunk:
            now_in, was_in = e.node in node_names, e.prev_node in node_names
            if now_in and was_in:
                out.append((e.type, e.data))
            elif now_in:
                out.append(("ADDED" if e.type != "DELETED" else "DELETED", e.data))
            elif was_in:
                out.append(("DELETED", e.data))
        return out, resume

    # -- writes (only the apiserver logic calls these) --------------------------------
    def at(self, now: float) -> None:
        """The apiserver's clock reads ``now``: the time of the writes that follow (it
        never goes back, so a caller's older ``now`` leaves it)."""
        if now > self.now:
            self.now = now

    def put(self, kind: str, obj: dict, event_type: str) -> int:
        """Store ``obj`` (ADDED or MODIFIED) with the next resourceVersion; returns it."""
        self.rv += 1
        m = obj["metadata"]
        m["resourceVersion"] = str(self.rv)
        # Interned: every write brings its own decoded copies of the names, and the key,
        # the node and each of the object's events in the window would each keep one.
        key = (sys.intern(m.get("namespace", "")), sys.intern(m["name"]))
        bucket = self._objects.get(kind)
        if bucket is None:
            bucket = self._objects[kind] = {}
        prev = bucket.get(key)
        data, node = codec.encode(obj), sys.intern(_node(kind, obj))
        if kind == "Lease":
            self._renewals.note(key, obj, data)
        self._stored(kind, key, data, node, prev[1] if prev else "", event_type)
        return self.rv

    def _stored(self, kind: str, key: tuple[str, str], data: bytes, node: str, prev_node: str, etype: str) -> None:
        """Keep ``data`` as the object's bytes at ``self.rv``: the window's event, the journal."""
        self._objects[kind][key] = (data, node, None)
        log = self._logs.get(kind) or self._log(kind)
        log.append(Event(self.rv, etype, key[1], node, prev_node, data), key, self.now)
        if self.journal is not None:
            self.journal.record_put(kind, self.rv, etype, key[0], key[1], data)

    def remove(self, kind: str, ns: str, name: str, last: dict | None = None) -> int:
        """Remove an object; its DELETED event carries ``last`` (the caller's final copy,
        e.g. with the finalizers a delete just set) or else the stored object."""
        self.rv += 1
        entry = self._objects[kind].pop((ns, name))
        node = entry[1]
        self._peeked.pop((kind, ns, name), None)
        if kind == "Lease":
            self._renewals.forget((ns, name))
        obj = codec.decode(_plain(entry)) if last is None else last
        obj["metadata"]["resourceVersion"] = str(self.rv)
        data = codec.encode(obj)
        self._log(kind).append(Event(self.rv, "DELETED", name, node, node, data), (ns, name), self.now)
        if self.journal is not None:
            # Recovery needs only the key of a removal, so the log keeps no bytes for it.
            self.journal.record_remove(kind, self.rv, ns, name)
        return self.rv

    def renew(self, ns: str, name: str, applied: dict) -> bool:
        """A kubelet's apply of its node Lease (``applied``) made in the stored bytes
        (``leaserenew.py``): True when done (a write, or none when nothing changes), False
        when the caller must take the general way."""
        key = (sys.intern(ns), sys.intern(name))
        hit = self._objects.get("Lease", _NONE).get(key)
        if hit is None:
            return False
        data = self._renewals.splice(key, hit[0], applied, self.rv + 1)
        if data is None:
            return False
        if data is hit[0]:
            return True
        self.rv += 1
        self._peeked.pop(("Lease", ns, name), None)
        self._stored("Lease", key, data, hit[1], hit[1], "MODIFIED")
        return True

    def raw(self, kind: str, ns: str, name: str) -> bytes | None:
        """The object's stored bytes (never change them), or None."""
        hit = self._objects.get(kind, _NONE).get((ns, name))
        return _plain(hit) if hit else None

    def remove_as_stored(self, kind: str, ns: str, name: str, stored_rv: str) -> bool:
        """``remove`` with the stored object as the final copy, its DELETED event's bytes made
        by patching the new resourceVersion over ``stored_rv`` (the object's, as stored): the
        bytes decoding, setting it and encoding would give. False, and nothing removed, when
        the field's bytes do not occur exactly once (the caller then removes the general way)."""
        entry = self._objects[kind][(ns, name)]
        node = entry[1]
        data = codec.replace_value(_plain(entry), "resourceVersion", stored_rv, str(self.rv + 1))
        if data is None:
            return False
        self.rv += 1
        del self._objects[kind][(ns, name)]
        self._peeked.pop((kind, ns, name), None)
        if kind == "Lease":
            self._renewals.forget((ns, name))
        self._log(kind).append(Event(self.rv, "DELETED", name, node, node, data), (ns, name), self.now)
        if self.journal is not None:
            self.journal.record_remove(kind, self.rv, ns, name)
        return True

    # -- durability (the durable log in ``wal.py`` reads and restores these) ----------------
    def snapshot_state(self) -> tuple[int, dict[str, dict[tuple[str, str], bytes]]]:
        """The rv and, per kind, every object's encoded bytes: what a snapshot holds. Kinds
        whose objects are all gone are included (empty), so a restored store still knows
        they had events and expires their watchers."""
        return self.rv, {
            kind: {key: _plain(entry) for key, entry in bucket.items()} for kind, bucket in self._objects.items()
        }

    @classmethod
    def from_recovered(cls, recovered, window: Window = DEFAULT_WINDOW, journal: Journal | None = None) -> Store:
        """A store holding ``recovered``'s objects (``.rv``, ``.objects`` as from
        ``wal.recover``) that continues its resourceVersion sequence, recording its new
        writes in ``journal``.

        The events before the restart are gone, so each known kind's window starts empty
        with everything up to the recovered rv counted as evicted: a watcher from before the
        restart gets Expired and relists, as upstream's do after an apiserver restart.
        """
        store = cls(window=window, start_rv=recovered.rv, journal=journal)
        for kind, items in recovered.objects.items():
            bucket = store._objects[kind] = {}
            for key, data in items.items():
                bucket[key] = (data, _node(kind, codec.decode(data)) if kind in ("Pod", "Node") else "", None)
            store._log(kind).evicted_upto = recovered.rv
        return store

    def _log(self, kind: str) -> KindLog:
        log = self._logs.get(kind)
        if log is None:
            coalesce = kind in COALESCED_KINDS  # Leases: never compressed (module docstring)
            settled = None if coalesce else partial(self._settled, kind)
            log = self._logs[kind] = KindLog(self._window, coalesce, settled)
            # Nothing of this kind happened before now, so any rv up to now is servable.
        return log

    def _settled(self, kind: str, events: builtins.list[Event]) -> None:
        """The window lets ``events`` go: an object whose current bytes are one of them is
        now read through the store alone, so its bytes are kept compressed."""
        bucket = self._objects.get(kind)
        if not bucket:
            return
        packer = self._packers.get(kind)
        if packer is None:
            packer = self._packers[kind] = Packer()
        for e in events:
            if e.type == "DELETED" or not e.data:  # gone, or a superseded slot
                continue
            key = self._key_of(bucket, e)
            if key is None:
                continue
            packed = packer.pack(e.data)
            if packed is not None:
                bucket[key] = (packed[0], bucket[key][1], packed[1])

    def _key_of(self, bucket: dict[tuple[str, str], Entry], e: Event) -> tuple[str, str] | None:
        """The key of the object whose current bytes are ``e``'s, or None when they are
        not (a later write replaced them). The event knows the name; the namespace is the
        last one found when the object there holds these very bytes, else read from them."""
        key = (self._guess_ns, e.name)
        hit = bucket.get(key)
        if hit is None or hit[0] is not e.data:
            try:
                meta = _NAMESPACED.decode(e.data).metadata
            except msgspec.DecodeError:
                return None
            key = (meta.namespace if meta is not None else "", e.name)
            hit = bucket.get(key)
            if hit is None or hit[0] is not e.data:
                return None
            self._guess_ns = key[0]
        return key


def _keeps_protocol(store: Store) -> Storage:
    """Never called: mypy checks here that ``Store`` is a ``Storage``."""
    return store


def _plain(entry: Entry) -> bytes:
    """The entry's object as plain bytes (decompressed when kept compressed)."""
    data, _, zdict = entry
    return data if zdict is None else unpack(data, zdict)


class _Meta(msgspec.Struct):
    namespace: str = ""


class _Namespaced(msgspec.Struct):
    metadata: _Meta | None = None


_NAMESPACED = msgspec.msgpack.Decoder(_Namespaced)  # reads an object's namespace, nothing else


def _node(kind: str, obj: dict | None) -> str:
    """The node an object is selected by: a pod's spec.nodeName, a Node's own name."""
    if not obj:
        return ""
    if kind == "Node":
        return (obj.get("metadata") or {}).get("name") or ""
    spec = obj.get("spec")  # a kind kubemu only stores may hold anything here
    return (spec.get("nodeName") or "") if isinstance(spec, dict) else ""
