"""Opt-in CPU profiles of the actors, for finding hot spots in benchmarks.

With ``KUBEMU_PROFILE=DIR`` in the environment, each actor that calls ``start(name)`` on
its event-loop thread profiles that thread's CPU time with cProfile, and ``dump()`` writes
``DIR/<name>-<pid>.prof`` (read it with ``python -m pstats``). Without the variable
both are no-ops. Used by the apiserver, scheduler and node-host actors; ``kubemu bench``
asks them to dump before it shuts the cluster down.
"""

from __future__ import annotations

import cProfile
import ctypes
import ctypes.util
import gc
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from cluster.runtime import gcpolicy

if TYPE_CHECKING:
    from cluster.clock import Clock

_ENV = "KUBEMU_PROFILE"


class Profile:
    def __init__(self) -> None:
        self._prof: cProfile.Profile | None = None
        self._name = ""

    def start(self, name: str) -> None:
        if not os.environ.get(_ENV) or self._prof is not None:
            return
        self._name = name
        # Thread CPU time, not wall time: on a shared 2-core machine wall time mostly
        # measures waiting for a core.
        self._prof = cProfile.Profile(time.thread_time)
        self._prof.enable()

    def dump(self, reset: bool = False) -> str | None:
        """Write the profile so far; with ``reset``, discard it instead and start afresh
        (a benchmark resets before its measured phase so set-up does not show)."""
        if self._prof is None:
            return None
        self._prof.disable()
        if reset:
            self._prof = cProfile.Profile(time.thread_time)
            self._prof.enable()
            return None
        path = os.path.join(os.environ[_ENV], f"{self._name}-{os.getpid()}.prof")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._prof.dump_stats(path)
        self._prof.enable()
        return path


class Profiled:
    """Mixin for the actor classes: the remote methods a benchmark uses to see where the
    CPU went, and the two a restart uses: ``ping`` (the actor answers) and whether its
    clock runs (a process Ray restarted on its own has a fresh, unstarted clock until
    somebody starts it). The actor sets ``self.profile`` and ``self.clock`` in its
    constructor."""

    profile: Profile
    clock: Clock

    async def ping(self) -> bool:
        return True

    async def clock_started(self) -> bool:
        return self.clock.started

    async def dump_profile(self, reset: bool = False) -> str | None:
        return self.profile.dump(reset)

    async def collect_garbage(self) -> None:
        """A full collection now, so that none falls due inside a benchmark's window."""
        pacer = getattr(self, "gc", None)
        if isinstance(pacer, GcPacer):
            pacer.collect_now()
        else:
            gc.collect()
            release_free_memory()

    async def cpu_seconds(self) -> float:
        """CPU time of the whole actor process (every thread, Ray's included)."""
        t = os.times()
        return t.user + t.system


def tune_gc() -> None:
    gc.freeze()  # everything alive after start-up (Ray, imports) is never scanned again
    gc.set_threshold(*gcpolicy.ACTOR_GC_THRESHOLDS)  # why these: cluster/runtime/gcpolicy.py


class GcPacer:
    """Takes the cyclic collector off an actor loop's hot path.

    Nearly everything a turn allocates is either freed by reference counting soon (older
    versions of objects, decoded events) or kept for long (the cache's pod objects); the
    collector would only walk them, which measured 12% of the scheduler's CPU in
    ``bench preempt``. So after each turn ``turn_done`` freezes what is alive (frozen
    objects are still freed by reference counting, only never scanned). A full collection
    (it measured 0.6 s with 25,000 pods cached), which keeps garbage in reference cycles
    bounded, runs once ``full_every`` seconds have passed, at the first idle turn, or at
    the latest after ``full_every * 10`` seconds."""

    def __init__(self, full_every: float = 60.0, clock=time.monotonic):
        self._every, self._clock = full_every, clock
        self._last = clock()

    def turn_done(self, idle: bool = True) -> None:
        waited = self._clock() - self._last
        if waited >= self._every and (idle or waited >= 10 * self._every):
            self.collect_now()  # it freezes what survives
        else:
            gc.freeze()

    def collect_now(self) -> None:
        """The full collection, now; the next one is due ``full_every`` from here."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        release_free_memory()
        self._last = self._clock()


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc: nothing to call


_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim). Decoding a
    watch batch allocates and frees many dicts; glibc keeps what they freed, so without
    this an actor's RSS stays at its busiest moment's and a process that holds many
    objects looks (and, for the machine, is) far larger than what it keeps."""
    if _TRIM is not None:
        _TRIM(0)
