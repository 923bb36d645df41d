"""The verbs on a resource: list, create, get, update, patch, delete, deletecollection, and
the subresources (status, binding, eviction, scale, log).

Owns what each verb reads from the request and asks of the ``Backend``, as the Kubernetes
apiserver answers it: a created object comes
back with 201, a list as a ``<Kind>List`` (or a ``Table`` when kubectl asks for one:
``outputformat.py``, which also answers 406 for an Accept nothing can satisfy), a patch of a
missing object creates it only for server-side apply, a graceful delete returns the
terminating object. A DELETE of a collection lists what its
selectors, ``limit`` and ``continue`` select, deletes each item with the request's
DeleteOptions (propagation, grace, preconditions, dryRun), ignoring the ones already gone,
stops at the first other refusal, and answers 200 with the list as it was before the
deletes; across namespaces it is not served (405), as upstream registers it only on the
namespaced path, nor for a kind whose ``verbs`` lack it. Custom resources are checked,
stored and answered at their versions by ``customresources.py``. Called by ``handler.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..api.errors import BadRequest, MethodNotAllowed, NotFound
from ..api.kinds import CUSTOM
from ..api.objects import name_of, namespace_of
from . import applyyaml, fieldvalidation, outputformat, query, tables
from .customresources import CustomView, view_of
from .paths import Target
from .subresources import SUBRESOURCES
from .webhookcall import admitted
from .webhooks import MUTATING, VALIDATING, Attributes
from .wire import Request, Response, WatchStream, not_allowed, ok

if TYPE_CHECKING:
    from .handler import Handler

APPLY = "application/apply-patch+yaml"


async def collection_verb(h: Handler, req: Request, t: Target) -> Response | WatchStream:
    table = outputformat.table_version(req.headers.get("accept", ""))  # 406 before anything is done
    if req.method == "GET":
        opts = query.parse_list_options(req.query, t.resource.kind)
        if opts.watch:
            return h.watch(req, t, opts)
        return await _list(h, t, opts, table)
    if req.method == "POST":
        mode = fieldvalidation.parse_mode(req.query, fieldvalidation.CREATE)
        dry = query.dry_run(req.method, req.query)
        view = await view_of(h, t.resource)
        obj, warnings = await _checked(h, req, t, _object_for(h, req, t), mode, fieldvalidation.CREATE, view)
        created, said = await _admitted(h, t, "CREATE", obj, None, dry, view)
        return _warned(ok(created, 201), warnings + said)
    if req.method == "DELETE":
        return await _delete_collection(h, req, t, table)
    raise _method(req, t)


async def _listed(
    h: Handler, t: Target, opts: query.ListOptions, view: CustomView | None
) -> tuple[int, list[dict[str, Any]], str, int | None]:
    """(the list's resourceVersion, the page of matching items in (namespace, name) order,
    its continue token, remainingItemCount) of a list request."""
    rv, items = await h.backend.list(t.resource.kind, _node_names(opts))
    if view is not None:
        items = [view.to_client(o) for o in items]
    items = [o for o in items if (not t.namespace or namespace_of(o) == t.namespace) and query.matches(o, opts)]
    items.sort(key=lambda o: (namespace_of(o), name_of(o)))
    page, cont, remaining = query.paginate(items, opts, rv)
    return rv, page, cont, remaining


async def _list(h: Handler, t: Target, opts: query.ListOptions, table: str) -> Response:
    rv, page, cont, remaining = await _listed(h, t, opts, await view_of(h, t.resource))
    if table:
        return _table(h, t, page, rv, opts.include_object, table, cont)
    return ok(_list_of(t, page, rv, cont, remaining))


def _list_of(t: Target, items: list[dict[str, Any]], rv: int, cont: str = "", remaining: int | None = None) -> Any:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if cont:
        meta["continue"] = cont
        if remaining is not None:
            meta["remainingItemCount"] = remaining
    return {"kind": f"{t.resource.kind}List", "apiVersion": t.resource.api_version, "metadata": meta, "items": items}


def _table(
    h: Handler, t: Target, items: list[dict[str, Any]], rv: int, include: str, version: str, cont: str = ""
) -> Response:
    out = tables.table(
        t.resource.kind, items, h.backend.now(), include_object=include, resource_version=str(rv), continue_token=cont
    )
    return ok(outputformat.as_table_version(out, version))


async def _delete_collection(h: Handler, req: Request, t: Target, table: str) -> Response:
    """DELETE on a collection (see the module docstring)."""
    r = t.resource
    if (r.namespaced and not t.namespace) or "deletecollection" not in r.verbs:
        raise _method(req, t)
    body = h.body(req)
    options = body if isinstance(body, dict) else None
    grace, policy, pre = query.delete_options(req.query, options)
    dry = query.dry_run(req.method, req.query, (options or {}).get("dryRun"))
    opts = query.parse_list_options(req.query, r.kind)
    view = await view_of(h, t.resource)
    rv, page, cont, _ = await _listed(h, t, opts, view)
    for obj in page:
        ns, name = namespace_of(obj), name_of(obj)

        async def delete(_: Any, dry_run: bool, ns: str = ns, name: str = name) -> Any:
            return await h.backend.delete(r.kind, ns, name, pre.get("uid") or "", grace, policy, dry_run)

        try:
            await admitted(h.webhooks, h.backend, Attributes("DELETE", r, ns, name, None, obj, dry), delete)
        except NotFound:
            continue  # gone meanwhile: what the request wanted
    _configured(h, t)
    if table:
        return _table(h, t, page, rv, opts.include_object, table, cont)
    return ok(_list_of(t, page, rv, cont))


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
    table = outputformat.table_version(req.headers.get("accept", ""))  # 406 before anything is done
    view = await view_of(h, t.resource)
    if req.method == "GET":
        obj = _answer(view, await h.backend.get(kind, ns, name))
        if table:
            include = query.parse_list_options(req.query, kind).include_object
            return _table(h, t, [obj], int(obj["metadata"].get("resourceVersion") or 0), include, table)
        return ok(obj)
    if req.method == "PUT":
        mode = fieldvalidation.parse_mode(req.query, fieldvalidation.UPDATE)
        dry = query.dry_run(req.method, req.query)
        obj, warnings = await _checked(h, req, t, _object_for(h, req, t, name), mode, fieldvalidation.UPDATE, view)
        updated, said = await _admitted(h, t, "UPDATE", obj, None, dry, view)
        return _warned(ok(updated), warnings + said)
    if req.method == "PATCH":
        return await _patch(h, req, t, view)
    if req.method == "DELETE":
        body = h.body(req)
        options = body if isinstance(body, dict) else None
        grace, policy, pre = query.delete_options(req.query, options)
        dry = query.dry_run(req.method, req.query, (options or {}).get("dryRun"))

        async def delete(_: Any, dry_run: bool) -> Any:
            return _answer(view, await h.backend.delete(kind, ns, name, pre.get("uid") or "", grace, policy, dry_run))

        a = Attributes("DELETE", t.resource, ns, name, None, None, dry)
        deleted, said = await admitted(h.webhooks, h.backend, a, delete, lambda: _current(h, t, view))
        _configured(h, t)
        return _warned(ok(deleted), said)
    raise _method(req, t)


async def _current(h: Handler, t: Target, view: CustomView | None) -> dict[str, Any]:
    got: dict[str, Any] = _answer(view, await h.backend.get(t.resource.kind, t.namespace, t.name))
    return got


async def _admitted(
    h: Handler,
    t: Target,
    operation: str,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    dry: bool,
    view: CustomView | None,
) -> tuple[Any, list[str]]:
    """A create or an update of ``obj`` behind the admission webhooks (``webhookcall.py``);
    returns the object as the client sees it and the webhooks' warnings."""

    async def write(o: Any, dry_run: bool) -> Any:
        stored = _stored(view, o)
        done = await (h.backend.create(stored, dry_run) if operation == "CREATE" else h.backend.update(stored, dry_run))
        return _answer(view, done)

    name = name_of(obj) if (obj.get("metadata") or {}).get("name") else ""
    a = Attributes(operation, t.resource, t.namespace, name, obj, old, dry)
    out = await admitted(h.webhooks, h.backend, a, write, lambda: _current(h, t, view))
    _configured(h, t)
    return out


