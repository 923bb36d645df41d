"""Admission webhooks given by URL, called around writes through the HTTP API: a local
aiohttp server plays the webhooks (deny, allow, patch, sleep), and the answers, what is
stored and the reviews the server received are checked."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import orjson
import pytest
from aiohttp import web
from http_builders import CMS, call, config_map, serve
from webhookserver import WebhookServer

from cluster.api.kinds import BY_KIND
from cluster.frontend.webhooks import Attributes, Hook, matches

VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


class Webhooks(WebhookServer):
    """Plays the webhooks the tests name; ``reviews`` holds (path, review) received."""

    def __init__(self) -> None:
        self.reviews: list[tuple[str, dict[str, Any]]] = []
        super().__init__()

    async def respond(self, name: str, review: dict[str, Any], request: web.Request) -> dict[str, Any]:
        self.reviews.append((f"/{name}?{request.query_string}", review))
        uid = review["request"]["uid"]
        response: dict[str, Any] = {"uid": uid, "allowed": True}
        if name == "deny":
            response = {"uid": uid, "allowed": False, "status": {"message": "no blue objects", "code": 403}}
        elif name == "deny-bare":
            response = {"uid": uid, "allowed": False}
        elif name == "mutate":
            ops = [{"op": "add", "path": "/data/added", "value": "by-webhook"}]
            response |= {"patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(ops)).decode()}
            response["warnings"] = ["patched by the webhook"]
        elif name == "slow":
            await asyncio.sleep(3)
        elif name == "wrong-uid":
            response["uid"] = "other"
        return response


@pytest.fixture(scope="module")
def hooks():
    s = Webhooks()
    yield s
    s.stop()


@pytest.fixture
def h():
    handler, _ = serve()
    return handler


def _webhook(name: str, url: str, **extra: Any) -> dict[str, Any]:
    rule = {
        "operations": ["CREATE", "UPDATE", "DELETE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["configmaps"],
    }
    hook = {
        "name": name,
        "clientConfig": {"url": url},
        "rules": [rule],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "objectSelector": {"matchLabels": {"color": "blue"}},
    }
    return hook | extra


def _register(h, path: str, *webhooks: dict[str, Any], name: str = "cfg") -> None:
    kind = "ValidatingWebhookConfiguration" if path == VALIDATING else "MutatingWebhookConfiguration"
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(webhooks),
    }
    code, answer = call(h, "POST", path, body)
    assert code == 201, answer


def _blue(name: str) -> dict[str, Any]:
    return config_map(name, {"a": "1"}, color="blue")


def test_a_validating_webhook_denies_and_nothing_is_stored(h, hooks):
    _register(h, VALIDATING, _webhook("deny.example.com", hooks.url("deny")))
    code, body = call(h, "POST", CMS, _blue("b1"))
    assert (code, body["message"]) == (403, 'admission webhook "deny.example.com" denied the request: no blue objects')
    assert call(h, "GET", f"{CMS}/b1")[0] == 404
    code, _ = call(h, "POST", CMS, config_map("plain"))  # the objectSelector does not match it
    assert code == 201


def test_the_review_carries_the_write(h, hooks):
    _register(h, VALIDATING, _webhook("allow.example.com", hooks.url("allow"), timeoutSeconds=7))
    hooks.reviews.clear()
    assert call(h, "POST", CMS, _blue("b2"))[0] == 201
    path, review = hooks.reviews[-1]
    assert path == "/allow?timeout=7s"
    assert (review["apiVersion"], review["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    req = review["request"]
    assert req["operation"] == "CREATE" and req["namespace"] == "default" and req["name"] == "b2"
    assert req["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert req["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert req["object"]["metadata"]["uid"]  # validating webhooks see the object as it will be stored
    assert req["oldObject"] is None and req["dryRun"] is False
    hooks.reviews.clear()
    cm = call(h, "GET", f"{CMS}/b2")[1]
    cm["data"] = {"a": "2"}
    assert call(h, "PUT", f"{CMS}/b2", cm)[0] == 200
    assert [(r["request"]["operation"], r["request"]["oldObject"]["data"]) for _, r in hooks.reviews] == [
        ("UPDATE", {"a": "1"})
    ]


def test_a_mutating_webhook_patches_the_object(h, hooks):
    _register(h, MUTATING, _webhook("mutate.example.com", hooks.url("mutate")))
    code, body = call(h, "POST", CMS, _blue("b3"))
    assert code == 201
    assert body["data"] == {"a": "1", "added": "by-webhook"}
    assert call(h, "GET", f"{CMS}/b3")[1]["data"]["added"] == "by-webhook"


@pytest.mark.parametrize(
    "url, extra, code, message",
    [
        (
            "http://127.0.0.1:1/x",
            {},
            500,
            'Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: Post "http://127.0.0.1:1/x?timeout=10s": ',
        ),
        (
            "slow",
            {"timeoutSeconds": 1},
            500,
            'Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: Post "{slow}?timeout=1s": context deadline exceeded',
        ),
        (
            "wrong-uid",
            {},
            500,
            'Internal error occurred: failed calling webhook "w.example.com": received invalid webhook response: expected response.uid=',
        ),
        ("deny-bare", {}, 400, 'admission webhook "w.example.com" denied the request without explanation'),
        ("http://127.0.0.1:1/x", {"failurePolicy": "Ignore"}, 201, None),
        ("slow", {"timeoutSeconds": 1, "failurePolicy": "Ignore"}, 201, None),
    ],
)
def test_failures_follow_the_failure_policy(h, hooks, url, extra, code, message):
    full = url if url.startswith("http") else hooks.url(url)
    _register(h, VALIDATING, _webhook("w.example.com", full, **extra))
    got, body = call(h, "POST", CMS, _blue("f"))
    assert got == code, body
    if message is None:
        assert call(h, "GET", f"{CMS}/f")[0] == 200
        return
    assert body["message"].startswith(message.replace("{slow}", hooks.url("slow")))
    assert call(h, "GET", f"{CMS}/f")[0] == 404


def test_a_service_webhook_cannot_be_reached(h, hooks):
    hook = _webhook("svc.example.com", "")
    hook["clientConfig"] = {"service": {"namespace": "ns", "name": "hooks"}}
    _register(h, VALIDATING, hook)
    code, body = call(h, "POST", CMS, _blue("s"))
    assert code == 500
    assert 'kubemu cannot reach service "ns/hooks"' in body["message"]


def test_a_dry_run_refused_by_a_webhook_with_side_effects(h, hooks):
    _register(h, VALIDATING, _webhook("side.example.com", hooks.url("allow"), sideEffects="Some"))
    code, body = call(h, "POST", CMS, _blue("d"), dryRun="All")
    assert (code, body["message"]) == (400, 'admission webhook "side.example.com" does not support dry run')
    assert call(h, "POST", CMS, _blue("d"))[0] == 201  # a real write is called as usual


def test_a_denied_delete_keeps_the_object(h, hooks):
    assert call(h, "POST", CMS, _blue("kept"))[0] == 201
    _register(h, VALIDATING, _webhook("deny.example.com", hooks.url("deny")))
    code, body = call(h, "DELETE", f"{CMS}/kept")
    assert code == 403 and "denied the request" in body["message"]
    assert call(h, "GET", f"{CMS}/kept")[0] == 200


def test_the_configurations_themselves_are_never_sent(h, hooks):
    rule = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
    _register(h, VALIDATING, _webhook("all.example.com", hooks.url("deny"), rules=[rule], objectSelector={}))
    code, body = call(h, "DELETE", f"{VALIDATING}/cfg")
    assert code == 200, body
    assert call(h, "POST", CMS, config_map("after"))[0] == 201


def _attrs(
    kind: str, op: str = "CREATE", ns: str = "default", labels: dict | None = None, ns_labels: dict | None = None
) -> Attributes:
    obj = {"metadata": {"name": "x", "labels": labels or {}}}
    return Attributes(op, BY_KIND[kind], ns if BY_KIND[kind].namespaced else "", "x", obj, None, False, ns_labels or {})


def _rule(**kw: Any) -> dict[str, Any]:
    return {"operations": ["CREATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]} | kw


@pytest.mark.parametrize(
    "spec, attrs, want",
    [
        ({"rules": [_rule()]}, _attrs("Pod"), True),
        ({"rules": [_rule(operations=["UPDATE"])]}, _attrs("Pod"), False),
        ({"rules": [_rule(resources=["pods"])]}, _attrs("Pod"), True),
        ({"rules": [_rule(resources=["pods/*"])]}, _attrs("Pod"), False),
        ({"rules": [_rule(resources=["*/*"])]}, _attrs("Pod"), True),
        ({"rules": [_rule(apiGroups=["apps"])]}, _attrs("Pod"), False),
        ({"rules": [_rule(apiGroups=["apps"], resources=["deployments"])]}, _attrs("Deployment"), True),
        ({"rules": [_rule(scope="Cluster")]}, _attrs("Pod"), False),
        ({"rules": [_rule(scope="Cluster")]}, _attrs("Node"), True),
        ({"rules": [_rule(scope="Namespaced")]}, _attrs("Pod"), True),
        ({"rules": [_rule()], "objectSelector": {"matchLabels": {"a": "b"}}}, _attrs("Pod", labels={"a": "b"}), True),
        ({"rules": [_rule()], "objectSelector": {"matchLabels": {"a": "b"}}}, _attrs("Pod"), False),
        (
            {"rules": [_rule()], "namespaceSelector": {"matchLabels": {"t": "y"}}},
            _attrs("Pod", ns_labels={"t": "y"}),
            True,
        ),
        ({"rules": [_rule()], "namespaceSelector": {"matchLabels": {"t": "y"}}}, _attrs("Pod"), False),
        ({"rules": [_rule()], "namespaceSelector": {"matchLabels": {"t": "y"}}}, _attrs("Node"), True),
        ({"rules": [_rule()]}, _attrs("ValidatingWebhookConfiguration"), False),
        ({"rules": []}, _attrs("Pod"), False),
    ],
)
def test_matching(spec, attrs, want):
    assert matches(Hook("h", spec, False), attrs) is want


def test_no_webhook_costs_no_list_per_write(h):
    """The configurations are read once per emulated second, not on every write."""
    calls: list[str] = []
    real = h.backend.list

    async def counting(kind, node_names):
        calls.append(kind)
        return await real(kind, node_names)

    h.backend.list = counting
    t0 = time.perf_counter()
    for i in range(5):
        assert call(h, "POST", CMS, config_map(f"n{i}"))[0] == 201
    assert calls.count("ValidatingWebhookConfiguration") <= 1
    assert time.perf_counter() - t0 < 10


def test_a_generated_name_is_the_one_the_validating_webhook_saw(h, hooks):
    _register(h, VALIDATING, _webhook("allow.example.com", hooks.url("allow")))
    hooks.reviews.clear()
    cm = _blue("")
    cm["metadata"] = {"generateName": "gen-", "labels": {"color": "blue"}}
    code, created = call(h, "POST", CMS, cm)
    assert code == 201
    seen = hooks.reviews[-1][1]["request"]
    assert seen["object"]["metadata"]["name"] == seen["name"] == created["metadata"]["name"]
    assert created["metadata"]["name"].startswith("gen-")
