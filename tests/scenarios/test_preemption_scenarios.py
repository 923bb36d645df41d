"""Every scenario under scenarios/preemption/ passes end to end through the real actors."""
import pathlib

import pytest

from actors.driver import run_scenario
from cluster.scenario.schema import load_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios/preemption").glob("*.yaml"))


def test_the_preemption_set_is_complete():
    assert {p.stem for p in SCENARIOS} >= {"basic", "nominated-wait", "higher-preemptor", "never", "pdb",
                                          "system-critical", "unresolvable"}


@pytest.mark.ray
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
async def test_preemption_scenario(ray_local, path):
    report = await run_scenario(load_file(str(path)), log=lambda s: None)
    failed = [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
    assert report["passed"], failed
