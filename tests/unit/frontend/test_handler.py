"""The Kubernetes API, request by request, without a socket: a ``Handler`` over the local
runtime's apiserver. Status codes and bodies are what kubectl and the client libraries
read."""

import asyncio

import orjson
import pytest

from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request, Response, WatchStream
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

TOKEN = "secret"
AUTH = {"authorization": f"Bearer {TOKEN}"}
TABLE = {**AUTH, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def api():
    pools = [NodePool(namePrefix="n", count=2, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    return Handler(LocalBackend(lambda: cluster.api, cluster.now), token=TOKEN), cluster


def call(h, method, path, body=None, headers=None, **query):
    raw = body if isinstance(body, bytes) else (orjson.dumps(body) if body is not None else b"")
    answer = run(
        h.handle(
            Request(method, path, {k: str(v) for k, v in query.items()}, AUTH if headers is None else headers, raw)
        )
    )
    assert isinstance(answer, Response)
    return answer.status, orjson.loads(answer.body) if answer.content_type.startswith(
        "application/json"
    ) else answer.body


def pod(name, **labels):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


PODS = "/api/v1/namespaces/default/pods"


def test_without_the_token_every_api_path_is_401_but_health_and_version_answer(api):
    h, _ = api
    code, body = call(h, "GET", "/api/v1/nodes", headers={})
    assert (code, body["reason"], body["kind"]) == (401, "Unauthorized", "Status")
    assert call(h, "GET", "/healthz", headers={})[0] == 200
    assert call(h, "GET", "/version", headers={})[1]["minor"] == "33"


def test_create_get_and_the_object_carries_kind_and_api_version(api):
    h, _ = api
    code, created = call(h, "POST", PODS, pod("web"))
    assert code == 201 and created["metadata"]["uid"] and created["metadata"]["namespace"] == "default"
    code, got = call(h, "GET", f"{PODS}/web")
    assert code == 200 and (got["kind"], got["apiVersion"]) == ("Pod", "v1")
    code, again = call(h, "POST", PODS, pod("web"))
    assert (code, again["reason"], again["message"]) == (409, "AlreadyExists", 'pods "web" already exists')


@pytest.mark.parametrize(
    "body, code, reason",
    [
        (b"{not json", 400, "BadRequest"),
        (b"[1, 2]", 400, "BadRequest"),
        (orjson.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}}), 400, "BadRequest"),
        (
            orjson.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "other"}}),
            400,
            "BadRequest",
        ),
        (orjson.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {}}), 422, "Invalid"),
        (b"x" * (3 * 1024 * 1024 + 1), 413, "RequestEntityTooLarge"),
    ],
)
def test_a_bad_body_is_a_4xx_status_and_stores_nothing(api, body, code, reason):
    h, cluster = api
    before = cluster.api.store.rv
    got_code, status = call(h, "POST", PODS, body)
    assert (got_code, status["kind"], status["reason"], status["code"]) == (code, "Status", reason, code)
    assert cluster.api.store.rv == before


# kubectl 1.32's `create namespace pns` body (the k8s\0 envelope around a Namespace).
NAMESPACE_PB = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121d0a150a03706e7312001a0022002a0032003800420012001a001a002200"
)


def test_protobuf_bodies_are_decoded_and_a_kind_without_a_schema_is_415(api):
    h, _ = api
    headers = {**AUTH, "content-type": "application/vnd.kubernetes.protobuf"}
    code, created = call(h, "POST", "/api/v1/namespaces", NAMESPACE_PB, headers=headers)
    assert (code, created["kind"], created["metadata"]["name"]) == (201, "Namespace", "pns")
    gizmo = b"k8s\x00\x0a\x17\x0a\x0eexample.com/v1\x12\x05Gizmo"  # no message: not a built-in kind
    code, status = call(h, "POST", "/api/v1/namespaces", gizmo, headers=headers)
    assert code == 415 and "send it as JSON" in status["message"]
    code, status = call(h, "POST", "/api/v1/namespaces", b"not protobuf", headers=headers)
    assert (code, status["reason"]) == (400, "BadRequest")


def test_an_update_with_a_stale_resource_version_is_409(api):
    h, _ = api
    _, created = call(h, "POST", PODS, pod("web"))
    stale = dict(created, metadata=dict(created["metadata"], labels={"v": "1"}))
    assert call(h, "PUT", f"{PODS}/web", stale)[0] == 200
    code, status = call(h, "PUT", f"{PODS}/web", dict(stale, metadata=dict(stale["metadata"], labels={"v": "2"})))
    assert (code, status["reason"]) == (409, "Conflict")


def test_unknown_paths_and_resources_are_404(api):
    h, _ = api
    assert call(h, "GET", "/api/v1/widgets")[0] == 404
    assert call(h, "GET", "/apis/apps/v2/deployments")[0] == 404
    code, status = call(h, "GET", f"{PODS}/nope")
    assert (code, status["message"]) == (404, 'pods "nope" not found')


