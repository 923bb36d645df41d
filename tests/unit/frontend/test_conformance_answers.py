"""Answers upstream's conformance suite reads field by field: NotFound details, the
Retry-After header of a 429 that suggests a delay, the namespaces' verbs, pods created with
ephemeral containers, and one cause per field when several sysctls are wrong."""

from __future__ import annotations

import copy

import orjson
import pytest
from http_builders import AUTH, CMS, CRDS, PODS, TOKEN, call, multi_version_crd, pod, run, serve, widget, widgets

from cluster.apiserver.eviction import BudgetRefused
from cluster.frontend.wire import Request, error


@pytest.fixture(scope="module")
def h():
    handler, _ = serve()
    return handler


@pytest.mark.parametrize(
    "path, details",
    [
        (f"{PODS}/nope", {"name": "nope", "kind": "pods"}),
        ("/apis/apps/v1/namespaces/default/deployments/nope", {"name": "nope", "group": "apps", "kind": "deployments"}),
        ("/api/v1/namespaces/nope", {"name": "nope", "kind": "namespaces"}),
    ],
)
def test_not_found_names_the_resource_in_details(h, path, details):
    code, body = call(h, "GET", path)
    assert code == 404
    assert body["reason"] == "NotFound"
    assert body["details"] == details


def test_create_in_a_missing_namespace_names_the_namespace(h):
    code, body = call(h, "POST", "/api/v1/namespaces/gone/configmaps", {"metadata": {"name": "a"}})
    assert (code, body["message"]) == (404, 'namespaces "gone" not found')
    assert body["details"] == {"name": "gone", "kind": "namespaces"}


@pytest.mark.parametrize("delay, header", [(10, ("Retry-After", "10")), (0, None)])
def test_a_429_suggesting_a_delay_carries_retry_after(delay, header):
    answer = error(BudgetRefused("The disruption budget web is still being processed by the server.", delay))
    assert answer.status == 429
    assert [h for h in answer.headers if h[0] == "Retry-After"] == ([header] if header else [])
    assert orjson.loads(answer.body)["details"].get("retryAfterSeconds", 0) == delay


def test_namespaces_have_no_deletecollection(h):
    code, body = call(h, "GET", "/api/v1")
    row = next(r for r in body["resources"] if r["name"] == "namespaces")
    assert "deletecollection" not in row["verbs"] and "delete" in row["verbs"]
    code, body = call(h, "DELETE", "/api/v1/namespaces")
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    assert call(h, "GET", "/api/v1/namespaces/default")[0] == 200  # nothing was deleted


def _with_ephemeral(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    out["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox"}]
    return out


def test_a_pod_cannot_be_created_with_ephemeral_containers(h):
    code, body = call(h, "POST", PODS, _with_ephemeral(pod("eph")))
    assert code == 422
    assert body["message"] == 'Pod "eph" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create'
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: cannot be set on create",
            "field": "spec.ephemeralContainers",
        }
    ]
    assert call(h, "GET", f"{PODS}/eph")[0] == 404


def test_a_pod_template_cannot_hold_ephemeral_containers(h):
    template = _with_ephemeral({"metadata": {"labels": {"app": "d"}}, "spec": pod("x")["spec"]})
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template},
    }
    code, body = call(h, "POST", "/apis/apps/v1/namespaces/default/deployments", deploy)
    assert code == 422
    assert body["details"]["causes"][0]["field"] == "spec.template.spec.ephemeralContainers"
    assert body["details"]["causes"][0]["message"] == "Forbidden: ephemeral containers not allowed in pod template"


def test_several_bad_sysctls_get_one_cause_each(h):
    p = pod("sys")
    p["spec"]["securityContext"] = {"sysctls": [{"name": "foo-", "value": "1"}, {"name": "", "value": "2"}]}
    code, body = call(h, "POST", PODS, p)
    assert code == 422
    rule = "must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
    causes = body["details"]["causes"]
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": f'Invalid value: "foo-": {rule}',
            "field": "spec.securityContext.sysctls[0].name",
        },
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.securityContext.sysctls[1].name"},
    ]
    assert body["message"].startswith('Pod "sys" is invalid: [spec.securityContext.sysctls[0].name: Invalid value')


