"""The networking, admission and node kinds of issue 36: their tables as upstream prints them,
and the DefaultIngressClass and RuntimeClass admission (through a ``Handler`` over the local
runtime, as ``test_groups.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from test_groups import PODS, call, new_handler

from cluster.apiserver import classadmission
from cluster.frontend import tables
from cluster.frontend.handler import Handler


@pytest.fixture
def api() -> Handler:
    return new_handler()


# ---- networking kinds, tables and admission ---------------------------------------------------


def ingress(name: str = "web", **spec: Any) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}, **spec},
    }


def ingress_class(name: str, default: bool = False) -> dict:
    ann = {"ingressclass.kubernetes.io/is-default-class": "true"} if default else {}
    meta = {"name": name, "annotations": ann}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta, "spec": {"controller": "x"}}


@pytest.mark.parametrize(
    "spec, status, cells",
    [
        ({}, {}, ["web", "<none>", "*", "", "80"]),
        ({"ingressClassName": "nginx", "tls": [{"hosts": ["a"]}], "rules": [{"host": "a"}, {}, {"host": "b"}]},
         {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}]}},
         ["web", "nginx", "a,b", "10.0.0.2,lb.e...", "80, 443"]),
        ({"rules": [{"host": host} for host in "abcde"]}, {}, ["web", "<none>", "a,b,c + 2 more...", "", "80"]),
    ],
)  # fmt: skip
def test_ingress_rows_print_as_upstream(spec, status, cells):
    obj = {**ingress(**spec), "status": status}
    assert tables.table("Ingress", [obj], 0.0)["rows"][0]["cells"][:5] == cells


@pytest.mark.parametrize(
    "kind, obj, cells",
    [
        ("IngressClass", {"metadata": {"name": "n"}, "spec": {"controller": "c", "parameters": {"apiGroup": "g", "kind": "K", "name": "p"}}},
         ["n", "c", "K.g/p"]),
        ("NetworkPolicy", {"metadata": {"name": "n"}, "spec": {"podSelector": {"matchLabels": {"role": "db"}}}}, ["n", "role=db"]),
        ("NetworkPolicy", {"metadata": {"name": "n"}, "spec": {"podSelector": {}}}, ["n", "<none>"]),
        ("RuntimeClass", {"metadata": {"name": "n"}, "handler": "runsc"}, ["n", "runsc"]),
        ("ValidatingWebhookConfiguration", {"metadata": {"name": "n"}, "webhooks": [{}, {}]}, ["n", 2]),
        ("ValidatingAdmissionPolicy", {"metadata": {"name": "n"}, "spec": {"validations": [{}]}}, ["n", 1, "<unset>"]),
        ("ValidatingAdmissionPolicyBinding", {"metadata": {"name": "n"}, "spec": {"policyName": "p", "paramRef": {"name": "x"}}},
         ["n", "p", "*/x"]),
        ("ValidatingAdmissionPolicyBinding",
         {"metadata": {"name": "n"}, "spec": {"policyName": "p", "paramRef": {"selector": {"matchLabels": {"a": "b"}}}}},
         ["n", "p", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}"]),
        ("APIService", {"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Available", "status": "False",
                                                                             "reason": "MissingEndpoints"}]}},
         ["n", "Local", "False (MissingEndpoints)"]),
    ],
)  # fmt: skip
def test_group_kind_rows_print_as_upstream(kind, obj, cells):
    row = tables.table(kind, [obj], 0.0)["rows"][0]["cells"]
    assert row[: len(cells)] == cells


def test_an_ingress_without_a_class_gets_the_newest_default(api):
    for ic in (ingress_class("old", True), ingress_class("plain"), ingress_class("new", True)):
        assert call(api, "POST", "/apis/networking.k8s.io/v1/ingressclasses", ic)[0] == 201
    ings = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
    assert call(api, "POST", ings, ingress("a"))[1]["spec"]["ingressClassName"] == "new"  # same second: by name
    assert call(api, "POST", ings, ingress("b", ingressClassName="plain"))[1]["spec"]["ingressClassName"] == "plain"
    annotated = ingress("c")
    annotated["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "legacy"}
    assert "ingressClassName" not in call(api, "POST", ings, annotated)[1]["spec"]


def runtime_class(**fields: Any) -> dict:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"},
        "handler": "runsc",
        **fields,
    }


def pod(name: str = "p", **spec: Any) -> dict:
    containers = [{"name": "c", "image": "x"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": containers, **spec}}


@pytest.mark.parametrize(
    "rc, spec, message",
    [
        (None, {"runtimeClassName": "gvisor"}, 'pods "p" is forbidden: pod rejected: RuntimeClass "gvisor" not found'),
        ({}, {"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}},
         'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'),
        ({"overhead": {"podFixed": {"cpu": "250m"}}}, {"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}},
         "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
        ({"scheduling": {"nodeSelector": {"sandbox": "yes"}}}, {"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "no"}},
         'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no'),
    ],
)  # fmt: skip
def test_runtimeclass_admission_refuses_as_upstream(api, rc, spec, message):
    if rc is not None:
        assert call(api, "POST", "/apis/node.k8s.io/v1/runtimeclasses", runtime_class(**rc))[0] == 201
    code, status = call(api, "POST", PODS, pod(**spec))
    assert (code, status["reason"], status["message"]) == (403, "Forbidden", message)
    assert call(api, "GET", PODS)[1]["items"] == []


def test_runtimeclass_admission_sets_overhead_and_merges_scheduling(api):
    scheduling = {"nodeSelector": {"sandbox": "yes"}, "tolerations": [{"key": "sandbox", "operator": "Exists"}]}
    rc = runtime_class(overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}}, scheduling=scheduling)
    call(api, "POST", "/apis/node.k8s.io/v1/runtimeclasses", rc)
    code, made = call(api, "POST", PODS, pod(runtimeClassName="gvisor", nodeSelector={"zone": "a"}))
    assert code == 201
    spec = made["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"zone": "a", "sandbox": "yes"}
    assert {"key": "sandbox", "operator": "Exists"} in spec["tolerations"]


class _Classes:
    def __init__(self, *classes: dict) -> None:
        self.classes = list(classes)

    def peek_all(self, kind: str) -> list[dict]:
        return self.classes


def test_the_newest_default_ingress_class_wins():
    older = ingress_class("a", True)
    older["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    newer = ingress_class("z", True)
    newer["metadata"]["creationTimestamp"] = "2026-01-01T00:01:00Z"
    obj = ingress()
    classadmission.admit_default_ingress_class(_Classes(older, newer, ingress_class("m")), obj)
    assert obj["spec"]["ingressClassName"] == "z"


EXISTS = {"key": "k", "operator": "Exists"}
EQUAL = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}
ANY = {"operator": "Exists"}


@pytest.mark.parametrize(
    "first, second, merged",
    [
        ([EQUAL], [EXISTS], [EXISTS]),  # Exists on the key covers the Equal one
        ([EXISTS], [EQUAL], [EXISTS]),
        ([EQUAL], [EQUAL], [EQUAL]),  # of two equal, one
        ([EQUAL], [ANY], [ANY]),  # an empty key with Exists covers everything
        ([EQUAL], [{**EQUAL, "value": "w"}], [EQUAL, {**EQUAL, "value": "w"}]),
    ],
)
def test_tolerations_merge_as_upstream(first, second, merged):
    assert classadmission.merge_tolerations(first, second) == merged
