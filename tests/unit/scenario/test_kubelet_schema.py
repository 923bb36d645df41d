"""Loading the kubelet parts of a scenario: chaos actions, pod defaults, kubelet settings,
and one-line errors naming the field and value for each."""

import pytest

from cluster.scenario.repeat import expanded
from cluster.scenario.schema import ScenarioError, load

GPU = "nvidia.com/gpu"


def scenario(objects=(), kubelet=None, **spec):
    pool = {"namePrefix": "n", "count": 2, "capacity": {"cpu": "4", "memory": "8Gi", GPU: "2"}}
    if kubelet is not None:
        pool["kubelet"] = kubelet
    return {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "t"},
        "spec": {"cluster": {"nodes": [pool]}, "objects": list(objects), **spec},
    }


def pod(name="p", labels=None, annotations=None):
    meta = {"name": name, "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c", "image": "x"}]}}


def chaos(**c):
    return scenario(timeline=[{"at": "5s", "chaos": c}])


def test_chaos_actions_load():
    s = load(
        scenario(
            timeline=[
                {
                    "at": "5s",
                    "chaos": {"action": "pressure", "node": "n-1", "memory": "3Gi", "pids": 100, "duration": "1m"},
                },
                {
                    "at": "6s",
                    "chaos": {"action": "deviceHealth", "node": "n-0", "resource": GPU, "device": 1, "healthy": False},
                },
                {
                    "at": "7s",
                    "chaos": {
                        "action": "deviceHealth",
                        "node": "n-0",
                        "resource": GPU,
                        "device": "n-0-gpu-1",
                        "healthy": True,
                    },
                },
                {"at": "8s", "chaos": {"action": "killNode", "node": "n-1"}},
                {"at": "9s", "chaos": {"action": "devicePlugin", "node": "n-1", "resource": GPU, "running": False}},
            ]
        )
    )
    c = s.spec.timeline[0].chaos
    assert c.extra_usage() == {"memory": 3 * 2**30, "pids": 100} and c.duration_seconds() == 60.0


