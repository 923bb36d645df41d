"""PATCH bodies (cluster/frontend/patch.py): JSON patch, merge patch, strategic merge patch,
apply, and the content-type dispatch the HTTP front end uses."""

import copy
import json
import pickle

import pytest

from cluster.api.clientpatch import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    UnsupportedMediaType,
    accepted_patch_types,
    apply_patch,
    merge_patch,
    strategic_merge_patch,
)
from cluster.api.errors import BadRequest, Invalid
from cluster.api.jsonpatch import json_patch

BUILTIN_415 = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
    "application/apply-patch+yaml"
)
CR_415 = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


def pod(**spec):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": "default", "labels": {"app": "web", "tier": "front"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def frozen(fn, *args):
    """Calls fn and checks that it changed none of its (JSON) arguments."""
    before = copy.deepcopy(args)
    out = fn(*args)
    assert args == before
    return out


# ---- JSON patch (RFC 6902) ------------------------------------------------------------------

DOC = {"a": {"b": 1, "l": [1, 2, 3]}, "s": "x", "k~/": 9}


@pytest.mark.parametrize(
    "ops, expected",
    [
        ([{"op": "add", "path": "/c", "value": 2}], {**DOC, "c": 2}),
        ([{"op": "add", "path": "/a/b", "value": 5}], {**DOC, "a": {"b": 5, "l": [1, 2, 3]}}),
        ([{"op": "add", "path": "/a/l/0", "value": 0}], {**DOC, "a": {"b": 1, "l": [0, 1, 2, 3]}}),
        ([{"op": "add", "path": "/a/l/3", "value": 4}], {**DOC, "a": {"b": 1, "l": [1, 2, 3, 4]}}),
        ([{"op": "add", "path": "/a/l/-", "value": 4}], {**DOC, "a": {"b": 1, "l": [1, 2, 3, 4]}}),
        ([{"op": "add", "path": "", "value": {"z": 1}}], {"z": 1}),
        ([{"op": "add", "path": "/n", "value": None}], {**DOC, "n": None}),
        ([{"op": "remove", "path": "/s"}], {"a": DOC["a"], "k~/": 9}),
        ([{"op": "remove", "path": "/a/l/1"}], {**DOC, "a": {"b": 1, "l": [1, 3]}}),
        ([{"op": "remove", "path": "/k~0~1"}], {"a": DOC["a"], "s": "x"}),
        ([{"op": "replace", "path": "/s", "value": "y"}], {**DOC, "s": "y"}),
        ([{"op": "replace", "path": "/a/l/2", "value": 9}], {**DOC, "a": {"b": 1, "l": [1, 2, 9]}}),
        ([{"op": "replace", "path": "", "value": {"r": 1}}], {"r": 1}),
        ([{"op": "move", "from": "/s", "path": "/t"}], {"a": DOC["a"], "t": "x", "k~/": 9}),
        ([{"op": "move", "from": "/a/l/0", "path": "/a/l/-"}], {**DOC, "a": {"b": 1, "l": [2, 3, 1]}}),
        ([{"op": "move", "from": "/s", "path": "/s"}], DOC),
        ([{"op": "copy", "from": "/a/l", "path": "/m"}], {**DOC, "m": [1, 2, 3]}),
        ([{"op": "test", "path": "/a", "value": {"l": [1.0, 2, 3], "b": 1}}], DOC),
        ([{"op": "test", "path": "/k~0~1", "value": 9}], DOC),
        ([{"op": "test", "path": "", "value": DOC}], DOC),
        (
            [{"op": "test", "path": "/s", "value": "x"}, {"op": "replace", "path": "/s", "value": "z"}],
            {**DOC, "s": "z"},
        ),
        ([], DOC),
    ],
)
def test_json_patch_ops(ops, expected):
    assert frozen(json_patch, DOC, ops) == expected


def test_json_patch_copy_is_independent_of_its_source():
    out = json_patch(DOC, [{"op": "copy", "from": "/a", "path": "/b"}, {"op": "add", "path": "/b/l/-", "value": 4}])
    assert out["a"]["l"] == [1, 2, 3] and out["b"]["l"] == [1, 2, 3, 4]


def test_json_patch_values_are_copied_into_the_result():
    value = {"deep": [1]}
    ops = [{"op": "add", "path": "/v", "value": value}]
    out = json_patch(DOC, ops)
    out["v"]["deep"].append(2)
    assert value == {"deep": [1]}


