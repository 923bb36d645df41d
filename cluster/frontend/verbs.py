"""The verbs on a resource: list, create, get, update, patch, delete, and the subresources
(status, binding, eviction, scale, log).

Owns what each verb reads from the request and asks of the ``Backend``, as the Kubernetes
apiserver answers it (reference k8s-http-api.md §1, §2.3, §2.6): a created object comes
back with 201, a list as a ``<Kind>List`` (or a ``Table`` when kubectl asks for one), a
patch of a missing object creates it only for server-side apply, a graceful delete returns
the terminating object. Called by ``handler.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, MethodNotAllowed, NotFound
from ..api.objects import name_of, namespace_of
from . import query
from .paths import Target
from .subresources import SUBRESOURCES
from .wire import Request, Response, WatchStream, not_allowed, ok

if TYPE_CHECKING:
    from .handler import Handler

APPLY = "application/apply-patch+yaml"


async def collection_verb(h: Handler, req: Request, t: Target) -> Response | WatchStream:
    if req.method == "GET":
        opts = query.parse_list_options(req.query, t.resource.kind)
        if opts.watch:
            return h.watch(req, t, opts)
        return await _list(h, req, t, opts)
    if req.method == "POST":
        return ok(await h.backend.create(_object_for(h, req, t)), 201)
    raise _method(req, t)


async def _list(h: Handler, req: Request, t: Target, opts: Any) -> Response:
    kind = t.resource.kind
    rv, items = await h.backend.list(kind, _node_names(opts))
    items = [o for o in items if (not t.namespace or namespace_of(o) == t.namespace) and query.matches(o, opts)]
    items.sort(key=lambda o: (namespace_of(o), name_of(o)))
    page, cont, remaining = query.paginate(items, opts, rv)
    if h.wants_table(req):
        return h.table(kind, page, rv, opts.include_object, cont)
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if cont:
        meta["continue"] = cont
        if remaining is not None:
            meta["remainingItemCount"] = remaining
    return ok({"kind": f"{kind}List", "apiVersion": t.resource.api_version, "metadata": meta, "items": page})


def _node_names(opts: Any) -> frozenset[str] | None:
    fs = opts.field_selector
    node = fs.node_name() if fs is not None else None
    return frozenset((node,)) if node else None


def _object_for(h: Handler, req: Request, t: Target, name: str = "") -> dict[str, Any]:
    """The body as an object of the target's kind, in its namespace (defaults from the URL)."""
    obj = h.body(req)
    if not isinstance(obj, dict):
        raise BadRequest(f"the request body must be a {t.resource.kind} object")
    r = t.resource
    obj.setdefault("kind", r.kind)
    obj.setdefault("apiVersion", r.api_version)
    if obj["kind"] != r.kind:
        raise BadRequest(f"the body is a {obj['kind']}, not a {r.kind} (the URL names {r.plural})")
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise BadRequest("metadata: must be a map")
    if t.namespace:
        if meta.get("namespace", t.namespace) != t.namespace:
            raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
        meta["namespace"] = t.namespace
    if name and meta.get("name", name) != name:
        raise BadRequest(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
    if name:
        meta["name"] = name
    return obj


async def object_verb(h: Handler, req: Request, t: Target) -> Response:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    if req.method == "GET":
        obj = await h.backend.get(kind, ns, name)
        if h.wants_table(req):
            include = query.parse_list_options(req.query, kind).include_object
            return h.table(kind, [obj], int(obj["metadata"].get("resourceVersion") or 0), include)
        return ok(obj)
    if req.method == "PUT":
        return ok(await h.backend.update(_object_for(h, req, t, name)))
    if req.method == "PATCH":
        return await _patch(h, req, t)
    if req.method == "DELETE":
        body = h.body(req)
        grace, policy, pre = query.delete_options(req.query, body if isinstance(body, dict) else None)
        return ok(await h.backend.delete(kind, ns, name, pre.get("uid") or "", grace, policy))
    raise _method(req, t)


async def _patch(h: Handler, req: Request, t: Target) -> Response:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    apply = req.headers.get("content-type", "").startswith(APPLY)
    try:
        current: dict[str, Any] | None = await h.backend.get(kind, ns, name)
    except NotFound:
        if not apply:
            raise
        current = None
    new = h.patch(current, req, kind)
    if not isinstance(new, dict):
        raise BadRequest(f"the patched {kind} is not an object")
    new.setdefault("kind", kind)
    new.setdefault("apiVersion", t.resource.api_version)
    meta = new.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise BadRequest(f"metadata: the patched {kind}'s metadata must be a map")
    meta["name"] = name
    if ns:
        meta["namespace"] = ns
    if current is None:
        return ok(await h.backend.create(new), 201)
    meta["resourceVersion"] = current["metadata"].get("resourceVersion")
    if new == current:
        return ok(current)  # a patch that changes nothing writes nothing
    return ok(await h.backend.update(new))


async def subresource_verb(h: Handler, req: Request, t: Target) -> Response:
    verb = SUBRESOURCES.get(t.subresource)
    if verb is None:
        raise _method(req, t)
    return await verb(h, req, t)


def _method(req: Request, t: Target) -> MethodNotAllowed:
    return not_allowed(req.method, f"{t.resource.plural}/{t.subresource}" if t.subresource else t.resource.plural)
