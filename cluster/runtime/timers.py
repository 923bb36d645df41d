"""The one timer mechanism: a queue of tokens ordered by (time, sequence).

Owns nothing but pending timers. A component that acts on emulated time (the kubelets of a
node host; any other logic with deadlines) schedules opaque tokens here, pops the due ones
when it is reconciled and routes each to its owner, and reports ``next_time()`` as its
``Result.wake_at``. Time is always passed in, and ties at the same time fire in the order
they were scheduled (the sequence counter), so a run is a deterministic function of its
inputs, as in SimPy.

A timer may be marked ``background``: a heartbeat or a periodic look (a Lease renewal, the
eviction manager's monitoring) that keeps a component alive but changes nothing a
scenario waits for. ``next_time(foreground=True)`` skips those; it is what a component
reports as ``Result.next_change``, which the runtimes read to tell a settled cluster.

Cancellation is lazy: a cancelled entry stays in the heap and is skipped when it reaches
the top; the heap is rebuilt when dead entries outnumber live ones, so a component that
keeps rescheduling does not grow it without bound.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import Any

Handle = int


class TimerQueue:
    __slots__ = ("_heap", "_fore", "_seq", "_live")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Any]] = []
        self._fore: list[tuple[float, int]] = []  # foreground entries only, for next_time(True)
        self._seq = 0
        self._live: dict[int, bool] = {}  # handle -> background?, for timers neither fired nor cancelled

    def schedule(self, at: float, token: Hashable, background: bool = False) -> Handle:
        """Fire ``token`` at emulated time ``at``; returns a handle for ``cancel``."""
        seq = self._seq
        self._seq += 1
        heapq.heappush(self._heap, (float(at), seq, token))
        if not background:
            heapq.heappush(self._fore, (float(at), seq))
        self._live[seq] = background
        return seq

    def cancel(self, handle: Handle | None) -> None:
        """Forget a timer; cancelling a fired, cancelled or None handle does nothing."""
        if handle is None:
            return
        self._live.pop(handle, None)
        # Compact once the dead entries dominate; amortised O(1) per cancel.
        live = self._live
        if len(self._heap) > 64 and len(self._heap) > 2 * len(live):
            self._heap = [e for e in self._heap if e[1] in live]
            heapq.heapify(self._heap)
        if len(self._fore) > 64 and len(self._fore) > 2 * len(live):
            self._fore = [e for e in self._fore if e[1] in live]
            heapq.heapify(self._fore)

    def pop_due(self, now: float) -> list[Any]:
        """Remove and return the tokens due at or before ``now``, in (time, seq) order."""
        due: list[Any] = []
        heap, live = self._heap, self._live
        while heap and heap[0][0] <= now:
            _, seq, token = heapq.heappop(heap)
            if live.pop(seq, None) is not None:
                due.append(token)
        fore = self._fore
        while fore and fore[0][1] not in live:  # fired or cancelled: keep this heap small too
            heapq.heappop(fore)
        return due

    def next_time(self, foreground: bool = False) -> float | None:
        """When the earliest live timer fires (with ``foreground``, the earliest that is not
        a background one), or None when nothing is pending."""
        live = self._live
        if foreground:
            fore = self._fore
            while fore and fore[0][1] not in live:
                heapq.heappop(fore)
            return fore[0][0] if fore else None
        heap = self._heap
        while heap and heap[0][1] not in live:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def __len__(self) -> int:
        return len(self._live)
