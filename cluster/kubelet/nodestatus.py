"""The node side of one kubelet: the Node object, its Lease heartbeats and its status.

Owns registration, the 10 s Lease renewal, posting the node status, and the chaos actions
that act on the node rather than on a pod: device health, a device plugin going away, a
network partition of the heartbeats, and the node dying (``stop``). ``NodeStatusMixin`` is
a part of ``Kubelet`` (it uses the kubelet's config, allocation, timers and outbox);
``NodeHost`` calls ``register``, ``stop`` and the chaos methods, ``Kubelet.on_timer``
routes the ``LEASE``, ``DEVICES`` and ``HEAL`` timers here, and ``PressureMixin`` calls
``post_node_status`` when the pressure conditions change.
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

        def _renew(self, due: float, now: float) -> None: ...


LEASE_SECONDS = 10.0

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

    def register(self: _NodeSelf, now: float, restarted: bool = False) -> None:
        """Create the Node, renew the lease, and keep renewing it every 10 s. ``restarted``:
        the Node already exists (the create gets a 409) and may be Unknown and tainted, so
        the full status follows, which lets the node lifecycle controller lift both."""
        if self._stopped:
            return
        self._outbox.node_creates.append(
            node_object(self.config, self.index, now, self.allocatable, self.alloc.capacity())
        )
        if restarted:
            self.post_node_status(now)
        self._timers.cancel(self._lease)  # registering twice must not double the heartbeat
        self._renew(now, now)

    def post_node_status(self: _NodeSelf, now: float) -> None:
        if not self._stopped and not self._partition:
            self._outbox.node_status[self.name] = node_status(
                self.config,
                self.index,
                now,
                self.allocatable,
                self.alloc.capacity(),
                node_conditions(now, self._pressure),
            )

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