def test_list_pagination_over_2500_pods_returns_every_pod_once(api):
    h, cluster = api
    for i in range(2500):
        cluster.api.create(pod(f"p{i:04d}"), cluster.now())
    seen, token, pages = [], None, 0
    while True:
        q = {"limit": 500} | ({"continue": token} if token else {})
        code, page = call(h, "GET", PODS, **q)
        assert code == 200 and page["kind"] == "PodList"
        seen += [p["metadata"]["name"] for p in page["items"]]
        pages += 1
        token = page["metadata"].get("continue")
        if not token:
            break
    assert pages == 5 and seen == sorted(seen) and len(set(seen)) == 2500


def test_label_and_field_selectors_and_a_table_for_kubectl(api):
    h, _ = api
    call(h, "POST", PODS, pod("a", app="web"))
    call(h, "POST", PODS, pod("b", app="db"))
    _, listed = call(h, "GET", PODS, labelSelector="app=web")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["a"]
    _, listed = call(h, "GET", "/api/v1/pods", fieldSelector="metadata.name=b")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["b"]
    _, table = call(h, "GET", PODS, headers=TABLE)
    assert table["kind"] == "Table" and [r["cells"][0] for r in table["rows"]] == ["a", "b"]
    assert call(h, "GET", PODS, fieldSelector="spec.foo=x")[0] == 400


def test_merge_strategic_and_json_patches_and_server_side_apply_creates(api):
    h, _ = api
    call(h, "POST", PODS, pod("web"))
    merge = {**AUTH, "content-type": "application/merge-patch+json"}
    code, patched = call(h, "PATCH", f"{PODS}/web", {"metadata": {"labels": {"tier": "front"}}}, headers=merge)
    assert code == 200 and patched["metadata"]["labels"] == {"tier": "front"}
    jsonp = {**AUTH, "content-type": "application/json-patch+json"}
    ops = [{"op": "remove", "path": "/metadata/labels/tier"}]
    assert call(h, "PATCH", f"{PODS}/web", ops, headers=jsonp)[1]["metadata"]["labels"] == {}
    apply = {**AUTH, "content-type": "application/apply-patch+yaml"}
    code, created = call(h, "PATCH", f"{PODS}/new", pod("new"), headers=apply, fieldManager="kubectl")
    assert code == 201 and created["metadata"]["name"] == "new"
    assert call(h, "PATCH", f"{PODS}/missing", {"metadata": {}}, headers=merge)[0] == 404


def test_an_external_scheduler_binds_once_and_a_pdb_blocks_the_eviction(api):
    h, cluster = api
    mine = pod("web", app="web")
    mine["spec"]["schedulerName"] = "my-scheduler"  # the default scheduler leaves it alone
    call(h, "POST", PODS, mine)
    run(cluster.settle())
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web"},
        "target": {"kind": "Node", "name": "n-1"},
    }
    code, status = call(h, "POST", f"{PODS}/web/binding", body)
    assert (code, status["kind"], status["target"]["name"]) == (201, "Binding", "n-1")
    assert call(h, "GET", f"{PODS}/web")[1]["spec"]["nodeName"] == "n-1"
    code, status = call(h, "POST", f"{PODS}/web/binding", dict(body, target={"kind": "Node", "name": "n-0"}))
    assert (code, status["reason"]) == (409, "Conflict")
    assert call(h, "POST", f"{PODS}/web/binding", {"target": {}})[0] == 400
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    assert call(h, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb)[0] == 201
    run(cluster.settle())
    evict = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}}
    code, status = call(h, "POST", f"{PODS}/web/eviction", evict)
    assert (code, status["reason"]) == (429, "TooManyRequests")


def watch_lines(h, path, n, **query):
    async def go():
        answer = await h.handle(Request("GET", path, {"watch": "true", **query}, AUTH, b""))
        assert isinstance(answer, WatchStream)
        out = []
        async for line in answer.lines:
            out.append(orjson.loads(line))
            if len(out) == n:
                break
        return out

    return asyncio.run(asyncio.wait_for(go(), 10))


def test_a_watch_resumes_after_a_resource_version_and_an_expired_one_gets_a_410_error_event(api):
    h, cluster = api
    _, a = call(h, "POST", PODS, pod("a"))
    rv = a["metadata"]["resourceVersion"]
    call(h, "POST", PODS, pod("b"))
    events = watch_lines(h, PODS, 1, resourceVersion=rv)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "b"
    first = watch_lines(h, PODS, 2)  # no resourceVersion: the current state first
    assert [e["object"]["metadata"]["name"] for e in first] == ["a", "b"]
    # A resourceVersion beyond the store's history: the client must relist.
    (error,) = watch_lines(h, PODS, 1, resourceVersion=str(cluster.api.store.rv + 1000))
    assert error["type"] == "ERROR" and error["object"]["code"] == 410


