"""The Job controller's rules as pure functions (upstream's pkg/controller/job).

Owns the pod-failure backoff (``backoff_delay``), the compressed index list of Indexed
Jobs (``compress_indexes``), a pod's completion index, which podFailurePolicy rule a
failed pod matches (``match_failure_policy``), the Job's conditions, and how long a pod
whose command is a plain ``sleep N`` runs (``sleep_seconds``). Called by
``batchjob.JobController``; tests drive them with tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..api.objects import condition
from ..clock import parse_timestamp, rfc3339

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
BACKOFF_BASE, BACKOFF_MAX = 10.0, 600.0  # upstream's DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff


def backoff_delay(failures: int) -> float:
    """Seconds to wait before the next pod after ``failures`` consecutive failures: none
    for 0, then 10 s doubling, capped at 10 minutes (the post-1.27 cap; it was 6 minutes)."""
    if failures <= 0:
        return 0.0
    return min(BACKOFF_BASE * 2.0 ** (failures - 1), BACKOFF_MAX)


def compress_indexes(indexes: Iterable[int]) -> str:
    """Indexes as upstream's ``completedIndexes``: runs of three or more consecutive
    indexes as ``a-b``, pairs and singles listed, in order: {0, 1, 2, 4, 6, 7} -> "0-2,4,6,7"."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(set(indexes)):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(_range(run))
        run = [i]
    if run:
        out.append(_range(run))
    return ",".join(out)


def _range(run: list[int]) -> str:
    if len(run) <= 2:
        return ",".join(map(str, run))
    return f"{run[0]}-{run[-1]}"


def index_of(pod: dict[str, Any]) -> int | None:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(INDEX_KEY)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def finished_at(pod: dict[str, Any], now: float) -> float:
    """When a finished pod finished: its latest container ``finishedAt``, else now."""
    times = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        stamp = (((cs.get("state") or {}).get("terminated")) or {}).get("finishedAt")
        t = parse_timestamp(stamp) if stamp else None
        if t is not None:
            times.append(t)
    return max(times, default=now)


def _exit_codes(pod: dict[str, Any]) -> list[tuple[str, int]]:
    out = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        term = (cs.get("state") or {}).get("terminated")
        if term is not None:
            out.append((cs.get("name", ""), int(term.get("exitCode") or 0)))
    return out


def match_failure_policy(
    policy: dict[str, Any] | None, pod: dict[str, Any]
) -> tuple[int, dict[str, Any], str | None] | None:
    """(rule index, rule, container) of the first podFailurePolicy rule a failed pod
    matches, or None: ``onExitCodes`` (In / NotIn, NotIn never matching exit 0, an optional
    containerName) or ``onPodConditions`` (type and status, status True by default)."""
    for i, rule in enumerate((policy or {}).get("rules") or ()):
        codes = rule.get("onExitCodes")
        if codes is not None:
            values, op, only = set(codes.get("values") or ()), codes.get("operator"), codes.get("containerName")
            for name, code in _exit_codes(pod):
                if only and name != only:
                    continue
                hit = code in values if op == "In" else (code != 0 and code not in values)
                if hit:
                    return i, rule, name
        for want in rule.get("onPodConditions") or ():
            cond = condition(pod, want.get("type", ""))
            if cond is not None and cond.get("status") == want.get("status", "True"):
                return i, rule, None
    return None


def fail_job_message(pod: dict[str, Any], index: int, container: str | None) -> str:
    m = pod.get("metadata") or {}
    if container is None:
        return f"Pod {m.get('namespace')}/{m.get('name')} has condition matching FailJob rule at index {index}"
    code = dict(_exit_codes(pod)).get(container, 0)
    return (
        f"Container {container} for pod {m.get('namespace')}/{m.get('name')} failed with exit code {code} "
        f"matching FailJob rule at index {index}"
    )


def with_condition(
    status: dict[str, Any], kind: str, state: str, reason: str, message: str, now: float
) -> dict[str, Any]:
    """``status`` with the condition set (its transition time kept when nothing changed)."""
    conds = [dict(c) for c in status.get("conditions") or ()]
    for c in conds:
        if c.get("type") == kind:
            if (c.get("status"), c.get("reason")) != (state, reason):
                c.update(status=state, reason=reason, message=message, lastProbeTime=rfc3339(now))
                c["lastTransitionTime"] = rfc3339(now)
            return {**status, "conditions": conds}
    stamp = rfc3339(now)
    conds.append(
        {
            "type": kind,
            "status": state,
            "lastProbeTime": stamp,
            "lastTransitionTime": stamp,
            "reason": reason,
            "message": message,
        }
    )
    return {**status, "conditions": conds}


def has_condition(status: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or ())


_SHELLS = ("sh", "/bin/sh", "bash", "/bin/bash")


def sleep_seconds(pod_spec: dict[str, Any]) -> float | None:
    """The longest ``sleep N`` an app container of ``pod_spec`` runs (``["sleep", "300"]``,
    or ``sh -c "sleep 300"``), or None when none is that plain: the emulated pod then runs
    as long as the command says instead of the default."""
    found: list[float] = []
    for c in pod_spec.get("containers") or ():
        argv = [str(a) for a in (c.get("command") or ())] + [str(a) for a in (c.get("args") or ())]
        if len(argv) == 3 and argv[0] in _SHELLS and argv[1] == "-c":
            argv = argv[2].split()
        if len(argv) == 2 and argv[0] in ("sleep", "/bin/sleep"):
            try:
                seconds = float(argv[1])
            except ValueError:
                continue
            if seconds >= 0 and seconds == seconds and seconds != float("inf"):
                found.append(seconds)
    return max(found) if found else None
