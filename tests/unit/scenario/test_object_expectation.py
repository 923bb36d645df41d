"""The ``object`` expectation: its field paths, its comparators, the report line, the four
timings against a hand-fed Mirror, and every way a scenario using it is refused at load."""

import pathlib
import subprocess
import sys

import pytest
import yaml
from test_scenario_schema import scenario

from cluster.scenario import objectexpect
from cluster.scenario.expectations import Tracker, check
from cluster.scenario.mirror import Mirror
from cluster.scenario.objectexpect import MISSING, PathError, lookup, parse_path
from cluster.scenario.runner import ScenarioRun
from cluster.scenario.schema import ScenarioError, load

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "path, steps",
    [
        ("status", [("key", "status")]),
        ("status.replicas", [("key", "status"), ("key", "replicas")]),
        ("spec.containers[0].image", [("key", "spec"), ("key", "containers"), ("index", 0), ("key", "image")]),
        ("a[1][2]", [("key", "a"), ("index", 1), ("index", 2)]),
        (
            "status.conditions[type=Progressing]",
            [("key", "status"), ("key", "conditions"), ("select", ("type", "Progressing"))],
        ),
        ('a[name="x]y"]', [("key", "a"), ("select", ("name", "x]y"))]),
        ("a[name='']", [("key", "a"), ("select", ("name", ""))]),
        ('metadata.annotations["a.b/c"]', [("key", "metadata"), ("key", "annotations"), ("key", "a.b/c")]),
        (
            "metadata.labels['app.kubernetes.io/name'].x",
            [("key", "metadata"), ("key", "labels"), ("key", "app.kubernetes.io/name"), ("key", "x")],
        ),
        ("a_b.c-d", [("key", "a_b"), ("key", "c-d")]),
    ],
)
def test_paths_parse(path, steps):
    assert parse_path(path) == steps


@pytest.mark.parametrize(
    "path, position",
    [
        ("status..x", 6),
        (".status", 0),
        ("status.", 6),
        ("status.[0]", 6),
        ("status[x", 6),
        ("status[]", 6),
        ('status[""]', 6),
        ("status[-1]", 6),
        ('["status"]', 0),
        ("[0]", 0),
        ("status replicas", 6),
        ("status[0]x", 9),
        ("1status", 0),
        ('status["a"', 6),
    ],
)
def test_bad_paths_say_where(path, position):
    with pytest.raises(PathError) as err:
        parse_path(path)
    assert str(err.value).startswith(f"cannot read {path!r} at position {position} (use a.b")


def test_an_empty_path_is_refused():
    with pytest.raises(PathError, match="an empty path names no field"):
        parse_path("")


OBJ = {
    "spec": {"containers": [{"name": "a", "ready": True, "port": 80}, {"name": "b", "ready": False, "port": 81}]},
    "metadata": {"annotations": {"x.io/y": "1"}},
}


@pytest.mark.parametrize(
    "path, value",
    [
        ("spec.containers[1].name", "b"),
        ("spec.containers[2].name", MISSING),
        ("spec.containers[name=b].port", 81),
        ("spec.containers[ready=true].name", "a"),  # a boolean as YAML writes it
        ("spec.containers[ready=false].name", "b"),
        ("spec.containers[port=80].name", "a"),  # a number as written
        ("spec.containers[name=c].port", MISSING),
        ("spec.containers[nope=a]", MISSING),
        ("spec.containers.name", MISSING),  # a key of a list
        ("spec[0]", MISSING),  # an index of a map
        ('metadata.annotations["x.io/y"]', "1"),
        ("metadata.annotations.x", MISSING),
        ("spec.containers[0].port.deeper", MISSING),
    ],
)
def test_lookup(path, value):
    got = lookup(OBJ, parse_path(path))
    assert got is MISSING if value is MISSING else got == value


