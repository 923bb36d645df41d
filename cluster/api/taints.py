"""Taints and tolerations: which taints a pod's tolerations put up with.

Owns upstream's toleration matching (``tolerates_taint``, ``tolerations_tolerate_taint``,
``find_untolerated_taint``) and the taint effects. Shared by the scheduler's
TaintToleration and NodeUnschedulable plugins, preemption, the kubelet's admission, the
NoExecute taint manager and the DaemonSet controller.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
# Effects the Filter enforces (upstream's DoNotScheduleTaintsFilterFunc).
DO_NOT_SCHEDULE_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


def tolerates_taint(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Upstream's ``Toleration.ToleratesTaint``.

    An empty effect tolerates every effect; an empty key (with Exists) every key;
    operator "" or Equal compares values, Exists ignores them, anything else never matches.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    op = toleration.get("operator") or ""
    if op == "Exists":
        return True
    if op in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerations_tolerate_taint(tolerations: Iterable[dict[str, Any]] | None, taint: dict[str, Any]) -> bool:
    return any(tolerates_taint(t, taint) for t in tolerations or ())


def find_untolerated_taint(
    taints: Iterable[dict[str, Any]] | None,
    tolerations: Iterable[dict[str, Any]] | None,
    effects: Collection[str] | None = DO_NOT_SCHEDULE_EFFECTS,
) -> dict[str, Any] | None:
    """The first taint (in the node's order) with an effect in ``effects`` (None: any)
    that no toleration tolerates, or None (upstream's FindMatchingUntoleratedTaint)."""
    tolerations = tuple(tolerations or ())
    for taint in taints or ():
        if effects is not None and taint.get("effect") not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def untolerated_taint_reason(taint: dict[str, Any]) -> str:
    return f"node(s) had untolerated taint {{{taint.get('key') or ''}: {taint.get('value') or ''}}}"
