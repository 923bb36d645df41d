"""Device manager and emulated device plugins: registration, ListAndWatch, the stop grace,
allocation at admission, release, checkpoints."""

from __future__ import annotations

import json
import zlib

import pytest

from cluster.kubelet.devicecheckpoint import CheckpointError
from cluster.kubelet.deviceplugin import (
    HEALTHY,
    NVIDIA_DRIVER_DIR,
    UNHEALTHY,
    ContainerAllocateResponse,
    Device,
    DeviceSpec,
    EmulatedPlugin,
    ListAndWatchResponse,
    Mount,
    PluginError,
    natural_key,
    plugins_for_capacity,
)
from cluster.kubelet.devices import (
    ENDPOINT_STOP_GRACE_SECONDS,
    REGISTERED,
    RETIRED,
    STOPPED,
    DeviceManager,
    RegistrationError,
)

GPU = "nvidia.com/gpu"
NODE = "node-0"


# ---- builders ---------------------------------------------------------------------------


def gpu(i: int, node: str = NODE) -> str:
    return f"{node}-gpu-{i}"


def container(name: str, n: int = 0, resource: str = GPU, restart_policy: str | None = None) -> dict:
    c = {"name": name, "image": "cuda"}
    if n:
        c["resources"] = {"requests": {resource: str(n)}, "limits": {resource: str(n)}}
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def pod(uid: str, *containers: dict, init: tuple = ()) -> dict:
    spec = {"nodeName": NODE, "containers": list(containers or [container("c")])}
    if init:
        spec["initContainers"] = list(init)
    return {"metadata": {"name": uid, "namespace": "default", "uid": uid}, "spec": spec}


def gpu_pod(uid: str, n: int) -> dict:
    return pod(uid, container("c", n))


def manager(count: int = 4, resource: str = GPU, **plugin_kw) -> tuple[DeviceManager, EmulatedPlugin]:
    dm = DeviceManager(NODE)
    plugin = EmulatedPlugin(NODE, resource, count, **plugin_kw)
    dm.register(plugin)
    return dm, plugin


def refusal(dm: DeviceManager, p: dict) -> tuple[str, str] | None:
    r = dm.allocate(p)
    return None if r is None else (r.reason, r.message)


def unexpected(err: str) -> tuple[str, str]:
    return ("UnexpectedAdmissionError", f"Allocate failed due to {err}, which is unexpected")


# ---- registration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "resource, version, error",
    [
        ("nvidia.com/gpu", "v1beta1", None),
        ("example.com/fpga", "v1beta1", None),
        ("gpu", "v1beta1", 'resource_name: "gpu" is not an extended resource name'),
        ("kubernetes.io/gpu", "v1beta1", 'resource_name: "kubernetes.io/gpu" is not'),
        ("foo.kubernetes.io/gpu", "v1beta1", 'resource_name: "foo.kubernetes.io/gpu" is not'),
        ("requests.example.com/gpu", "v1beta1", 'resource_name: "requests.example.com/gpu" is not'),
        ("Example.com/gpu", "v1beta1", 'resource_name: "Example.com/gpu" is not'),
        ("example.com/", "v1beta1", 'resource_name: "example.com/" is not'),
        ("nvidia.com/gpu", "v1alpha1", 'version: "v1alpha1" is not supported by this kubelet (supported: v1beta1)'),
    ],
)
def test_registration_validation(resource, version, error):
    dm = DeviceManager(NODE)
    plugin = EmulatedPlugin(NODE, resource, 2, version=version)
    if error is None:
        dm.register(plugin)
        assert dm.state(resource) == REGISTERED
        assert dm.capacity() == {resource: 2} and dm.allocatable() == {resource: 2}
        return
    with pytest.raises(RegistrationError) as exc:
        dm.register(plugin)
    msg = str(exc.value)
    assert msg.startswith(error) and "will not help" in msg and "\n" not in msg
    assert dm.state(resource) is None and dm.capacity() == {}


