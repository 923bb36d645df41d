"""The local APIServices: every group-version kubemu serves itself, as ``kubectl get apiservices`` lists them.

Owns the read-time overlay on the stored APIServices (apiregistration.k8s.io/v1). Upstream's
aggregator registers an APIService for each built-in group-version when it starts (labelled
``kube-aggregator.kubernetes.io/automanaged: onstart``, with the priorities of upstream's
table) and one for each served CustomResourceDefinition version (``automanaged: true``,
priorities 1000 and 100); none names a Service, and each is ``Available`` with reason
``Local``. kubemu makes the same objects from what discovery serves, when asked, rather
than storing them: a list, a get, a watch from nothing (its initial ADDED events) and a
Table show them beside the stored ones; creating one of their names is AlreadyExists, and
changing or deleting one is refused, since kubemu itself serves them. Every other request
goes to the stored kind's verbs. Called by ``views.answer`` for
``/apis/apiregistration.k8s.io/v1/apiservices...``; None for other paths.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..api.errors import AlreadyExists, Forbidden, NotFound
from ..api.kinds import BY_KIND, CUSTOM
from ..api.objects import name_of
from ..clock import rfc3339
from . import discovery, metricsapi, query, tables
from .paths import NOT_FOUND, Target
from .verbs import collection_verb, object_verb, subresource_verb
from .wire import Request, Response, WatchStream, dumps, ok

if TYPE_CHECKING:
    from .handler import Handler

GROUP, VERSION, PLURAL = "apiregistration.k8s.io", "v1", "apiservices"
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
# Upstream's (group priority minimum, version priority) of the built-in group-versions
# (cmd/kube-apiserver/app/aggregator.go), for those kubemu serves.
PRIORITIES = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
}
CUSTOM_PRIORITY = (1000, 100)  # every CustomResourceDefinition's group-version
METRICS_PRIORITY = (100, 100)  # what metrics-server registers; kubemu serves it in-process
_UIDS = uuid.UUID("6b75626d-752d-6170-6973-657276696365")  # a fixed namespace: one uid per name


def _service(group: str, version: str, priority: tuple[int, int], managed: str) -> dict[str, Any]:
    name = f"{version}.{group}"
    meta = {
        "name": name,
        "uid": str(uuid.uuid5(_UIDS, name)),
        "creationTimestamp": rfc3339(0.0),  # with the cluster, as the built-in namespaces
        "labels": {AUTOMANAGED: managed},
    }
    spec = {"group": group, "version": version, "groupPriorityMinimum": priority[0], "versionPriority": priority[1]}
    available = {
        "type": "Available",
        "status": "True",
        "lastTransitionTime": rfc3339(0.0),
        "reason": "Local",
        "message": "Local APIServices are always available",
    }
    return {
        "kind": "APIService",
        "apiVersion": f"{GROUP}/{VERSION}",
        "metadata": meta,
        "spec": spec,
        "status": {"conditions": [available]},
    }


def local_services() -> dict[str, dict[str, Any]]:
    """name -> the local APIService of every group-version kubemu serves now, by name."""
    custom = {(r.group, r.version) for r in CUSTOM.values()}
    out = {}
    for group, version in [*discovery.group_versions(), (metricsapi.GROUP, metricsapi.VERSION)]:
        if (group, version) in custom:
            s = _service(group, version, CUSTOM_PRIORITY, "true")
        elif group == metricsapi.GROUP:
            s = _service(group, version, METRICS_PRIORITY, "onstart")
        elif (group, version) in PRIORITIES:
            s = _service(group, version, PRIORITIES[(group, version)], "onstart")
        else:
            continue  # upstream registers no APIService for a group-version missing from its table
        out[name_of(s)] = s
    return dict(sorted(out.items()))


async def answer(
    h: Handler, req: Request, group: str, version: str, namespace: str, rest: list[str]
) -> Response | WatchStream | None:
    if (group, version) != (GROUP, VERSION) or not rest or rest[0] != PLURAL:
        return None
    if namespace or len(rest) > 3 or (len(rest) == 3 and rest[2] != "status"):
        raise NotFound(NOT_FOUND)
    t = Target(BY_KIND["APIService"], "", rest[1] if len(rest) > 1 else "", rest[2] if len(rest) == 3 else "")
    local = local_services()
    if not t.name:
        if req.method == "GET":
            return await _collection(h, req, t, local)
        if req.method == "POST":
            body = h.body(req)
            meta = body.get("metadata") if isinstance(body, dict) else None
            name = meta.get("name") if isinstance(meta, dict) else None
            if isinstance(name, str) and name in local:
                raise AlreadyExists(f'{PLURAL}.{GROUP} "{name}" already exists')
        return await collection_verb(h, req, t)
    if t.name not in local:
        return await (subresource_verb(h, req, t) if t.subresource else object_verb(h, req, t))
    if req.method != "GET":
        raise Forbidden(
            f'{PLURAL}.{GROUP} "{t.name}" is forbidden: kubemu serves {t.name} itself '
            "(a local APIService): it cannot be changed or deleted"
        )
    obj = _at(local[t.name], await h.backend.resource_version())
    if h.wants_table(req) and not t.subresource:
        include = query.parse_list_options(req.query, "APIService").include_object
        return h.table("APIService", [obj], int(obj["metadata"]["resourceVersion"]), include)
    return ok(obj)


async def _collection(h: Handler, req: Request, t: Target, local: dict[str, dict[str, Any]]) -> Response | WatchStream:
    """A list of the stored and the local APIServices, or a watch that starts with both."""
    opts = query.parse_list_options(req.query, "APIService")
    rv = await h.backend.resource_version()
    mine = [_at(s, rv) for s in local.values() if query.matches(s, opts)]
    if opts.watch:
        stream = h.watch(req, t, opts)
        if query.watch_start(opts, rv) is not None or not mine:
            return stream
        return stream._replace(lines=_after(_added(h, req, mine, opts.include_object), stream.lines))
    rv, stored = await h.backend.list("APIService", None)
    names = {name_of(o) for o in stored}
    items = sorted([o for o in stored if query.matches(o, opts)] + [s for s in mine if name_of(s) not in names],
                   key=name_of)  # fmt: skip
    page, cont, remaining = query.paginate(items, opts, rv)
    if h.wants_table(req):
        return h.table("APIService", page, rv, opts.include_object, cont)
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if cont:
        meta["continue"] = cont
        if remaining is not None:
            meta["remainingItemCount"] = remaining
    return ok({"kind": "APIServiceList", "apiVersion": f"{GROUP}/{VERSION}", "metadata": meta, "items": page})


def _at(service: dict[str, Any], rv: int) -> dict[str, Any]:
    return {**service, "metadata": {**service["metadata"], "resourceVersion": str(rv)}}


def _added(h: Handler, req: Request, services: list[dict[str, Any]], include: str) -> bytes:
    """The watch's ADDED events of the local APIServices (a one-row Table each for a Table watch)."""
    lines = []
    for i, s in enumerate(services):
        obj: Any = s
        if h.wants_table(req):
            obj = tables.table("APIService", [s], h.backend.now(), include_object=include, with_columns=i == 0)
        lines.append(dumps({"type": "ADDED", "object": obj}) + b"\n")
    return b"".join(lines)


async def _after(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk
