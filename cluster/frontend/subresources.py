"""The subresources kubectl and schedulers use, and the table ``verbs.py`` dispatches by.

Owns how each maps onto the apiserver's typed operations:
``binding`` is the scheduler's bind (201 and a success Status), ``eviction`` goes
through the PodDisruptionBudget check (201, or 429 when a budget forbids it), ``status``
replaces or patches only the status (a Namespace's phase checked as upstream),
``scale`` reads and writes ``spec.replicas`` as an ``autoscaling/v1 Scale``,
``ephemeralcontainers`` reads a pod and writes only its ``spec.ephemeralContainers``,
``finalize`` writes only a namespace's ``spec.finalizers`` (both typed writes of
``cluster/api/subresourcewrites.py``). The connect subresources (exec, attach,
portforward, proxy) are ``connect.py``'s and the log ``podlog.py``'s. Called by ``verbs.py``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..api.errors import BadRequest, Cause, Conflict, Invalid, MethodNotAllowed
from ..api.kinds import BY_KIND
from ..api.requests import Patch
from ..api.selectors import LabelSelector
from ..api.subresourcewrites import SetEphemeralContainers, SetNamespaceFinalizers
from ..apiserver.defaults import default_container
from . import connect, fieldvalidation, podlog, query, satokens
from .backend import object_invalid
from .customresources import view_of
from .paths import Target
from .wire import Request, Response, not_allowed, ok, success

if TYPE_CHECKING:
    from .handler import Handler


def _refuse(req: Request, t: Target) -> MethodNotAllowed:
    return not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")


async def status(h: Handler, req: Request, t: Target) -> Response:
    """GET, PUT or PATCH only the status; a custom resource answered at the version the URL
    names, as its object is."""
    view = await view_of(h, t.resource)
    out = await _status(h, req, t)
    return ok(view.answer(out) if view is not None else out)


async def _status(h: Handler, req: Request, t: Target) -> dict[str, Any]:
    kind, ns, name = t.resource.kind, t.namespace, t.name
    if req.method == "GET":
        return await h.backend.get(kind, ns, name)
    if req.method == "PUT":
        body = h.body(req)
        if not isinstance(body, dict):
            raise BadRequest(f"the request body must be a {kind} object")
        dry = query.dry_run(req.method, req.query)
        new_status = body.get("status") or {}
        current = await h.backend.get(kind, ns, name)
        if kind == "Namespace":
            new_status = _namespace_status(current, new_status)
        return await h.backend.update_status(kind, ns, name, new_status, dry, _status_meta(kind, current, body))
    if req.method == "PATCH":
        dry = query.dry_run(req.method, req.query)
        current = await h.backend.get(kind, ns, name)
        new = h.patch(current, req, kind)
        new_status = new.get("status") or {}
        if kind == "Namespace":
            new_status = _namespace_status(current, new_status)
        return await h.backend.update_status(kind, ns, name, new_status, dry, _status_meta(kind, current, new))
    raise _refuse(req, t)


# What a status write keeps of a new object's metadata, by kind: its labels and annotations,
# as upstream's status strategies do, except where one puts the old ones back.
_STATUS_KEEPS_OLD = {"Deployment": ("labels",)}


def _status_meta(kind: str, current: dict[str, Any], new: Any) -> dict[str, Any] | None:
    """The labels and annotations a status write changes (None: none)."""
    meta = (new.get("metadata") if isinstance(new, dict) else None) or {}
    if not isinstance(meta, dict):
        return None
    old = current.get("metadata") or {}
    out = {}
    for field in ("labels", "annotations"):
        if field in _STATUS_KEEPS_OLD.get(kind, ()):
            continue
        value = meta.get(field) or {}
        if isinstance(value, dict) and value != (old.get(field) or {}):
            out[field] = {str(k): str(v) for k, v in value.items()}
    return out or None


def _namespace_status(ns: dict[str, Any], new: Any) -> dict[str, Any]:
    """Upstream's ValidateNamespaceStatusUpdate, after the phase's default (Active)."""
    if not isinstance(new, dict):
        raise BadRequest("status: the namespace's status must be a map")
    new = {**new, "phase": new.get("phase") or "Active"}
    deleting = bool((ns.get("metadata") or {}).get("deletionTimestamp"))
    want, rule = ("Terminating", "is not empty") if deleting else ("Active", "is empty")
    if new["phase"] != want:
        detail = f"Invalid value: {json.dumps(new['phase'])}: may only be '{want}' if `deletionTimestamp` {rule}"
        raise object_invalid(
            ns, Invalid(f"status.Phase: {detail}", (Cause("FieldValueInvalid", detail, "status.Phase"),))
        )
    return new


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
    # parse a Binding, so the Binding is echoed.
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
    """A Scale of the object; a custom resource's replicas and selector are where its
    definition's ``subresources.scale`` paths say (upstream's defaults: ``.spec.replicas``,
    ``.status.replicas``, no selector)."""
    kind, ns, name = t.resource.kind, t.namespace, t.name
    view = await view_of(h, t.resource)
    paths = _ScalePaths.of(view.scale) if view is not None else None
    obj = await h.backend.get(kind, ns, name)
    if req.method in ("PUT", "PATCH"):
        dry = query.dry_run(req.method, req.query)
        current = _scale_of(obj, paths)
        new = h.body(req) if req.method == "PUT" else h.patch(current, req, "Scale")
        replicas = ((new or {}).get("spec") or {}).get("replicas") if isinstance(new, dict) else None
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise BadRequest(f"spec.replicas: {replicas!r} must be a non-negative integer")
        _set_path(obj, paths.spec if paths else ".spec.replicas", replicas)
        obj = await h.backend.update(obj, dry)
    elif req.method != "GET":
        raise _refuse(req, t)
    return ok(_scale_of(obj, paths))


class _ScalePaths(NamedTuple):
    spec: str
    status: str
    selector: str

    @classmethod
    def of(cls, scale: Mapping[str, Any]) -> _ScalePaths:
        return cls(
            str(scale.get("specReplicasPath") or ".spec.replicas"),
            str(scale.get("statusReplicasPath") or ".status.replicas"),
            str(scale.get("labelSelectorPath") or ""),
        )


def _get_path(obj: Any, path: str) -> Any:
    for part in path.strip(".").split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.strip(".").split(".")
    for part in parents:
        child = obj.get(part)
        obj = obj.setdefault(part, {}) if not isinstance(child, dict) else child
        if not isinstance(child, dict):
            obj.clear()
    obj[last] = value


def _scale_of(obj: dict[str, Any], paths: _ScalePaths | None = None) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    spec, status_ = obj.get("spec") or {}, obj.get("status") or {}
    if paths is not None:  # a custom resource
        found = _get_path(obj, paths.selector) if paths.selector else ""
        spec = {"replicas": _get_path(obj, paths.spec) or 0}
        status_ = {"replicas": _get_path(obj, paths.status) or 0, "selector": found if isinstance(found, str) else ""}
    selector = spec.get("selector")
    shown = str(LabelSelector.from_dict(selector)) if isinstance(selector, dict) else ""
    if paths is not None:
        shown = status_["selector"]
    if obj.get("kind") == "ReplicationController" and isinstance(selector, dict):  # a plain map (issue 40)
        shown = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
        },
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status_.get("replicas", 0), "selector": shown},
    }


async def ephemeral_containers(h: Handler, req: Request, t: Target) -> Response:
    """``pods/NAME/ephemeralcontainers``: GET the pod; PUT a pod or PATCH it, of which only
    ``spec.ephemeralContainers`` is written (upstream's EphemeralContainersStrategy)."""
    ns, name = t.namespace, t.name
    current = await h.backend.get("Pod", ns, name)
    if req.method == "GET":
        return ok(current)
    if req.method not in ("PUT", "PATCH"):
        raise _refuse(req, t)
    verb = fieldvalidation.UPDATE if req.method == "PUT" else fieldvalidation.PATCH
    new = h.body(req) if req.method == "PUT" else h.patch(current, req, "Pod")
    if not isinstance(new, dict) or new.get("kind", "Pod") != "Pod":
        raise BadRequest("the request body must be a Pod object")
    _precondition(current, new)
    from .verbs import _checked, _warned  # verbs.py imports this module: read at call time

    mode = fieldvalidation.parse_mode(req.query, verb)
    new, warnings = await _checked(h, req, t, new, mode, verb)
    containers = (new.get("spec") or {}).get("ephemeralContainers") or []
    if not isinstance(containers, list):
        raise BadRequest("spec.ephemeralContainers: must be a list")
    for c in containers:
        if isinstance(c, dict):
            default_container(c)  # the defaults a container gets on every decode
    op = SetEphemeralContainers(tuple(containers))
    out = await _typed_write(h, req, current, Patch("Pod", ns, name, _uid(current), op))
    return _warned(ok(out), warnings)


async def finalize(h: Handler, req: Request, t: Target) -> Response:
    """``PUT namespaces/NAME/finalize``: writes the body's ``spec.finalizers`` (upstream's
    FinalizeREST); a terminating namespace left with none is removed, as upstream's
    delete-during-update, and the answer is the namespace as it was last written."""
    if req.method != "PUT":
        raise _refuse(req, t)
    current = await h.backend.get("Namespace", "", t.name)
    body = h.body(req)
    if not isinstance(body, dict) or body.get("kind", "Namespace") != "Namespace":
        raise BadRequest("the request body must be a Namespace object")
    _precondition(current, body)
    finalizers = (body.get("spec") or {}).get("finalizers") or []
    if not isinstance(finalizers, list):
        raise BadRequest(f"spec.finalizers: {json.dumps(finalizers, default=str)} must be a list")
    op = SetNamespaceFinalizers(tuple(finalizers))
    out = await _typed_write(h, req, current, Patch("Namespace", "", t.name, _uid(current), op))
    if out is None:  # removed: what it was when the last finalizer went
        out = {**current, "spec": {**(current.get("spec") or {}), "finalizers": list(finalizers)}}
        if not finalizers:
            del out["spec"]["finalizers"]
    return ok(out)


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _precondition(current: dict[str, Any], sent: dict[str, Any]) -> None:
    """A resourceVersion in the body must be the stored one (409 otherwise, as an update)."""
    meta = sent.get("metadata") or {}
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    if rv and rv != (current.get("metadata") or {}).get("resourceVersion"):
        plural = BY_KIND[current.get("kind") or "Pod"].plural
        raise Conflict(
            f'Operation cannot be fulfilled on {plural} "{(current.get("metadata") or {}).get("name")}": the object '
            "has been modified; please apply your changes to the latest version and try again"
        )


async def _typed_write(h: Handler, req: Request, current: dict[str, Any], patch: Patch) -> dict[str, Any] | None:
    try:
        return await h.backend.write(patch, query.dry_run(req.method, req.query))
    except Invalid as e:
        raise object_invalid(current, e) from None


async def log(h: Handler, req: Request, t: Target) -> Any:
    return await podlog.answer(h, req, t)


# What each answers with: a Response, or a WatchStream for a followed log. Typed ``Any``
# because ``verbs.subresource_verb`` is annotated ``-> Response``.
SUBRESOURCES: dict[str, Callable[[Handler, Request, Target], Awaitable[Any]]] = {
    "status": status,
    "approval": status,  # a CertificateSigningRequest's conditions: part of its status
    "binding": binding,
    "eviction": eviction,
    "scale": scale,
    "log": log,
    "ephemeralcontainers": ephemeral_containers,
    "finalize": finalize,
    "token": satokens.token_request,  # serviceaccounts/NAME/token (satokens.py)
    "exec": connect.exec_,
    "attach": connect.attach,
    "portforward": connect.portforward,
    "proxy": connect.proxy,
}