def test_second_registration_replaces_the_first():
    dm, old = manager(count=2)
    new = EmulatedPlugin(NODE, GPU, 4)
    dm.register(new)
    assert dm.plugin(GPU) is new and dm.capacity() == {GPU: 4}
    old.set_health(gpu(0), False)  # the replaced plugin's stream is no longer read
    assert dm.poll() == [] and dm.allocatable() == {GPU: 4}


def test_register_request_and_options():
    plugin = EmulatedPlugin(NODE, GPU, 1, preferred=True, pre_start_required=True)
    req = plugin.register()
    assert (req.version, req.endpoint, req.resource_name) == ("v1beta1", "nvidia.com_gpu.sock", GPU)
    assert req.options.get_preferred_allocation_available and req.options.pre_start_required


# ---- ListAndWatch, capacity and allocatable ----------------------------------------------


def test_device_ids_topology_and_health_strings():
    plugin = EmulatedPlugin("node-7", GPU, 4, numa_nodes=2)
    resp = plugin.list_and_watch()
    assert [d.id for d in resp.devices] == [gpu(i, "node-7") for i in range(4)]
    assert [d.numa_nodes for d in resp.devices] == [(0,), (0,), (1,), (1,)]
    assert {d.health for d in resp.devices} == {HEALTHY} and (HEALTHY, UNHEALTHY) == ("Healthy", "Unhealthy")
    assert EmulatedPlugin("n", "example.com/fpga", 1).device_ids == ("n-fpga-0",)


@pytest.mark.parametrize(
    "flips, capacity, allocatable",
    [
        ([], 4, 4),
        ([(1, False)], 4, 3),
        ([(1, False), (3, False)], 4, 2),
        ([(1, False), (1, True)], 4, 4),
        ([(i, False) for i in range(4)], 4, 0),
    ],
)
def test_unhealthy_devices_lower_allocatable_not_capacity(flips, capacity, allocatable):
    dm, plugin = manager()
    assert dm.take_update() == ({GPU: 4}, {GPU: 4})
    for i, healthy in flips:
        plugin.set_health(gpu(i), healthy)
    dm.poll()
    assert dm.capacity() == {GPU: capacity} and dm.allocatable() == {GPU: allocatable}
    changed = allocatable != 4
    assert dm.allocatable_changed is changed
    assert dm.take_update() == (({GPU: capacity}, {GPU: allocatable}) if changed else None)
    assert dm.take_update() is None and not dm.allocatable_changed


def test_each_list_and_watch_message_replaces_the_device_set():
    dm, _ = manager(count=4)
    msg = ListAndWatchResponse((Device("a", HEALTHY), Device("b", UNHEALTHY)), revision=9)
    assert dm.on_list_and_watch(GPU, msg)
    assert dm.capacity() == {GPU: 2} and dm.allocatable() == {GPU: 1}
    assert [d.id for d in dm.devices(GPU)] == ["a", "b"]
    assert not dm.on_list_and_watch("example.com/none", msg)  # no endpoint: nobody listens
    # the plugin refuses IDs it never had; the pod is refused with the plugin's words
    assert refusal(dm, gpu_pod("p", 1)) == unexpected(
        'devices_ids: "a" is not a device of nvidia.com/gpu on node-0 (it has node-0-gpu-0 .. node-0-gpu-3); '
        "retrying does not help"
    )
    assert dm.in_use() == {}


def test_set_health_unknown_device_is_a_clear_error():
    plugin = EmulatedPlugin(NODE, GPU, 2)
    with pytest.raises(PluginError) as exc:
        plugin.set_health("gpu-9", False)
    assert str(exc.value) == (
        'device_id: "gpu-9" is not a device of nvidia.com/gpu on node-0 '
        "(it has node-0-gpu-0 .. node-0-gpu-1); retrying does not help"
    )
    assert not exc.value.retryable
    assert plugin.set_health(gpu(0), True) is False and plugin.revision == 0


# ---- plugin stop and the grace period ------------------------------------------------------


