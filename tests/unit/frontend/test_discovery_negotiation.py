"""Which discovery document ``/api`` and ``/apis`` answer, Accept header by Accept header
(as upstream's discovery wrapper), and the headers of the answer: the exact
strings client-go sends, q-values, wildcards, YAML, 406, ETag and 304."""

import asyncio
import re

import orjson
import pytest
import yaml

from cluster.api.errors import NotAcceptable, NotFound
from cluster.frontend import discovery
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request

V1 = "application/json"
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V3 = "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
LEGACY_JSON, LEGACY_YAML = (V1, ""), (YAML, "")
NOT_ACCEPTABLE = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"

NEGOTIATED = [
    # What clients send (§1.1).
    ("client-go 1.27 to 1.29", f"{V2BETA1},{V1}", (V1, "v2beta1")),
    ("client-go 1.30 and later", f"{V2},{V2BETA1},{V1}", (V1, "v2")),
    ("legacy only (forced, Python client)", V1, LEGACY_JSON),
    ("empty: the first serializer, legacy", "", LEGACY_JSON),
    ("v2 only", V2, (V1, "v2")),
    ("v2beta1 only", V2BETA1, (V1, "v2beta1")),
    ("equal q keeps the written order", f"{V2BETA1},{V2}", (V1, "v2beta1")),
    ("an unserved version is skipped, not refused", f"{V3},{V2BETA1},{V1}", (V1, "v2beta1")),
    ("an unserved version falls to legacy", f"{V3},{V1}", LEGACY_JSON),
    # q-values order the clauses before anything else.
    ("a higher q wins over written order", f"{V2};q=0.5,{V2BETA1}", (V1, "v2beta1")),
    ("both lowered: still by q", f"{V2};q=0.5,{V2BETA1};q=0.8,{V1}", (V1, "v2beta1")),
    # Upstream's wrapper looks only at aggregated clauses first, wherever plain ones stand.
    ("a plain clause does not shadow an aggregated one", f"{V1},{V2};q=0.1", (V1, "v2")),
    ("an unreadable q ranks last but is tried", f"{YAML};q=x,{V1}", LEGACY_JSON),
    ("an unreadable q alone", f"{YAML};q=x", LEGACY_YAML),
    ("q=0 is still tried, as upstream", f"{V1};q=0", LEGACY_JSON),
    # Wildcards.
    ("*/* is the first serializer", "*/*", LEGACY_JSON),
    ("a bare * is */*", "*", LEGACY_JSON),
    ("application/* is the first serializer", "application/*", LEGACY_JSON),
    ("a browser's Accept", "text/html,application/xhtml+xml,*/*;q=0.8", LEGACY_JSON),
    ("specific before wildcard at equal q", f"*/*,{YAML}", LEGACY_YAML),
    ("a wildcard may carry the target", "*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", (V1, "v2")),
    # Media types and parameter spelling.
    ("YAML legacy", YAML, LEGACY_YAML),
    ("YAML aggregated", "application/yaml;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", (YAML, "v2beta1")),
    ("YAML written first", f"{YAML},{V1}", LEGACY_YAML),
    ("protobuf is not written: skipped", f"{PROTOBUF},{V1}", LEGACY_JSON),
    (
        "parameters in any order, with spaces",
        "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io",
        (V1, "v2"),
    ),
    ("an unknown parameter is ignored", "application/json;charset=utf-8", LEGACY_JSON),
    ("a Table request falls to its plain clause", f"{V1};as=Table;v=v1;g=meta.k8s.io,{V1}", LEGACY_JSON),
]

REFUSED = [
    ("only an unserved aggregated version", V3),
    ("only protobuf", PROTOBUF),
    ("only a type never written", "text/html"),
    ("only a Table", f"{V1};as=Table;v=v1;g=meta.k8s.io"),
    ("an incomplete target is no plain clause", f"{V1};as=APIGroupDiscoveryList"),
    ("nothing that is a media range", "json"),
]


@pytest.mark.parametrize(("accept", "expected"), [c[1:] for c in NEGOTIATED], ids=[c[0] for c in NEGOTIATED])
def test_negotiation(accept, expected):
    assert tuple(discovery.negotiate(accept)) == expected


