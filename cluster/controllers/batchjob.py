"""The Job controller (batch/v1): pods run to completion, failures backed off and bounded.

Owns what upstream's ``pkg/controller/job`` decides: how many
pods a Job runs (``completions``, ``parallelism``, Indexed completion with the
``batch.kubernetes.io/job-completion-index`` annotation and label and the ``<job>-<i>``
hostname), succeeded and failed counts, the pod-failure backoff (``jobutil.backoff_delay``),
``backoffLimit`` (restart counts too under ``OnFailure``), ``activeDeadlineSeconds``,
``suspend`` (and resume, which restarts the deadline's clock), ``podFailurePolicy``
(FailJob, Ignore, Count) and the conditions and events a user sees
(``FailureTarget``/``Failed`` with ``BackoffLimitExceeded``, ``DeadlineExceeded`` or
``PodFailurePolicy``; ``SuccessCriteriaMet``/``Complete``). An unfinished Job claims pods
as upstream's: it adopts an orphan its selector matches and releases a pod whose labels
stop matching (a released pod is no longer counted, neither as active nor as failed). The shared machinery (the pod
index, expectations, slow start, events, refusals) is ``workload.WorkloadReconciler``'s.

Who calls it: the controller-manager runs ``JobController``, a ``workloadstep.WorkloadStep``
over a ``JobReconciler``: Job and Pod events in, a reconcile per Job key out (pods to
create and delete, the Job's status, Events).

A Job, as a state table:

| state     | how it is left                                        | sync does                       |
|-----------|-------------------------------------------------------|---------------------------------|
| suspended | spec.suspend false: Resumed, startTime = now          | deletes active pods; Suspended  |
| running   | a limit is hit (policy, backoff, deadline)            | creates / deletes toward want   |
|           | enough pods succeeded and none is active              | (after the failure backoff)     |
| failing   | no pod of it is active or terminating any more        | FailureTarget; deletes pods     |
| failed    | (final)                                               | Failed condition, nothing else  |
| complete  | (final)                                               | Complete condition, nothing     |

Emulation: a pod created for a Job whose template declares no ``kubemu.io/run-seconds``
runs as long as a plain ``sleep N`` command says (``jobutil.sleep_seconds``), else
``default_run_seconds`` (5 s unless configured); its container then exits 0, as KWOK's
default stages complete Job pods. Counting: kubemu remembers the pods it has
counted instead of upstream's tracking finalizer; a restarted controller starts from the
status's counts for pods that are gone. The backoff cap is 10 minutes (upstream since 1.27).
"""

from __future__ import annotations

from ..api.annotations import RUN_SECONDS
from ..api.objects import is_terminal, is_terminating, labels_of, phase_of
from ..clock import parse_timestamp, rfc3339
from . import jobutil as ju
from .ownedpods import OwnerState, PodKey
from .reconciler import Obj, Watches
from .scaledown import pods_to_delete
from .workload import BURST_REPLICAS, SUCCESSFUL_DELETE, WorkloadReconciler, Writes, is_pod_active, is_pod_ready
from .workloadstep import WorkloadStep

FAILED_REASONS = {
    "BackoffLimitExceeded": "Job has reached the specified backoff limit",
    "DeadlineExceeded": "Job was active longer than specified deadline",
}


class _Job(OwnerState):
    __slots__ = ("succeeded", "failed", "finishes", "ours", "fail_rule", "known", "done_idx", "wake", "base")

    def configure(self) -> None:
        self.succeeded: set[str] = set()
        self.failed: set[str] = set()
        self.finishes: list[tuple[float, bool]] = []  # (finish time, succeeded) of counted pods
        self.ours: set[str] = set()  # uids this controller deleted: never counted as failures
        self.fail_rule: str | None = None  # the FailJob message, once a pod matched one
        self.known: dict[str, Obj] = {}  # uid -> last copy of each owned pod not yet counted
        self.done_idx: set[int] = set()
        self.wake: float | None = None
        self.base: dict[str, int] | None = None  # counts of pods gone before this instance saw them