def test_plugin_stop_then_grace_then_zero():
    dm, plugin = manager()
    plugin.set_health(gpu(3), False)
    dm.poll()
    dm.take_update()
    assert dm.plugin_stopped(GPU, now=100.0)
    assert not dm.plugin_stopped(GPU, now=150.0)  # the first stop time stands
    assert dm.state(GPU) == STOPPED
    assert dm.take_update() == ({GPU: 4}, {GPU: 0})
    assert dm.next_expiry() == 100.0 + ENDPOINT_STOP_GRACE_SECONDS == 400.0
    plugin.set_health(gpu(3), True)
    assert dm.poll() == []  # a stopped plugin's stream is gone
    assert dm.expire(399.9) == [] and dm.capacity() == {GPU: 4}
    assert dm.expire(400.0) == [GPU]
    assert dm.state(GPU) == RETIRED and dm.next_expiry() is None
    assert dm.take_update() == ({GPU: 0}, {GPU: 0})
    dm.register(plugin)
    assert dm.state(GPU) == REGISTERED and dm.take_update() == ({GPU: 4}, {GPU: 4})


def test_reregistration_within_the_grace_restores_the_resource():
    dm, plugin = manager()
    dm.plugin_stopped(GPU, 0.0)
    dm.register(plugin)
    assert dm.state(GPU) == REGISTERED and dm.allocatable() == {GPU: 4}
    assert dm.expire(10_000.0) == [] and dm.next_expiry() is None


def test_stopped_resource_refuses_new_pods():
    dm, _ = manager()
    dm.plugin_stopped(GPU, 0.0)
    assert refusal(dm, gpu_pod("p", 1)) == unexpected(
        "no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu"
    )


# ---- allocation ----------------------------------------------------------------------------


@pytest.mark.parametrize("asks", [[1, 3], [3, 1], [2, 2], [1, 1, 1, 1], [4], [1, 2, 1]])
def test_pods_get_disjoint_devices(asks):
    dm, _ = manager(count=4)
    held = []
    for k, n in enumerate(asks):
        assert dm.allocate(gpu_pod(f"p{k}", n)) is None
        held.append(dm.pod_devices(f"p{k}")[GPU])
        assert len(held[-1]) == n
    flat = [d for ids in held for d in ids]
    assert sorted(flat, key=natural_key) == [gpu(i) for i in range(4)]
    assert dm.in_use() == {GPU: 4}
    assert refusal(dm, gpu_pod("late", 1)) == unexpected(
        "requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0"
    )


def test_fallback_choice_is_natural_id_order():
    dm, _ = manager(count=12)
    assert dm.allocate(gpu_pod("a", 11)) is None
    assert dm.pod_devices("a")[GPU] == [gpu(i) for i in range(11)]  # gpu-2 before gpu-10


@pytest.mark.parametrize(
    "preferred, expected",
    [
        (False, [gpu(1), gpu(2)]),  # natural order spans both NUMA nodes
        (True, [gpu(2), gpu(3)]),  # the plugin packs the pair onto NUMA node 1
    ],
)
def test_preferred_allocation_used_when_offered(preferred, expected):
    dm, plugin = manager(count=4, numa_nodes=2, preferred=preferred, record=True)
    assert dm.allocate(gpu_pod("a", 1)) is None
    assert dm.allocate(gpu_pod("b", 2)) is None
    assert dm.pod_devices("b")[GPU] == expected
    asked = [entry for entry in plugin.log if entry[0] == "GetPreferredAllocation"]
    if preferred:
        assert asked[-1] == ("GetPreferredAllocation", [gpu(1), gpu(2), gpu(3)], [], 2)
    else:
        assert asked == []
    assert plugin.log[-1] == ("Allocate", expected)


def test_preferred_allocation_keeps_must_include_and_best_fit():
    plugin = EmulatedPlugin(NODE, GPU, 8, numa_nodes=2, preferred=True)
    ids = [gpu(i) for i in range(8)]
    assert plugin.get_preferred_allocation(ids, [gpu(5)], 3) == [gpu(5), gpu(4), gpu(6)]
    # NUMA 0 has 1 free, NUMA 1 has 3: the 3 fit whole on node 1
    assert plugin.get_preferred_allocation([gpu(0), gpu(4), gpu(5), gpu(6)], [], 3) == [gpu(4), gpu(5), gpu(6)]
    # nothing fits whole: the largest node first
    assert plugin.get_preferred_allocation([gpu(0), gpu(1), gpu(4), gpu(5), gpu(6)], [], 4) == [
        gpu(4),
        gpu(5),
        gpu(6),
        gpu(0),
    ]


