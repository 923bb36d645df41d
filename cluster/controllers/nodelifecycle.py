"""The node lifecycle controller: node health from heartbeats, and the NoExecute taints.

Owns the controller's view of each node's health (when it last saw the node heartbeat),
the Unknown conditions it writes when a node goes quiet, the ``NodeNotReady`` Event it
records then, the ``RegisteredNode`` and ``RemovingNode`` Events of a node it starts and
stops watching (for the first ``ANNOUNCED_NODES`` nodes only: at bench scale one Event a
node would be a hundred thousand Events), and the NoExecute taints of TaintBasedEvictions
(``node.kubernetes.io/unreachable`` and ``node.kubernetes.io/not-ready``) that
``tainteviction`` acts on. The NoSchedule taints that follow the same conditions belong
to ``nodetaints`` (Taint Nodes by Condition). Who calls it: the controller manager runs
``NodeLifecycleReconciler`` in a ``ReconcilerStep`` (``node_lifecycle_step``); the cache
folds each Node and node Lease as its events come (``fold_node``, ``fold_lease``: a Lease
is read by its head, never decoded), and each node's key is held until its grace deadline
or retry, the earliest of which is the step's ``next_wakeup()``.

A heartbeat is a Lease renewal (``spec.renewTime`` later than the last one seen) or a new
``lastHeartbeatTime`` on the node's Ready condition. Like upstream, the controller does not
compare those times with its clock (kubelets' clocks may be skewed): it notes *its own*
time of seeing the heartbeat (the probe time) and the node has a grace period from there,
node-monitor-grace-period (40 s) when the node has a Ready condition and
node-startup-grace-period (60 s) when it never posted one. A node the controller has just
started watching (first seen, or first seen again after a controller restart) is probed
at that moment, so a restarted controller gives every node a fresh grace period.

Node health, per node, as a state table:

| state   | what happens                            | next: effect                                   |
|---------|-----------------------------------------|------------------------------------------------|
| (none)  | Node first seen                         | Healthy: probe = now                           |
| Healthy | heartbeat seen                          | Healthy: probe = now                           |
| Healthy | now >= probe + grace                    | Stale: Ready, MemoryPressure, DiskPressure and |
|         |                                         | PIDPressure set to Unknown (NodeStatusUnknown) |
|         |                                         | keeping their lastHeartbeatTime; NodeNotReady  |
|         |                                         | Event when Ready was True                      |
| Stale   | heartbeat seen (kubelet back)           | Healthy: probe = now (the kubelet's own status |
|         |                                         | write brings Ready=True)                       |
| Stale   | node seen again, still not all Unknown  | Stale: written again (once per node version,   |
|         |                                         | or after MONITOR_PERIOD if nothing came back)  |
| any     | Node deleted                            | (none)                                         |

The NoExecute taint follows the Ready condition the node has after this controller's own
write in the same pass:

| Ready            | NoExecute taint wanted                                      |
|------------------|-------------------------------------------------------------|
| True             | neither (both removed)                                      |
| False            | ``not-ready`` (an ``unreachable`` one is swapped out)        |
| Unknown          | ``unreachable`` (a ``not-ready`` one is swapped out)         |
| absent, or other | left as they are                                            |

An added taint carries ``timeAdded`` (now). Deviations from upstream, on purpose:

- the grace expires at exactly probe + grace (upstream: the first 5 s monitor pass strictly
  after it); emulated time makes the boundary observable and a timer lands on it;
- the taint follows the condition written in the same pass (upstream: the next pass);
- no zone disruption handling and no tainting rate limit (upstream taints at
  node-eviction-rate 0.1 nodes/s per healthy zone, slower in a disrupted zone, and not at
  all when every zone is fully disrupted);
- a node first seen without a Ready condition gets its startup grace from when the
  controller first saw it (upstream: from its creationTimestamp);
- pods on a node that goes Unknown are not marked Ready=False (upstream's
  MarkPodsNotReady): kubemu's kubelet does not re-post pod status when it comes back.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ClassVar

from ..api.events import make_event
from ..api.objects import NODE_LEASE_NAMESPACE, condition, name_of
from ..api.patches import NodeConditions, NodeTaints
from ..api.requests import Patch
from ..api.sharing import SharedValues
from ..clock import parse_timestamp, rfc3339
from .reconciler import Indexer, Key, Obj, ObjectCache, Outcome, ReconcilerStep, Watches

NODE_MONITOR_GRACE_PERIOD = 40.0
NODE_STARTUP_GRACE_PERIOD = 60.0
# How long a write may go unanswered before the controller sends it again (upstream's
# node-monitor-period: how often it looks at every node).
MONITOR_PERIOD = 5.0

NO_EXECUTE = "NoExecute"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
EVICTION_TAINT_KEYS = (NOT_READY_TAINT, UNREACHABLE_TAINT)
# Ready status -> the NoExecute taint key it calls for (None: no taint).
READY_TAINT = {"True": None, "False": NOT_READY_TAINT, "Unknown": UNREACHABLE_TAINT}

# Conditions the controller turns Unknown. NetworkUnavailable is left alone, as upstream
# does: it is managed by the control plane, not posted by the kubelet.
MONITORED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
STATUS_UNKNOWN_REASON = "NodeStatusUnknown"
STATUS_UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
NEVER_UPDATED_REASON = "NodeStatusNeverUpdated"
NEVER_UPDATED_MESSAGE = "Kubelet never posted node status."
NODE_NOT_READY = "NodeNotReady"
ANNOUNCED_NODES = 1000  # how many nodes get a RegisteredNode (and later a RemovingNode) Event
COMPONENT = "node-controller"


# ---- pure helpers ----------------------------------------------------------------------


def ready_status(node: Obj) -> str | None:
    ready = condition(node, "Ready")
    return None if ready is None else ready.get("status")


def unknown_conditions(node: Obj, now: float) -> list[Obj]:
    """The monitored conditions that must change to mark ``node`` Unknown (only those)."""
    out = []
    stamp = rfc3339(now)
    for ctype in MONITORED_CONDITIONS:
        current = condition(node, ctype)
        if current is None:
            created = (node.get("metadata") or {}).get("creationTimestamp")
            out.append(
                {
                    "type": ctype,
                    "status": "Unknown",
                    "reason": NEVER_UPDATED_REASON,
                    "message": NEVER_UPDATED_MESSAGE,
                    "lastHeartbeatTime": created,
                    "lastTransitionTime": stamp,
                }
            )
        elif current.get("status") != "Unknown":
            out.append(
                {
                    **current,
                    "status": "Unknown",
                    "reason": STATUS_UNKNOWN_REASON,
                    "message": STATUS_UNKNOWN_MESSAGE,
                    "lastTransitionTime": stamp,
                }
            )
    return out


def no_execute_patch(node: Obj, ready: str | None, now: float) -> tuple[str, list[Obj], list[Obj]] | None:
    """The taint patch that brings the node's eviction taints in line with ``ready``, or None."""
    if ready not in READY_TAINT:
        return None  # no Ready condition (or a status upstream has no case for): hands off
    have = {
        t.get("key")
        for t in (node.get("spec") or {}).get("taints") or ()
        if t.get("effect") == NO_EXECUTE and t.get("key") in EVICTION_TAINT_KEYS
    }
    key = READY_TAINT[ready]
    want = set() if key is None else {key}
    if have == want:
        return None
    add = [{"key": k, "effect": NO_EXECUTE, "timeAdded": rfc3339(now)} for k in sorted(want - have)]
    remove = [{"key": k, "effect": NO_EXECUTE} for k in sorted(have - want)]
    return name_of(node), add, remove