@pytest.mark.parametrize(
    "doc, message",
    [
        (
            chaos(action="pressure", node="n-7", memory="1Gi"),
            'spec.timeline[0].chaos.node: "n-7" is not a node of this scenario (nodes: n-0, n-1)',
        ),
        (
            chaos(action="pressure", node="n-0"),
            "spec.timeline[0].chaos.memory: Required value: pressure needs at least one of memory, disk, inodes, pids",
        ),
        (
            chaos(action="pressure", node="n-0", memory="lots"),
            'spec.timeline[0].chaos.memory: "lots" is not a quantity',
        ),
        (
            chaos(action="pressure", node="n-0", disk="-1Gi"),
            'spec.timeline[0].chaos.disk: "-1Gi" must be greater than or equal to 0',
        ),
        (chaos(action="pressure", node="n-0", pids="1.5"), 'spec.timeline[0].chaos.pids: "1.5" must be a whole number'),
        (
            chaos(action="pressure", node="n-0", memory="1Gi", duration="soon"),
            'spec.timeline[0].chaos.duration: "soon" is not a duration (use e.g. 30s, 5m, 1h30m)',
        ),
        (
            chaos(action="killNode", node="n-0", memory="1Gi"),
            "spec.timeline[0].chaos.memory: not a field of killNode (it takes node)",
        ),
        (
            chaos(action="deviceHealth", node="n-0", resource=GPU, device=1),
            "spec.timeline[0].chaos.healthy: Required value for deviceHealth",
        ),
        (
            chaos(action="deviceHealth", node="n-0", resource="example.com/fpga", device=0, healthy=False),
            'spec.timeline[0].chaos.resource: "example.com/fpga" is not an extended resource of n-0 (it has: nvidia.com/gpu)',
        ),
        (
            chaos(action="deviceHealth", node="n-0", resource=GPU, device=2, healthy=False),
            "spec.timeline[0].chaos.device: 2 is out of range for nvidia.com/gpu on n-0 (0..1)",
        ),
        (
            chaos(action="deviceHealth", node="n-0", resource=GPU, device="n-1-gpu-0", healthy=False),
            'spec.timeline[0].chaos.device: "n-1-gpu-0" is not a device of nvidia.com/gpu on n-0',
        ),
        (
            scenario(kubelet={"cpuManagerPolicy": "static"}),
            'spec.cluster.nodes[0].kubelet.cpuManagerPolicy: "static" needs a cpu reservation greater than zero',
        ),
        (
            scenario(kubelet={"evictionHard": {"memory.availble": "1Gi"}}),
            'spec.cluster.nodes[0].kubelet.evictionHard: unsupported eviction signal "memory.availble"',
        ),
        (
            scenario(kubelet={"evictionSoftGracePeriod": {"memory.available": "later"}}),
            'spec.cluster.nodes[0].kubelet.evictionSoftGracePeriod.memory.available: "later" is not a duration',
        ),
        (scenario(kubelet={"maxPods": 10}), "spec.cluster.nodes[0].kubelet.maxPods: unknown field"),
        (
            scenario([pod(annotations={"kubemu.io/memory-usage": "ramp(1Gi, 2Gi)"})]),
            'spec.objects[0].metadata.annotations[kubemu.io/memory-usage]: "ramp(1Gi, 2Gi)" has 2 arguments; '
            "ramp(from, to, over) takes 3",
        ),
        (
            scenario([pod()], defaults=[{"annotations": {"kubemu.io/cpu-usage": "spike(1, 2, 3s)"}}]),
            'spec.objects[0].metadata.annotations[kubemu.io/cpu-usage]: "spike(1, 2, 3s)" has 3 arguments',
        ),
        (
            scenario(defaults=[{"labelSelector": "app in web", "annotations": {}}]),
            'spec.defaults[0].labelSelector: "app in web"',
        ),
        (scenario(defaults=[{"selector": "app=web"}]), "spec.defaults[0].selector: unknown field"),
        (
            scenario(expect=[{"at": "end", "node": "n-0", "cpuset": "1"}]),
            "spec.expect[0].cpuset: a pod field, but this expectation observes node",
        ),
        (
            scenario(expect=[{"at": "end", "pod": {"name": "p"}, "restartCount": {}}]),
            "spec.expect[0].restartCount: needs equals, atLeast or atMost",
        ),
        (
            scenario(expect=[{"at": "end", "node": "n-0", "allocatable": {GPU: "two"}}]),
            'spec.expect[0].allocatable.nvidia.com/gpu: "two" is not a quantity',
        ),
        (
            chaos(action="deviceHealth", node="n-0", resource=GPU, device=True, healthy=False),
            "spec.timeline[0].chaos.device: true is not a device index (0, 1, ...) or a device ID",
        ),
        (
            chaos(action="deviceHealth", node="n-0", resource=GPU, device=1.5, healthy=False),
            "spec.timeline[0].chaos.device: 1.5 is not a device index (0, 1, ...) or a device ID",
        ),
        (
            chaos(action="devicePlugin", node="n-0", resource=GPU),
            "spec.timeline[0].chaos.running: Required value for devicePlugin",
        ),
        (
            chaos(action="devicePlugin", node="n-0", resource="example.com/fpga", running=False),
            'spec.timeline[0].chaos.resource: "example.com/fpga" is not an extended resource of n-0 (it has: nvidia.com/gpu)',
        ),
        (
            chaos(action="devicePlugin", node="n-0", resource=GPU, running=False, device=1),
            "spec.timeline[0].chaos.device: not a field of devicePlugin (it takes node, resource, running)",
        ),
        (
            scenario(kubelet={"devicePlugins": {GPU: 2}}),
            "spec.cluster.nodes[0].kubelet.devicePlugins[nvidia.com/gpu]: 2 is not a mapping of settings",
        ),
        (
            scenario(kubelet={"devicePlugins": [GPU]}),
            "spec.cluster.nodes[0].kubelet.devicePlugins: ['nvidia.com/gpu'] is not a mapping of extended resource",
        ),
        (
            scenario(kubelet={"devicePlugins": {GPU: {"numaNodes": "two"}}}),
            "spec.cluster.nodes[0].kubelet.devicePlugins[nvidia.com/gpu].numaNodes: 'two' must be a whole number >= 0",
        ),
        (
            scenario(kubelet={"devicePlugins": {GPU: {"preferredAllocation": "yes"}}}),
            "spec.cluster.nodes[0].kubelet.devicePlugins[nvidia.com/gpu].preferredAllocation: 'yes' must be true or "
            "false",
        ),
        (
            scenario(kubelet={"enforceNodeAllocatable": ["pods", "podz"]}),
            'spec.cluster.nodes[0].kubelet.enforceNodeAllocatable[1]: "podz" is not an option (valid: pods, '
            "system-reserved, kube-reserved, none)",
        ),
        (
            scenario(kubelet={"enforceNodeAllocatable": ["none", "pods"]}),
            'spec.cluster.nodes[0].kubelet.enforceNodeAllocatable: ["none", "pods"] may not contain other enforcements',
        ),
        (
            {
                **scenario(),
                "spec": {
                    **scenario()["spec"],
                    "cluster": {"nodes": [{"namePrefix": "n", "capacity": {"cpu": "4", "memory": "8Gi", GPU: "1.5"}}]},
                },
            },
            'spec.cluster.nodes[0].capacity.nvidia.com/gpu: "1.5" must be an integer',
        ),
        (
            scenario(expect=[{"at": "end", "pod": {"name": "p"}, "cpuset": "1-a"}]),
            'spec.expect[0].cpuset: "1-a" is not a cpuset',
        ),
        (
            scenario(expect=[{"always": True, "invariant": "gpusShared"}]),
            'spec.expect[0].invariant: "gpusShared" is not an invariant (known: noOvercommit, noDoubleBinding, '
            "cpusetsExclusive, devicesExclusive, noLostPods, rolloutBounds, statefulSetIdentity)",
        ),
    ],
)
def test_bad_kubelet_input_is_one_line(doc, message):
    with pytest.raises(ScenarioError) as err:
        load(doc)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(message), text


