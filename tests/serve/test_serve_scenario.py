"""``kubemu run --serve``: a scenario's cluster behind the API while its timeline runs, and
the external scheduler from ``examples/`` scheduling the pods that name it."""

import json
import os
import subprocess
import sys
import time

from servedcluster import ROOT, free_port


def test_an_external_scheduler_binds_the_scenarios_pods_through_the_api(tmp_path):
    port, kubeconfig, report = free_port(), tmp_path / "kubeconfig", tmp_path / "report.json"
    argv = [sys.executable, "-m", "actors.harness.cli", "run", "--serve", "--port", str(port)]
    argv += ["--kubeconfig", str(kubeconfig), "--report", str(report), "examples/external-scheduler-scenario.yaml"]
    run = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not kubeconfig.exists() and time.time() < deadline and run.poll() is None:
        time.sleep(0.1)
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    sched = subprocess.run(
        [sys.executable, str(ROOT / "examples/external_scheduler.py"), "--max-pods", "3", "--timeout", "60"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out, err = run.communicate(timeout=180)
    assert sched.returncode == 0, sched.stderr[-2000:]
    assert sorted(line.split()[1] for line in sched.stdout.splitlines()) == [
        "default/mine-0",
        "default/mine-1",
        "default/mine-2",
    ]
    assert run.returncode == 0, (out + err)[-3000:]
    assert "scenario external-scheduler: PASSED" in out
    result = json.loads(report.read_text())
    assert result["passed"] and result["runtime"] == "local"


def test_without_an_external_scheduler_the_scenario_fails_on_the_local_runtime():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "actors.harness.cli",
            "run",
            "--runtime",
            "local",
            "examples/external-scheduler-scenario.yaml",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "scenario external-scheduler: FAILED" in proc.stdout
