"""The quickstart scenario end to end through the real actors on a local Ray."""

import pathlib

import pytest

from actors.driver import run_scenario
from cluster.scenario.schema import load_file

pytestmark = pytest.mark.ray
ROOT = pathlib.Path(__file__).resolve().parents[2]


async def test_quickstart_passes_through_the_actors(ray_local):
    report = await run_scenario(load_file(str(ROOT / "scenarios/quickstart.yaml")), log=lambda s: None)
    failed = [e for e in report["expectations"] if not e["ok"]]
    assert report["passed"], failed
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
