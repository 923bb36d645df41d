"""``scenarios/chaos/ray-nodes``: a local Ray cluster of three Ray nodes, hosts on all of
them, and one stopped with ``killRayNode``. It starts its own Ray cluster, so it runs
through the CLI in a fresh process (the other tests share one embedded Ray)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.ray
def test_hosts_spread_over_three_ray_nodes_and_one_dies(tmp_path):
    report_path = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "actors.harness.cli",
            "run",
            str(ROOT / "scenarios/chaos/ray-nodes.yaml"),
            "--report",
            str(report_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert report_path.exists(), proc.stderr[-3000:]
    report = json.loads(report_path.read_text())
    failed = [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
    assert proc.returncode == 0 and report["passed"], (failed, proc.stderr[-3000:])
    # Hosts landed on all three Ray nodes, two hosts of five nodes each.
    assert sorted(report["placement"]) == ["0", "1", "2"]
    assert all(len(nodes) == 10 for nodes in report["placement"].values())
    down = {n for entry in report["chaos"] for n in entry["detail"].removeprefix("nodes down: ").split(", ")}
    assert down == set(report["placement"]["2"])  # killRayNode 2 took exactly its hosts' nodes
    not_ready = {n["name"] for n in report["nodes"] if not n["ready"]}
    assert not_ready == down
