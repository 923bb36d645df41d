"""The subresources kubectl and schedulers use: status, binding, eviction, scale and log.

Owns how each maps onto the apiserver's typed operations (reference k8s-http-api.md
§2.6): ``binding`` is the scheduler's bind (201 and a success Status), ``eviction`` goes
through the PodDisruptionBudget check (201, or 429 when a budget forbids it), ``status``
replaces or patches only the status, ``scale`` reads and writes ``spec.replicas`` as an
``autoscaling/v1 Scale``, and ``log`` is empty (no container runs). Called by ``verbs.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, MethodNotAllowed
from ..api.kinds import BY_KIND
from ..api.selectors import LabelSelector
from . import query
from .paths import Target
from .wire import Request, Response, not_allowed, ok, success

if TYPE_CHECKING:
    from .handler import Handler


def _refuse(req: Request, t: Target) -> MethodNotAllowed:
    return not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")


async def status(h: Handler, req: Request, t: Target) -> Response:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    if req.method == "GET":
        return ok(await h.backend.get(kind, ns, name))
    if req.method == "PUT":
        body = h.body(req)
        if not isinstance(body, dict):
            raise BadRequest(f"the request body must be a {kind} object")
        dry = query.dry_run(req.method, req.query)
        return ok(await h.backend.update_status(kind, ns, name, body.get("status") or {}, dry))
    if req.method == "PATCH":
        dry = query.dry_run(req.method, req.query)
        current = await h.backend.get(kind, ns, name)
        new = h.patch(current, req, kind)
        return ok(await h.backend.update_status(kind, ns, name, new.get("status") or {}, dry))
    raise _refuse(req, t)


async def binding(h: Handler, req: Request, t: Target) -> Response:
    if req.method != "POST":
        raise _refuse(req, t)
    body = h.body(req)
    target = (body or {}).get("target") if isinstance(body, dict) else None
    node = (target or {}).get("name") if isinstance(target, dict) else None
    if not node or not isinstance(node, str):
        raise BadRequest("target.name: Required value: the node to bind to")
    uid = ((body.get("metadata") or {}).get("uid") or "") if isinstance(body, dict) else ""
    await h.backend.bind(t.namespace, t.name, uid, node, query.dry_run(req.method, req.query))
    # Upstream answers a Status; client-go ignores the body, and the Python client can only
    # parse a Binding, so the Binding is echoed (reference §7.3).
    return ok({**body, "kind": "Binding", "apiVersion": "v1"}, 201)


async def bindings(h: Handler, req: Request, namespace: str) -> Response:
    """``POST /api/v1/namespaces/NS/bindings``: the pod is the Binding's ``metadata.name``."""
    if req.method != "POST":
        raise MethodNotAllowed(
            f"the server does not allow this method on the requested resource ({req.method} bindings)"
        )
    body = h.body(req)
    name = ((body.get("metadata") or {}).get("name") if isinstance(body, dict) else None) or ""
    if not isinstance(name, str) or not name:
        raise BadRequest("metadata.name: Required value: the pod to bind")
    pods = BY_KIND["Pod"]
    return await binding(h, req, Target(pods, namespace, name, "binding"))


async def eviction(h: Handler, req: Request, t: Target) -> Response:
    if req.method != "POST":
        raise _refuse(req, t)
    body = h.body(req)
    options = (body or {}).get("deleteOptions") if isinstance(body, dict) else None
    options = options if isinstance(options, dict) else None
    grace, _policy, pre = query.delete_options(req.query, options)
    dry = query.dry_run(req.method, req.query, (options or {}).get("dryRun"))
    await h.backend.evict(t.namespace, t.name, pre.get("uid") or "", grace, dry)
    return success(201)


async def scale(h: Handler, req: Request, t: Target) -> Response:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    obj = await h.backend.get(kind, ns, name)
    if req.method in ("PUT", "PATCH"):
        dry = query.dry_run(req.method, req.query)
        current = _scale_of(obj)
        new = h.body(req) if req.method == "PUT" else h.patch(current, req, "Scale")
        replicas = ((new or {}).get("spec") or {}).get("replicas") if isinstance(new, dict) else None
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise BadRequest(f"spec.replicas: {replicas!r} must be a non-negative integer")
        obj.setdefault("spec", {})["replicas"] = replicas
        obj = await h.backend.update(obj, dry)
    elif req.method != "GET":
        raise _refuse(req, t)
    return ok(_scale_of(obj))


def _scale_of(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    spec, status_ = obj.get("spec") or {}, obj.get("status") or {}
    selector = spec.get("selector")
    shown = str(LabelSelector.from_dict(selector)) if isinstance(selector, dict) else ""
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
        },
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status_.get("replicas", 0), "selector": shown},
    }


async def log(h: Handler, req: Request, t: Target) -> Response:
    await h.backend.get(t.resource.kind, t.namespace, t.name)  # 404 for a pod that does not exist
    return Response(200, b"", "text/plain")


SUBRESOURCES: dict[str, Callable[[Handler, Request, Target], Awaitable[Response]]] = {
    "status": status,
    "binding": binding,
    "eviction": eviction,
    "scale": scale,
    "log": log,
}
