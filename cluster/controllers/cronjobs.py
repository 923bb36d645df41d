"""The CronJob controller: Jobs on a cron schedule, on the emulated clock.

Owns upstream's ``cronjob_controllerv2`` sync : the
``status.active`` list kept against the owned Jobs (``SawCompletedJob``, ``MissingJob``),
``lastSuccessfulTime``, the most recent due time (only the latest missed run starts, never
a backlog; ``TooManyMissedTimes`` past 100), ``startingDeadlineSeconds`` (``MissSchedule``),
``concurrencyPolicy`` Allow / Forbid (``JobAlreadyActive``) / Replace, the Job itself
(``<cronjob>-<scheduled minute since the Unix epoch>``, the
``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation, a controller reference)
and the history limits. Schedules are read in ``spec.timeZone`` (UTC when unset) on the
emulated wall clock (emulated 0 is 2026-01-01T00:00:00Z), so a day of schedules runs in
seconds of real time. Who calls it: the controller manager runs ``CronJobReconciler`` in a
``ReconcilerStep`` (``reconciler.py``): a CronJob's events and its Jobs' (by their
controller reference) name its key; its Jobs are read by the ``owner`` index; a CronJob
is looked at again 0.1 s after its next run time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ..api.cronschedule import CronError, Schedule, parse_schedule
from ..api.events import make_event
from ..api.objects import is_terminating, name_of, namespace_of, uid_of
from ..api.requests import Create, Delete, UpdateStatus
from ..clock import EPOCH, parse_timestamp, rfc3339
from .jobutil import has_condition
from .reconciler import Indexer, Key, ObjectCache, Outcome, Watches

Obj = dict[str, Any]
Jobs = dict[Key, Obj]
UNIX0 = EPOCH.timestamp()  # emulated 0 as Unix seconds
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
COMPONENT = "cronjob-controller"
TOO_MANY_MISSED = 100


def _controller_ref(obj: Obj) -> Obj | None:
    ref = next((r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("controller")), None)
    return ref if ref is not None and ref.get("kind") == "CronJob" else None


def owner_uid(job: Obj) -> Iterable[str]:
    """The ``owner`` index: the uid of the CronJob controlling ``job``."""
    ref = _controller_ref(job)
    return (str(ref.get("uid") or ""),) if ref is not None else ()


def _if_owned(job: Obj) -> Obj | None:
    return job if _controller_ref(job) is not None else None


def owner_key(event_type: str, job: Obj) -> Iterable[Key]:
    """The CronJob a Job's event names: its controller's (the reconcile checks the uid)."""
    ref = _controller_ref(job)
    return ((namespace_of(job), str(ref.get("name") or "")),) if ref is not None else ()


def finished(job: Obj) -> str | None:
    status = job.get("status") or {}
    return next((c for c in ("Complete", "Failed") if has_condition(status, c)), None)


def most_recent(schedule: Schedule, tz: str | None, earliest: float, now: float) -> tuple[float | None, int]:
    """(the latest due run at or before ``now`` after ``earliest``, runs missed); Unix seconds."""
    t1 = schedule.next(earliest, tz)
    if t1 is None or now < t1:
        return None, 0
    t2 = schedule.next(t1, tz)
    if t2 is None or now < t2:
        return t1, 1
    between = round(t2 - t1)
    if between < 1:
        return None, 0
    missed = int(now - t1) // between + 1
    return t1 + (missed - 1) * between, missed


class CronJobReconciler:
    name: ClassVar[str] = "cronjob"
    # Of the Jobs, only those a CronJob controls are kept.
    watches: ClassVar[tuple[Watches, ...]] = (Watches("CronJob"), Watches("Job", keys=owner_key, project=_if_owned))
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = (("Job", "owner", owner_uid),)

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache
        self._deleting: set[str] = set()  # Jobs asked to go (their DELETED will follow)

    def reconcile(self, key: Key, now: float) -> Outcome:
        out = Outcome()
        cj = self.cache.get("CronJob", *key)
        if cj is not None:
            jobs = {(namespace_of(j), name_of(j)): j for j in self.cache.by_index("Job", "owner", uid_of(cj))}
            self._sync_one(key, cj, jobs, now, out)
        return out

    # -- one CronJob -----------------------------------------------------------------------
    def _sync_one(self, key: Key, cj: Obj, jobs: Jobs, now: float, w: Outcome) -> None:
        spec, status = cj.get("spec") or {}, dict(cj.get("status") or {})
        status = self._reconcile_active(cj, jobs, status, now, w)
        if not is_terminating(cj) and not spec.get("suspend"):
            try:
                schedule = parse_schedule(spec.get("schedule") or "")
            except CronError as e:
                self._event(
                    w,
                    cj,
                    "UnparseableSchedule",
                    f"unparseable schedule: {spec.get('schedule')!r} : {e}",
                    now,
                    "Warning",
                )
                schedule = None
            if schedule is not None:
                status = self._run_due(key, cj, schedule, jobs, status, now, w)
            self._history(cj, jobs, w, now)
        self._write(key, cj, status, w)

    def _reconcile_active(self, cj: Obj, jobs: Jobs, status: Obj, now: float, w: Outcome) -> Obj:
        active = []
        for ref in status.get("active") or ():
            job = jobs.get((ref.get("namespace", ""), ref.get("name", "")))
            if job is None:
                self._event(w, cj, "MissingJob", f"Active job went missing: {ref.get('name')}", now, "Warning")
            elif finished(job) is not None:
                self._event(
                    w, cj, "SawCompletedJob", f"Saw completed job: {ref.get('name')}, condition: {finished(job)}", now
                )
            else:
                active.append(ref)
        times = [
            (job.get("status") or {}).get("completionTime")
            for job in jobs.values()
            if finished(job) == "Complete" and (job.get("status") or {}).get("completionTime")
        ]
        out = {**status, "active": active} if active else {k: v for k, v in status.items() if k != "active"}
        if times:
            out["lastSuccessfulTime"] = max(times, key=lambda s: parse_timestamp(s) or 0.0)
        return out

    def _run_due(self, key: Key, cj: Obj, schedule: Schedule, jobs: Jobs, status: Obj, now: float, w: Outcome) -> Obj:
        spec = cj.get("spec") or {}
        tz = spec.get("timeZone")
        deadline = spec.get("startingDeadlineSeconds")
        last = parse_timestamp(status.get("lastScheduleTime") or "")
        created = parse_timestamp((cj.get("metadata") or {}).get("creationTimestamp") or "") or 0.0
        earliest = UNIX0 + (last if last is not None else created)
        unix_now = UNIX0 + now
        if deadline is not None:
            earliest = max(earliest, unix_now - deadline)
        due, missed = most_recent(schedule, tz, earliest, unix_now)
        if missed > TOO_MANY_MISSED:
            message = f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
            self._event(w, cj, "TooManyMissedTimes", message, now, "Warning")
        nxt = schedule.next(unix_now, tz)
        if nxt is not None:
            w.requeue_at = nxt - UNIX0 + 0.1
        if due is None or (last is not None and UNIX0 + last >= due):
            return status
        name = f"{name_of(cj)}-{int(due // 60)}"
        if (namespace_of(cj), name) in jobs:
            return status
        if spec.get("concurrencyPolicy") == "Forbid" and status.get("active"):
            message = "Not starting job because prior execution is running and concurrency policy is Forbid"
            self._event(w, cj, "JobAlreadyActive", message, now)
            return status
        if spec.get("concurrencyPolicy") == "Replace":
            for ref in status.get("active") or ():
                job = jobs.get((ref.get("namespace", ""), ref.get("name", ""))) or {}
                self._delete(w, cj, ref.get("namespace", ""), ref.get("name", ""), uid_of(job) if job else "", now)
            status = {k: v for k, v in status.items() if k != "active"}
        w.writes.append(Create(self._job(cj, name, due)))
        self._event(w, cj, "SuccessfulCreate", f"Created job {name}", now)
        ref = {"kind": "Job", "namespace": namespace_of(cj), "name": name, "apiVersion": "batch/v1"}
        return {**status, "active": [*(status.get("active") or ()), ref], "lastScheduleTime": rfc3339(due - UNIX0)}

    def _job(self, cj: Obj, name: str, due: float) -> Obj:
        template = (cj.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        m = cj.get("metadata") or {}
        owner = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": m.get("name", ""),
            "uid": m.get("uid", ""),
            "controller": True,
            "blockOwnerDeletion": True,
        }
        annotations = {**(tmeta.get("annotations") or {}), SCHEDULED_AT: rfc3339(due - UNIX0)}
        meta = {"name": name, "namespace": m.get("namespace", "default"), "annotations": annotations}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        meta["ownerReferences"] = [owner]
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": dict(template.get("spec") or {})}

    def _history(self, cj: Obj, jobs: Jobs, w: Outcome, now: float) -> None:
        spec = cj.get("spec") or {}
        for condition, field, default in (
            ("Complete", "successfulJobsHistoryLimit", 3),
            ("Failed", "failedJobsHistoryLimit", 1),
        ):
            limit = spec.get(field, default)
            done = [j for j in jobs.values() if finished(j) == condition and not is_terminating(j)]
            done.sort(
                key=lambda j: (parse_timestamp((j.get("status") or {}).get("startTime") or "") or 0.0, name_of(j))
            )
            for job in done[: max(0, len(done) - int(limit))]:
                self._delete(w, cj, namespace_of(job), name_of(job), uid_of(job), now)

    def _write(self, key: Key, cj: Obj, status: Obj, w: Outcome) -> None:
        if status != (cj.get("status") or {}):
            self.cache.put("CronJob", {**cj, "status": status})  # what we sent: the next sync reads it
            w.writes.append(UpdateStatus("CronJob", namespace_of(cj), name_of(cj), uid_of(cj), status))

    def _delete(self, w: Outcome, cj: Obj, ns: str, name: str, uid: str, now: float) -> None:
        if uid and uid in self._deleting:
            return
        self._deleting.add(uid)
        w.writes.append(Delete("Job", ns, name, uid, None, "Background"))
        self._event(w, cj, "SuccessfulDelete", f"Deleted job {name}", now)

    def _event(self, w: Outcome, cj: Obj, reason: str, message: str, now: float, type: str = "Normal") -> None:
        w.events.append(make_event(cj, reason, message, now, type=type, component=COMPONENT))
