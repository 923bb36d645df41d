"""Opt-in CPU profiles of the actors, for finding hot spots in benchmarks.

With ``KUBEMU_PROFILE=DIR`` in the environment, each actor that calls ``start(name)`` on
its event-loop thread profiles that thread's CPU time with cProfile, and ``dump()`` writes
``DIR/<name>-<pid>.prof`` (read it with ``python -m pstats``). Without the variable
both are no-ops. Used by the apiserver, scheduler and node-host actors; ``kubemu bench``
asks them to dump before it shuts the cluster down.
"""
from __future__ import annotations

import cProfile
import os
import time

_ENV = "KUBEMU_PROFILE"


class Profile:
    def __init__(self):
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

    def dump(self) -> str | None:
        if self._prof is None:
            return None
        self._prof.disable()
        path = os.path.join(os.environ[_ENV], f"{self._name}-{os.getpid()}.prof")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._prof.dump_stats(path)
        self._prof.enable()
        return path


# Full (generation-2) collections walk every live object. An actor's heap grows by
# hundreds of thousands of small dicts (decoded pods) during a run, and CPython's default
# thresholds then run a full collection at every 25% of growth, each costing tens of
# milliseconds. Collecting the young generations less often and the old one rarely keeps
# cyclic garbage bounded while taking that cost off the hot path.
GC_THRESHOLDS = (20_000, 20, 500)


def tune_gc() -> None:
    import gc

    gc.freeze()  # everything alive after start-up (Ray, imports) is never scanned again
    gc.set_threshold(*GC_THRESHOLDS)
