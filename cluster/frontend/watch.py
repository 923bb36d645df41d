"""A watch over HTTP: one JSON event per line, as the apiserver streams them.

Owns the stream a ``?watch=true`` request gets: the
synthetic ADDED events of the current state when the client starts from nothing (no
resourceVersion, "0", or ``sendInitialEvents``), then every change after the start,
filtered by namespace and selectors, BOOKMARK lines when asked for, one ``ERROR`` event
carrying a 410 ``Expired`` Status when the client's resourceVersion is older than the
window, and the end of the stream at ``timeoutSeconds``. With a Table Accept each event's
object is a one-row Table (``kubectl get -w``) of the Table version asked for; an Accept
nothing can satisfy is a 406 (``outputformat.py``). Custom resources are sent at the
version the URL names, defaulted as a read is (``customresources.py``).

With a label or field selector, a watch follows which objects match, as upstream's watch
cache does with each event's previous object: an object that stops matching is sent as
DELETED (its last matching state, at the change's resourceVersion), one that starts
matching as ADDED, and changes of an object that matched neither before nor after are not
sent. The watch learns what matched from its initial events; a watch started at a
resourceVersion learns it from the state when it starts (kubemu keeps no previous
objects): a change replayed from before then, to an object the watch has not seen yet,
counts as a change of a matching object when it matches (MODIFIED, as upstream sends for
an object whose labels did not change).
Called by ``handler.py``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from ..api import codec
from ..api.errors import Expired, NotFound
from ..api.objects import name_of, namespace_of
from . import outputformat, query, tables
from .customresources import CustomView, view_of
from .paths import Target
from .wire import Request, dumps

if TYPE_CHECKING:
    from .handler import Handler

BOOKMARK_EVERY = 60.0  # real seconds, as upstream's watch cache
POLL = 1.0  # real seconds a quiet watch waits between looks (woken early by any write)
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_PREFIX = {t: b'{"type":"' + t.encode() + b'","object":' for t in ("ADDED", "MODIFIED", "DELETED")}
SHARED = 8192  # stored encodings whose JSON is kept for the next watcher

# Every watcher of a change gets the same bytes from the store; decoding them, encoding
# the JSON and each event line, and judging each distinct selector once, for all of them,
# is what lets a hundred watchers keep up.
_encoded: OrderedDict[bytes, _Change] = OrderedDict()


class _Change:
    """One stored change as every watcher of it sees it."""

    __slots__ = ("obj", "json", "lines", "verdicts")

    def __init__(self, obj: dict[str, Any], encoded: bytes) -> None:
        self.obj, self.json = obj, encoded
        self.lines: dict[str, bytes] = {}  # event type -> its line
        self.verdicts: dict[tuple[str, str, str], bool] = {}  # (namespace, labels, fields) -> wanted

    def line(self, etype: str) -> bytes:
        got = self.lines.get(etype)
        if got is None:
            got = self.lines[etype] = _PREFIX[etype] + self.json + b"}\n"
        return got


def _shared(data: bytes) -> _Change:
    """The change ``data`` encodes, decoded and encoded once."""
    hit = _encoded.get(data)
    if hit is None:
        obj = codec.decode(data)
        hit = _encoded[data] = _Change(obj, orjson.dumps(obj))
        if len(_encoded) > SHARED:
            _encoded.popitem(last=False)
    return hit


class _Metadata(msgspec.Struct):
    namespace: str = ""
    name: str = ""
    labels: dict[str, str] | None = None


class _Head(msgspec.Struct):
    metadata: _Metadata = msgspec.field(default_factory=_Metadata)


_META = msgspec.msgpack.Decoder(_Head)  # an object's name and labels from its stored bytes


def _rv(obj: dict[str, Any]) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


class _Matching:
    """Which objects of a selective watch match now: key -> the object as it last matched,
    encoded as the store encodes it (a change's bytes are the store's own, shared)."""

    def __init__(self, selective: bool) -> None:
        self.selective = selective
        self.now: dict[tuple[str, str], bytes] = {}
        # A watch started at a resourceVersion learns what matched from the state at
        # ``known_at``, later than that: a change replayed from before it, of an object the
        # watch has not judged yet, is taken to have matched before if it matches after.
        self.known_at = 0
        self.judged: set[tuple[str, str]] = set()

    def note(self, key: tuple[str, str], data: bytes) -> None:
        if self.selective:
            self.now[key] = data

    def event(self, etype: str, obj: dict[str, Any], data: bytes, wanted: bool) -> tuple[str, Any] | None:
        """The event the client gets for a change to ``obj`` (``wanted``: it matches now):
        (type, the object to send, or None for ``obj`` itself), or None for none."""
        if not self.selective:
            return (etype, None) if wanted else None
        key = (namespace_of(obj), name_of(obj))
        matched = key in self.now
        if self.known_at:
            if _rv(obj) > self.known_at:
                # Changes come in resourceVersion order: past the known state, no change is a
                # replay any more, and nothing needs judging (nor paying for) again.
                self.known_at, self.judged = 0, set()
            else:
                if not matched and etype == "MODIFIED" and key not in self.judged:
                    matched = wanted  # replayed from before the state the watch knows: see __init__
                self.judged.add(key)
        if etype == "DELETED":
            # The deleted object is its last state, which is also its previous one.
            self.now.pop(key, None)
            return (etype, None) if wanted or matched else None
        if wanted:
            self.now[key] = data
            return ("MODIFIED" if matched and etype == "MODIFIED" else "ADDED", None)
        if not matched:
            return None
        prev = codec.decode(self.now.pop(key))
        prev["metadata"] = {**(prev.get("metadata") or {}), "resourceVersion": obj["metadata"].get("resourceVersion")}
        return ("DELETED", prev)


async def watch_lines(h: Handler, req: Request, t: Target, opts: Any) -> AsyncIterator[bytes]:
    try:
        view: CustomView | None = await view_of(h, t.resource)
    except NotFound:
        return  # the definition went since the request was routed: the watch ends, as upstream's
    stream = _Stream(h, req, t, opts, view)
    async for data in stream.start(query.watch_start(opts, await h.backend.resource_version())):
        yield data
    async for data in stream.follow():
        yield data


class _Stream:
    """One watch: how its lines are shaped (JSON, a Table, a custom resource's version), what
    it selects, and what of it matched (``_Matching``)."""

    def __init__(self, h: Handler, req: Request, t: Target, opts: Any, view: CustomView | None) -> None:
        self.h, self.t, self.opts, self.view = h, t, opts, view
        self.kind = t.resource.kind
        self.table = outputformat.table_version(req.headers.get("accept", ""))
        self.first = True  # a Table's column definitions go in the first event only
        # Watches with the same namespace and selectors judge a change alike: judged once.
        self.verdict_key = (t.namespace or "", req.query.get("labelSelector", ""), req.query.get("fieldSelector", ""))
        fs = opts.field_selector
        self.node_names = frozenset((fs.node_name(),)) if fs is not None and fs.node_name() else None
        self.matching = _Matching(opts.label_selector is not None or fs is not None)
        self.rv = 0

    def line(self, etype: str, obj: dict[str, Any]) -> bytes:
        if self.view is not None:
            obj = self.view.to_client(obj)
        if self.table:
            obj = tables.table(
                self.kind, [obj], self.h.backend.now(), include_object=self.opts.include_object, with_columns=self.first
            )
            obj = outputformat.as_table_version(obj, self.table)
            self.first = False
        return dumps({"type": etype, "object": obj}) + b"\n"

    def wanted(self, obj: dict[str, Any]) -> bool:
        t = self.t
        return (not t.namespace or namespace_of(obj) == t.namespace) and query.matches(obj, self.opts)

    def shared_wanted(self, change: _Change) -> bool:
        got = change.verdicts.get(self.verdict_key)
        if got is None:
            got = change.verdicts[self.verdict_key] = self.wanted(change.obj)
        return got

    async def start(self, rv: int | None) -> AsyncIterator[bytes]:
        """Learn what matches now; from nothing (``rv`` None), send it as ADDED events."""
        h, t, opts, matching = self.h, self.t, self.opts, self.matching
        if rv is not None and matching.selective and opts.field_selector is None:
            # A label selector alone, from a resourceVersion: what matches now is read from each
            # object's metadata, without decoding the rest (every re-watch of an informer pays it).
            matching.known_at, stored = await h.backend.list_encoded(self.kind, self.node_names)
            for data in stored:
                m = _META.decode(data).metadata
                if (not t.namespace or m.namespace == t.namespace) and opts.label_selector.matches(m.labels):
                    matching.note((m.namespace, m.name), data)
        elif rv is None or matching.selective:
            listed_rv, items = await h.backend.list(self.kind, self.node_names)
            if rv is not None:
                matching.known_at = listed_rv
            for obj in sorted(items, key=lambda o: (namespace_of(o), name_of(o))):
                if self.wanted(obj):
                    matching.note((namespace_of(obj), name_of(obj)), codec.encode(obj))
                    if rv is None:
                        yield self.line("ADDED", obj)
            if rv is None:
                rv = listed_rv
                if opts.send_initial_events:
                    yield _bookmark(t, rv, initial_end=True)
        assert rv is not None  # (the list above gave one)
        self.rv = rv

    async def follow(self) -> AsyncIterator[bytes]:
        """Every change after ``self.rv`` this watch selects, a chunk at a time, until its
        timeout; an ERROR event when the window no longer reaches back."""
        opts, backend = self.opts, self.h.backend
        deadline = time.monotonic() + opts.timeout_seconds if opts.timeout_seconds else None
        next_bookmark = time.monotonic() + BOOKMARK_EVERY
        while deadline is None or time.monotonic() < deadline:
            chunk = await backend.watch(self.kind, self.rv, self.node_names)
            if isinstance(chunk, Expired):
                yield dumps({"type": "ERROR", "object": chunk.status()}) + b"\n"
                return
            out = self.lines(chunk.events)
            if out:
                yield out
            self.rv = chunk.resume
            if opts.allow_watch_bookmarks and time.monotonic() >= next_bookmark:
                next_bookmark = time.monotonic() + BOOKMARK_EVERY
                yield _bookmark(self.t, self.rv)
            wait = POLL if deadline is None else max(0.0, min(POLL, deadline - time.monotonic()))
            await backend.changed(self.rv, wait)

    def lines(self, events: Any) -> bytes:
        """The lines of a chunk's events this watch sends, as one write (a busy watch is a
        few large writes, not one per event)."""
        out = []
        plain = not self.table and self.view is None
        for etype, data in events:
            change = _shared(data)
            sent = self.matching.event(etype, change.obj, data, self.shared_wanted(change))
            if sent is None:
                continue
            etype, other = sent
            if plain and other is None:
                out.append(change.line(etype))
            else:
                out.append(self.line(etype, change.obj if other is None else other))
        return b"".join(out)


def _bookmark(t: Target, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    obj = {"kind": t.resource.kind, "apiVersion": t.resource.api_version, "metadata": meta}
    return dumps({"type": "BOOKMARK", "object": obj}) + b"\n"