@pytest.mark.parametrize(
    "ops, error, message",
    [
        ({"op": "add"}, BadRequest, "json patch: the body must be a list of operations, not an object"),
        (
            [{"op": "add", "path": "/x", "value": 1}, "add"],
            BadRequest,
            "json patch op 1: must be an object, not a string",
        ),
        ([{"path": "/s"}], Invalid, 'json patch op 0: missing "op"'),
        ([{"op": "frobnicate", "path": "/s"}], Invalid, 'json patch op 0: unknown op "frobnicate"'),
        ([{"op": "remove"}], Invalid, 'json patch op 0: missing "path"'),
        ([{"op": "remove", "path": 3}], Invalid, 'json patch op 0: "path" must be a string, not a number'),
        ([{"op": "remove", "path": "s"}], Invalid, 'json patch op 0: path "s" is not a JSON pointer'),
        ([{"op": "remove", "path": "/a~2"}], Invalid, 'json patch op 0: path "/a~2" is not a JSON pointer'),
        ([{"op": "add", "path": "/x"}], Invalid, 'json patch op 0: missing "value"'),
        ([{"op": "replace", "path": "/x"}], Invalid, 'json patch op 0: missing "value"'),
        ([{"op": "test", "path": "/s"}], Invalid, 'json patch op 0: missing "value"'),
        ([{"op": "move", "path": "/x"}], Invalid, 'json patch op 0: missing "from"'),
        ([{"op": "copy", "from": "s", "path": "/x"}], Invalid, 'json patch op 0: from "s" is not a JSON pointer'),
        (
            [{"op": "test", "path": "/s", "value": "x"}, {"op": "test", "path": "/a", "value": 1}],
            Invalid,
            'json patch op 1: test failed: the value at path "/a" is not 1',
        ),
        (
            [{"op": "test", "path": "/a/b", "value": True}],
            Invalid,
            'json patch op 0: test failed: the value at path "/a/b" is not true',
        ),
        ([{"op": "test", "path": "/nope", "value": 1}], Invalid, 'json patch op 0: path "/nope" does not exist'),
        (
            [
                {"op": "add", "path": "/x", "value": 1},
                {"op": "add", "path": "/x", "value": 2},
                {"op": "replace", "path": "/spec/x", "value": 1},
            ],
            Invalid,
            'json patch op 2: path "/spec/x" does not exist',
        ),
        ([{"op": "add", "path": "/spec/x", "value": 1}], Invalid, 'json patch op 0: path "/spec/x" does not exist'),
        ([{"op": "add", "path": "/s/x", "value": 1}], Invalid, 'json patch op 0: path "/s/x" does not exist'),
        ([{"op": "remove", "path": "/nope"}], Invalid, 'json patch op 0: path "/nope" does not exist'),
        ([{"op": "remove", "path": "/a/l/3"}], Invalid, 'json patch op 0: path "/a/l/3" does not exist'),
        ([{"op": "remove", "path": "/a/l/-"}], Invalid, 'json patch op 0: path "/a/l/-" does not exist'),
        ([{"op": "remove", "path": "/a/l/01"}], Invalid, 'json patch op 0: path "/a/l/01" does not exist'),
        ([{"op": "remove", "path": ""}], Invalid, "json patch op 0: cannot remove the whole document"),
        (
            [{"op": "add", "path": "/a/l/4", "value": 1}],
            Invalid,
            'json patch op 0: index 4 in path "/a/l/4" is out of range',
        ),
        (
            [{"op": "add", "path": "/a/l/x", "value": 1}],
            Invalid,
            'json patch op 0: "x" in path "/a/l/x" is not an array index',
        ),
        ([{"op": "move", "from": "/nope", "path": "/x"}], Invalid, 'json patch op 0: from "/nope" does not exist'),
        ([{"op": "copy", "from": "/nope", "path": "/x"}], Invalid, 'json patch op 0: from "/nope" does not exist'),
        (
            [{"op": "move", "from": "/a", "path": "/a/b/c"}],
            Invalid,
            'json patch op 0: cannot move "/a" into its own child "/a/b/c"',
        ),
        (
            [{"op": "replace", "path": "", "value": [1]}],
            Invalid,
            "json patch: the patched document is a list, not an object",
        ),
    ],
)
def test_json_patch_errors(ops, error, message):
    with pytest.raises(error) as e:
        frozen(json_patch, DOC, ops)
    assert type(e.value) is error and e.value.message == message