def lease_renew_time(lease: Obj) -> float | None:
    """A node Lease's ``spec.renewTime`` as emulated seconds; None when absent or unreadable
    (such a lease is no heartbeat)."""
    return renew_seconds((lease.get("spec") or {}).get("renewTime"))


def renew_seconds(stamp: Any) -> float | None:
    """A renewTime as emulated seconds (None when it is not a readable time)."""
    return parse_timestamp(stamp) if isinstance(stamp, str) else None


# ---- the controller --------------------------------------------------------------------


def health_view(node: Obj, shared: Shared | None = None) -> Obj:
    """What the controller reads of a node (its name, uid, version and creation time, its
    taints and conditions), kept per node in place of the whole decoded node, which is
    several times as large (addresses, capacity, nodeInfo, images). ``shared``: the
    condition dicts and taint lists equal to ones kept for other nodes are those."""
    m = node.get("metadata") or {}
    taints = (node.get("spec") or {}).get("taints")
    conditions = (node.get("status") or {}).get("conditions")
    if shared is not None:
        taints = shared.taints(taints)
        conditions = shared.conditions(conditions)
    return {
        "kind": "Node",
        "metadata": {k: m[k] for k in ("name", "uid", "resourceVersion", "creationTimestamp") if k in m},
        "spec": {"taints": taints},
        "status": {"conditions": conditions},
    }


