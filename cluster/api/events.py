"""Event objects (core/v1 Event) as components report them.

The scheduler, the kubelets and the controllers all describe what they did with Events;
this module owns their shape so the report and expectations can read them uniformly.
Events are created through the apiserver in batches like every other write.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..clock import rfc3339
from .objects import KINDS, key_of, uid_of


def make_event(
    obj: dict[str, Any],
    reason: str,
    message: str,
    now: float,
    *,
    type: str = "Normal",
    component: str = "",
    host: str = "",
) -> dict[str, Any]:
    """An Event about ``obj`` at emulated time ``now``; the apiserver assigns uid and rv."""
    kind = obj.get("kind", "")
    m = obj.get("metadata") or {}
    ns = m.get("namespace", "") if KINDS.get(kind, ("v1", False))[1] else ""
    return event_about(kind, ns, m.get("name", ""), m.get("uid", ""), reason, message, now, type, component, host)


def event_about(
    kind: str,
    ns: str,
    name: str,
    uid: str,
    reason: str,
    message: str,
    now: float,
    type: str = "Normal",
    component: str = "",
    host: str = "",
) -> dict[str, Any]:
    """``make_event`` given the object's identity rather than the object: the scheduler
    builds one per pod it places and keeps the pod's identity without its dict."""
    stamp, when = _stamps(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            # A recorder's correlator names it <object>.<hex timestamp> as upstream's does
            # (``eventcorrelation.py``); written without one, the apiserver completes this.
            "generateName": f"{name}.{component or 'kubemu'}.",
            "namespace": ns or "default",
            "annotations": {"kubemu.io/time": when},
        },
        "involvedObject": {
            "kind": kind,
            "namespace": ns,
            "name": name,
            "uid": uid,
            "apiVersion": KINDS.get(kind, ("v1", False))[0],
        },
        "reason": reason,
        "message": message,
        "type": type,
        "source": {"component": component, "host": host} if host else {"component": component},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


# The last time formatted, with its strings: a batch's events share one now. One tuple,
# replaced whole, so a reader never pairs one time with another's strings.
_last_stamps: list[tuple[float, tuple[str, str]]] = [(-1.0, ("", ""))]


def _stamps(now: float) -> tuple[str, str]:
    """(RFC 3339 second, the exact time as the kubemu.io/time annotation) of ``now``."""
    at, stamps = _last_stamps[0]
    if at != now:
        stamps = (rfc3339(now), repr(round(now, 6)))
        _last_stamps[0] = (now, stamps)
    return stamps


class EventDraft:
    """An Event not built yet: what ``make_event`` needs, kept until a recorder's
    ``SpamFilter`` passes it. A ReplicaSet scaling by thousands writes one
    ``SuccessfulCreate`` or ``SuccessfulDelete`` per pod and the filter drops all but a
    few, so building each first would cost more than the filter. Reads like the Event
    (``draft["reason"]``), built on first read; ``built`` is the Event itself."""

    __slots__ = ("obj", "reason", "message", "now", "type", "component", "_event")

    def __init__(self, obj: dict[str, Any], reason: str, message: str, now: float, type: str, component: str):
        self.obj, self.reason, self.message, self.now, self.type = obj, reason, message, now, type
        self.component = component
        self._event: dict[str, Any] | None = None

    @property
    def built(self) -> dict[str, Any]:
        ev = self._event
        if ev is None:
            ev = self._event = make_event(
                self.obj, self.reason, self.message, self.now, type=self.type, component=self.component
            )
        return ev

    def spam_key(self) -> tuple[Any, ...]:
        """``SpamFilter``'s key of the Event this becomes (no host: controllers have none)."""
        kind, ns, name = key_of(self.obj)
        return (self.component, "", kind, ns, name, uid_of(self.obj), KINDS.get(kind, ("v1", True))[0])

    def __getitem__(self, field: str) -> Any:
        return self.built[field]

    def __repr__(self) -> str:
        return f"EventDraft({self.reason!r}, {self.message!r})"