@pytest.mark.parametrize(
    "setup, p, error",
    [
        (
            "none",
            gpu_pod("p", 5),
            "requested number of devices unavailable for nvidia.com/gpu. Requested: 5, Available: 4",
        ),
        (
            "held2",
            gpu_pod("p", 3),
            "requested number of devices unavailable for nvidia.com/gpu. Requested: 3, Available: 2",
        ),
        ("unhealthy", gpu_pod("p", 1), "no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu"),
        (
            "held2",
            pod("p", container("a", 1), container("b", 2)),
            "requested number of devices unavailable for nvidia.com/gpu. Requested: 2, Available: 1",
        ),
    ],
)
def test_refusal_reason_and_message(setup, p, error):
    dm, plugin = manager(count=4)
    if setup == "held2":
        assert dm.allocate(gpu_pod("other", 2)) is None
    if setup == "unhealthy":
        for i in range(4):
            plugin.set_health(gpu(i), False)
        dm.poll()
    before = dm.in_use()
    assert refusal(dm, p) == unexpected(error)
    assert dm.assignments("p") == {} and dm.in_use() == before  # a refused pod keeps nothing


def test_resources_without_a_plugin_are_not_the_device_managers():
    dm, _ = manager()
    assert dm.allocate(pod("p", container("c", 1, resource="example.com/other"))) is None
    assert dm.assignments("p") == {}


def test_release_makes_devices_reusable():
    dm, _ = manager(count=2)
    assert dm.allocate(gpu_pod("a", 2)) is None
    assert refusal(dm, gpu_pod("b", 1)) is not None
    assert dm.release("a") and not dm.release("a")
    assert dm.in_use() == {}
    assert dm.allocate(gpu_pod("b", 1)) is None and dm.pod_devices("b") == {GPU: [gpu(0)]}
    assert dm.retain(["b"]) == [] and dm.retain([]) == ["b"] and dm.in_use() == {}


def test_allocate_response_for_gpus():
    dm, _ = manager(count=4)
    assert dm.allocate(gpu_pod("a", 1)) is None
    assert dm.allocate(gpu_pod("b", 2)) is None
    opts = dm.container_options("b", "c")
    ids = f"{gpu(1)},{gpu(2)}"
    assert opts == ContainerAllocateResponse(
        envs={"NVIDIA_VISIBLE_DEVICES": ids},
        mounts=(Mount(NVIDIA_DRIVER_DIR, NVIDIA_DRIVER_DIR, read_only=True),),
        devices=(DeviceSpec("/dev/nvidia1", "/dev/nvidia1", "rw"), DeviceSpec("/dev/nvidia2", "/dev/nvidia2", "rw")),
        annotations={GPU: ids},
    )


def test_allocate_response_for_other_resources_and_merge():
    dm = DeviceManager(NODE)
    for plugin in plugins_for_capacity(NODE, {"cpu": 4000, GPU: 2, "example.com/fpga": 2}):
        dm.register(plugin)
    c = {"name": "c", "resources": {"limits": {GPU: "1", "example.com/fpga": "1"}}}
    assert dm.allocate(pod("p", c)) is None
    assert dm.assignments("p") == {"c": {"example.com/fpga": [f"{NODE}-fpga-0"], GPU: [gpu(0)]}}
    opts = dm.container_options("p", "c")
    assert opts.envs == {"EXAMPLE_COM_FPGA_VISIBLE_DEVICES": f"{NODE}-fpga-0", "NVIDIA_VISIBLE_DEVICES": gpu(0)}
    assert [d.host_path for d in opts.devices] == ["/dev/fpga0", "/dev/nvidia0"]
    assert [m.host_path for m in opts.mounts] == [NVIDIA_DRIVER_DIR]


