"""The device plugin side of the device plugin API v1beta1, emulated.

Owns the API's constants, the message values (frozen dataclasses standing in for the
protobuf messages) and ``EmulatedPlugin``: one device plugin serving one extended resource
of one node. The gRPC services become plain method calls on the plugin; the ListAndWatch
stream becomes a snapshot with a revision counter that moves whenever the device list
would have been re-sent.

Who calls it: the ``Kubelet`` builds one plugin per extended resource of its node's
capacity (``plugins_for_capacity``) and registers each with its ``DeviceManager``
(``devices.py``), which then calls ``list_and_watch``, ``get_preferred_allocation``,
``allocate`` and ``pre_start_container`` the way the kubelet's endpoint client does. A
``deviceHealth`` chaos action calls ``set_health``.

Emulation choices (upstream plugins are hardware-specific; these are kubemu's):

* Device IDs are ``<node>-<name>-<i>``: the node name, the part of the resource name after
  the ``/``, and the index 0..N-1 (``node-3-gpu-0`` for ``nvidia.com/gpu`` on ``node-3``).
  They are unique across the cluster, so a report can check exclusivity by ID alone. The
  proto asks for IDs of at most 63 characters; a very long node name exceeds that and
  nothing in kubemu depends on the limit.
* With ``numa_nodes=k`` the devices are spread over NUMA nodes in contiguous blocks (device
  ``i`` on node ``i * k // N``); with 0 they report no topology.
* ``get_preferred_allocation`` packs a container onto as few NUMA nodes as possible (see
  ``_preference``); without topology it prefers the lowest indices.
* Allocate, for ``nvidia.com/gpu``: env ``NVIDIA_VISIBLE_DEVICES`` = the comma-joined IDs,
  device specs ``/dev/nvidia<i>`` (``rw``), and a read-only mount of the driver directory
  ``/usr/local/nvidia`` (the two things NVIDIA's plugin gives a GPU container). For any other
  resource: env ``<RESOURCE>_VISIBLE_DEVICES`` (the resource name upper-cased, every
  character other than a letter or digit turned into ``_``: ``EXAMPLE_COM_FPGA_VISIBLE_DEVICES``),
  device specs ``/dev/<name><i>``, no mounts. Both add the annotation ``<resource>: <IDs>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..api.resources import is_extended
from ..api.selectors import is_qualified_name

HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
VERSION = "v1beta1"
SUPPORTED_VERSIONS = (VERSION,)
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins/"
KUBELET_SOCKET = DEVICE_PLUGIN_PATH + "kubelet.sock"
PRE_START_TIMEOUT_SECONDS = 30

NVIDIA_GPU = "nvidia.com/gpu"
NVIDIA_ENV = "NVIDIA_VISIBLE_DEVICES"
NVIDIA_DRIVER_DIR = "/usr/local/nvidia"
DEVICE_PERMISSIONS = "rw"


class PluginError(ValueError):
    """A request the plugin refuses. ``retryable`` says whether asking again can succeed."""

    def __init__(self, message: str, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


# ---- messages -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Device:
    id: str
    health: str = HEALTHY
    numa_nodes: tuple[int, ...] = ()  # TopologyInfo.nodes; empty = no topology reported


@dataclass(frozen=True, slots=True)
class DevicePluginOptions:
    pre_start_required: bool = False
    get_preferred_allocation_available: bool = False


@dataclass(frozen=True, slots=True)
class RegisterRequest:
    version: str
    endpoint: str  # socket file name relative to DEVICE_PLUGIN_PATH
    resource_name: str
    options: DevicePluginOptions


@dataclass(frozen=True, slots=True)
class ListAndWatchResponse:
    devices: tuple[Device, ...]
    revision: int  # kubemu's: moves whenever the plugin would have sent a new message


@dataclass(frozen=True, slots=True)
class Mount:
    container_path: str
    host_path: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    container_path: str
    host_path: str
    permissions: str = DEVICE_PERMISSIONS  # cgroup device permissions: any of r, w, m


@dataclass(frozen=True, slots=True)
class ContainerAllocateResponse:
    envs: dict[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    devices: tuple[DeviceSpec, ...] = ()
    annotations: dict[str, str] = field(default_factory=dict)
    cdi_devices: tuple[str, ...] = ()  # fully qualified CDI device names

    def to_dict(self) -> dict:
        """The proto's field names, as a checkpoint stores them."""
        return {
            "envs": dict(self.envs),
            "mounts": [
                {"container_path": m.container_path, "host_path": m.host_path, "read_only": m.read_only}
                for m in self.mounts
            ],
            "devices": [
                {"container_path": d.container_path, "host_path": d.host_path, "permissions": d.permissions}
                for d in self.devices
            ],
            "annotations": dict(self.annotations),
            "cdi_devices": [{"name": n} for n in self.cdi_devices],
        }

    @classmethod
    def from_dict(cls, d: dict) -> ContainerAllocateResponse:
        return cls(
            envs=dict(d.get("envs") or {}),
            mounts=tuple(
                Mount(m["container_path"], m["host_path"], bool(m.get("read_only"))) for m in d.get("mounts") or ()
            ),
            devices=tuple(
                DeviceSpec(s["container_path"], s["host_path"], s.get("permissions", ""))
                for s in d.get("devices") or ()
            ),
            annotations=dict(d.get("annotations") or {}),
            cdi_devices=tuple(c["name"] for c in d.get("cdi_devices") or ()),
        )


