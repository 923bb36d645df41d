"""The watch window of one kind: its recent change events, kept by age and by bytes.

Owns ``Event`` (one change as the window keeps it), ``Window`` (how much history a kind
keeps) and ``KindLog`` (one kind's events in resourceVersion order). The store
(``cluster/apiserver/store.py``) appends every write here and serves watches from it; a
watcher whose resourceVersion the window no longer holds gets ``Expired`` and relists.

How much stays, as upstream's watch cache does it: every event of the last ``fresh``
seconds (upstream's eventFreshDuration, 75 s: a watcher that falls less than that behind
catches up without a relist), and at least ``min_events`` however old (upstream's lower
bound is 100 events; kubemu's clients are slower, and 10,000 events of the largest kind
cost about 16 MB). Upstream caps the count instead (102,400 events); kubemu caps the
bytes, ``max_bytes`` per kind, because what a window costs is its events' bytes, and a
Node event is several times a Lease event: a cap in bytes bounds the memory a burst can
take whatever the kind. The cap wins over both the age and the floor.

Time is the apiserver's clock, passed in with each append, so a run in one process keeps
the same window every time. Ages are kept coarsely (one stamp per ``STAMP_STEP``
seconds), which can only keep an event a little longer than ``fresh``, never shorter.

Kinds in ``COALESCED_KINDS`` coalesce: a MODIFIED event supersedes the object's previous
MODIFIED one still in the window (its slot and rv stay, its bytes go), so a watcher
catching up sees each object's latest version rather than every step.

A log built with ``dropped`` hands it the events each trim lets go, before they go: the
store then knows which objects' bytes no watcher can be served any more, and keeps those
compressed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

# A node's Lease is renewed every 10 s: at 100,000 nodes the renewals alone would fill any
# window in seconds, and what any reader wants of a Lease is its latest renewTime.
# Creation and deletion events always stay.
COALESCED_KINDS = frozenset({"Lease"})

STAMP_STEP = 1.0  # seconds between the times the window remembers


@dataclass(slots=True)
class Event:
    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    name: str
    node: str  # a pod's spec.nodeName after the change ("" for other kinds)
    prev_node: str
    data: bytes


# What a superseded event becomes: its slot (and rv, for the bisect) stays, its bytes go.
SUPERSEDED = Event(0, "", "", "", "", b"")


class Window(NamedTuple):
    """How much history each kind's window keeps (see the module docstring)."""

    min_events: int = 10_000  # kept however old
    fresh: float = 75.0  # seconds: every younger event is kept (up to max_bytes); 0: none
    max_bytes: int = 128 << 20  # of event bytes per kind; wins over the two above

    def check(self) -> Window:
        """This policy, or ValueError naming the field and value that cannot be."""
        for field, value in (("min_events", self.min_events), ("max_bytes", self.max_bytes)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"window.{field}: must be a positive integer, got {value!r}")
        if (
            not isinstance(self.fresh, (int, float))
            or isinstance(self.fresh, bool)
            or not 0 <= self.fresh < float("inf")
        ):
            raise ValueError(f"window.fresh: must be a number of seconds >= 0, got {self.fresh!r}")
        return self


DEFAULT_WINDOW = Window()


