"""What admitted pods hold, through a NodeHost: exclusive CPUs, devices and their env,
device health in the node status, host ports, cgroups and the PodResources view."""

import pytest

from cluster.kubelet.allocation import NodeAllocation
from cluster.kubelet.kubeletconfig import check_kubelet

GPU = "nvidia.com/gpu"


def _guaranteed(pod, name, cpu, memory="1Gi", gpus=None):
    limits = {"cpu": cpu, "memory": memory}
    if gpus:
        limits[GPU] = str(gpus)
    return pod(name, requests=dict(limits), limits=limits)


def _cpus(d):
    return {v["node"] + "/" + uid: v["cpuset"] for uid, v in d.host.pod_resources(d.now).items()}


def test_static_cpu_manager_gives_disjoint_cpusets_and_takes_them_back(driver, config, pod):
    d = driver(config(cpu="8", reserved={"cpu": "1"}, kubelet={"cpuManagerPolicy": "static"}))
    g2, g3 = _guaranteed(pod, "g2", "2"), _guaranteed(pod, "g3", "3")
    shared = pod("shared", cpu="500m")
    for p in (g2, g3, shared):
        d.send("ADDED", p)
    view = d.host.pod_resources(0.0)
    assert [view[p["metadata"]["uid"]]["cpuset"] for p in (g2, g3, shared)] == ["1-2", "3-5", "0,6-7"]
    assert view[g2["metadata"]["uid"]]["exclusiveCpus"] == "1-2"
    assert d.host.node_resources()["node-0"]["sharedCpus"] == "0,6-7"
    d.send("DELETED", g2)
    assert d.host.node_resources()["node-0"]["sharedCpus"] == "0-2,6-7"
    assert d.host.pod_resources(0.0)[shared["metadata"]["uid"]]["cpuset"] == "0-2,6-7"


def test_static_cpu_manager_refuses_a_pod_it_cannot_pin(driver, config, pod):
    d = driver(config(cpu="4", reserved={"cpu": "1"}, kubelet={"cpuManagerPolicy": "static"}))
    d.send("ADDED", _guaranteed(pod, "a", "2", memory="1Gi"))
    d.send("ADDED", _guaranteed(pod, "b", "2", memory="1Gi"))
    assert d.statuses["b"]["reason"] == "UnexpectedAdmissionError"
    assert d.statuses["b"]["message"] == (
        "Pod was rejected: Allocate failed due to not enough cpus available to "
        "satisfy request: requested=2, available=1, which is unexpected"
    )
    assert d.host.kubelet("node-0").requested()["cpu"] == 2000


def test_devices_are_allocated_with_their_env_and_released(driver, config, pod):
    d = driver(config("gpu-0", extra={GPU: "4"}))
    a, b = _guaranteed(pod, "a", "1", gpus=3), _guaranteed(pod, "b", "1", gpus=1)
    a["spec"]["nodeName"] = b["spec"]["nodeName"] = "gpu-0"
    d.send("ADDED", a)
    d.send("ADDED", b)
    view = d.host.pod_resources(0.0)
    assert view[a["metadata"]["uid"]]["devices"] == {GPU: ["gpu-0-gpu-0", "gpu-0-gpu-1", "gpu-0-gpu-2"]}
    assert view[a["metadata"]["uid"]]["env"] == {"c": {"NVIDIA_VISIBLE_DEVICES": "gpu-0-gpu-0,gpu-0-gpu-1,gpu-0-gpu-2"}}
    assert view[b["metadata"]["uid"]]["devices"] == {GPU: ["gpu-0-gpu-3"]}
    c = _guaranteed(pod, "c", "1", gpus=1)
    c["spec"]["nodeName"] = "gpu-0"
    d.send("ADDED", c)
    # Devices are allocated before GeneralPredicates, as upstream's admit handlers run.
    assert d.statuses["c"]["reason"] == "UnexpectedAdmissionError"
    assert (
        "requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0"
        in d.statuses["c"]["message"]
    )
    d.send("DELETED", b)
    d.send("ADDED", {**c, "metadata": {**c["metadata"], "uid": "c-again", "name": "c2"}})
    assert d.host.pod_resources(0.0)["c-again"]["devices"] == {GPU: ["gpu-0-gpu-3"]}


def test_unhealthy_device_lowers_allocatable_in_the_node_status(driver, config):
    d = driver(config("gpu-0", extra={GPU: "4"}))
    assert d.node_creates[0]["status"]["allocatable"][GPU] == "4"
    assert d.host.device_health("gpu-0", GPU, 3, False, 5.0) == "gpu-0-gpu-3"
    d.flush()
    ((_, name, st),) = d.node_statuses
    assert (name, st["capacity"][GPU], st["allocatable"][GPU]) == ("gpu-0", "4", "3")
    assert st["conditions"][0]["lastHeartbeatTime"] == "2026-01-01T00:00:05Z"
    assert d.host.node_resources()["gpu-0"]["devices"] == {
        GPU: {"capacity": "4", "allocatable": "3", "unhealthy": ["gpu-0-gpu-3"]}
    }
    d.host.device_health("gpu-0", GPU, 3, False, 6.0)  # no change, no status
    d.flush()
    assert len(d.node_statuses) == 1
    d.host.device_health("gpu-0", GPU, "gpu-0-gpu-3", True, 7.0)
    d.flush()
    assert d.node_statuses[-1][2]["allocatable"][GPU] == "4"