def test_json_patch_fails_whole():
    doc = {"a": 1}
    with pytest.raises(Invalid):
        json_patch(doc, [{"op": "replace", "path": "/a", "value": 2}, {"op": "remove", "path": "/b"}])
    assert doc == {"a": 1}


# ---- merge patch (RFC 7386) -----------------------------------------------------------------


@pytest.mark.parametrize(
    "doc, patch, expected",
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        (pod(), {"metadata": {"labels": {"tier": None, "new": "1"}}}, None),
    ],
)
def test_merge_patch(doc, patch, expected):
    out = frozen(merge_patch, doc, patch)
    if expected is None:  # kubectl label k- k2=v
        assert out["metadata"]["labels"] == {"app": "web", "new": "1"}
    else:
        assert out == expected


def test_merge_patch_result_shares_nothing_with_the_patch():
    patch = {"spec": {"l": [{"x": 1}]}}
    out = merge_patch({}, patch)
    out["spec"]["l"][0]["x"] = 2
    assert patch == {"spec": {"l": [{"x": 1}]}}


def test_merge_patch_body_must_be_an_object():
    with pytest.raises(BadRequest, match="^merge patch: the body must be an object, not a list$"):
        merge_patch({}, [1])


# ---- strategic merge patch ------------------------------------------------------------------

CLIENT_SIDE_APPLY = {  # as kubectl's client-side apply sends it
    "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"apiVersion":"v1"}\n'}},
    "spec": {
        "$setElementOrder/containers": [{"name": "c"}],
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}],
    },
}
NODE = {
    "kind": "Node",
    "metadata": {"name": "n1", "finalizers": ["a", "b"]},
    "spec": {"taints": [{"key": "k1", "value": "v", "effect": "NoSchedule"}], "podCIDRs": ["10.0.0.0/24"]},
    "status": {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "n1"}],
    },
}
T1 = {"key": "k1", "value": "v", "effect": "NoSchedule"}
T2 = {"key": "k2", "effect": "NoExecute"}


def spec_of(out):
    return out["spec"]


