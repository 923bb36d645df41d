"""The kubelet's device manager (upstream's pkg/kubelet/cm/devicemanager).

Owns, for one node: the registered device plugins (one endpoint per extended resource),
the healthy and unhealthy device sets each plugin last reported through ListAndWatch, the
capacity and allocatable they imply, which pod container holds which devices with the
plugin's Allocate response for it, and the checkpoint of all that (its file format is in
``devicecheckpoint.py``).

Who calls it: the kubelet's ``NodeAllocation`` creates one ``DeviceManager`` and registers
one ``EmulatedPlugin`` per extended resource of its node's capacity (``deviceplugin.py``).
At admission ``admission.admit`` calls ``allocate(pod)`` (init containers first, then app
containers), turns a returned ``Rejection`` into the pod's failure, and then
``update_plugin_resources`` before the fit check; when a pod's containers are gone
``release(uid)``. After a ``deviceHealth`` chaos action flips a device on the plugin, it
calls ``poll()`` and posts a node status when ``take_update()`` returns new capacity and
allocatable. ``plugin_stopped()``/``expire()`` (a plugin going away) and
``checkpoint()``/``restore()`` (a kubelet restart) follow upstream but no scenario action
reaches them yet. Time is passed in; nothing here reads a clock.

Lifecycle of one resource (``state(resource)``):

| state      | input                                    | next       | capacity / allocatable   |
|------------|------------------------------------------|------------|--------------------------|
| (unknown)  | register(plugin), valid request          | Registered | all devices / healthy    |
| (unknown)  | register(plugin), bad version or name    | (unknown)  | none (RegistrationError) |
| Registered | ListAndWatch message (poll)              | Registered | the message replaces all |
| Registered | register(newer plugin, same resource)    | Registered | the newest plugin's list |
| Registered | plugin_stopped(now)                      | Stopped    | unchanged / 0 (all Unhealthy) |
| Stopped    | register(plugin), within the grace       | Registered | the new plugin's list    |
| Stopped    | expire(now), now >= stopped + 300 s      | Retired    | 0 / 0 until a plugin registers |
| Retired    | register(plugin)                         | Registered | the new plugin's list    |
| (any)      | restore(checkpoint, now)                 | Stopped    | 0 / 0 (RegisteredDevices) |

Devices that turn Unhealthy stay assigned to the pods holding them (upstream never evicts
for that); they are only never handed out again.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..api.objects import uid_of
from ..api.resources import resource_list
from . import devicecheckpoint
from .admission import Rejection
from .deviceplugin import (
    HEALTHY,
    SUPPORTED_VERSIONS,
    ContainerAllocateResponse,
    Device,
    DevicePluginOptions,
    EmulatedPlugin,
    ListAndWatchResponse,
    PluginError,
    is_extended_resource_name,
    merge_responses,
    natural_key,
)

ENDPOINT_STOP_GRACE_SECONDS = 300  # upstream endpointStopGracePeriod, 5 minutes
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"
NO_TOPOLOGY = -1  # the NUMA key upstream's checkpoint uses for devices without topology

REGISTERED, STOPPED, RETIRED = "Registered", "Stopped", "Retired"


class RegistrationError(ValueError):
    """A RegisterRequest the kubelet refuses. Registering again unchanged never helps."""

    retryable = False


class DeviceError(Exception):
    """A device allocation failure; ``str()`` is upstream's exact text (it ends up in the
    pod's status message), ``retryable`` says whether the same request can succeed later."""

    def __init__(self, message: str, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


def _sorted(ids) -> list[str]:
    return sorted(ids, key=natural_key)


@dataclass(slots=True)
class _Endpoint:
    plugin: EmulatedPlugin | None  # None: restored from a checkpoint, nobody to call yet
    options: DevicePluginOptions
    stopped_at: float | None = None
    revision: int = -1  # the ListAndWatch revision last applied


@dataclass(frozen=True, slots=True)
class Grant:
    """The devices of one resource held by one container, and the plugin's answer for them."""

    ids: tuple[str, ...]  # natural order
    by_numa: dict[int, tuple[str, ...]]  # NUMA node (NO_TOPOLOGY when none) -> IDs
    response: ContainerAllocateResponse


class DeviceManager:
    __slots__ = ("node", "_endpoints", "_healthy", "_unhealthy", "_all", "_retired", "_pods", "_allocated", "_reported")

    def __init__(self, node: str = ""):
        self.node = node
        self._endpoints: dict[str, _Endpoint] = {}
        self._healthy: dict[str, set[str]] = {}
        self._unhealthy: dict[str, set[str]] = {}
        self._all: dict[str, dict[str, Device]] = {}
        self._retired: set[str] = set()  # expired resources, advertised at 0
        self._pods: dict[str, dict[str, dict[str, Grant]]] = {}  # uid -> container -> resource
        self._allocated: dict[str, set[str]] = {}  # resource -> IDs held by any pod
        self._reported: tuple[dict, dict] = ({}, {})

    # ---- registration and ListAndWatch ------------------------------------------------

    def register(self, plugin: EmulatedPlugin) -> None:
        """The plugin's Register call, then its first ListAndWatch message."""
        req = plugin.register()
        if req.version not in SUPPORTED_VERSIONS:
            raise RegistrationError(
                f'version: "{req.version}" is not supported by this kubelet (supported: '
                f"{', '.join(SUPPORTED_VERSIONS)}); registering again with it will not help"
            )
        if not is_extended_resource_name(req.resource_name):
            raise RegistrationError(
                f'resource_name: "{req.resource_name}" is not an extended resource name (it needs '
                "a DNS domain prefix outside kubernetes.io, e.g. example.com/dev); registering "
                "again with it will not help"
            )
        # Upstream always accepts the newest plugin for a resource and drops the old endpoint.
        self._endpoints[req.resource_name] = _Endpoint(plugin, req.options)
        self._retired.discard(req.resource_name)
        self._apply(req.resource_name, plugin.list_and_watch())

    def on_list_and_watch(self, resource: str, response: ListAndWatchResponse) -> bool:
        """A stream message; dropped (False) when the resource has no live endpoint."""
        ep = self._endpoints.get(resource)
        if ep is None or ep.stopped_at is not None:
            return False
        self._apply(resource, response)
        return True

    def poll(self) -> list[str]:
        """Deliver every live plugin's pending ListAndWatch message; the resources updated."""
        changed = []
        for res in sorted(self._endpoints):
            ep = self._endpoints[res]
            if ep.plugin is not None and ep.stopped_at is None and ep.plugin.revision != ep.revision:
                self._apply(res, ep.plugin.list_and_watch())
                changed.append(res)
        return changed

    def _apply(self, resource: str, response: ListAndWatchResponse) -> None:
        # Each message replaces the whole device set of the resource.
        healthy: set[str] = set()
        unhealthy: set[str] = set()
        for d in response.devices:
            (healthy if d.health == HEALTHY else unhealthy).add(d.id)
        self._healthy[resource] = healthy
        self._unhealthy[resource] = unhealthy
        self._all[resource] = {d.id: d for d in response.devices}
        self._endpoints[resource].revision = response.revision

    def plugin_stopped(self, resource: str, now: float) -> bool:
        """The plugin's stream or socket is gone: every device Unhealthy, the grace starts.

        False when there is no live endpoint (never registered, or already stopped: the
        first stop time stands, a gone plugin cannot go again).
        """
        ep = self._endpoints.get(resource)
        if ep is None or ep.stopped_at is not None:
            return False
        self._unhealthy[resource] |= self._healthy[resource]
        self._healthy[resource] = set()
        ep.stopped_at = now
        return True

    def expire(self, now: float) -> list[str]:
        """Retire resources whose plugin stayed stopped for the whole grace; their names.

        Upstream checks ``elapsed > 5 min`` only when it next builds a node status, so the
        exact instant is not observable; kubemu retires at exactly stop + 300 s so one
        timer at ``next_expiry()`` is enough.
        """
        # The same sum as next_expiry(), so a timer set for it always finds the resource due.
        gone = [
            res
            for res, ep in self._endpoints.items()
            if ep.stopped_at is not None and now >= ep.stopped_at + ENDPOINT_STOP_GRACE_SECONDS
        ]
        for res in gone:
            del self._endpoints[res], self._healthy[res], self._unhealthy[res]
            self._all.pop(res, None)
            self._retired.add(res)
        return sorted(gone)

    def next_expiry(self) -> float | None:
        stops = [ep.stopped_at for ep in self._endpoints.values() if ep.stopped_at is not None]
        return min(stops) + ENDPOINT_STOP_GRACE_SECONDS if stops else None

    def state(self, resource: str) -> str | None:
        ep = self._endpoints.get(resource)
        if ep is not None:
            return REGISTERED if ep.stopped_at is None else STOPPED
        return RETIRED if resource in self._retired else None

    def plugin(self, resource: str) -> EmulatedPlugin | None:
        ep = self._endpoints.get(resource)
        return ep.plugin if ep is not None else None

    def devices(self, resource: str) -> list[Device]:
        """The devices of the last ListAndWatch message, in natural ID order."""
        known = self._all.get(resource) or {}
        return [known[d] for d in _sorted(known)]

    # ---- node status ------------------------------------------------------------------

    def capacity(self) -> dict[str, int]:
        out = {res: len(self._healthy[res]) + len(self._unhealthy[res]) for res in sorted(self._endpoints)}
        out.update((res, 0) for res in sorted(self._retired))
        return out

    def allocatable(self) -> dict[str, int]:
        out = {res: len(self._healthy[res]) for res in sorted(self._endpoints)}
        out.update((res, 0) for res in sorted(self._retired))
        return out

    @property
    def allocatable_changed(self) -> bool:
        """Capacity or allocatable differ from what ``take_update`` last handed out."""
        return (self.capacity(), self.allocatable()) != self._reported

    def take_update(self) -> tuple[dict[str, int], dict[str, int]] | None:
        """(capacity, allocatable) when they changed since the last call, else None."""
        snap = (self.capacity(), self.allocatable())
        if snap == self._reported:
            return None
        self._reported = snap
        return snap

    def update_plugin_resources(self, uid: str, allocatable: dict[str, int]) -> dict[str, int]:
        """Upstream sanitizeNodeAllocatable, for a pod that already holds devices.

        Allocatable is raised to the number of devices already allocated, so a pod that
        holds devices passes the fit check again while its plugin is down or unhealthy.
        """
        if uid not in self._pods:
            return allocatable
        out = dict(allocatable)
        for res, ids in self._allocated.items():
            out[res] = max(out.get(res, 0), len(ids))
        return out

    # ---- allocation -------------------------------------------------------------------

    def allocate(self, pod: dict) -> Rejection | None:
        """Choose and Allocate devices for every container; None when admitted.

        On a refusal the pod keeps no new devices (upstream frees them when it next
        garbage-collects inactive pods; kubemu at once).
        """
        uid = uid_of(pod)
        before = {c: dict(g) for c, g in (self._pods.get(uid) or {}).items()}
        spec = pod.get("spec") or {}
        reuse: dict[str, set[str]] = {}
        try:
            for ic in spec.get("initContainers") or ():
                self._allocate_container(uid, ic, reuse)
                if ic.get("restartPolicy") == "Always":
                    self._unreuse(uid, ic["name"], reuse)  # a sidecar keeps its devices
                else:
                    for res, g in (self._pods.get(uid, {}).get(ic["name"]) or {}).items():
                        reuse.setdefault(res, set()).update(g.ids)
            for c in spec.get("containers") or ():
                self._allocate_container(uid, c, reuse)
                self._unreuse(uid, c["name"], reuse)
        except (DeviceError, PluginError) as err:  # a plugin's refusal is an RPC error upstream
            self._restore_pod(uid, before)
            return Rejection(UNEXPECTED_ADMISSION_ERROR, f"Allocate failed due to {err}, which is unexpected")
        return None

    def _unreuse(self, uid: str, container: str, reuse: dict[str, set[str]]) -> None:
        for res, g in (self._pods.get(uid, {}).get(container) or {}).items():
            if res in reuse:
                reuse[res].difference_update(g.ids)

    def _is_device_resource(self, resource: str) -> bool:
        return resource in self._healthy or resource in self._allocated

    def _allocate_container(self, uid: str, container: dict, reuse: dict[str, set[str]]) -> None:
        name = container.get("name", "")
        # Extended resources cannot be overcommitted (requests == limits), so limits suffice.
        limits = resource_list((container.get("resources") or {}).get("limits"))
        for res in sorted(limits):
            if not self._is_device_resource(res):
                continue
            ids = self._devices_to_allocate(uid, name, res, limits[res], reuse.get(res, set()))
            if not ids:
                continue
            ep = self._endpoints.get(res)
            if ep is None:
                raise DeviceError(f"unknown Device Plugin {res}")
            responses = self._call(ep, res).allocate([ids])
            if not responses:
                raise DeviceError(f"no containers return in allocation response {responses}")
            self._grant(uid, name, res, ids, responses[0])

    def _call(self, ep: _Endpoint, resource: str) -> EmulatedPlugin:
        if ep.plugin is None or ep.stopped_at is not None:
            raise DeviceError(f"endpoint {resource} has been stopped", retryable=True)
        return ep.plugin

    def _devices_to_allocate(self, uid: str, container: str, res: str, required: int, reusable: set[str]) -> list[str]:
        held = self._held(uid, container, res)
        needed = required
        if held is not None:
            needed -= len(held)
            if needed != 0:
                raise DeviceError(
                    f'pod "{uid}" container "{container}" changed request for resource '
                    f'"{res}" from {len(held)} to {required}'
                )
        healthy = self._healthy.get(res)
        if healthy is None:
            raise DeviceError(f"cannot allocate unregistered device {res}", retryable=True)
        if not healthy:
            raise DeviceError(f"no healthy devices present; cannot allocate unhealthy devices {res}", retryable=True)
        if held is not None and not healthy.issuperset(held):
            raise DeviceError(
                f"previously allocated devices are no longer healthy; cannot allocate unhealthy devices {res}",
                retryable=True,
            )
        if needed == 0:
            return []  # a restart or re-admission: the container keeps what it has
        chosen: list[str] = []
        if self._take(chosen, _sorted(reusable), required):
            return chosen
        available = healthy - self._allocated.get(res, set())
        still = required - len(chosen)
        if len(available) < still:
            raise DeviceError(
                f"requested number of devices unavailable for {res}. Requested: {still}, Available: {len(available)}",
                retryable=True,
            )
        preferred = self._preferred(res, available | set(chosen), chosen, required)
        if self._take(chosen, [d for d in preferred if d in available], required):
            return chosen
        self._take(chosen, _sorted(available), required)
        return chosen

    @staticmethod
    def _take(chosen: list[str], candidates, required: int) -> bool:
        """Append candidates not yet chosen until ``required``; True once there."""
        for d in candidates:
            if len(chosen) >= required:
                break
            if d not in chosen:
                chosen.append(d)
        return len(chosen) >= required

    def _preferred(self, res: str, available: set[str], must: list[str], size: int) -> list[str]:
        ep = self._endpoints[res]
        if not ep.options.get_preferred_allocation_available:
            return []
        return self._call(ep, res).get_preferred_allocation(_sorted(available), list(must), size)

    def _held(self, uid: str, container: str, res: str) -> tuple[str, ...] | None:
        g = (self._pods.get(uid, {}).get(container) or {}).get(res)
        return g.ids if g is not None else None

    def _grant(self, uid: str, container: str, res: str, ids: list[str], response: ContainerAllocateResponse) -> None:
        by_numa: dict[int, list[str]] = {}
        known = self._all.get(res) or {}
        for d in _sorted(ids):
            dev = known.get(d)
            for node in dev.numa_nodes if dev is not None and dev.numa_nodes else (NO_TOPOLOGY,):
                by_numa.setdefault(node, []).append(d)
        grant = Grant(tuple(_sorted(ids)), {k: tuple(v) for k, v in sorted(by_numa.items())}, response)
        self._pods.setdefault(uid, {}).setdefault(container, {})[res] = grant
        self._allocated.setdefault(res, set()).update(ids)

    def _restore_pod(self, uid: str, before: dict) -> None:
        if before:
            self._pods[uid] = before
        else:
            self._pods.pop(uid, None)
        self._recount()

    def _recount(self) -> None:
        allocated: dict[str, set[str]] = {}
        for containers in self._pods.values():
            for grants in containers.values():
                for res, g in grants.items():
                    allocated.setdefault(res, set()).update(g.ids)
        self._allocated = allocated

    # ---- release and queries ----------------------------------------------------------

    def release(self, uid: str) -> bool:
        """The pod terminated: its devices become free. False when it held none."""
        if self._pods.pop(uid, None) is None:
            return False
        self._recount()
        return True

    def retain(self, active_uids) -> list[str]:
        """Upstream UpdateAllocatedDevices: free the devices of pods not in ``active_uids``."""
        gone = sorted(set(self._pods) - set(active_uids))
        for uid in gone:
            del self._pods[uid]
        self._recount()
        return gone

    def assignments(self, uid: str) -> dict[str, dict[str, list[str]]]:
        """{container: {resource: [device IDs]}} for one pod."""
        return {
            c: {res: list(g.ids) for res, g in sorted(grants.items())}
            for c, grants in sorted((self._pods.get(uid) or {}).items())
        }

    def pod_devices(self, uid: str) -> dict[str, list[str]]:
        """{resource: [device IDs]} held by any container of the pod (the report's ``devices``)."""
        out: dict[str, set[str]] = {}
        for grants in (self._pods.get(uid) or {}).values():
            for res, g in grants.items():
                out.setdefault(res, set()).update(g.ids)
        return {res: _sorted(ids) for res, ids in sorted(out.items())}

    def responses(self, uid: str) -> dict[str, ContainerAllocateResponse]:
        """Per container of the pod, its plugins' Allocate responses merged (no RPC made)."""
        return {
            c: merge_responses(grants[res].response for res in sorted(grants))
            for c, grants in sorted((self._pods.get(uid) or {}).items())
        }

    def in_use(self) -> dict[str, int]:
        return {res: len(ids) for res, ids in sorted(self._allocated.items()) if ids}

    def container_options(self, uid: str, container: str) -> ContainerAllocateResponse:
        """What the runtime applies when it creates the container (upstream
        GetDeviceRunContainerOptions), after PreStartContainer where a plugin asks for it."""
        grants = (self._pods.get(uid) or {}).get(container) or {}
        for res in sorted(grants):
            ep = self._endpoints.get(res)
            if ep is None:
                raise DeviceError(f"endpoint not found in cache for a registered resource: {res}", retryable=True)
            if ep.options.pre_start_required:
                try:
                    self._call(ep, res).pre_start_container(list(grants[res].ids))
                except DeviceError as err:
                    raise DeviceError(
                        f"device plugin PreStartContainer rpc failed with err: {err}", retryable=True
                    ) from None
        return merge_responses(grants[res].response for res in sorted(grants))

    # ---- checkpoint -------------------------------------------------------------------

    def checkpoint(self) -> bytes:
        """The assignments and registered resources as upstream's kubelet_internal_checkpoint
        (``devicecheckpoint.py``). Upstream rewrites the file after every change; kubemu,
        whose kubelets never restart mid-run, encodes the same state when asked."""
        entries = [
            (uid, container, res, g.by_numa, g.response)
            for uid in sorted(self._pods)
            for container, grants in sorted(self._pods[uid].items())
            for res, g in sorted(grants.items())
        ]
        # Upstream records only the healthy devices of every known resource.
        registered = {res: _sorted(self._healthy[res]) for res in sorted(self._healthy)}
        return devicecheckpoint.encode(entries, registered)

    def restore(self, blob: bytes | str, now: float) -> None:
        """Replace all state with a checkpoint, as a restarting kubelet does.

        Every resource in RegisteredDevices comes back Stopped since ``now`` with no devices
        (capacity 0) until its plugin registers again; allocations are kept. A corrupt
        checkpoint raises ``CheckpointError`` and changes nothing.
        """
        entries, registered = devicecheckpoint.decode(blob)
        pods: dict[str, dict[str, dict[str, Grant]]] = {}
        for uid, container, res, by_numa, response in entries:
            ids = tuple(_sorted({d for group in by_numa.values() for d in group}))
            pods.setdefault(uid, {}).setdefault(container, {})[res] = Grant(ids, by_numa, response)
        self._endpoints = {res: _Endpoint(None, DevicePluginOptions(), stopped_at=now) for res in registered}
        self._healthy = {res: set() for res in self._endpoints}
        self._unhealthy = {res: set() for res in self._endpoints}
        self._all = {}
        self._retired = set()
        self._pods = pods
        self._recount()
