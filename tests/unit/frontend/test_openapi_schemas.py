"""The models of the OpenAPI documents (``cluster/frontend/openapi_schemas.py``) and the v3
documents' serving (``openapi_v3.py``): every served kind complete in ``/openapi/v2`` and in
its ``/openapi/v3/<gv>`` document (every field of the schema table, every reference resolved),
upstream's formats and named models, the merge keys the server merges by, custom kinds from
their definitions, the caches, and upstream's hash, 301, 304 and 406 answers."""

import asyncio
import re
import time

import orjson
import pytest

from cluster.api import kinds
from cluster.api import schema as sch
from cluster.api.errors import StatusError
from cluster.api.kinds import Resource
from cluster.api.strategicpatch import _list_strategy
from cluster.frontend import discovery, openapi_v2, openapi_v3
from cluster.frontend import openapi_descriptions as descriptions
from cluster.frontend import openapi_schemas as osch
from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

V2, V3 = True, False
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"


def v2_models() -> dict:
    return orjson.loads(openapi_v2.document().json)["definitions"]


def v3_document(group: str, version: str, crds=()) -> dict:
    built = openapi_v3.document(group, version, crds)
    assert built is not None, (group, version)
    return orjson.loads(built.json)


def models_of(r: Resource, v2: bool, crds=()) -> dict:
    return v2_models() if v2 else v3_document(r.group, r.version, crds)["components"]["schemas"]


def target(schema: dict) -> str | None:
    """The model a field refers to (v2 ``$ref``, v3 ``allOf: [{$ref}]``), else None."""
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return ref.rpartition("/")[2] if ref else None


def field(models: dict, model: str, path: str) -> dict:
    """The schema of a dotted field path from ``model``, through references, items and maps."""
    schema = models[model]
    for step in path.split("."):
        while True:
            name = target(schema)
            if name:
                schema = models[name]
            elif "items" in schema:
                schema = schema["items"]
            else:
                break
        schema = schema["properties"][step]
    return schema


# -- every kind, every field ----------------------------------------------------------------


def _check_struct(s: sch.Struct, model: dict, models: dict, seen: set) -> None:
    """``model`` has exactly the struct's fields, each of its type; recursively."""
    if f"{s.package}.{s.name}" in seen:
        return
    seen.add(f"{s.package}.{s.name}")
    assert set(model.get("properties", {})) == set(s.fields), s
    assert model.get("required", []) == list(s.required), s
    for name, t in s.fields.items():
        _check_type(t, model["properties"][name], models, seen, f"{s.name}.{name}")


def _check_type(t: sch.Type, schema: dict, models: dict, seen: set, where: str) -> None:
    if t.struct is not None:
        name = target(schema)
        assert name == osch.struct_model(t.struct) and name in models, where
        _check_struct(t.struct, models[name], models, seen)
    elif t.code == sch.LIST:
        assert schema["type"] == "array", where
        assert schema.get("x-kubernetes-list-map-keys", []) == list(t.keys), where
        _check_type(t.elem, schema["items"], models, seen, where + "[]")
    elif t.code == sch.MAP:
        assert schema["type"] == "object", where
        _check_type(t.elem, schema["additionalProperties"], models, seen, where + "{}")
    elif t.code in (sch.QUANTITY, sch.INT_OR_STRING, sch.TIME, sch.MICRO_TIME):
        assert target(schema) in models, where
    elif t.code == sch.ANY:
        assert "type" not in schema and schema, where  # any value; not empty (kubectl explain)
    else:
        expected = {sch.STRING: "string", sch.INT32: "integer", sch.INT64: "integer", sch.BOOL: "boolean"}
        expected |= {sch.FLOAT64: "number", sch.BYTES: "string"}
        if t.code in expected:
            assert schema["type"] == expected[t.code], where


@pytest.mark.parametrize("v2", [V2, V3], ids=["v2", "v3"])
def test_every_served_kind_has_its_whole_table_schema(v2):
    checked = 0
    for r in osch.described():
        models = models_of(r, v2)
        model = models[openapi_v2.model_name(r)]
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        assert model["x-kubernetes-group-version-kind"] == [gvk], r
        assert model["description"], r  # kubemu's own line
        if r in osch.METRICS:
            assert {"usage", "containers"} & set(model["properties"]), r
            continue
        _check_struct(osch.kind_struct(r), model, models, set())
        if "list" in r.verbs:
            listed = models[openapi_v2.model_name(r) + "List"]
            assert listed["x-kubernetes-group-version-kind"] == [{**gvk, "kind": r.kind + "List"}]
            assert target(listed["properties"]["items"]["items"]) == openapi_v2.model_name(r)
        checked += 1
    assert checked == len(osch.described()) - len(osch.METRICS)


