"""Update-time validation: which fields of a stored object an update may change.

Owns upstream's rules for the spec of a Pod (only images, ``activeDeadlineSeconds`` set or
shortened, tolerations added, scheduling gates removed, and, while a pod is gated, node
selector entries added and its node affinity narrowed), the selectors of the workload kinds, the StatefulSet spec, a
Job's template (but for the scheduling directives of a suspended Job that never started)
and completions (but for an elastic Indexed Job), and a PriorityClass's value and
preemption policy, in upstream's words. The apiserver's update
(``cluster/apiserver/apiserver.py``) calls ``validate_update`` with the stored object and the
new one, after the new one passed create-time validation and got its defaults, and
before anything is written; a failure raises ``FieldError``. The controllers' typed
patches do not come through here: they write only fields upstream lets them write.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from . import kindspec
from .workloadvalidation import MAX_INT32, forbidden, invalid, label_selector_shown

POD_UPDATABLE = (
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)
STATEFULSET_UPDATABLE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
IMMUTABLE = "field is immutable"
DIFF_LINES = 8  # changed paths shown under the pod's Forbidden line


def validate_update(kind: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    spec = kindspec.get(kind)
    if spec is not None and spec.validate_update is not None:
        spec.validate_update(old, new)


# ---- Pod ----------------------------------------------------------------------------------


def _pod(old: dict[str, Any], new: dict[str, Any]) -> None:
    o, n = old.get("spec") or {}, new.get("spec") or {}
    for field in ("containers", "initContainers"):
        if len(o.get(field) or ()) != len(n.get(field) or ()):
            forbidden(f"spec.{field}", "pod updates may not add or remove containers")
    _active_deadline(o.get("activeDeadlineSeconds"), n.get("activeDeadlineSeconds"))
    _only_added_tolerations(o.get("tolerations") or [], n.get("tolerations") or [])
    _only_deleted_gates(o.get("schedulingGates") or [], n.get("schedulingGates") or [])
    munged = _munged(o, n)
    if munged != o:
        forbidden("spec", f"pod updates may not change fields other than {POD_UPDATABLE}\n{_diff('spec', o, munged)}")


def _active_deadline(old: Any, new: Any) -> None:
    """Set where there was none, or shortened: never lengthened, never removed."""
    path = "spec.activeDeadlineSeconds"
    if new is None:
        if old is not None:
            invalid(path, None, "must not update from a positive integer to nil value")
        return
    if new < 0 or new > MAX_INT32:
        invalid(path, new, f"must be between 0 and {MAX_INT32}, inclusive")
    if old is not None and old < new:
        invalid(path, new, "must be less than or equal to previous value")


def _only_added_tolerations(old: list[Any], new: list[Any]) -> None:
    """Every existing toleration stays, but for its tolerationSeconds."""
    for t in old:
        if not any(_same_toleration(t, u) for u in new):
            forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")


def _same_toleration(a: Any, b: Any) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return bool(a == b)
    return {**a, "tolerationSeconds": None} == {**b, "tolerationSeconds": None}


def _only_deleted_gates(old: list[Any], new: list[Any]) -> None:
    had = {g.get("name") for g in old if isinstance(g, dict)}
    for i, g in enumerate(new):
        name = g.get("name") if isinstance(g, dict) else None
        if name not in had:
            forbidden(
                f"spec.schedulingGates[{i}].name",
                f"only deletion is allowed, but found new scheduling gate '{name}'",
            )


def _munged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with every field an update may change put back as in ``old``: what is left
    to differ is what the update may not change."""
    out = copy.deepcopy(new)
    for field in ("containers", "initContainers"):
        for c, was in zip(out.get(field) or (), old.get(field) or ()):
            if isinstance(c, dict) and isinstance(was, dict):
                _put_back(c, was, "image")
    for field in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        _put_back(out, old, field)
    grace = old.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and out.get("terminationGracePeriodSeconds") == 1:
        out["terminationGracePeriodSeconds"] = grace
    if old.get("schedulingGates"):
        _gated_directives(old, out)
    return out


def _put_back(out: dict[str, Any], old: dict[str, Any], field: str) -> None:
    if field in old:
        out[field] = old[field]
    else:
        out.pop(field, None)


