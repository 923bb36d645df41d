"""The kind registry (cluster/api/kindspec.py): adding a stored kind is one ``register`` call,
and the apiserver (create, defaults, validation, list, watch), the front end's Table, the
OpenAPI v3 document kubectl explains from and the protobuf negotiation all serve it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from http_builders import AUTH, call, serve
from test_protobuf_answers import PB_ONLY

from cluster.api import codec, kinds, kindspec
from cluster.api.errors import Invalid
from cluster.api.requests import WatchChunk
from cluster.api.validation import ValidationError
from cluster.apiserver.apiserver import APIServer
from cluster.controllers.manager import LIST_ORDER
from cluster.frontend import openapi_v3, tables
from cluster.scenario.driver import KINDS as MIRRORED

GROUP, VERSION = "example.kubemu.io", "v1"
GIZMOS = f"/apis/{GROUP}/{VERSION}/namespaces/default/gizmos"
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "description": "What the gizmo should be.",
            "properties": {"size": {"type": "integer", "description": "How big the gizmo is."}},
        }
    },
}


def _default_size(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("size", 1)


def _size_positive(obj: dict[str, Any], path: str) -> None:
    size = (obj.get("spec") or {}).get("size")
    if size is not None and (not isinstance(size, int) or size < 1):
        raise ValidationError("spec.size", size, "must be greater than 0")


GIZMO = kindspec.KindSpec(
    kindspec.Resource("Gizmo", GROUP, VERSION, "gizmos", True, short_names=("gz",)),
    validate=_size_positive,
    defaults=_default_size,
    columns=(kindspec.PrintColumn("Size", ".spec.size", "integer", "How big."),),
    openapi=SCHEMA,
)


@pytest.fixture
def gizmo() -> Iterator[kindspec.KindSpec]:
    kindspec.register(GIZMO)
    try:
        yield GIZMO
    finally:
        kindspec.unregister("Gizmo")


def gizmo_obj(name: str, size: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Gizmo",
        "metadata": {"name": name, "namespace": "default"},
    }
    if size is not None:
        obj["spec"] = {"size": size}
    return obj


def test_the_built_in_tables_are_views_of_the_registry() -> None:
    assert [r.kind for r in kinds.RESOURCES] == [s.kind for s in kindspec.builtin()]
    assert LIST_ORDER == kindspec.ordered("list_order") and LIST_ORDER[0] == "Node" and LIST_ORDER[-1] == "Pod"
    assert MIRRORED == kindspec.ordered("mirror_order") and "SchedulingResult" in MIRRORED
    assert kinds.json_only("SchedulingResult") and not kinds.json_only("Pod")
    assert kindspec.SPECS["Deployment"].validate is not None and kindspec.SPECS["Pod"].validate_update is not None
    assert kindspec.SPECS["Service"].defaults is not None and kindspec.SPECS["PodTemplate"].validate is None


def test_a_registered_kind_is_created_defaulted_validated_listed_and_watched(gizmo: kindspec.KindSpec) -> None:
    api = APIServer()
    rv0 = api.list("Gizmo").resource_version
    stored = api.create(gizmo_obj("g1"), 1.0)
    assert stored["spec"] == {"size": 1}  # the spec's default
    with pytest.raises(Invalid, match=r"spec\.size"):
        api.create(gizmo_obj("bad", size=0), 1.0)
    assert [o["metadata"]["name"] for o in _decoded(api.list("Gizmo").items)] == ["g1"]
    chunk = api.watch({"Gizmo": rv0})["Gizmo"]
    assert isinstance(chunk, WatchChunk)
    events = [(kind, codec.decode(raw)["metadata"]["name"]) for kind, raw in chunk.events]
    assert events == [("ADDED", "g1")]


def _decoded(items: Any) -> list[dict[str, Any]]:
    return [codec.decode(i) if isinstance(i, bytes) else i for i in items]


def test_a_registered_kind_prints_its_columns_and_explains_its_schema(gizmo: kindspec.KindSpec) -> None:
    table = tables.table("Gizmo", [{**gizmo_obj("g1", size=3)}], 0.0)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size"]
    assert table["rows"][0]["cells"] == ["g1", 3]
    built = openapi_v3.document(GROUP, VERSION)
    assert built is not None
    doc = orjson.loads(built.json)
    model = doc["components"]["schemas"][f"io.kubemu.example.{VERSION}.Gizmo"]
    assert model["properties"]["spec"]["properties"]["size"]["description"] == "How big the gizmo is."
    assert f"/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/gizmos" in doc["paths"]


def test_a_registered_kind_is_served_over_http_as_json_only(gizmo: kindspec.KindSpec) -> None:
    h, _ = serve()
    assert call(h, "POST", GIZMOS, gizmo_obj("g1", size=2))[0] == 201
    code, got = call(h, "GET", f"{GIZMOS}/g1")
    assert (code, got["spec"]) == (200, {"size": 2})
    code, status = call(h, "POST", GIZMOS, gizmo_obj("g2", size=-1))
    assert (code, status["reason"]) == (422, "Invalid") and "spec.size" in status["message"]
    code, status = call(h, "GET", f"{GIZMOS}/g1", headers=PB_ONLY)
    assert (code, status["reason"]) == (406, "NotAcceptable")
    code, table = call(h, "GET", GIZMOS, headers={**AUTH, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert (code, table["kind"], table["rows"][0]["cells"]) == (200, "Table", ["g1", 2])


def test_register_refuses_a_served_kind_and_unregister_removes_it() -> None:
    with pytest.raises(ValueError, match="Pod"):
        kindspec.register(kindspec.KindSpec(kindspec.Resource("Pod", GROUP, VERSION, "pods2", True)))
    kindspec.register(GIZMO)
    try:
        with pytest.raises(ValueError, match="already served"):
            kindspec.register(GIZMO)
        assert kinds.at_version(GROUP, VERSION, "gizmos") == GIZMO.resource
    finally:
        kindspec.unregister("Gizmo")
    assert kindspec.get("Gizmo") is None and kinds.at_version(GROUP, VERSION, "gizmos") is None
    kindspec.unregister("Pod")  # a built-in kind is never removed
    assert kindspec.get("Pod") is not None


@pytest.mark.parametrize(
    "path, want", [(".spec.size", 3), (".spec.missing", None), (".items[1]", "b"), (".items[5]", None)]
)
def test_cell_reads_a_simple_json_path(path: str, want: Any) -> None:
    assert kindspec.cell({"spec": {"size": 3}, "items": ["a", "b"]}, path) == want