def test_every_reference_resolves_in_every_document():
    v2 = orjson.loads(openapi_v2.document().json)
    assert set(osch.refs(v2)) <= set(v2["definitions"])
    for group, version in {(r.group, r.version) for r in osch.described()}:
        doc = v3_document(group, version)
        assert set(osch.refs(doc)) <= set(doc["components"]["schemas"]), (group, version)
        assert not any(ref.startswith("#/definitions/") for ref in _ref_strings(doc)), (group, version)


def _ref_strings(doc) -> list[str]:
    if isinstance(doc, dict):
        own = [doc["$ref"]] if isinstance(doc.get("$ref"), str) else []  # not the property named $ref
        return own + [r for v in doc.values() for r in _ref_strings(v)]
    return [r for v in doc for r in _ref_strings(v)] if isinstance(doc, list) else []


# -- formats and named models, as upstream ---------------------------------------------------

FORMATS = [
    ("io.k8s.api.apps.v1.Deployment", "spec.replicas", {"type": "integer", "format": "int32"}),
    ("io.k8s.api.apps.v1.Deployment", "metadata.generation", {"type": "integer", "format": "int64"}),
    ("io.k8s.api.core.v1.Pod", "spec.terminationGracePeriodSeconds", {"type": "integer", "format": "int64"}),
    (
        "io.k8s.api.core.v1.Secret",
        "data",
        {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
    ),
    ("io.k8s.api.core.v1.ConfigMap", "data", {"type": "object", "additionalProperties": {"type": "string"}}),
    ("io.k8s.api.core.v1.Pod", "spec.hostNetwork", {"type": "boolean"}),
]


def _plain(schema: dict) -> dict:
    """A field's schema without its description (openapi_descriptions.py's, tested there)."""
    return {k: v for k, v in schema.items() if k != "description"}


@pytest.mark.parametrize("model, path, expected", FORMATS)
def test_scalar_formats(model, path, expected):
    assert _plain(field(v2_models(), model, path)) == expected
    v3 = v3_document("apps", "v1")["components"]["schemas"] | v3_document("", "v1")["components"]["schemas"]
    assert _plain(field(v3, model, path)) == expected


NAMED = [
    ("io.k8s.api.core.v1.Pod", "spec.containers.resources.limits", QUANTITY),
    ("io.k8s.api.core.v1.Pod", "spec.containers.livenessProbe.httpGet.port", INT_OR_STRING),
    ("io.k8s.api.core.v1.Pod", "metadata.creationTimestamp", TIME),
    ("io.k8s.api.core.v1.Node", "status.allocatable", QUANTITY),
]


@pytest.mark.parametrize("model, path, named", NAMED)
def test_self_decoding_types_are_upstreams_named_models(model, path, named):
    for models in (v2_models(), v3_document("", "v1")["components"]["schemas"]):
        schema = field(models, model, path)
        assert target(schema.get("additionalProperties", schema)) == named


def test_named_models_in_each_form():
    v2, v3 = v2_models(), v3_document("", "v1")["components"]["schemas"]
    assert v2[QUANTITY] == {"type": "string"}
    assert v3[QUANTITY] == {"oneOf": [{"type": "string"}, {"type": "number"}]}
    assert v2[INT_OR_STRING] == {"type": "string", "format": "int-or-string"}
    assert v3[INT_OR_STRING] == {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
    assert v2[TIME] == v3[TIME] == {"type": "string", "format": "date-time"}
    spec_text = descriptions.OBJECT_FIELDS["spec"]
    assert field(v2, "io.k8s.api.apps.v1.Deployment", "spec") == {
        "$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec",
        "description": spec_text,
    }
    apps = v3_document("apps", "v1")["components"]["schemas"]
    assert field(apps, "io.k8s.api.apps.v1.Deployment", "spec") == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}],
        "description": spec_text,
    }


