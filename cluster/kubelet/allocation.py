"""What a node's admitted pods hold: exclusive CPUs, devices, cgroups.

Owns, for one node, the CPU manager (``cpumanager.py``), the device manager with one
emulated device plugin per extended resource of the node's capacity (``devices.py``,
``deviceplugin.py``), the capacity and allocatable those imply, the node's QoS-level
cgroups, and the view of all of it that upstream's kubelet serves on its PodResources
API (kubemu's report reads it). ``Kubelet`` builds one ``NodeAllocation`` per node, calls
``admit`` for a new pod (after the eviction manager's admit handler), ``release`` when the
pod's containers are gone, ``set_device_health`` / ``set_device_plugin`` / ``expire`` /
``take_update`` for the ``deviceHealth`` and ``devicePlugin`` chaos actions and the node
status that follows.

The plugins register before the Node object is first written, so the Node's first status
already advertises the devices (upstream's first status shows 0 until the plugins
connect a moment later; nothing in kubemu can observe that moment).
"""

from __future__ import annotations

from ..api.qos import BURSTABLE
from ..api.quantity import format_resource, resource_int
from ..api.resources import CPU, MEMORY, is_extended
from . import admission
from .cgroups import qos_cgroups, with_parent
from .cpumanager import NONE, STATIC, CpuManager, format_cpuset, parse_cpuset
from .deviceplugin import UNHEALTHY, PluginError, natural_key, plugins_for_capacity
from .devices import REGISTERED, DeviceManager
from .node import NodeConfig
from .pods import PodRecord


