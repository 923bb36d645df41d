"""A scenario's YuniKorn parts are checked at load: the schedulers it names and the
queues.yaml of its yunikorn-configs ConfigMap, each refusal one line naming the field."""

import pytest

from cluster.scenario.report import summary, yunikorn
from cluster.scenario.schema import ScenarioError, load


def scenario(schedulers=None, queues: str | None = None) -> dict:
    cluster = {"nodes": [{"count": 1, "capacity": {"cpu": "1", "memory": "1Gi"}}]}
    if schedulers is not None:
        cluster["schedulers"] = schedulers
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "yunikorn"}}]
    if queues is not None:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "yunikorn-configs", "namespace": "yunikorn"},
                "data": {"queues.yaml": queues},
            }
        )
    return {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"cluster": cluster, "objects": objects},
    }


GOOD = "partitions: [{name: default, queues: [{name: root, queues: [{name: a}]}]}]"


def test_the_default_is_the_default_scheduler_alone():
    assert load(scenario()).spec.cluster.schedulers == ["default-scheduler"]
    assert load(scenario(["default-scheduler", "yunikorn"], GOOD)).spec.cluster.schedulers[1] == "yunikorn"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (scenario(["volcano"]), "spec.cluster.schedulers[0]: \"volcano\" Input should be 'default-scheduler' or"),
        (scenario([]), "spec.cluster.schedulers: [] List should have at least 1 item"),
        (
            scenario(
                ["yunikorn"],
                "partitions: [{name: default, queues: [{name: root, queues: [{name: a, "
                "properties: {preemption.dely: 1s}}]}]}]",
            ),
            "spec.objects[1].data.queues.yaml: queue root.a: properties.preemption.dely: unknown property",
        ),
        (
            scenario(
                ["yunikorn"],
                "partitions: [{name: default, queues: [{name: root, queues: [{name: a, "
                "resources: {max: {vcore: 1x}}}]}]}]",
            ),
            "spec.objects[1].data.queues.yaml: queue root.a: resources.max.vcore: '1x' is not a quantity",
        ),
    ],
)
def test_bad_yunikorn_input_is_one_line(doc, message):
    with pytest.raises(ScenarioError) as e:
        load(doc)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_the_report_and_summary_show_every_queue():
    leaf = {
        "queuename": "root.a",
        "isLeaf": True,
        "guaranteedResource": {"vcore": 1000},
        "maxResource": {"vcore": 2000, "memory": 2 * 1024**3},
        "allocatedResource": {"vcore": 500, "pods": 1},
        "pendingResource": {},
        "preemptingResource": {},
        "preemptionVictims": 2,
        "children": [],
    }
    root = dict(leaf, queuename="root", isLeaf=False, children=[leaf], guaranteedResource={})
    section = yunikorn({"scheduled": 3, "preemptions": 2, "pending": 1, "queues": root, "applications": []})
    assert [q["queue"] for q in section["queues"]] == ["root", "root.a"]
    assert section["counters"] == {"scheduled": 3, "preemptions": 2, "pending": 1}
    report = {
        "scenario": "s",
        "passed": True,
        "endedAt": 1.0,
        "wallSeconds": 0.1,
        "expectations": [],
        "pods": [],
        "nodes": [],
        "metrics": {
            "podsScheduled": 3,
            "schedulingThroughput": None,
            "podStartupLatency": dict.fromkeys(("p50", "p90", "p99")),
        },
        "yunikorn": section,
    }
    text = summary(report)
    assert "yunikorn: 3 scheduled, 2 preempted, 1 pending" in text
    assert "root.a: guaranteed cpu=1 max memory=2Gi,cpu=2 allocated cpu=500m pending - preemptions 2" in text
