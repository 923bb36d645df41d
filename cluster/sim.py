"""The discrete-event core: a timer queue ordered by (time, sequence).

Owns nothing but pending timers. Components that need to act later (kubelets, and any
other logic that runs on emulated time) schedule opaque tokens here; their actor shell
pops the due tokens and routes each one back to its owner. Time is always passed in, and
ties at the same time fire in the order they were scheduled (the sequence counter), so a
run is a deterministic function of its inputs, as in SimPy.

Cancellation is lazy: a cancelled entry stays in the heap and is skipped when it reaches
the top; the heap is rebuilt when dead entries outnumber live ones, so a kubelet that
keeps rescheduling does not grow it without bound.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import Any

Handle = int


class TimerQueue:
    __slots__ = ("_heap", "_seq", "_live")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Any]] = []
        self._seq = 0
        self._live: set[int] = set()  # handles scheduled and neither fired nor cancelled

    def schedule(self, at: float, token: Hashable) -> Handle:
        """Fire ``token`` at emulated time ``at``; returns a handle for ``cancel``."""
        seq = self._seq
        self._seq += 1
        heapq.heappush(self._heap, (float(at), seq, token))
        self._live.add(seq)
        return seq

    def cancel(self, handle: Handle | None) -> None:
        """Forget a timer; cancelling a fired, cancelled or None handle does nothing."""
        if handle is None:
            return
        self._live.discard(handle)
        # Compact once the dead entries dominate; amortised O(1) per cancel.
        if len(self._heap) > 64 and len(self._heap) > 2 * len(self._live):
            self._heap = [e for e in self._heap if e[1] in self._live]
            heapq.heapify(self._heap)

    def pop_due(self, now: float) -> list:
        """Remove and return the tokens due at or before ``now``, in (time, seq) order."""
        due = []
        heap, live = self._heap, self._live
        while heap and heap[0][0] <= now:
            _, seq, token = heapq.heappop(heap)
            if seq in live:
                live.discard(seq)
                due.append(token)
        return due

    def next_time(self) -> float | None:
        """When the earliest live timer fires, or None when nothing is pending."""
        heap, live = self._heap, self._live
        while heap and heap[0][1] not in live:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def __len__(self) -> int:
        return len(self._live)
