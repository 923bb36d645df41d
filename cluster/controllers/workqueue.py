"""One rate-limited work queue per controller, on the emulated clock.

Owns the queue every ``Reconciler`` is fed from (``reconciler.py`` drives it): a key is
queued at most once however many events name it; ``add_after`` holds a key until a time;
``add_rate_limited`` holds it for the rate limiter's delay; ``forget`` clears a key's
failures. The limiter is client-go's default controller limiter: the larger of a per-key
exponential back-off (5 ms doubling to 1,000 s) and an overall token bucket (10 per second,
burst 100), both on emulated seconds.

Keys come out in the order they became ready (ties in the order they were added), so a
run replays the same way with the same seed.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

BASE_DELAY = 0.005
MAX_DELAY = 1000.0
BUCKET_QPS = 10.0
BUCKET_BURST = 100


class RateLimiter:
    """client-go's default controller rate limiter: max(per-key exponential, token bucket)."""

    def __init__(
        self,
        base: float = BASE_DELAY,
        cap: float = MAX_DELAY,
        qps: float = BUCKET_QPS,
        burst: int = BUCKET_BURST,
    ) -> None:
        self.base, self.cap, self.qps, self.burst = base, cap, qps, burst
        self._failures: dict[Hashable, int] = {}
        self._tokens = float(burst)
        self._last = 0.0

    def when(self, key: Hashable, now: float) -> float:
        """The delay before ``key`` may be tried again; counts one more failure for it."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        backoff = min(self.base * (2.0**n), self.cap) if n < 64 else self.cap
        return max(backoff, self._bucket_delay(now))

    def _bucket_delay(self, now: float) -> float:
        # Tokens refill at qps up to burst; a request takes one, waiting for it if none is left.
        self._tokens = min(float(self.burst), self._tokens + max(0.0, now - self._last) * self.qps)
        self._last = max(self._last, now)
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def retries(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class WorkQueue(Generic[K]):
    """Keys waiting for a reconcile: ready ones in FIFO order, held ones by time."""

    def __init__(self, limiter: RateLimiter | None = None) -> None:
        self.limiter = limiter or RateLimiter()
        self._ready: dict[K, None] = {}  # insertion-ordered set
        self._held: list[tuple[float, int, K]] = []
        self._held_at: dict[K, float] = {}  # earliest time each held key is due
        self._seq = itertools.count()
        self.adds = 0
        self.retries = 0

    def add(self, key: K) -> None:
        if key not in self._ready:
            self.adds += 1
            self._ready[key] = None

    def add_after(self, key: K, delay: float, now: float) -> None:
        if delay > 0:
            self.add_at(key, now + delay, now)
        else:
            self.add(key)

    def add_at(self, key: K, at: float, now: float) -> None:
        """Hold ``key`` until the emulated time ``at`` (at once if it has passed)."""
        if at <= now:
            self.add(key)
            return
        if key in self._ready or self._held_at.get(key, float("inf")) <= at:
            return  # already due sooner
        self._held_at[key] = at
        heapq.heappush(self._held, (at, next(self._seq), key))

    def add_rate_limited(self, key: K, now: float) -> float:
        """Hold ``key`` for the rate limiter's delay; returns the delay."""
        self.retries += 1
        delay = self.limiter.when(key, now)
        self.add_after(key, delay, now)
        return delay

    def back_off(self, key: K, now: float) -> float:
        """Count a failure of ``key`` and hold it for the rate limiter's delay, even while it
        is ready (its reconcile comes first and says anew); returns the end of the hold."""
        self.retries += 1
        at = now + self.limiter.when(key, now)
        if self._held_at.get(key, float("inf")) > at:
            self._held_at[key] = at
            heapq.heappush(self._held, (at, next(self._seq), key))
        return at

    def forget(self, key: K) -> None:
        self.limiter.forget(key)

    def unhold(self, key: K) -> None:
        """Drop ``key``'s pending hold: a reconcile that just ran says anew when to look again."""
        self._held_at.pop(key, None)  # its heap entry is skipped as superseded

    def pop_ready(self, now: float) -> list[K]:
        """Every key due at ``now``, in the order they became due; the queue keeps none of them."""
        held = self._held
        while held and held[0][0] <= now:
            at, _, key = heapq.heappop(held)
            if self._held_at.get(key) == at:
                del self._held_at[key]
                self.add(key)
        keys = list(self._ready)
        self._ready.clear()
        return keys

    def next_ready(self) -> float | None:
        """When a held key next comes due (None when nothing is held)."""
        held = self._held
        while held and self._held_at.get(held[0][2]) != held[0][0]:
            heapq.heappop(held)  # superseded by an earlier time or already released
        return held[0][0] if held else None

    def has_ready(self) -> bool:
        """Whether a key is ready now (added since the last ``pop_ready``)."""
        return bool(self._ready)

    def depth(self) -> int:
        return len(self._ready) + len(self._held_at)

    def __len__(self) -> int:
        return self.depth()