class JobReconciler(WorkloadReconciler[_Job]):
    """A Job's key in; its pods' creates and deletes and its status out."""

    name = "job"
    KIND = "Job"
    COMPONENT = "job-controller"
    watches = (Watches("Job", observed=True), Watches("Pod", observed=True))

    def __init__(self, default_run_seconds: float | None = 5.0) -> None:
        super().__init__()
        self.default_run_seconds = default_run_seconds

    # -- the WorkloadReconciler hooks ----------------------------------------------------
    def _new_state(self, obj: Obj) -> _Job:
        st = _Job(obj)
        st.configure()
        return st

    def _claimable(self, pod: Obj) -> bool:
        # Upstream claims any pod not being deleted, finished ones too: an orphan whose
        # labels match is adopted, an owned pod whose labels stop matching is released.
        return not is_terminating(pod)

    def _rebuild(self, st: _Job) -> None:
        st.release = set()
        for key, pod in self._index.owned(st.uid).items():
            self._pod_changed(st, key, None, pod)

    def _pod_changed(self, st: _Job, key: PodKey, old: Obj | None, new: Obj | None) -> None:
        pod = new if new is not None else old
        if pod is None:
            return
        uid = pod["metadata"].get("uid", "")
        if new is None:
            got = self._index.get(key)
            if got is not None and got[0] != st.uid and got[1]["metadata"].get("uid") == uid:
                st.known.pop(uid, None)  # released (or orphaned), not gone: nothing to count
                st.release.discard(key)
                return
            self._gone(st, uid, old or {})
            return
        st.release.discard(key)
        if self._claimable(new) and not st.selector.matches(labels_of(new)):
            st.release.add(key)  # owned but no longer selected: released at the next claim
        elif is_terminal(new):
            self._finished(st, uid, new)
        else:
            st.known[uid] = new

    def _gone(self, st: _Job, uid: str, pod: Obj) -> None:
        """A pod deleted before it finished counts as failed, unless this controller
        deleted it or a podFailurePolicy rule ignores it."""
        st.known.pop(uid, None)
        if uid in st.succeeded or uid in st.failed or uid in st.ours or not pod or is_terminal(pod):
            return
        if self._policy_action(st, pod) == "Ignore":
            return
        st.failed.add(uid)
        st.finishes.append((self._now, False))

    def _finished(self, st: _Job, uid: str, pod: Obj) -> None:
        st.known.pop(uid, None)
        if uid in st.succeeded or uid in st.failed:
            return
        ok = phase_of(pod) == "Succeeded"
        if not ok and uid in st.ours:
            return
        if not ok and self._policy_action(st, pod) == "Ignore":
            return
        (st.succeeded if ok else st.failed).add(uid)
        st.finishes.append((ju.finished_at(pod, self._now), ok))
        index = ju.index_of(pod)
        if ok and index is not None:
            st.done_idx.add(index)

    def _policy_action(self, st: _Job, pod: Obj) -> str:
        match = ju.match_failure_policy((st.obj.get("spec") or {}).get("podFailurePolicy"), pod)
        if match is None:
            return "Count"
        i, rule, container = match
        if rule.get("action") == "FailJob" and st.fail_rule is None:
            st.fail_rule = ju.fail_job_message(pod, i, container)
        action: str = rule.get("action", "Count")
        return action

    def _wakeups(self, st: _Job, now: float) -> tuple[float | None, ...]:
        return (st.wake,)

    # -- the reconcile ---------------------------------------------------------------------
    def _sync_owner(self, st: _Job, now: float, w: Writes) -> None:
        st.wake = None
        status = dict(st.obj.get("status") or {})
        if st.base is None:  # the first sync after this instance listed the Job and its pods
            st.base = {k: max(0, int(status.get(k) or 0) - len(getattr(st, k))) for k in ("succeeded", "failed")}
        if ju.has_condition(status, "Complete") or ju.has_condition(status, "Failed"):
            return
        self._claim(st, now, w)
        spec = st.obj.get("spec") or {}
        pods = self._index.owned(st.uid)
        active = [p for p in pods.values() if is_pod_active(p)]
        terminating = [p for p in pods.values() if is_terminating(p) and not is_terminal(p)]
        status = self._suspension(st, spec, status, now)
        reason = None if spec.get("suspend") else self._failure(st, spec, status, active, now)
        if reason is not None:
            status = self._fail(st, status, reason, active, terminating, now, w)
        elif spec.get("suspend"):
            self._delete(st, active, len(active), now, w)
        elif self._may_manage(st, now):
            self._manage(st, spec, active, now, w)
        status = self._complete(st, spec, status, active, now)
        self._write_status(st, self._counters(st, spec, status, pods), w)

    def _suspension(self, st: _Job, spec: Obj, status: Obj, now: float) -> Obj:
        suspended = ju.has_condition(status, "Suspended")
        if spec.get("suspend") and not suspended:
            self._event(st, "Suspended", "Job suspended", now)
            return ju.with_condition(status, "Suspended", "True", "JobSuspended", "Job suspended", now)
        if not spec.get("suspend") and any(c.get("type") == "Suspended" for c in status.get("conditions") or ()):
            if suspended:
                self._event(st, "Resumed", "Job resumed", now)
                status = ju.with_condition(status, "Suspended", "False", "JobResumed", "Job resumed", now)
                status["startTime"] = rfc3339(now)  # the deadline measures unsuspended time
        if not spec.get("suspend") and not status.get("startTime"):
            status["startTime"] = rfc3339(now)
        return status

    def _failure(self, st: _Job, spec: Obj, status: Obj, active: list[Obj], now: float) -> str | None:
        if ju.has_condition(status, "FailureTarget"):
            reason: str = next(c["reason"] for c in status["conditions"] if c["type"] == "FailureTarget")
            return reason
        if st.fail_rule is not None:
            return "PodFailurePolicy"
        limit = int(spec.get("backoffLimit", 6))
        restarts = 0
        if (spec.get("template") or {}).get("spec", {}).get("restartPolicy") == "OnFailure":
            restarts = sum(
                int(cs.get("restartCount") or 0)
                for p in active
                for cs in (p.get("status") or {}).get("containerStatuses") or ()
            )
        if len(st.failed) + self._carried(st, "failed") > limit or (restarts and restarts >= max(limit, 1)):
            return "BackoffLimitExceeded"
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_timestamp(status.get("startTime") or "")
        if deadline is not None and started is not None:
            if now - started >= deadline:
                return "DeadlineExceeded"
            st.wake = started + deadline
        return None

    def _fail(
        self, st: _Job, status: Obj, reason: str, active: list[Obj], terminating: list[Obj], now: float, w: Writes
    ) -> Obj:
        message = st.fail_rule if reason == "PodFailurePolicy" else FAILED_REASONS[reason]
        if not ju.has_condition(status, "FailureTarget"):
            self._event(st, reason, message or "", now, "Warning")
            status = ju.with_condition(status, "FailureTarget", "True", reason, message or "", now)
        self._delete(st, active, len(active), now, w)
        if not active and not terminating:
            status = ju.with_condition(status, "Failed", "True", reason, message or "", now)
        return status

    def _manage(self, st: _Job, spec: Obj, active: list[Obj], now: float, w: Writes) -> None:
        want = self._want(st, spec, len(active))
        if len(active) > want:
            self._delete(st, active, len(active) - want, now, w)
            return
        if len(active) == want:
            return
        ready_at = self._backoff_until(st)
        if ready_at > now:
            st.wake = ready_at
            return
        n = min(want - len(active), BURST_REPLICAS)
        indexes = self._free_indexes(st, spec, active)[:n] if spec.get("completionMode") == "Indexed" else [None] * n
        st.exp.expect(len(indexes), (), now)
        w.pod_creates.extend(self._job_pod(st, i) for i in indexes)

    def _want(self, st: _Job, spec: Obj, active: int) -> int:
        parallelism = int(spec.get("parallelism", 1))
        succeeded = len(st.succeeded) + self._carried(st, "succeeded")
        completions = spec.get("completions")
        if spec.get("completionMode") == "Indexed":
            return max(0, min(int(completions or 0) - len(st.done_idx), parallelism))
        if completions is None:
            return min(active, parallelism) if succeeded else parallelism
        return max(0, min(int(completions) - succeeded, parallelism))

    def _backoff_until(self, st: _Job) -> float:
        failures, last = 0, 0.0
        for t, ok in sorted(st.finishes):
            failures, last = (0, last) if ok else (failures + 1, t)
        return last + ju.backoff_delay(failures) if failures else 0.0

    def _free_indexes(self, st: _Job, spec: Obj, active: list[Obj]) -> list[int]:
        taken = st.done_idx | {i for p in active if (i := ju.index_of(p)) is not None}
        return [i for i in range(int(spec.get("completions") or 0)) if i not in taken]

    def _job_pod(self, st: _Job, index: int | None) -> Obj:
        pod = self._new_pod(st)
        m = pod["metadata"]
        annotations = m.setdefault("annotations", {})
        if self.default_run_seconds is not None and RUN_SECONDS not in annotations:
            slept = ju.sleep_seconds(pod["spec"])
            annotations[RUN_SECONDS] = f"{self.default_run_seconds if slept is None else slept:g}"
        if index is not None:
            annotations[ju.INDEX_KEY] = str(index)
            m.setdefault("labels", {})[ju.INDEX_KEY] = str(index)
            m["generateName"] = f"{st.name}-{index}-"
            pod["spec"]["hostname"] = f"{st.name}-{index}"
        return pod

    def _delete(self, st: _Job, pods: list[Obj], count: int, now: float, w: Writes) -> None:
        if count <= 0:
            return
        victims = sorted(pods_to_delete(pods, count, now), key=lambda p: p["metadata"]["name"])
        st.exp.expect(0, [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in victims], now)
        for p in victims:
            m = p["metadata"]
            st.ours.add(m.get("uid", ""))
            w.pod_deletes.append((m["namespace"], m["name"], m.get("uid", ""), None))
            self._event(st, SUCCESSFUL_DELETE, f"Deleted pod: {m['name']}", now)

    def _complete(self, st: _Job, spec: Obj, status: Obj, active: list[Obj], now: float) -> Obj:
        if active or ju.has_condition(status, "FailureTarget") or spec.get("suspend"):
            return status
        succeeded = len(st.succeeded) + self._carried(st, "succeeded")
        completions = spec.get("completions")
        if spec.get("completionMode") == "Indexed":
            done = len(st.done_idx) >= int(completions or 0)
        else:
            done = succeeded >= (int(completions) if completions is not None else 1)
        if not done:
            return status
        message = "Reached expected number of succeeded pods"
        status = ju.with_condition(status, "SuccessCriteriaMet", "True", "CompletionsReached", message, now)
        status = ju.with_condition(status, "Complete", "True", "CompletionsReached", message, now)
        status["completionTime"] = rfc3339(now)
        self._event(st, "Completed", "Job completed", now)
        return status

    def _carried(self, st: _Job, what: str) -> int:
        """Counts from the status for pods this instance never saw (gone before a restart)."""
        return (st.base or {}).get(what, 0)

    def _counters(self, st: _Job, spec: Obj, status: Obj, pods: dict[PodKey, Obj]) -> Obj:
        active = [p for p in pods.values() if is_pod_active(p)]
        out = {
            **status,
            "active": len(active),
            "ready": sum(1 for p in active if is_pod_ready(p)),
            "terminating": sum(1 for p in pods.values() if is_terminating(p) and not is_terminal(p)),
            "succeeded": len(st.succeeded) + self._carried(st, "succeeded"),
            "failed": len(st.failed) + self._carried(st, "failed"),
        }
        if spec.get("completionMode") == "Indexed":
            out["completedIndexes"] = ju.compress_indexes(st.done_idx)
        return out


class JobController(WorkloadStep):
    """The Job controller as the manager runs it."""

    def __init__(self, default_run_seconds: float | None = 5.0) -> None:
        super().__init__(JobReconciler(default_run_seconds))
