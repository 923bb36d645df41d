"""The scheduler's search width end to end on the local runtime: the same scenario with
``percentageOfNodesToScore: 100`` (every feasible node scored) and with the default
(upstream's adaptive width, filtering stopped early from a rotating start) places every
pod, and never beyond a node's capacity. The pods fill the cluster exactly, so the later
ones find few feasible nodes and the search must go all the way round."""

from collections import Counter

import pytest
from scenariofiles import failed, quiet

from cluster.scenario.local import run_local
from cluster.scenario.schema import load

POOLS = {"small": (150, 2), "big": (50, 8)}  # name prefix: (nodes, cpus); 700 cpus in all
PODS = 700  # one cpu each


def scenario(percentage: int | None) -> dict:
    spec: dict = {
        "seed": 3,
        "runtime": "local",
        "duration": "300s",
        "cluster": {
            "nodes": [
                {"namePrefix": name, "count": count, "capacity": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi"}}
                for name, (count, cpu) in POOLS.items()
            ]
        },
        "timeline": [{"at": "1s", "create": [{"repeat": PODS, "template": pod_template()}]}],
        "expect": [
            {"at": "end", "count": {"kind": "Pod", "phase": "Running", "labelSelector": "app=w"}, "equals": PODS}
        ],
    }
    if percentage is not None:
        spec["scheduler"] = {"percentageOfNodesToScore": percentage}
    return {"apiVersion": "kubemu.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "search-width"}, "spec": spec}


def pod_template() -> dict:
    requests = {"cpu": "1", "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "w", "labels": {"app": "w"}},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]},
    }


@pytest.mark.parametrize("percentage", [100, None, 10])
def test_every_pod_is_placed_within_capacity_at_any_search_width(percentage):
    report = run_local(load(scenario(percentage)), quiet)
    assert report["passed"], failed(report)
    pods = [p for p in report["pods"] if p["labels"].get("app") == "w"]
    assert len(pods) == PODS and all(p["phase"] == "Running" and p["nodeName"] for p in pods)
    per_node = Counter(p["nodeName"] for p in pods)
    for node, used in per_node.items():
        prefix = node.rsplit("-", 1)[0]
        assert used <= POOLS[prefix][1], (node, used)  # one cpu per pod: no overcommit
    assert sum(per_node.values()) == sum(count * cpu for count, cpu in POOLS.values())  # the cluster is full
