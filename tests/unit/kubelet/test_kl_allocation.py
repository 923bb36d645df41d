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
    assert d.statuses["b"]["message"] == ("Pod was rejected: Allocate failed due to not enough cpus available to "
                                          "satisfy request: requested=2, available=1, which is unexpected")
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
    assert "requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0" in \
        d.statuses["c"]["message"]
    d.send("DELETED", b)
    d.send("ADDED", {**c, "metadata": {**c["metadata"], "uid": "c-again", "name": "c2"}})
    assert d.host.pod_resources(0.0)["c-again"]["devices"] == {GPU: ["gpu-0-gpu-3"]}


def test_unhealthy_device_lowers_allocatable_in_the_node_status(driver, config):
    d = driver(config("gpu-0", extra={GPU: "4"}))
    assert d.node_creates[0]["status"]["allocatable"][GPU] == "4"
    assert d.host.device_health("gpu-0", GPU, 3, False, 5.0) == "gpu-0-gpu-3"
    d.flush()
    (_, name, st), = d.node_statuses
    assert (name, st["capacity"][GPU], st["allocatable"][GPU]) == ("gpu-0", "4", "3")
    assert st["conditions"][0]["lastHeartbeatTime"] == "2026-01-01T00:00:05Z"
    assert d.host.node_resources()["gpu-0"]["devices"] == {GPU: {"capacity": "4", "allocatable": "3",
                                                                  "unhealthy": ["gpu-0-gpu-3"]}}
    d.host.device_health("gpu-0", GPU, 3, False, 6.0)  # no change, no status
    d.flush()
    assert len(d.node_statuses) == 1
    d.host.device_health("gpu-0", GPU, "gpu-0-gpu-3", True, 7.0)
    d.flush()
    assert d.node_statuses[-1][2]["allocatable"][GPU] == "4"


@pytest.mark.parametrize("resource, device, message", [
    ("example.com/fpga", 0, "resource: 'example.com/fpga' has no device plugin on gpu-0 (it has: nvidia.com/gpu)"),
    (GPU, 4, "device: index 4 is out of range for nvidia.com/gpu on gpu-0 (0..3)"),
    (GPU, "gpu-9", 'device_id: "gpu-9" is not a device of nvidia.com/gpu on gpu-0 (it has gpu-0-gpu-0 .. gpu-0-gpu-3)'),
])
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
        "NodePorts", "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the "
                     "requested pod ports")
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
    assert cg["containers"] == {"c": {"cpuShares": 256, "cpuQuota": 100000, "cpuPeriod": 100000,
                                      "memoryLimit": 512 * 2**20}}
    assert d.host.node_resources()["node-0"]["cgroups"] == {
        "kubepods": {"cpuShares": 3584, "memoryLimit": 7 * 2**30},
        "kubepods/burstable": {"cpuShares": 1024},  # 250m + 750m of Burstable requests
        "kubepods/besteffort": {"cpuShares": 2},
    }


def test_plain_nodes_keep_no_cpu_or_device_manager(config):
    alloc = NodeAllocation(config())
    assert alloc.cpus is None and alloc.devices is None
    assert alloc.node_view()["sharedCpus"] is None


@pytest.mark.parametrize("kw, message", [
    ({"kubelet": {"cpuManagerPolicy": "static"}},
     'kubelet.cpuManagerPolicy: "static" needs a cpu reservation greater than zero (reserved cpu, or reservedSystemCPUs)'),
    ({"kubelet": {"cpuManagerPolicy": "fast"}},
     "kubelet.cpuManagerPolicy: 'fast' is not a CPU manager policy (use none or static)"),
    ({"kubelet": {"evictionHard": {"memory.available": "lots"}}},
     'kubelet.evictionHard.memory.available: "lots" is not a quantity or percentage'),
    ({"kubelet": {"evictionSoft": {"memory.available": "1Gi"}}},
     'kubelet.evictionSoft.memory.available: "1Gi": grace period must be specified for the soft eviction '
     'threshold memory.available'),
    ({"kubelet": {"evictonHard": {}}}, "kubelet.evictonHard: unknown field"),
    ({"kubelet": {"devicePlugins": {"nvidia.com/gpu": {"numaNodes": 2}}}},
     'kubelet.devicePlugins: "nvidia.com/gpu" is not an extended resource in the capacity of node-0'),
])
def test_bad_kubelet_configuration_is_one_line(config, kw, message):
    problem = check_kubelet(config(**kw))
    assert problem is not None and "\n" not in problem
    assert problem.startswith(message), problem
