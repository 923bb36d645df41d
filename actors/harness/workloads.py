"""The benchmarks' workloads: scheduler_perf's shapes as node pools and pods.

Owns the node shape (4 CPU / 32Gi / 110 pods, spread over ``ZONES`` zones), the
SchedulingBasic pod (100m / 500Mi) and the ``mixed`` variant where a third of the pods
carry inter-pod or spread constraints, and PreemptionAsync's shape (four low-priority 900m
pods fill a node; a 3-CPU high-priority pod must preempt three; the measured 100m pods fit
in the room left). Used by every
``kubemu bench``; nothing here starts anything.
"""

from __future__ import annotations

from typing import Any

from cluster.scenario.schema import NodePool

CREATE_BATCH = 1000
ZONES = 10
GROUP = 50  # pods per app label in the mixed workload
WORKLOADS = ("basic", "mixed")
ZONE_KEY, HOST_KEY = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def bench_pod(i: int, workload: str = "basic") -> dict:
    """Pod ``i`` of a workload. ``mixed``: pods belong to apps of ``GROUP``; every third
    pod carries, in turn, preferred anti-affinity to its app on the hostname, a zone
    spread constraint (maxSkew 1, DoNotSchedule) over its app, or required affinity to its
    app's zone."""
    app = f"app-{i // GROUP}" if workload == "mixed" else "bench"
    spec: dict = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]
    }
    same_app = {"matchLabels": {"app": app}}
    if workload == "mixed" and i % 3 == 0:
        kind = (i // 3) % 3
        if kind == 0:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": {"labelSelector": same_app, "topologyKey": HOST_KEY}}
                    ]
                }
            }
        elif kind == 1:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": same_app}
            ]
        else:
            spec["affinity"] = {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": same_app, "topologyKey": ZONE_KEY}
                    ]
                }
            }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default", "labels": {"app": app}},
        "spec": spec,
    }


def bench_pools(nodes: int) -> list[NodePool]:
    per_zone, extra = divmod(nodes, ZONES)
    return [
        NodePool(
            namePrefix=f"z{z}-node",
            count=per_zone + (z < extra),
            labels={ZONE_KEY: f"zone-{z}"},
            capacity={"cpu": "4", "memory": "32Gi", "pods": "110"},
        )
        for z in range(ZONES)
        if per_zone + (z < extra)
    ]


PRIORITY_CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "bench-low"}, "value": 10},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "bench-high"}, "value": 1000},
]
FILL_PER_NODE = 4


def preemptor_pod(name: str) -> dict:
    """PreemptionAsync's high-priority pod: 3 CPU, so it needs three 900m victims on a full node."""
    pod = preempt_pod(name, "bench-high")
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    return pod


def preempt_pod(name: str, priority_class: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": priority_class}},
        "spec": {
            "priorityClassName": priority_class,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "900m", "memory": "500Mi"}}}
            ],
        },
    }


# bench preempt's workloads: PreemptionAsync (the default) and PreemptionBasic.
PREEMPT_ASYNC, PREEMPT_BASIC = "async", "basic"
PREEMPT_WORKLOADS = (PREEMPT_ASYNC, PREEMPT_BASIC)
# PreemptionBasic's measured pods have priority 10 (scheduler_perf sets spec.priority; here a
# PriorityClass gives it, as priority admission requires) and its fill pods priority 0.
BASIC_HIGH_CLASS_NAME = "bench-basic-high"
BASIC_PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": BASIC_HIGH_CLASS_NAME},
    "value": 10,
}


def _basic_pod(name: str, cpu: str) -> dict:
    res = {"cpu": cpu, "memory": "500Mi"}
    container: dict[str, Any] = {"name": "pause", "image": "pause", "ports": [{"containerPort": 80}]}
    container["resources"] = {"requests": dict(res), "limits": dict(res)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": [container]},
    }


def basic_low_pod(i: int) -> dict:
    """PreemptionBasic's fill pod (pod-low-priority.yaml): 900m, priority 0, grace 0."""
    return _basic_pod(f"low-{i}", "900m")


def basic_high_pod(i: int) -> dict:
    """PreemptionBasic's measured pod (pod-high-priority.yaml): 3 CPU, priority 10."""
    pod = _basic_pod(f"high-{i}", "3")
    pod["spec"]["priorityClassName"] = BASIC_HIGH_CLASS_NAME
    del pod["spec"]["terminationGracePeriodSeconds"]  # the template leaves it at the default
    return pod
