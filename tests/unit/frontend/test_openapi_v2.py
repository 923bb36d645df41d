"""``/openapi/v2``: the Swagger 2.0 document kubectl 1.27 and 1.28 read before ``apply``
(upstream's gnostic form). The protobuf is read back with kubemu's own wire reader
(``protobuf._fields``, independent of the writer) the way kubectl's
``supportsQueryParam`` reads it: per path, the ``patch`` operation's GVK vendor extension
(YAML in gnostic's ``Any.yaml``) and its query parameters. Then the JSON shape, the
content negotiation and ETag/304 of upstream's handler, the cache and custom kinds."""

import asyncio
import re

import orjson
import pytest
import yaml

from cluster.api import kinds
from cluster.api.kinds import Resource, served
from cluster.frontend import discovery, openapi_v2
from cluster.frontend.handler import Handler
from cluster.frontend.protobuf import _fields
from cluster.frontend.wire import Request

ACCEPT_PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what kubectl sends
PB = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"  # what upstream answers with
WIDGET = Resource("Widget", "example.com", "v1", "widgets", True, subresources=("status",))


# -- a reader for the few gnostic messages kubectl looks at -------------------------------


def fields(data: bytes) -> dict[int, list]:
    out: dict[int, list] = {}
    for num, _, raw in _fields(data):
        out.setdefault(num, []).append(raw)
    return out


def one(data: bytes, *path: int) -> bytes:
    """The sub-message at ``path`` (field numbers), b"" when absent (proto3 reading)."""
    for num in path:
        data = fields(data).get(num, [b""])[-1]
    return data


def text(data: bytes, num: int) -> str:
    return one(data, num).decode()


def named(data: bytes, num: int) -> dict[str, bytes]:
    """A repeated Named* field: {1 name, 2 value} entries as a dict."""
    return {text(entry, 1): one(entry, 2) for entry in fields(data).get(num, [])}


def extensions(data: bytes, num: int) -> dict:
    """Vendor extensions (NamedAny {1 name, 2 Any {2 yaml}}) parsed from their YAML."""
    return {name: yaml.safe_load(text(value, 2)) for name, value in named(data, num).items()}


def query_parameters(operation: bytes) -> list[str]:
    """ParametersItem 1 Parameter -> 2 NonBodyParameter -> 3 QueryParameterSubSchema, 4 name."""
    return [text(one(item, 1, 2, 3), 4) for item in fields(operation).get(8, []) if one(item, 1, 2, 3)]


def supports_field_validation(document: bytes, gvk: dict) -> bool:
    """kubectl's supportsQueryParam: the first path whose patch has the GVK decides."""
    for path_item in named(one(document, 8), 2).values():
        patch = one(path_item, 8)
        if extensions(patch, 13).get("x-kubernetes-group-version-kind") == gvk:
            return "fieldValidation" in query_parameters(patch)
    raise AssertionError(f"no patch operation carries {gvk}")


def gvk(r: Resource) -> dict:
    return {"group": r.group, "version": r.version, "kind": r.kind}


@pytest.fixture
def widget():
    kinds.register(WIDGET)
    yield WIDGET
    kinds.unregister(WIDGET.kind)


# -- the protobuf, as kubectl reads it -----------------------------------------------------


def test_every_served_kind_has_a_patch_with_its_gvk_and_field_validation():
    document = openapi_v2.answer({"accept": ACCEPT_PB}).body
    assert (text(document, 1), text(one(document, 2), 1)) == ("2.0", "Kubernetes")
    for r in served():
        if "patch" in r.verbs:
            assert supports_field_validation(document, gvk(r)), r.kind
        else:  # a read-only kind (kinds.READ_ONLY): no patch operation at all, as upstream
            with pytest.raises(AssertionError, match="no patch operation"):
                supports_field_validation(document, gvk(r))


