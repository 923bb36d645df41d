"""The quickstart scenario (``make run``) end to end through the real actors on a local Ray."""

import pytest
from scenariofiles import ROOT, failed, quiet

from actors.harness.ray import run_on_ray
from cluster.scenario.schema import load_file

pytestmark = pytest.mark.ray


def test_quickstart_passes_through_the_actors(ray_local):
    report = run_on_ray(load_file(str(ROOT / "scenarios/quickstart.yaml")), quiet)
    assert report["passed"], failed(report)
    pods = {p["name"]: p for p in report["pods"]}
    assert {n: pods[n]["qosClass"] for n in ("guaranteed", "burstable", "besteffort")} == {
        "guaranteed": "Guaranteed",
        "burstable": "Burstable",
        "besteffort": "BestEffort",
    }
    assert pods["batch"]["phase"] == "Succeeded"
    assert "web" not in pods  # deleted gracefully, confirmed by its kubelet
    assert pods["guaranteed"]["cgroup"]["parent"].startswith("kubepods/pod")
    assert all(n["ready"] for n in report["nodes"]) and len(report["nodes"]) == 3
    assert report["metrics"]["podsScheduled"] >= 5
    assert {e["reason"] for e in report["events"]} >= {"Scheduled", "Killing"}