def test_defaults_fill_matching_pods_without_overriding_their_own():
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    s = load(
        scenario(
            [
                pod("web", {"app": "web"}),
                pod("own", {"app": "web"}, {"kubemu.io/memory-usage": "1Gi"}),
                pod("db", {"app": "db"}),
                rs,
            ],
            defaults=[
                {"annotations": {"kubemu.io/memory-usage": "64Mi", "kubemu.io/start-seconds": "1"}},
                {"labelSelector": "app=web", "annotations": {"kubemu.io/memory-usage": "ramp(100Mi, 1Gi, 60s)"}},
            ],
            timeline=[{"at": "1s", "create": [{"repeat": 2, "template": pod("late", {"app": "web"})}]}],
        )
    )
    ann = {o["metadata"]["name"]: o["metadata"].get("annotations") for o in s.spec.objects if o["kind"] == "Pod"}
    assert ann["web"] == {"kubemu.io/memory-usage": "ramp(100Mi, 1Gi, 60s)", "kubemu.io/start-seconds": "1"}
    assert ann["own"]["kubemu.io/memory-usage"] == "1Gi"
    assert ann["db"] == {"kubemu.io/memory-usage": "64Mi", "kubemu.io/start-seconds": "1"}
    assert (
        s.spec.objects[3]["spec"]["template"]["metadata"]["annotations"]["kubemu.io/memory-usage"]
        == "ramp(100Mi, 1Gi, 60s)"
    )
    late = [o["metadata"]["annotations"]["kubemu.io/memory-usage"] for o in expanded(s.spec.timeline[0].create)]
    assert late == ["ramp(100Mi, 1Gi, 60s)"] * 2