def test_patch_parameters_and_extensions_on_the_wire():
    document = openapi_v2.document().protobuf
    paths = named(one(document, 8), 2)
    patch = one(paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"], 8)
    assert query_parameters(patch) == ["dryRun", "fieldManager", "fieldValidation", "force"]
    assert extensions(patch, 13) == {
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
    }
    consumes = [raw.decode() for raw in fields(patch).get(7, [])]
    assert "application/strategic-merge-patch+json" in consumes  # kubectl's patch type lookup
    body = one(fields(patch)[8][0], 1, 1)  # ParametersItem -> Parameter -> BodyParameter
    assert (text(body, 2), text(body, 3), fields(body)[4]) == ("body", "body", [1])
    force = next(one(i, 1, 2, 3) for i in fields(patch)[8] if text(one(i, 1, 2, 3), 4) == "force")
    assert (text(force, 2), text(force, 6), fields(force)[20]) == ("query", "boolean", [1])


def test_the_protobuf_carries_what_the_json_says():
    built = openapi_v2.document()
    doc = orjson.loads(built.json)
    paths = named(one(built.protobuf, 8), 2)
    assert list(paths) == list(doc["paths"])
    for path, item in doc["paths"].items():
        methods = {"get": 2, "put": 3, "post": 4, "delete": 5, "patch": 8}
        wired = {m: one(paths[path], n) for m, n in methods.items() if one(paths[path], n)}
        assert set(wired) == set(item) - {"parameters"}, path
        for method, operation in wired.items():
            assert text(operation, 5) == item[method]["operationId"]
            assert extensions(operation, 13) == {k: v for k, v in item[method].items() if k.startswith("x-")}
            assert set(named(one(operation, 9), 1)) == set(item[method]["responses"])
    bearer = named(one(built.protobuf, 13), 1)["BearerToken"]
    assert (text(one(bearer, 2), 1), text(one(bearer, 2), 2)) == ("apiKey", "authorization")


# -- the JSON document -------------------------------------------------------------------


def test_json_shape_for_a_namespaced_kind_and_a_cluster_scoped_one():
    doc = orjson.loads(openapi_v2.answer({"accept": "application/json"}).body)
    assert doc["swagger"] == "2.0" and "io.k8s.api.core.v1.ConfigMap" in doc["definitions"]
    collection = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]
    assert {m: op["x-kubernetes-action"] for m, op in collection.items() if m != "parameters"} == {
        "get": "list",
        "post": "post",
        "delete": "deletecollection",
    }
    item = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]
    assert sorted(m for m in item if m != "parameters") == ["delete", "get", "patch", "put"]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    post = collection["post"]
    assert [p["name"] for p in post["parameters"]] == ["body", "dryRun", "fieldManager", "fieldValidation"]
    assert post["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert post["operationId"] == "createCoreV1NamespacedConfigMap"
    node = doc["paths"]["/api/v1/nodes/{name}"]
    assert [p["name"] for p in node["parameters"]] == ["name", "pretty"]
    assert node["patch"]["operationId"] == "patchCoreV1Node"


def test_subresources_carry_the_kind_they_answer_with():
    paths = orjson.loads(openapi_v2.document().json)["paths"]
    deployments = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
    assert paths[deployments + "/scale"]["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
    }
    status = paths[deployments + "/status"]
    assert sorted(m for m in status if m != "parameters") == ["get", "patch", "put"]
    assert status["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Deployment"
    eviction = paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]
    assert list(eviction) == ["post", "parameters"]
    log = paths["/api/v1/namespaces/{namespace}/pods/{name}/log"]["get"]
    assert log["produces"] == ["text/plain"] and "tailLines" in [p["name"] for p in log["parameters"]]


def test_every_path_of_the_v3_documents_is_in_v2_with_the_same_operations():
    v2 = orjson.loads(openapi_v2.document().json)["paths"]
    for group, version in discovery.group_versions():
        v3 = discovery.openapi_document(group, version)
        assert v3 is not None
        for path, item in v3["paths"].items():
            assert set(item) == set(v2[path]), path
            for method in set(item) - {"parameters"}:
                for key in ("operationId", "x-kubernetes-group-version-kind", "x-kubernetes-action"):
                    assert item[method][key] == v2[path][method][key], (path, method, key)


def test_definitions_are_referred_to_and_encoded():
    deployment = kinds.BY_KIND["Deployment"]
    name = openapi_v2.model_name(deployment)
    assert name == "io.k8s.api.apps.v1.Deployment"
    built = openapi_v2.document()
    put = orjson.loads(built.json)["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["put"]
    assert put["parameters"][0]["schema"] == {"$ref": f"#/definitions/{name}"}
    definitions = named(one(built.protobuf, 9), 1)  # Definitions -> NamedSchema -> Schema
    wired = definitions[name]
    assert one(wired, 22) == b"\n\x06object"  # TypeItem {1 "object"}
    spec = named(one(wired, 25), 1)["spec"]
    assert text(spec, 1) == "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
    replicas = named(one(definitions["io.k8s.api.apps.v1.DeploymentSpec"], 25), 1)["replicas"]
    assert (one(replicas, 22), text(replicas, 2)) == (b"\n\x07integer", "int32")
    assert extensions(wired, 31) == {"x-kubernetes-group-version-kind": [gvk(deployment)]}
    containers = named(one(definitions["io.k8s.api.core.v1.PodSpec"], 25), 1)["containers"]
    assert extensions(containers, 31)["x-kubernetes-patch-merge-key"] == "name"  # what kubectl 1.27 merges by
    resources = named(one(definitions["io.k8s.api.core.v1.ResourceRequirements"], 25), 1)["limits"]
    quantity = one(resources, 21, 1)  # AdditionalPropertiesItem -> Schema
    assert text(quantity, 1) == "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"


# -- serving -------------------------------------------------------------------------------

NEGOTIATED = [
    ("", "application/json"),
    ("application/json", "application/json"),
    ("*/*", "application/json"),
    (ACCEPT_PB, PB),
    (PB, PB),
    (f"{ACCEPT_PB}, application/json", PB),
    (f"application/json;q=0.5, {ACCEPT_PB}", PB),
    ("text/html, application/*", "application/json"),
]


@pytest.mark.parametrize("accept, content_type", NEGOTIATED)
def test_content_negotiation(accept, content_type):
    answer = discovery.answer("/openapi/v2", {"accept": accept} if accept else {}, "a")
    assert (answer.status, answer.content_type) == (200, content_type)
    built = openapi_v2.document()
    assert answer.body == (built.json if content_type == "application/json" else built.protobuf)
    assert dict(answer.headers) == {"ETag": built.etag, "Vary": "Accept"}


def test_nothing_acceptable_is_a_bare_406():
    answer = openapi_v2.answer({"accept": "text/html, application/yaml"})
    assert (answer.status, answer.body, dict(answer.headers)) == (406, b"", {"Vary": "Accept"})


def test_etag_is_upstreams_and_shared_by_both_encodings():
    built = openapi_v2.document()
    assert re.fullmatch(r'"[0-9A-F]{128}"', built.etag)
    assert built.etag == discovery.etag(orjson.loads(built.json))
    json_tag = dict(openapi_v2.answer({}).headers)["ETag"]
    assert json_tag == dict(openapi_v2.answer({"accept": ACCEPT_PB}).headers)["ETag"] == built.etag


@pytest.mark.parametrize("if_none_match", ["{tag}", "W/{tag}", '"other", {tag}', "*"])
def test_a_matching_if_none_match_is_304(if_none_match):
    tag = openapi_v2.document().etag
    answer = openapi_v2.answer({"accept": ACCEPT_PB, "if-none-match": if_none_match.format(tag=tag)})
    assert (answer.status, answer.body, dict(answer.headers)["ETag"]) == (304, b"", tag)
    assert openapi_v2.answer({"accept": ACCEPT_PB, "if-none-match": '"other"'}).status == 200


def test_through_the_handler_and_the_old_path_stays_404():
    handler = Handler(backend=None)  # discovery never reads the backend

    def get(path, headers):
        return asyncio.run(handler.handle(Request("GET", path, {"timeout": "32s"}, headers)))

    assert get("/openapi/v2", {"accept": ACCEPT_PB}).content_type == PB
    assert get("/swagger-2.0.0.pb-v1", {}).status == 404  # upstream 1.28 no longer serves it
    assert get("/openapi/v1", {}).status == 404


# -- the cache and custom kinds -----------------------------------------------------------


def test_built_once_per_set_of_served_kinds(widget):
    first = openapi_v2.document()
    assert openapi_v2.document() is first
    kinds.unregister(widget.kind)
    without = openapi_v2.document()
    assert without is not first and without.etag != first.etag
    assert "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}" not in orjson.loads(without.json)["paths"]


def test_a_custom_kind_is_served_without_strategic_merge(widget):
    built = openapi_v2.document()
    assert supports_field_validation(built.protobuf, gvk(widget))
    paths = orjson.loads(built.json)["paths"]
    patch = paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["consumes"]
    assert patch["produces"] == ["application/json", "application/yaml"]
    assert patch["operationId"] == "patchExampleComV1NamespacedWidget"
    assert openapi_v2.model_name(widget) == "com.example.v1.Widget"
    assert "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status" in paths
