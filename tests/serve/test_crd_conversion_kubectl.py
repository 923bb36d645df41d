"""A CustomResourceDefinition converting by webhook, used by kubectl 1.33 and the Python client
against ``kubemu serve``: a Widget created at v1 (the storage version) reads and lists at v2
as the webhook (HTTPS, trusted through the caBundle) converts it, a write at v2 is stored
converted, and a webhook that fails answers kubectl with upstream's error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from servedcluster import needs_kubectl
from webhookserver import WebhookServer, converted

pytestmark = needs_kubectl


def _rename(obj: dict[str, Any]) -> dict[str, Any]:
    """v1's ``spec.color`` is v2's ``spec.shape``."""
    spec = dict(obj.get("spec") or {})
    old, new = ("color", "shape") if obj["apiVersion"] == "example.com/v2" else ("shape", "color")
    if old in spec:
        spec[new] = spec.pop(old)
    return {**obj, "spec": spec}


class Converter(WebhookServer):
    def __init__(self) -> None:
        self.desired: list[str] = []
        super().__init__(tls=True)

    async def convert(self, name: str, review: dict[str, Any], request: web.Request) -> dict[str, Any]:
        self.desired.append(review["request"]["desiredAPIVersion"])
        answer = converted(review, _rename)
        if name == "failure":
            answer["response"]["result"] = {"status": "Failure", "message": "v2 is not ready"}
        return answer


def _crd(url: str, ca_bundle: str) -> str:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    versions = [
        {"name": v, "served": True, "storage": v == "v1", "schema": {"openAPIV3Schema": schema}} for v in ("v1", "v2")
    ]
    spec = {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": versions,
        "conversion": {
            "strategy": "Webhook",
            "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": url, "caBundle": ca_bundle}},
        },
    }
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}
    return json.dumps({**crd, "metadata": {"name": "widgets.example.com"}, "spec": spec})


@pytest.fixture(scope="module")
def widgets(served):
    hooks = Converter()
    served.kubectl("apply", "-f", "-", input=_crd(hooks.url("convert/ok"), hooks.ca_bundle))
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"color": "red"}}
    assert (
        served.kubectl("apply", "-f", "-", input=json.dumps(widget)).stdout.strip() == "widget.example.com/w1 created"
    )
    yield hooks
    served.kubectl("delete", "crd", "widgets.example.com", check=False)
    hooks.stop()


def test_kubectl_reads_and_lists_the_webhooks_conversion(served, widgets):
    got = json.loads(served.kubectl("get", "widgets.v2.example.com", "w1", "-o", "json").stdout)
    assert (got["apiVersion"], got["spec"]) == ("example.com/v2", {"shape": "red"})
    at_v1 = json.loads(served.kubectl("get", "widgets.v1.example.com", "w1", "-o", "json").stdout)
    assert (at_v1["apiVersion"], at_v1["spec"]) == ("example.com/v1", {"color": "red"})
    listed = json.loads(served.kubectl("get", "widgets.v2.example.com", "-o", "json").stdout)
    assert [(i["apiVersion"], i["metadata"]["name"], i["spec"]) for i in listed["items"]] == [
        ("example.com/v2", "w1", {"shape": "red"})
    ]
    assert "example.com/v2" in widgets.desired and "example.com/v1" not in widgets.desired


def test_the_python_client_writes_at_v2_and_reads_at_v1(served, widgets):
    config.load_kube_config(config_file=str(served.kubeconfig))
    api = client.CustomObjectsApi(client.ApiClient())
    body = {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"shape": "square"}}
    made = api.create_namespaced_custom_object("example.com", "v2", "default", "widgets", body)
    assert (made["apiVersion"], made["spec"]) == ("example.com/v2", {"shape": "square"})
    stored = api.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "w2")
    assert stored["spec"] == {"color": "square"}


def test_a_failing_webhook_is_upstreams_error(served, widgets):
    crd = json.loads(_crd(widgets.url("convert/failure"), widgets.ca_bundle))
    patch = json.dumps({"spec": {"conversion": crd["spec"]["conversion"]}})
    served.kubectl("patch", "crd", "widgets.example.com", "--type=merge", "-p", patch)
    try:
        failed = served.kubectl("get", "widgets.v2.example.com", "w1", "-o", "json", check=False)
        assert failed.returncode == 1
        assert failed.stderr.strip() == (
            "Error from server: conversion webhook for example.com/v1, Kind=Widget failed: v2 is not ready"
        )
        config.load_kube_config(config_file=str(served.kubeconfig))
        api = client.CustomObjectsApi(client.ApiClient())
        with pytest.raises(ApiException) as e:
            api.list_namespaced_custom_object("example.com", "v2", "default", "widgets")
        assert e.value.status == 500 and "v2 is not ready" in e.value.body
        assert (
            served.kubectl("get", "widgets.v1.example.com", "w1", "-o", "name").stdout.strip()
            == "widget.example.com/w1"
        )
    finally:
        crd = json.loads(_crd(widgets.url("convert/ok"), widgets.ca_bundle))
        served.kubectl(
            "patch",
            "crd",
            "widgets.example.com",
            "--type=merge",
            "-p",
            json.dumps({"spec": {"conversion": crd["spec"]["conversion"]}}),
        )
