"""The Ray subset of the scenario suite: one scenario per folder runs on both runtimes and
gives the same verdict on every expectation, and each chaos action that stops processes
runs on Ray (``killHost`` here, ``killRayNode`` in ``test_ray_nodes.py``)."""

import pytest
from scenariofiles import NEEDS_PROCESSES, ROOT, failed, quiet

from actors.harness.ray import run_on_ray
from cluster.scenario.local import run_local
from cluster.scenario.schema import load_file

pytestmark = pytest.mark.ray
ONE_PER_FOLDER = [
    "scheduling/taints",
    "preemption/basic",
    "kubelet/memory-pressure",
    "chaos/scheduler-restart",
    "yunikorn/law5-sibling-over-guarantee",
    "workloads/rolling-update",
]


def verdicts(report: dict) -> list[tuple[str, bool]]:
    return [(e["spec"], e["ok"]) for e in report["expectations"]]


def evicted(report: dict) -> tuple[set[str], set[str]]:
    """The pods whose status says the kubelet evicted them, and those with an Evicted event."""
    pods = {f"Pod/default/{p['name']}" for p in report["pods"] if p.get("reason") == "Evicted"}
    return pods, {e["object"] for e in report["events"] if e["reason"] == "Evicted"}


@pytest.mark.parametrize("name", ONE_PER_FOLDER)
def test_a_scenario_gives_the_same_verdicts_on_both_runtimes(ray_local, name):
    path = str(ROOT / "scenarios" / f"{name}.yaml")
    on_ray = run_on_ray(load_file(path), quiet)
    local = run_local(load_file(path, ["spec.runtime=local"]), quiet)
    assert on_ray["passed"], failed(on_ray)
    assert (on_ray["runtime"], local["runtime"]) == ("ray", "local")
    assert verdicts(on_ray) == verdicts(local)
    pods, events = evicted(on_ray)
    assert pods <= events  # the report holds the event of every eviction it shows


@pytest.mark.parametrize("name", [n for n, needs in NEEDS_PROCESSES.items() if needs == "killHost"])
def test_chaos_that_stops_a_host_process_runs_on_ray(ray_local, name):
    # At the file's own time scale: a restart's real seconds become emulated ones, and a
    # faster scale on a slow machine pushed the evictions past the file's window.
    report = run_on_ray(load_file(str(ROOT / "scenarios" / f"{name}.yaml")), quiet)
    assert report["passed"], failed(report)
    (kill,) = [entry for entry in report["chaos"] if entry["action"] == "killHost"]
    assert len(kill["detail"].removeprefix("nodes down: ").split(", ")) == 10  # the rack's host process
