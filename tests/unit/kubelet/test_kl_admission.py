import pytest

from cluster.api.codec import encode
from cluster.kubelet import NodeConfig
from cluster.kubelet.admission import (
    InsufficientResource,
    NodeView,
    PredicateFailure,
    admit,
    effective_requests,
    fits_resources,
    general_filter,
    no_execute_taints,
    node_affinity,
    node_ports,
)
from cluster.runtime.component import WatchEvent

GI, MI = 2**30, 2**20


def test_allocatable_subtracts_reserved_and_memory_hard_threshold():
    cfg = NodeConfig(
        "n",
        {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi", "nvidia.com/gpu": "2"},
        reserved={"cpu": "100m", "memory": "256Mi"},
    )
    assert cfg.allocatable() == {
        "cpu": 3900,
        "memory": 8 * GI - 256 * MI - 100 * MI,
        "pods": 110,
        "ephemeral-storage": 100 * GI,
        "nvidia.com/gpu": 2,
    }


def test_allocatable_percentage_threshold_and_clamp():
    cfg = NodeConfig(
        "n",
        {"cpu": "1", "memory": "1000"},
        reserved={"cpu": "2"},
        kubelet={"evictionHard": {"memory.available": "10%"}},
    )
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
        (
            0.0,
            "mem",
            "OutOfmemory",
            f"Node didn't have enough resource: memory, requested: {9 * GI}, used: 0, capacity: {alloc_mem}",
        ),
        # The device manager allocates before GeneralPredicates run (upstream's handler order),
        # so a device-plugin resource fails there rather than as OutOfnvidia.com/gpu.
        (
            0.0,
            "gpu",
            "UnexpectedAdmissionError",
            "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 3, "
            "Available: 2, which is unexpected",
        ),
        (
            0.0,
            "eph",
            "OutOfephemeral-storage",
            f"Node didn't have enough resource: ephemeral-storage, requested: {101 * GI}, used: 0, "
            f"capacity: {100 * GI}",
        ),
    ]
    st = d.statuses["cpu"]
    assert st == {
        "phase": "Failed",
        "reason": "OutOfcpu",
        "message": "Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 3000, "
        "capacity: 3900",
        "qosClass": "Burstable",
        "hostIP": "10.0.0.1",
        "hostIPs": [{"ip": "10.0.0.1"}],
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    k = d.host.kubelet("node-0")
    assert k.requested() == {"cpu": 3000, "pods": 1}
    assert sorted(k.pods().values()) == ["Rejected"] * 4 + ["Running"]


def test_pod_count_is_checked_first(driver, config, pod):
    d = driver(config(pods="1"))
    d.send("ADDED", pod("a"))
    d.send("ADDED", pod("b", cpu="64"))
    assert d.events == [
        (0.0, "b", "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1")
    ]


def test_node_name_mismatch(driver, pod):
    d = driver()
    d.host.kubelet("node-0").on_pod_event(WatchEvent("Pod", "ADDED", raw=encode(pod("x", node="node-9"))), 0.0)
    d.flush()
    assert d.events == [
        (0.0, "x", "NodeName", "Predicate NodeName failed: node(s) didn't match the requested node name")
    ]
    assert d.statuses["x"]["reason"] == "NodeName"


def test_only_the_first_failure_is_reported_but_all_are_collected():
    view = NodeView("n", {"cpu": 1000, "memory": 100, "pods": 0}, {}, 0)
    pod = {"spec": {"nodeName": "other"}}
    reqs = {"cpu": 2000, "memory": 200}
    assert general_filter(pod, reqs, view) == [
        InsufficientResource("pods", 1, 0, 0),
        InsufficientResource("cpu", 2000, 0, 1000),
        InsufficientResource("memory", 200, 0, 100),
        PredicateFailure("NodeName", "node(s) didn't match the requested node name"),
    ]
    assert admit(pod, reqs, view).reason == "OutOfpods"


def test_extended_resources_unknown_to_the_node_are_ignored():
    assert effective_requests({"cpu": 1, "example.com/foo": 1, "hugepages-2Mi": 4}, {"cpu": 1}) == {
        "cpu": 1,
        "hugepages-2Mi": 4,
    }
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


# ---- GeneralPredicates beyond resources --------------------------------------------------------


AFFINITY = ("NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")
PORTS = ("NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")
TAINT = ("TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate")
NAME = ("NodeName", "Predicate NodeName failed: node(s) didn't match the requested node name")


def roomy(**kw):
    base = dict(
        name="n",
        allocatable={"cpu": 4000, "memory": 8 * GI, "pods": 110},
        used={},
        pod_count=0,
        labels={"kubernetes.io/hostname": "n", "zone": "a", "gen": "5"},
    )
    return NodeView(**{**base, **kw})


def spec_pod(**spec):
    return {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [{"name": "c"}], **spec}}


