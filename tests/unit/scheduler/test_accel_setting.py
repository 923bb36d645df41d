"""The one setting for the scheduler's speed-ups: ``accelerate`` in the scheduler
configuration (``spec.scheduler.accelerate`` of a scenario) and ``--no-accelerate``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from actors.harness.bench import run_bench
from actors.harness.cli import _load
from cluster.scenario.schema import ScenarioError, load_file, scheduler_config
from cluster.scheduler import Scheduler
from cluster.scheduler.accel import Accelerate
from cluster.scheduler.config import ConfigError, build_config

SCENARIO = str(Path(__file__).resolve().parents[3] / "scenarios/scheduling/taints.yaml")


def test_the_configuration_reads_the_setting_and_the_scheduler_follows_it():
    assert build_config({}).accelerate == Accelerate()
    off = build_config({"accelerate": False})
    assert off.accelerate == Accelerate.all(False)
    s = Scheduler(off)
    assert s.row_memos is None and s.vetoes is None and not s.kind_runs
    fine = build_config({"accelerate": {"rowMemo": False}})
    s = Scheduler(fine)
    assert s.row_memos is None and s.vetoes is not None and not s.kind_runs  # runs read the row memo


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"accelerate": "no"}, 'spec.scheduler.accelerate: "no" must be true, false or a mapping of accelerators'),
        ({"accelerate": {"turbo": True}}, "spec.scheduler.accelerate.turbo: unknown accelerator"),
        ({"accelerate": {"kindRuns": 0}}, "spec.scheduler.accelerate.kindRuns: 0 must be true or false"),
    ],
)
def test_a_bad_setting_stops_the_scenario_with_one_line(raw, message):
    with pytest.raises(ConfigError) as e:
        build_config(raw)
    assert str(e.value).startswith(message)
    with pytest.raises(ScenarioError) as e2:
        load_file(SCENARIO, [f"spec.scheduler={json.dumps(raw)}"])
    assert message in str(e2.value)


def test_no_accelerate_on_run_turns_every_accelerator_off():
    args = argparse.Namespace(file=SCENARIO, overrides=[], runtime="local", no_accelerate=True)
    assert scheduler_config(_load(args)).accelerate == Accelerate.all(False)
    args.no_accelerate = False
    assert scheduler_config(_load(args)).accelerate == Accelerate()


def test_bench_preempt_refuses_an_unknown_workload_before_starting_anything():
    with pytest.raises(ValueError, match=r"--workload: 'mixed' is not one of async, basic \(bench preempt\)"):
        run_bench("preempt", 10, 10, workload="mixed")