def test_required_fields_and_list_map_keys():
    models = v2_models()
    assert models["io.k8s.api.apps.v1.DeploymentSpec"]["required"] == ["selector", "template"]
    assert models["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    ports = field(models, "io.k8s.api.core.v1.Pod", "spec.containers.ports")
    assert ports["x-kubernetes-list-type"] == "map" and ports["x-kubernetes-list-map-keys"] == [
        "containerPort",
        "protocol",
    ]
    assert "required" not in models["io.k8s.api.apps.v1.Deployment"]


# -- patch strategies -----------------------------------------------------------------------

PATCH = [
    ("io.k8s.api.core.v1.Pod", "spec.containers", "merge", "name"),
    ("io.k8s.api.core.v1.Pod", "spec.containers.env", "merge", "name"),
    ("io.k8s.api.core.v1.Pod", "spec.containers.ports", "merge", "containerPort"),
    ("io.k8s.api.core.v1.Pod", "spec.volumes", "merge,retainKeys", "name"),
    ("io.k8s.api.core.v1.Pod", "metadata.finalizers", "merge", None),
    ("io.k8s.api.core.v1.Service", "spec.ports", "merge", "port"),
    ("io.k8s.api.apps.v1.Deployment", "spec.strategy", "retainKeys", None),
    ("io.k8s.api.policy.v1.PodDisruptionBudget", "spec.selector", "replace", None),
    ("io.k8s.api.core.v1.Pod", "spec.tolerations", None, None),
    ("io.k8s.api.networking.v1.NetworkPolicy", "spec.ingress.ports", None, None),
]


@pytest.mark.parametrize("model, path, strategy, merge_key", PATCH)
def test_patch_strategies_and_merge_keys(model, path, strategy, merge_key):
    v3 = {}
    for group, version in {("", "v1"), ("apps", "v1"), ("policy", "v1"), ("networking.k8s.io", "v1")}:
        v3 |= v3_document(group, version)["components"]["schemas"]
    for models in (v2_models(), v3):
        schema = field(models, model, path)
        assert (schema.get("x-kubernetes-patch-strategy"), schema.get("x-kubernetes-patch-merge-key")) == (
            strategy,
            merge_key,
        )


def _lists(kind: str, s: sch.Struct, path=(), above=frozenset()):
    for name, t in s.fields.items():
        if t.code == sch.LIST:
            yield s, name, t, (*path, name)
        inner = t
        while inner.elem is not None:
            inner = inner.elem
        key = f"{inner.struct.package}.{inner.struct.name}" if inner.struct else ""
        if inner.struct is not None and key not in above:
            yield from _lists(kind, inner.struct, (*path, name), above | {key})


def test_every_list_the_server_merges_by_key_is_published_with_that_key():
    models = v2_models()
    checked = 0
    for r in osch.described():
        if r in osch.METRICS:
            continue
        for s, name, t, path in _lists(r.kind, osch.kind_struct(r)):
            schema = models[osch.struct_model(s)]["properties"][name]
            server = _list_strategy(r.kind, path)
            assert schema.get("x-kubernetes-patch-merge-key") == (server or None), (r.kind, path)
            assert ("merge" in schema.get("x-kubernetes-patch-strategy", "").split(",")) == (server is not None)
            if server:  # a merge key is a field of the items (kubectl refuses a patch otherwise)
                assert server in t.elem.struct.fields, (r.kind, path)
            checked += 1
    assert checked > 500


# Where kubemu's merge-key table (strategicpatch.py) and upstream's tags differ; each is also
# what the documents publish, so kubectl and the server agree. A new difference fails here.
KNOWN_DIFFERENCES = {
    ("admissionregistration.v1.MutatingWebhook", "matchConditions"),
    ("admissionregistration.v1.MutatingWebhookConfiguration", "webhooks"),
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "matchConditions"),
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "variables"),
    ("admissionregistration.v1.ValidatingAdmissionPolicyStatus", "conditions"),
    ("admissionregistration.v1.ValidatingWebhook", "matchConditions"),
    ("admissionregistration.v1.ValidatingWebhookConfiguration", "webhooks"),
    ("apiextensions.v1.CustomResourceDefinitionStatus", "conditions"),
    ("certificates.v1.CertificateSigningRequestStatus", "conditions"),
    ("apiextensions.v1.JSONSchemaProps", "x-kubernetes-validations"),
    ("core.v1.ContainerStatus", "allocatedResourcesStatus"),
    ("storage.v1.CSINodeSpec", "drivers"),
}


def test_the_servers_merge_keys_against_upstreams_tags():
    builtin = tuple(r for r in osch.described() if r not in osch.METRICS)
    differ = set()
    for (key, name), how in osch.list_strategies(builtin).items():
        assert len(how) == 1, (key, name)  # one answer on every path to the field
        strategy, _, merge_key = sch.struct(key).patch.get(name, "").partition(":")
        upstream = merge_key if "merge" in strategy.split(",") else None
        if how != {upstream}:
            differ.add((key, name))
    assert differ == KNOWN_DIFFERENCES