class NodeAllocation:
    __slots__ = ("config", "cpus", "devices", "_plugins", "_capacity", "_allocatable", "_burstable_cpu")

    def __init__(self, config: NodeConfig):
        """Raises ValueError (one line naming the setting) for a kubelet configuration the
        CPU manager or the device plugins refuse; the scenario loader checks it first.

        A node without the static CPU policy has no CPU manager state and a node without
        extended resources no device manager: thousands of plain nodes stay small."""
        self.config = config
        policy = (config.kubelet or {}).get("cpuManagerPolicy", NONE)
        self.cpus = CpuManager.from_node_config(config) if policy != NONE else None  # raises for a bad policy
        capacity = config.capacity_ints()
        plugins = plugins_for_capacity(config.name, capacity, (config.kubelet or {}).get("devicePlugins"))
        self.devices = DeviceManager(config.name) if plugins else None
        self._plugins = {p.resource: p for p in plugins}  # they outlive their registration
        if self.devices is not None:  # there are plugins
            for plugin in plugins:
                self.devices.register(plugin)
        self._capacity = capacity if plugins else None  # None: the configured capacity
        self._allocatable = config.allocatable()
        self._burstable_cpu = 0  # summed cpu requests of the Burstable pods holding resources
        if self.devices is not None:
            self._apply(self.devices.take_update())

    # ---- capacity ---------------------------------------------------------------------

    def _apply(self, update: tuple[dict[str, int], dict[str, int]] | None) -> bool:
        if update is None:
            return False
        capacity, allocatable = update
        assert self._capacity is not None  # updates come from the device manager: the node has plugins
        # Extended resources are the device manager's to advertise; the rest is configured.
        for values, devices in ((self._capacity, capacity), (self._allocatable, allocatable)):
            for name in [n for n in values if is_extended(n)]:
                del values[name]
            values.update(devices)
        return True

    def capacity(self) -> dict[str, int]:
        return self.config.capacity_ints() if self._capacity is None else self._capacity

    def allocatable(self) -> dict[str, int]:
        return self._allocatable

    def take_update(self) -> bool:
        """Deliver pending ListAndWatch messages; True when capacity or allocatable changed."""
        if self.devices is None:
            return False
        self.devices.poll()
        return self._apply(self.devices.take_update())

    def set_device_health(self, resource: str, device: str | int, healthy: bool) -> str:
        """The ``deviceHealth`` chaos action on this node's plugin for ``resource``.

        ``device`` is a device ID or its index; returns the ID. Raises ValueError with a
        one-line message for an unknown resource or device."""
        plugin = self._plugin(resource)
        ids = plugin.device_ids
        if isinstance(device, int) and not isinstance(device, bool):
            if not 0 <= device < len(ids):
                raise ValueError(
                    f"device: index {device} is out of range for {resource} on {self.config.name} (0..{len(ids) - 1})"
                )
            device = ids[device]
        try:
            plugin.set_health(str(device), healthy)
        except PluginError as e:
            raise ValueError(str(e).split("; retrying")[0]) from None
        return str(device)

    def set_device_plugin(self, resource: str, running: bool, now: float) -> None:
        """The ``devicePlugin`` chaos action: the plugin for ``resource`` goes away (its
        devices turn Unhealthy, and ``expire`` retires the resource once the grace has
        passed) or comes back and registers again. Raises ValueError (one line) for a
        resource without a plugin; repeating the current state changes nothing."""
        plugin = self._plugin(resource)
        assert self.devices is not None  # there is a plugin, so a device manager
        if not running:
            self.devices.plugin_stopped(resource, now)
        elif self.devices.state(resource) != REGISTERED:
            self.devices.register(plugin)

    def next_expiry(self) -> float | None:
        """When a stopped plugin's grace period ends, if one is running out."""
        return self.devices.next_expiry() if self.devices is not None else None

    def expire(self, now: float) -> bool:
        """Retire the resources of plugins gone for their whole grace; True when any was."""
        return bool(self.devices is not None and self.devices.expire(now))

    def _plugin(self, resource: str):
        plugin = self._plugins.get(resource)
        if plugin is None:
            known = ", ".join(sorted(self._plugins)) or "none"
            raise ValueError(f"resource: {resource!r} has no device plugin on {self.config.name} (it has: {known})")
        return plugin

    # ---- admission and release --------------------------------------------------------

    def admit(
        self, pod: dict, rec: PodRecord, requests: dict[str, int], view: admission.NodeView
    ) -> admission.Rejection | None:
        """Upstream's resource-allocation and predicate handlers, in order."""
        rejection = admission.admit(pod, requests, view, cpus=self.cpus, devices=self.devices)
        if rejection is None and rec.qos == BURSTABLE:
            self._burstable_cpu += requests.get(CPU, 0)
        return rejection

    def release(self, rec: PodRecord) -> None:
        """The pod's containers are gone: CPUs and devices go back to the node."""
        if self.cpus is not None:
            self.cpus.release(rec.uid)
        if self.devices is not None:
            self.devices.release(rec.uid)
        if rec.qos == BURSTABLE and rec.requests:
            self._burstable_cpu -= rec.requests.get(CPU, 0)

    # ---- the PodResources view ----------------------------------------------------------

    def pod_view(self, rec: PodRecord) -> dict:
        """What the report shows for a pod holding resources on this node."""
        cgroup = None if rec.cgroup is None else with_parent(rec.cgroup, rec.qos, rec.uid)
        view = {"cgroup": cgroup, "cpuset": None, "exclusiveCpus": "", "devices": {}, "env": {}}
        if self.cpus is not None:
            exclusive = self.cpus.assignments().get(rec.uid) or {}
            cpus = frozenset().union(*(parse_cpuset(c) for c in exclusive.values()))
            view["cpuset"], view["exclusiveCpus"] = self.cpus.cpuset_of(rec.uid), format_cpuset(cpus)
        if self.devices is not None:
            view["devices"] = self.devices.pod_devices(rec.uid)
            view["env"] = {c: dict(r.envs) for c, r in self.devices.responses(rec.uid).items() if r.envs}
        return view

    def node_view(self) -> dict:
        """The node's QoS cgroups, shared CPU pool and device health."""
        cfg = self.config
        cap, reserved = cfg.capacity_ints(), cfg.reserved or {}
        cpu = cap.get(CPU, 0) - (resource_int(CPU, reserved[CPU]) if CPU in reserved else 0)
        mem = cap.get(MEMORY)
        if mem is not None and MEMORY in reserved:
            mem -= resource_int(MEMORY, reserved[MEMORY])
        devices = {}
        for res in sorted(n for n in self._capacity or () if is_extended(n)):
            assert self.devices is not None and self._capacity is not None  # the plugins' resources
            bad = [d.id for d in self.devices.devices(res) if d.health == UNHEALTHY]
            devices[res] = {
                "capacity": format_resource(res, self._capacity[res]),
                "allocatable": format_resource(res, self._allocatable.get(res, 0)),
                "unhealthy": sorted(bad, key=natural_key),
            }
        return {
            "cgroups": qos_cgroups(max(0, cpu), None if mem is None else max(0, mem), self._burstable_cpu),
            "cpuManagerPolicy": STATIC if self.cpus is not None else "none",
            "sharedCpus": self.cpus.shared_pool() if self.cpus is not None else None,
            "devices": devices,
        }
