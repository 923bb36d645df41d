"""The resource metrics API (``metrics.k8s.io/v1beta1``), as metrics-server serves it.

Owns the group's discovery entries and its two read-only resources: ``nodes``
(NodeMetrics) and ``pods`` (PodMetrics), computed on each request from the stored pods and
nodes at the cluster's current emulated time (``cluster/api/podmetrics.py``), so
``kubectl top pods`` and ``kubectl top nodes`` show the emulated usage. Called by
``handler.py`` for paths under ``/apis/metrics.k8s.io/`` and by ``discovery.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import MethodNotAllowed, NotFound
from ..api.objects import name_of, namespace_of, node_name_of
from ..api.podmetrics import node_metrics, pod_metrics
from ..clock import rfc3339
from .query import matches as query_matches
from .query import parse_list_options
from .wire import Request, Response, ok

if TYPE_CHECKING:
    from .backend import Backend

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"
PREFIX = f"/apis/{GROUP_VERSION}"
_RESOURCES = (("nodes", "NodeMetrics", False), ("pods", "PodMetrics", True))


def legacy_group() -> dict[str, Any]:
    gv = {"groupVersion": GROUP_VERSION, "version": VERSION}
    return {"name": GROUP, "versions": [gv], "preferredVersion": gv}


def aggregated_group() -> dict[str, Any]:
    resources = [
        {
            "resource": plural,
            "singularResource": "",
            "scope": "Namespaced" if namespaced else "Cluster",
            "responseKind": {"group": GROUP, "version": VERSION, "kind": kind},
            "verbs": ["get", "list"],
        }
        for plural, kind, namespaced in _RESOURCES
    ]
    return {
        "metadata": {"name": GROUP, "creationTimestamp": None},
        "versions": [{"version": VERSION, "freshness": "Current", "resources": resources}],
    }


def resource_list() -> dict[str, Any]:
    resources = [
        {"name": plural, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": ["get", "list"]}
        for plural, kind, namespaced in _RESOURCES
    ]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION, "resources": resources}


def is_metrics_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


async def answer(backend: Backend, req: Request, path: str) -> Response:
    if req.method != "GET":
        raise MethodNotAllowed(f"the server does not allow this method on the requested resource ({req.method})")
    rest = [p for p in path.removeprefix(PREFIX).split("/") if p]
    if not rest:
        return ok(resource_list())
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    if rest[0] not in ("nodes", "pods") or len(rest) > 2 or (rest[0] == "nodes" and namespace):
        raise NotFound("the server could not find the requested resource")
    now = backend.now()
    stamp = rfc3339(now)
    _, pods = await backend.list("Pod", None)
    if rest[0] == "pods":
        items = [
            m for p in pods if (not namespace or namespace_of(p) == namespace) if (m := pod_metrics(p, now, stamp))
        ]
        kind = "PodMetrics"
    else:
        _, nodes = await backend.list("Node", None)
        by_node: dict[str, list[dict[str, Any]]] = {}
        for p in pods:
            by_node.setdefault(node_name_of(p), []).append(p)
        items = [node_metrics(n, by_node.get(name_of(n), []), now, stamp) for n in nodes]
        kind = "NodeMetrics"
    if len(rest) == 2:
        hit = next((i for i in items if i["metadata"]["name"] == rest[1]), None)
        if hit is None:
            raise NotFound(f'{rest[0]}.{GROUP} "{rest[1]}" not found')
        return ok(hit)
    opts = parse_list_options(req.query, kind)
    items = sorted((i for i in items if query_matches(i, opts)), key=lambda i: (namespace_of(i), name_of(i)))
    return ok({"kind": f"{kind}List", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items})
