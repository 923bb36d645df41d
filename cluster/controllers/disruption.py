"""The disruption controller: PodDisruptionBudget status from the PDB and its pods.

Owns the arithmetic of a PDB's ``status`` (currentHealthy, desiredHealthy, expectedPods,
disruptionsAllowed, disruptedPods, observedGeneration and the ``DisruptionAllowed``
condition), which pods a PDB covers, and which pods count as healthy. Who uses it:

- ``DisruptionReconciler`` runs in the controller manager in a ``ReconcilerStep``
  (``reconciler.py``): a PDB's events name its key, a pod's event the keys of the PDBs
  that select it (before and after the change); the reconcile writes the PDB's status
  when it differs and looks again when the earliest ``disruptedPods`` entry expires. Pods
  are parked until the first PDB (``ownedpods.ParkedPods``). ``DisruptionController``
  feeds the same reconciler directly (``on_pdb``, ``on_pod``, ``sync``), for checks that
  want the controller's answer without a manager.
- The apiserver's Eviction subresource (``APIServer.evict``) uses ``pdbs_for_pod``,
  ``pod_is_healthy`` and ``set_disruption_condition`` so both sides agree on the rules.
- Preemption reads the resulting ``status.disruptionsAllowed`` and ``status.disruptedPods``
  from its PDB informer; it does not import this module.

Everything here is pure: time is passed in as emulated seconds, nothing reads a clock.

The rules, as upstream's disruption controller applies them:

- Pods covered: pods in the PDB's namespace whose labels match ``spec.selector``. A null
  selector matches nothing and an empty one (``{}``) matches every pod, as in policy/v1.
- currentHealthy: covered pods that are not being deleted (no deletionTimestamp), not
  listed in ``disruptedPods`` (an eviction the apiserver approved less than
  ``DELETION_TIMEOUT`` ago) and healthy (``pod_is_healthy``).
- desiredHealthy: ``minAvailable`` as an integer, or as a percentage of expectedPods
  rounded up; or ``expectedPods - maxUnavailable`` (a percentage of expectedPods rounded
  up), never below 0.
- disruptionsAllowed: ``currentHealthy - desiredHealthy``, but 0 when negative or when
  expectedPods is 0 (so a PDB whose pods are only now appearing starts safe; with
  kubemu's expectedPods the second rule follows from the first).
- The ``DisruptionAllowed`` condition is True/SufficientPods when disruptionsAllowed > 0,
  else False/InsufficientPods; a spec the controller cannot evaluate gives False/SyncFailed
  and disruptionsAllowed 0 (upstream's fail-safe).
- A status is written only when one of those fields (or the condition's status, reason or
  message) differs from the PDB's current status.

Deviations from upstream, on purpose:

- expectedPods is the number of covered pods that are not terminal. Upstream uses that
  count only for an integer minAvailable and otherwise sums the ``replicas`` of the pods'
  controllers (the scale subresource). The two agree when the pods belong to ReplicaSets
  that are at their size, which is what kubemu's ReplicaSet controller converges to; they
  differ while a ReplicaSet is scaling or a pod is missing (upstream would count the
  missing pod as expected but unhealthy, kubemu does not count it at all). Upstream also
  counts Succeeded/Failed pods for an integer minAvailable; kubemu leaves them out because
  their ReplicaSet has already replaced them, so counting them would double a replica.
- A pod is healthy when it is Running and its Ready condition is True; upstream checks
  only the Ready condition, which the kubelet sets True only while the pod runs.
- A ``disruptedPods`` entry expires at exactly ``time + DELETION_TIMEOUT`` (upstream keeps
  it during that one instant and rechecks); emulated time makes the boundary observable.
- A pod event marks every PDB that matched the pod before or after the change; upstream
  wakes only the first matching PDB (a known quirk), which can leave others stale until
  their next event.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

from ..api.objects import is_terminating, labels_of, name_of, namespace_of
from ..api.pdb import (
    ALWAYS_ALLOW,
    DISRUPTION_ALLOWED,
    IF_HEALTHY_BUDGET,
    INSUFFICIENT_PODS,
    MAX_DISRUPTED_PODS,
    SUFFICIENT_PODS,
    SYNC_FAILED,
    covered_pods,
    generation_of,
    pdbs_for_pod,
    pod_is_healthy,
    selector_of,
    set_condition,
    set_disruption_condition,
)
from ..api.requests import UpdateStatus
from ..clock import from_rfc3339
from .reconciler import Indexer, ObjectCache, Outcome, ReconcilerStep, Watches

__all__ = [
    "DELETION_TIMEOUT",
    "MAX_DISRUPTED_PODS",
    "DISRUPTION_ALLOWED",
    "SUFFICIENT_PODS",
    "INSUFFICIENT_PODS",
    "SYNC_FAILED",
    "ALWAYS_ALLOW",
    "IF_HEALTHY_BUDGET",
    "DisruptionController",
    "DisruptionReconciler",
    "pdb_status",
    "pdbs_for_pod",
    "covered_pods",
    "pod_is_healthy",
    "scaled_value",
    "expected_and_desired",
    "set_disruption_condition",
    "status_needs_write",
    "recheck_time",
    "selector_of",
    "generation_of",
]

# How long an approved eviction keeps its pod out of currentHealthy while the pod has not
# yet been seen terminating; after that the controller assumes the delete never happened.
DELETION_TIMEOUT = 120.0
_PERCENT = re.compile(r"([0-9]+)%")
_COMPARED = ("currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed", "observedGeneration")

Key = tuple[str, str]  # (namespace, name)
Obj = dict[str, Any]


# ---- which pods, which are healthy ---------------------------------------------------


# ---- the numbers ---------------------------------------------------------------------


def scaled_value(value: Any, total: int) -> int:
    """An int-or-percent against ``total``; a percentage is rounded up, as upstream does."""
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    m = _PERCENT.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"invalid value for IntOrString: {value!r} is not an integer or a percentage")
    return -(-int(m.group(1)) * total // 100)


def expected_and_desired(spec: dict[str, Any], count: int) -> tuple[int, int]:
    """(expectedPods, desiredHealthy) for ``count`` covered pods; ValueError on a bad spec."""
    if spec.get("maxUnavailable") is not None:
        return count, max(0, count - scaled_value(spec["maxUnavailable"], count))
    if spec.get("minAvailable") is not None:
        return count, scaled_value(spec["minAvailable"], count)
    return count, 0


def _live_disrupted(recorded: dict[str, Any] | None, pods: list[dict[str, Any]], now: float) -> dict[str, str]:
    """The ``disruptedPods`` entries still in force: their pod is covered, not yet
    terminating, and the eviction is younger than DELETION_TIMEOUT."""
    if not recorded:
        return {}
    live = {}
    for pod in pods:
        name = name_of(pod)
        stamp = recorded.get(name)
        if stamp is None or is_terminating(pod):
            continue  # a terminating pod is out of currentHealthy anyway; the entry is done
        try:
            expires = from_rfc3339(stamp) + DELETION_TIMEOUT
        except (TypeError, ValueError):
            continue  # an unreadable time cannot be honoured; drop it as upstream drops stale ones
        if now < expires:
            live[name] = stamp
    return live


def _count_healthy(pods: list[dict[str, Any]], disrupted: dict[str, str]) -> int:
    return sum(1 for p in pods if not is_terminating(p) and name_of(p) not in disrupted and pod_is_healthy(p))


def pdb_status(pdb: dict[str, Any], pods: Iterable[dict[str, Any]], now: float) -> dict[str, Any]:
    """The status the disruption controller would write for ``pdb`` given ``pods`` at ``now``.

    ``pods`` may include pods of other namespaces or labels; they are filtered here.
    Conditions other than DisruptionAllowed are kept; other unknown status fields are not
    (upstream rebuilds the status the same way).
    """
    old = pdb.get("status") or {}
    counted = covered_pods(pdb, pods)
    try:
        expected, desired = expected_and_desired(pdb.get("spec") or {}, len(counted))
    except ValueError as e:
        return _fail_safe(old, str(e), now)
    disrupted = _live_disrupted(old.get("disruptedPods"), counted, now)
    healthy = _count_healthy(counted, disrupted)
    # Upstream also forces 0 when expectedPods is 0 (its expectedPods comes from controllers'
    # scale); here healthy <= expectedPods, so max(0, ...) already covers that case.
    allowed = healthy - desired
    status = {
        "observedGeneration": generation_of(pdb),
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "disruptionsAllowed": max(0, allowed),
        "disruptedPods": disrupted,
        "conditions": [dict(c) for c in old.get("conditions") or ()],
    }
    set_disruption_condition(status, now)
    return status


def _fail_safe(old: dict[str, Any], message: str, now: float) -> dict[str, Any]:
    """Upstream's answer to a PDB it cannot evaluate: allow no disruption, say why."""
    status = {**old, "disruptionsAllowed": 0, "conditions": [dict(c) for c in old.get("conditions") or ()]}
    cond = {
        "type": DISRUPTION_ALLOWED,
        "status": "False",
        "reason": SYNC_FAILED,
        "message": message,
        "observedGeneration": old.get("observedGeneration", 0),
    }
    set_condition(status, cond, now)
    return status