class Shared:
    """Equal condition dicts and taint lists, kept once for every node that has them.

    Kubelets report the same reasons and messages, and nodes that post in the same second
    the same times, so at 10,000 nodes most of a node's conditions (3 KB decoded) equal
    another node's. Nothing here changes a kept dict or list (``unknown_conditions`` builds
    new ones), so sharing them is safe (``api.sharing.SharedValues``)."""

    __slots__ = ("_conditions", "_taints")

    def __init__(self, limit: int = 4096) -> None:
        self._conditions = SharedValues(limit)
        self._taints = SharedValues(limit)

    def conditions(self, conditions: Any) -> Any:
        if not isinstance(conditions, list):
            return conditions
        return [
            _keep(self._conditions, c, lambda c: tuple(c.items())) if isinstance(c, dict) else c for c in conditions
        ]

    def taints(self, taints: Any) -> Any:
        if not isinstance(taints, list) or not taints:
            return taints
        return _keep(self._taints, taints, lambda ts: tuple(tuple(t.items()) for t in ts))


def _keep(table: SharedValues, value: Any, frozen: Callable[[Any], Hashable]) -> Any:
    """``value`` or an equal one kept before; its own when it cannot be frozen and hashed
    (a nested value, a list of something else than dicts)."""
    try:
        return table.keep(frozen(value), value)
    except (AttributeError, TypeError):
        return value


class NodeSeen:
    """What the cache keeps of a Node (``Watches.fold``): its ``health_view``, whether it
    has a Ready condition, that condition's heartbeat, and when the controller last saw
    the kubelet in it (first seen, or a Ready heartbeat or Ready condition that changed)."""

    __slots__ = ("view", "has_ready", "heartbeat", "heard")

    def __init__(self, view: Obj, has_ready: bool, heartbeat: Any, heard: float) -> None:
        self.view, self.has_ready, self.heartbeat, self.heard = view, has_ready, heartbeat, heard


_SHARED = Shared()  # equal conditions and taints of every node, kept once (never changed)


def fold_node(old: NodeSeen | None, node: Obj | None, now: float) -> NodeSeen | None:
    if node is None:
        return None
    ready = condition(node, "Ready")
    heartbeat = ready.get("lastHeartbeatTime") if ready else None
    heard = now
    if old is not None and old.has_ready == (ready is not None) and old.heartbeat == heartbeat:
        heard = old.heard
    return NodeSeen(health_view(node, _SHARED), ready is not None, heartbeat, heard)


def fold_lease(old: tuple[float, float] | None, lease: Any, now: float) -> tuple[float, float] | None:
    """A node Lease kept as (latest renewTime seen, when it rose to it): a renewal is a
    heartbeat when its renewTime is later than the last one seen. ``lease``: the decoded
    Lease or its ``LeaseHead``."""
    if isinstance(lease, dict):
        if (lease.get("metadata") or {}).get("namespace") != NODE_LEASE_NAMESPACE:
            return old
        renew = lease_renew_time(lease)
    else:
        if lease.namespace != NODE_LEASE_NAMESPACE:
            return old
        renew = renew_seconds(lease.renew_time)
    if renew is None or (old is not None and renew <= old[0]):
        return old
    return (renew, now)


def _lease_node(event_type: str, lease: Any) -> tuple[Key, ...]:
    """A node Lease's event names its node."""
    if isinstance(lease, dict):
        return (("", name_of(lease)),)
    return (("", lease.name),)


class _Health:
    """What the controller knows about one node beyond the cache (upstream's
    nodeHealthData): the view last judged, and its writes still on their way back."""

    __slots__ = ("node", "probe", "has_ready", "sent_rv", "retry_at", "judged_deadline", "seen")

    def __init__(self, seen: NodeSeen) -> None:
        self.seen: NodeSeen | None = None  # the cache's copy last judged
        self.node = seen.view
        self.probe = seen.heard
        self.has_ready = seen.has_ready
        self.sent_rv = None  # the node version the last writes were based on
        self.retry_at = 0.0
        self.judged_deadline = -1.0  # the grace deadline last acted on

    def grace(self) -> float:
        return NODE_MONITOR_GRACE_PERIOD if self.has_ready else NODE_STARTUP_GRACE_PERIOD

    def deadline(self) -> float:
        return self.probe + self.grace()


