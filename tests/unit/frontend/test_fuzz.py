"""Property: whatever body, content type and query string a client sends to a write, the
answer is a 4xx ``Status`` (or a success), the handler keeps answering, and a refused
request stores nothing."""

import asyncio

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request, Response
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

POOLS = [NodePool(namePrefix="n", count=1, capacity={"cpu": "4", "memory": "8Gi"})]
CLUSTER = LocalCluster(layout(expand_pools(POOLS), seed=1), seed=1)
asyncio.run(CLUSTER.start())
HANDLER = Handler(LocalBackend(lambda: CLUSTER.api, CLUSTER.now))
asyncio.run(
    HANDLER.handle(Request("POST", "/api/v1/namespaces/default/configmaps", {}, {}, b'{"metadata":{"name":"keep"}}'))
)

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
BODIES = st.one_of(
    st.binary(max_size=64),
    JSONISH.map(orjson.dumps),
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["Pod", "ConfigMap", "Node", 7]), "metadata": JSONISH, "spec": JSONISH}
    ).map(orjson.dumps),
)
CONTENT_TYPES = st.sampled_from(
    [
        "",
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "text/plain",
        "application/cbor",
    ]
)
QUERIES = st.dictionaries(
    st.sampled_from(
        ["limit", "continue", "labelSelector", "fieldSelector", "resourceVersion", "gracePeriodSeconds", "watch", "x"]
    ),
    st.text(max_size=12),
    max_size=3,
)
TARGETS = st.sampled_from(
    [
        ("POST", "/api/v1/namespaces/default/pods"),
        ("POST", "/api/v1/namespaces/default/configmaps"),
        ("PUT", "/api/v1/namespaces/default/configmaps/keep"),
        ("PATCH", "/api/v1/namespaces/default/configmaps/keep"),
        ("PATCH", "/api/v1/nodes/n-0"),
        ("POST", "/api/v1/namespaces/default/pods/nope/binding"),
        ("DELETE", "/api/v1/namespaces/default/pods/nope"),
        ("GET", "/api/v1/pods"),
    ]
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=TARGETS, body=BODIES, ctype=CONTENT_TYPES, query=QUERIES)
def test_every_answer_is_a_status_or_a_success_and_refusals_store_nothing(target, body, ctype, query):
    method, path = target
    query = {k: v for k, v in query.items() if k != "watch"}  # a watch streams: covered elsewhere
    before = CLUSTER.api.store.rv
    answer = asyncio.run(HANDLER.handle(Request(method, path, query, {"content-type": ctype}, body)))
    assert isinstance(answer, Response)
    if answer.status >= 400:
        status = orjson.loads(answer.body)
        assert 400 <= answer.status < 500, status
        assert status["kind"] == "Status" and status["code"] == answer.status and status["message"]
        assert CLUSTER.api.store.rv == before
    assert asyncio.run(HANDLER.handle(Request("GET", "/healthz", {}, {}, b""))).status == 200
