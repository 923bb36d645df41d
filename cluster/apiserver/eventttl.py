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
    """Deadlines per Event key, in a heap with lazy removal (a renewed Event's old entry
    is skipped when it comes up)."""

    def __init__(self, ttl: float = EVENT_TTL_SECONDS, max_events: int = MAX_EVENTS):
        if ttl <= 0:
            raise ValueError(f"eventTTL: {ttl} must be more than 0 seconds")
        if max_events < 1:
            raise ValueError(f"maxEvents: {max_events} must be at least 1")
        self.ttl, self.max_events = ttl, max_events
        self._deadline: dict[tuple[str, str], float] = {}
        self._heap: list[tuple[float, int, str, str]] = []
        self._seq = 0  # ties broken in the order the Events were written
        self.expired = self.capped = 0

    def note(self, ns: str, name: str, written_at: float) -> None:
        """An Event was created or written at ``written_at``: its lease starts again."""
        at = written_at + self.ttl
        ns, name = sys.intern(ns), sys.intern(name)  # the store's key holds the same two
        self._deadline[(ns, name)] = at
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, ns, name))

    def due(self, now: float, stored: int) -> list[tuple[str, str]]:
        """The keys to remove now: deadlines passed, then the soonest ones while more than
        ``max_events`` would stay (``stored``: how many Events the store holds)."""
        out: list[tuple[str, str]] = []
        heap, deadline = self._heap, self._deadline
        while heap:
            at, _, ns, name = heap[0]
            over = stored - len(out) > self.max_events
            if at > now and not over:
                break
            heapq.heappop(heap)
            if deadline.get((ns, name)) != at:
                continue  # renewed since
            del deadline[(ns, name)]
            out.append((ns, name))
            if at <= now:
                self.expired += 1
            else:
                self.capped += 1
        return out

    def __len__(self) -> int:
        return len(self._deadline)