def test_a_held_device_turning_unhealthy_does_not_refuse_a_pod_that_gets_a_healthy_one(driver, config, pod):
    # Upstream's UpdatePluginResources: once the new pod holds devices, the fit check sees
    # allocatable raised to the devices allocated (4), not the healthy count (3).
    d = driver(config("gpu-0", extra={GPU: "4"}))
    for i in range(3):
        d.send("ADDED", pod(f"g{i}", node="gpu-0", requests={GPU: "1"}, limits={GPU: "1"}))
    d.host.device_health("gpu-0", GPU, 2, False, 1.0)  # held by g2
    d.flush()
    assert d.node_statuses[-1][2]["allocatable"][GPU] == "3"
    late = pod("late", node="gpu-0", requests={GPU: "1"}, limits={GPU: "1"})
    d.send("ADDED", late)
    assert d.statuses["late"]["phase"] == "Running"
    assert d.host.pod_resources(1.0)[late["metadata"]["uid"]]["devices"] == {GPU: ["gpu-0-gpu-3"]}
    # With every healthy device taken, the device manager refuses the next one.
    d.send("ADDED", pod("more", node="gpu-0", requests={GPU: "1"}, limits={GPU: "1"}))
    assert d.statuses["more"]["reason"] == "UnexpectedAdmissionError"
    assert "Requested: 1, Available: 0" in d.statuses["more"]["message"]


def test_a_device_plugin_going_away_zeroes_allocatable_then_capacity_after_its_grace(driver, config, pod):
    d = driver(config("gpu-0", extra={GPU: "4"}))
    holder = pod("holder", node="gpu-0", requests={GPU: "1"}, limits={GPU: "1"})
    d.send("ADDED", holder)
    d.clock.set(10.0)
    d.host.device_plugin("gpu-0", GPU, False, 10.0)
    d.flush()
    st = d.node_statuses[-1][2]
    assert (st["capacity"][GPU], st["allocatable"][GPU]) == ("4", "0")
    assert d.statuses["holder"]["phase"] == "Running"  # its device stays with it
    d.send("ADDED", pod("late", node="gpu-0", requests={GPU: "1"}, limits={GPU: "1"}))
    assert d.statuses["late"]["message"] == (
        "Pod was rejected: Allocate failed due to no healthy devices present; "
        "cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected"
    )
    d.run_until(309.0)
    assert d.node_statuses[-1][2]["capacity"][GPU] == "4"
    d.run_until(310.0)  # the 5-minute grace is over: the resource is retired
    st = d.node_statuses[-1][2]
    assert (st["capacity"][GPU], st["allocatable"][GPU]) == ("0", "0")
    d.host.device_plugin("gpu-0", GPU, True, 320.0)
    d.flush()
    st = d.node_statuses[-1][2]
    assert (st["capacity"][GPU], st["allocatable"][GPU]) == ("4", "4")
    d.send("ADDED", pod("again", node="gpu-0", requests={GPU: "1"}, limits={GPU: "1"}))
    assert d.host.pod_resources(320.0)[holder["metadata"]["uid"]]["devices"] == {GPU: ["gpu-0-gpu-0"]}
    assert d.statuses["again"]["phase"] == "Running"


def test_plugin_expiry_timer_fires_once_whatever_the_float_sum(driver, config):
    # (212.3 + 300) - 212.3 < 300 in floating point: the expiry must still happen at its timer.
    d = driver(config("gpu-0", extra={GPU: "2"}))
    d.run_until(212.3)
    d.host.device_plugin("gpu-0", GPU, False, 212.3)
    d.flush()
    d.run_until(600.0)
    assert d.node_statuses[-1][2]["capacity"][GPU] == "0"
    assert d.host.next_timer() is not None and d.host.next_timer() > 600.0  # only the lease is left


def test_a_device_plugin_back_within_its_grace_keeps_the_resource(driver, config):
    d = driver(config("gpu-0", extra={GPU: "2"}))
    for t, running in ((0.0, False), (100.0, False), (200.0, True), (201.0, True)):
        d.run_until(t)  # (a second stop keeps the first stop time; a second start changes nothing)
        d.host.device_plugin("gpu-0", GPU, running, t)
        d.flush()
    d.run_until(1000.0)
    # The two changes, then the unchanged status every 5 minutes (at 500 and 800 s).
    assert [(t, st["allocatable"][GPU]) for t, _, st in d.node_statuses] == [
        (0, "0"),
        (200, "2"),
        (500, "2"),
        (800, "2"),
    ]
    with pytest.raises(ValueError, match="resource: 'example.com/fpga' has no device plugin on gpu-0"):
        d.host.device_plugin("gpu-0", "example.com/fpga", False, 1000.0)


