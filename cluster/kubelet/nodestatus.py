"""The node side of one kubelet: the Node object, its Lease heartbeats and its status.

Owns registration and the kubelet's startup Events, the 10 s Lease renewal, posting the
node status (on a change, and at least every 5 minutes: upstream's
nodeStatusReportFrequency, which is what moves the conditions' ``lastHeartbeatTime`` while
nothing changes; the heartbeat in between is the Lease), and the chaos actions
that act on the node rather than on a pod: device health, a device plugin going away, a
network partition of the heartbeats, and the node dying (``stop``). ``NodeStatusMixin`` is
a part of ``Kubelet`` (it uses the kubelet's config, allocation, timers and outbox);
``NodeHost`` calls ``register``, ``stop`` and the chaos methods, ``Kubelet.on_timer``
routes the ``LEASE``, ``DEVICES`` and ``HEAL`` timers here, and ``PressureMixin`` calls
``post_node_status`` when the pressure conditions change.

The conditions keep their lastTransitionTime from registration (or from the pressure
change that set them); a restarted kubelet does not read its old Node, so its transitions
date from the restart. The Events a kubelet records about its node: ``startup_events`` at
registration, NodeNotSchedulable/NodeSchedulable when the stored Node's cordon changes
(``Kubelet.on_node``), and the pressure transitions (``pressure.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .node import node_conditions, node_object, node_status

if TYPE_CHECKING:
    from ..runtime.timers import Handle
    from .kubeletself import KubeletSelf

    class _NodeSelf(KubeletSelf, Protocol):
        """``KubeletSelf`` plus the node-side state and method only this part touches."""

        index: int
        _lease: Handle | None
        _lease_due: float
        _partition: bool
        _device_timer: Handle | None
        _heal_timer: Handle | None
        _since: float
        _status_at: float
        _cordoned: bool

        def _renew(self, due: float, now: float) -> None: ...


LEASE_SECONDS = 10.0
# With Leases, upstream's kubelet posts an unchanged status this often (nodeStatusReportFrequency).
STATUS_REPORT_SECONDS = 300.0
# The startup Events (``startup_events``) are recorded by the kubelets of the nodes with an
# index below this: at bench scale, five Events a node would be half a million Events.
STARTUP_EVENT_NODES = 1000
# What upstream's kubelet records about its node when it starts and first posts its status:
# (reason, message); "{}" is the node's name. Ready is not among them: a condition a first
# status adds records nothing, and an emulated node is Ready in its first status.
STARTUP = (("Starting", "Starting kubelet."),)
FIRST_STATUS = tuple(
    (reason, "Node {} status is now: " + reason)
    for reason in ("NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID")
)
ALLOCATABLE = (("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"),)

LEASE, DEVICES, HEAL = "lease", "devices", "heal"


class NodeStatusMixin:
    """The node-level part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    # The kubelet's slots this part assigns, declared for the type checker (as in ``pressure.py``).
    _stopped: bool
    _lease: Handle | None
    _lease_due: float
    _partition: bool
    _device_timer: Handle | None
    _heal_timer: Handle | None
    _since: float
    _status_at: float
    _cordoned: bool

    def register(self: _NodeSelf, now: float, restarted: bool = False, first_start: bool | None = None) -> None:
        """Create the Node, renew the lease, and keep renewing it every 10 s. ``restarted``:
        the Node already exists (the create gets a 409) and may be Unknown and tainted, so
        the full status follows, which lets the node lifecycle controller lift both.
        ``first_start`` (default: not ``restarted``) chooses the startup Events."""
        if self._stopped:
            return
        self._since = self._status_at = now
        self._outbox.node_creates.append(
            node_object(self.config, self.index, now, self.allocatable, self.alloc.capacity())
        )
        if self.index < STARTUP_EVENT_NODES:
            first = not restarted if first_start is None else first_start
            for reason, message in startup_events(not first):
                self._node_event(reason, message.format(self.name), now)
        if restarted:
            self.post_node_status(now)
        self._timers.cancel(self._lease)  # registering twice must not double the heartbeat
        self._renew(now, now)

    def post_node_status(self: _NodeSelf, now: float) -> None:
        if not self._stopped and not self._partition:
            self._status_at = now
            self._outbox.node_status[self.name] = node_status(
                self.config,
                self.index,
                now,
                self.allocatable,
                self.alloc.capacity(),
                node_conditions(now, self._pressure, self._since),
            )

    def _schedulable_seen(self: _NodeSelf, cordoned: bool, now: float) -> None:
        """The stored Node's ``spec.unschedulable``: a change is a cordon or an uncordon,
        which upstream's kubelet records about its node."""
        if cordoned != self._cordoned:
            self._cordoned = cordoned
            reason = "NodeNotSchedulable" if cordoned else "NodeSchedulable"
            self._node_event(reason, f"Node {self.name} status is now: {reason}", now)

    def set_device_health(self: _NodeSelf, resource: str, device: str | int, healthy: bool, now: float) -> str:
        """Chaos: a device plugin reports a device's new health; the node status follows.
        Returns the device ID; raises ValueError (one line) for an unknown resource or device."""
        device_id = self.alloc.set_device_health(resource, device, healthy)
        if self.alloc.take_update():
            self.post_node_status(now)
        return device_id

    def set_device_plugin(self: _NodeSelf, resource: str, running: bool, now: float) -> None:
        """Chaos: the device plugin for ``resource`` goes away or comes back. Gone, its
        devices count as Unhealthy (allocatable 0) and after the 5-minute grace the
        resource is retired (capacity 0); back, it registers again with its devices.
        Raises ValueError (one line) for a resource without a plugin."""
        if self._stopped:
            return
        self.alloc.set_device_plugin(resource, running, now)
        self._timers.cancel(self._device_timer)
        at = self.alloc.next_expiry()
        self._device_timer = None if at is None else self._timers.schedule(at, (self.name, DEVICES, "", 0))
        if self.alloc.take_update():
            self.post_node_status(now)

    def _expire_devices(self: _NodeSelf, now: float) -> None:
        self._device_timer = None
        self.alloc.expire(now)
        at = self.alloc.next_expiry()
        if at is not None:
            self._device_timer = self._timers.schedule(at, (self.name, DEVICES, "", 0))
        if self.alloc.take_update():
            self.post_node_status(now)

    def _renew(self: _NodeSelf, due: float, now: float) -> None:
        if not self._partition:
            self._outbox.leases[self.name] = now
            if now - self._status_at >= STATUS_REPORT_SECONDS:
                self.post_node_status(now)  # nothing changed for 5 minutes: report anyway
        # Keep the 10 s cadence anchored to the schedule, unless the host fell a full period behind.
        nxt = due + LEASE_SECONDS if due + LEASE_SECONDS > now else now + LEASE_SECONDS
        self._lease_due = nxt
        self._lease = self._timers.schedule(nxt, (self.name, LEASE, "", 0), background=True)

    def partition(self: _NodeSelf, now: float, duration: float | None) -> None:
        """Chaos: heartbeats (Lease renewals, node status) stop reaching the apiserver while
        the pods keep running; after ``duration`` (if given) they resume. A later partition
        of the same node replaces the end time."""
        if self._stopped:
            return
        self._partition = True
        self._timers.cancel(self._heal_timer)
        self._heal_timer = None if duration is None else self._timers.schedule(now + duration, (self.name, HEAL, "", 0))

    def _heal(self: _NodeSelf, now: float) -> None:
        # Back in touch: renew at once and post the full status, so the node lifecycle
        # controller sees Ready=True again (the kubelet's own conditions win over Unknown).
        self._partition, self._heal_timer = False, None
        self._outbox.leases[self.name] = now
        self.post_node_status(now)

    @property
    def partitioned(self: _NodeSelf) -> bool:
        return self._partition

    def stop(self: _NodeSelf) -> None:
        """The node died: cancel every timer; from now on it produces nothing."""
        self._stopped = True
        timers = (
            self._lease,
            self._evict_timer,
            self._extra_timer,
            self._device_timer,
            self._heal_timer,
            self._lift_timer,
        )
        for handle in timers:
            self._timers.cancel(handle)
        for rec in self._pods.values():
            self._cancel_timers(rec)

    @property
    def stopped(self: _NodeSelf) -> bool:
        return self._stopped


def startup_events(restarted: bool) -> tuple[tuple[str, str], ...]:
    """The (reason, message) of the Events a kubelet records about its node when it starts,
    in upstream's order; a restarted one finds its conditions already posted, so its first
    status records no NodeHas... Events."""
    return STARTUP + ALLOCATABLE if restarted else STARTUP + FIRST_STATUS + ALLOCATABLE