# ---- the condition -------------------------------------------------------------------


def _disruption_condition(status: dict[str, Any] | None) -> tuple[Any, ...] | None:
    for c in (status or {}).get("conditions") or ():
        if c.get("type") == DISRUPTION_ALLOWED:
            return (c.get("status"), c.get("reason"), c.get("message") or "")
    return None


def status_needs_write(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    """True when ``new`` differs from ``old`` in a field the controller owns."""
    old = old or {}
    if any((old.get(f) or 0) != (new.get(f) or 0) for f in _COMPARED):
        return True
    if (old.get("disruptedPods") or {}) != (new.get("disruptedPods") or {}):
        return True
    return _disruption_condition(old) != _disruption_condition(new)


def recheck_time(status: dict[str, Any]) -> float | None:
    """When the earliest ``disruptedPods`` entry of ``status`` expires, or None."""
    times = []
    for stamp in (status.get("disruptedPods") or {}).values():
        try:
            times.append(from_rfc3339(stamp) + DELETION_TIMEOUT)
        except (TypeError, ValueError):
            continue
    return min(times) if times else None


# ---- the controller ------------------------------------------------------------------


class _Budget:
    """What the cache keeps of a PDB: the object and its selector, compiled once per
    version (used on every pod event)."""

    __slots__ = ("pdb", "selector")

    def __init__(self, pdb: Obj):
        self.pdb = pdb
        self.selector = selector_of(pdb)


PDB = "PodDisruptionBudget"


def _budgets_selecting(cache: ObjectCache, event_type: str, pod: Obj) -> list[Key]:
    """The PDBs whose selector matches ``pod``'s labels (a relist's DELETED carries only
    the key: the cached copy, also asked, has the labels)."""
    ns, labels = namespace_of(pod), labels_of(pod)
    return [
        (ns, name_of(b.pdb)) for b in cache.by_index(PDB, "namespace", ns, ordered=False) if b.selector.matches(labels)
    ]


def _in_namespace(obj: Any) -> tuple[str]:
    return (namespace_of(obj.pdb if isinstance(obj, _Budget) else obj),)


class DisruptionReconciler:
    """A PDB's key in; its status out when it differs from what the PDB carries (a written
    status is what the next reconcile reads until the watch answers)."""

    name: ClassVar[str] = "disruption"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches(PDB, project=_Budget),
        Watches("Pod", route=_budgets_selecting),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = (
        (PDB, "namespace", _in_namespace),
        ("Pod", "namespace", _in_namespace),
    )

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache

    def reconcile(self, key: Key, now: float) -> Outcome:
        budget: _Budget | None = self.cache.projected(PDB, *key)
        if budget is None:
            return Outcome()
        pods = self.cache.by_index("Pod", "namespace", key[0], ordered=False)
        status = pdb_status(budget.pdb, covered_pods(budget.pdb, pods, budget.selector), now)
        out = Outcome(requeue_at=recheck_time(status))
        if status_needs_write(budget.pdb.get("status"), status):
            self.cache.put(PDB, {**budget.pdb, "status": status})
            uid = (budget.pdb.get("metadata") or {}).get("uid", "")
            out.writes.append(UpdateStatus(PDB, key[0], key[1], uid, status))
        return out


class DisruptionController:
    """``DisruptionReconciler`` fed directly: PDB and pod events in (``on_pdb``,
    ``on_pod``), ``sync(now)`` -> (namespace, name, status) of each PDB whose status
    should change, in key order; ``next_recheck()`` when an expired ``disruptedPods``
    entry is next dropped."""

    def __init__(self) -> None:
        self.step = ReconcilerStep(DisruptionReconciler, sort_keys=True)

    def on_pdb(self, event_type: str, pdb: Obj) -> None:
        self.step.on_event(PDB, event_type, pdb, 0.0)

    def on_pod(self, event_type: str, pod: Obj) -> None:
        self.step.on_event("Pod", event_type, pod, 0.0)

    def sync(self, now: float) -> list[tuple[str, str, Obj]]:
        return [(r.namespace, r.name, r.status) for r in self.step.sync(now).requests if isinstance(r, UpdateStatus)]

    def next_recheck(self) -> float | None:
        return self.step.next_wakeup()

    def pdb(self, namespace: str, name: str) -> Obj | None:
        budget: _Budget | None = self.step.cache.projected(PDB, namespace, name)
        return budget.pdb if budget else None

    def pdb_count(self) -> int:
        return self.step.cache.count(PDB)

    def pending(self) -> int:
        """How many PDBs wait for a reconcile."""
        return self.step.queue.depth()