def test_one_bad_sysctl_is_one_cause(h):
    p = pod("sys1")
    p["spec"]["securityContext"] = {"sysctls": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}]}
    code, body = call(h, "POST", PODS, p)
    assert code == 422
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueDuplicate",
            "message": 'Duplicate value: "a"',
            "field": "spec.securityContext.sysctls[1].name",
        }
    ]


@pytest.mark.parametrize("version", ["v2", "v1beta1", "v1"])
def test_a_custom_resources_status_answers_at_the_version_asked(version):
    h, _ = serve()
    crd = multi_version_crd()
    for v in crd["spec"]["versions"]:
        v["subresources"] = {"status": {}}
        status = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        v["schema"]["openAPIV3Schema"]["properties"]["status"] = status
    assert call(h, "POST", CRDS, crd)[0] == 201
    try:
        assert call(h, "POST", widgets("v1"), widget("w", "v1", size=2))[0] == 201
        path = f"{widgets(version)}/w/status"
        code, got = call(h, "GET", path)
        assert (code, got["apiVersion"]) == (200, f"example.com/{version}")
        got["status"] = {"ready": True}
        code, put = call(h, "PUT", path, got)
        assert (code, put["apiVersion"], put["status"]) == (200, f"example.com/{version}", {"ready": True})
        merge = {**AUTH, "content-type": "application/merge-patch+json"}
        code, patched = call(h, "PATCH", path, {"status": {"ready": False}}, headers=merge)
        assert (code, patched["apiVersion"], patched["status"]) == (200, f"example.com/{version}", {"ready": False})
    finally:
        call(h, "DELETE", f"{CRDS}/widgets.example.com")  # the registry is the process's


def test_a_status_patch_keeps_its_metadata_changes(h):
    """Upstream's "should apply changes to a namespace status": the annotation comes back and
    stays; the spec does not change."""
    merge = {**AUTH, "content-type": "application/merge-patch+json"}
    assert call(h, "POST", "/api/v1/namespaces", {"metadata": {"name": "st"}})[0] == 201
    condition = {"type": "StatusPatch", "status": "True", "reason": "E2E", "message": "Patched by an e2e test"}
    body = {"metadata": {"annotations": {"e2e-patched-ns-status": "st"}}, "status": {"conditions": [condition]}}
    code, out = call(h, "PATCH", "/api/v1/namespaces/st/status", body, headers=merge)
    assert code == 200, out
    assert out["metadata"]["annotations"] == {"e2e-patched-ns-status": "st"}
    assert out["status"]["conditions"] == [condition] and out["status"]["phase"] == "Active"
    got = call(h, "GET", "/api/v1/namespaces/st")[1]
    assert got["metadata"]["annotations"] == {"e2e-patched-ns-status": "st"}
    got["metadata"]["labels"] = {**got["metadata"].get("labels", {}), "x": "y"}
    got["spec"] = {"finalizers": []}
    code, put = call(h, "PUT", "/api/v1/namespaces/st/status", got)
    assert code == 200 and put["metadata"]["labels"]["x"] == "y"
    assert put["spec"] == {"finalizers": ["kubernetes"]}  # the spec is not the status's to change


def test_a_deployments_status_write_keeps_its_labels():
    h, _ = serve()
    template = {"metadata": {"labels": {"app": "d"}}, "spec": pod("x")["spec"]}
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"a": "1"}}}
    d["spec"] = {"selector": {"matchLabels": {"app": "d"}}, "template": template}
    path = "/apis/apps/v1/namespaces/default/deployments"
    assert call(h, "POST", path, d)[0] == 201
    merge = {**AUTH, "content-type": "application/merge-patch+json"}
    patch = {"metadata": {"labels": {"a": "2"}, "annotations": {"n": "v"}}, "status": {"observedGeneration": 7}}
    code, out = call(h, "PATCH", f"{path}/d/status", patch, headers=merge)
    assert code == 200, out
    assert out["metadata"]["labels"] == {"a": "1"} and out["metadata"]["annotations"]["n"] == "v"


DUPLICATED = b"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: dup
data:
  a: "1"
  b: "2"
  a: "3"
