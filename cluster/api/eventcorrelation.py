"""The core/v1 event recorder's correlator, as client-go's ``tools/record`` runs it.

Owns what a recording component does to its Events before they reach the apiserver
(client-go's EventCorrelator), in upstream's three stages:

1. Aggregation: events alike but for their message (same source, object, type and reason)
   are remembered per group with their distinct messages; the group forgets them once
   ``AGGREGATE_INTERVAL`` (600 s) passed since its last event. An event whose message
   makes ``AGGREGATE_MAX`` (10) distinct ones is replaced by one with the message
   ``(combined from similar events): <message>``, counted as one event of the group (and
   one message leaves the set: the oldest, where upstream drops an arbitrary one).
2. Counting: an event seen before (the same source, object, type, reason and message; a
   combined event: the same group) keeps its first event's name and ``firstTimestamp``
   and carries ``count`` one more and ``lastTimestamp`` now; the apiserver then updates
   that Event instead of adding one (``cluster/apiserver/eventsink.py``, upstream's PATCH,
   re-created when it has expired).
3. The spam filter (``events.SpamFilter``'s token bucket): 25 events per source and
   object, then one per five minutes; the counts of the events it holds back still rise.

Upstream keeps three LRU caches of 4096 entries, one per stage; kubemu keeps what all three
know about one source and object in one record, in one LRU of ``CACHE_ENTRIES`` (4096)
records (and up to ``SEEN_PER_OBJECT`` counted events per record), so an event costs one
cache look-up: the scheduler records one per pod it places.

A new event is named ``<object>.<hex nanoseconds>`` as upstream names it, from the
emulated time; kubemu's components record at the same instants, so each source's names
are offset by a few hundred nanoseconds of its own and each correlator never gives a
name twice (the apiserver's sink resolves what is left). Owned by each recording
component: the controller-manager, each node host (its kubelets), the schedulers.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..clock import EPOCH, rfc3339
from .events import EventDraft, SpamFilter, built, spam_key

AGGREGATE_MAX = 10
AGGREGATE_INTERVAL = 600.0
CACHE_ENTRIES = 4096
SEEN_PER_OBJECT = 64
COMBINED_PREFIX = "(combined from similar events): "
_EPOCH_NS = int(EPOCH.timestamp()) * 1_000_000_000
_SOURCE_SPREAD = 1000  # nanoseconds a source's names are offset by, at most


class _Record:
    """What the recorder remembers of one source and object."""

    __slots__ = ("bucket", "similar", "seen")

    def __init__(self, bucket: list[float]):
        self.bucket = bucket  # the spam filter's tokens
        # (type, reason) -> [distinct messages (insertion ordered), last time]
        self.similar: dict[tuple[str, str], list[Any]] = {}
        # (type, reason, fieldPath, message), or (type, reason) for the combined event,
        # -> (count, name, firstTimestamp); order = recency
        self.seen: dict[tuple[str, ...], tuple[int, str, str]] = {}


class EventCorrelator:
    """One recording component's correlator: ``correlate`` turns the events (or drafts)
    it recorded in a batch into the Events to write, counted and named."""

    def __init__(self, spam: SpamFilter | None = None, entries: int = CACHE_ENTRIES):
        self.spam = spam if spam is not None else SpamFilter()
        self.entries = entries
        self._records: OrderedDict[tuple[Any, ...], _Record] = OrderedDict()  # order = recency
        self._offsets: dict[tuple[str, str], int] = {}
        self._last_ns = 0
        self.combined = 0  # events replaced by a combined one
        self.repeats = 0  # events that counted up an earlier one

    @property
    def dropped(self) -> int:
        return self.spam.dropped

    def correlate(self, events: Sequence[dict[str, Any] | EventDraft], now: float) -> list[dict[str, Any]]:
        """The Events to write for ``events`` (taken over: each is completed in place), in
        order; those the spam filter holds back are left out (their counts still rise)."""
        out: list[dict[str, Any]] = []
        for event in events:
            written = self._one(event, now)
            if written is not None:
                out.append(written)
        return out

    def _one(self, event: dict[str, Any] | EventDraft, now: float) -> dict[str, Any] | None:
        source_object, type_, reason, message, field_path = _identity(event)
        records = self._records
        rec = records.get(source_object)
        if rec is None:
            if len(records) >= self.entries:
                records.popitem(last=False)  # the least recently used
            rec = records[source_object] = _Record(self.spam.bucket(now))
        else:
            records.move_to_end(source_object)
        combined = _aggregate(rec, (type_, reason), message, now)
        key: tuple[str, ...] = (type_, reason) if combined else (type_, reason, field_path, message)
        seen = rec.seen.pop(key, None)
        if seen is None:
            if len(rec.seen) >= SEEN_PER_OBJECT:
                del rec.seen[next(iter(rec.seen))]
            count, name, first = 1, self._name(source_object, now), rfc3339(now)
        else:
            count, name, first = seen[0] + 1, seen[1], seen[2]
            self.repeats += 1
        rec.seen[key] = (count, name, first)
        if not self.spam.spend(rec.bucket, now):
            return None
        ev = built(event)  # the recorder's own: changed in place
        meta = ev["metadata"]
        meta.pop("generateName", None)
        meta["name"] = name
        if combined:
            self.combined += 1
            ev["message"] = COMBINED_PREFIX + message
        ev["firstTimestamp"], ev["count"] = first, count
        return ev

    def _name(self, source_object: tuple[Any, ...], now: float) -> str:
        """``<object>.<hex of the event's Unix nanoseconds>``, never the same twice here."""
        source = (source_object[0], source_object[1])
        offset = self._offsets.get(source)
        if offset is None:
            offset = self._offsets[source] = zlib.crc32(f"{source[0]}/{source[1]}".encode()) % _SOURCE_SPREAD
        ns = max(_EPOCH_NS + round(now * 1_000_000) * 1000 + offset, self._last_ns + 1)
        self._last_ns = ns
        return f"{source_object[4]}.{ns:x}"


def _aggregate(rec: _Record, group: tuple[str, str], message: str, now: float) -> bool:
    """Stage 1: whether the event is replaced by a combined one."""
    similar = rec.similar.get(group)
    if similar is None or now - similar[1] > AGGREGATE_INTERVAL:
        similar = rec.similar[group] = [{}, now]
    messages = similar[0]
    messages[message] = None
    similar[1] = now
    if len(messages) < AGGREGATE_MAX:
        return False
    del messages[next(iter(messages))]  # the set stays below the threshold
    return True


def _identity(event: dict[str, Any] | EventDraft) -> tuple[tuple[Any, ...], str, str, str, str]:
    """(the spam filter's source-and-object key, type, reason, message, fieldPath)."""
    if isinstance(event, EventDraft):
        return event.spam_key(), event.type, event.reason, event.message, ""
    io = event.get("involvedObject") or {}
    fields = event.get("type", ""), event.get("reason", ""), event.get("message", ""), io.get("fieldPath", "")
    return (spam_key(event), *fields)
