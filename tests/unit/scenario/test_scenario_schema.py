"""Scenario loading: defaults, repeats, overrides, and one-line errors for bad input."""

import pathlib
import subprocess
import sys

import pytest
import yaml

from cluster.scenario.repeat import batches, count, expanded
from cluster.scenario.schema import ScenarioError, load, load_file

ROOT = pathlib.Path(__file__).resolve().parents[3]


def scenario(objects=(), **spec):
    return {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "t"},
        "spec": {
            "cluster": {"nodes": [{"count": 1, "capacity": {"cpu": "2", "memory": "4Gi"}}]},
            "objects": list(objects),
            **spec,
        },
    }


def pod(name="p", **spec):
    spec.setdefault("containers", [{"name": "c", "image": "x"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_defaults_and_durations():
    s = load(scenario(duration="5m", timeline=[{"at": "1m30s", "delete": {"name": "p"}}]))
    assert s.spec.duration == 300 and s.spec.timeScale == 1 and s.spec.timeline[0].at == 90


def test_repeat_expands_named_copies_as_they_are_sent():
    s = load(scenario([pod("first"), {"repeat": 3, "template": pod("web")}]))
    assert len(s.spec.objects) == 2 and count(s.spec.objects) == 4  # kept as written
    assert [o["metadata"]["name"] for o in expanded(s.spec.objects)] == ["first", "web-0", "web-1", "web-2"]
    copies = list(expanded(s.spec.objects))
    assert copies[1] is not copies[2] and copies[1]["spec"] is not copies[2]["spec"]  # each its own copy


@pytest.mark.parametrize("size,sizes", [(1, [1, 1, 1, 1]), (3, [3, 1]), (1000, [4])])
def test_repeats_go_out_in_bounded_batches(size, sizes):
    s = load(scenario([pod("first"), {"repeat": 3, "template": pod("web")}]))
    assert [len(b) for b in batches(s.spec.objects, size)] == sizes


def test_set_overrides_before_validation():
    s = load(scenario(), ["spec.timeScale=50", "spec.cluster.nodes.0.count=4"])
    assert s.spec.timeScale == 50 and s.spec.cluster.nodes[0].count == 4


@pytest.mark.parametrize(
    "doc,message",
    [
        (
            scenario([pod(containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": "250x"}}}])]),
            'spec.objects[0].spec.containers[0].resources.requests[cpu]: Invalid value: "250x": is not a quantity',
        ),
        (scenario([pod(containers=[])]), "spec.objects[0].spec.containers: Required value"),
        (
            scenario([pod(priorityClassName="gold")]),
            "spec.objects[0].spec.priorityClassName: no PriorityClass with name gold was found",
        ),
        (
            scenario(
                [
                    {
                        "repeat": 2,
                        "template": pod(
                            containers=[{"name": "c", "image": "i", "resources": {"limits": {"memory": "1Q"}}}]
                        ),
                    }
                ]
            ),
            'spec.objects[0].template.spec.containers[0].resources.limits[memory]: Invalid value: "1Q": is not a quantity',
        ),
        (scenario(timeScale=0), "spec.timeScale: 0"),
        (scenario(duration="soon"), 'spec.duration: "soon"'),
        (scenario(bogus=1), "spec.bogus: unknown field"),
        (scenario(timeline=[{"at": "1s", "delete": {"nme": "p"}}]), "spec.timeline[0].delete.name: Required value"),
        (
            scenario(expect=[{"within": "10s", "pod": {"name": "p"}, "phase": "Running", "always": True}]),
            "spec.expect[0]: needs exactly one of within, always, until, at: end",
        ),
        (
            scenario(expect=[{"always": True, "invariant": "noFun"}]),
            'spec.expect[0].invariant: "noFun" is not an invariant',
        ),
        (scenario(timeline=[{"at": "1s", "chaos": {"action": "explode"}}]), 'spec.timeline[0].chaos.action: "explode"'),
        (
            scenario(expect=[{"at": "end", "count": {"labelSelector": "app in web"}, "equals": 1}]),
            'spec.expect[0].count.labelSelector: "app in web"',
        ),
    ],
)
def test_bad_input_is_one_line_naming_field_and_value(doc, message):
    with pytest.raises(ScenarioError) as err:
        load(doc)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(message), text


def test_priority_class_defined_in_the_scenario_is_known():
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 10}
    load(scenario([pc, pod(priorityClassName="gold")]))


def test_bad_node_capacity():
    doc = scenario()
    doc["spec"]["cluster"]["nodes"][0]["capacity"]["cpu"] = "four"
    with pytest.raises(ScenarioError, match=r'^spec.cluster.nodes\[0\].capacity.cpu: "four" is not a quantity$'):
        load(doc)


@pytest.mark.parametrize("path", sorted(str(p) for p in (ROOT / "scenarios").rglob("*.yaml")))
def test_shipped_scenarios_load(path):
    load_file(path)


def test_cli_exits_nonzero_with_one_line_and_starts_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump(
            scenario([pod(containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": "250x"}}}])])
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "actors.harness.cli", "run", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        'kubemu: spec.objects[0].spec.containers[0].resources.requests[cpu]: Invalid value: "250x": is not a quantity'
    ]
    assert out.stdout == ""
