"""The TTL-after-finished controller: a finished Job goes ``ttlSecondsAfterFinished`` later.

Owns, for every Job with ``spec.ttlSecondsAfterFinished``, when it finished (its
``completionTime``, or its ``Failed`` condition's transition time) and the delete once the
TTL has passed (0: right away), with Foreground propagation so its pods go first, as
upstream's ``pkg/controller/ttlafterfinished``. Who calls it: the controller manager runs
``TTLAfterFinishedReconciler`` in a ``ReconcilerStep`` (``reconciler.py``) over Job
events; the cache keeps of a Job only its expiry and uid (``expiry``), and a Job not yet
due is looked at again at its expiry.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..api.objects import uid_of
from ..api.requests import Delete
from ..clock import parse_timestamp
from .jobutil import has_condition
from .reconciler import Indexer, Key, ObjectCache, Outcome, Watches

Obj = dict[str, Any]


def finish_time(job: Obj) -> float | None:
    status = job.get("status") or {}
    if has_condition(status, "Complete") and status.get("completionTime"):
        return parse_timestamp(status["completionTime"])
    for c in status.get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return parse_timestamp(c.get("lastTransitionTime") or "")
    return None


def expiry(job: Obj) -> tuple[float, str] | None:
    """(when the Job is due to go, its uid); None when it has no TTL, has not finished or
    is already going."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or (job.get("metadata") or {}).get("deletionTimestamp"):
        return None
    finished = finish_time(job)
    return None if finished is None else (finished + float(ttl), uid_of(job))


class TTLAfterFinishedReconciler:
    """A Job's key in; its Foreground delete out once its TTL has passed."""

    name: ClassVar[str] = "ttl-after-finished"
    watches: ClassVar[tuple[Watches, ...]] = (Watches("Job", project=expiry),)
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache

    def reconcile(self, key: Key, now: float) -> Outcome:
        due: tuple[float, str] | None = self.cache.projected("Job", *key)
        if due is None:
            return Outcome()
        at, uid = due
        if at > now:
            return Outcome(requeue_at=at)
        return Outcome(writes=[Delete("Job", key[0], key[1], uid, None, "Foreground")])
