"""Taint Nodes by Condition: the NoSchedule taints a node's conditions call for, and the
apiserver's taint patch that applies them."""

from cluster.api.errors import NotFound
from cluster.api.patches import NodeTaints
from cluster.api.requests import Patch
from cluster.apiserver.apiserver import APIServer
from cluster.controllers.nodetaints import tainting_patch, wanted_taints

MP = "node.kubernetes.io/memory-pressure"


def _node(conditions=(), taints=(), unschedulable=False):
    spec = {"taints": list(taints)}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "spec": spec,
        "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]},
    }


def test_conditions_map_to_upstream_taint_keys():
    node = _node(
        [("Ready", "True"), ("MemoryPressure", "True"), ("DiskPressure", "False"), ("PIDPressure", "True")],
        unschedulable=True,
    )
    assert wanted_taints(node) == {MP, "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable"}
    assert wanted_taints(_node([("Ready", "Unknown")])) == {"node.kubernetes.io/unreachable"}
    assert wanted_taints(_node([("Ready", "False")])) == {"node.kubernetes.io/not-ready"}


def test_patch_adds_missing_and_removes_stale_condition_taints_only():
    user = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    stale = {"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}
    evict = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}  # the other pass's
    node = _node([("MemoryPressure", "True")], taints=[user, stale, evict])
    assert tainting_patch(node) == ("n1", [{"key": MP, "effect": "NoSchedule"}], [stale])
    settled = _node([("MemoryPressure", "True")], taints=[user, {"key": MP, "effect": "NoSchedule"}])
    assert tainting_patch(settled) is None


def _taints(node, add=(), remove=()):
    return Patch("Node", "", node, "", NodeTaints(tuple(add), tuple(remove)))


def test_apiserver_patch_node_taints():
    api = APIServer()
    api.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        },
        0,
    )
    rv = api.get("Node", "", "n1")["metadata"]["resourceVersion"]
    taint = {"key": MP, "effect": "NoSchedule"}
    assert api.write([_taints("n1", add=[taint]), _taints("ghost", add=[taint])], 1) == [
        None,
        NotFound('nodes "ghost" not found'),
    ]
    node = api.get("Node", "", "n1")
    assert [t["key"] for t in node["spec"]["taints"]] == ["dedicated", MP]
    rv2 = node["metadata"]["resourceVersion"]
    assert rv2 != rv
    assert api.write([_taints("n1", add=[taint])], 2) == [None]  # no change, no write
    assert api.get("Node", "", "n1")["metadata"]["resourceVersion"] == rv2
    api.write([_taints("n1", remove=[taint])], 3)
    assert [t["key"] for t in api.get("Node", "", "n1")["spec"]["taints"]] == ["dedicated"]
