"""The eviction subresource: a graceful delete that a PodDisruptionBudget may refuse.

Owns the budget check and charge upstream's eviction handler makes, with the PDB rules of
``cluster/api/pdb.py`` (which the disruption controller shares). ``APIServer.evict`` is the
only caller.

As upstream: a Pending, Succeeded, Failed or already terminating pod is deleted without
looking at PDBs; a pod covered by more than one PDB is refused (500); an unhealthy pod is
let go without charging its PDB when the PDB's unhealthyPodEvictionPolicy is AlwaysAllow,
or when the budget is currently met (currentHealthy >= desiredHealthy > 0); otherwise the
PDB must allow a disruption (else 429), which is taken from status.disruptionsAllowed and
recorded in status.disruptedPods before the pod is deleted. The pod gets the
DisruptionTarget condition (reason EvictionByEvictionAPI) in the same write as its deletion.
Its 429s carry upstream's ``DisruptionBudget`` cause naming the budget (``BudgetRefused``):
``kubectl drain`` and client-go's ``HasStatusCause`` read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import Cause, Forbidden, InternalError, TooManyRequests
from ..api.objects import condition, is_terminal, is_terminating, phase_of, set_condition
from ..api.pdb import (
    ALWAYS_ALLOW,
    MAX_DISRUPTED_PODS,
    generation_of,
    pdbs_for_pod,
    pod_is_healthy,
    set_disruption_condition,
)
from ..clock import rfc3339

if TYPE_CHECKING:
    from .storage import Storage

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"  # upstream's policyv1.DisruptionBudgetCause
PROCESSING_RETRY_SECONDS = 10  # upstream's suggestion while the PDB controller catches up


class BudgetRefused(TooManyRequests):
    """The 429 a PodDisruptionBudget answers, as upstream's eviction handler builds it: one
    ``DisruptionBudget`` cause (no field) and, when upstream suggests one, ``retryAfterSeconds``."""

    def __init__(self, detail: str, retry_after: int = 0) -> None:
        super().__init__(PDB_VIOLATION, (Cause(DISRUPTION_BUDGET_CAUSE, detail),))
        self.retry_after = retry_after

    def _extra(self) -> dict[str, Any]:
        return {"retry_after": self.retry_after}

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and getattr(other, "retry_after", None) == self.retry_after

    def __hash__(self) -> int:
        return super().__hash__()

    def status(self) -> dict[str, Any]:
        out = super().status()
        details: dict[str, Any] = {"causes": [{"reason": c.type, "message": c.message} for c in self.causes]}
        if self.retry_after:
            details["retryAfterSeconds"] = self.retry_after
        out["details"] = details
        return out


def charge_budget(store: Storage, pod: dict, now: float) -> None:
    """Take one disruption from the pod's PDB, or raise why the PDB forbids it. A pod that is
    not running, or already going, disrupts nothing more by leaving."""
    if is_terminal(pod) or phase_of(pod) == "Pending" or is_terminating(pod):
        return
    pdbs = pdbs_for_pod(pod, store.objects("PodDisruptionBudget"))
    if len(pdbs) > 1:
        raise InternalError(MULTIPLE_PDBS, retryable=False)  # only removing a PDB can change the answer
    if not pdbs:
        return
    pdb = pdbs[0]
    status = pdb.get("status") or {}
    if not pod_is_healthy(pod):
        if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW:
            return
        desired = status.get("desiredHealthy") or 0
        if desired > 0 and (status.get("currentHealthy") or 0) >= desired:
            return  # the application is not disrupted now; an unready pod does not count
    _check_budget(pdb, status)
    new = {
        **status,
        "disruptionsAllowed": status["disruptionsAllowed"] - 1,
        "disruptedPods": {**(status.get("disruptedPods") or {}), pod["metadata"]["name"]: rfc3339(now)},
        "conditions": [dict(c) for c in status.get("conditions") or ()],
    }
    if new["disruptionsAllowed"] == 0:
        set_disruption_condition(new, now)
    pdb["status"] = new
    store.put("PodDisruptionBudget", pdb, "MODIFIED")


def _check_budget(pdb: dict, status: dict) -> None:
    """Raise unless the PDB's status allows one more disruption (upstream's checks, in order)."""
    name = pdb["metadata"]["name"]
    if (status.get("observedGeneration") or 0) < generation_of(pdb):
        # The controller has not caught up with the spec.
        raise BudgetRefused(
            f"The disruption budget {name} is still being processed by the server.", PROCESSING_RETRY_SECONDS
        )
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed is negative')
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise Forbidden(
            f'poddisruptionbudget.policy "{name}" is forbidden: '
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        )
    if allowed == 0:
        needs, has = status.get("desiredHealthy") or 0, status.get("currentHealthy") or 0
        raise BudgetRefused(f"The disruption budget {name} needs {needs} healthy pods and has {has} currently")


def mark_disruption_target(pod: dict, now: float) -> bool:
    """Set DisruptionTarget=True (EvictionByEvictionAPI) in place; True when it changed."""
    cond = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
    }
    current = condition(pod, "DisruptionTarget")
    if current and all(current.get(k) == v for k, v in cond.items()):
        return False
    keep = current and current.get("status") == "True" and current.get("lastTransitionTime")
    cond["lastTransitionTime"] = current["lastTransitionTime"] if current and keep else rfc3339(now)
    set_condition(pod.setdefault("status", {}), cond)
    return True