def required(*exprs, fields=()):
    term = {}
    if exprs:
        term["matchExpressions"] = list(exprs)
    if fields:
        term["matchFields"] = list(fields)
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def outcome(pod, view=None, requests=None):
    r = admit(pod, requests or {}, view or roomy())
    return None if r is None else (r.reason, r.message)


@pytest.mark.parametrize(
    "spec, result",
    [
        ({}, None),
        ({"nodeSelector": {"zone": "a"}}, None),
        ({"nodeSelector": {"zone": "b"}}, AFFINITY),
        ({"nodeSelector": {"zone": "a", "disk": "ssd"}}, AFFINITY),
        ({"affinity": required({"key": "zone", "operator": "In", "values": ["a", "b"]})}, None),
        ({"affinity": required({"key": "zone", "operator": "NotIn", "values": ["a"]})}, AFFINITY),
        ({"affinity": required({"key": "gen", "operator": "Gt", "values": ["4"]})}, None),
        ({"affinity": required({"key": "gpu", "operator": "Exists"})}, AFFINITY),
        ({"affinity": required({"key": "gpu", "operator": "DoesNotExist"})}, None),
        ({"affinity": required(fields=[{"key": "metadata.name", "operator": "In", "values": ["n"]}])}, None),
        ({"affinity": required(fields=[{"key": "metadata.name", "operator": "In", "values": ["m"]}])}, AFFINITY),
        # nodeSelector and affinity must both hold
        (
            {"nodeSelector": {"zone": "b"}, "affinity": required({"key": "zone", "operator": "In", "values": ["a"]})},
            AFFINITY,
        ),
        # only preferred terms: nothing required
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 1,
                                "preference": {
                                    "matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]
                                },
                            }
                        ]
                    }
                }
            },
            None,
        ),
    ],
)
def test_node_affinity_and_selector(spec, result):
    assert outcome(spec_pod(**spec)) == result


def ports_pod(*ports, init=()):
    return spec_pod(
        containers=[{"name": "c", "ports": list(ports)}],
        initContainers=[{"name": "i", "ports": list(init)}] if init else [],
    )


