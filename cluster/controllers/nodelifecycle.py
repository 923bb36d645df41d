"""The node lifecycle controller: node health from heartbeats, and the NoExecute taints.

Owns the controller's view of each node's health (when it last saw the node heartbeat),
the Unknown conditions it writes when a node goes quiet, the ``NodeNotReady`` Event it
records then, and the NoExecute taints of TaintBasedEvictions
(``node.kubernetes.io/unreachable`` and ``node.kubernetes.io/not-ready``) that
``tainteviction`` acts on. The NoSchedule taints that follow the same conditions belong
to ``nodetaints`` (Taint Nodes by Condition). Who calls it: the controller-manager actor
(through ``manager.ControllerManager``) feeds it Node and Lease watch events, calls
``sync(now)`` and sends the returned ``Writes``; it sleeps no longer than
``next_wakeup()``, the earliest grace expiry.

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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..api.events import make_event
from ..api.objects import NODE_LEASE_NAMESPACE, condition, name_of
from ..api.sharing import SharedValues
from ..clock import parse_timestamp, rfc3339
from ..runtime.timers import Handle, TimerQueue
from .writes import Writes

if TYPE_CHECKING:
    from ..api.leasehead import LeaseHead

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
COMPONENT = "node-controller"


# ---- pure helpers ----------------------------------------------------------------------


def ready_status(node: dict) -> str | None:
    ready = condition(node, "Ready")
    return None if ready is None else ready.get("status")


def unknown_conditions(node: dict, now: float) -> list[dict]:
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


def no_execute_patch(node: dict, ready: str | None, now: float) -> tuple[str, list, list] | None:
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


def lease_renew_time(lease: dict) -> float | None:
    """A node Lease's ``spec.renewTime`` as emulated seconds; None when absent or unreadable
    (such a lease is no heartbeat)."""
    return renew_seconds((lease.get("spec") or {}).get("renewTime"))


def renew_seconds(stamp: Any) -> float | None:
    """A renewTime as emulated seconds (None when it is not a readable time)."""
    return parse_timestamp(stamp) if isinstance(stamp, str) else None


# ---- the controller --------------------------------------------------------------------


def health_view(node: dict, shared: Shared | None = None) -> dict:
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


def _keep(table: SharedValues, value: Any, frozen: Callable[[Any], tuple]) -> Any:
    """``value`` or an equal one kept before; its own when it cannot be frozen and hashed
    (a nested value, a list of something else than dicts)."""
    try:
        return table.keep(frozen(value), value)
    except (AttributeError, TypeError):
        return value


class _Health:
    """What the controller knows about one node (upstream's nodeHealthData)."""

    __slots__ = ("node", "probe", "heartbeat", "has_ready", "sent_rv", "retry_at", "retry_timer")

    def __init__(self, node: dict, now: float, shared: Shared | None = None):
        self.node = health_view(node, shared)
        self.probe = now
        ready = condition(node, "Ready")
        self.has_ready = ready is not None
        self.heartbeat = ready.get("lastHeartbeatTime") if ready else None
        self.sent_rv = None  # the node version the last writes were based on
        self.retry_at = 0.0
        self.retry_timer: Handle | None = None  # TimerQueue handle: at most one per node

    def grace(self) -> float:
        return NODE_MONITOR_GRACE_PERIOD if self.has_ready else NODE_STARTUP_GRACE_PERIOD

    def deadline(self) -> float:
        return self.probe + self.grace()

    def observe(self, node: dict, now: float, shared: Shared | None = None) -> None:
        """A new copy of the node: a changed Ready heartbeat (or a Ready condition that
        appeared or vanished) counts as the kubelet being heard from."""
        ready = condition(node, "Ready")
        heartbeat = ready.get("lastHeartbeatTime") if ready else None
        if (ready is not None) != self.has_ready or heartbeat != self.heartbeat:
            self.probe = now
        self.node, self.has_ready, self.heartbeat = health_view(node, shared), ready is not None, heartbeat
        if (node.get("metadata") or {}).get("resourceVersion") != self.sent_rv:
            self.retry_at = 0.0  # the node moved on: judge the new version, no retry needed


class NodeLifecycleController:
    """Node health and eviction taints; see the module docstring for the state tables."""

    kinds = ("Node", "Lease")

    def __init__(self) -> None:
        self._health: dict[str, _Health] = {}
        self._renewed: dict[str, float] = {}  # node -> latest lease renewTime seen
        self._dirty: set[str] = set()
        # Grace deadlines in the order they fall due, one insertion-ordered dict per grace
        # (node -> deadline): a deadline is the probe time plus the grace, and a probe is
        # always the latest time seen, so a heartbeat moves its node to the end, which
        # 10,000 heartbeats a second do far cheaper than a heap's cancel and push.
        self._deadlines: dict[float, dict[str, float]] = {
            NODE_MONITOR_GRACE_PERIOD: {},
            NODE_STARTUP_GRACE_PERIOD: {},
        }
        self._timers = TimerQueue()  # retries; tokens: (when, node), skipped when no longer the node's
        self._shared = Shared()

    # -- events ----------------------------------------------------------------------
    def on_event(self, kind: str, event_type: str, obj: dict, now: float) -> None:
        if kind == "Lease":
            self._on_lease(event_type, obj, now)
        elif kind == "Node":
            self._on_node(event_type, obj, now)

    def _on_node(self, event_type: str, node: dict, now: float) -> None:
        name = name_of(node)
        if event_type == "DELETED":
            gone = self._health.pop(name, None)
            if gone is not None:
                for deadlines in self._deadlines.values():
                    deadlines.pop(name, None)
                self._timers.cancel(gone.retry_timer)
            self._dirty.discard(name)
            return
        health = self._health.get(name)
        if health is None:
            health = self._health[name] = _Health(node, now, self._shared)
        else:
            health.observe(node, now, self._shared)
        self._dirty.add(name)
        self._arm(name, health, now)

    def _on_lease(self, event_type: str, lease: dict, now: float) -> None:
        if event_type == "DELETED" or (lease.get("metadata") or {}).get("namespace") != NODE_LEASE_NAMESPACE:
            return
        self._heartbeat(name_of(lease), lease_renew_time(lease), now)

    def on_lease_head(self, event_type: str, head: LeaseHead, now: float) -> bool:
        """A Lease event read by its head (``cluster/api/leasehead.py``): all it needs."""
        if event_type != "DELETED" and head.namespace == NODE_LEASE_NAMESPACE:
            self._heartbeat(head.name, renew_seconds(head.renew_time), now)
        return True

    def _heartbeat(self, name: str, renew: float | None, now: float) -> None:
        """A node's Lease renewal seen: a heartbeat when its renewTime is later than the
        last one seen."""
        if renew is None or renew <= self._renewed.get(name, float("-inf")):
            return
        self._renewed[name] = renew
        health = self._health.get(name)
        if health is not None:
            health.probe = now
            self._arm(name, health, now)

    # -- sync ------------------------------------------------------------------------
    def sync(self, now: float) -> Writes:
        due = self._dirty
        self._dirty = set()
        for deadlines in self._deadlines.values():
            while deadlines:
                name, deadline = next(iter(deadlines.items()))
                if deadline > now:
                    break
                del deadlines[name]
                due.add(name)
        for when, name in self._timers.pop_due(now):
            if self._live(when, name):
                due.add(name)
        out = Writes()
        for name in sorted(due):
            health = self._health.get(name)
            if health is not None:
                self._sync_node(name, health, now, out)
        return out

    def _sync_node(self, name: str, health: _Health, now: float, out: Writes) -> None:
        node = health.node
        rv = (node.get("metadata") or {}).get("resourceVersion")
        if health.sent_rv == rv and now < health.retry_at:
            return  # our last writes for this version are still on their way back
        before = ready_status(node)
        ready = before
        conditions = unknown_conditions(node, now) if now >= health.deadline() else []
        if conditions:
            ready = "Unknown"
            out.node_conditions.append((name, conditions))
            if before == "True":
                out.events.append(
                    make_event(
                        node, NODE_NOT_READY, f"Node {name} status is now: {NODE_NOT_READY}", now, component=COMPONENT
                    )
                )
        patch = no_execute_patch(node, ready, now)
        if patch is not None:
            out.node_taints.append(patch)
        if conditions or patch is not None:
            health.sent_rv, health.retry_at = rv, now + MONITOR_PERIOD
            self._timers.cancel(health.retry_timer)
            health.retry_timer = self._timers.schedule(health.retry_at, (health.retry_at, name))

    # -- timers and reads ------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        firsts = [next(iter(d.values())) for d in self._deadlines.values() if d]
        retry = self._timers.next_time()
        return min(firsts + ([retry] if retry is not None else []), default=None)

    def _arm(self, name: str, health: _Health, now: float) -> None:
        """Keep the node's grace deadline in its queue; a retry no longer needed goes too.
        A changed deadline is always the latest (the probe was just set to now, the grace
        changes only with it), so it goes to the end; one already past is not queued: the
        node is dirty and judged at the next sync anyway."""
        grace, deadline = health.grace(), health.deadline()
        for g, deadlines in self._deadlines.items():
            if g != grace:
                deadlines.pop(name, None)
        deadlines = self._deadlines[grace]
        if deadlines.get(name) != deadline:
            deadlines.pop(name, None)
            if deadline > now:
                deadlines[name] = deadline
        if health.retry_at == 0.0:
            self._timers.cancel(health.retry_timer)
            health.retry_timer = None

    def _live(self, when: float, name: str) -> bool:
        health = self._health.get(name)
        return health is not None and when == health.retry_at

    def probe_time(self, name: str) -> float | None:
        """When the controller last heard from the node (None: not watching it)."""
        health = self._health.get(name)
        return None if health is None else health.probe
