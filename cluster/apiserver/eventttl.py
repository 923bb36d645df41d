"""When the apiserver lets an Event go: upstream's ``--event-ttl``, plus a cap on how many.

Owns the deadlines of the stored Events. Upstream stores each Event under an etcd lease of
``--event-ttl`` (default one hour), renewed by every write to it, and etcd removes it when
the lease runs out, which its watchers see as a DELETED event. kubemu keeps the same
deadline per Event and, since it has no etcd to do it on its own, the apiserver removes the
Events whose deadline has passed at the start of each write batch (a live cluster writes
every few seconds: its kubelets renew their Leases). ``max_events`` is kubemu's own memory
guard: past it, the Events nearest their deadline go first, as if their time had come.

Called by ``APIServer`` (``apiserver.py``): ``note`` on every Event it stores, ``due``
before each batch; it removes what ``due`` returns.
"""

from __future__ import annotations

import heapq
import sys

EVENT_TTL_SECONDS = 3600.0  # upstream's --event-ttl default
MAX_EVENTS = 200_000  # kubemu's cap: about 0.6 GB of Events in the apiserver


class EventExpiry:
    """Deadlines per Event key, kept in deadline order by one dict (see ``note``).

    The deadline is the write time plus one TTL, and writes come in time order, so a note
    that goes to the end of the dict (a renewed Event leaves its old place) keeps it sorted:
    the Events due are at its front. A writer whose clock reads earlier than an Event already
    noted (a component's own instant in a stepped run) makes a deadline that belongs
    further in: those few wait in a heap of their own, merged with the front in ``due``. Both
    give up Events in (deadline, order noted) order."""

    def __init__(self, ttl: float = EVENT_TTL_SECONDS, max_events: int = MAX_EVENTS):
        if ttl <= 0:
            raise ValueError(f"eventTTL: {ttl} must be more than 0 seconds")
        if max_events < 1:
            raise ValueError(f"maxEvents: {max_events} must be at least 1")
        self.ttl, self.max_events = ttl, max_events
        self._order: dict[tuple[str, str], float] = {}  # key -> deadline, deadlines never decreasing
        self._last = float("-inf")  # the latest deadline put in ``_order``
        self._written = (float("nan"), 0.0)  # the last write time and its deadline: one float a batch
        self._late: dict[tuple[str, str], float] = {}  # key -> deadline earlier than ``_last`` was
        self._heap: list[tuple[float, int, str, str]] = []  # ``_late``'s, lazily removed
        self._seq = 0  # ties in the heap broken in the order the Events were written
        self.expired = self.capped = 0

    def note(self, ns: str, name: str, written_at: float) -> None:
        """An Event was created or written at ``written_at``: its lease starts again."""
        if written_at == self._written[0]:
            at = self._written[1]  # the same float for a batch's Events
        else:
            at = written_at + self.ttl
            self._written = (written_at, at)
        key = (sys.intern(ns), sys.intern(name))  # the store's key holds the same two
        if self._order.get(key) == at or self._late.get(key) == at:
            return  # the same deadline: the Event keeps its place among its equals
        if self._order.pop(key, None) is None and self._late:
            self._late.pop(key, None)
        if at >= self._last:
            self._order[key] = self._last = at
            return
        self._late[key] = at
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, key[0], key[1]))

    def due(self, now: float, stored: int) -> list[tuple[str, str]]:
        """The keys to remove now: deadlines passed, then the soonest ones while more than
        ``max_events`` would stay (``stored``: how many Events the store holds)."""
        out: list[tuple[str, str]] = []
        fronts = iter(self._order.items())
        front = next(fronts, None)
        taken = 0  # keys taken from the front of ``_order``
        while True:
            top = self._late_top()
            if front is not None and (top is None or front[1] <= top[0]):
                key, at = front
            elif top is not None:
                at, key = top[0], (top[2], top[3])
            else:
                break
            if at > now and stored - len(out) <= self.max_events:
                break
            if front is not None and key is front[0]:
                taken += 1
                front = next(fronts, None)
            else:
                heapq.heappop(self._heap)
                del self._late[key]
            out.append(key)
            if at <= now:
                self.expired += 1
            else:
                self.capped += 1
        self._forget_front(out, taken)
        return out

    def _late_top(self) -> tuple[float, int, str, str] | None:
        """The heap's soonest entry still current (one renewed since is dropped)."""
        heap, late = self._heap, self._late
        while heap and late.get((heap[0][2], heap[0][3])) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def _forget_front(self, out: list[tuple[str, str]], taken: int) -> None:
        if not taken:
            return
        order = self._order
        for key in out:
            order.pop(key, None)  # the late ones are gone already
        if taken > len(order):
            # The dict keeps a hole for each key taken from its front, and every ``due``
            # would step over them: past as many holes as keys, a compact copy.
            self._order = dict(order)

    def __len__(self) -> int:
        return len(self._order) + len(self._late)
