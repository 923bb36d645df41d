"""PodDisruptionBudgets as several components read them: which pods a PDB covers, which
pods are healthy, and the ``DisruptionAllowed`` condition.

Owns the matching rules both sides of a disruption must share: the disruption controller
(``cluster/controllers/disruption.py``), which computes a PDB's status, and the
apiserver's Eviction subresource (``cluster/apiserver/apiserver.py``), which charges it.

- Pods covered: pods in the PDB's namespace whose labels match ``spec.selector``. A null
  selector matches nothing and an empty one (``{}``) matches every pod, as in policy/v1.
- A pod is healthy when it is Running and its Ready condition is True; upstream checks
  only the Ready condition, which the kubelet sets True only while the pod runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..clock import rfc3339
from .objects import condition, is_terminal, labels_of, namespace_of, phase_of
from .selectors import LabelSelector, SelectorError

# The Eviction subresource refuses to approve more evictions than this before the
# controller has caught up with the ones already approved.
MAX_DISRUPTED_PODS = 2000

DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS, INSUFFICIENT_PODS, SYNC_FAILED = "SufficientPods", "InsufficientPods", "SyncFailed"
ALWAYS_ALLOW, IF_HEALTHY_BUDGET = "AlwaysAllow", "IfHealthyBudget"

DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS, INSUFFICIENT_PODS, SYNC_FAILED = "SufficientPods", "InsufficientPods", "SyncFailed"
ALWAYS_ALLOW, IF_HEALTHY_BUDGET = "AlwaysAllow", "IfHealthyBudget"


def selector_of(pdb: dict[str, Any]) -> LabelSelector:
    """The PDB's selector; one that cannot be compiled matches nothing (as upstream skips it)."""
    try:
        return LabelSelector.from_dict((pdb.get("spec") or {}).get("selector"))
    except SelectorError:
        return LabelSelector.nothing()


def pdbs_for_pod(pod: dict[str, Any], pdbs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The PDBs in the pod's namespace whose selector matches the pod's labels, in input order."""
    ns, labels = namespace_of(pod), labels_of(pod)
    return [p for p in pdbs if namespace_of(p) == ns and selector_of(p).matches(labels)]


def covered_pods(
    pdb: dict[str, Any], pods: Iterable[dict[str, Any]], selector: LabelSelector | None = None
) -> list[dict[str, Any]]:
    """Pods counted by the PDB: same namespace, matching labels, not Succeeded or Failed."""
    ns = namespace_of(pdb)
    sel = selector if selector is not None else selector_of(pdb)
    return [p for p in pods if namespace_of(p) == ns and not is_terminal(p) and sel.matches(labels_of(p))]


def pod_is_healthy(pod: dict[str, Any]) -> bool:
    """Running with condition Ready=True (upstream's IsPodReady, which is its IsHealthy)."""
    ready = condition(pod, "Ready")
    return phase_of(pod) == "Running" and ready is not None and ready.get("status") == "True"


def generation_of(pdb: dict[str, Any]) -> int:
    # kubemu's apiserver may not set metadata.generation; absent counts as 0 on both sides.
    return (pdb.get("metadata") or {}).get("generation") or 0


def set_disruption_condition(status: dict[str, Any], now: float) -> None:
    """Set DisruptionAllowed from ``status["disruptionsAllowed"]`` (in place)."""
    allowed = (status.get("disruptionsAllowed") or 0) > 0
    cond = {
        "type": DISRUPTION_ALLOWED,
        "status": "True" if allowed else "False",
        "reason": SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS,
        "message": "",
        "observedGeneration": status.get("observedGeneration", 0),
    }
    set_condition(status, cond, now)


def set_condition(status: dict[str, Any], cond: dict[str, Any], now: float) -> None:
    # metav1 conditions move lastTransitionTime only when the status flips.
    conds = status.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == cond["type"]:
            same = c.get("status") == cond["status"] and c.get("lastTransitionTime")
            cond["lastTransitionTime"] = c["lastTransitionTime"] if same else rfc3339(now)
            conds[i] = cond
            return
    cond["lastTransitionTime"] = rfc3339(now)
    conds.append(cond)
