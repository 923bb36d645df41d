"""Every run checks every invariant: those a scenario does not ask for are added to its
expectations (marked implicit in the report), and a broken one fails the run."""

from cluster.scenario import report as reports
from cluster.scenario.mirror import Mirror
from cluster.scenario.runner import ScenarioRun
from cluster.scenario.schema import INVARIANTS, load


def scenario(expect):
    return load(
        {
            "apiVersion": "kubemu.io/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "t"},
            "spec": {"cluster": {"nodes": [{"count": 1, "capacity": {"cpu": "1", "memory": "1Gi"}}]}, "expect": expect},
        }
    )


def test_the_invariants_not_asked_for_are_added_once():
    run = ScenarioRun(
        scenario([{"always": True, "invariant": "noOvercommit"}, {"at": "end", "count": {"kind": "Node"}, "equals": 1}])
    )
    added = [e.invariant for e in run.tracker.expectations[run.implicit_from :]]
    assert run.implicit_from == 2
    assert added == [n for n in INVARIANTS if n != "noOvercommit"]


def test_a_broken_implicit_invariant_fails_the_run_and_is_shown():
    run = ScenarioRun(scenario([]))
    m = Mirror()
    node = {"kind": "Node", "metadata": {"name": "node-0"}, "status": {"allocatable": {"cpu": "1", "pods": "110"}}}
    m.apply("Node", "ADDED", node, 0.0, 0.0)
    pod = {
        "kind": "Pod",
        "metadata": {"namespace": "default", "name": "p", "uid": "u"},
        "spec": {"nodeName": "node-0", "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
        "status": {"phase": "Running"},
    }
    m.apply("Pod", "ADDED", pod, 1.0, 0.0)
    run.observe(m, 1.0)
    run.finish(m, 2.0)
    assert not run.passed
    report = reports.build(run, m, {}, 1.0)
    broken = [e for e in report["expectations"] if not e["ok"]]
    assert [e["spec"]["invariant"] for e in broken] == ["noOvercommit"] and broken[0]["implicit"]
    text = reports.summary(report)
    assert "FAIL [0] at 1.0s node node-0" in text
    assert (
        "invariants checked in every run hold: noDoubleBinding, cpusetsExclusive, devicesExclusive, noLostPods" in text
    )
