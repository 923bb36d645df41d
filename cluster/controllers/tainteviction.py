"""The NoExecute taint manager (upstream's taint-eviction-controller).

Owns, for every pod bound to a node with NoExecute taints, the decision whether and when
the pod must go: a pod that does not tolerate one of the taints goes at once; a pod that
tolerates all of them goes after the smallest ``tolerationSeconds`` among the tolerations
that matched (the first toleration that tolerates each taint, as upstream's
GetMatchingTolerations picks them); a matched toleration without ``tolerationSeconds``
does not limit the time, so when none of them has one the pod stays for good. The taints
usually come from ``nodelifecycle`` (``node.kubernetes.io/unreachable`` and ``not-ready``,
which every pod tolerates for 300 s through the apiserver's DefaultTolerationSeconds
admission), but any NoExecute taint counts. Who calls it: the controller manager runs
``TaintEvictionReconciler`` in a ``ReconcilerStep`` (``reconciler.py``): a pod's events
name its key, a node's the keys of its pods when its NoExecute taints change. The cache
keeps a pod as the manager's shared ``podrecord.PodRecord`` (``Watches.records``; the
whole pod is decoded from the record's bytes only to write about it) and a node as its
NoExecute taints. A reconcile writes the pod's DisruptionTarget condition (reason
``DeletionByTaintManager``), then a normal graceful delete (the pod's own grace period),
and a ``TaintManagerEviction`` Event, and asks to look again at the eviction deadline. It
re-judges a pod only when its node, the node's taints or its tolerations differ from those
it judged last, so an unchanged pod costs a lookup. A refused eviction comes back as the
pod's next reconcile (after the work queue's back-off) and fires again when a retry can
help.

A pod's eviction, as a state table:

| state     | what happens                                     | next                          |
|-----------|--------------------------------------------------|-------------------------------|
| (none)    | node NoExecute-tainted, a taint not tolerated    | Scheduled, deadline = now     |
| (none)    | all tolerated, smallest tolerationSeconds s      | Scheduled, deadline = now + s |
| (none)    | all tolerated, no tolerationSeconds              | (none): tolerated forever     |
| Scheduled | taints or tolerations change, still limited      | Scheduled, deadline unchanged |
| Scheduled | a taint no longer tolerated                      | Scheduled, deadline = now     |
| Scheduled | the node loses its NoExecute taints, or the pod  | (none), "Cancelling deletion" |
|           | now tolerates them forever, or the pod is gone   | Event                         |
| Scheduled | deadline reached, pod not terminating            | Fired: condition, delete,     |
|           |                                                  | "Marking for deletion" Event  |
| Scheduled | deadline reached, pod already terminating        | Fired, nothing written        |
| Fired     | taints or tolerations change, still limited      | Fired (never deleted twice)   |
| Fired     | a taint no longer tolerated                      | Scheduled, deadline = now     |
| Fired     | taints removed, or pod gone                      | (none), no Event              |

The clock of a limited toleration starts when this controller first schedules the pod's
eviction, not at the taint's ``timeAdded``: that is what upstream's taint manager does
(its timed queue keeps the first schedule's start), so a controller restarted during an
outage gives pods their full tolerationSeconds again, and a pod that lands on a node
tainted long ago still gets its time. Deletions of a node leave its pods' schedules in
place (as upstream); pod GC deals with pods on nodes that are gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..api.events import make_event
from ..api.objects import condition, name_of, uid_of
from ..api.patches import PodConditions
from ..api.requests import Delete, Patch
from ..api.taints import tolerates_taint
from ..clock import rfc3339
from .podrecord import PodRecord
from .reconciler import Indexer, ObjectCache, Outcome, Watches

NO_EXECUTE = "NoExecute"
DISRUPTION_TARGET = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "DeletionByTaintManager",
    "message": "Taint manager: deleting due to NoExecute taint",
}
EVICTION_REASON = "TaintManagerEviction"
COMPONENT = "taint-eviction-controller"

Key = tuple[str, str]  # (namespace, name)


# ---- pure helpers ----------------------------------------------------------------------


def no_execute_taints(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == NO_EXECUTE]


def matching_tolerations(
    taints: list[dict[str, Any]], tolerations: list[dict[str, Any]] | None
) -> tuple[bool, list[dict[str, Any]]]:
    """(every taint tolerated?, the first toleration that tolerates each taint)."""
    used = []
    for taint in taints:
        match = next((t for t in tolerations or () if tolerates_taint(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(used: list[dict[str, Any]]) -> float | None:
    """The smallest tolerationSeconds of ``used`` (0 or less: at once), or None when none
    of them limits the time (tolerated forever)."""
    if not used:
        return 0.0
    least = None
    for toleration in used:
        seconds = toleration.get("tolerationSeconds")
        if seconds is None:
            continue
        if seconds <= 0:
            return 0.0
        least = seconds if least is None else min(least, seconds)
    return None if least is None else float(least)


def _pod_ref(key: Key, rec: PodRecord | None) -> dict[str, Any]:
    # A relist's DELETED event carries only the key; the Event still names the pod.
    return rec.pod() if rec is not None else {"kind": "Pod", "metadata": {"namespace": key[0], "name": key[1]}}


# ---- the controller --------------------------------------------------------------------

Taints = tuple[dict[str, Any], ...]


@dataclass
class _Eviction:
    created: float
    deadline: float
    fired: bool = False
    # What the pod was judged against: (node, its NoExecute taints, the pod's tolerations).
    judged: tuple[str, Taints, Any] = ("", (), None)


def _node_taints(node: dict[str, Any]) -> Taints:
    """What the cache keeps of a Node: its NoExecute taints (() for none: a node deleted
    is absent, which is not the same, see ``Watches.deletes``)."""
    return tuple(no_execute_taints(node))


def _pods_on(cache: ObjectCache, event_type: str, node: dict[str, Any]) -> list[Key]:
    return cache.index_keys("Pod", "node", name_of(node))


def _own(event_type: str, rec: Any) -> tuple[Key]:
    return (rec.key,)


def _judged_by(rec: PodRecord) -> tuple[str, Any]:
    """What of a pod its judgement reads (its node's taints aside): a pod event that changes
    neither names no key (its record is kept all the same, for the eviction to read)."""
    return (rec.node, rec.tolerations)


def _bound_to(rec: PodRecord) -> tuple[str, ...]:
    return (rec.node,) if rec.node else ()


def by_node(cache: ObjectCache, key: Key) -> tuple[str, Key]:
    """The order a sync's pods are judged in: by node, then by key (as upstream's pass over
    a tainted node's pods, so evictions due together are sent in that order)."""
    rec = cache.last_seen("Pod", key)
    return (rec.node if rec is not None else "", key)


class TaintEvictionReconciler:
    """Pods on NoExecute-tainted nodes and their eviction deadlines (see the state table)."""

    name: ClassVar[str] = "taint-eviction-controller"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Node", route=_pods_on, project=_node_taints, on_change=True, deletes=False),
        Watches("Pod", keys=_own, records=True, changed=_judged_by),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = (("Pod", "node", _bound_to),)

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache
        self._work: dict[Key, _Eviction] = {}

    def reconcile(self, key: Key, now: float) -> Outcome:
        out = Outcome()
        rec: PodRecord | None = self.cache.projected("Pod", *key)
        work = self._work.get(key)
        if work is not None and work.fired and any(e.retryable for _, e in self.cache.refused(key)):
            work.fired, work.deadline = False, now  # its delete was refused: fire again
        if rec is None or not rec.node:
            self._cancel(key, self.cache.last_seen("Pod", key), now, out)  # gone (or never bound)
            return out
        taints: Taints | None = self.cache.projected("Node", "", rec.node)
        if taints is not None:  # a node that is gone keeps its pods' schedules (pod GC deals with its pods)
            judged = (rec.node, taints, rec.tolerations)
            if work is None or work.judged != judged:
                self._process(key, rec, judged, now, out)
        work = self._work.get(key)
        if work is not None and not work.fired:
            if work.deadline <= now:
                self._fire(key, work, rec, now, out)
            else:
                out.requeue_at = work.deadline
        return out

    def _process(self, key: Key, rec: PodRecord, judged: tuple[str, Taints, Any], now: float, out: Outcome) -> None:
        taints = judged[1]
        if not taints:
            self._cancel(key, rec, now, out)
            return
        tolerated, used = matching_tolerations(list(taints), rec.tolerations)
        if not tolerated:
            self._cancel(key, rec, now, out)
            self._work[key] = _Eviction(now, now, judged=judged)
            return
        seconds = min_toleration_seconds(used)
        if seconds is None:
            self._cancel(key, rec, now, out)
            return
        work = self._work.get(key)
        if work is None:  # a scheduled (or fired) eviction keeps its first start
            self._work[key] = _Eviction(now, now + seconds, judged=judged)
        else:
            work.judged = judged

    def _cancel(self, key: Key, rec: PodRecord | None, now: float, out: Outcome) -> None:
        work = self._work.pop(key, None)
        if work is not None and not work.fired:
            out.events.append(
                make_event(
                    _pod_ref(key, rec),
                    EVICTION_REASON,
                    f"Cancelling deletion of Pod {key[0]}/{key[1]}",
                    now,
                    component=COMPONENT,
                )
            )

    def _fire(self, key: Key, work: _Eviction, rec: PodRecord, now: float, out: Outcome) -> None:
        work.fired = True
        if rec.terminating:
            return  # already on its way out: one delete is enough
        ns, name = key
        pod = rec.pod()
        uid = uid_of(pod)
        out.events.append(
            make_event(pod, EVICTION_REASON, f"Marking for deletion Pod {ns}/{name}", now, component=COMPONENT)
        )
        current = condition(pod, "DisruptionTarget") or {}
        if any(current.get(k) != v for k, v in DISRUPTION_TARGET.items()):
            cond = {**DISRUPTION_TARGET, "lastTransitionTime": rfc3339(now)}
            out.writes.append(Patch("Pod", ns, name, uid, PodConditions((cond,), None)))
        out.writes.append(Delete("Pod", ns, name, uid, None))

    def scheduled(self) -> dict[Key, float]:
        """(namespace, name) -> eviction deadline, for every eviction not yet fired."""
        return {k: w.deadline for k, w in self._work.items() if not w.fired}
