"""Small builders for tests that speak HTTP to a ``Handler`` over the local runtime, without a
socket: a cluster, one request and its decoded answer, the first lines of a watch, and the
objects the tests create (ConfigMaps, pods, a multi-version CustomResourceDefinition)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request, Response, WatchStream
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

TOKEN = "secret"
AUTH = {"authorization": f"Bearer {TOKEN}"}
TABLE = {**AUTH, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def serve() -> tuple[Handler, LocalCluster]:
    pools = [NodePool(namePrefix="n", count=1, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    return Handler(LocalBackend(lambda: cluster.api, cluster.now), token=TOKEN), cluster


def call(h: Handler, method: str, path: str, body: Any = None, headers: dict | None = None, **query: Any):
    """(status, decoded body) of one request; ``query`` values are sent as strings."""
    raw = body if isinstance(body, bytes) else (orjson.dumps(body) if body is not None else b"")
    req = Request(method, path, {k: str(v) for k, v in query.items()}, AUTH if headers is None else headers, raw)
    answer = run(h.handle(req))
    assert isinstance(answer, Response)
    return answer.status, orjson.loads(answer.body) if answer.body else None


def watch(h: Handler, path: str, act: Any, n: int, headers: dict | None = None, **query: Any) -> list[dict]:
    """The first ``n`` events of a watch of ``path``, with ``act(h)`` (synchronous writes)
    done once the watch has started."""

    async def go() -> list[dict]:
        params = {"watch": "true", **{k: str(v) for k, v in query.items()}}
        answer = await h.handle(Request("GET", path, params, AUTH if headers is None else headers, b""))
        assert isinstance(answer, WatchStream)
        lines = answer.lines.__aiter__()
        out: list[dict] = []
        pending = asyncio.ensure_future(lines.__anext__())
        await asyncio.sleep(0)
        await asyncio.to_thread(act, h)
        while len(out) < n:
            chunk = await pending
            out += [orjson.loads(x) for x in chunk.splitlines() if x.strip()]
            if len(out) < n:
                pending = asyncio.ensure_future(lines.__anext__())
        return out[:n]

    return run(asyncio.wait_for(go(), 10))


def config_map(name: str, data: dict | None = None, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": data or {}}


def pod(name: str, **labels: str) -> dict:
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def names(listing: dict) -> list[str]:
    return [o["metadata"]["name"] for o in listing["items"]]


def _version(name: str, served: bool, storage: bool, props: dict) -> dict:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}
    return {"name": name, "served": served, "storage": storage, "schema": {"openAPIV3Schema": schema}}


def widget_crd(versions: list[dict], conversion: str | None = None) -> dict:
    """``widgets.example.com`` with the given ``versions`` (and conversion strategy)."""
    spec: dict = {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": versions,
    }
    if conversion is not None:
        spec["conversion"] = {"strategy": conversion}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": spec,
    }


def multi_version_crd(conversion: str = "None") -> dict:
    """``widgets.example.com``: v1 stored, v2 and v1beta1 served too (each its own schema,
    v2 with defaults), v1alpha1 defined but not served."""
    return widget_crd(
        [
            _version("v1beta1", True, False, {"size": {"type": "integer"}}),
            _version("v1", True, True, {"size": {"type": "integer"}, "color": {"type": "string"}}),
            _version(
                "v2",
                True,
                False,
                {"size": {"type": "integer", "default": 1}, "shape": {"type": "string", "default": "round"}},
            ),
            _version("v1alpha1", False, False, {"size": {"type": "integer"}}),
        ],
        conversion,
    )


def widgets(version: str, ns: str = "default") -> str:
    return f"/apis/example.com/{version}/namespaces/{ns}/widgets"


def widget(name: str, version: str = "v1", **spec: Any) -> dict:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": name}, "spec": spec}
