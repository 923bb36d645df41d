"""Pod garbage collection (upstream's podgc controller).

Owns the decision to force-delete (grace 0) pods nobody else will ever finish, by four
rules, checked in upstream's order on every sync:

| rule                       | which pods                                   | before the delete          |
|----------------------------|----------------------------------------------|----------------------------|
| gcTerminated               | Succeeded/Failed pods beyond                 | (already terminal)         |
|                            | terminated-pod-gc-threshold (12500): evicted |                            |
|                            | ones first, then oldest creationTimestamp,   |                            |
|                            | then name                                    |                            |
| gcTerminating              | terminating pods on a node that is not Ready | phase Failed               |
|                            | and has the ``node.kubernetes.io/            |                            |
|                            | out-of-service`` taint                       |                            |
| gcOrphaned                 | pods bound to a node that has been absent    | phase Failed, DisruptionTarget |
|                            | for the quarantine (40 s)                    | (DeletionByPodGC)          |
| gcUnscheduledTerminating   | terminating pods with no nodeName            | phase Failed               |

"Before the delete": a pod that is not yet Succeeded or Failed is first written with
phase Failed (and the condition), so that whoever watches sees how it ended; a node that
is gone will never say. The phase goes out as an ``update_status`` of the pod's status as
last seen, followed in the same batch by the delete.

A node named by pods but absent from the Node watch, as a state table:

| state   | what happens                                   | next                         |
|---------|------------------------------------------------|------------------------------|
| (none)  | a pod names it, or it is deleted with pods     | Missing since now            |
| Missing | the Node appears                               | (none)                       |
| Missing | now >= since + quarantine, pods still on it    | its pods are orphans: deleted|
| Missing | no pods left on it                             | (none)                       |

The quarantine is what keeps a relist (pods listed before nodes) or a node that is only
late to register from costing pods; upstream also GETs the node before deciding, which
here is the Node watch itself. Who calls it: the controller manager runs
``PodGCReconciler`` in a ``ReconcilerStep`` (``reconciler.py``). Upstream's pod GC is a
periodic sweep, not a queue of objects, so every Node and Pod event names the one key
``SWEEP``; the reconcile runs the four rules over the cache and asks to run again at the
next quarantine end or re-ask (a refused write is asked again at once, after the work
queue's back-off, when a retry can help). The cache keeps a pod as the manager's shared
``podrecord.PodRecord`` (``Watches.records``), not its dict, indexed by node, terminal
and unscheduled-terminating; the status written before a delete is decoded from the
record's bytes when it is needed; of a Node it keeps its name and whether it is out of
service.

Deviations from upstream, on purpose: the rules run whenever something changed and at
each quarantine's end, not on a 20 s period (the period is kept as the time after which a
delete that never came back is sent again).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..api.objects import condition, name_of, uid_of
from ..api.requests import Delete, UpdateStatus
from ..clock import rfc3339
from .podrecord import PodRecord
from .reconciler import Indexer, ObjectCache, Outcome, Watches

TERMINATED_POD_GC_THRESHOLD = 12500
QUARANTINE_SECONDS = 40.0
GC_CHECK_PERIOD = 20.0
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
ORPHAN_CONDITION = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "DeletionByPodGC",
    "message": "PodGC: node no longer exists",
}

Key = tuple[str, str]  # (namespace, name)
Obj = dict[str, Any]


# ---- pure helpers ----------------------------------------------------------------------


def out_of_service(node: Obj) -> bool:
    """Not Ready and tainted ``node.kubernetes.io/out-of-service`` (any effect)."""
    ready = condition(node, "Ready")
    if ready is not None and ready.get("status") == "True":
        return False
    return any(t.get("key") == OUT_OF_SERVICE_TAINT for t in (node.get("spec") or {}).get("taints") or ())


def terminated_order(rec: PodRecord) -> tuple[bool, float, str, str]:
    """Evicted pods first (their controllers have replaced them), then the oldest, by name."""
    return (not rec.evicted, rec.created, rec.key[1], rec.key[0])


def failed_status(pod: Obj, cond: Obj | None, now: float) -> Obj:
    """The pod's status with phase Failed (and ``cond`` set, stamped now)."""
    status = dict(pod.get("status") or {})
    status["phase"] = "Failed"
    if cond is not None:
        conds = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]]
        status["conditions"] = conds + [{**cond, "lastTransitionTime": rfc3339(now)}]
    return status


# ---- the controller --------------------------------------------------------------------

SWEEP: Key = ("", "")  # the one key: pod GC sweeps every pod
OUT_OF_SERVICE = "out-of-service"


def _sweep(event_type: str, obj: Any) -> tuple[Key]:
    return (SWEEP,)


def _node_state(node: Obj) -> tuple[str, bool]:
    """What the cache keeps of a Node: (name, out of service)."""
    return (name_of(node), out_of_service(node))


def _node_name(state: tuple[str, bool]) -> tuple[str]:
    return (state[0],)


def _node_out_of_service(state: tuple[str, bool]) -> tuple[str, ...]:
    return (OUT_OF_SERVICE,) if state[1] else ()


def _pod_node(rec: PodRecord) -> tuple[str, ...]:
    return (rec.node,) if rec.node else ()


