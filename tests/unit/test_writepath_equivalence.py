"""The apiserver's write path: its fast paths store exactly what the plain ones do.

``canonicalize`` runs a plan compiled from the schema; ``walk`` reads the schema at every
step. Both must leave every object alike: checked over a table of pods (with and without
times, quantities in every form, tolerations, init containers, ephemeral storage, volumes,
a LimitRange's defaults) through ``APIServer.create``, and over a synthetic object of every
built-in kind that fills each field able to hold a quantity or a time. The stored values a
pod gets (defaults, QoS class, tolerations, canonical forms) are pinned exactly as well.
"""

from __future__ import annotations

import copy
from itertools import count
from typing import Any

import pytest

from cluster.api import canonical, schema
from cluster.api.errors import StatusError
from cluster.api.validation import ValidationError, validate
from cluster.api.validationfields import check_name
from cluster.apiserver import apiserver as apiserver_module
from cluster.apiserver.apiserver import APIServer

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = dict(NOT_READY, key="node.kubernetes.io/unreachable")


def _pod(name: str, spec: dict, meta: dict | None = None, ns: str = "default") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, **(meta or {})},
        "spec": spec,
    }


def _c(name: str = "c", **fields: Any) -> dict:
    return {"name": name, "image": fields.pop("image", "nginx:1.25"), **fields}


def _res(**maps: dict) -> dict:
    return {"resources": maps}


# name -> the pod; each is created in the same order on both servers.
PODS = {
    "minimal": _pod("minimal", {"containers": [_c()]}),
    "bench": _pod("bench", {"containers": [_c(image="pause", **_res(requests={"cpu": "100m", "memory": "500Mi"}))]}),
    "numbers": _pod("numbers", {"containers": [_c(**_res(requests={"cpu": 0.5, "memory": 2 * 1024**3}))]}),
    "forms": _pod(
        "forms",
        {
            "containers": [
                _c(**_res(requests={"cpu": "1e3", "memory": "1.5Gi"}, limits={"cpu": "2k", "memory": "2048Mi"})),
                _c("d", **_res(requests={"cpu": "0.0001", "memory": "0.5Ki"})),
            ]
        },
    ),
    "guaranteed": _pod("guaranteed", {"containers": [_c(**_res(limits={"cpu": 1, "memory": "1Gi"}))]}),
    "ephemeral": _pod(
        "ephemeral",
        {
            "containers": [
                _c(
                    **_res(
                        requests={"ephemeral-storage": "1.5Gi", "nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"},
                        limits={"nvidia.com/gpu": 1, "hugepages-2Mi": "4Mi"},
                    )
                )
            ],
            "volumes": [
                {"name": "scratch", "emptyDir": {"sizeLimit": "1.5Gi"}},
                {
                    "name": "claim",
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": 1e9}}}
                        }
                    },
                },
            ],
        },
    ),
    "tolerations": _pod(
        "tolerations",
        {
            "containers": [_c()],
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 10,
                },
                {"key": "a", "value": "b", "effect": "NoSchedule"},
            ],
        },
    ),
    "tolerates-all": _pod("tolerates-all", {"containers": [_c()], "tolerations": [{"operator": "Exists"}]}),
    "init": _pod(
        "init",
        {
            "initContainers": [
                _c("i", **_res(requests={"cpu": 0.25})),
                _c("side", restartPolicy="Always", **_res(limits={"memory": "64Mi"})),
            ],
            "containers": [_c(**_res(requests={"cpu": "1"}))],
        },
    ),
    "times": _pod(
        "times",
        {
            "containers": [
                _c(
                    env=[
                        {
                            "name": "M",
                            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
                        },
                        {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    ]
                )
            ],
            "volumes": [
                {
                    "name": "d",
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "p",
                                "resourceFieldRef": {"resource": "limits.cpu", "containerName": "c", "divisor": 0.001},
                            }
                        ]
                    },
                }
            ],
        },
        {"managedFields": [{"manager": "kubectl", "operation": "Apply", "time": "2026-01-01T10:00:00+02:00"}]},
    ),
    "probes": _pod(
        "probes",
        {
            "hostNetwork": True,
            "containers": [
                _c(
                    image="nginx",
                    ports=[{"containerPort": 80}],
                    livenessProbe={"httpGet": {"port": 80}},
                    lifecycle={"preStop": {"httpGet": {"port": 80}}},
                )
            ],
        },
    ),
    "gated": _pod("gated", {"containers": [_c()], "schedulingGates": [{"name": "g"}]}),
    "null-tolerations": _pod("null-tolerations", {"containers": [_c()], "tolerations": None}),
    "limited": _pod("limited", {"containers": [_c(), _c("d", **_res(limits={"cpu": "200m"}))]}, ns="limited"),
}