def test_discovery_aggregated_and_legacy(api):
    h, _ = api
    aggregated = {**AUTH, "accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    answer = run(h.handle(Request("GET", "/api", {}, aggregated, b"")))
    assert answer.content_type == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    _, core = call(h, "GET", "/api/v1")
    names = {r["name"] for r in core["resources"]}
    assert {"pods", "pods/eviction", "pods/binding", "nodes", "configmaps"} <= names
    _, groups = call(h, "GET", "/apis")
    assert "apps" in {g["name"] for g in groups["groups"]}
    _, index = call(h, "GET", "/openapi/v3")
    assert "api/v1" in index["paths"] and call(h, "GET", "/openapi/v2")[0] == 200


def test_metrics_count_requests_by_verb_resource_and_code(api):
    h, _ = api
    call(h, "POST", PODS, pod("m"))
    call(h, "GET", f"{PODS}/nope")
    call(h, "GET", PODS)
    answer = run(h.handle(Request("GET", "/metrics", {}, AUTH, b"")))
    text = answer.body.decode()
    assert answer.status == 200 and answer.content_type.startswith("text/plain")
    assert 'apiserver_request_total{code="201",resource="pods",verb="POST"} 1.0' in text
    assert 'apiserver_request_total{code="404",resource="pods",verb="GET"} 1.0' in text
    assert 'apiserver_request_total{code="200",resource="pods",verb="LIST"} 1.0' in text
    assert "apiserver_request_duration_seconds_bucket" in text


def test_the_bindings_collection_binds_the_pod_its_body_names(api):
    h, cluster = api
    mine = pod("old-style")
    mine["spec"]["schedulerName"] = "my-scheduler"
    call(h, "POST", PODS, mine)
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "old-style"}, "target": {"name": "n-0"}}
    code, bound = call(h, "POST", "/api/v1/namespaces/default/bindings", body)
    assert (code, bound["kind"]) == (201, "Binding")
    assert call(h, "GET", f"{PODS}/old-style")[1]["spec"]["nodeName"] == "n-0"
    assert call(h, "POST", "/api/v1/namespaces/default/bindings", {"target": {"name": "n-0"}})[0] == 400
    assert call(h, "GET", "/api/v1/namespaces/default/bindings")[0] == 405


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                    }
                },
            }
        ],
    },
}


def test_a_custom_resource_definition_serves_its_kind_until_it_is_deleted(api):
    h, cluster = api
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    assert call(h, "GET", widgets)[0] == 404
    assert call(h, "POST", crds, CRD)[0] == 201
    _, listing = call(h, "GET", "/apis/example.com/v1")
    assert [r["name"] for r in listing["resources"]] == ["widgets"] and listing["resources"][0]["shortNames"] == ["wd"]
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
    code, created = call(h, "POST", widgets, widget)
    assert code == 201 and created["spec"] == {"size": 3}
    _, table = call(h, "GET", widgets, headers=TABLE)
    assert [r["cells"][0] for r in table["rows"]] == ["w1"]
    strategic = {**AUTH, "content-type": "application/strategic-merge-patch+json"}
    assert call(h, "PATCH", f"{widgets}/w1", {"spec": {"size": 4}}, headers=strategic)[0] == 415
    merge = {**AUTH, "content-type": "application/merge-patch+json"}
    assert call(h, "PATCH", f"{widgets}/w1", {"spec": {"size": 4}}, headers=merge)[1]["spec"] == {"size": 4}
    assert call(h, "DELETE", f"{crds}/widgets.example.com")[0] == 200
    assert call(h, "GET", widgets)[0] == 404 and cluster.api.store.count("Widget") == 0


KUBE_SCHEDULER_LISTS = [
    "/api/v1/pods?fieldSelector=status.phase!=Succeeded,status.phase!=Failed",
    "/api/v1/nodes",
    "/api/v1/namespaces",
    "/api/v1/services",
    "/api/v1/replicationcontrollers",
    "/api/v1/persistentvolumes",
    "/api/v1/persistentvolumeclaims",
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/statefulsets",
    "/apis/policy/v1/poddisruptionbudgets",
    "/apis/storage.k8s.io/v1/storageclasses",
    "/apis/storage.k8s.io/v1/csinodes",
    "/apis/storage.k8s.io/v1/csidrivers",
    "/apis/storage.k8s.io/v1/csistoragecapacities",
]


@pytest.mark.parametrize("url", KUBE_SCHEDULER_LISTS)
def test_every_list_kube_scheduler_waits_for_answers(api, url):
    h, _ = api
    path, _, q = url.partition("?")
    query = dict(part.split("=", 1) for part in q.split("&") if part) | {"limit": "500", "resourceVersion": "0"}
    code, body = call(h, "GET", path, **query)
    assert code == 200 and isinstance(body["items"], list) and body["metadata"]["resourceVersion"]
