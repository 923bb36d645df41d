from cluster.kubelet import NodeConfig
from cluster.kubelet.admission import (InsufficientResource, NodeView, PredicateFailure, admit,
                                       effective_requests, general_filter)

GI, MI = 2**30, 2**20


def test_allocatable_subtracts_reserved_and_memory_hard_threshold():
    cfg = NodeConfig("n", {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi",
                           "nvidia.com/gpu": "2"}, reserved={"cpu": "100m", "memory": "256Mi"})
    assert cfg.allocatable() == {"cpu": 3900, "memory": 8 * GI - 256 * MI - 100 * MI, "pods": 110,
                                 "ephemeral-storage": 100 * GI, "nvidia.com/gpu": 2}


def test_allocatable_percentage_threshold_and_clamp():
    cfg = NodeConfig("n", {"cpu": "1", "memory": "1000"}, reserved={"cpu": "2"},
                     kubelet={"evictionHard": {"memory.available": "10%"}})
    assert cfg.allocatable() == {"cpu": 0, "memory": 900}
    tiny = NodeConfig("n", {"memory": "50Mi"})
    assert tiny.allocatable() == {"memory": 0}


def test_rejection_reasons_and_messages(driver, config, pod):
    d = driver(config(reserved={"cpu": "100m"}, pods="3", extra={"nvidia.com/gpu": "2"}))
    d.send("ADDED", pod("big", cpu="3"))
    d.send("ADDED", pod("cpu", cpu="2"))
    d.send("ADDED", pod("mem", memory="9Gi"))
    d.send("ADDED", pod("gpu", requests={"nvidia.com/gpu": "3"}, limits={"nvidia.com/gpu": "3"}))
    d.send("ADDED", pod("eph", requests={"ephemeral-storage": "101Gi"}))
    alloc_mem = 8 * GI - 100 * MI
    assert d.events == [
        (0.0, "cpu", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 3900"),
        (0.0, "mem", "OutOfmemory",
         f"Node didn't have enough resource: memory, requested: {9 * GI}, used: 0, capacity: {alloc_mem}"),
        (0.0, "gpu", "OutOfnvidia.com/gpu",
         "Node didn't have enough resource: nvidia.com/gpu, requested: 3, used: 0, capacity: 2"),
        (0.0, "eph", "OutOfephemeral-storage",
         f"Node didn't have enough resource: ephemeral-storage, requested: {101 * GI}, used: 0, "
         f"capacity: {100 * GI}"),
    ]
    st = d.statuses["cpu"]
    assert st == {
        "phase": "Failed", "reason": "OutOfcpu",
        "message": "Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 3000, "
                   "capacity: 3900",
        "qosClass": "Burstable", "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}],
        "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }
    k = d.host.kubelet("node-0")
    assert k.requested() == {"cpu": 3000, "pods": 1}
    assert sorted(k.pods().values()) == ["Rejected"] * 4 + ["Running"]


def test_pod_count_is_checked_first(driver, config, pod):
    d = driver(config(pods="1"))
    d.send("ADDED", pod("a"))
    d.send("ADDED", pod("b", cpu="64"))
    assert d.events == [(0.0, "b", "OutOfpods",
                         "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1")]


def test_node_name_mismatch(driver, pod):
    d = driver()
    d.host.kubelet("node-0").on_pod(pod("x", node="node-9"), 0.0)
    d.flush()
    assert d.events == [(0.0, "x", "NodeName",
                         "Predicate NodeName failed: node(s) didn't match the requested node name")]
    assert d.statuses["x"]["reason"] == "NodeName"


def test_only_the_first_failure_is_reported_but_all_are_collected():
    view = NodeView("n", {"cpu": 1000, "memory": 100, "pods": 0}, {}, 0)
    pod = {"spec": {"nodeName": "other"}}
    reqs = {"cpu": 2000, "memory": 200}
    assert general_filter(pod, reqs, view) == [
        InsufficientResource("pods", 1, 0, 0), InsufficientResource("cpu", 2000, 0, 1000),
        InsufficientResource("memory", 200, 0, 100),
        PredicateFailure("NodeName", "node(s) didn't match the requested node name")]
    assert admit(pod, reqs, view).reason == "OutOfpods"


def test_extended_resources_unknown_to_the_node_are_ignored():
    assert effective_requests({"cpu": 1, "example.com/foo": 1, "hugepages-2Mi": 4}, {"cpu": 1}) == \
        {"cpu": 1, "hugepages-2Mi": 4}
    view = NodeView("n", {"cpu": 1000, "pods": 10}, {}, 0)
    assert admit({"spec": {}}, {"hugepages-2Mi": 4}, view).reason == "OutOfhugepages-2Mi"


def test_os_label_mismatch_rejected_before_resources():
    view = NodeView("n", {"pods": 0}, {}, 0, labels={"kubernetes.io/os": "linux"})
    pod = {"metadata": {"labels": {"kubernetes.io/os": "windows"}}, "spec": {}}
    assert admit(pod, {}, view).reason == "PodOSSelectorNodeLabelDoesNotMatch"
    assert admit({"spec": {"os": {"name": "windows"}}}, {}, view).reason == "PodOSNotSupported"


def test_terminal_pods_free_their_resources(driver, pod):
    d = driver()
    d.send("ADDED", pod("job", cpu="3", restart_policy="Never", annotations={"run-seconds": 5}))
    d.send("ADDED", pod("early", cpu="2"))
    d.run_until(5)
    d.send("ADDED", pod("late", cpu="2"))
    assert [e[:3] for e in d.events] == [(0.0, "early", "OutOfcpu")]
    assert d.trace("job") == [(0.0, "Running", 0, "running"), (5.0, "Succeeded", 0, "terminated")]
    assert d.trace("late") == [(5.0, "Running", 0, "running")]
    assert d.host.kubelet("node-0").requested() == {"cpu": 2000, "pods": 1}


def test_rejected_pod_is_confirmed_on_delete_and_dropped(driver, pod, deleting):
    d = driver()
    p = pod("huge", cpu="100")
    d.send("ADDED", p)
    d.send("MODIFIED", deleting(p, 30))
    d.send("MODIFIED", deleting(p, 30))
    assert d.deletes == [(0.0, "huge")]
    d.send("DELETED", deleting(p, 30))
    assert d.host.kubelet("node-0").pods() == {}