def _gated_directives(old: dict[str, Any], out: dict[str, Any]) -> None:
    """A pod still gated may gain node selector entries (none changed or removed) and have
    its node affinity changed so that it only narrows, as upstream's mutable scheduling
    directives allow."""
    was, now = old.get("nodeSelector") or {}, out.get("nodeSelector") or {}
    if isinstance(now, dict) and isinstance(was, dict) and now != was:
        if any(now.get(k) != v for k, v in was.items()):
            invalid(
                "spec.nodeSelector",
                now,
                "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            )
        _put_back(out, old, "nodeSelector")
    was_aff, now_aff = old.get("affinity") or {}, out.get("affinity") or {}
    if not isinstance(was_aff, dict) or not isinstance(now_aff, dict):
        return
    was_na, now_na = was_aff.get("nodeAffinity"), now_aff.get("nodeAffinity")
    if was_na != now_na:
        _narrowed_node_affinity(was_na, now_na)
        merged = {k: v for k, v in now_aff.items() if k != "nodeAffinity"}
        if was_na is not None:
            merged["nodeAffinity"] = was_na
        if merged:
            out["affinity"] = merged
        else:
            _put_back(out, old, "affinity")


_TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


def _narrowed_node_affinity(was: Any, now: Any) -> None:
    """Without required terms before, anything goes; with them, the same number of terms,
    each keeping its requirements in order and at most adding more after them."""
    required = (was or {}).get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(was, dict) else None
    if not isinstance(required, dict):
        return
    old_terms = required.get("nodeSelectorTerms") or []
    new_required = (now or {}).get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(now, dict) else None
    new_terms = (new_required or {}).get("nodeSelectorTerms") or [] if isinstance(new_required, dict) else []
    if old_terms and len(old_terms) != len(new_terms):
        invalid(_TERMS, new_terms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")
    for i, (o, n) in enumerate(zip(old_terms, new_terms)):
        if not _only_added(o, n):
            invalid(f"{_TERMS}[{i}]", n, "only additions are allowed (no mutations or deletions)")


def _only_added(old: Any, new: Any) -> bool:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return bool(old == new)
    for field in ("matchExpressions", "matchFields"):
        a, b = old.get(field) or [], new.get(field) or []
        if len(a) > len(b) or b[: len(a)] != a:
            return False
    return True


def _diff(path: str, old: Any, new: Any) -> str:
    """The paths where ``new`` differs from ``old``, one per line, at most ``DIFF_LINES``."""
    lines: list[str] = []
    _walk(path, old, new, lines)
    shown = lines[:DIFF_LINES]
    if len(lines) > DIFF_LINES:
        shown.append(f"  ... and {len(lines) - DIFF_LINES} more")
    return "\n".join(shown)


def _walk(path: str, old: Any, new: Any, out: list[str]) -> None:
    if old == new or len(out) > DIFF_LINES:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new), key=str):
            _walk(f"{path}.{k}", old.get(k), new.get(k), out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            _walk(f"{path}[{i}]", a, b, out)
    else:
        out.append(f"  {path}: {_shown(old)} -> {_shown(new)}")


def _shown(value: Any) -> str:
    return "<unset>" if value is None else json.dumps(value, default=str, sort_keys=True)


# ---- workloads and PriorityClass ---------------------------------------------------------------


def _selector_immutable(old: dict[str, Any], new: dict[str, Any]) -> None:
    was, now = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
    if was != now:
        invalid("spec.selector", label_selector_shown(now), IMMUTABLE)


def _statefulset(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Only the fields upstream lists (and revisionHistoryLimit) may change; the selector,
    serviceName, podManagementPolicy and the rest may not."""
    o, n = old.get("spec") or {}, new.get("spec") or {}
    if _without(o, _STATEFULSET_MAY) != _without(n, _STATEFULSET_MAY):
        forbidden("spec", STATEFULSET_UPDATABLE)


_STATEFULSET_MAY = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
    "revisionHistoryLimit",
)
# What a Job's pod template may change while the Job is suspended and has never started.
_SCHEDULING_DIRECTIVES = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


def _without(spec: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k not in fields}


def _job(old: dict[str, Any], new: dict[str, Any]) -> None:
    o, n = old.get("spec") or {}, new.get("spec") or {}
    _selector_immutable(old, new)
    for field in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex"):
        if o.get(field) != n.get(field):
            invalid(f"spec.{field}", n.get(field), IMMUTABLE)
    if o.get("completions") != n.get("completions") and not _elastic(o, n):
        invalid("spec.completions", n.get("completions"), IMMUTABLE)
    was, now = o.get("template") or {}, n.get("template") or {}
    if was != now and not (_never_started_suspended(old) and _scheduling_only(was, now)):
        invalid("spec.template", now, IMMUTABLE)


def _elastic(o: dict[str, Any], n: dict[str, Any]) -> bool:
    """An Indexed Job may change completions together with parallelism, kept equal."""
    indexed = n.get("completionMode") == "Indexed"
    return indexed and o.get("completions") == o.get("parallelism") and n.get("completions") == n.get("parallelism")


def _never_started_suspended(job: dict[str, Any]) -> bool:
    return bool((job.get("spec") or {}).get("suspend")) and not (job.get("status") or {}).get("startTime")


def _scheduling_only(was: dict[str, Any], now: dict[str, Any]) -> bool:
    """The two templates differ only in labels, annotations and scheduling directives."""
    spec_was, spec_now = was.get("spec") or {}, now.get("spec") or {}
    if _without(spec_was, _SCHEDULING_DIRECTIVES) != _without(spec_now, _SCHEDULING_DIRECTIVES):
        return False
    keep = ("labels", "annotations")
    return _without(was.get("metadata") or {}, keep) == _without(now.get("metadata") or {}, keep)


def _priority_class(old: dict[str, Any], new: dict[str, Any]) -> None:
    if old.get("value") != new.get("value"):
        forbidden("value", "may not be changed in an update.")
    if old.get("preemptionPolicy") != new.get("preemptionPolicy"):
        invalid("preemptionPolicy", new.get("preemptionPolicy"), IMMUTABLE)


# Each kind's update rules, kept in its spec (``kindspec``); ``validate_update`` reads them there.
_CHECKS: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "Pod": _pod,
    "Deployment": _selector_immutable,
    "ReplicaSet": _selector_immutable,
    "DaemonSet": _selector_immutable,
    "Job": _job,
    "StatefulSet": _statefulset,
    "PriorityClass": _priority_class,
}
kindspec.attach_all("validate_update", _CHECKS)