@pytest.mark.parametrize(
    "doc, patch, path, expected",
    [
        # client-side apply keeps the image: containers merge by name
        (
            pod(),
            CLIENT_SIDE_APPLY,
            ("spec", "containers"),
            [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "200m"}}}],
        ),
        # kubectl taint: the whole new list; taints have no merge key, so the list is replaced
        (NODE, {"spec": {"taints": [T1, T2]}}, ("spec", "taints"), [T1, T2]),
        (NODE, {"spec": {"taints": [T2]}}, ("spec", "taints"), [T2]),
        (NODE, {"spec": {"taints": None}}, ("spec",), {"podCIDRs": ["10.0.0.0/24"]}),
        # cordon / uncordon
        (NODE, {"spec": {"unschedulable": True}}, ("spec", "unschedulable"), True),
        ({**NODE, "spec": {"unschedulable": True}}, {"spec": {"unschedulable": None}}, ("spec",), {}),
        # label removal
        (pod(), {"metadata": {"labels": {"tier": None}}}, ("metadata", "labels"), {"app": "web"}),
        # tolerations and readinessGates have no merge key either
        (
            pod(tolerations=[{"key": "a", "operator": "Exists"}]),
            {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
            ("spec", "tolerations"),
            [{"key": "b", "operator": "Exists"}],
        ),
        (
            pod(readinessGates=[{"conditionType": "a"}]),
            {"spec": {"readinessGates": [{"conditionType": "b"}]}},
            ("spec", "readinessGates"),
            [{"conditionType": "b"}],
        ),
        # status conditions and node addresses merge by type (the kubelet's status patch)
        (
            NODE,
            {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}},
            ("status", "conditions"),
            [
                {"type": "Ready", "status": "False", "reason": "KubeletNotReady"},
                {"type": "MemoryPressure", "status": "False"},
            ],
        ),
        (
            NODE,
            {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}},
            ("status", "addresses"),
            [{"type": "InternalIP", "address": "10.0.0.2"}, {"type": "Hostname", "address": "n1"}],
        ),
        # finalizers: an ordered set; new elements come first, as upstream orders them
        (NODE, {"metadata": {"finalizers": ["b", "c"]}}, ("metadata", "finalizers"), ["a", "b", "c"]),
        (NODE, {"metadata": {"finalizers": ["c"]}}, ("metadata", "finalizers"), ["c", "a", "b"]),
        (NODE, {"metadata": {"finalizers": ["b", "a"]}}, ("metadata", "finalizers"), ["b", "a"]),
        (NODE, {"spec": {"podCIDRs": ["fd00::/64"]}}, ("spec", "podCIDRs"), ["fd00::/64", "10.0.0.0/24"]),
        (
            NODE,
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
            ("metadata", "finalizers"),
            ["b"],
        ),
        (  # kubectl apply's form: deletions, additions and the order together
            NODE,
            {
                "metadata": {
                    "$deleteFromPrimitiveList/finalizers": ["a"],
                    "$setElementOrder/finalizers": ["c", "b"],
                    "finalizers": ["c"],
                }
            },
            ("metadata", "finalizers"),
            ["c", "b"],
        ),
        (NODE, {"metadata": {"$setElementOrder/finalizers": ["b", "a"]}}, ("metadata", "finalizers"), ["b", "a"]),
        (NODE, {"metadata": {"$deleteFromPrimitiveList/nothing": ["a"]}}, ("metadata", "finalizers"), ["a", "b"]),
        # ownerReferences merge by uid
        (
            {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}},
            {"metadata": {"ownerReferences": [{"uid": "2", "controller": True}]}},
            ("metadata", "ownerReferences"),
            [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b", "controller": True}],
        ),
        # a new container comes first (upstream's order without $setElementOrder)
        (
            pod(),
            {"spec": {"containers": [{"name": "side", "image": "busybox"}]}},
            ("spec", "containers"),
            [{"name": "side", "image": "busybox"}, {"name": "c", "image": "nginx"}],
        ),
        # ... and where $setElementOrder puts it
        (
            pod(),
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "c"}, {"name": "side"}],
                    "containers": [{"name": "side"}],
                }
            },
            ("spec", "containers"),
            [{"name": "c", "image": "nginx"}, {"name": "side"}],
        ),
        # ... while an element only the server has keeps its place after the ones before it
        (
            pod(containers=[{"name": "a"}, {"name": "x"}]),
            {"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "n"}], "containers": [{"name": "n"}]}},
            ("spec", "containers"),
            [{"name": "a"}, {"name": "n"}, {"name": "x"}],
        ),
        # $setElementOrder may name elements that are not in the list (upstream's test case)
        (
            {"status": {"conditions": [{"type": "1"}, {"type": "3"}]}},
            {
                "status": {
                    "$setElementOrder/conditions": [{"type": "3"}, {"type": "2"}, {"type": "1"}],
                    "conditions": [{"type": "3", "v": 3}, {"type": "1", "v": 1}],
                }
            },
            ("status", "conditions"),
            [{"type": "3", "v": 3}, {"type": "1", "v": 1}],
        ),
        # the patch's order wins over the stored one for the elements it names
        (
            {"conditions": [{"type": "1"}, {"type": "2", "v": "b"}, {"type": "3"}]},
            {"conditions": [{"type": "3", "v": "c"}, {"type": "1", "v": "a"}]},
            ("conditions",),
            [{"type": "2", "v": "b"}, {"type": "3", "v": "c"}, {"type": "1", "v": "a"}],
        ),
        # nested keyed lists: ports by containerPort, env by name, volumeMounts by mountPath
        (
            pod(
                containers=[
                    {
                        "name": "c",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    }
                ]
            ),
            {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "ports": [{"containerPort": 80, "name": "http"}],
                            "env": [{"name": "B", "value": "3"}],
                        }
                    ]
                }
            },
            ("spec", "containers"),
            [
                {
                    "name": "c",
                    "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
                }
            ],
        ),
        (
            pod(
                containers=[
                    {
                        "name": "c",
                        "volumeMounts": [{"mountPath": "/a", "name": "v"}],
                        "volumeDevices": [{"devicePath": "/d", "name": "x"}],
                    }
                ]
            ),
            {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "volumeMounts": [{"mountPath": "/a", "readOnly": True}],
                            "volumeDevices": [{"devicePath": "/d", "name": "y"}],
                        }
                    ]
                }
            },
            ("spec", "containers", 0),
            {
                "name": "c",
                "volumeMounts": [{"mountPath": "/a", "name": "v", "readOnly": True}],
                "volumeDevices": [{"devicePath": "/d", "name": "y"}],
            },
        ),
        # pod templates: rollout restart's annotation, and volumes by name
        (
            {
                "spec": {
                    "template": {
                        "metadata": {"labels": {"a": "b"}},
                        "spec": {"volumes": [{"name": "v", "emptyDir": {}}]},
                    }
                }
            },
            {
                "spec": {
                    "template": {
                        "metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "now"}},
                        "spec": {"volumes": [{"name": "w", "secret": {"secretName": "s"}}]},
                    }
                }
            },
            ("spec", "template"),
            {
                "metadata": {"labels": {"a": "b"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "now"}},
                "spec": {"volumes": [{"name": "w", "secret": {"secretName": "s"}}, {"name": "v", "emptyDir": {}}]},
            },
        ),
        # $patch on list elements
        (
            pod(containers=[{"name": "a"}, {"name": "b"}]),
            {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
            ("spec", "containers"),
            [{"name": "b"}],
        ),
        (
            pod(containers=[{"name": "a", "image": "x"}, {"name": "b"}]),
            {"spec": {"containers": [{"name": "a", "tty": True, "x": None}, {"$patch": "replace"}]}},
            ("spec", "containers"),
            [{"name": "a", "tty": True}],
        ),
        (pod(), {"spec": {"containers": [{"$patch": "replace"}]}}, ("spec", "containers"), []),
        # $patch on maps
        (
            pod(),
            {"metadata": {"labels": {"$patch": "replace", "only": "this", "gone": None}}},
            ("metadata", "labels"),
            {"only": "this"},
        ),
        (pod(), {"metadata": {"labels": {"$patch": "delete"}}}, ("metadata", "labels"), {}),
        (
            pod(),
            {"metadata": {"annotations": {"$patch": "delete"}}},
            ("metadata",),
            {"name": "p1", "namespace": "default", "labels": {"app": "web", "tier": "front"}},
        ),
        (
            pod(),
            {"spec": {"affinity": {"$patch": "replace", "nodeAffinity": {"x": 1}}}},
            ("spec", "affinity"),
            {"nodeAffinity": {"x": 1}},
        ),
        # $retainKeys (kubectl apply changing a volume's source, or a deployment's strategy)
        (
            {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
            {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": None}}},
            ("spec", "strategy"),
            {"type": "Recreate"},
        ),
        (
            pod(volumes=[{"name": "v", "emptyDir": {}}]),
            {"spec": {"volumes": [{"$retainKeys": ["name", "hostPath"], "name": "v", "hostPath": {"path": "/x"}}]}},
            ("spec", "volumes"),
            [{"name": "v", "hostPath": {"path": "/x"}}],
        ),
        # values landing where nothing was: nulls and directives dropped
        (
            pod(),
            {"spec": {"initContainers": [{"name": "i", "image": None, "env": [{"name": "A", "$patch": "delete"}]}]}},
            ("spec", "initContainers"),
            [{"name": "i", "env": []}],
        ),
        (pod(), {"spec": {"newMap": {"a": None, "b": {"$patch": "delete"}, "c": 1}}}, ("spec", "newMap"), {"c": 1}),
        (pod(), {"spec": {"gone": {"$patch": "delete"}}}, ("spec",), pod()["spec"]),
        # a type change replaces
        (pod(), {"spec": {"containers": {"not": "a list"}}}, ("spec", "containers"), {"not": "a list"}),
        # tables' other entries: hostAliases by ip, topologySpreadConstraints by topologyKey
        (
            pod(
                hostAliases=[{"ip": "1.1.1.1", "hostnames": ["a"]}],
                topologySpreadConstraints=[{"topologyKey": "zone", "maxSkew": 1}],
            ),
            {
                "spec": {
                    "hostAliases": [{"ip": "1.1.1.1", "hostnames": ["b"]}],
                    "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2}],
                }
            },
            ("spec",),
            {
                "containers": [{"name": "c", "image": "nginx"}],
                "hostAliases": [{"ip": "1.1.1.1", "hostnames": ["b"]}],
                "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2}],
            },
        ),
        # whole-object directives
        (pod(), {"$patch": "replace", "kind": "Pod"}, (), {"kind": "Pod"}),
        (pod(), {"$patch": "delete"}, (), {}),
        (pod(), {}, (), pod()),
    ],
)
def test_strategic_merge_patch(doc, patch, path, expected):
    out = frozen(strategic_merge_patch, doc, patch, doc.get("kind", "Pod"))
    for step in path:
        out = out[step]
    assert out == expected


@pytest.mark.parametrize(
    "kind, doc, patch, expected",
    [
        (
            "Service",
            {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 443}]}},
        ),
        (
            "Service",
            {"status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ports": [{"port": 80}]}]}}},
            {"status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ports": [{"port": 81}]}]}}},
            {"status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ports": [{"port": 81}]}]}}},
        ),
        (
            "Namespace",
            {"spec": {"finalizers": ["kubernetes", "x"]}},
            {"spec": {"finalizers": ["y"]}},
            {"spec": {"finalizers": ["y"]}},
        ),
        (
            "Namespace",
            {"metadata": {"finalizers": ["x"]}},
            {"metadata": {"finalizers": ["y"]}},
            {"metadata": {"finalizers": ["y", "x"]}},
        ),
        (
            "ServiceAccount",
            {"imagePullSecrets": [{"name": "a"}]},
            {"imagePullSecrets": [{"name": "b"}]},
            {"imagePullSecrets": [{"name": "b"}]},
        ),
        (
            "ServiceAccount",
            {"secrets": [{"name": "a"}]},
            {"secrets": [{"name": "b"}]},
            {"secrets": [{"name": "b"}, {"name": "a"}]},
        ),
        (
            "Pod",
            {"spec": {"imagePullSecrets": [{"name": "a"}]}},
            {"spec": {"imagePullSecrets": [{"name": "b"}]}},
            {"spec": {"imagePullSecrets": [{"name": "b"}, {"name": "a"}]}},
        ),
        (
            "Endpoints",
            {"subsets": [{"addresses": [{"ip": "1.1.1.1"}], "ports": [{"port": 80}]}]},
            {"subsets": [{"addresses": [{"ip": "2.2.2.2"}]}]},
            {"subsets": [{"addresses": [{"ip": "2.2.2.2"}]}]},
        ),
        ("EndpointSlice", {"ports": [{"port": 80}]}, {"ports": [{"port": 81}]}, {"ports": [{"port": 81}]}),
        ("Scale", {"spec": {"replicas": 1}}, {"spec": {"replicas": 3}}, {"spec": {"replicas": 3}}),
    ],
)
def test_strategic_merge_patch_by_kind(kind, doc, patch, expected):
    assert frozen(strategic_merge_patch, doc, patch, kind) == expected


