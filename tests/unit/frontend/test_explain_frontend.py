"""SchedulingResult over the HTTP API, without a socket: the scheduler's object is listed,
read and printed as a Table; every client write is 405 MethodNotAllowed and changes nothing;
protobuf is refused or falls back to JSON as for a custom resource; its OpenAPI model."""

from __future__ import annotations

import orjson
import pytest
from http_builders import AUTH, TABLE, call, run, serve

from cluster.api import schema
from cluster.api.kinds import BY_KIND
from cluster.api.requests import Create
from cluster.frontend.openapi_schemas import models
from cluster.frontend.protobuf_schema import lookup
from cluster.frontend.tables import table
from cluster.frontend.tables_explain import COLUMNS, scheduling_result_cells
from cluster.frontend.wire import Request, Response, WatchStream

SRS = "/apis/kubemu.io/v1alpha1/namespaces/default/schedulingresults"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"}, "spec": {"containers": []}}


def _pod(cpu: str) -> dict:
    c = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    return {**POD, "spec": {"containers": [c]}}


@pytest.fixture(scope="module")
def api():
    h, cluster = serve()
    assert run(cluster.write([Create(_pod("64"))])) == [None]
    run(cluster.settle())
    return h, cluster


def test_the_scheduler_writes_a_result_the_api_lists_and_reads(api):
    h, _ = api
    status, listed = call(h, "GET", SRS)
    assert status == 200 and listed["kind"] == "SchedulingResultList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["big"]
    status, obj = call(h, "GET", f"{SRS}/big")
    assert status == 200 and obj["apiVersion"] == "kubemu.io/v1alpha1"
    assert obj["status"]["result"] == "Unschedulable"
    assert obj["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    assert obj["status"]["history"][0]["filters"][0]["plugin"] == "NodeResourcesFit"


def test_the_table_has_the_result_columns(api):
    h, _ = api
    status, t = call(h, "GET", SRS, headers=TABLE)
    assert status == 200
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", *(c[0] for c in COLUMNS)]
    cells = t["rows"][0]["cells"]
    assert cells[:4] == ["big", 1, "Unschedulable", "<none>"]
    assert cells[4].startswith("0/1 nodes are available: 1 Insufficient cpu.")


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("POST", SRS, {"apiVersion": "kubemu.io/v1alpha1", "kind": "SchedulingResult", "metadata": {"name": "x"}}),
        (
            "PUT",
            f"{SRS}/big",
            {"apiVersion": "kubemu.io/v1alpha1", "kind": "SchedulingResult", "metadata": {"name": "big"}},
        ),
        ("PATCH", f"{SRS}/big", {"metadata": {"labels": {"a": "b"}}}),
        ("DELETE", f"{SRS}/big", None),
        ("DELETE", SRS, None),
    ],
)
def test_every_client_write_is_method_not_allowed_and_changes_nothing(api, method, path, body):
    h, _ = api
    _, before = call(h, "GET", f"{SRS}/big")
    headers = {**AUTH, "content-type": "application/merge-patch+json"} if method == "PATCH" else None
    status, answer = call(h, method, path, body, headers=headers)
    assert status == 405 and answer["reason"] == "MethodNotAllowed"
    assert answer["message"].startswith("the server does not allow this method on the requested resource")
    assert call(h, "GET", f"{SRS}/big")[1] == before


CLIENT_GO = {**AUTH, "accept": "application/vnd.kubernetes.protobuf,application/json"}
PB_ONLY = {**AUTH, "accept": "application/vnd.kubernetes.protobuf"}
NOT_ACCEPTABLE = "only the following media types are accepted: application/json, application/yaml"


@pytest.mark.parametrize("path", [SRS, f"{SRS}/big"])
def test_protobuf_is_answered_as_for_a_custom_resource(api, path):
    # kubemu's own kind has no protobuf message: JSON when the Accept allows it, else 406.
    h, _ = api
    assert lookup("kubemu.io/v1alpha1", "SchedulingResult") is None
    answer = run(h.handle(Request("GET", path, {}, CLIENT_GO, b"")))
    assert isinstance(answer, Response) and (answer.status, answer.content_type) == (200, "application/json")
    assert orjson.loads(answer.body)["apiVersion"] == "kubemu.io/v1alpha1"
    status, body = call(h, "GET", path, headers=PB_ONLY)
    assert (status, body["reason"], body["message"]) == (406, "NotAcceptable", NOT_ACCEPTABLE)


def test_a_protobuf_watch_stays_json_or_is_406(api):
    h, _ = api
    answer = run(h.handle(Request("GET", SRS, {"watch": "true"}, CLIENT_GO, b"")))
    assert isinstance(answer, WatchStream) and answer.content_type == "application/json"
    refused = run(h.handle(Request("GET", SRS, {"watch": "true"}, PB_ONLY, b"")))
    assert isinstance(refused, Response) and refused.status == 406


@pytest.mark.parametrize("v2", [True, False])
def test_the_openapi_model_is_the_kinds_schema(v2):
    found = models([BY_KIND["SchedulingResult"]], [], v2)
    root = found["io.kubemu.v1alpha1.SchedulingResult"]
    assert root["x-kubernetes-group-version-kind"] == [
        {"group": "kubemu.io", "version": "v1alpha1", "kind": "SchedulingResult"}
    ]
    assert "written by the scheduler only" in root["description"]
    status = found["io.kubemu.v1alpha1.SchedulingResultStatus"]["properties"]
    assert set(status) == {*schema.struct("kubemu.v1alpha1.SchedulingResultStatus").fields}
    assert status["attempts"]["type"] == "integer" and status["attempts"]["format"] == "int32"
    assert status["history"]["description"] == "The last attempts, oldest first (a bounded number per pod)."
    assert "io.kubemu.v1alpha1.SchedulingResultList" in found


def test_cells_never_raise_on_a_sparse_object():
    assert scheduling_result_cells({}, 0.0)[1:5] == [0, "<none>", "<none>", "<none>"]
    out = table("SchedulingResult", [{"metadata": {"name": "p"}, "status": {"attempts": 2}}], 0.0)
    assert out["rows"][0]["cells"][:2] == ["p", 2]
