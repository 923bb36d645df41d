"""A watch over HTTP: one JSON event per line, as the apiserver streams them.

Owns the stream a ``?watch=true`` request gets (reference k8s-http-api.md §4): the
synthetic ADDED events of the current state when the client starts from nothing (no
resourceVersion, "0", or ``sendInitialEvents``), then every change after the start,
filtered by namespace and selectors, BOOKMARK lines when asked for, one ``ERROR`` event
carrying a 410 ``Expired`` Status when the client's resourceVersion is older than the
window, and the end of the stream at ``timeoutSeconds``. With a Table Accept each event's
object is a one-row Table (``kubectl get -w``). Called by ``handler.py``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from ..api import codec
from ..api.errors import Expired
from ..api.objects import name_of, namespace_of
from . import query, tables
from .paths import Target
from .wire import Request, dumps

if TYPE_CHECKING:
    from .handler import Handler

BOOKMARK_EVERY = 60.0  # real seconds, as upstream's watch cache
POLL = 1.0  # real seconds a quiet watch waits between looks (woken early by any write)
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_PREFIX = {t: b'{"type":"' + t.encode() + b'","object":' for t in ("ADDED", "MODIFIED", "DELETED")}
SHARED = 8192  # stored encodings whose JSON is kept for the next watcher

# Every watcher of a change gets the same bytes from the store; decoding them and encoding
# the JSON once, for all of them, is what lets a hundred watchers keep up.
_encoded: OrderedDict[bytes, tuple[dict[str, Any], bytes]] = OrderedDict()


def _shared(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The object ``data`` encodes, and its JSON, decoded and encoded once per change."""
    hit = _encoded.get(data)
    if hit is None:
        obj = codec.decode(data)
        hit = _encoded[data] = (obj, orjson.dumps(obj))
        if len(_encoded) > SHARED:
            _encoded.popitem(last=False)
    return hit


async def watch_lines(h: Handler, req: Request, t: Target, opts: Any) -> AsyncIterator[bytes]:
    kind = t.resource.kind
    as_table = h.wants_table(req)
    first = [True]  # a Table's column definitions go in the first event only

    def line(etype: str, obj: dict[str, Any]) -> bytes:
        if as_table:
            obj = tables.table(kind, [obj], h.backend.now(), include_object=opts.include_object, with_columns=first[0])
            first[0] = False
        return dumps({"type": etype, "object": obj}) + b"\n"

    def wanted(obj: dict[str, Any]) -> bool:
        return (not t.namespace or namespace_of(obj) == t.namespace) and query.matches(obj, opts)

    node_names = None
    fs = opts.field_selector
    if fs is not None and fs.node_name():
        node_names = frozenset((fs.node_name(),))
    rv = query.watch_start(opts, await h.backend.resource_version())
    if rv is None:
        rv, items = await h.backend.list(kind, node_names)
        for obj in sorted(items, key=lambda o: (namespace_of(o), name_of(o))):
            if wanted(obj):
                yield line("ADDED", obj)
        if opts.send_initial_events:
            yield _bookmark(t, rv, initial_end=True)
    deadline = time.monotonic() + opts.timeout_seconds if opts.timeout_seconds else None
    next_bookmark = time.monotonic() + BOOKMARK_EVERY
    while deadline is None or time.monotonic() < deadline:
        chunk = await h.backend.watch(kind, rv, node_names)
        if isinstance(chunk, Expired):
            yield dumps({"type": "ERROR", "object": chunk.status()}) + b"\n"
            return
        # One write per chunk, not per event: a busy watch is a few large writes.
        out = []
        for etype, data in chunk.events:
            obj, encoded = _shared(data)
            if not wanted(obj):
                continue
            if as_table:
                out.append(line(etype, obj))
            else:
                out.append(_PREFIX[etype] + encoded + b"}\n")
        if out:
            yield b"".join(out)
        rv = chunk.resume
        if opts.allow_watch_bookmarks and time.monotonic() >= next_bookmark:
            next_bookmark = time.monotonic() + BOOKMARK_EVERY
            yield _bookmark(t, rv)
        if not chunk.events:
            wait = POLL if deadline is None else max(0.0, min(POLL, deadline - time.monotonic()))
            await h.backend.changed(rv, wait)


def _bookmark(t: Target, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    obj = {"kind": t.resource.kind, "apiVersion": t.resource.api_version, "metadata": meta}
    return dumps({"type": "BOOKMARK", "object": obj}) + b"\n"
