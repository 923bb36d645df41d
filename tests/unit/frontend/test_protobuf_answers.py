"""Answers in Kubernetes protobuf (cluster/frontend/protobuf_answer.py): which Accept headers get
them, objects, lists, errors and discovery as client-go reads them, watches as upstream's
length-prefixed ``WatchEvent`` stream, custom resources left JSON (or 406), and what cannot be
written falling back to JSON."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest
from http_builders import AUTH, CRDS, PODS, TABLE, multi_version_crd, pod, serve, widget, widgets
from test_protobuf_all_kinds import differences

from cluster.frontend import protobuf, protobuf_encode
from cluster.frontend.protobuf import MAGIC, decode
from cluster.frontend.protobuf_encode import watch_frame
from cluster.frontend.wire import Request, Response, WatchStream

CLIENT_GO = {**AUTH, "accept": "application/vnd.kubernetes.protobuf,application/json"}
PB_ONLY = {**AUTH, "accept": "application/vnd.kubernetes.protobuf"}


def call(h: Any, method: str, path: str, body: Any = None, headers: dict | None = None, **query: Any):
    """(status, body): JSON decoded; a protobuf answer decoded by kubemu's own reader."""
    raw = body if isinstance(body, bytes) else (orjson.dumps(body) if body is not None else b"")
    req = Request(method, path, {k: str(v) for k, v in query.items()}, AUTH if headers is None else headers, raw)
    answer = asyncio.run(h.handle(req))
    assert isinstance(answer, Response)
    if answer.content_type == protobuf.PROTOBUF:
        assert answer.body.startswith(MAGIC)
        return answer.status, decode(answer.body)
    assert answer.content_type.startswith("application/json"), answer.content_type
    return answer.status, orjson.loads(answer.body) if answer.body else None


@pytest.mark.parametrize(
    "accept, wanted",
    [
        ("application/vnd.kubernetes.protobuf,application/json", True),  # client-go typed clients
        ("application/vnd.kubernetes.protobuf, */*", True),  # kube-scheduler
        ("application/vnd.kubernetes.protobuf", True),
        ("application/json;q=0.5,application/vnd.kubernetes.protobuf", True),
        ("application/json", False),
        ("application/json, */*", False),
        ("*/*", False),
        ("", False),
        ("application/json,application/vnd.kubernetes.protobuf", False),
        ("application/vnd.kubernetes.protobuf;q=0.1,application/yaml", False),
        (TABLE["accept"], False),
        ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", False),
    ],
)
def test_which_accept_headers_get_protobuf(accept: str, wanted: bool) -> None:
    assert protobuf.preferred(accept) is wanted


def test_client_go_reads_objects_lists_and_errors_in_protobuf() -> None:
    h, _ = serve()
    code, created = call(h, "POST", PODS, pod("web", app="web"), headers=CLIENT_GO)
    assert code == 201 and created["kind"] == "Pod" and created["metadata"]["name"] == "web"
    _, as_json = call(h, "GET", f"{PODS}/web")
    _, as_pb = call(h, "GET", f"{PODS}/web", headers=CLIENT_GO)
    assert differences(as_json, as_pb) == []
    code, listing = call(h, "GET", PODS, headers=CLIENT_GO)
    assert (code, listing["kind"], [p["metadata"]["name"] for p in listing["items"]]) == (200, "PodList", ["web"])
    code, status = call(h, "GET", f"{PODS}/missing", headers=CLIENT_GO)
    assert (code, status["kind"], status["code"], status["reason"]) == (404, "Status", 404, "NotFound")
    assert status["message"] == 'pods "missing" not found'
    code, resources = call(h, "GET", "/api/v1", headers={**AUTH, "accept": "application/vnd.kubernetes.protobuf, */*"})
    assert code == 200 and resources["kind"] == "APIResourceList"
    assert "create" in next(r for r in resources["resources"] if r["name"] == "pods")["verbs"]


def test_json_clients_and_tables_are_untouched() -> None:
    h, _ = serve()
    call(h, "POST", PODS, pod("web"))
    for headers in (AUTH, TABLE, {**AUTH, "accept": "application/json, */*"}):
        answer = asyncio.run(h.handle(Request("GET", PODS, {}, headers, b"")))
        assert answer.content_type == "application/json"
    table = asyncio.run(
        h.handle(
            Request("GET", PODS, {}, {**TABLE, "accept": TABLE["accept"] + ",application/vnd.kubernetes.protobuf"}, b"")
        )
    )
    assert orjson.loads(table.body)["kind"] == "Table"


