"""Every scenario under scenarios/scheduling/ passes end to end through the real actors.

Each file states its own expectations (placements, FailedScheduling messages, counts);
the test only runs it and reports the expectations that failed.
"""
import pathlib

import pytest

from actors.driver import run_scenario
from cluster.scenario.schema import load_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios/scheduling").glob("*.yaml"))


def test_the_scheduling_set_is_complete():
    names = {p.stem for p in SCENARIOS}
    assert names >= {"node-selector", "node-affinity", "taints", "host-ports", "pod-anti-affinity",
                     "pod-affinity-zone", "topology-spread", "extended-resource", "fits-later"}


@pytest.mark.ray
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
async def test_scheduling_scenario(ray_local, path):
    report = await run_scenario(load_file(str(path)), log=lambda s: None)
    failed = [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
    assert report["passed"], failed
