"""The disruption controller: PodDisruptionBudget status from the PDB and its pods.

Owns the arithmetic of a PDB's ``status`` (currentHealthy, desiredHealthy, expectedPods,
disruptionsAllowed, disruptedPods, observedGeneration and the ``DisruptionAllowed``
condition), which pods a PDB covers, and which pods count as healthy. Who uses it:

- ``DisruptionController`` is driven by the controller-manager actor (issue 6): the actor
  feeds it PDB and pod watch events (``on_pdb``, ``on_pod``), calls ``sync(now)`` and sends
  the returned status writes in one ``update_status("PodDisruptionBudget", ...)`` batch; it
  also arms a timer for ``next_recheck()`` so expired ``disruptedPods`` entries are dropped.
- The apiserver's Eviction subresource (``APIServer.evict``) uses ``pdbs_for_pod``,
  ``pod_is_healthy`` and ``set_disruption_condition`` so both sides agree on the rules.
- Preemption reads the resulting ``status.disruptionsAllowed`` and ``status.disruptedPods``
  from its PDB informer (reference §6.4); it does not import this module.

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
from ..clock import from_rfc3339

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


# ---- which pods, which are healthy ---------------------------------------------------


# ---- the numbers ---------------------------------------------------------------------


def scaled_value(value, total: int) -> int:
    """An int-or-percent against ``total``; a percentage is rounded up, as upstream does."""
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    m = _PERCENT.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"invalid value for IntOrString: {value!r} is not an integer or a percentage")
    return -(-int(m.group(1)) * total // 100)


def expected_and_desired(spec: dict, count: int) -> tuple[int, int]:
    """(expectedPods, desiredHealthy) for ``count`` covered pods; ValueError on a bad spec."""
    if spec.get("maxUnavailable") is not None:
        return count, max(0, count - scaled_value(spec["maxUnavailable"], count))
    if spec.get("minAvailable") is not None:
        return count, scaled_value(spec["minAvailable"], count)
    return count, 0


def _live_disrupted(recorded: dict | None, pods: list[dict], now: float) -> dict[str, str]:
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


def _count_healthy(pods: list[dict], disrupted: dict[str, str]) -> int:
    return sum(1 for p in pods if not is_terminating(p) and name_of(p) not in disrupted and pod_is_healthy(p))


def pdb_status(pdb: dict, pods: Iterable[dict], now: float) -> dict:
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


def _fail_safe(old: dict, message: str, now: float) -> dict:
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


def _disruption_condition(status: dict | None) -> tuple | None:
    for c in (status or {}).get("conditions") or ():
        if c.get("type") == DISRUPTION_ALLOWED:
            return (c.get("status"), c.get("reason"), c.get("message") or "")
    return None


def status_needs_write(old: dict | None, new: dict) -> bool:
    """True when ``new`` differs from ``old`` in a field the controller owns."""
    old = old or {}
    if any((old.get(f) or 0) != (new.get(f) or 0) for f in _COMPARED):
        return True
    if (old.get("disruptedPods") or {}) != (new.get("disruptedPods") or {}):
        return True
    return _disruption_condition(old) != _disruption_condition(new)


def recheck_time(status: dict) -> float | None:
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
    __slots__ = ("pdb", "selector")

    def __init__(self, pdb: dict):
        self.pdb = pdb
        self.selector = selector_of(pdb)  # compiled once per PDB version, used on every pod event


class DisruptionController:
    """PDBs and pods by key, the PDBs whose status may be stale, and when to look again.

    Feed it watch events, then call ``sync(now)``: it recomputes each PDB touched since the
    last call (or whose disruptedPods entry has expired) and returns the statuses that
    differ from what the PDB carries. A returned status is assumed written; the watch
    event that follows the write confirms it (or, if the write lost, brings the truth and
    marks the PDB for another look).
    """

    def __init__(self) -> None:
        self._budgets: dict[str, dict[str, _Budget]] = {}  # namespace -> name -> budget
        self._pods: dict[str, dict[str, dict]] = {}  # namespace -> name -> pod
        self._dirty: set[Key] = set()
        self._recheck: dict[Key, float] = {}

    # -- events ----------------------------------------------------------------------
    def on_pdb(self, event_type: str, pdb: dict) -> None:
        ns, name = namespace_of(pdb), name_of(pdb)
        bucket = self._budgets.setdefault(ns, {})
        if event_type == "DELETED":
            bucket.pop(name, None)
            self._dirty.discard((ns, name))
            self._recheck.pop((ns, name), None)
            return
        bucket[name] = _Budget(pdb)
        self._dirty.add((ns, name))

    def on_pod(self, event_type: str, pod: dict) -> None:
        ns, name = namespace_of(pod), name_of(pod)
        bucket = self._pods.setdefault(ns, {})
        old = bucket.get(name)
        # Wake the PDBs the pod left as well as those it joined; a relist's DELETED carries
        # only the key, so the stored copy is what has the labels.
        if old is not None:
            self._mark(ns, labels_of(old))
        if old is None or labels_of(old) != labels_of(pod):
            self._mark(ns, labels_of(pod))
        if event_type == "DELETED":
            bucket.pop(name, None)
        else:
            bucket[name] = pod

    def _mark(self, ns: str, labels: dict) -> None:
        for name, budget in self._budgets.get(ns, {}).items():
            if budget.selector.matches(labels):
                self._dirty.add((ns, name))

    # -- sync ------------------------------------------------------------------------
    def sync(self, now: float) -> list[tuple[str, str, dict]]:
        """(namespace, name, status) for each PDB whose status should change, by key order."""
        due = {k for k, t in self._recheck.items() if t <= now}
        writes = []
        for ns, name in sorted(self._dirty | due):
            budget = self._budgets.get(ns, {}).get(name)
            if budget is None:
                continue
            pods = covered_pods(budget.pdb, self._pods.get(ns, {}).values(), budget.selector)
            status = pdb_status(budget.pdb, pods, now)
            when = recheck_time(status)
            if when is None:
                self._recheck.pop((ns, name), None)
            else:
                self._recheck[(ns, name)] = when
            if status_needs_write(budget.pdb.get("status"), status):
                budget.pdb = {**budget.pdb, "status": status}
                writes.append((ns, name, status))
        self._dirty.clear()
        return writes

    def next_recheck(self) -> float | None:
        """The emulated time the next disruptedPods entry expires (arm a timer for it)."""
        return min(self._recheck.values(), default=None)

    # -- reads -----------------------------------------------------------------------
    def pdb(self, namespace: str, name: str) -> dict | None:
        budget = self._budgets.get(namespace, {}).get(name)
        return budget.pdb if budget else None

    def pdb_count(self) -> int:
        return sum(len(b) for b in self._budgets.values())

    def pending(self) -> int:
        """How many PDBs wait for a sync."""
        return len(self._dirty)