# -- acceptance: the served documents against the served kinds -------------------------------


def test_openapi_v2_and_the_apps_v1_document_describe_the_served_kinds():
    v2 = orjson.loads(discovery.answer("/openapi/v2", {"accept": "application/json"}, "a").body)
    by_gvk = {
        (g["group"], g["version"], g["kind"]): name
        for name, m in v2["definitions"].items()
        for g in m.get("x-kubernetes-group-version-kind", ())
    }
    for r in osch.described():
        assert by_gvk[(r.group, r.version, r.kind)] == openapi_v2.model_name(r), r
    apps = orjson.loads(discovery.answer("/openapi/v3/apis/apps/v1", {}, "a").body)
    schemas = apps["components"]["schemas"]
    served = [r for r in osch.described() if (r.group, r.version) == ("apps", "v1")]
    assert {r.kind for r in served} == {"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "ControllerRevision"}
    for r in served:
        assert schemas[openapi_v2.model_name(r)]["x-kubernetes-group-version-kind"] == [
            {"group": "apps", "version": "v1", "kind": r.kind}
        ]
        patch = apps["paths"][f"/apis/apps/v1/namespaces/{{namespace}}/{r.plural}/{{name}}"]["patch"]
        assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
        assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]  # kubectl 1.29+ apply
        ok = patch["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{openapi_v2.model_name(r)}"}
    assert not any(name.startswith("io.k8s.api.batch.") for name in schemas)  # only what apps/v1 reaches


# -- custom kinds ---------------------------------------------------------------------------

WIDGET = Resource("Widget", "example.com", "v1", "widgets", True, subresources=("status",))


def crd(rv="1", **spec_props):
    props = {
        "size": {"type": "integer"},
        "color": {"type": "string", "nullable": True},
        "port": {"x-kubernetes-int-or-string": True},
        "extra": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"a": {"type": "string"}},
        },
        "inner": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {"type": "object"}}},
        **spec_props,
    }
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "required": ["size", "color"], "properties": props}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "resourceVersion": rv},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


@pytest.fixture
def widget():
    kinds.register(WIDGET)
    yield WIDGET
    kinds.unregister(WIDGET.kind)


def test_a_custom_kind_in_v3_is_its_schema_made_kube_native(widget):
    schemas = v3_document("example.com", "v1", [crd()])["components"]["schemas"]
    model = schemas["com.example.v1.Widget"]
    assert model["x-kubernetes-group-version-kind"] == [{"group": "example.com", "version": "v1", "kind": "Widget"}]
    assert target(model["properties"]["metadata"]) == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert model["properties"]["apiVersion"] == {"type": "string", "description": descriptions.API_VERSION}
    assert model["properties"]["kind"] == {"type": "string", "description": descriptions.KIND}
    spec = model["properties"]["spec"]
    assert spec["required"] == ["size", "color"] and spec["properties"]["color"]["nullable"] is True
    assert spec["properties"]["port"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]  # upstream's unfold
    inner = spec["properties"]["inner"]
    assert set(inner["properties"]) == {"spec", "apiVersion", "kind", "metadata"}
    assert inner["required"] == ["kind", "apiVersion"]
    assert schemas["com.example.v1.WidgetList"]["x-kubernetes-group-version-kind"][0]["kind"] == "WidgetList"
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas and "io.k8s.api.core.v1.Pod" not in schemas


def test_a_custom_kind_in_v2_is_cut_as_upstream_cuts_it(widget):
    definitions = orjson.loads(openapi_v2.document([crd()]).json)["definitions"]
    spec = definitions["com.example.v1.Widget"]["properties"]["spec"]
    assert spec["required"] == ["size"]  # a nullable field is not required in v2
    assert spec["properties"]["color"] == {}  # nullable: no type
    assert spec["properties"]["extra"] == {"x-kubernetes-preserve-unknown-fields": True}  # no type, no properties
    assert "anyOf" not in spec["properties"]["port"]
    assert definitions["com.example.v1.Widget"]["properties"]["metadata"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "description": descriptions.METADATA,
    }


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(
            {"x-kubernetes-preserve-unknown-fields": True}
        ),
        lambda c: c["spec"]["versions"][0].pop("schema"),
        lambda c: c["spec"].update(preserveUnknownFields=True),
    ],
    ids=["root keeps unknown fields", "no schema", "preserveUnknownFields"],
)
def test_a_custom_kind_kubectl_v2_cannot_check_is_a_bare_object(widget, change, request):
    definition = crd(rv=request.node.callspec.id)  # each its own resourceVersion: no cached document
    change(definition)
    model = orjson.loads(openapi_v2.document([definition]).json)["definitions"]["com.example.v1.Widget"]
    assert model == {"type": "object", "x-kubernetes-group-version-kind": [openapi_v2.schemas.gvk(widget)]}


