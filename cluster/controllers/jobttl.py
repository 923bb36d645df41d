"""The TTL-after-finished controller: a finished Job goes ``ttlSecondsAfterFinished`` later.

Owns, for every Job with ``spec.ttlSecondsAfterFinished``, when it finished (its
``completionTime``, or its ``Failed`` condition's transition time) and the delete once the
TTL has passed (0: right away), with Foreground propagation so its pods go first, as
upstream's ``pkg/controller/ttlafterfinished``. Who calls it: the controller-manager, with
Job events; it sleeps until the earliest expiry (``next_wakeup``).
"""

from __future__ import annotations

from ..api.objects import name_of, namespace_of, uid_of
from ..clock import parse_timestamp
from .jobutil import has_condition
from .writes import Writes

Key = tuple[str, str]


def finish_time(job: dict) -> float | None:
    status = job.get("status") or {}
    if has_condition(status, "Complete") and status.get("completionTime"):
        return parse_timestamp(status["completionTime"])
    for c in status.get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return parse_timestamp(c.get("lastTransitionTime") or "")
    return None


class TTLAfterFinishedController:
    kinds = ("Job",)

    def __init__(self) -> None:
        self._due: dict[Key, tuple[float, str]] = {}  # job -> (expiry, uid)
        self._asked: set[str] = set()

    def on_event(self, kind: str, etype: str, obj: dict, now: float) -> None:
        key = (namespace_of(obj), name_of(obj))
        ttl = (obj.get("spec") or {}).get("ttlSecondsAfterFinished")
        finished = finish_time(obj)
        if (
            etype == "DELETED"
            or ttl is None
            or finished is None
            or (obj.get("metadata") or {}).get("deletionTimestamp")
        ):
            self._due.pop(key, None)
            return
        self._due[key] = (finished + float(ttl), uid_of(obj))

    def sync(self, now: float) -> Writes:
        out = Writes()
        for key in sorted(k for k, (t, uid) in self._due.items() if t <= now and uid not in self._asked):
            uid = self._due[key][1]
            self._asked.add(uid)
            out.deletes.append(("Job", key[0], key[1], uid, "Foreground"))
        return out

    def next_wakeup(self) -> float | None:
        return min((t for t, uid in self._due.values() if uid not in self._asked), default=None)
