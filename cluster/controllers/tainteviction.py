"""The NoExecute taint manager (upstream's taint-eviction-controller).

Owns, for every pod bound to a node with NoExecute taints, the decision whether and when
the pod must go: a pod that does not tolerate one of the taints goes at once; a pod that
tolerates all of them goes after the smallest ``tolerationSeconds`` among the tolerations
that matched (the first toleration that tolerates each taint, as upstream's
GetMatchingTolerations picks them); a matched toleration without ``tolerationSeconds``
does not limit the time, so when none of them has one the pod stays for good. The taints
usually come from ``nodelifecycle`` (``node.kubernetes.io/unreachable`` and ``not-ready``,
which every pod tolerates for 300 s through the apiserver's DefaultTolerationSeconds
admission), but any NoExecute taint counts. Who calls it: the controller-manager actor
(through ``manager.ControllerManager``) feeds it Node watch events and each pod event as a
``podrecord.PodRecord`` (``on_pod_record``; ``on_event`` takes a pod dict and makes the
record), calls ``sync(now)`` and sends the returned ``Writes``: the pod's DisruptionTarget
condition (reason ``DeletionByTaintManager``), then a normal graceful delete (the pod's
own grace period), and a ``TaintManagerEviction`` Event. It sleeps no longer than
``next_wakeup()``, the earliest eviction deadline. A pod is kept as its record; the whole
pod is decoded from the record's bytes only to write about it.

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

from ..api.events import make_event
from ..api.objects import condition, name_of, uid_of
from ..api.taints import tolerates_taint
from ..clock import rfc3339
from ..runtime.timers import Handle, TimerQueue
from .podrecord import PodRecord, PodRecords
from .writes import Writes

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


def no_execute_taints(node: dict) -> list[dict]:
    return [t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == NO_EXECUTE]


def matching_tolerations(taints: list[dict], tolerations: list[dict] | None) -> tuple[bool, list[dict]]:
    """(every taint tolerated?, the first toleration that tolerates each taint)."""
    used = []
    for taint in taints:
        match = next((t for t in tolerations or () if tolerates_taint(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(used: list[dict]) -> float | None:
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


def _pod_ref(key: Key, rec: PodRecord | None) -> dict:
    # A relist's DELETED event carries only the key; the Event still names the pod.
    return rec.pod() if rec is not None else {"kind": "Pod", "metadata": {"namespace": key[0], "name": key[1]}}


# ---- the controller --------------------------------------------------------------------


@dataclass
class _Eviction:
    created: float
    deadline: float
    timer: Handle | None = None
    fired: bool = False


class TaintEvictionController:
    """Pods on NoExecute-tainted nodes and their eviction deadlines (see the state table)."""

    kinds = ("Node", "Pod")

    def __init__(self) -> None:
        self._taints: dict[str, list[dict]] = {}  # node -> its NoExecute taints (non-empty)
        self._pods: dict[Key, PodRecord] = {}  # bound pods
        self._on_node: dict[str, set[Key]] = {}
        self._work: dict[Key, _Eviction] = {}
        self._timers = TimerQueue()  # tokens: (namespace, name); one live timer per scheduled eviction
        self._dirty_nodes: set[str] = set()
        self._dirty_pods: set[Key] = set()
        self._pending = Writes()  # cancellations noticed between syncs (their Events)
        self._records = PodRecords()  # for pods handed over as dicts

    # -- events ----------------------------------------------------------------------
    def on_event(self, kind: str, event_type: str, obj: dict, now: float) -> None:
        if kind == "Node":
            self._node_event(event_type, obj)
        elif kind == "Pod":
            self.on_pod_record(event_type, self._records.make(obj, None), now)

    def _node_event(self, event_type: str, node: dict) -> None:
        name = name_of(node)
        if event_type == "DELETED":
            self._taints.pop(name, None)
            return
        taints = no_execute_taints(node)
        if taints == self._taints.get(name, []):
            return
        if taints:
            self._taints[name] = taints
        else:
            self._taints.pop(name, None)
        self._dirty_nodes.add(name)

    def on_pod_record(self, event_type: str, rec: PodRecord, now: float) -> None:
        key = rec.key
        old = self._pods.get(key)
        node = rec.node if event_type != "DELETED" else ""
        moved = old is None or old.node != node
        if old is not None and moved:
            self._unindex(key, old)
        if not node:
            self._cancel(key, old, now, self._pending)  # gone (or never bound): nothing to evict
            return
        self._pods[key] = rec
        self._on_node.setdefault(node, set()).add(key)
        # Equal tolerations are usually one list shared by the records: identity answers first.
        tolerations = rec.tolerations
        if moved or (old is not None and old.tolerations is not tolerations and old.tolerations != tolerations):
            self._dirty_pods.add(key)

    def _unindex(self, key: Key, old: PodRecord) -> None:
        self._pods.pop(key, None)
        keys = self._on_node.get(old.node)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._on_node[old.node]

    # -- sync ------------------------------------------------------------------------
    def sync(self, now: float) -> Writes:
        out, self._pending = self._pending, Writes()
        done: set[Key] = set()
        for node in sorted(self._dirty_nodes):
            for key in sorted(self._on_node.get(node, ())):
                self._process(key, self._taints.get(node), now, out)
                done.add(key)
        for key in sorted(self._dirty_pods - done):
            rec = self._pods.get(key)
            taints = self._taints.get(rec.node) if rec is not None else None
            if taints:  # an untainted node has nothing scheduled for its pods to cancel
                self._process(key, taints, now, out)
        self._dirty_nodes.clear()
        self._dirty_pods.clear()
        self._fire(now, out)
        return out

    def _process(self, key: Key, taints: list[dict] | None, now: float, out: Writes) -> None:
        rec = self._pods[key]
        if not taints:
            self._cancel(key, rec, now, out)
            return
        tolerated, used = matching_tolerations(taints, rec.tolerations)
        if not tolerated:
            self._cancel(key, rec, now, out)
            self._schedule(key, now, now)
            return
        seconds = min_toleration_seconds(used)
        if seconds is None:
            self._cancel(key, rec, now, out)
            return
        if key not in self._work:  # a scheduled (or fired) eviction keeps its first start
            self._schedule(key, now, now + seconds)

    def _schedule(self, key: Key, created: float, deadline: float) -> None:
        old = self._work.get(key)
        if old is not None:
            self._timers.cancel(old.timer)
        self._work[key] = _Eviction(created, deadline, self._timers.schedule(deadline, key))

    def _cancel(self, key: Key, rec: PodRecord | None, now: float, out: Writes) -> None:
        work = self._work.pop(key, None)
        if work is not None:
            self._timers.cancel(work.timer)
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

    def _fire(self, now: float, out: Writes) -> None:
        for key in self._timers.pop_due(now):
            work = self._work.get(key)
            if work is None or work.fired:
                continue
            work.fired = True
            rec = self._pods.get(key)
            if rec is None or rec.terminating:
                continue  # already on its way out: one delete is enough
            self._evict(key, rec, now, out)

    def _evict(self, key: Key, rec: PodRecord, now: float, out: Writes) -> None:
        ns, name = key
        pod = rec.pod()
        uid = uid_of(pod)
        out.events.append(
            make_event(pod, EVICTION_REASON, f"Marking for deletion Pod {ns}/{name}", now, component=COMPONENT)
        )
        current = condition(pod, "DisruptionTarget") or {}
        if any(current.get(k) != v for k, v in DISRUPTION_TARGET.items()):
            out.pod_conditions.append(
                (ns, name, uid, [{**DISRUPTION_TARGET, "lastTransitionTime": rfc3339(now)}], None)
            )
        out.pod_deletes.append((ns, name, uid, None))

    # -- timers and reads ------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        return self._timers.next_time()

    def scheduled(self) -> dict[Key, float]:
        """(namespace, name) -> eviction deadline, for every eviction not yet fired."""
        return {k: w.deadline for k, w in self._work.items() if not w.fired}
