"""The Ray subset of the scenario suite: one scenario per folder runs on both runtimes and
gives the same verdict on every expectation and the same events, object by object, at the
same emulated times (Ray steps its clock as the local runtime does; within one instant its
components act at once, so only the order of events written at the same instant may
differ); each chaos action that stops
processes runs on Ray (``killHost`` here, ``killRayNode`` in ``test_ray_nodes.py``); a
``timeScale`` paces a Ray run by the wall clock and the report says how it went. Every
shipped scenario on Ray: ``test_every_scenario_on_ray.py`` (``make test-ray``)."""

import re
import time

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


# A name the apiserver drew for a ``generateName`` (upstream's alphabet): which pod of a
# ReplicaSet gets which name depends on the order the writes of one instant arrived in.
GENERATED = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$")


def event_order(report: dict) -> tuple[dict[str, list], list]:
    """Per object, its events' (emulated time, reason) in time order (those of one instant
    by reason); the objects with drawn names as one sorted list of (name without the
    suffix, their events)."""
    per_object: dict[str, list[tuple[float, str]]] = {}
    for e in report["events"]:
        per_object.setdefault(e["object"], []).append((round(e["time"], 3), e["reason"]))
    for seq in per_object.values():
        seq.sort()
    named = {o: seq for o, seq in per_object.items() if not GENERATED.search(o)}
    drawn = sorted((GENERATED.sub("", o), seq) for o, seq in per_object.items() if GENERATED.search(o))
    return named, drawn


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
    assert event_order(on_ray) == event_order(local)
    assert on_ray["endedAt"] == local["endedAt"]
    assert on_ray["clock"]["mode"] == "stepped"
    pods, events = evicted(on_ray)
    assert pods <= events  # the report holds the event of every eviction it shows


@pytest.mark.parametrize("name", [n for n, needs in NEEDS_PROCESSES.items() if needs == "killHost"])
def test_chaos_that_stops_a_host_process_runs_on_ray(ray_local, name):
    # The restart in it takes real seconds but no emulated time: the clock waits for it.
    report = run_on_ray(load_file(str(ROOT / "scenarios" / f"{name}.yaml")), quiet)
    assert report["passed"], failed(report)
    (kill,) = [entry for entry in report["chaos"] if entry["action"] == "killHost"]
    assert len(kill["detail"].removeprefix("nodes down: ").split(", ")) == 10  # the rack's host process


def test_a_time_scale_paces_a_ray_run_by_the_wall_clock(ray_local):
    # 35 s emulated at 10x: at least 3.5 s of wall time, the same verdicts as unpaced.
    path = str(ROOT / "scenarios" / "quickstart.yaml")
    t = time.monotonic()
    paced = run_on_ray(load_file(path, ["spec.timeScale=10"]), quiet)
    took = time.monotonic() - t
    assert paced["passed"], failed(paced)
    clock = paced["clock"]
    assert clock["mode"] == "paced" and clock["timeScale"] == 10
    assert took >= paced["endedAt"] / 10
    assert 0 < clock["achievedScale"] <= 10.5
    local = run_local(load_file(path, ["spec.runtime=local"]), quiet)
    assert verdicts(paced) == verdicts(local) and event_order(paced) == event_order(local)


def test_hosts_running_their_heartbeats_ahead_change_nothing_a_scenario_sees(ray_local):
    # 900 s of an autoscaler: between its syncs the node hosts renew their Leases in
    # stretches (cluster/runtime/stepper.py), and every verdict and event is as on local.
    path = str(ROOT / "scenarios" / "workloads" / "hpa-scale.yaml")
    on_ray = run_on_ray(load_file(path), quiet)
    local = run_local(load_file(path, ["spec.runtime=local"]), quiet)
    assert on_ray["passed"], failed(on_ray)
    assert on_ray["clock"]["stretches"] > 0 and "stretchSpills" not in on_ray["clock"]
    assert verdicts(on_ray) == verdicts(local) and event_order(on_ray) == event_order(local)
    assert on_ray["endedAt"] == local["endedAt"]
