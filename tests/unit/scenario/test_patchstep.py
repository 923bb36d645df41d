"""Timeline ``patch`` steps: the same patch rules as the HTTP API, applied to the object as
stored and written as an update; a bad step is one line naming the field."""

import copy

import pytest
import yaml

from cluster.scenario.local import run_local
from cluster.scenario.schema import ScenarioError, load

SCENARIO = yaml.safe_load("""
apiVersion: kubemu.io/v1alpha1
kind: Scenario
metadata: {name: patch-step}
spec:
  runtime: local
  duration: 60s
  cluster:
    nodes: [{namePrefix: node, count: 2, capacity: {cpu: "4", memory: 8Gi}}]
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web, labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx}]
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}, data: {mode: slow}}
  timeline:
  - at: 5s
    patch:
      apiVersion: v1
      kind: Node
      metadata: {name: node-1}
      patch: {metadata: {labels: {pool: a}}}
  - at: 10s
    patch:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}, type: merge, patch: {data: {mode: fast}}}
    - {apiVersion: v1, kind: Pod, metadata: {name: web}, type: json, patch: [{op: add, path: /metadata/labels/tier, value: front}]}
  expect:
  - within: 20s
    count: {kind: Node, labelSelector: pool=a}
    equals: 1
  - at: end
    pod: {name: web}
    phase: Running
  - at: end
    count: {kind: Pod, labelSelector: tier=front}
    equals: 1
""")


def test_patches_label_a_node_and_change_a_configmap_and_a_pod():
    logs = []
    report = run_local(load(SCENARIO), logs.append)
    assert report["passed"], [e for e in report["expectations"] if not e["ok"]]
    assert not [line for line in logs if line.startswith("patch ")]
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["web"]["labels"] == {"app": "web", "tier": "front"}


def test_a_patch_of_a_missing_object_is_logged_and_changes_nothing():
    doc = copy.deepcopy(SCENARIO)
    doc["spec"]["timeline"] = [
        {
            "at": "1s",
            "patch": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nope"}, "patch": {"data": {}}},
        }
    ]
    doc["spec"]["expect"] = [{"at": "end", "count": {"kind": "Pod"}, "equals": 1}]
    logs = []
    assert run_local(load(doc), logs.append)["passed"]
    assert 'patch ConfigMap/default/nope: NotFound: configmaps "nope" not found' in logs


@pytest.mark.parametrize(
    "patch, error",
    [
        (
            {"apiVersion": "v1", "kind": "Widget", "metadata": {"name": "x"}, "patch": {}},
            "kind: 'Widget' is not a kind kubemu serves",
        ),
        (
            {"apiVersion": "v2", "kind": "Pod", "metadata": {"name": "x"}, "patch": {}},
            "apiVersion: 'v2' is not served for Pod (use 'v1')",
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "type": "json", "patch": {}},
            "patch: a json patch must be a list of operations",
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "patch": []},
            "patch: a strategic patch must be a map",
        ),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "type": "xml", "patch": {}}, "type"),
    ],
)
def test_a_bad_patch_step_is_refused_with_one_line(patch, error):
    doc = copy.deepcopy(SCENARIO)
    doc["spec"]["timeline"] = [{"at": "1s", "patch": patch}]
    with pytest.raises(ScenarioError) as e:
        load(doc)
    assert error in str(e.value) and "\n" not in str(e.value) and "spec.timeline[0].patch" in str(e.value)