LIMIT_RANGE = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": {"name": "lr", "namespace": "limited"},
    "spec": {
        "limits": [{"type": "Container", "default": {"cpu": "300m", "memory": 0.5}, "defaultRequest": {"cpu": 0.1}}]
    },
}


def _server(general: bool, monkeypatch: pytest.MonkeyPatch) -> APIServer:
    if general:
        monkeypatch.setattr(apiserver_module, "canonicalize", canonical.walk)
    api = APIServer(seed=3)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "limited"}}, 1.0)
    api.create(copy.deepcopy(LIMIT_RANGE), 1.0)
    for pod in PODS.values():
        api.create(copy.deepcopy(pod), 2.0)
    monkeypatch.undo()
    return api


@pytest.fixture(scope="module")
def servers() -> tuple[APIServer, APIServer]:
    mp = pytest.MonkeyPatch()
    return _server(False, mp), _server(True, mp)


@pytest.mark.parametrize("name", list(PODS))
def test_the_fast_path_stores_the_bytes_the_general_path_stores(servers, name):
    fast, general = servers
    ns = PODS[name]["metadata"]["namespace"]
    assert fast.store.raw("Pod", ns, name) == general.store.raw("Pod", ns, name)
    assert fast.store.raw("Pod", ns, name) is not None


def _stored(servers, name: str) -> dict:
    return servers[0].get("Pod", PODS[name]["metadata"]["namespace"], name)


@pytest.mark.parametrize(
    "name, container, requests, limits",
    [
        ("bench", 0, {"cpu": "100m", "memory": "500Mi"}, None),
        ("numbers", 0, {"cpu": "500m", "memory": "2147483648"}, None),  # a number is decimal
        ("forms", 0, {"cpu": "1e3", "memory": "1536Mi"}, {"cpu": "2k", "memory": "2Gi"}),
        ("forms", 1, {"cpu": "100u", "memory": "512"}, None),
        ("guaranteed", 0, {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}),  # requests from limits
        ("limited", 0, {"cpu": "100m", "memory": "500m"}, {"cpu": "300m", "memory": "500m"}),  # LimitRanger
        ("limited", 1, {"cpu": "200m", "memory": "500m"}, {"cpu": "200m", "memory": "500m"}),
    ],
)
def test_stored_quantities_are_canonical(servers, name, container, requests, limits):
    res = _stored(servers, name)["spec"]["containers"][container]["resources"]
    assert res.get("requests") == requests
    assert res.get("limits") == limits


@pytest.mark.parametrize(
    "name, qos",
    [
        ("minimal", "BestEffort"),
        ("bench", "Burstable"),
        ("guaranteed", "Guaranteed"),
        ("init", "Burstable"),
        ("ephemeral", "BestEffort"),  # extended resources, hugepages and ephemeral storage do not count
        ("limited", "Burstable"),
    ],
)
def test_qos_class(servers, name, qos):
    assert _stored(servers, name)["status"]["qosClass"] == qos


@pytest.mark.parametrize(
    "name, tolerations",
    [
        ("minimal", [NOT_READY, UNREACHABLE]),
        (
            "tolerations",
            [dict(NOT_READY, tolerationSeconds=10), {"key": "a", "value": "b", "effect": "NoSchedule"}, UNREACHABLE],
        ),
        ("tolerates-all", [{"operator": "Exists"}]),
        ("null-tolerations", [NOT_READY, UNREACHABLE]),  # null is unset (it raised TypeError before)
    ],
)
def test_default_toleration_seconds(servers, name, tolerations):
    assert _stored(servers, name)["spec"]["tolerations"] == tolerations


