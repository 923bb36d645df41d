"""The client side of list + watch, as upstream's Reflector does it.

Owns, for one client, the resourceVersion to resume each kind's watch from and the keys
the client has seen, so that a relist after ``Expired`` (or after an apiserver restart)
turns into ordinary events: ADDED/MODIFIED for what is listed, DELETED for what vanished
while the client was not watching. A list shows keys, not history: of an object gone
meanwhile it knows only the key, and one deleted and created again under the same name
looks changed. For pods watched by head (clients that keep pods by uid: the schedulers and
the node hosts) the reflector also remembers each pod's uid and node, so such a DELETED
names the pod it was (as upstream's DeletedFinalStateUnknown carries the last known
object), and a pod listed under a known name with a new uid comes as the DELETED of the
old one, then the ADDED of the new. Other clients get the key only, and keep by key;
for them the reflector keeps only which keys it saw, in a ``nameset.KeySet`` (a numbered
name costs a bit: at 100,000 pods a dict of key tuples and name strings cost ~20 MB).

A kind watched ``lazy`` is read only as far as its key (a pod as far as its head, without
the uid bookkeeping): a client that reads a few fields from the bytes (the benches' driver
reading whether a node is Ready) never holds a whole batch of decoded objects, which at
10,000 nodes left the driver's heap about 7.5 KB a node larger.

Every client in kubemu (each component under either runtime, and the scenario driver)
watches through one: the Ray runtime through ``actors/informer.py``, the local runtime
through ``local.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import msgspec

from ..api.codec import decode
from ..api.errors import Expired
from ..api.objects import name_of, namespace_of
from ..api.podhead import PodHead, head_of, read_head
from ..api.requests import ListResult, Watch, WatchChunk
from .component import WatchEvent
from .nameset import KeySet

# What the reflector remembers of a kind: for pods watched by head, each key's (uid, node);
# for the rest, only which keys it has seen.
Held = dict[tuple[str, str], tuple[str, str]]


class Reflector:
    def __init__(self, watches: Sequence[Watch] | Sequence[str]):
        self.watches = [w if isinstance(w, Watch) else Watch(w) for w in watches]
        kinds = [w.kind for w in self.watches]
        self.rv: dict[str, int | None] = {k: None for k in kinds}
        self._heads = {w.kind for w in self.watches if w.heads and w.kind == "Pod"}
        # kind -> key -> the (uid, node) last seen, for pods watched by head; else the keys.
        self._known: dict[str, Held | KeySet] = {k: {} if k in self._heads else KeySet() for k in kinds}
        self.relists = 0
        self._listed: set[str] = set()
        self._lazy = {w.kind for w in self.watches if w.lazy and w.kind not in self._heads}
        # Pods are read by their head either way: a lazy pod's key comes with it.
        self._by_head = self._heads | (self._lazy & {"Pod"})

    def node_names(self, kind: str) -> frozenset[str] | None:
        """The ``spec.nodeName`` selector of ``kind``'s watch (None: every object)."""
        return next((w.node_names for w in self.watches if w.kind == kind), None)

    def has_listed(self, kind: str) -> bool:
        """Whether ``kind`` was listed before (a list of it now is a relist)."""
        return kind in self._listed

    def kinds_to_list(self) -> list[str]:
        return [k for k, rv in self.rv.items() if rv is None]

    def relist_all(self) -> None:
        """Relist every kind on the next poll: the connection failed, so a reply that carried
        events may have been lost. What was known stays known, so the relist reports what
        vanished meanwhile as DELETED."""
        for kind in self.rv:
            self.rv[kind] = None

    def watch_since(self) -> dict[str, int]:
        return {k: rv for k, rv in self.rv.items() if rv is not None}

    def resource_version(self) -> int:
        """The oldest resourceVersion this client has seen every kind up to (0 before a list)."""
        return min((rv or 0 for rv in self.rv.values()), default=0)

    def on_list(self, kind: str, result: ListResult) -> list[WatchEvent]:
        known = self._known[kind]
        if isinstance(known, KeySet):
            return self._on_key_list(kind, known, result)
        seen: Held = {}
        out = []
        by_head, lazy = kind in self._by_head, kind in self._lazy
        for b in result.items:
            key, obj, head = _read(b, by_head, lazy)
            held = seen[key] = _held(obj, head)
            was = known.get(key)
            replaced = was is not None and was[0] != held[0]
            if replaced:
                out.append(_gone(kind, key, was))  # deleted and created again meanwhile
            etype = "MODIFIED" if key in known and not replaced else "ADDED"
            out.append(WatchEvent(kind, etype, obj, b, head))
        for key in sorted(known.keys() - seen.keys()):
            # Gone while we were not watching: the relist is the only news of it.
            out.append(_gone(kind, key, known[key]))
        self._known[kind] = seen
        return self._listed_now(kind, result, out)

    def _on_key_list(self, kind: str, known: KeySet, result: ListResult) -> list[WatchEvent]:
        """``on_list`` for a kind the reflector keeps by key only."""
        seen = KeySet()
        out = []
        by_head, lazy = kind in self._by_head, kind in self._lazy
        for b in result.items:
            key, obj, head = _read(b, by_head, lazy)
            seen.add(key)
            out.append(WatchEvent(kind, "MODIFIED" if key in known else "ADDED", obj, b, head))
        for key in sorted(k for k in known if k not in seen):
            out.append(_gone(kind, key, None))  # gone while we were not watching
        self._known[kind] = seen
        return self._listed_now(kind, result, out)

    def _listed_now(self, kind: str, result: ListResult, out: list[WatchEvent]) -> list[WatchEvent]:
        if kind in self._listed:
            self.relists += 1
        self._listed.add(kind)
        self.rv[kind] = result.resource_version
        return out

    def on_watch(self, kind: str, reply: WatchChunk | Expired) -> list[WatchEvent]:
        """Apply one kind's part of a watch reply: its events, or Expired (relist next)."""
        if isinstance(reply, Expired):
            self.rv[kind] = None
            return []
        known = self._known[kind]
        by_head, lazy = kind in self._by_head, kind in self._lazy
        out = []
        for etype, data in reply.events:
            # A pod ADDED is read by its head too: a scheduler behind a backlog keeps a new
            # pending pod as its bytes without decoding it (``intake.py``).
            key, obj, head = _read(data, by_head, lazy)
            if isinstance(known, KeySet):
                if etype == "DELETED":
                    known.discard(key)
                else:
                    known.add(key)
            elif etype == "DELETED":
                known.pop(key, None)
            else:
                known[key] = _held(obj, head)
            out.append(WatchEvent(kind, etype, obj, data, head))
        self.rv[kind] = reply.resume
        return out