def test_a_custom_kind_without_its_definition_is_still_described(widget):
    model = v3_document("example.com", "v1")["components"]["schemas"]["com.example.v1.Widget"]
    assert model["type"] == "object" and model["x-kubernetes-group-version-kind"][0]["kind"] == "Widget"


# -- caches ---------------------------------------------------------------------------------


def test_documents_are_cached_until_a_definition_changes(widget):
    first_v2, first_v3 = openapi_v2.document([crd("1")]), openapi_v3.document("example.com", "v1", [crd("1")])
    assert openapi_v2.document([crd("1")]) is first_v2
    assert openapi_v3.document("example.com", "v1", [crd("1")]) is first_v3
    index = openapi_v3.index([crd("1")])["paths"]["apis/example.com/v1"]["serverRelativeURL"]
    assert index == f"/openapi/v3/apis/example.com/v1?hash={first_v3.hash}"
    edited = crd("2", weight={"type": "number"})
    second = openapi_v3.document("example.com", "v1", [edited])
    assert second is not first_v3 and second.hash != first_v3.hash
    assert (
        "weight"
        in orjson.loads(second.json)["components"]["schemas"]["com.example.v1.Widget"]["properties"]["spec"][
            "properties"
        ]
    )
    assert openapi_v2.document([edited]) is not first_v2
    assert openapi_v3.document("apps", "v1", [edited]) is openapi_v3.document("apps", "v1", [crd("1")])  # others kept


def test_build_time_and_size():
    osch.builtin_models.cache_clear()
    openapi_v2._BUILT.clear()
    openapi_v3._BUILT.clear()
    t0 = time.perf_counter()
    v2 = openapi_v2.document()
    t1 = time.perf_counter()
    openapi_v3.index()
    t2 = time.perf_counter()
    assert t1 - t0 < 1.0 and t2 - t1 < 1.0, (t1 - t0, t2 - t1)  # measured: about 0.1 s and 0.05 s
    assert 300_000 < len(v2.json) < 2_000_000 and len(v2.protobuf) < len(v2.json)
    t3 = time.perf_counter()
    openapi_v3.index()
    openapi_v2.document()
    assert time.perf_counter() - t3 < 0.05  # served from the caches


# -- serving the v3 documents ---------------------------------------------------------------


def test_the_index_names_each_document_by_its_hash_and_the_hash_makes_it_immutable():
    index = orjson.loads(discovery.answer("/openapi/v3", {}, "a").body)["paths"]
    url = index["apis/apps/v1"]["serverRelativeURL"]
    built = openapi_v3.document("apps", "v1")
    assert url == f"/openapi/v3/apis/apps/v1?hash={built.hash}" and len(built.hash) == 128
    answer = discovery.answer("/openapi/v3/apis/apps/v1", {}, "a", (), {"hash": built.hash})
    headers = dict(answer.headers)
    assert (answer.status, answer.body) == (200, built.json)
    assert headers["Cache-Control"] == "public, immutable" and headers["ETag"] == f'"{built.hash}"'
    plain = discovery.answer("/openapi/v3/apis/apps/v1", {}, "a")
    assert plain.status == 200 and "Cache-Control" not in dict(plain.headers)


def test_an_old_hash_is_redirected_and_a_known_etag_is_304():
    built = openapi_v3.document("", "v1")
    moved = discovery.answer("/openapi/v3/api/v1", {}, "a", (), {"hash": "OLD"})
    assert (moved.status, dict(moved.headers)["Location"]) == (301, f"/openapi/v3/api/v1?hash={built.hash}")
    same = discovery.answer("/openapi/v3/api/v1", {"if-none-match": f'"{built.hash}"'}, "a")
    assert (same.status, same.body) == (304, b"")
    index = discovery.answer("/openapi/v3", {}, "a")
    again = discovery.answer("/openapi/v3", {"if-none-match": dict(index.headers)["ETag"]}, "a")
    assert again.status == 304


