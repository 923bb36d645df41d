"""``kubemu bench preempt-cycle --workload basic``: upstream's PreemptionBasic shape in the
Scheduler alone (``actors/harness/benchpreemptbasic.py``; no Ray is started here)."""

import json

import pytest

from actors.harness.cli import main


def _result(capsys) -> tuple[dict, str]:
    captured = capsys.readouterr()
    return json.loads(captured.out.strip().splitlines()[-1]), captured.err


def test_each_measured_pod_preempts_three_and_binds(capsys):
    assert main(["bench", "preempt-cycle", "--workload", "basic", "--nodes", "30", "--pods", "20"]) == 0
    result, err = _result(capsys)
    assert (result["workload"], result["bound"], result["complete"]) == ("basic", 20, True)
    assert (result["preemptions"], result["victims"]) == (20, 60)  # three 900m pods make room for 3 CPU
    assert result["podsPerSecond"] > 0 and result["cpuSeconds"] > 0
    assert "30 nodes with 120 priority-0 pods, 20 priority-10 pods pending" in err


def test_more_measured_pods_than_nodes_leaves_the_rest_unbound_and_says_so(capsys):
    assert main(["bench", "preempt-cycle", "--workload", "basic", "--nodes", "3", "--pods", "5"]) == 1
    result, err = _result(capsys)
    assert (result["bound"], result["complete"], result["victims"]) == (3, False, 9)
    assert "2 of 5 pods never bound" in err


@pytest.mark.parametrize("workload", ["mixed", "heavy"])
def test_a_workload_preempt_cycle_does_not_know_exits_2_with_one_line(capsys, workload):
    assert main(["bench", "preempt-cycle", "--workload", workload]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"kubemu: --workload: {workload!r} is not one of async, basic (bench preempt-cycle)"
