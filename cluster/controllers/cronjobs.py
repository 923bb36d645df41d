"""The CronJob controller: Jobs on a cron schedule, on the emulated clock.

Owns upstream's ``cronjob_controllerv2`` sync (reference k8s-workloads.md §4.3): the
``status.active`` list kept against the owned Jobs (``SawCompletedJob``, ``MissingJob``),
``lastSuccessfulTime``, the most recent due time (only the latest missed run starts, never
a backlog; ``TooManyMissedTimes`` past 100), ``startingDeadlineSeconds`` (``MissSchedule``),
``concurrencyPolicy`` Allow / Forbid (``JobAlreadyActive``) / Replace, the Job itself
(``<cronjob>-<scheduled minute since the Unix epoch>``, the
``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation, a controller reference)
and the history limits. Schedules are read in ``spec.timeZone`` (UTC when unset) on the
emulated wall clock (emulated 0 is 2026-01-01T00:00:00Z), so a day of schedules runs in
seconds of real time. Who calls it: the controller-manager, with CronJob and Job events; it
wakes itself 0.1 s after each next run time.
"""

from __future__ import annotations

from ..api.cronschedule import CronError, Schedule, parse_schedule
from ..api.events import make_event
from ..api.objects import is_terminating, name_of, namespace_of, uid_of
from ..clock import EPOCH, parse_timestamp, rfc3339
from .jobutil import has_condition
from .writes import Writes

Key = tuple[str, str]
UNIX0 = EPOCH.timestamp()  # emulated 0 as Unix seconds
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
COMPONENT = "cronjob-controller"
TOO_MANY_MISSED = 100


def _controller_uid(obj: dict) -> str | None:
    ref = next((r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("controller")), None)
    return ref.get("uid") if ref is not None and ref.get("kind") == "CronJob" else None


def finished(job: dict) -> str | None:
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


class CronJobController:
    NAME = "cronjob"
    kinds = ("CronJob", "Job")

    def __init__(self) -> None:
        self._cronjobs: dict[Key, dict] = {}
        self._jobs: dict[str, dict[Key, dict]] = {}  # cronjob uid -> its Jobs
        self._job_owner: dict[Key, str] = {}
        self._dirty: set[Key] = set()
        self._wake: dict[Key, float] = {}
        self._by_uid: dict[str, Key] = {}
        self._deleting: set[str] = set()  # Jobs asked to go (their DELETED will follow)

    def on_event(self, kind: str, etype: str, obj: dict, now: float) -> None:
        key = (namespace_of(obj), name_of(obj))
        if kind == "CronJob":
            if etype == "DELETED":
                self._cronjobs.pop(key, None)
                self._wake.pop(key, None)
                return
            self._cronjobs[key] = obj
            self._by_uid[uid_of(obj)] = key
            self._dirty.add(key)
            return
        owner = self._job_owner.pop(key, None)
        if owner is not None:
            self._jobs.get(owner, {}).pop(key, None)
        uid = _controller_uid(obj)
        if etype != "DELETED" and uid is not None:
            self._job_owner[key] = uid
            self._jobs.setdefault(uid, {})[key] = obj
        for u in {owner, uid} - {None}:
            if u in self._by_uid:
                self._dirty.add(self._by_uid[u])

    def next_wakeup(self) -> float | None:
        return min(self._wake.values(), default=None)

    def sync(self, now: float) -> Writes:
        w = Writes()
        due = {k for k, t in self._wake.items() if t <= now}
        for key in sorted(self._dirty | due):
            self._wake.pop(key, None)
            cj = self._cronjobs.get(key)
            if cj is not None:
                self._sync_one(key, cj, now, w)
        self._dirty.clear()
        return w

    # -- one CronJob -----------------------------------------------------------------------
    def _sync_one(self, key: Key, cj: dict, now: float, w: Writes) -> None:
        spec, status = cj.get("spec") or {}, dict(cj.get("status") or {})
        jobs = self._jobs.get(uid_of(cj), {})
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

    def _reconcile_active(self, cj: dict, jobs: dict, status: dict, now: float, w: Writes) -> dict:
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

    def _run_due(self, key: Key, cj: dict, schedule: Schedule, jobs: dict, status: dict, now: float, w: Writes) -> dict:
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
            self._wake[key] = nxt - UNIX0 + 0.1
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
        w.creates.append(self._job(cj, name, due))
        self._event(w, cj, "SuccessfulCreate", f"Created job {name}", now)
        ref = {"kind": "Job", "namespace": namespace_of(cj), "name": name, "apiVersion": "batch/v1"}
        return {**status, "active": [*(status.get("active") or ()), ref], "lastScheduleTime": rfc3339(due - UNIX0)}

    def _job(self, cj: dict, name: str, due: float) -> dict:
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

    def _history(self, cj: dict, jobs: dict, w: Writes, now: float) -> None:
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

    def _write(self, key: Key, cj: dict, status: dict, w: Writes) -> None:
        if status != (cj.get("status") or {}):
            self._cronjobs[key] = {**cj, "status": status}  # what we sent: the next sync reads it
            w.cronjob_status.append((namespace_of(cj), name_of(cj), uid_of(cj), status))

    def _delete(self, w: Writes, cj: dict, ns: str, name: str, uid: str, now: float) -> None:
        if uid and uid in self._deleting:
            return
        self._deleting.add(uid)
        w.deletes.append(("Job", ns, name, uid, "Background"))
        self._event(w, cj, "SuccessfulDelete", f"Deleted job {name}", now)

    def _event(self, w: Writes, cj: dict, reason: str, message: str, now: float, type: str = "Normal") -> None:
        w.events.append(make_event(cj, reason, message, now, type=type, component=COMPONENT))
