"""Small builders for the sampler and page tests: Nodes and Pods as the watch shows them,
fed to a ``Mirror`` the way the driver feeds it, and a report of a large synthetic run."""

from __future__ import annotations

from cluster.scenario.mirror import Mirror
from cluster.scenario.sampler import Sampler


def node(name: str, ready: bool = True, cpu: str = "4", memory: str = "8Gi") -> dict:
    return {
        "kind": "Node",
        "metadata": {"name": name},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True" if ready else "Unknown"}],
        },
    }


def pod(name: str, uid: str, phase: str = "Pending", node_name: str = "", cpu: str = "1", **status) -> dict:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase, **status},
    }


def unschedulable(name: str, uid: str) -> dict:
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available"}
    return pod(name, uid, conditions=[cond])


def feed(mirror: Mirror, kind: str, obj: dict, now: float) -> None:
    mirror.apply(kind, "MODIFIED" if kind == "Node" else "ADDED", obj, now, now)


def big_report(nodes: int, observations: int) -> dict:
    """The pictures' sections of a run of ``nodes`` nodes, each taking one pod, one node
    more every observation."""
    mirror, sampler = Mirror(), Sampler()
    for i in range(nodes):
        feed(mirror, "Node", node(f"node-{i}"), 0.0)
    for k in range(observations):
        i = k % nodes
        feed(mirror, "Pod", pod(f"p-{k}", f"u{k}", "Running", f"node-{i}"), float(k))
        sampler.observe(mirror, float(k))
    sampler.observe(mirror, float(observations), final=True)
    return {
        "scenario": "big",
        "passed": True,
        "endedAt": float(observations),
        "wallSeconds": 1.0,
        **sampler.report(mirror),
    }