def test_strategic_merge_patch_result_shares_nothing_with_the_patch():
    patch = {"spec": {"containers": [{"name": "new", "args": ["a"]}], "extra": {"l": [1]}}}
    out = strategic_merge_patch(pod(), patch, "Pod")
    out["spec"]["containers"][0]["args"].append("b")
    out["spec"]["extra"]["l"].append(2)
    assert patch == {"spec": {"containers": [{"name": "new", "args": ["a"]}], "extra": {"l": [1]}}}


@pytest.mark.parametrize(
    "patch, error, message",
    [
        ([], BadRequest, "strategic merge patch: the body must be an object, not a list"),
        ({"$patch": "merge"}, BadRequest, 'strategic merge patch: unknown patch type: "merge"'),
        ({"spec": {"$patch": "frob"}}, BadRequest, 'strategic merge patch: spec: unknown patch type: "frob"'),
        (
            {"spec": {"containers": ["c"]}},
            BadRequest,
            "strategic merge patch: spec.containers: element 0 is not an object",
        ),
        (
            {"spec": {"containers": [{"name": "c"}, {"image": "x"}]}},
            BadRequest,
            "strategic merge patch: spec.containers: element 1 does not contain declared merge key: name",
        ),
        (
            {"spec": {"containers": [{"$patch": "delete"}]}},
            BadRequest,
            "strategic merge patch: spec.containers: element 0 does not contain declared merge key: name",
        ),
        (
            {"spec": {"containers": [{"name": "c", "$patch": "merge"}]}},
            BadRequest,
            "strategic merge patch: spec.containers: merging lists cannot yet be specified in the patch",
        ),
        (
            {"spec": {"containers": [{"name": "c", "$patch": "nope"}]}},
            BadRequest,
            'strategic merge patch: spec.containers: unknown patch type: "nope"',
        ),
        (
            {"metadata": {"finalizers": [["a"]]}},
            Invalid,
            "strategic merge patch: metadata.finalizers: lists of lists are not supported",
        ),
        (
            {"spec": {"$retainKeys": "name"}},
            BadRequest,
            "strategic merge patch: spec.$retainKeys: invalid patch format of retainKeys",
        ),
        (
            {"spec": {"$retainKeys": ["containers"], "hostname": "h"}},
            BadRequest,
            'strategic merge patch: spec.$retainKeys: invalid patch format of retainKeys: "hostname" is set but not retained',
        ),
        (
            {"spec": {"$setElementOrder/containers": {"name": "c"}}},
            BadRequest,
            "strategic merge patch: spec.$setElementOrder/containers: invalid patch format of setElementOrder list",
        ),
        (
            {"spec": {"$setElementOrder/": []}},
            BadRequest,
            "strategic merge patch: spec.$setElementOrder/: invalid patch format of setElementOrder list",
        ),
        (
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                    "containers": [{"name": "b"}, {"name": "a"}],
                }
            },
            BadRequest,
            "strategic merge patch: spec.$setElementOrder/containers: the order in the patch list doesn't match the $setElementOrder list",
        ),
        (
            {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
            BadRequest,
            "strategic merge patch: metadata.$deleteFromPrimitiveList/finalizers: invalid patch format of primitive list",
        ),
    ],
)
def test_strategic_merge_patch_errors(patch, error, message):
    with pytest.raises(error) as e:
        frozen(strategic_merge_patch, {**pod(), "metadata": {"finalizers": ["a"]}}, patch, "Pod")
    assert type(e.value) is error and e.value.message == message