@pytest.mark.parametrize(
    "path, headers, status",
    [
        ("/openapi/v3/apis/apps/v1", {"accept": "application/yaml"}, 406),
        ("/openapi/v3/apis/apps/v1", {"accept": "application/json, */*"}, 200),
        ("/openapi/v3/apis/metrics.k8s.io/v1beta1", {}, 200),
        ("/openapi/v3/apis/extensions/v1beta1", {}, 404),
        ("/openapi/v3/apis/apps/v1/extra", {}, 404),
    ],
)
def test_v3_answers(path, headers, status):
    if status in (404, 406):  # raised as a StatusError: the handler answers it as a Status
        with pytest.raises(StatusError) as e:
            discovery.answer(path, headers, "a")
        assert e.value.code == status
    else:
        assert discovery.answer(path, headers, "a").status == status


# -- through the handler: the stored definitions are read ----------------------------------


def test_the_handler_describes_a_custom_kind_by_its_stored_definition():
    pools = [NodePool(namePrefix="n", count=1, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    asyncio.run(cluster.start())
    handler = Handler(LocalBackend(lambda: cluster.api, cluster.now))

    def call(method, path, body=None):
        raw = orjson.dumps(body) if body is not None else b""
        return asyncio.run(handler.handle(Request(method, path, {}, {"content-type": "application/json"}, raw)))

    definition = crd()
    del definition["metadata"]["resourceVersion"]
    try:
        assert call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", definition).status == 201
        doc = orjson.loads(call("GET", "/openapi/v3/apis/example.com/v1").body)
        spec = doc["components"]["schemas"]["com.example.v1.Widget"]["properties"]["spec"]
        assert "size" in spec["properties"]
        v2 = orjson.loads(call("GET", "/openapi/v2").body)
        assert v2["definitions"]["com.example.v1.Widget"]["properties"]["spec"]["required"] == ["size"]
    finally:
        call("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        kinds.unregister("Widget")


def test_every_subresource_kind_with_a_schema_has_its_model():
    models = v2_models()
    for group, version, kind, _ in discovery._SUBRESOURCE_KINDS.values():
        try:
            sch.struct(f"{group or 'core'}.{version}.{kind}")
        except KeyError:
            continue  # a connect subresource's options: no model upstream's paths refer to
        gvk = {"group": group, "version": version, "kind": kind}
        assert gvk in models[osch.model_name(group, version, kind)]["x-kubernetes-group-version-kind"], kind


# What upstream's conformance suite finds in ``kubectl explain`` of a custom resource (its
# patterns), and what the built-in models say of the common fields.
@pytest.mark.parametrize(
    "model, path, pattern",
    [
        ("io.k8s.api.apps.v1.Deployment", "apiVersion", "^APIVersion defines"),
        ("io.k8s.api.apps.v1.Deployment", "metadata", "^Standard object's metadata"),
        ("io.k8s.api.apps.v1.Deployment", "metadata.creationTimestamp", "^CreationTimestamp is a timestamp"),
        ("io.k8s.api.apps.v1.Deployment", "spec.replicas", "pods are wanted"),
        ("io.k8s.api.core.v1.Pod", "spec.containers.name", "unique within the pod"),
        ("io.k8s.api.core.v1.Pod", "metadata.name", "unique among objects of its kind"),
        ("io.k8s.api.core.v1.Pod", "spec.containers.ports.name", None),  # a port's name is not an object's
        ("io.k8s.api.core.v1.Pod", "status.conditions.status", None),  # a condition's status is a string
        ("io.k8s.api.core.v1.Pod", "status", "observed state"),
    ],
)
def test_common_fields_are_described(model, path, pattern):
    for models in (
        v2_models(),
        v3_document("", "v1")["components"]["schemas"] | v3_document("apps", "v1")["components"]["schemas"],
    ):
        text = field(models, model, path).get("description")
        assert (text is None) if pattern is None else re.search(pattern, text), (path, text)


def test_a_custom_kinds_root_fields_are_described(widget):
    for models in (
        orjson.loads(openapi_v2.document([crd()]).json)["definitions"],
        v3_document("example.com", "v1", [crd()])["components"]["schemas"],
    ):
        props = models["com.example.v1.Widget"]["properties"]
        assert props["apiVersion"]["description"].startswith("APIVersion defines")
        assert props["metadata"]["description"].startswith("Standard object's metadata")
        meta = models["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
        assert meta["creationTimestamp"]["description"].startswith("CreationTimestamp is a timestamp")
