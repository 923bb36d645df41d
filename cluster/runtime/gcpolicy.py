"""How often the cyclic garbage collector runs in a process that runs the control plane.

Owns ``GC_THRESHOLDS``, ``ACTOR_GC_THRESHOLDS`` and ``raised``. Every component decodes a
dict per watch event and lets most of them go at once; the ones it keeps (the scheduler's
and controllers' records) pile up by the hundred thousand. With CPython's default thresholds (700, 10, 10) the
collector runs every few hundred allocations and, as the heap grows, a full collection at
every quarter of growth, each walking every live object: measured at a third of a
one-process rolling update's CPU. Reference counting frees the garbage these loops make,
so collecting the young generations less often and the old one rarely keeps cyclic garbage
bounded while taking that cost off the hot path.

Who uses it: the actors (``actors/profiling.py``: ``tune_gc`` and the ``GcPacer``) for
their whole process, and the local runtime (``local.LocalCluster``) for as long as a
cluster runs in the caller's process, restoring the caller's thresholds at shutdown.
"""

from __future__ import annotations

import gc

GC_THRESHOLDS = (20_000, 20, 500)
# An actor freezes what is alive after every turn (``actors/profiling.py: GcPacer``), so a
# young collection inside a turn only walks that turn's objects, most of which the turn's
# end freezes anyway: a threshold above what a turn keeps takes those walks off the hot
# path. Measured in a rolling update of 10,000 replicas through the actors (2026-11-27):
# 79 young collections, 0.95 CPU-s, with 20,000; none with 200,000.
ACTOR_GC_THRESHOLDS = (200_000, 20, 500)


def raised() -> tuple[int, int, int]:
    """Raise the thresholds to ``GC_THRESHOLDS`` (never lower one a caller set higher);
    returns what they were, for ``gc.set_threshold(*before)`` afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(before, GC_THRESHOLDS)))
    return before