@pytest.mark.parametrize("kind", ["Widget", "Certificate", ""])
def test_strategic_merge_patch_of_a_custom_resource_is_415(kind):
    with pytest.raises(UnsupportedMediaType) as e:
        strategic_merge_patch({}, {}, kind)
    assert e.value.code == 415 and e.value.reason == "UnsupportedMediaType" and e.value.message == CR_415
    assert e.value.status()["code"] == 415
    assert pickle.loads(pickle.dumps(e.value)) == e.value


# ---- apply_patch: content types, bodies, apply ------------------------------------------------


def body(value):
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    "content_type, patch",
    [
        (JSON_PATCH, [{"op": "replace", "path": "/spec/containers/0/image", "value": "redis"}]),
        (MERGE_PATCH, {"spec": {"containers": [{"name": "c", "image": "redis"}]}}),
        (STRATEGIC_MERGE_PATCH, {"spec": {"containers": [{"name": "c", "image": "redis"}]}}),
        (STRATEGIC_MERGE_PATCH + "; charset=utf-8", {"spec": {"containers": [{"name": "c", "image": "redis"}]}}),
        ("Application/Merge-Patch+JSON;charset=UTF-8", {"spec": {"containers": [{"name": "c", "image": "redis"}]}}),
        (APPLY_PATCH, {**pod(), "spec": {"containers": [{"name": "c", "image": "redis"}]}}),
    ],
)
def test_apply_patch_dispatches_on_the_content_type(content_type, patch):
    out = frozen(apply_patch, pod(), content_type, body(patch), "Pod")
    assert out["spec"]["containers"] == [{"name": "c", "image": "redis"}]
    assert out["metadata"]["labels"] == {"app": "web", "tier": "front"}