class KindLog:
    """One kind's events in rv order, trimmed from the front.

    Positions are absolute: ``base`` (events trimmed so far) plus the list index, so the
    coalescing map (``latest``: object key -> position of its last event) and the time
    stamps (``stamp_pos``/``stamp_t``: the first position appended at or after each
    remembered time) survive trims.
    """

    __slots__ = (
        "events",
        "rvs",
        "evicted_upto",
        "policy",
        "coalesce",
        "latest",
        "base",
        "nbytes",
        "stamp_pos",
        "stamp_t",
        "next_check",
        "last_rv",
        "dropped",
    )

    def __init__(
        self,
        policy: Window = DEFAULT_WINDOW,
        coalesce: bool = False,
        dropped: Callable[[list[Event]], None] | None = None,
    ):
        self.events: list[Event] = []
        self.rvs: list[int] = []
        self.evicted_upto = 0  # every event with rv <= this has left the window
        self.policy = policy
        self.coalesce = coalesce
        self.latest: dict[tuple[str, str], int] = {}
        self.base = 0
        self.nbytes = 0  # bytes of the events still held
        self.stamp_pos: list[int] = []
        self.stamp_t: list[float] = []
        # The length at which to look for events to trim: trimming in bulk keeps an append
        # O(1) amortised however long the window grows while every event is fresh.
        self.next_check = 2 * policy.min_events
        self.last_rv = 0  # the latest event's, trimmed or not: moves with every write of the kind
        self.dropped = dropped  # told of the events a trim lets go (see the module docstring)

    def append(self, ev: Event, key: tuple[str, str], now: float) -> None:
        if self.coalesce:
            self._supersede(ev, key)
        if not self.stamp_t or now >= self.stamp_t[-1] + STAMP_STEP:
            self.stamp_pos.append(self.base + len(self.events))
            self.stamp_t.append(now)
        self.events.append(ev)
        self.rvs.append(ev.rv)
        self.last_rv = ev.rv
        self.nbytes += len(ev.data)
        if len(self.events) >= self.next_check or self.nbytes > self.policy.max_bytes:
            self._trim(now)

    def after(self, start: int, limit: int) -> tuple[list[Event], int]:
        """Up to ``limit`` events from list index ``start`` on, and the index to go on from.

        A coalescing kind's limit is at least its number of objects, and superseded slots
        are skipped and do not count: however far behind, a watcher gets every Lease's
        latest renewal in one call. With ``limit`` slots a call, a watcher at 100,000 nodes
        (10,000 renewals a second) more than a call behind never caught up; with ``limit``
        live events, one whose turns took more than 4 s saw each node's renewal less often
        than every 40 s. Either way the node lifecycle controller in a busy
        controller-manager marked healthy nodes NotReady by the tens of thousands."""
        events = self.events
        if not self.coalesce:
            chunk = events[start : start + limit]
            return chunk, start + len(chunk)
        limit = max(limit, len(self.latest))
        out: list[Event] = []
        i, n = start, len(events)
        while i < n and len(out) < limit:
            block = events[i : i + limit]
            live = [e for e in block if e is not SUPERSEDED]
            need = limit - len(out)
            if len(live) <= need:
                out += live
                i += len(block)
                continue
            out += live[:need]
            for j, e in enumerate(block):  # stop just past the last live event taken
                if e is not SUPERSEDED:
                    need -= 1
                    if not need:
                        i += j + 1
                        break
        return out, i

    def _supersede(self, ev: Event, key: tuple[str, str]) -> None:
        if ev.type == "DELETED":
            self.latest.pop(key, None)
            return
        at = self.latest.get(key)
        if ev.type == "MODIFIED" and at is not None and at >= self.base:
            old = self.events[at - self.base]
            if old.type == "MODIFIED":
                self.nbytes -= len(old.data)
                self.events[at - self.base] = SUPERSEDED
        self.latest[key] = self.base + len(self.events)

    def _trim(self, now: float) -> None:
        policy, events = self.policy, self.events
        aged = len(events) if policy.fresh <= 0 else self._older_than(now - policy.fresh)
        cut = min(aged, len(events) - policy.min_events)
        cut = max(cut, 0)
        gone = sum(len(e.data) for e in events[:cut])
        if self.nbytes - gone > policy.max_bytes:
            # Down to three quarters of the cap, so the next trim for bytes is a quarter away.
            goal = policy.max_bytes * 3 // 4
            while cut < len(events) and self.nbytes - gone > goal:
                gone += len(events[cut].data)
                cut += 1
        if cut:
            if self.dropped is not None:
                self.dropped(events[:cut])
            self.evicted_upto = self.rvs[cut - 1]
            del events[:cut]
            del self.rvs[:cut]
            self.base += cut
            self.nbytes -= gone
            self._drop_stamps()
        self.next_check = len(events) + max(len(events) // 2, policy.min_events)

    def _older_than(self, cutoff: float) -> int:
        """How many events at the front were appended before ``cutoff``, as far as the
        stamps tell: the events from one stamp to the next were appended less than
        ``STAMP_STEP`` after the first of them, so all before the stamp that follows the
        last one at least a step before the cutoff are older (a lower bound)."""
        j = bisect_right(self.stamp_t, cutoff - STAMP_STEP) - 1
        if j < 0:
            return 0
        end = self.stamp_pos[j + 1] if j + 1 < len(self.stamp_pos) else self.base + len(self.events)
        return end - self.base

    def _drop_stamps(self) -> None:
        """Forget stamps of trimmed positions, keeping the last one at or before the front
        (it still dates the events from the front to the next stamp)."""
        j = bisect_right(self.stamp_pos, self.base) - 1
        if j > 0:
            del self.stamp_pos[:j]
            del self.stamp_t[:j]