def merge_responses(responses) -> ContainerAllocateResponse:
    """One container's runtime options from its per-resource responses, in the order given."""
    envs: dict[str, str] = {}
    annotations: dict[str, str] = {}
    mounts: list[Mount] = []
    devices: list[DeviceSpec] = []
    cdi: list[str] = []
    for r in responses:
        envs.update(r.envs)
        annotations.update(r.annotations)
        mounts.extend(r.mounts)
        devices.extend(r.devices)
        cdi.extend(r.cdi_devices)
    return ContainerAllocateResponse(envs, tuple(mounts), tuple(devices), annotations, tuple(cdi))


def env_name(resource: str) -> str:
    """The env var an emulated plugin sets to the allocated IDs (see the module docstring)."""
    if resource == NVIDIA_GPU:
        return NVIDIA_ENV
    return re.sub(r"[^A-Za-z0-9]", "_", resource).upper() + "_VISIBLE_DEVICES"


def natural_key(device_id: str) -> tuple:
    """Digit runs compare as numbers, so ``gpu-2`` sorts before ``gpu-10``."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", device_id))


def is_extended_resource_name(name: str) -> bool:
    """Upstream IsExtendedResourceName, which registration requires: a name with a DNS
    domain prefix outside kubernetes.io that stays a qualified name behind ``requests.``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


# ---- the plugin ---------------------------------------------------------------------


