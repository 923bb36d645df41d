"""What upstream's conformance suite found, through ``kubemu serve`` with the real kubectl and
the Python client: admission webhooks given by URL (a local aiohttp server denies blue
ConfigMaps and labels red ones), NotFound details, a pod created with ephemeral containers,
a proxy sub-path, group documents, TokenReview, CertificateSigningRequests, a namespace's
status patch and an apply body with a key twice."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request

import orjson
import pytest
from aiohttp import web
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from servedcluster import needs_kubectl, until
from webhookserver import WebhookServer

pytestmark = needs_kubectl


class Hooks(WebhookServer):
    """Two webhooks: /deny refuses, /label patches a label in."""

    async def respond(self, name: str, review: dict, request: web.Request) -> dict:
        response = {"uid": review["request"]["uid"], "allowed": True}
        if name == "deny":
            return {**response, "allowed": False, "status": {"message": "blue is not allowed", "code": 403}}
        ops = [{"op": "add", "path": "/metadata/labels/checked", "value": "yes"}]
        return response | {"patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(ops)).decode()}


@pytest.fixture(scope="module")
def hooks(served):
    h = Hooks()

    def hook(name: str, color: str) -> dict:
        return {
            "name": f"{name}.example.com",
            "clientConfig": {"url": f"http://127.0.0.1:{h.port}/{name}"},
            "rules": [
                {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}
            ],
            "objectSelector": {"matchLabels": {"color": color}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }

    group = "admissionregistration.k8s.io/v1"
    configs = [
        {
            "apiVersion": group,
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "deny-blue"},
            "webhooks": [hook("deny", "blue")],
        },
        {
            "apiVersion": group,
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "label-red"},
            "webhooks": [hook("label", "red")],
        },
    ]
    served.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": configs}))
    yield h
    served.kubectl("delete", "validatingwebhookconfiguration/deny-blue", "mutatingwebhookconfiguration/label-red")
    h.stop()


@pytest.fixture(scope="module")
def core(served):
    return client.CoreV1Api(config.new_client_from_config(config_file=str(served.kubeconfig)))


def _create_cm(served, name: str, color: str):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"color": color}}}
    return served.kubectl("create", "-f", "-", input=json.dumps(cm), check=False)


def test_kubectl_prints_a_webhooks_denial(served, hooks):
    out = until(lambda: (p := _create_cm(served, "blue-1", "blue")).returncode != 0 and p, 10)
    assert out, "the webhook was never called"
    assert 'admission webhook "deny.example.com" denied the request: blue is not allowed' in out.stderr
    assert served.kubectl("get", "configmap", "blue-1", check=False).returncode != 0


def test_a_mutating_webhook_labels_what_kubectl_creates(served, hooks):
    assert _create_cm(served, "red-1", "red").returncode == 0
    labels = json.loads(served.kubectl("get", "configmap", "red-1", "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"color": "red", "checked": "yes"}


def test_the_python_client_gets_the_denial(served, hooks, core):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="blue-2", labels={"color": "blue"}))
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("default", body)
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"].endswith("denied the request: blue is not allowed")


def test_not_found_details_reach_the_python_client(core):
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("nope", "default")
    assert e.value.status == 404
    assert json.loads(e.value.body)["details"] == {"name": "nope", "kind": "pods"}


def test_kubectl_is_told_ephemeral_containers_cannot_be_created(served):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "eph"},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "ephemeralContainers": [{"name": "d", "image": "busybox"}],
        },
    }
    out = served.kubectl("create", "-f", "-", input=json.dumps(pod), check=False)
    assert out.returncode != 0
    assert 'The Pod "eph" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create' in out.stderr


def test_a_proxy_sub_path_gets_the_emulated_answer(served):
    served.kubectl("run", "web", "--image=x")
    until(lambda: served.kubectl("get", "pod", "web", "-o", "jsonpath={.spec.nodeName}").stdout, 15)
    out = served.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/web/proxy/healthz/x", check=False)
    assert out.returncode != 0
    assert "kubemu emulates containers" in out.stderr


def test_group_documents_and_token_reviews(served, core):
    doc = json.loads(served.kubectl("get", "--raw", "/apis/apiextensions.k8s.io").stdout)
    assert (doc["kind"], doc["preferredVersion"]["groupVersion"]) == ("APIGroup", "apiextensions.k8s.io/v1")
    api = client.AuthenticationV1Api(core.api_client)
    review = api.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token=served.token)))
    assert review.status.authenticated is True and review.status.user.username == "kubemu-admin"
    review = api.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token="nobody")))
    assert not review.status.authenticated


def test_a_certificate_signing_request_is_stored_and_approved(served):
    csr = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "alice"},
        "spec": {
            "request": base64.b64encode(b"-----BEGIN CERTIFICATE REQUEST-----").decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
        },
    }
    served.kubectl("create", "-f", "-", input=json.dumps(csr))
    assert "alice" in served.kubectl("get", "csr").stdout
    served.kubectl("certificate", "approve", "alice")
    got = json.loads(served.kubectl("get", "csr", "alice", "-o", "json").stdout)
    assert [c["type"] for c in got["status"]["conditions"]] == ["Approved"]


def test_a_namespace_status_patch_keeps_its_annotation(served):
    served.kubectl("create", "namespace", "st")
    patch = json.dumps({"metadata": {"annotations": {"patched": "yes"}}, "status": {"conditions": []}})
    served.kubectl("patch", "namespace", "st", "--subresource=status", "--type=merge", "-p", patch)
    got = json.loads(served.kubectl("get", "namespace", "st", "-o", "json").stdout)
    assert got["metadata"]["annotations"]["patched"] == "yes"


def test_an_apply_body_with_a_key_twice_is_refused(served):
    """kubectl re-encodes what it read, so the YAML goes as any client may send it."""
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\ndata:\n  a: '1'\n  a: '2'\n"
    url = f"https://127.0.0.1:{served.port}/api/v1/namespaces/default/configmaps/twice"
    req = urllib.request.Request(
        f"{url}?fieldManager=t&fieldValidation=Strict",
        data=body,
        method="PATCH",
        headers={"Authorization": f"Bearer {served.token}", "Content-Type": "application/apply-patch+yaml"},
    )
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, context=ctx, timeout=10)
    assert e.value.code == 400
    assert 'line 7: key "a" already set in map' in json.loads(e.value.read())["message"]
    assert served.kubectl("get", "configmap", "twice", check=False).returncode != 0