def _held(obj: dict[str, Any] | None, head: PodHead | None) -> tuple[str, str]:
    """What a relist must remember of a pod watched by head: its uid and node (the node
    names are few, so one string each is shared)."""
    if head is None:  # read whole (``_read``): not the usual shape
        head = head_of(obj or {})
    return head.uid, sys.intern(head.node_name)


def _gone(kind: str, key: tuple[str, str], held: tuple[str, str] | None) -> WatchEvent:
    """The DELETED of an object a relist no longer shows: its key, and the uid and node
    last seen when the reflector keeps them."""
    meta: dict[str, Any] = {"namespace": key[0], "name": key[1]}
    obj: dict[str, Any] = {"kind": kind, "metadata": meta}
    if held is not None:
        meta["uid"] = held[0]
        if held[1]:
            obj["spec"] = {"nodeName": held[1]}
    return WatchEvent(kind, "DELETED", obj)


class _Meta(msgspec.Struct):
    namespace: str = ""
    name: str = ""


class _Keyed(msgspec.Struct):
    metadata: _Meta | None = None


_KEY = msgspec.msgpack.Decoder(_Keyed)


def _read(
    data: bytes, heads: bool, lazy: bool = False
) -> tuple[tuple[str, str], dict[str, Any] | None, PodHead | None]:
    """(key, object, head) of an event's bytes. With ``heads`` (pods only) only the head
    is read and the object is left for the event to decode when a client reads it; with
    ``lazy`` only the key is read; otherwise the object is decoded now."""
    if heads:
        try:
            head = read_head(data)
        except ValueError:
            pass  # not the usual shape: the whole object says what it is
        else:
            return (head.namespace, head.name), None, head
    elif lazy:
        try:
            meta = _KEY.decode(data).metadata
        except msgspec.DecodeError:
            meta = None  # not the usual shape: the whole object says what it is
        if meta is not None and meta.name:
            return (meta.namespace, meta.name), None, None
    obj = decode(data)
    return (namespace_of(obj), name_of(obj)), obj, None