def test_pre_start_container_when_required():
    dm, plugin = manager(count=1, pre_start_required=True, record=True)
    assert dm.allocate(gpu_pod("p", 1)) is None
    dm.container_options("p", "c")
    assert plugin.log[-1] == ("PreStartContainer", [gpu(0)])


def test_unhealthy_device_stays_with_its_running_pod():
    dm, plugin = manager(count=2)
    assert dm.allocate(gpu_pod("a", 1)) is None
    plugin.set_health(gpu(0), False)
    dm.poll()
    assert dm.pod_devices("a") == {GPU: [gpu(0)]} and dm.allocatable() == {GPU: 1}
    assert dm.allocate(gpu_pod("b", 1)) is None and dm.pod_devices("b") == {GPU: [gpu(1)]}
    assert refusal(dm, gpu_pod("c", 1)) == unexpected(
        "requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0"
    )


# ---- restarts and init containers ------------------------------------------------------------


def test_container_restart_reuses_its_devices():
    dm, plugin = manager(count=4, record=True)
    p = gpu_pod("p", 2)
    assert dm.allocate(p) is None
    calls = len(plugin.log)
    first = dm.assignments("p")
    assert dm.allocate(p) is None  # re-admission of the same pod
    assert dm.assignments("p") == first and len(plugin.log) == calls  # no new Allocate call
    changed = gpu_pod("p", 3)
    assert refusal(dm, changed) == unexpected(
        'pod "p" container "c" changed request for resource "nvidia.com/gpu" from 2 to 3'
    )
    assert dm.assignments("p") == first  # the refusal leaves the earlier allocation alone


def test_readmission_refused_when_held_devices_turned_unhealthy():
    dm, plugin = manager(count=2)
    p = gpu_pod("p", 1)
    assert dm.allocate(p) is None
    plugin.set_health(gpu(0), False)
    dm.poll()
    assert refusal(dm, p) == unexpected(
        "previously allocated devices are no longer healthy; cannot allocate unhealthy devices nvidia.com/gpu"
    )


@pytest.mark.parametrize(
    "init, apps, expected, in_use",
    [
        # an init container's devices go to the app containers first
        ([container("i", 2)], [container("c", 1)], {"i": [0, 1], "c": [0]}, 2),
        ([container("i", 2)], [container("a", 1), container("b", 2)], {"i": [0, 1], "a": [0], "b": [1, 2]}, 3),
        ([container("i1", 1), container("i2", 2)], [container("c", 2)], {"i1": [0], "i2": [0, 1], "c": [0, 1]}, 2),
        # a sidecar (restartable init container) keeps its devices for the pod's lifetime
        ([container("s", 1, restart_policy="Always")], [container("c", 1)], {"s": [0], "c": [1]}, 2),
    ],
)
def test_init_container_devices_are_reused(init, apps, expected, in_use):
    dm, _ = manager(count=4)
    assert dm.allocate(pod("p", *apps, init=tuple(init))) is None
    got = {c: [int(d.rsplit("-", 1)[1]) for d in res[GPU]] for c, res in dm.assignments("p").items()}
    assert got == expected
    assert dm.in_use() == {GPU: in_use}


# ---- checkpoint ---------------------------------------------------------------------------


def test_checkpoint_restore_round_trip():
    dm, plugin = manager(count=4, numa_nodes=2)
    assert dm.allocate(pod("p", container("c", 2), init=(container("i", 1),))) is None
    plugin.set_health(gpu(3), False)
    dm.poll()
    blob = dm.checkpoint()
    doc = json.loads(blob)
    assert sorted(doc) == ["Checksum", "Data"]
    assert doc["Data"]["RegisteredDevices"] == {GPU: [gpu(0), gpu(1), gpu(2)]}
    entry = doc["Data"]["PodDeviceEntries"][0]
    assert sorted(entry) == ["AllocResp", "ContainerName", "DeviceIDs", "PodUID", "ResourceName"]
    assert (entry["PodUID"], entry["ContainerName"], entry["DeviceIDs"]) == ("p", "c", {"0": [gpu(0), gpu(1)]})

    restarted = DeviceManager(NODE)
    restarted.restore(blob, now=50.0)
    assert restarted.assignments("p") == dm.assignments("p")
    assert restarted.container_options("p", "c").envs == dm.container_options("p", "c").envs
    assert restarted.state(GPU) == STOPPED and restarted.capacity() == {GPU: 0}
    # the pod already holding devices still passes the fit check while the plugin is away
    assert restarted.update_plugin_resources("p", {"cpu": 1000, GPU: 0}) == {"cpu": 1000, GPU: 2}
    assert restarted.update_plugin_resources("new", {GPU: 0}) == {GPU: 0}
    restarted.register(plugin)
    assert restarted.allocatable() == {GPU: 3}
    assert restarted.allocate(gpu_pod("q", 1)) is None and restarted.pod_devices("q") == {GPU: [gpu(2)]}
    assert DeviceManager().checkpoint() == DeviceManager().checkpoint()


