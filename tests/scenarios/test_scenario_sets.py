"""Every scenario under scenarios/scheduling/, scenarios/preemption/, scenarios/kubelet/ and
scenarios/chaos/ passes end to end through the real actors (``chaos/ray-nodes`` needs a
Ray cluster of its own: ``test_ray_nodes.py`` runs it in a fresh process).

Each file states its own expectations (placements, FailedScheduling and Preempted events,
counts); the test runs it and reports the expectations that failed.
"""

import pathlib

import pytest

from actors.driver import run_scenario
from cluster.scenario.schema import load_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
REQUIRED = {
    "scheduling": {
        "node-selector",
        "node-affinity",
        "taints",
        "host-ports",
        "pod-anti-affinity",
        "pod-affinity-zone",
        "topology-spread",
        "extended-resource",
        "fits-later",
    },
    "preemption": {"basic", "nominated-wait", "higher-preemptor", "never", "pdb", "system-critical", "unresolvable"},
    "kubelet": {"nodename-outofcpu", "memory-pressure", "soft-eviction", "oom", "cpu-manager", "gpus"},
    "chaos": {
        "node-kill",
        "host-kill",
        "host-restart",
        "apiserver-restart",
        "scheduler-restart",
        "daemonset",
        "ray-nodes",
    },
}
OWN_RAY = {"ray-nodes"}  # spec.cluster.rayNodes: run by test_ray_nodes.py
SCENARIOS = sorted(p for d in REQUIRED for p in (ROOT / "scenarios" / d).glob("*.yaml") if p.stem not in OWN_RAY)


@pytest.mark.parametrize("folder", sorted(REQUIRED))
def test_the_sets_are_complete(folder):
    assert {p.stem for p in (ROOT / "scenarios" / folder).glob("*.yaml")} >= REQUIRED[folder]


@pytest.mark.ray
@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parent.name}/{p.stem}" for p in SCENARIOS])
async def test_scenario(ray_local, path):
    report = await run_scenario(load_file(str(path)), log=lambda s: None)
    failed = [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
    assert report["passed"], failed
    if path.stem == "apiserver-restart":
        # The restarted apiserver expired every watch: the driver relisted its four kinds.
        assert report["watch"]["relists"] >= 4, report["watch"]
