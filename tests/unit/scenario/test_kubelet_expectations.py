"""The kubelet-facing parts of scenarios: the cpusetsExclusive and devicesExclusive
invariants, the pod and node fields issue 5 added, ``until`` and ``eventOrder``."""

from cluster.scenario.expectations import Tracker, check
from cluster.scenario.mirror import Mirror
from cluster.scenario.podresources import cpuset_violations, device_violations
from cluster.scenario.schema import Expectation

GPU = "nvidia.com/gpu"


def exp(**kw):
    return Expectation.model_validate(kw)


# ---- the invariants ---------------------------------------------------------------------------


def test_cpusets_exclusive_holds_for_pinned_and_shared_pods():
    pods = [
        ("d/g2", "n1", "1-2"),
        ("d/g3", "n1", "3-5"),
        ("d/web", "n1", "0,6-7"),
        ("d/web2", "n1", "0,6-7"),
        ("d/other", "n2", "1-2"),
        ("d/none", "n1", None),
    ]
    assert cpuset_violations(pods, {"n1": "0,6-7", "n2": "0,3-7"}) == []


def test_cpusets_exclusive_fails_on_overlapping_pins():
    pods = [("d/a", "n1", "1-2"), ("d/b", "n1", "2-3")]
    assert cpuset_violations(pods, {"n1": "0,4-7"}) == [
        "node n1: CPUs 2 of pod d/a (exclusive) are also in the cpuset of pod d/b",
        "node n1: CPUs 2 of pod d/b (exclusive) are also in the cpuset of pod d/a",
    ]


def test_cpusets_exclusive_fails_when_a_shared_pod_runs_on_a_pinned_cpu():
    # d/web's cpuset still lists CPU 3 although d/a holds it exclusively (CPU 3 is outside
    # the shared pool, so from the data alone each of the two seems to pin it).
    assert cpuset_violations([("d/a", "n1", "3"), ("d/web", "n1", "0-3")], {"n1": "0-2"}) == [
        "node n1: CPUs 3 of pod d/a (exclusive) are also in the cpuset of pod d/web",
        "node n1: CPUs 3 of pod d/web (exclusive) are also in the cpuset of pod d/a",
    ]


def test_cpusets_exclusive_uses_the_kubelets_exclusive_cpus_and_checks_the_shared_pool():
    # CPU 3 is pinned to d/a but was left in the shared pool: every shared pod runs on it.
    pods = [("d/a", "n1", "3", "3"), ("d/web", "n1", "0-3", "")]
    assert cpuset_violations(pods, {"n1": "0-3"}) == [
        "node n1: CPUs 3 of pod d/a (exclusive) are also in the shared pool",
        "node n1: CPUs 3 of pod d/a (exclusive) are also in the cpuset of pod d/web",
    ]
    assert cpuset_violations([("d/a", "n1", "3", "3"), ("d/web", "n1", "0-2", "")], {"n1": "0-2"}) == []


def test_cpuset_expectation_compares_cpus_not_spelling():
    m = Mirror()
    m.apply("Pod", "ADDED", _pod("a", "ua"), 0, 0)
    m.set_pod_resources({"ua": {"node": "n1", "cpuset": "1-2,6"}}, {"n1": {"sharedCpus": "0,3-5,7"}}, 1.0)
    assert check(exp(at="end", pod={"name": "a"}, cpuset="6,1,2"), m)[0]
    assert not check(exp(at="end", pod={"name": "a"}, cpuset="1-2"), m)[0]
    m.set_pod_resources({}, {}, 2.0)
    assert not check(exp(at="end", pod={"name": "a"}, cpuset=""), m)[0]  # no view: no cpuset


def test_devices_exclusive():
    ok = [("d/a", {GPU: ["n1-gpu-0", "n1-gpu-1"]}), ("d/b", {GPU: ["n1-gpu-2"]}), ("d/c", {})]
    assert device_violations(ok) == []
    bad = ok + [("d/x", {GPU: ["n1-gpu-1"]})]
    assert device_violations(bad) == ["device n1-gpu-1 (nvidia.com/gpu) is held by pods d/a and d/x"]


def _pod(name, uid, node="n1", phase="Running", status=None):
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": {"phase": phase, **(status or {})},
    }


def test_mirror_records_violations_from_the_pod_resources_view():
    m = Mirror()
    m.apply("Pod", "ADDED", _pod("a", "ua"), 0, 0)
    m.apply("Pod", "ADDED", _pod("b", "ub"), 0, 0)
    view = {
        "ua": {"node": "n1", "cpuset": "1-2", "devices": {GPU: ["n1-gpu-0"]}},
        "ub": {"node": "n1", "cpuset": "2", "devices": {GPU: ["n1-gpu-0"]}},
    }
    m.set_pod_resources(view, {"n1": {"sharedCpus": "0,3"}}, 5.0)
    m.set_pod_resources(view, {"n1": {"sharedCpus": "0,3"}}, 6.0)  # the same problems are not repeated
    assert m.violations["devicesExclusive"] == [
        "at 5.0s device n1-gpu-0 (nvidia.com/gpu) is held by pods default/a and default/b"
    ]
    assert len(m.violations["cpusetsExclusive"]) == 2
    ok, detail = check(exp(always=True, invariant="devicesExclusive"), m)
    assert not ok and "n1-gpu-0" in detail