@pytest.mark.parametrize(
    "ports, init, used, result",
    [
        ([{"containerPort": 80}], (), {("0.0.0.0", "TCP", 80)}, None),  # no hostPort: never conflicts
        ([{"containerPort": 80, "hostPort": 8080}], (), set(), None),
        ([{"containerPort": 80, "hostPort": 8080}], (), {("0.0.0.0", "TCP", 8080)}, PORTS),
        ([{"containerPort": 80, "hostPort": 8080}], (), {("0.0.0.0", "UDP", 8080)}, None),
        ([{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}], (), {("0.0.0.0", "UDP", 8080)}, PORTS),
        ([{"containerPort": 80, "hostPort": 8080}], (), {("10.0.0.1", "TCP", 8080)}, PORTS),  # 0.0.0.0 takes all IPs
        ([{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.2"}], (), {("10.0.0.1", "TCP", 8080)}, None),
        ([{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.2"}], (), {("0.0.0.0", "TCP", 8080)}, PORTS),
        ([], [{"containerPort": 53, "hostPort": 53}], {("0.0.0.0", "TCP", 53)}, PORTS),  # init containers count
    ],
)
def test_host_ports(ports, init, used, result):
    assert outcome(ports_pod(*ports, init=init), roomy(used_ports=frozenset(used))) == result


NO_EXECUTE = {"key": "dedicated", "value": "db", "effect": "NoExecute"}
NO_SCHEDULE = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "taints, tolerations, annotations, result",
    [
        ((), [], {}, None),
        ((NO_SCHEDULE,), [], {}, None),  # the kubelet leaves NoSchedule to the scheduler
        (({"key": "k", "effect": "PreferNoSchedule"},), [], {}, None),
        ((NO_EXECUTE,), [], {}, TAINT),
        ((NO_EXECUTE,), [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoExecute"}], {}, None),
        ((NO_EXECUTE,), [{"key": "dedicated", "operator": "Equal", "value": "web"}], {}, TAINT),
        ((NO_EXECUTE,), [{"key": "dedicated", "operator": "Exists"}], {}, None),
        ((NO_EXECUTE,), [{"operator": "Exists"}], {}, None),
        ((NO_EXECUTE,), [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}], {}, TAINT),
        (
            (NO_SCHEDULE, NO_EXECUTE),
            [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
            {},
            None,
        ),
        ((NO_EXECUTE,), [], {"kubernetes.io/config.source": "file"}, None),  # static pods are admitted anyway
        ((NO_EXECUTE,), [], {"kubernetes.io/config.source": "api"}, TAINT),
    ],
)
def test_no_execute_taints(taints, tolerations, annotations, result):
    p = spec_pod(tolerations=tolerations)
    p["metadata"]["annotations"] = annotations
    assert outcome(p, roomy(taints=taints)) == result


def test_failures_are_collected_in_upstream_order():
    p = spec_pod(
        nodeName="other",
        nodeSelector={"zone": "b"},
        tolerations=[],
        containers=[{"name": "c", "ports": [{"containerPort": 1, "hostPort": 1}]}],
    )
    view = roomy(
        allocatable={"cpu": 1000, "pods": 110}, taints=(NO_EXECUTE,), used_ports=frozenset({("0.0.0.0", "TCP", 1)})
    )
    failures = general_filter(p, {"cpu": 2000}, view)
    assert [getattr(f, "name", None) or f.resource for f in failures] == [
        "cpu",
        "NodeAffinity",
        "NodeName",
        "NodePorts",
        "TaintToleration",
    ]


# Each row fails exactly two checks; the reported one is the earlier in upstream's order.
@pytest.mark.parametrize(
    "pod_spec, view_kw, requests, reason",
    [
        ({"nodeSelector": {"zone": "b"}}, {}, {"cpu": 9000}, "OutOfcpu"),
        ({"nodeSelector": {"zone": "b"}, "nodeName": "other"}, {}, {}, "NodeAffinity"),
        (
            {"nodeName": "other", "containers": [{"name": "c", "ports": [{"containerPort": 1, "hostPort": 1}]}]},
            {"used_ports": frozenset({("0.0.0.0", "TCP", 1)})},
            {},
            "NodeName",
        ),
        (
            {"containers": [{"name": "c", "ports": [{"containerPort": 1, "hostPort": 1}]}]},
            {"used_ports": frozenset({("0.0.0.0", "TCP", 1)}), "taints": (NO_EXECUTE,)},
            {},
            "NodePorts",
        ),
        ({}, {"taints": (NO_EXECUTE,), "pod_count": 110}, {}, "OutOfpods"),
        ({"os": {"name": "windows"}}, {}, {"cpu": 9000}, "PodOSNotSupported"),  # checked before GeneralPredicates
    ],
)
def test_first_of_two_failures_wins(pod_spec, view_kw, requests, reason):
    p = spec_pod(**pod_spec)
    assert admit(p, requests, roomy(**view_kw)).reason == reason
    assert len(general_filter(p, requests, roomy(**view_kw))) == (1 if reason.startswith("PodOS") else 2)


@pytest.mark.parametrize(
    "advertised, requested, result",
    [
        ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 3}, [InsufficientResource("nvidia.com/gpu", 3, 1, 2)]),
        ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1}, []),
        ({"nvidia.com/gpu": 0}, {"nvidia.com/gpu": 1}, [InsufficientResource("nvidia.com/gpu", 1, 1, 0)]),
        ({}, {"nvidia.com/gpu": 1}, []),  # not advertised: dropped, the device manager refuses it instead
    ],
)
def test_extended_resources(advertised, requested, result):
    alloc = {"cpu": 1000, "pods": 10, **advertised}
    view = NodeView("n", alloc, {"nvidia.com/gpu": 1}, 0)
    reqs = effective_requests(requested, alloc)
    assert fits_resources({}, reqs, view) == result
    if result:
        r = admit({"spec": {}}, reqs, view)
        assert r.reason == "OutOfnvidia.com/gpu"
        assert r.message.startswith("Node didn't have enough resource: nvidia.com/gpu, requested: ")


def test_single_checks_are_usable_alone():
    view = roomy(taints=(NO_EXECUTE,), used_ports=frozenset({("0.0.0.0", "TCP", 1)}))
    p = spec_pod(nodeSelector={"zone": "b"}, containers=[{"name": "c", "ports": [{"hostPort": 1}]}])
    assert [f.name for f in node_affinity(p, {}, view) + node_ports(p, {}, view) + no_execute_taints(p, {}, view)] == [
        "NodeAffinity",
        "NodePorts",
        "TaintToleration",
    ]


def test_kubelet_labels_satisfy_hostname_affinity(driver, pod):
    d = driver()
    ok = pod("ok")
    ok["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-0", "kubernetes.io/os": "linux"}
    bad = pod("bad")
    bad["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-1"}
    d.send("ADDED", ok)
    d.send("ADDED", bad)
    assert [e[1:] for e in d.events] == [("bad", *AFFINITY)]
    assert d.statuses["bad"]["reason"] == "NodeAffinity"
    assert d.statuses["ok"]["phase"] == "Running"


def test_kubelet_rejects_untolerated_no_execute_taint(driver, config, pod):
    d = driver(config(taints=[NO_EXECUTE]))
    tolerating = pod("tol")
    tolerating["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    d.send("ADDED", pod("plain"))
    d.send("ADDED", tolerating)
    assert [e[1:] for e in d.events] == [("plain", *TAINT)]
    assert d.statuses["tol"]["phase"] == "Running"
