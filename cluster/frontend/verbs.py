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

import orjson

from ..api.errors import BadRequest, MethodNotAllowed, NotFound
from ..api.kinds import CUSTOM
from ..api.objects import name_of, namespace_of
from . import fieldvalidation, query
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
        mode = fieldvalidation.parse_mode(req.query, fieldvalidation.CREATE)
        dry = query.dry_run(req.method, req.query)
        obj, warnings = await _checked(h, req, t, _object_for(h, req, t), mode, fieldvalidation.CREATE)
        return _warned(ok(await h.backend.create(obj, dry), 201), warnings)
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
        mode = fieldvalidation.parse_mode(req.query, fieldvalidation.UPDATE)
        dry = query.dry_run(req.method, req.query)
        obj, warnings = await _checked(h, req, t, _object_for(h, req, t, name), mode, fieldvalidation.UPDATE)
        return _warned(ok(await h.backend.update(obj, dry)), warnings)
    if req.method == "PATCH":
        return await _patch(h, req, t)
    if req.method == "DELETE":
        body = h.body(req)
        options = body if isinstance(body, dict) else None
        grace, policy, pre = query.delete_options(req.query, options)
        dry = query.dry_run(req.method, req.query, (options or {}).get("dryRun"))
        return ok(await h.backend.delete(kind, ns, name, pre.get("uid") or "", grace, policy, dry))
    raise _method(req, t)


async def _patch(h: Handler, req: Request, t: Target) -> Response:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    apply = req.headers.get("content-type", "").startswith(APPLY)
    verb = fieldvalidation.APPLY if apply else fieldvalidation.PATCH
    mode = fieldvalidation.parse_mode(req.query, verb)
    dry = query.dry_run(req.method, req.query)
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
    new, warnings = await _checked(h, req, t, new, mode, verb)
    if current is None:
        return _warned(ok(await h.backend.create(new, dry), 201), warnings)
    meta = new["metadata"]
    meta["resourceVersion"] = current["metadata"].get("resourceVersion")
    if new == current:
        return _warned(ok(current), warnings)  # a patch that changes nothing writes nothing
    return _warned(ok(await h.backend.update(new, dry)), warnings)


async def _checked(
    h: Handler, req: Request, t: Target, obj: dict[str, Any], mode: str, verb: str
) -> tuple[dict[str, Any], list[str]]:
    """The object to write and the warnings to send, by the request's ``fieldValidation``
    (``fieldvalidation.py``): unknown fields dropped, warned about or refused; mistyped ones
    refused whatever the mode."""
    ctype = req.headers.get("content-type", "").split(";")[0].strip()
    json_body = ctype in ("", "application/json") or ctype.endswith("+json")
    patch: Any = None
    if verb == fieldvalidation.PATCH and json_body:
        patch = orjson.loads(req.body)  # parsed once already by the patch itself: it is valid JSON
    return fieldvalidation.check(
        t.resource.kind,
        obj,
        mode,
        verb=verb,
        body=req.body if json_body else None,
        patch_type=ctype,
        patch=patch,
        crd_schema=await _crd_schema(h, t),
    )


async def _crd_schema(h: Handler, t: Target) -> dict[str, Any] | None:
    """A custom resource's ``openAPIV3Schema`` for the version served (None for a built-in kind)."""
    r = t.resource
    if r.kind not in CUSTOM:
        return None
    crd = await h.backend.get("CustomResourceDefinition", "", f"{r.plural}.{r.group}")
    for v in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(v, dict) and v.get("name") == r.version:
            found = (v.get("schema") or {}).get("openAPIV3Schema")
            return found if isinstance(found, dict) else None
    return None


def _warned(answer: Response, warnings: list[str]) -> Response:
    if not warnings:
        return answer
    return answer._replace(
        headers=answer.headers + tuple(("Warning", w) for w in fieldvalidation.warning_headers(warnings))
    )


async def subresource_verb(h: Handler, req: Request, t: Target) -> Response:
    verb = SUBRESOURCES.get(t.subresource)
    if verb is None:
        raise _method(req, t)
    return await verb(h, req, t)


def _method(req: Request, t: Target) -> MethodNotAllowed:
    return not_allowed(req.method, f"{t.resource.plural}/{t.subresource}" if t.subresource else t.resource.plural)