"""


@pytest.mark.parametrize(
    "mode, code, warning",
    [
        ("Strict", 400, None),
        ("Warn", 201, 'unmarshal errors:   line 9: key \\"a\\" already set in map"'),
        ("Ignore", 201, None),
    ],
)
def test_an_apply_body_with_a_key_twice(mode, code, warning):
    h, _ = serve()
    headers = {**AUTH, "content-type": "application/apply-patch+yaml"}
    req = Request("PATCH", f"{CMS}/dup", {"fieldManager": "t", "fieldValidation": mode}, headers, DUPLICATED)
    answer = run(h.handle(req))
    body = orjson.loads(answer.body)
    assert answer.status == code, body
    warnings = [v for k, v in answer.headers if k == "Warning"]
    if code == 400:
        assert body["message"] == (
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
            '  line 9: key "a" already set in map'
        )
        assert call(h, "GET", f"{CMS}/dup")[0] == 404
    elif warning:
        assert any(warning in w for w in warnings), warnings
    else:
        assert not warnings


@pytest.mark.parametrize("group", ["apps", "apiextensions.k8s.io", "admissionregistration.k8s.io", "autoscaling"])
def test_a_group_document_names_its_versions(h, group):
    code, doc = call(h, "GET", f"/apis/{group}/")
    assert code == 200 and (doc["kind"], doc["apiVersion"], doc["name"]) == ("APIGroup", "v1", group)
    listed = next(
        g
        for g in call(h, "GET", "/apis", headers={**AUTH, "accept": "application/json"})[1]["groups"]
        if g["name"] == group
    )
    assert doc["versions"] == listed["versions"] and doc["preferredVersion"] == listed["preferredVersion"]
    assert doc["preferredVersion"] in doc["versions"]


def test_an_unserved_group_document_is_not_found(h):
    code, body = call(h, "GET", "/apis/nope.example.com")
    assert (code, body["reason"]) == (404, "NotFound")


TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"


def _token_review(token: str) -> dict:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}


def test_a_token_review_of_the_admin_token(h):
    code, review = call(h, "POST", TOKEN_REVIEWS, _token_review(TOKEN))
    assert code == 201
    assert review["status"]["authenticated"] is True
    assert review["status"]["user"]["username"] == "kubemu-admin"
    assert "system:masters" in review["status"]["user"]["groups"]


def test_a_token_review_of_a_token_nobody_issued(h):
    code, review = call(h, "POST", TOKEN_REVIEWS, _token_review("not-a-token"))
    assert code == 201 and review["status"] == {"user": {}}


def test_a_token_review_needs_a_token(h):
    code, body = call(h, "POST", TOKEN_REVIEWS, _token_review(""))
    assert (code, body["message"]) == (400, "token is required for TokenReview in authentication")


def test_token_reviews_are_discovered(h):
    code, listing = call(h, "GET", "/apis/authentication.k8s.io/v1")
    row = next(r for r in listing["resources"] if r["name"] == "tokenreviews")
    assert (row["kind"], row["namespaced"], row["verbs"]) == ("TokenReview", False, ["create"])


def _scaled_crd(scale: dict) -> dict:
    crd = multi_version_crd()
    for v in crd["spec"]["versions"]:
        v["subresources"] = {"status": {}, "scale": scale}
        v["schema"]["openAPIV3Schema"]["x-kubernetes-preserve-unknown-fields"] = True
    return crd


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_a_custom_resources_scale_follows_its_definitions_paths(version):
    h, cluster = serve()
    scale = {
        "specReplicasPath": ".spec.size",
        "statusReplicasPath": ".status.ready",
        "labelSelectorPath": ".status.selector",
    }
    assert call(h, "POST", CRDS, _scaled_crd(scale))[0] == 201
    try:
        w = widget("w", "v1", size=3)
        w["status"] = {"ready": 2, "selector": "app=w"}
        assert call(h, "POST", widgets("v1"), w)[0] == 201
        call(h, "PUT", f"{widgets('v1')}/w/status", {**w, "status": {"ready": 2, "selector": "app=w"}})
        code, got = call(h, "GET", f"{widgets(version)}/w/scale")
        assert code == 200, got
        assert (got["kind"], got["apiVersion"]) == ("Scale", "autoscaling/v1")
        assert got["spec"] == {"replicas": 3} and got["status"] == {"replicas": 2, "selector": "app=w"}
        got["spec"]["replicas"] = 5
        code, put = call(h, "PUT", f"{widgets(version)}/w/scale", got)
        assert (code, put["spec"]) == (200, {"replicas": 5})
        assert cluster.api.store.get("Widget", "default", "w")["spec"]["size"] == 5
    finally:
        call(h, "DELETE", f"{CRDS}/widgets.example.com")
