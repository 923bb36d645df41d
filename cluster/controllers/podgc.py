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
here is the Node watch itself. Who calls it: the controller-manager actor (through
``manager.ControllerManager``) feeds it Node watch events and each pod event as a
``podrecord.PodRecord`` (``on_pod_record``; ``on_event`` takes a pod dict and makes the
record), calls ``sync(now)`` and sends the returned ``Writes``; it sleeps no longer than
``next_wakeup()``. A pod is kept as its record, not its dict: the status written before a
delete is decoded from the record's bytes when it is needed.

Deviations from upstream, on purpose: the rules run whenever something changed and at
each quarantine's end, not on a 20 s period (the period is kept as the time after which a
delete that never came back is sent again).
"""

from __future__ import annotations

from ..api.objects import condition, name_of, uid_of
from ..clock import rfc3339
from .podrecord import PodRecord, PodRecords
from .writes import Writes

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


# ---- pure helpers ----------------------------------------------------------------------


def out_of_service(node: dict) -> bool:
    """Not Ready and tainted ``node.kubernetes.io/out-of-service`` (any effect)."""
    ready = condition(node, "Ready")
    if ready is not None and ready.get("status") == "True":
        return False
    return any(t.get("key") == OUT_OF_SERVICE_TAINT for t in (node.get("spec") or {}).get("taints") or ())


def terminated_order(rec: PodRecord) -> tuple:
    """Evicted pods first (their controllers have replaced them), then the oldest, by name."""
    return (not rec.evicted, rec.created, rec.key[1], rec.key[0])


def failed_status(pod: dict, cond: dict | None, now: float) -> dict:
    """The pod's status with phase Failed (and ``cond`` set, stamped now)."""
    status = dict(pod.get("status") or {})
    status["phase"] = "Failed"
    if cond is not None:
        conds = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]]
        status["conditions"] = conds + [{**cond, "lastTransitionTime": rfc3339(now)}]
    return status


# ---- the controller --------------------------------------------------------------------


class PodGC:
    """Pods and nodes as the four rules need them (see the module docstring)."""

    kinds = ("Node", "Pod")

    def __init__(self, terminated_threshold: int = TERMINATED_POD_GC_THRESHOLD, quarantine: float = QUARANTINE_SECONDS):
        self.threshold = terminated_threshold
        self.quarantine = quarantine
        self._nodes: set[str] = set()
        self._out_of_service: set[str] = set()
        self._pods: dict[Key, PodRecord] = {}
        self._on_node: dict[str, set[Key]] = {}
        self._missing: dict[str, float] = {}  # node -> since when pods name it but it is absent
        self._terminated: set[Key] = set()
        self._unscheduled_terminating: set[Key] = set()
        self._asked: dict[Key, float] = {}  # force deletes sent and not yet seen -> when
        self._synced = float("-inf")
        self._records = PodRecords()  # for pods handed over as dicts

    # -- events ----------------------------------------------------------------------
    def on_event(self, kind: str, event_type: str, obj: dict, now: float) -> None:
        if kind == "Node":
            self._on_node_event(event_type, obj, now)
        elif kind == "Pod":
            self.on_pod_record(event_type, self._records.make(obj, None), now)

    def _on_node_event(self, event_type: str, node: dict, now: float) -> None:
        name = name_of(node)
        if event_type == "DELETED":
            self._nodes.discard(name)
            self._out_of_service.discard(name)
            if self._on_node.get(name):
                self._missing.setdefault(name, now)
            return
        self._nodes.add(name)
        if out_of_service(node):
            self._out_of_service.add(name)
        else:
            self._out_of_service.discard(name)
        self._missing.pop(name, None)

    def on_pod_record(self, event_type: str, rec: PodRecord, now: float) -> None:
        key = rec.key
        old = self._pods.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        if event_type == "DELETED":
            self._asked.pop(key, None)
            return
        self._pods[key] = rec
        node = rec.node
        if node:
            self._on_node.setdefault(node, set()).add(key)
            if node not in self._nodes:
                self._missing.setdefault(node, now)
        elif rec.terminating:
            self._unscheduled_terminating.add(key)
        if rec.terminal:
            self._terminated.add(key)

    def _unindex(self, key: Key, old: PodRecord) -> None:
        self._terminated.discard(key)
        self._unscheduled_terminating.discard(key)
        node = old.node
        keys = self._on_node.get(node)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._on_node[node]

    # -- sync ------------------------------------------------------------------------
    def sync(self, now: float) -> Writes:
        out = Writes()
        self._synced = now
        for key in [k for k, t in self._asked.items() if now >= t + GC_CHECK_PERIOD]:
            del self._asked[key]  # never confirmed: the next rule that picks it asks again
        self._gc_terminated(now, out)
        self._gc_terminating(now, out)
        self._gc_orphaned(now, out)
        for key in sorted(self._unscheduled_terminating):
            self._force_delete(key, None, now, out)
        return out

    def _gc_terminated(self, now: float, out: Writes) -> None:
        if self.threshold <= 0 or len(self._terminated) <= self.threshold:
            return  # the common case, without looking at a pod; a threshold of 0 turns the rule off
        waiting = [k for k in self._terminated if k not in self._asked]
        excess = len(waiting) - self.threshold
        if excess <= 0:
            return
        oldest = sorted(waiting, key=lambda k: terminated_order(self._pods[k]))[:excess]
        for key in oldest:
            self._force_delete(key, None, now, out)

    def _gc_terminating(self, now: float, out: Writes) -> None:
        for node in sorted(self._out_of_service):
            for key in sorted(self._on_node.get(node, ())):
                if self._pods[key].terminating:
                    self._force_delete(key, None, now, out)

    def _gc_orphaned(self, now: float, out: Writes) -> None:
        for node, since in sorted(self._missing.items()):
            keys = self._on_node.get(node)
            if not keys:
                del self._missing[node]
                continue
            if now >= since + self.quarantine:
                for key in sorted(keys):
                    self._force_delete(key, ORPHAN_CONDITION, now, out)

    def _force_delete(self, key: Key, cond: dict | None, now: float, out: Writes) -> None:
        if key in self._asked:
            return
        self._asked[key] = now
        rec = self._pods[key]
        pod = rec.pod()
        ns, name, uid = key[0], key[1], uid_of(pod)
        if not rec.terminal:
            out.pod_status.append((ns, name, uid, failed_status(pod, cond, now)))
        out.pod_deletes.append((ns, name, uid, 0))

    # -- timers ----------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        """The next quarantine end not yet acted on, or the next re-ask of a lost delete."""
        times = [
            since + self.quarantine
            for node, since in self._missing.items()
            if since + self.quarantine > self._synced and self._on_node.get(node)
        ]
        times += [t + GC_CHECK_PERIOD for t in self._asked.values()]
        return min(times, default=None)

    def missing_nodes(self) -> dict[str, float]:
        """Absent node -> since when pods name it (the quarantine's start)."""
        return dict(self._missing)
