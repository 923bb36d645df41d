"""Where a component's recorded Event lands: a new Event, or a count on an earlier one.

Owns the apiserver's half of the event recorder (``RecordEvent``; the component's half,
which counts and names, is ``cluster/api/eventcorrelation.py``): an event whose ``count``
is above 1 updates the stored Event of its name (``count``, ``lastTimestamp`` and
``message``, as upstream's recorder PATCHes them) or, when that Event has expired,
creates it again under the same name with the higher count; a first event is created
under its name. Two components may name events about one object alike at the same
emulated instant: a name taken by another source's Event is passed over for the next
nanosecond (a few tries), the same way each time, so a later count finds its Event.
An event without such a name (``generateName``) is created as any object is.

Called by ``APIServer._apply`` (``apiserver.py``) for every ``RecordEvent``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..api.errors import AlreadyExists
from ..api.eventcorrelation import COMBINED_PREFIX

if TYPE_CHECKING:
    from .apiserver import APIServer

TRIES = 8
_HEX = frozenset("0123456789abcdef")


def record_event(api: APIServer, ev: dict[str, Any], now: float, owned: bool) -> None:
    m = ev.get("metadata") or {}
    name = m.get("name")
    names = candidates(name) if isinstance(name, str) else None
    if names is None:
        api.create(ev, now, owned)
        return
    ns = m.get("namespace") or "default"
    repeat = isinstance(ev.get("count"), int) and ev["count"] > 1
    for candidate in names:
        stored = api.store.get("Event", ns, candidate)
        if stored is None:
            ev = ev if owned else dict(ev, metadata=dict(m))
            ev["metadata"]["name"] = candidate
            api.create(ev, now, owned)
            return
        if repeat and _same_event(stored, ev):
            for field in ("count", "lastTimestamp", "message"):
                stored[field] = ev.get(field)
            annotations = (ev.get("metadata") or {}).get("annotations")
            if annotations is not None:
                stored["metadata"]["annotations"] = annotations
            api.store.put("Event", stored, "MODIFIED")
            api.event_expiry.note(ns, candidate, now)
            return
    raise AlreadyExists(f'events "{name}" already exists (and {TRIES - 1} names after it)')


def _same_event(stored: dict[str, Any], ev: dict[str, Any]) -> bool:
    """Whether ``stored`` is the Event ``ev`` counts up: the same source, object, type and
    reason, and the same message (a combined event's message changes with each count)."""
    for field in ("source", "involvedObject", "type", "reason"):
        if stored.get(field) != ev.get(field):
            return False
    a, b = stored.get("message") or "", ev.get("message") or ""
    return a == b or (a.startswith(COMBINED_PREFIX) and b.startswith(COMBINED_PREFIX))


def candidates(name: str) -> Iterator[str] | None:
    """The names an event named ``<object>.<hex>`` may be stored under, in the order they
    are tried (made as they are asked for: nearly always the first is free or its own);
    None for any other name."""
    head, dot, tail = name.rpartition(".")
    if not dot or not head or not tail or not _HEX.issuperset(tail):
        return None
    return _after(name, head, int(tail, 16))


def _after(name: str, head: str, first: int) -> Iterator[str]:
    yield name
    for i in range(1, TRIES):
        yield f"{head}.{first + i:x}"