def test_restore_without_reregistration_expires():
    dm, _ = manager()
    restarted = DeviceManager(NODE)
    restarted.restore(dm.checkpoint(), now=0.0)
    assert restarted.expire(ENDPOINT_STOP_GRACE_SECONDS) == [GPU]
    assert restarted.capacity() == {GPU: 0} and restarted.allocatable() == {GPU: 0}


def test_retired_resource_still_held_refuses_with_unregistered():
    dm, _ = manager(count=2)
    assert dm.allocate(gpu_pod("a", 1)) is None
    dm.plugin_stopped(GPU, 0.0)
    dm.expire(ENDPOINT_STOP_GRACE_SECONDS)
    assert refusal(dm, gpu_pod("b", 1)) == unexpected("cannot allocate unregistered device nvidia.com/gpu")


def reseal(doc: dict, _=None) -> None:
    """Recompute the documented checksum: CRC-32 of the canonical JSON of Data."""
    doc["Checksum"] = zlib.crc32(json.dumps(doc["Data"], sort_keys=True, separators=(",", ":")).encode())


@pytest.mark.parametrize(
    "mutate, error",
    [
        (lambda d: d.update(Checksum=d["Checksum"] + 1), "checkpoint.Checksum: "),
        (lambda d: d["Data"]["RegisteredDevices"].update({"x.io/y": []}), "checkpoint.Checksum: "),
        (lambda d: d.pop("Data"), "checkpoint: not a device manager checkpoint"),
        (
            lambda d: reseal(d, d["Data"]["PodDeviceEntries"][0].update(DeviceIDs=["x"])),
            "checkpoint.Data.PodDeviceEntries[0]: malformed entry",
        ),
    ],
)
def test_corrupt_checkpoint_is_refused_and_changes_nothing(mutate, error):
    dm, _ = manager()
    assert dm.allocate(gpu_pod("p", 1)) is None
    doc = json.loads(dm.checkpoint())
    mutate(doc)
    target, _ = manager()
    with pytest.raises(CheckpointError) as exc:
        target.restore(json.dumps(doc).encode(), now=0.0)
    assert str(exc.value).startswith(error) and "retrying does not help" in str(exc.value)
    assert target.state(GPU) == REGISTERED and target.assignments("p") == {}


# ---- plugins from a node's capacity ------------------------------------------------------------


def test_plugins_for_capacity():
    plugins = plugins_for_capacity(
        NODE,
        {"cpu": 4000, "memory": 1, "hugepages-2Mi": 0, GPU: 2, "example.com/fpga": 1},
        {GPU: {"numaNodes": 2, "preferredAllocation": True}},
    )
    assert [(p.resource, len(p.device_ids)) for p in plugins] == [("example.com/fpga", 1), (GPU, 2)]
    assert plugins[1].options.get_preferred_allocation_available
    with pytest.raises(PluginError, match=r"devicePlugins\[nvidia.com/gpu\].numa: unknown setting"):
        plugins_for_capacity(NODE, {GPU: 1}, {GPU: {"numa": 2}})
    with pytest.raises(PluginError, match='devicePlugins: "example.com/x" is not an extended resource'):
        plugins_for_capacity(NODE, {GPU: 1}, {"example.com/x": {}})