def test_the_reference_client_side_apply_keeps_the_image():
    out = apply_patch(pod(), STRATEGIC_MERGE_PATCH, body(CLIENT_SIDE_APPLY), "Pod")
    assert out["spec"]["containers"] == [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "200m"}}}]
    # as a plain merge patch it would lose the image (kubectl's three-way merge keeps it)
    lost = apply_patch(pod(), MERGE_PATCH, body(CLIENT_SIDE_APPLY), "Pod")
    assert lost["spec"]["containers"] == [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}]


def test_apply_creates_an_absent_object_as_sent():
    manifest = pod()
    assert apply_patch(None, APPLY_PATCH, body(manifest), "Pod") == manifest


def test_apply_reads_yaml_as_upstream_converts_it():
    text = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  when: 2024-01-01T00:00:00Z\n  on: 'yes'\n"
    out = apply_patch(None, APPLY_PATCH, text, "ConfigMap")
    assert out["data"] == {"when": "2024-01-01T00:00:00Z", "true": "yes"}  # YAML 1.1, as upstream


def test_apply_merges_over_the_stored_object():
    stored = {**pod(), "status": {"phase": "Running"}}
    applied = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "labels": {"app": "api"}},
        "spec": {"containers": [{"name": "c", "resources": {}}]},
    }
    out = frozen(apply_patch, stored, APPLY_PATCH, body(applied), "Pod")
    assert out["metadata"]["labels"] == {"app": "api", "tier": "front"}
    assert out["spec"]["containers"] == [{"name": "c", "image": "nginx", "resources": {}}]
    assert out["status"] == {"phase": "Running"}