def test_pod_defaults_exactly(servers):
    spec = _stored(servers, "probes")["spec"]
    assert {k: v for k, v in spec.items() if k not in ("containers", "tolerations")} == {
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "enableServiceLinks": True,
        "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert spec["containers"][0] == {
        "name": "c",
        "image": "nginx",
        "ports": [{"containerPort": 80, "protocol": "TCP", "hostPort": 80}],
        "livenessProbe": {
            "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
            "timeoutSeconds": 1,
            "periodSeconds": 10,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}}},
        "imagePullPolicy": "Always",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def test_times_and_ephemeral_storage(servers):
    pod = _stored(servers, "times")
    assert pod["metadata"]["managedFields"][0]["time"] == "2026-01-01T08:00:00Z"
    assert pod["spec"]["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"] == "1Mi"
    assert pod["spec"]["containers"][0]["env"][1]["valueFrom"]["fieldRef"] == {
        "fieldPath": "metadata.name",
        "apiVersion": "v1",
    }
    assert pod["spec"]["volumes"][0]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "1m"
    volumes = _stored(servers, "ephemeral")["spec"]["volumes"]
    assert volumes[0]["emptyDir"] == {"sizeLimit": "1536Mi"}
    claim = volumes[1]["ephemeral"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"] == {"requests": {"storage": "1G"}} and claim["volumeMode"] == "Filesystem"


def test_init_containers_keep_their_own_defaults(servers):
    spec = _stored(servers, "init")["spec"]
    side = spec["initContainers"][1]
    assert side["restartPolicy"] == "Always" and side["resources"] == {
        "limits": {"memory": "64Mi"},
        "requests": {"memory": "64Mi"},
    }
    assert spec["initContainers"][0]["resources"] == {"requests": {"cpu": "250m"}}
    assert _stored(servers, "gated")["status"]["conditions"][0]["reason"] == "SchedulingGated"


# ---- the compiled plan against the reference walk, for every built-in kind ----------------------

_QUANTITIES = ("0.5", 2000, 1.5, "1.5Gi", "1024Mi", "1e3", "1x", True, "0")
_TIMES = ("2026-01-01T10:00:00+02:00", "2026-01-01T10:00:00.5Z", "not a time", 7, "2026-01-01T10:00:00Z")


def _sample(t: schema.Type, picks: count, depth: int) -> Any:
    """A value of type ``t`` filling, to ``depth``, every field that can hold a quantity or a time."""
    n = next(picks)
    if t.code == schema.QUANTITY:
        return _QUANTITIES[n % len(_QUANTITIES)]
    if t.code in (schema.TIME, schema.MICRO_TIME):
        return _TIMES[n % len(_TIMES)]
    if depth == 0 or t.elem is None and t.struct is None:
        return None
    if t.code == schema.LIST and t.elem is not None:
        return [_sample(t.elem, picks, depth - 1), _sample(t.elem, picks, depth - 1)]
    if t.code == schema.MAP and t.elem is not None:
        return {"a": _sample(t.elem, picks, depth - 1), "b": _sample(t.elem, picks, depth - 1)}
    if t.struct is not None:
        fields = {name: _sample(ft, picks, depth - 1) for name, ft in canonical._carries(t.struct)}
        return {"other": "kept", **fields} if n % 4 else "not a map"  # a mistyped object too
    return None


@pytest.mark.parametrize("kind", schema.kinds())
def test_the_compiled_plan_rewrites_every_kind_as_the_walk_does(kind):
    t = schema.kind_type(kind)
    assert t is not None and t.struct is not None
    obj = {name: _sample(ft, count(1), 7) for name, ft in canonical._carries(t.struct)}
    fast, plain = copy.deepcopy(obj), copy.deepcopy(obj)
    canonical.canonicalize(kind, fast)
    canonical.walk(kind, plain)
    assert fast == plain
    assert repr(fast) == repr(plain)  # the same types too (a bool is not a quantity; 1 is not "1")


def test_the_sample_objects_do_change():
    """The comparison above is not vacuous: a Pod's sample has values both walks rewrite."""
    t = schema.kind_type("Pod")
    assert t is not None and t.struct is not None
    obj = {name: _sample(ft, count(1), 7) for name, ft in canonical._carries(t.struct)}
    before = copy.deepcopy(obj)
    canonical.canonicalize("Pod", obj)
    assert obj != before
    assert "500m" in repr(obj) and "2k" in repr(obj) and "1536Mi" in repr(obj) and "2026-01-01T08:00:00Z" in repr(obj)
    assert "'1x'" in repr(obj) and "'not a time'" in repr(obj)  # left for validation to name


def test_a_kind_without_a_schema_is_left_alone():
    obj = {"spec": {"cpu": 0.5}}
    canonical.canonicalize("NoSuchKind", obj)
    canonical.walk("NoSuchKind", obj)
    assert obj == {"spec": {"cpu": 0.5}}


# ---- the validation fast paths keep their messages ----------------------------------------------


@pytest.mark.parametrize(
    "value, label, messages",
    [
        ("web-1", True, []),
        ("a.b-c", False, []),
        ("a" * 63, True, []),
        ("a" * 64, True, ["must be no more than 63 characters"]),
        ("a.b", True, ["a lowercase RFC 1123 label must consist of"]),
        ("A" * 254, False, ["must be no more than 253 characters", "a lowercase RFC 1123 subdomain must consist of"]),
        (5, False, ["must be a string"]),
        (["web"], True, ["must be a string"]),  # not hashable: never looked up among the good ones
    ],
)
def test_check_name(value, label, messages):
    if not messages:
        check_name(value, "metadata.name", label)
        return
    with pytest.raises(ValidationError) as e:
        check_name(value, "metadata.name", label)
    assert [c.field for c in e.value.causes] == ["metadata.name"] * len(messages)
    assert all(m in c.message for m, c in zip(messages, e.value.causes, strict=True))
    if len(messages) == 2:
        assert str(e.value).startswith("[metadata.name: Invalid value: ")


def _replica_set(template_labels: dict, **meta: Any) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default", **meta},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b", **template_labels}}, "spec": {"containers": [_c()]}},
        },
    }