@pytest.mark.parametrize(
    "resource, device, message",
    [
        ("example.com/fpga", 0, "resource: 'example.com/fpga' has no device plugin on gpu-0 (it has: nvidia.com/gpu)"),
        (GPU, 4, "device: index 4 is out of range for nvidia.com/gpu on gpu-0 (0..3)"),
        (
            GPU,
            "gpu-9",
            'device_id: "gpu-9" is not a device of nvidia.com/gpu on gpu-0 (it has gpu-0-gpu-0 .. gpu-0-gpu-3)',
        ),
    ],
)
def test_device_health_on_an_unknown_device_is_one_line(driver, config, resource, device, message):
    d = driver(config("gpu-0", extra={GPU: "4"}))
    with pytest.raises(ValueError) as err:
        d.host.device_health("gpu-0", resource, device, False, 1.0)
    assert str(err.value) == message


def test_host_ports_of_admitted_pods_are_held_until_they_end(driver, pod):
    d = driver()

    def web(name):
        p = pod(name)
        p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        return p

    first = web("first")
    d.send("ADDED", first)
    d.send("ADDED", web("second"))
    assert (d.statuses["second"]["reason"], d.statuses["second"]["message"]) == (
        "NodePorts",
        "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    )
    d.send("DELETED", first)
    d.send("ADDED", web("third"))
    assert d.statuses["third"]["phase"] == "Running"


def test_cgroups_in_the_pod_resources_view(driver, config, pod):
    d = driver(config(cpu="4", memory="8Gi", reserved={"cpu": "500m", "memory": "1Gi"}))
    b = pod("b", requests={"cpu": "250m"}, limits={"cpu": "1", "memory": "512Mi"})
    d.send("ADDED", b)
    d.send("ADDED", pod("b2", cpu="750m"))
    cg = d.host.pod_resources(0.0)[b["metadata"]["uid"]]["cgroup"]
    assert cg["parent"].startswith("kubepods/burstable/pod")
    assert cg["containers"] == {
        "c": {"cpuShares": 256, "cpuQuota": 100000, "cpuPeriod": 100000, "memoryLimit": 512 * 2**20}
    }
    assert d.host.node_resources()["node-0"]["cgroups"] == {
        "kubepods": {"cpuShares": 3584, "memoryLimit": 7 * 2**30},
        "kubepods/burstable": {"cpuShares": 1024},  # 250m + 750m of Burstable requests
        "kubepods/besteffort": {"cpuShares": 2},
    }


def test_plain_nodes_keep_no_cpu_or_device_manager(config):
    alloc = NodeAllocation(config())
    assert alloc.cpus is None and alloc.devices is None
    assert alloc.node_view()["sharedCpus"] is None


@pytest.mark.parametrize(
    "kw, message",
    [
        (
            {"kubelet": {"cpuManagerPolicy": "static"}},
            'kubelet.cpuManagerPolicy: "static" needs a cpu reservation greater than zero (reserved cpu, or reservedSystemCPUs)',
        ),
        (
            {"kubelet": {"cpuManagerPolicy": "fast"}},
            "kubelet.cpuManagerPolicy: 'fast' is not a CPU manager policy (use none or static)",
        ),
        (
            {"kubelet": {"evictionHard": {"memory.available": "lots"}}},
            'kubelet.evictionHard.memory.available: "lots" is not a quantity or percentage',
        ),
        (
            {"kubelet": {"evictionSoft": {"memory.available": "1Gi"}}},
            'kubelet.evictionSoft.memory.available: "1Gi": grace period must be specified for the soft eviction '
            "threshold memory.available",
        ),
        ({"kubelet": {"evictonHard": {}}}, "kubelet.evictonHard: unknown field"),
        (
            {"kubelet": {"devicePlugins": {"nvidia.com/gpu": {"numaNodes": 2}}}},
            'kubelet.devicePlugins: "nvidia.com/gpu" is not an extended resource in the capacity of node-0',
        ),
        (
            {"extra": {GPU: "2"}, "kubelet": {"devicePlugins": {GPU: {"numaNodes": -1}}}},
            "kubelet.devicePlugins[nvidia.com/gpu].numaNodes: -1 must be a whole number >= 0",
        ),
        (
            {"extra": {GPU: "2"}, "kubelet": {"devicePlugins": {GPU: {"preStartRequired": 1}}}},
            "kubelet.devicePlugins[nvidia.com/gpu].preStartRequired: 1 must be true or false",
        ),
        (
            {"extra": {GPU: "2"}, "kubelet": {"devicePlugins": {GPU: "fast"}}},
            "kubelet.devicePlugins[nvidia.com/gpu]: 'fast' is not a mapping of settings",
        ),
        (
            {"kubelet": {"enforceNodeAllocatable": ["pods", 3]}},
            "kubelet.enforceNodeAllocatable[1]: 3 is not an option (valid: pods, system-reserved, kube-reserved, none)",
        ),
    ],
)
def test_bad_kubelet_configuration_is_one_line(config, kw, message):
    problem = check_kubelet(config(**kw))
    assert problem is not None and "\n" not in problem
    assert problem.startswith(message), problem