def test_apply_to_a_custom_resource_replaces_its_lists():
    stored = {"kind": "Widget", "spec": {"items": [{"name": "a"}], "conditions": [{"type": "x"}], "keep": 1}}
    applied = {"kind": "Widget", "spec": {"items": [{"name": "b"}], "conditions": [{"type": "y"}]}}
    out = apply_patch(stored, APPLY_PATCH, body(applied), "Widget")
    assert out["spec"] == {"items": [{"name": "b"}], "conditions": [{"type": "y"}], "keep": 1}


@pytest.mark.parametrize(
    "kind, content_type, message",
    [
        ("Pod", "application/json", BUILTIN_415),
        ("Pod", "", BUILTIN_415),
        ("Pod", "text/plain; charset=utf-8", BUILTIN_415),
        ("Widget", STRATEGIC_MERGE_PATCH, CR_415),
        ("Widget", "application/yaml", CR_415),
    ],
)
def test_apply_patch_unknown_content_type_is_415(kind, content_type, message):
    with pytest.raises(UnsupportedMediaType) as e:
        apply_patch({}, content_type, b"{}", kind)
    assert e.value.message == message


def test_custom_resources_take_the_other_three_patch_types():
    cr = {"kind": "Widget", "spec": {"size": 1}}
    assert apply_patch(cr, MERGE_PATCH, b'{"spec":{"size":2}}', "Widget") == {"kind": "Widget", "spec": {"size": 2}}
    ops = b'[{"op":"replace","path":"/spec/size","value":3}]'
    assert apply_patch(cr, JSON_PATCH, ops, "Widget") == {"kind": "Widget", "spec": {"size": 3}}
    assert accepted_patch_types("Widget") == (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)


@pytest.mark.parametrize(
    "content_type, raw, message",
    [
        (
            STRATEGIC_MERGE_PATCH,
            b"{nope",
            "the patch body is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (MERGE_PATCH, b"", "the patch body is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            JSON_PATCH,
            b'[{"op": "add", "path": "/x", "value": NaN}]',
            "the patch body is not valid JSON: NaN is not a JSON value",
        ),
        (JSON_PATCH, b"\xff\xfe\xfa", None),
        (JSON_PATCH, b'{"op": "add"}', "json patch: the body must be a list of operations, not an object"),
        (STRATEGIC_MERGE_PATCH, b"[]", "strategic merge patch: the body must be an object, not a list"),
        (MERGE_PATCH, b'"x"', "merge patch: the body must be an object, not a string"),
        (APPLY_PATCH, b"a: [1\nb: 2", None),
        (APPLY_PATCH, b"- 1\n- 2\n", "error decoding YAML: the applied configuration is a list, not an object"),
        (APPLY_PATCH, b"", "error decoding YAML: the applied configuration is null, not an object"),
    ],
)
def test_apply_patch_bad_bodies_are_400_in_one_line(content_type, raw, message):
    with pytest.raises(BadRequest) as e:
        apply_patch(pod(), content_type, raw, "Pod")
    assert "\n" not in e.value.message
    if message is not None:
        assert e.value.message == message
    elif content_type == APPLY_PATCH:
        assert e.value.message.startswith("error decoding YAML: ")
    else:
        assert e.value.message.startswith("the patch body is not valid JSON: ")


@pytest.mark.parametrize("content_type", [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH])
def test_only_apply_patches_a_missing_object(content_type):
    with pytest.raises(ValueError, match="answer NotFound before patching"):
        apply_patch(None, content_type, b"{}", "Pod")


def test_apply_patch_never_changes_the_stored_object():
    stored = pod()
    before = copy.deepcopy(stored)
    for content_type, patch in [
        (JSON_PATCH, [{"op": "remove", "path": "/metadata/labels"}]),
        (MERGE_PATCH, {"metadata": {"labels": None}}),
        (STRATEGIC_MERGE_PATCH, {"metadata": {"labels": None}, "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        (APPLY_PATCH, {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}),
    ]:
        out = apply_patch(stored, content_type, body(patch), "Pod")
        assert out is not stored and out != stored
    assert stored == before