def _configured(h: Handler, t: Target) -> None:
    """After a write of a webhook configuration: the next write reads them again."""
    if t.resource.kind in (MUTATING, VALIDATING):
        h.webhooks.invalidate()


async def _patch(h: Handler, req: Request, t: Target, view: CustomView | None) -> Response:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    apply = req.headers.get("content-type", "").startswith(APPLY)
    verb = fieldvalidation.APPLY if apply else fieldvalidation.PATCH
    mode = fieldvalidation.parse_mode(req.query, verb)
    dry = query.dry_run(req.method, req.query)
    try:
        current: dict[str, Any] | None = _answer(view, await h.backend.get(kind, ns, name))
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
    new, warnings = await _checked(h, req, t, new, mode, verb, view)
    if apply:
        warnings += applyyaml.strict_check(req.body, mode)
    if current is None:
        created, said = await _admitted(h, t, "CREATE", new, None, dry, view)
        return _warned(ok(created, 201), warnings + said)
    meta = new["metadata"]
    meta["resourceVersion"] = current["metadata"].get("resourceVersion")
    if new == current:
        return _warned(ok(current), warnings)  # a patch that changes nothing writes nothing
    updated, said = await _admitted(h, t, "UPDATE", new, current, dry, view)
    return _warned(ok(updated), warnings + said)


def _stored(view: CustomView | None, obj: dict[str, Any]) -> dict[str, Any]:
    return obj if view is None else view.to_storage(obj)


def _answer(view: CustomView | None, obj: Any) -> Any:
    return obj if view is None else view.answer(obj)


async def _checked(
    h: Handler, req: Request, t: Target, obj: dict[str, Any], mode: str, verb: str, view: CustomView | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The object to write and the warnings to send, by the request's ``fieldValidation``
    (``fieldvalidation.py``): unknown fields dropped, warned about or refused; mistyped ones
    refused whatever the mode. A custom resource is checked against the schema of the
    version the URL names (``view``; looked up when not given)."""
    ctype, json_body = fieldvalidation.body_type(req.headers, req.body)
    patch: Any = None
    if verb == fieldvalidation.PATCH and json_body is not None:
        patch = orjson.loads(json_body)  # parsed once already by the patch itself: it is valid JSON
    if view is None and t.resource.kind in CUSTOM:
        view = await view_of(h, t.resource)
    schema = view.schema if view is not None else None
    return fieldvalidation.check(
        t.resource.kind,
        obj,
        mode,
        verb=verb,
        body=json_body,
        patch_type=ctype,
        patch=patch,
        crd_schema=dict(schema) if schema is not None else None,
    )


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
