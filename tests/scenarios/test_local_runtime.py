"""The local runtime's promises, end to end through ``kubemu run --runtime local``: no Ray
in the process, the same scenario and seed give the same trace and report on every run
(whatever Python's hash seed), a run ends only once the cluster has settled, and the
report holds every event written before the end."""

import json
import os
import subprocess
import sys

from scenariofiles import ROOT, failed, quiet

from cluster.scenario.local import run_local
from cluster.scenario.schema import load, load_file

# Runs the CLI and fails (exit 3) if anything imported Ray on the way.
NO_RAY = "import sys; from actors.harness.cli import main; rc = main(sys.argv[1:]); sys.exit(3 if 'ray' in sys.modules else rc)"
WALL_CLOCK = ("wallSeconds",)


def cli_run(tmp_path, scenario: str, hash_seed: str) -> tuple[bytes, dict]:
    trace, report = tmp_path / f"trace-{hash_seed}.txt", tmp_path / f"report-{hash_seed}.json"
    argv = ["run", "--runtime", "local", str(ROOT / scenario), "--trace", str(trace), "--report", str(report)]
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run([sys.executable, "-c", NO_RAY, *argv], cwd=ROOT, env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return trace.read_bytes(), json.loads(report.read_text())


def without_wall_clock(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k not in WALL_CLOCK}
    out["metrics"] = {k: v for k, v in report["metrics"].items() if k != "schedulingThroughput"}
    return out


def test_same_scenario_and_seed_give_the_same_trace_and_report_without_ray(tmp_path):
    trace1, report1 = cli_run(tmp_path, "scenarios/chaos/scheduler-restart.yaml", "1")
    trace2, report2 = cli_run(tmp_path, "scenarios/chaos/scheduler-restart.yaml", "2")
    assert trace1 == trace2 and trace1.count(b"\n") > 2000
    assert without_wall_clock(report1) == without_wall_clock(report2)
    assert report1["passed"] and report1["runtime"] == "local"


def only_at_end(**spec) -> dict:
    return {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "at-end"},
        "spec": {
            "seed": 1,
            "runtime": "local",
            "duration": "300s",
            "cluster": {"nodes": [{"namePrefix": "n", "count": 1, "capacity": {"cpu": "2", "memory": "4Gi"}}]},
            **spec,
        },
    }


def pod(name: str, cpu: str) -> dict:
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_a_run_with_only_at_end_expectations_waits_for_the_scheduler_to_try_every_pod():
    doc = only_at_end(
        objects=[pod("fits", "1"), pod("too-big", "4")],
        timeline=[{"at": "20s", "create": [pod("late", "500m")]}],
        expect=[
            {"at": "end", "pod": {"name": "fits"}, "phase": "Running"},
            {"at": "end", "pod": {"name": "late"}, "phase": "Running"},
            {"at": "end", "pod": {"name": "too-big"}, "phase": "Pending"},
        ],
    )
    report = run_local(load(doc), quiet)
    assert report["passed"], failed(report)
    tried = {(e["reason"], e["object"]) for e in report["events"]}
    assert ("FailedScheduling", "Pod/default/too-big") in tried
    assert ("Scheduled", "Pod/default/late") in tried
    assert 20.0 <= report["endedAt"] < 300.0  # after the last step, long before duration


def test_a_run_does_not_end_while_a_pod_timer_is_due_within_ten_seconds():
    slow = pod("slow", "1")
    slow["metadata"]["annotations"] = {"kubemu.io/start-seconds": "8"}
    report = run_local(load(only_at_end(objects=[slow], expect=[{"at": "end", "pod": {"name": "slow"}}])), quiet)
    assert report["passed"] and report["endedAt"] >= 8.0
    (got,) = report["pods"]
    assert got["phase"] == "Running"  # it started before the run ended


def test_the_eviction_ranking_report_holds_every_evicted_event_on_every_run():
    scenario = load_file(str(ROOT / "scenarios/kubelet/memory-pressure.yaml"), ["spec.runtime=local"])
    seen = set()
    for _ in range(20):
        report = run_local(scenario, quiet)
        assert report["passed"], failed(report)
        evicted = sorted(e["object"] for e in report["events"] if e["reason"] == "Evicted")
        status = sorted(f"Pod/default/{p['name']}" for p in report["pods"] if p.get("reason") == "Evicted")
        assert status and set(status) <= set(evicted) and len(evicted) == report["metrics"]["evictions"]
        seen.add(tuple(evicted))
    assert len(seen) == 1
