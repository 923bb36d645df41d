"""Structural-schema defaulting of custom resources (upstream's
``structuraldefaulting``): on create, update and patch, and on read, so that a default added to
a CRD shows on objects stored before it; and ``nullable``."""

import copy

import pytest
from http_builders import AUTH, CRDS, call, serve, widget, widget_crd

from cluster.frontend import crdvalidation
from cluster.frontend.fieldvalidation import STRICT, WARN, check

MERGE = {**AUTH, "content-type": "application/merge-patch+json"}
URL = "/apis/example.com/v1/namespaces/default/widgets"


def spec_schema(**props):
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def defaulted(obj, schema):
    out = copy.deepcopy(obj)
    crdvalidation.default(out, schema)
    return out


@pytest.mark.parametrize(
    "props, spec, expected",
    [
        ({"size": {"type": "integer", "default": 1}}, {}, {"size": 1}),
        ({"size": {"type": "integer", "default": 1}}, {"size": 5}, {"size": 5}),  # set: kept
        ({"on": {"type": "boolean", "default": False}}, {}, {"on": False}),  # a false default is a default
        ({"size": {"type": "integer", "default": None}}, {}, {}),  # default: null is no default
        # A non-nullable null is defaulted; a nullable one is kept as null.
        ({"size": {"type": "integer", "default": 1}}, {"size": None}, {"size": 1}),
        ({"size": {"type": "integer", "nullable": True, "default": 1}}, {"size": None}, {"size": None}),
        # Parents first: a defaulted object gets its own fields' defaults.
        (
            {"opts": {"type": "object", "default": {}, "properties": {"level": {"type": "integer", "default": 3}}}},
            {},
            {"opts": {"level": 3}},
        ),
        # List items and additional properties are defaulted, nulls in them too.
        (
            {
                "ports": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"proto": {"type": "string", "default": "TCP"}}},
                }
            },
            {"ports": [{}, {"proto": "UDP"}]},
            {"ports": [{"proto": "TCP"}, {"proto": "UDP"}]},
        ),
        (
            {"m": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}}},
            {"m": {"a": None, "b": "y"}},
            {"m": {"a": "x", "b": "y"}},
        ),
    ],
)
def test_default(props, spec, expected):
    assert defaulted({"spec": spec}, spec_schema(**props)) == {"spec": expected}


def test_a_default_is_copied_not_shared():
    schema = spec_schema(tags={"type": "array", "items": {"type": "string"}, "default": ["a"]})
    one, two = defaulted({"spec": {}}, schema), defaulted({"spec": {}}, schema)
    one["spec"]["tags"].append("b")
    assert two["spec"]["tags"] == ["a"] and schema["properties"]["spec"]["properties"]["tags"]["default"] == ["a"]


def test_field_validation_defaults_before_it_checks_required_fields_and_leaves_the_body_alone():
    schema = spec_schema(size={"type": "integer", "default": 2})
    schema["properties"]["spec"]["required"] = ["size"]
    body = widget("w")
    out, warnings = check("Widget", body, STRICT, crd_schema=schema)
    assert out["spec"] == {"size": 2} and warnings == [] and body["spec"] == {}
    # A null that is neither nullable nor defaulted is dropped (then required fails).
    schema = spec_schema(size={"type": "integer"}, note={"type": "string", "nullable": True})
    out, _ = check("Widget", widget("w", size=None, note=None), WARN, crd_schema=schema)
    assert out["spec"] == {"note": None}


def _crd(props):
    return widget_crd(
        [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": spec_schema(**props)}}]
    )


@pytest.fixture
def api():
    h, cluster = serve()
    props = {"size": {"type": "integer", "default": 1}, "note": {"type": "string", "nullable": True}}
    assert call(h, "POST", CRDS, _crd(props))[0] == 201
    yield h, cluster
    call(h, "DELETE", f"{CRDS}/widgets.example.com")


def test_create_update_and_patch_are_defaulted(api):
    h, cluster = api
    code, created = call(h, "POST", URL, widget("w", note=None))
    assert code == 201 and created["spec"] == {"size": 1, "note": None}
    assert cluster.api.store.get("Widget", "default", "w")["spec"] == {"size": 1, "note": None}
    created["spec"] = {"size": None}
    assert call(h, "PUT", f"{URL}/w", created)[1]["spec"] == {"size": 1}
    patched = call(h, "PATCH", f"{URL}/w", {"spec": {"size": None, "note": "n"}}, headers=MERGE)[1]
    assert patched["spec"] == {"size": 1, "note": "n"}  # a merge patch's null deletes, then the default


def test_a_default_added_later_shows_on_read_without_rewriting_the_object(api):
    h, cluster = api
    assert call(h, "POST", URL, widget("w"))[0] == 201
    _, crd = call(h, "GET", f"{CRDS}/widgets.example.com")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["color"] = {
        "type": "string",
        "default": "blue",
    }
    assert call(h, "PUT", f"{CRDS}/widgets.example.com", crd)[0] == 200
    rv = cluster.api.store.get("Widget", "default", "w")["metadata"]["resourceVersion"]
    assert call(h, "GET", f"{URL}/w")[1]["spec"] == {"size": 1, "color": "blue"}
    assert call(h, "GET", URL)[1]["items"][0]["spec"]["color"] == "blue"
    stored = cluster.api.store.get("Widget", "default", "w")
    assert "color" not in stored["spec"] and stored["metadata"]["resourceVersion"] == rv