def _pod_terminal(rec: PodRecord) -> tuple[str, ...]:
    return ("terminal",) if rec.terminal else ()


def _pod_unscheduled_terminating(rec: PodRecord) -> tuple[str, ...]:
    return ("unscheduled",) if not rec.node and rec.terminating else ()


class PodGCReconciler:
    """The four rules over the cache (see the module docstring); its own state is only
    when each absent node was first missed and the force deletes not yet confirmed."""

    name: ClassVar[str] = "pod-garbage-collector"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Node", keys=_sweep, project=_node_state),
        Watches("Pod", keys=_sweep, records=True),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = (
        ("Node", "name", _node_name),
        ("Node", OUT_OF_SERVICE, _node_out_of_service),
        ("Pod", "node", _pod_node),
        ("Pod", "terminal", _pod_terminal),
        ("Pod", "unscheduled", _pod_unscheduled_terminating),
    )

    def __init__(
        self,
        cache: ObjectCache,
        terminated_threshold: int = TERMINATED_POD_GC_THRESHOLD,
        quarantine: float = QUARANTINE_SECONDS,
    ) -> None:
        self.cache = cache
        self.threshold = terminated_threshold
        self.quarantine = quarantine
        self._missing: dict[str, float] = {}  # node -> since when pods name it but it is absent
        self._asked: dict[Key, float] = {}  # force deletes sent and not yet seen -> when

    def reconcile(self, key: Key, now: float) -> Outcome:
        out = Outcome()
        for req, error in self.cache.refused(key):
            if error.retryable and isinstance(req, (Delete, UpdateStatus)):
                self._asked.pop((req.namespace, req.name), None)  # asked again now, not in 20 s
        self._observe(now)
        for k in [k for k, t in self._asked.items() if now >= t + GC_CHECK_PERIOD]:
            del self._asked[k]  # never confirmed: the next rule that picks it asks again
        self._gc_terminated(now, out)
        self._gc_terminating(now, out)
        self._gc_orphaned(now, out)
        for k in self.cache.index_keys("Pod", "unscheduled", "unscheduled"):
            self._force_delete(k, None, now, out)
        out.requeue_at = self._next(now)
        return out

    def _observe(self, now: float) -> None:
        """Absent nodes that pods name are missing from now on; a present one is not; a
        pod seen DELETED is no longer waited for."""
        cache = self.cache
        present = cache.index_values("Node", "name")
        for node in cache.index_values("Pod", "node") - present:
            self._missing.setdefault(node, now)
        for node in [n for n in self._missing if n in present]:
            del self._missing[node]
        for k in [k for k in self._asked if cache.projected("Pod", *k) is None]:
            del self._asked[k]

    def _gc_terminated(self, now: float, out: Outcome) -> None:
        count = self.cache.index_count("Pod", "terminal", "terminal")
        if self.threshold <= 0 or count <= self.threshold:
            return  # the common case, without looking at a pod; a threshold of 0 turns the rule off
        waiting = [k for k in self.cache.index_keys("Pod", "terminal", "terminal") if k not in self._asked]
        excess = len(waiting) - self.threshold
        if excess <= 0:
            return
        oldest = sorted(waiting, key=lambda k: terminated_order(self._pod(k)))[:excess]
        for k in oldest:
            self._force_delete(k, None, now, out)

    def _gc_terminating(self, now: float, out: Outcome) -> None:
        for _, node in self.cache.index_keys("Node", OUT_OF_SERVICE, OUT_OF_SERVICE):
            for k in self.cache.index_keys("Pod", "node", node):
                if self._pod(k).terminating:
                    self._force_delete(k, None, now, out)

    def _gc_orphaned(self, now: float, out: Outcome) -> None:
        for node, since in sorted(self._missing.items()):
            keys = self.cache.index_keys("Pod", "node", node)
            if not keys:
                del self._missing[node]
                continue
            if now >= since + self.quarantine:
                for k in keys:
                    self._force_delete(k, ORPHAN_CONDITION, now, out)

    def _pod(self, key: Key) -> PodRecord:
        rec: PodRecord = self.cache.projected("Pod", *key)
        return rec

    def _force_delete(self, key: Key, cond: Obj | None, now: float, out: Outcome) -> None:
        if key in self._asked:
            return
        self._asked[key] = now
        rec = self._pod(key)
        pod = rec.pod()
        ns, name, uid = key[0], key[1], uid_of(pod)
        if not rec.terminal:
            out.writes.append(UpdateStatus("Pod", ns, name, uid, failed_status(pod, cond, now)))
        out.writes.append(Delete("Pod", ns, name, uid, 0))

    def _next(self, now: float) -> float | None:
        """The next quarantine end not yet acted on, or the next re-ask of a lost delete."""
        times = [
            since + self.quarantine
            for node, since in self._missing.items()
            if since + self.quarantine > now and self.cache.index_count("Pod", "node", node)
        ]
        times += [t + GC_CHECK_PERIOD for t in self._asked.values()]
        return min(times, default=None)

    def missing_nodes(self) -> dict[str, float]:
        """Absent node -> since when pods name it (the quarantine's start)."""
        return dict(self._missing)