@pytest.mark.parametrize("accept", [c[1] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_nothing_servable_is_406_with_upstreams_message(accept):
    with pytest.raises(NotAcceptable) as refused:
        discovery.negotiate(accept)
    status = refused.value.status()
    assert (status["code"], status["reason"], status["message"]) == (406, "NotAcceptable", NOT_ACCEPTABLE)


def test_clauses_are_ordered_by_q_then_specificity_then_written_order():
    clauses = discovery.parse_accept("*/*;q=0.9, text/*, application/yaml, application/json;q=0.9, */*")
    assert [(c.type, c.subtype, c.q) for c in clauses] == [
        ("application", "yaml", 1.0),
        ("text", "*", 1.0),
        ("*", "*", 1.0),
        ("application", "json", 0.9),
        ("*", "*", 0.9),
    ]


def headers_of(answer):
    return dict(answer.headers)


@pytest.mark.parametrize("path", ["/api", "/apis"])
@pytest.mark.parametrize(("accept", "version"), [(f"{V2BETA1},{V1}", "v2beta1"), (f"{V2},{V2BETA1},{V1}", "v2")])
def test_an_aggregated_answer_and_its_headers(path, accept, version):
    answer = discovery.answer(path, {"accept": accept}, "127.0.0.1:6443")
    assert answer.status == 200
    assert answer.content_type == f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
    headers = headers_of(answer)
    assert re.fullmatch(r'"[0-9A-F]{128}"', headers["ETag"])
    assert (headers["Vary"], headers["Cache-Control"]) == ("Accept", "public")
    doc = orjson.loads(answer.body)
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", f"apidiscovery.k8s.io/{version}")
    names = [item["metadata"].get("name", "") for item in doc["items"]]
    if path == "/api":
        assert doc["items"][0]["metadata"] == {"creationTimestamp": None} and names == [""]
    else:
        assert "apps" in names and "" not in names


@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_v2_and_v2beta1_differ_only_in_api_version_and_share_the_etag(path):
    v2 = discovery.answer(path, {"accept": V2}, "a")
    v2beta1 = discovery.answer(path, {"accept": V2BETA1}, "a")
    docs = [orjson.loads(v2.body), orjson.loads(v2beta1.body)]
    assert docs[0].pop("apiVersion") == "apidiscovery.k8s.io/v2"
    assert docs[1].pop("apiVersion") == "apidiscovery.k8s.io/v2beta1"
    assert docs[0] == docs[1]
    assert headers_of(v2)["ETag"] == headers_of(v2beta1)["ETag"]
    assert (
        headers_of(discovery.answer("/api", {"accept": V2}, "a"))["ETag"]
        != (headers_of(discovery.answer("/apis", {"accept": V2}, "a"))["ETag"])
    )


@pytest.mark.parametrize("accept", [V2, V2BETA1])
def test_a_matching_if_none_match_is_304_with_the_same_headers(accept):
    first = discovery.answer("/apis", {"accept": accept}, "a")
    tag = headers_of(first)["ETag"]
    again = discovery.answer("/apis", {"accept": accept, "if-none-match": tag}, "a")
    assert (again.status, again.body, again.content_type) == (304, b"", first.content_type)
    assert again.headers == first.headers


@pytest.mark.parametrize("sent", ['"0BAD"', "*", "W/{tag}", '{tag}, "OTHER"', "{bare}"])
def test_if_none_match_is_compared_whole_as_upstream(sent):
    tag = headers_of(discovery.answer("/apis", {"accept": V2}, "a"))["ETag"]
    header = sent.format(tag=tag, bare=tag.strip('"'))
    assert discovery.answer("/apis", {"accept": V2, "if-none-match": header}, "a").status == 200


def test_legacy_answers_carry_no_etag_and_upstreams_shapes():
    api = discovery.answer("/api", {"accept": V1}, "10.0.0.1:6443")
    assert (api.status, api.content_type, api.headers) == (200, V1, ())
    assert orjson.loads(api.body) == {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}],
    }
    apis = discovery.answer("/apis", {"accept": f"{V3},{V1}"}, "a")
    groups = orjson.loads(apis.body)
    assert (groups["kind"], groups["apiVersion"], apis.headers) == ("APIGroupList", "v1", ())
    apps = next(g for g in groups["groups"] if g["name"] == "apps")
    gv = {"groupVersion": "apps/v1", "version": "v1"}
    assert apps == {"name": "apps", "versions": [gv], "preferredVersion": gv}


def test_yaml_answers_hold_the_same_documents():
    legacy = discovery.answer("/apis", {"accept": YAML}, "a")
    assert legacy.content_type == YAML
    assert yaml.safe_load(legacy.body) == orjson.loads(discovery.answer("/apis", {}, "a").body)
    aggregated = discovery.answer(
        "/api", {"accept": f"{YAML};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}, "a"
    )
    assert aggregated.content_type == "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert yaml.safe_load(aggregated.body) == orjson.loads(discovery.answer("/api", {"accept": V2}, "a").body)


def test_openapi_paths_and_other_paths():
    assert "api/v1" in orjson.loads(discovery.answer("/openapi/v3", {}, "a").body)["paths"]
    assert orjson.loads(discovery.answer("/openapi/v3/apis/apps/v1", {}, "a").body)["openapi"] == "3.0.0"
    for missing in ("/openapi/v1", "/openapi/v3/apis/nope/v1"):
        with pytest.raises(NotFound):
            discovery.answer(missing, {}, "a")
    assert discovery.answer("/api/v1", {"accept": V2}, "a") is None


def test_the_handler_delegates_with_the_whole_request():
    handler = Handler(backend=None)  # discovery never reads the backend

    def get(headers):
        return asyncio.run(handler.handle(Request("GET", "/apis/", {}, headers)))

    first = get({"accept": f"{V2BETA1},{V1}"})
    assert first.status == 200 and first.content_type == V2BETA1
    assert get({"accept": f"{V2BETA1},{V1}", "if-none-match": headers_of(first)["ETag"]}).status == 304
    refused = get({"accept": V3})
    body = orjson.loads(refused.body)
    assert (refused.status, body["kind"], body["reason"], body["message"]) == (
        406,
        "Status",
        "NotAcceptable",
        NOT_ACCEPTABLE,
    )