@pytest.mark.parametrize(
    "found, want, same",
    [
        (3, 3.0, True),
        (1, True, False),
        (True, True, True),
        ("3", 3, False),
        ({"a": [1, 2]}, {"a": [1.0, 2]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([True], [1], False),
        (None, None, True),
    ],
)
def test_equals_is_json_equality(found, want, same):
    assert objectexpect.same(found, want) is same


@pytest.mark.parametrize(
    "comparator, ok",
    [
        ({"equals": [{"name": "a", "ready": True, "port": 80}, {"name": "b", "ready": False, "port": 81}]}, True),
        ({"atLeast": 80.5}, False),
        ({"atMost": 80.5}, True),
        ({"atLeast": 79, "atMost": 80}, True),
        ({"equals": 80, "atLeast": 81}, False),
    ],
)
def test_comparators(comparator, ok):
    path = (
        "spec.containers"
        if "equals" in comparator and isinstance(comparator["equals"], list)
        else "spec.containers[0].port"
    )
    assert objectexpect.check(OBJ, "Pod default/p", path, comparator)[0] is ok


def test_numbers_compare_only_with_numbers():
    assert objectexpect.check(OBJ, "Pod default/p", "spec.containers[0].ready", {"atLeast": 0})[0] is False
    assert objectexpect.check(OBJ, "Pod default/p", 'metadata.annotations["x.io/y"]', {"atMost": 5})[0] is False


# ---- through the mirror, with the four timings ------------------------------------------


def deployment(reason: str | None, replicas: int = 3) -> dict:
    conds = [{"type": "Progressing", "status": "True", "reason": reason}] if reason else []
    return {
        "kind": "Deployment",
        "metadata": {
            "namespace": "default",
            "name": "web",
            "uid": "d1",
            "annotations": {"deployment.kubernetes.io/revision": "2"},
        },
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": replicas, "conditions": conds},
    }


def expectations(*items):
    return load(scenario(expect=list(items))).spec.expect


REASON = {"object": {"kind": "Deployment", "name": "web"}, "field": "status.conditions[type=Progressing].reason"}


def test_the_report_line_shows_what_was_seen():
    m = Mirror()
    m.apply("Deployment", "ADDED", deployment("NewReplicaSetAvailable"), 0.0, 0.0)
    (e,) = expectations({"at": "end", **REASON, "equals": "NewReplicaSetAvailable"})
    assert check(e, m) == (
        True,
        'Deployment default/web status.conditions[type=Progressing].reason = "NewReplicaSetAvailable"',
    )
    (e,) = expectations({"at": "end", "object": {"kind": "Deployment", "name": "api"}, "field": "spec", "exists": True})
    assert check(e, m) == (False, "Deployment default/api: absent")


def test_within_always_until_and_end():
    m = Mirror()
    exps = expectations(
        {"within": "10s", **REASON, "equals": "NewReplicaSetAvailable"},
        {
            "always": True,
            "object": {"kind": "Deployment", "name": "web"},
            "field": "status.availableReplicas",
            "atLeast": 2,
        },
        {"until": "5s", **REASON, "exists": False},
        {"at": "end", "object": {"kind": "Deployment", "name": "web"}, "field": "spec.replicas", "equals": 5},
    )
    t = Tracker(list(exps))
    m.apply("Deployment", "ADDED", deployment(None), 0.0, 0.0)
    t.observe(m, 1.0)
    assert [v.ok for v in t.verdicts] == [None, None, None, None]
    m.apply("Deployment", "MODIFIED", deployment("ReplicaSetUpdated"), 6.0, 6.0)
    t.observe(m, 6.0)
    assert [v.ok for v in t.verdicts] == [None, None, True, None]
    m.apply("Deployment", "MODIFIED", deployment("NewReplicaSetAvailable", replicas=5), 8.0, 8.0)
    t.observe(m, 8.0)
    t.finish(m, 9.0)
    assert [v.ok for v in t.verdicts] == [True, True, True, True]
    m.apply("Deployment", "MODIFIED", deployment("NewReplicaSetAvailable", replicas=1), 10.0, 10.0)
    t2 = Tracker(list(exps))
    t2.observe(m, 11.0)
    assert t2.verdicts[1].ok is False and t2.verdicts[1].detail == (
        "Deployment default/web status.availableReplicas = 1"
    )


def test_a_cluster_scoped_object_and_an_event():
    m = Mirror()
    m.apply("PriorityClass", "ADDED", {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}, 0, 0)
    m.apply(
        "Event", "ADDED", {"kind": "Event", "metadata": {"namespace": "default", "name": "e1"}, "reason": "X"}, 0, 0
    )
    pc, ev = expectations(
        {"at": "end", "object": {"kind": "PriorityClass", "name": "high"}, "field": "value", "atLeast": 1000},
        {"at": "end", "object": {"kind": "Event", "name": "e1"}, "field": "reason", "equals": "X"},
    )
    assert pc.object.namespace == "" and check(pc, m) == (True, "PriorityClass high value = 1000")
    assert check(ev, m)[0] is True


def test_the_driver_watches_the_kinds_object_expectations_name():
    s = load(
        scenario(
            expect=[
                {"at": "end", "object": {"kind": "ConfigMap", "name": "c"}, "field": "data", "exists": True},
                {"at": "end", **REASON, "exists": True},
            ]
        )
    )
    assert ScenarioRun(s).object_kinds() == ["ConfigMap", "Deployment"]


# ---- refused at load ------------------------------------------------------------------------

OBJECT = {"at": "end", "object": {"kind": "Deployment", "name": "web"}}


@pytest.mark.parametrize(
    "expectation, message",
    [
        (
            {**OBJECT, "field": "status..x", "equals": 1},
            "spec.expect[0].field: cannot read 'status..x' at position 6 (use a.b",
        ),
        ({**OBJECT, "field": "", "equals": 1}, "spec.expect[0].field: an empty path names no field"),
        ({**OBJECT, "field": "a[x", "equals": 1}, "spec.expect[0].field: cannot read 'a[x' at position 1"),
        ({**OBJECT, "equals": 1}, "spec.expect[0].field: an object expectation needs the field to compare"),
        (
            {**OBJECT, "field": "status"},
            "spec.expect[0]: an object expectation needs equals, atLeast, atMost or exists",
        ),
        (
            {**OBJECT, "field": "status", "exists": False, "atLeast": 1},
            "spec.expect[0].exists: takes no other comparator",
        ),
        ({**OBJECT, "field": "status", "atLeast": "3"}, 'spec.expect[0].atLeast: "3" must be a number'),
        ({**OBJECT, "field": "status", "atMost": True}, "spec.expect[0].atMost: true must be a number"),
        (
            {**OBJECT, "field": "status", "exists": "maybe"},
            'spec.expect[0].exists: "maybe" Input should be a valid boolean',
        ),
        (
            {"at": "end", "object": {"kind": "Widget", "name": "w"}, "field": "spec", "exists": True},
            'spec.expect[0].object.kind: "Widget" is not a kind kubemu serves',
        ),
        (
            {"at": "end", "object": {"name": "w"}, "field": "spec", "exists": True},
            "spec.expect[0].object.kind: Required value",
        ),
        (
            {"at": "end", "object": {"kind": "Deployment", "name": "w", "uid": "x"}, "field": "spec", "exists": True},
            "spec.expect[0].object.uid: unknown field",
        ),
        (
            {
                "at": "end",
                "object": {"kind": "Node", "namespace": "default", "name": "n"},
                "field": "spec",
                "exists": True,
            },
            'spec.expect[0].object.namespace: "default" names a namespace, but Node is cluster-scoped',
        ),
        (
            {
                "at": "end",
                "object": {"kind": "Deployment", "namespace": "", "name": "w"},
                "field": "spec",
                "exists": True,
            },
            'spec.expect[0].object.namespace: "" names no namespace, but Deployment is namespaced',
        ),
        (
            {"at": "end", "count": {"kind": "Pod"}, "exists": True},
            "spec.expect[0].exists: only an object expectation takes it",
        ),
        (
            {"at": "end", "count": {"kind": "Pod"}, "atLeast": 2.5},
            "spec.expect[0].atLeast: 2.5 must be an integer (a count)",
        ),
        (
            {"at": "end", "event": {"reason": "X"}, "equals": [1]},
            "spec.expect[0].equals: [1] must be an integer (a count)",
        ),
        (
            {**OBJECT, "field": "status", "exists": True, "pod": {"name": "p"}},
            "spec.expect[0]: needs exactly one of pod, node, event, eventOrder, count, invariant, object",
        ),
        (
            {**OBJECT, "field": "status", "exists": True, "phase": "Running"},
            "spec.expect[0].phase: a pod field, but this expectation observes object",
        ),
    ],
)
def test_refused_at_load_with_one_line(expectation, message):
    with pytest.raises(ScenarioError) as err:
        load(scenario(expect=[expectation]))
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)


def test_kubemu_validate_exits_2_on_a_bad_path(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(scenario(expect=[{**OBJECT, "field": "status..x", "equals": 1}])))
    out = subprocess.run(
        [sys.executable, "-m", "actors.harness.cli", "validate", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "kubemu: spec.expect[0].field: cannot read 'status..x' at position 6 "
        '(use a.b, a[0], a[key=value] or a["x/y"])'
    ]