class EmulatedPlugin:
    """One device plugin: ``count`` devices of ``resource`` on ``node``, all Healthy at first."""

    __slots__ = ("node", "resource", "version", "options", "revision", "log", "_ids", "_index", "_health", "_numa")

    def __init__(
        self,
        node: str,
        resource: str,
        count: int,
        *,
        numa_nodes: int = 0,
        preferred: bool = False,
        pre_start_required: bool = False,
        version: str = VERSION,
        record: bool = False,
    ):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise PluginError(
                f"count: {count!r} must be a whole number of devices >= 0 "
                f"(plugin for {resource} on {node}); retrying does not help"
            )
        if isinstance(numa_nodes, bool) or not isinstance(numa_nodes, int) or numa_nodes < 0:
            raise PluginError(
                f"numa_nodes: {numa_nodes!r} must be an integer >= 0 "
                f"(plugin for {resource} on {node}); retrying does not help"
            )
        self.node = node
        self.resource = resource
        self.version = version
        self.options = DevicePluginOptions(pre_start_required, preferred)
        self.revision = 0
        # Requests received, for tests and debugging; None keeps memory flat at scale.
        self.log: list[tuple] | None = [] if record else None
        kind = resource.rpartition("/")[2]
        self._ids = tuple(f"{node}-{kind}-{i}" for i in range(count))
        self._index = {d: i for i, d in enumerate(self._ids)}
        self._health = [HEALTHY] * count
        self._numa = tuple((i * numa_nodes // count,) for i in range(count)) if numa_nodes else ()

    # ---- Registration (the plugin is the client) -----------------------------------

    def register(self) -> RegisterRequest:
        endpoint = self.resource.replace("/", "_") + ".sock"
        return RegisterRequest(self.version, endpoint, self.resource, self.options)

    # ---- DevicePlugin service ---------------------------------------------------------

    def get_device_plugin_options(self) -> DevicePluginOptions:
        return self.options

    @property
    def device_ids(self) -> tuple[str, ...]:
        return self._ids

    def list_and_watch(self) -> ListAndWatchResponse:
        """The latest message of the stream: every device with its health and topology."""
        devices = tuple(
            Device(d, self._health[i], self._numa[i] if self._numa else ()) for i, d in enumerate(self._ids)
        )
        return ListAndWatchResponse(devices, self.revision)

    def set_health(self, device_id: str, healthy: bool) -> bool:
        """Flip one device's health; True when it changed (and the stream sends a message)."""
        i = self._known(device_id, "device_id")
        health = HEALTHY if healthy else UNHEALTHY
        if self._health[i] == health:
            return False
        self._health[i] = health
        self.revision += 1
        return True

    def get_preferred_allocation(self, available, must_include, size: int) -> list[str]:
        """The IDs this plugin would like a container to get, ``must_include`` first."""
        if not self.options.get_preferred_allocation_available:
            raise PluginError(
                f"GetPreferredAllocation: the plugin for {self.resource} on {self.node} "
                "does not offer it; retrying does not help"
            )
        self._record(
            "GetPreferredAllocation", sorted(available, key=self._order), sorted(must_include, key=self._order), size
        )
        for d in (*available, *must_include):
            self._known(d, "available_deviceIDs")
        return self._preference(set(available), set(must_include), size)

    def allocate(self, container_requests) -> list[ContainerAllocateResponse]:
        """One response per container request (a list of device IDs each)."""
        out = []
        for ids in container_requests:
            for d in ids:
                self._known(d, "devices_ids")
            ordered = sorted(ids, key=self._order)
            self._record("Allocate", ordered)
            out.append(self._response(ordered))
        return out

    def pre_start_container(self, device_ids) -> None:
        for d in device_ids:
            self._known(d, "devices_ids")
        self._record("PreStartContainer", sorted(device_ids, key=self._order))

    # ---- helpers ----------------------------------------------------------------------

    def _known(self, device_id: str, fieldname: str) -> int:
        i = self._index.get(device_id)
        if i is None:
            span = f"{self._ids[0]} .. {self._ids[-1]}" if self._ids else "no devices"
            raise PluginError(
                f'{fieldname}: "{device_id}" is not a device of {self.resource} on '
                f"{self.node} (it has {span}); retrying does not help"
            )
        return i

    def _order(self, device_id: str) -> int:
        return self._index.get(device_id, len(self._ids))

    def _record(self, *entry) -> None:
        if self.log is not None:
            self.log.append(entry)

    def _preference(self, available: set, must: set, size: int) -> list[str]:
        chosen = sorted(must, key=self._order)
        rest = sorted(available - must, key=self._order)
        need = size - len(chosen)
        if need <= 0:
            return chosen
        if not self._numa:
            return chosen + rest[:need]
        groups: dict[int, list[str]] = {}
        for d in rest:
            groups.setdefault(self._numa[self._index[d]][0], []).append(d)
        used = {self._numa[self._index[d]][0] for d in chosen}

        # NUMA nodes already holding must_include devices first; then the smallest node that
        # takes the remainder whole (it keeps larger free blocks for later containers); then
        # the largest nodes, so the container spans as few nodes as possible.
        def rank(node: int) -> tuple:
            n = len(groups[node])
            fits = n >= need
            return (node not in used, not fits, n if fits else -n, node)

        for node in sorted(groups, key=rank):
            chosen.extend(groups[node])
        return chosen[:size]

    def _response(self, ids: list[str]) -> ContainerAllocateResponse:
        joined = ",".join(ids)
        mounts: tuple[Mount, ...]
        if self.resource == NVIDIA_GPU:
            paths = [f"/dev/nvidia{self._index[d]}" for d in ids]
            mounts = (Mount(NVIDIA_DRIVER_DIR, NVIDIA_DRIVER_DIR, True),)
        else:
            kind = self.resource.rpartition("/")[2]
            paths = [f"/dev/{kind}{self._index[d]}" for d in ids]
            mounts = ()
        specs = tuple(DeviceSpec(p, p, DEVICE_PERMISSIONS) for p in paths)
        return ContainerAllocateResponse({env_name(self.resource): joined}, mounts, specs, {self.resource: joined})


# Keys a node pool's per-resource plugin settings may use (camelCase, as in scenario YAML).
_SETTINGS = {"numaNodes": "numa_nodes", "preferredAllocation": "preferred", "preStartRequired": "pre_start_required"}


def plugins_for_capacity(node: str, capacity: dict[str, int], settings: dict | None = None) -> list[EmulatedPlugin]:
    """One plugin per extended resource of a node's capacity, sorted by resource name.

    ``settings`` maps a resource name to ``{numaNodes, preferredAllocation, preStartRequired}``.
    """
    settings = {} if settings is None else settings
    if not isinstance(settings, dict):
        raise PluginError(
            f"devicePlugins: {settings!r} is not a mapping of extended resource to plugin "
            "settings; retrying does not help"
        )
    for res in sorted(settings, key=str):
        if res not in capacity or not is_extended(res):
            raise PluginError(
                f'devicePlugins: "{res}" is not an extended resource in the capacity of {node}; retrying does not help'
            )
        if settings[res] is not None and not isinstance(settings[res], dict):
            raise PluginError(
                f"devicePlugins[{res}]: {settings[res]!r} is not a mapping of settings "
                f"(known: {', '.join(_SETTINGS)}); retrying does not help"
            )
    out = []
    for res in sorted(n for n in capacity if is_extended(n)):
        kwargs = {}
        for key, value in (settings.get(res) or {}).items():
            if key not in _SETTINGS:
                raise PluginError(
                    f"devicePlugins[{res}].{key}: unknown setting (known: "
                    f"{', '.join(_SETTINGS)}); retrying does not help"
                )
            if key == "numaNodes":
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
                wanted = "a whole number >= 0"
            else:
                ok, wanted = isinstance(value, bool), "true or false"
            if not ok:
                raise PluginError(f"devicePlugins[{res}].{key}: {value!r} must be {wanted}; retrying does not help")
            kwargs[_SETTINGS[key]] = value
        out.append(EmulatedPlugin(node, res, capacity[res], **kwargs))
    return out