def built(event: dict[str, Any] | EventDraft) -> dict[str, Any]:
    """The Event itself, from an Event or a draft."""
    return event.built if isinstance(event, EventDraft) else event


def event_time(ev: dict[str, Any]) -> float:
    """The emulated time an event was recorded, at full precision."""
    return float(((ev.get("metadata") or {}).get("annotations") or {}).get("kubemu.io/time", 0.0))


def involved_ref(ev: dict[str, Any]) -> str:
    """The event's object as ``Kind/namespace/name`` (``Kind/name`` when cluster-scoped)."""
    io = ev.get("involvedObject") or {}
    if io.get("namespace"):
        return f"{io.get('kind')}/{io['namespace']}/{io.get('name')}"
    return f"{io.get('kind')}/{io.get('name')}"


# Upstream's EventSourceObjectSpamFilter defaults (client-go tools/record): each source may
# record 25 events about one object at once, then one more every 5 minutes.
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
SPAM_KEYS = 4096  # the filter's LRU size: a key pushed out starts with a full bucket again


def spam_key(event: dict[str, Any] | EventDraft) -> tuple[Any, ...]:
    """The key client-go's spam filter and correlator count an event under: its source
    (component, host) and the object it is about."""
    if isinstance(event, EventDraft):
        return event.spam_key()
    io, src = event.get("involvedObject") or {}, event.get("source") or {}
    return (
        src.get("component", ""),
        src.get("host", ""),
        io.get("kind"),
        io.get("namespace"),
        io.get("name"),
        io.get("uid"),
        io.get("apiVersion"),
    )


class SpamFilter:
    """Which events a recorder passes on, as upstream's event correlator rations them.

    One token bucket per source and involved object (component, host, and the object's
    kind, namespace, name, uid and apiVersion), ``SPAM_BURST`` deep, refilled at
    ``SPAM_QPS`` per emulated second; an event that finds the bucket empty is dropped, so
    a ReplicaSet creating 10,000 pods records 25 ``SuccessfulCreate`` events, then one per
    five minutes, and the apiserver never stores the rest. Its token bucket (``bucket``,
    ``spend``) is the third stage of every recorder's ``EventCorrelator``
    (``eventcorrelation.py``), which keeps one bucket in each of its records.
    """

    def __init__(self, burst: int = SPAM_BURST, qps: float = SPAM_QPS, keys: int = SPAM_KEYS):
        self.burst, self.qps, self.keys = burst, qps, keys
        # key -> [tokens, last refill]; order = recency (an OrderedDict: a dict would rescan
        # the holes its evictions leave at the front)
        self._buckets: OrderedDict[tuple[Any, ...], list[float]] = OrderedDict()
        self.dropped = 0

    def allow(self, event: dict[str, Any] | EventDraft, now: float) -> bool:
        return self.allow_key(spam_key(event), now)

    def allow_key(self, key: tuple[Any, ...], now: float) -> bool:
        """``allow`` given the event's key (source and involved object)."""
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            bucket = self.bucket(now)
            if len(self._buckets) >= self.keys:
                self._buckets.popitem(last=False)  # the least recently used
        self._buckets[key] = bucket
        return self.spend(bucket, now)

    def bucket(self, now: float) -> list[float]:
        """A key's first bucket: full. ``EventCorrelator`` keeps one per record."""
        return [float(self.burst), now]

    def spend(self, bucket: list[float], now: float) -> bool:
        """Refill ``bucket`` for the time since it was last used and take a token from it;
        False (and one more dropped) when it has none."""
        bucket[0] = min(float(self.burst), bucket[0] + (now - bucket[1]) * self.qps)
        bucket[1] = now
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return True
        self.dropped += 1
        return False

    def passed(self, events: Sequence[dict[str, Any] | EventDraft], now: float) -> list[dict[str, Any]]:
        """``events`` less those the filter drops, in order; drafts come out built."""
        return [built(e) for e in events if self.allow(e, now)]