@pytest.mark.parametrize(
    "obj, error",
    [
        (
            _replica_set({"bad key!": "x"}),
            'spec.template.metadata.labels[bad key!]: Invalid value: "bad key!"',
        ),
        (_replica_set({}, namespace="Bad"), 'metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label'),
        (_replica_set({}, labels={"a": ["b"]}), 'metadata.labels.a: Invalid value: ["b"]: must be a string'),
        (_replica_set({}, labels={"a": "b c"}), 'metadata.labels.a: Invalid value: "b c": is not a valid label value'),
        # The labels are checked whole before the annotations are looked at.
        (
            _replica_set({}, labels={"Bad Key": "x"}, annotations=["not a map"]),
            'metadata.labels[Bad Key]: Invalid value: "Bad Key": is not a valid key',
        ),
        (
            _replica_set({}, labels=["x"], annotations={"Bad Key": "x"}),
            'metadata.labels: Invalid value: ["x"]: must be a map',
        ),
        (
            _replica_set({}, labels={"a": "b"}, annotations={"Bad Key": "x"}),
            'metadata.annotations[Bad Key]: Invalid value: "Bad Key": is not a valid key',
        ),
        (
            _pod("p", {"containers": [_c()]}, {"annotations": {"kubemu.io/run-seconds": "soon", "x": "y"}}),
            'metadata.annotations[kubemu.io/run-seconds]: Invalid value: "soon": is not a number of seconds',
        ),
        (
            _pod("p", {"containers": [_c()]}, {"annotations": {"kubemu.io/nope": "1"}}),
            'metadata.annotations[kubemu.io/nope]: Invalid value: "kubemu.io/nope": is not a kubemu.io annotation',
        ),
    ],
)
def test_metadata_errors_keep_their_paths(obj, error):
    with pytest.raises(ValidationError) as e:
        validate(obj)
    assert str(e.value).startswith(error)
    api = APIServer()
    with pytest.raises(StatusError) as refused:
        api.create(obj, 0.0)
    assert str(refused.value).startswith(error)
    assert api.count(obj["kind"]) == 0  # refused: nothing stored


def test_a_label_pair_seen_before_still_passes_and_a_bad_one_still_fails():
    api = APIServer()
    for i in range(3):
        api.create(_pod(f"p{i}", {"containers": [_c()]}, {"labels": {"app": "web"}}), 0.0)
    with pytest.raises(StatusError) as e:
        api.create(_pod("p9", {"containers": [_c()]}, {"labels": {"app": ["web"]}}), 0.0)
    assert str(e.value) == 'metadata.labels.app: Invalid value: ["web"]: must be a string'
    assert api.count("Pod") == 3


def test_annotations_of_others_pass():
    pod = _pod("p", {"containers": [_c()]}, {"annotations": {"example.com/a": "1", "b": ""}})
    assert APIServer().create(pod, 0.0)["metadata"]["annotations"] == {"example.com/a": "1", "b": ""}
