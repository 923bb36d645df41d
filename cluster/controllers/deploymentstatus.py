"""A Deployment's status and conditions (upstream's deployment sync status), pure.

Owns the counters a Deployment reports from its ReplicaSets, the ``Available`` condition,
the ``Progressing`` condition's transitions (created / found / progressing / complete /
timed out / paused / resumed) and the condition-update rules upstream's
SetDeploymentCondition applies (same status and reason: nothing changes; same status:
the transition time is kept). ``deployment.DeploymentController`` calls ``counters``,
``rollout_conditions`` and ``paused_conditions`` at the end of each sync.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..clock import parse_timestamp, rfc3339
from .deploymentutil import MAX_INT32, available, max_unavailable, replicas, spec_replicas
from .reconciler import Obj

PROGRESSING, AVAILABLE = "Progressing", "Available"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
RS_UPDATED = "ReplicaSetUpdated"
TIMED_OUT = "ProgressDeadlineExceeded"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
PAUSED, RESUMED = "DeploymentPaused", "DeploymentResumed"


def condition(status: Obj, kind: str) -> Obj | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == kind), None)


def set_condition(status: Obj, kind: str, state: str, reason: str, message: str, now: float) -> None:
    """Upstream SetDeploymentCondition: a condition with the same status and reason is
    left alone; the same status keeps its transition time."""
    current = condition(status, kind)
    if current is not None and current.get("status") == state and current.get("reason") == reason:
        return
    stamp = rfc3339(now)
    new = {
        "type": kind,
        "status": state,
        "lastUpdateTime": stamp,
        "lastTransitionTime": current["lastTransitionTime"]
        if current is not None and current.get("status") == state
        else stamp,
        "reason": reason,
        "message": message,
    }
    others = [c for c in status.get("conditions") or () if c.get("type") != kind]
    status["conditions"] = others + [new]


def _replace_progressing(status: Obj, reason: str, message: str, now: float) -> None:
    """Progressing True with a fresh lastUpdateTime even when the reason is unchanged."""
    current = condition(status, PROGRESSING)
    stamp = rfc3339(now)
    kept = current["lastTransitionTime"] if current is not None and current.get("status") == "True" else stamp
    others = [c for c in status.get("conditions") or () if c.get("type") != PROGRESSING]
    status["conditions"] = others + [
        {
            "type": PROGRESSING,
            "status": "True",
            "lastUpdateTime": stamp,
            "lastTransitionTime": kept,
            "reason": reason,
            "message": message,
        }
    ]


def has_deadline(spec: Obj) -> bool:
    deadline = spec.get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


def counters(spec: Obj, generation: int, all_rs: Sequence[Obj], new: Obj | None, old_status: Obj, now: float) -> Obj:
    """The status counters and the Available condition (upstream calculateStatus)."""
    status = {**old_status}
    status["conditions"] = [dict(c) for c in old_status.get("conditions") or ()]
    total = sum(replicas(rs) for rs in all_rs)
    avail = sum(available(rs) for rs in all_rs)
    status.update(
        observedGeneration=generation,
        replicas=sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in all_rs),
        updatedReplicas=int(((new or {}).get("status") or {}).get("replicas") or 0),
        readyReplicas=sum(int((rs.get("status") or {}).get("readyReplicas") or 0) for rs in all_rs),
        availableReplicas=avail,
        unavailableReplicas=max(0, total - avail),
    )
    if avail >= spec_replicas(spec) - max_unavailable(spec):
        set_condition(
            status, AVAILABLE, "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now
        )
    else:
        set_condition(
            status,
            AVAILABLE,
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    return status


def is_complete(spec: Obj, generation: int, status: Obj) -> bool:
    want = spec_replicas(spec)
    return (
        status.get("updatedReplicas") == want
        and status.get("replicas") == want
        and status.get("availableReplicas") == want
        and (status.get("observedGeneration") or 0) >= generation
    )


def _progressed(new: Obj, old: Obj) -> bool:
    def n(s: Obj, f: str) -> int:
        return int(s.get(f) or 0)

    return (
        n(new, "updatedReplicas") > n(old, "updatedReplicas")
        or n(new, "replicas") - n(new, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
        or n(new, "readyReplicas") > n(old, "readyReplicas")
        or n(new, "availableReplicas") > n(old, "availableReplicas")
    )


def timed_out(spec: Obj, status: Obj, now: float) -> bool:
    cond = condition(status, PROGRESSING)
    if cond is None or not has_deadline(spec):
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    if cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    since = parse_timestamp(cond.get("lastUpdateTime") or "") or 0.0
    deadline: float = spec["progressDeadlineSeconds"]
    return since + deadline < now


def rollout_conditions(spec: Obj, generation: int, new: Obj | None, old_status: Obj, status: Obj, now: float) -> None:
    """The Progressing condition at the end of a rollout sync (upstream syncRolloutStatus)."""
    if not has_deadline(spec):
        status["conditions"] = [c for c in status["conditions"] if c.get("type") != PROGRESSING]
        return
    current = condition(status, PROGRESSING)
    done = status.get("replicas") == status.get("updatedReplicas") and (current or {}).get("reason") == NEW_RS_AVAILABLE
    if done:
        return
    name = ((new or {}).get("metadata") or {}).get("name", "")
    if is_complete(spec, generation, status):
        set_condition(
            status, PROGRESSING, "True", NEW_RS_AVAILABLE, f'ReplicaSet "{name}" has successfully progressed.', now
        )
    elif _progressed(status, old_status):
        _replace_progressing(status, RS_UPDATED, f'ReplicaSet "{name}" is progressing.', now)
    elif timed_out(spec, status, now):
        set_condition(status, PROGRESSING, "False", TIMED_OUT, f'ReplicaSet "{name}" has timed out progressing.', now)


def paused_conditions(spec: Obj, status: Obj, now: float) -> None:
    """DeploymentPaused / DeploymentResumed, never over a timed-out rollout."""
    if not has_deadline(spec):
        return
    current = condition(status, PROGRESSING)
    if current is not None and current.get("reason") == TIMED_OUT:
        return
    paused_shown = current is not None and current.get("reason") == PAUSED
    if spec.get("paused") and not paused_shown:
        set_condition(status, PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now)
    elif not spec.get("paused") and paused_shown:
        set_condition(status, PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now)


def deadline_wakeup(spec: Obj, status: Obj) -> float | None:
    """When a rollout still progressing would time out: its last progress + the deadline."""
    cond = condition(status, PROGRESSING)
    if not has_deadline(spec) or cond is None or cond.get("status") != "True" or cond.get("reason") == NEW_RS_AVAILABLE:
        return None
    since = parse_timestamp(cond.get("lastUpdateTime") or "")
    return None if since is None else since + spec["progressDeadlineSeconds"] + 1.0