# ---- pod and node fields ----------------------------------------------------------------------


def test_pod_container_fields():
    m = Mirror()
    cs = {
        "name": "c",
        "restartCount": 3,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
    }
    m.apply(
        "Pod",
        "ADDED",
        _pod("leaky", "u1", status={"containerStatuses": [cs], "message": "Pod was rejected: x y"}),
        0,
        0,
    )
    assert check(
        exp(
            at="end",
            pod={"name": "leaky"},
            restartCount={"atLeast": 2},
            terminationReason="OOMKilled",
            waitingReason="CrashLoopBackOff",
            message="x y",
        ),
        m,
    )[0]
    assert not check(exp(at="end", pod={"name": "leaky"}, restartCount={"equals": 0}), m)[0]
    assert not check(exp(at="end", pod={"name": "leaky"}, terminationReason="Error"), m)[0]


def test_pod_resource_fields():
    m = Mirror()
    m.apply("Pod", "ADDED", _pod("t", "u1"), 0, 0)
    m.set_pod_resources(
        {
            "u1": {
                "node": "n1",
                "cpuset": "1-2",
                "devices": {GPU: ["a", "b"]},
                "env": {"c": {"NVIDIA_VISIBLE_DEVICES": "a,b"}},
                "usage": {"cpuThrottled": True},
            }
        },
        {},
        1.0,
    )
    assert check(
        exp(
            at="end",
            pod={"name": "t"},
            cpuset="1-2",
            devices={GPU: 2},
            env={"NVIDIA_VISIBLE_DEVICES": "a,b"},
            cpuThrottled=True,
        ),
        m,
    )[0]
    assert check(exp(at="end", pod={"name": "t"}, env={"NVIDIA_VISIBLE_DEVICES": "*"}), m)[0]
    assert not check(exp(at="end", pod={"name": "t"}, env={"OTHER": "*"}), m)[0]
    assert not check(exp(at="end", pod={"name": "t"}, devices={GPU: 1}), m)[0]


def test_node_fields():
    m = Mirror()
    node = {
        "kind": "Node",
        "metadata": {"name": "n1"},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {GPU: "4"},
            "allocatable": {GPU: "3", "memory": "1Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    m.apply("Node", "ADDED", node, 0, 0)
    assert check(
        exp(
            at="end",
            node="n1",
            allocatable={GPU: 3, "memory": "1024Mi"},
            capacity={GPU: "4"},
            noTaint={"key": "node.kubernetes.io/memory-pressure"},
        ),
        m,
    )[0]
    assert not check(exp(at="end", node="n1", noTaint={"key": "k"}), m)[0]
    assert not check(exp(at="end", node="n1", allocatable={GPU: 4}), m)[0]


def _event(reason, name, t):
    return {
        "kind": "Event",
        "reason": reason,
        "type": "Warning",
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": name},
        "metadata": {"annotations": {"kubemu.io/time": str(t)}},
    }


def test_event_order():
    m = Mirror()
    e = exp(within=60, eventOrder={"reason": "Evicted", "objects": ["Pod/default/a", "Pod/default/b"]})
    m.apply("Event", "ADDED", _event("Evicted", "a", 1), 0, 0)
    assert not check(e, m)[0]
    m.apply("Event", "ADDED", _event("Killing", "a", 1), 0, 0)
    m.apply("Event", "ADDED", _event("Evicted", "b", 2), 0, 0)
    assert check(e, m) == (True, "Evicted events for Pod/default/a, Pod/default/b")
    m.apply("Event", "ADDED", _event("Evicted", "c", 3), 0, 0)
    assert not check(e, m)[0]


def test_until_holds_at_every_observation_up_to_its_time():
    m = Mirror()
    held = exp(until="10s", event={"reason": "Evicted"}, equals=0)
    broken = exp(until="10s", event={"reason": "Evicted"}, equals=0)
    t = Tracker([held])
    t.observe(m, 5)
    assert t.verdicts[0].ok is None and not t.settled(m)
    t.observe(m, 10.5)
    assert t.verdicts[0].ok is True and t.verdicts[0].detail.startswith("held until 10s")
    m.apply("Event", "ADDED", _event("Evicted", "a", 11), 0, 0)  # later events do not matter
    t.observe(m, 12)
    assert t.verdicts[0].ok is True
    t2 = Tracker([broken])
    t2.observe(m, 3)
    assert t2.verdicts[0].ok is False