class NodeLifecycleReconciler:
    """Node health and eviction taints; see the module docstring for the state tables.

    A node's key comes due on its Node's events, on a Lease renewal that is a heartbeat,
    at its grace deadline and at its retry; the reconcile judges the node when its Node
    changed, its deadline came, or its retry did (a heartbeat alone only moves the deadline)."""

    name: ClassVar[str] = "node-lifecycle"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Node", fold=fold_node),
        Watches("Lease", keys=_lease_node, fold=fold_lease, deletes=False),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache
        self._health: dict[str, _Health] = {}
        self._announced: set[str] = set()  # the nodes a RegisteredNode Event announced

    def reconcile(self, key: Key, now: float) -> Outcome:
        name = key[1]
        seen: NodeSeen | None = self.cache.projected("Node", "", name)
        out = Outcome()
        if seen is None:
            gone = self._health.pop(name, None)
            if gone is not None and name in self._announced:
                self._announced.discard(name)
                self._announce(gone.node, "RemovingNode", f"Removing Node {name} from Controller", now, out)
            return out
        health = self._health.get(name)
        if health is None:
            health = self._health[name] = _Health(seen)
            if len(self._announced) < ANNOUNCED_NODES:
                self._announced.add(name)
                self._announce(seen.view, "RegisteredNode", f"Registered Node {name} in Controller", now, out)
        lease: tuple[float, float] | None = self.cache.projected("Lease", NODE_LEASE_NAMESPACE, name)
        health.probe = max(seen.heard, lease[1]) if lease is not None else seen.heard
        health.has_ready = seen.has_ready
        judge = seen is not health.seen
        if judge:
            health.seen, health.node = seen, seen.view
            if (seen.view.get("metadata") or {}).get("resourceVersion") != health.sent_rv:
                health.retry_at = 0.0  # the node moved on: judge the new version, no retry needed
        if health.retry_at and now >= health.retry_at:
            judge, health.retry_at = True, 0.0
        deadline = health.deadline()
        if now >= deadline and health.judged_deadline != deadline:
            judge, health.judged_deadline = True, deadline
        if judge:
            self._sync_node(name, health, now, out)
        times = [t for t in (deadline, health.retry_at) if t > now]
        out.requeue_at = min(times, default=None)
        return out

    def _sync_node(self, name: str, health: _Health, now: float, out: Outcome) -> None:
        node = health.node
        rv = (node.get("metadata") or {}).get("resourceVersion")
        if health.sent_rv == rv and now < health.retry_at:
            return  # our last writes for this version are still on their way back
        before = ready_status(node)
        ready = before
        conditions = unknown_conditions(node, now) if now >= health.deadline() else []
        if conditions:
            ready = "Unknown"
            out.writes.append(Patch("Node", "", name, "", NodeConditions(tuple(conditions))))
            if before == "True":
                message = f"Node {name} status is now: {NODE_NOT_READY}"
                out.events.append(make_event(node, NODE_NOT_READY, message, now, component=COMPONENT))
        patch = no_execute_patch(node, ready, now)
        if patch is not None:
            out.writes.append(Patch("Node", "", name, "", NodeTaints(tuple(patch[1]), tuple(patch[2]))))
        if conditions or patch is not None:
            health.sent_rv, health.retry_at = rv, now + MONITOR_PERIOD

    @staticmethod
    def _announce(node: Obj, reason: str, event: str, now: float, out: Outcome) -> None:
        """One of upstream's node-controller Events about a node (``RecordNodeEvent``'s wording)."""
        message = f"Node {name_of(node)} event: {event}"
        out.events.append(make_event(node, reason, message, now, component=COMPONENT))

    def probe_time(self, name: str) -> float | None:
        """When the controller last heard from the node (None: not watching it)."""
        health = self._health.get(name)
        return None if health is None else health.probe


def node_lifecycle_step() -> ReconcilerStep:
    """The controller as the manager runs it: nodes judged in name order."""
    return ReconcilerStep(NodeLifecycleReconciler, sort_keys=True)
