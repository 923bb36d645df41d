"""``kubemu bench api`` end to end at a small size: it starts its own ``kubemu serve``,
and every figure it prints comes from what its clients saw."""

import json
import subprocess
import sys

from servedcluster import ROOT

from actors.harness.cli import main


def test_bench_api_measures_creates_watch_events_and_a_list():
    proc = subprocess.run(
        [sys.executable, "-m", "actors.harness.cli", "bench", "api", "--nodes", "10", "--pods", "300"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["benchmark"] == "api" and result["pods"] == 300
    assert result["createsPerSecond"] > 0 and result["watchEventsPerSecond"] > 0 and 0 < result["listSeconds"] < 10
    assert "100 watchers saw 30000 events" in proc.stderr  # every watcher saw every pod


def test_an_unknown_client_is_refused_with_one_line(capsys):
    assert main(["bench", "api", "--client", "curl"]) == 2
    assert capsys.readouterr().err.strip() == "kubemu: --client: 'curl' is not one of aiohttp, python"