def test_custom_resources_have_no_protobuf() -> None:
    h, _ = serve()
    assert call(h, "POST", CRDS, multi_version_crd())[0] == 201
    assert call(h, "POST", widgets("v1"), widget("w1", size=3))[0] == 201
    code, got = call(h, "GET", f"{widgets('v1')}/w1", headers=CLIENT_GO)  # JSON, as the Accept allows it
    assert (code, got["kind"], got["spec"]) == (200, "Widget", {"size": 3})
    code, status = call(h, "GET", f"{widgets('v1')}/w1", headers=PB_ONLY)
    assert (code, status["reason"]) == (406, "NotAcceptable")
    assert status["message"] == "only the following media types are accepted: application/json, application/yaml"
    body = protobuf_encode.envelope("example.com/v1", "Widget", b"\x0a\x04\x0a\x02w2")
    code, status = call(
        h, "POST", widgets("v1"), body, headers={**AUTH, "content-type": "application/vnd.kubernetes.protobuf"}
    )
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert "accepted media types include: application/json, application/yaml" in status["message"]


def frames(data: bytes) -> list[dict[str, Any]]:
    """Upstream's protobuf watch stream read back: a 4-byte big-endian length, then a WatchEvent
    {1 type, 2 RawExtension {1 the enveloped object}}."""
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 4], "big")
        event = {num: raw for num, _, raw in protobuf._fields(data[pos + 4 : pos + 4 + size])}
        extension = {num: raw for num, _, raw in protobuf._fields(event[2])}
        out.append({"type": event[1].decode(), "object": decode(extension[1])})
        pos += 4 + size
    return out


def test_a_watch_streams_length_prefixed_watch_events() -> None:
    h, _ = serve()
    call(h, "POST", PODS, pod("a"))

    async def go() -> tuple[str, bytes]:
        answer = await h.handle(Request("GET", PODS, {"watch": "true"}, CLIENT_GO, b""))
        assert isinstance(answer, WatchStream)
        lines = answer.lines.__aiter__()
        first = await lines.__anext__()
        await asyncio.to_thread(call, h, "DELETE", f"{PODS}/a")
        return answer.content_type, first + await asyncio.wait_for(lines.__anext__(), 10)

    content_type, data = asyncio.run(go())
    assert content_type == "application/vnd.kubernetes.protobuf;stream=watch"
    added, changed = frames(data)[:2]
    assert (added["type"], added["object"]["kind"], added["object"]["metadata"]["name"]) == ("ADDED", "Pod", "a")
    assert changed["type"] in ("MODIFIED", "DELETED") and changed["object"]["metadata"]["name"] == "a"


def test_a_watch_of_a_custom_resource_stays_json_or_is_406() -> None:
    h, _ = serve()
    call(h, "POST", CRDS, multi_version_crd())
    answer = asyncio.run(h.handle(Request("GET", widgets("v1"), {"watch": "true"}, CLIENT_GO, b"")))
    assert isinstance(answer, WatchStream) and answer.content_type == "application/json"
    answer = asyncio.run(h.handle(Request("GET", widgets("v1"), {"watch": "true"}, PB_ONLY, b"")))
    assert isinstance(answer, Response) and answer.status == 406


def test_an_unencodable_answer_stays_json() -> None:
    req = Request("GET", PODS, {}, CLIENT_GO, b"")
    odd = Response(200, orjson.dumps({"apiVersion": "v1", "kind": "Pod", "spec": {"priority": "high"}}))
    assert protobuf.answer(req, odd) is odd
    version = Response(200, orjson.dumps({"major": "1", "minor": "33"}))
    assert protobuf.answer(req, version) is version


def test_a_watch_event_frame_is_length_prefixed() -> None:
    status = {"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": 410, "reason": "Expired"}
    frame = watch_frame({"type": "ERROR", "object": status})
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    (event,) = frames(frame)
    assert event == {"type": "ERROR", "object": {**status, "metadata": {}}}


def test_an_object_nested_too_deeply_for_the_encoder_stays_json() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(300):  # deeper than the encoder recurses, shallower than orjson reads
        schema = {"type": "object", "properties": {"a": schema}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "deep.example.com"},
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]},
    }
    deep = Response(200, json.dumps(crd).encode())
    assert protobuf.answer(Request("GET", CRDS, {}, CLIENT_GO, b""), deep) is deep


def test_a_view_kind_takes_and_answers_protobuf() -> None:
    # kube-scheduler's events: events.k8s.io/v1, a view of the stored core/v1 Event, in protobuf.
    h, _ = serve()
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000001Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-n1",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "note": "Successfully assigned default/web to n1",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "apiVersion": "v1"},
    }
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    headers = {**CLIENT_GO, "content-type": "application/vnd.kubernetes.protobuf"}
    code, created = call(h, "POST", path, protobuf_encode.encode_object(event), headers=headers)
    assert (code, created["kind"], created["apiVersion"]) == (201, "Event", "events.k8s.io/v1")
    code, listing = call(h, "GET", path, headers=CLIENT_GO)
    assert (code, listing["kind"]) == (200, "EventList")
    pods = [e for e in listing["items"] if e["regarding"]["kind"] == "Pod"]  # not the nodes' startup Events
    assert [(e["reason"], e["eventTime"]) for e in pods] == [("Scheduled", "2026-01-01T00:00:00.000001Z")]
