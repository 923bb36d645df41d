"""One HTTP request of the Kubernetes API, answered: routing, verbs, bodies and errors.

Owns what every request means, apart from the transport: ``handle`` takes a ``Request``
(method, path, query, headers, body) and returns a ``Response`` or, for a watch, a
``WatchStream`` whose lines the server sends as they come. Discovery and OpenAPI come from
``discovery.py``, paths from ``paths.py``, query parameters from ``query.py``, patches from
``patch.py`` and tables from ``tables.py``; objects come from a ``Backend``
(``backend.py``). YuniKorn's REST paths (``/ws/v1/...``) are answered by ``yunikorn.py``
from the ``yunikorn`` view the handler is given; they need the token, as ``/metrics``
does. Every failure is a ``StatusError`` rendered as a Kubernetes ``Status`` with its
code; a request that fails changes nothing. Called by ``server.py``; tests call it
directly, without a socket.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import orjson
import yaml

from ..api.clientpatch import apply_patch
from ..api.errors import (
    BadRequest,
    InternalError,
    NotFound,
    RequestEntityTooLarge,
    StatusError,
    Unauthorized,
    UnsupportedMediaType,
)
from ..api.kinds import CUSTOM
from . import discovery, protobuf, satokens, tables, views
from .backend import Backend
from .metrics import CONTENT_TYPE_LATEST, Metrics, request_labels
from .metricsapi import answer as metrics_answer
from .metricsapi import is_metrics_path
from .paths import NOT_FOUND, Target, group_version, target
from .subresources import bindings
from .ui import answer as ui_answer
from .ui import is_ui_path
from .verbs import collection_verb, object_verb, subresource_verb
from .watch import watch_lines
from .webhookcall import Webhooks
from .wire import Request, Response, WatchStream, error, not_allowed, ok
from .yunikorn import YuniKornView, is_rest_path
from .yunikorn import answer as yunikorn_answer

LOG = logging.getLogger("kubemu.api")
MAX_BODY = 3 * 1024 * 1024  # upstream's request body limit
OPEN_PATHS = ("/version", "/healthz", "/livez", "/readyz")
# Body media types the API decodes ("" counts as JSON, as upstream); patches name their own.
WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
BODY_TYPES = ("", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/x-yaml")


async def _nothing_to_refresh() -> None:
    return None


def _no_yunikorn() -> None:
    return None


# The checks a health endpoint lists with ``?verbose``, as kube-apiserver names them (the
# store stands for etcd); each is also its own path (``/readyz/ping``).
HEALTH_CHECKS = {
    "/healthz": ("ping", "log", "etcd"),
    "/livez": ("ping", "log", "etcd"),
    "/readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", "shutdown"),
}


def health_answer(path: str, query: Mapping[str, str]) -> Response | None:
    """``/healthz``, ``/livez``, ``/readyz`` (``?verbose`` lists the checks) and each check's
    own path; None for any other path."""
    base, _, check = path.partition("/")[2].partition("/")
    checks = HEALTH_CHECKS.get("/" + base)
    if checks is None:
        return None
    if check:
        if check not in checks:
            return None
        return Response(200, b"ok", "text/plain")
    if "verbose" not in query:
        return Response(200, b"ok", "text/plain")
    lines = [f"[+]{c} ok" for c in checks] + [f"{base} check passed"]
    return Response(200, ("\n".join(lines) + "\n").encode(), "text/plain")


class Handler:
    """``yunikorn()`` is the YuniKorn-mode scheduler's view (``yunikorn.py``; None when it
    does not run). ``refresh()`` is awaited before a request that reads a component's view
    (``/metrics``, ``/ws/v1/...``): where the components live in other processes it fetches
    their views, so that the callables, which cannot wait, hand out current ones."""

    def __init__(
        self,
        backend: Backend,
        *,
        token: str = "",
        address: str = "127.0.0.1:6443",
        metrics: Metrics | None = None,
        yunikorn: YuniKornView | None = None,
        refresh: Callable[[], Awaitable[None]] | None = None,
    ):
        self.backend, self.token, self.address = backend, token, address
        self.metrics = metrics or Metrics()
        self.yunikorn: YuniKornView = yunikorn or _no_yunikorn
        self.refresh = refresh or _nothing_to_refresh
        self.webhooks = Webhooks()  # the admission webhooks a write through here must pass

    async def handle(self, req: Request) -> Response | WatchStream:
        t0 = time.perf_counter()
        answer = await self._handle(req)
        if protobuf.preferred(req.headers.get("accept", "")):  # client-go's typed clients
            answer = protobuf.answer(req, answer)
        if isinstance(answer, Response):
            self._observe(req, answer.status, t0)
        else:
            answer = answer._replace(lines=self._observed_watch(req, answer.lines, t0))
        return answer

    def _observe(self, req: Request, code: int, t0: float) -> None:
        verb, resource = request_labels(req.method, req.path, req.query, req.headers.get("content-type", ""))
        self.metrics.observe_request(verb, resource, code, time.perf_counter() - t0)

    async def _observed_watch(self, req: Request, lines: AsyncIterator[bytes], t0: float) -> AsyncIterator[bytes]:
        try:
            async for line in lines:
                yield line
        finally:
            self._observe(req, 200, t0)  # as upstream, a watch counts for as long as its stream lasted

    async def _handle(self, req: Request) -> Response | WatchStream:
        try:
            if is_ui_path(req.path):  # the web view checks its own access (token, or its cookie)
                return await ui_answer(self, req)
            satokens.IDENTITY.set(None)  # the admin's, unless a ServiceAccount token says otherwise
            if self.token and req.path not in OPEN_PATHS:
                auth = req.headers.get("authorization", "")
                if auth != f"Bearer {self.token}":
                    who = await satokens.identity(self, auth[7:]) if auth.startswith("Bearer ") else None
                    if who is None:
                        raise Unauthorized("Unauthorized")
                    satokens.IDENTITY.set(who)
            if len(req.body) > MAX_BODY:
                raise RequestEntityTooLarge(f"the request body is too large: {len(req.body)} bytes (at most 3 MiB)")
            return await self._route(req)
        except StatusError as e:
            return error(e)
        except RecursionError:  # a body nested deeper than Python's stack: refused, not a fault
            return error(BadRequest("the request body is nested too deeply (kubemu decodes at most about 500 levels)"))
        except Exception as e:  # a bug of ours: the client gets a 500 Status, the server keeps serving
            LOG.error("kubemu: %s %s failed", req.method, req.path, exc_info=e)
            return error(
                InternalError(
                    f"an error on the server ({type(e).__name__}: {e}) has prevented the request from succeeding"
                )
            )

    async def _route(self, req: Request) -> Response | WatchStream:
        path = req.path.rstrip("/") or "/"
        if path == "/version":
            return ok(discovery.VERSION)
        health = health_answer(path, req.query)
        if health is not None:
            return health
        if path == "/metrics":
            await self.refresh()
            return Response(200, self.metrics.render(), CONTENT_TYPE_LATEST)
        if is_rest_path(path):
            await self.refresh()
            return yunikorn_answer(self.yunikorn(), req.method, path, req.query)
        if is_metrics_path(path):
            return await metrics_answer(self.backend, req, path)
        fixed = await self._discovery(path, req)
        if fixed is not None:
            return fixed
        gv = group_version(path)
        if gv is None:
            raise NotFound(NOT_FOUND)
        group, version, rest = gv
        if not rest:
            listing = discovery.resource_list(group, version)
            if listing is None:
                raise NotFound(NOT_FOUND)
            return ok(listing)
        if group == "" and len(rest) == 3 and rest[0] == "namespaces" and rest[2] == "bindings":
            return await bindings(self, req, rest[1])  # the older form of pods/NAME/binding
        # Views of a stored kind at another version, review kinds, local APIServices.
        special = await views.answer(self, req, group, version, rest)
        if special is not None:
            return special
        return await self._resource(req, target(group, version, rest))

    async def _discovery(self, path: str, req: Request) -> Response | None:
        # The whole request's headers: /api and /apis read Accept and If-None-Match. The
        # OpenAPI documents carry the custom kinds' schemas: their definitions are read then.
        crds: list[dict[str, Any]] = []
        if path.startswith("/openapi/") and CUSTOM:
            crds = (await self.backend.list("CustomResourceDefinition", None))[1]
        return discovery.answer(path, req.headers, self.address, crds, req.query)

    async def _resource(self, req: Request, t: Target) -> Response | WatchStream:
        verb = WRITE_VERBS.get(req.method)
        if verb is not None and not t.subresource and verb not in t.resource.verbs:
            raise not_allowed(req.method, t.resource.plural)  # a read-only kind (kinds.READ_ONLY)
        if not t.name:
            return await collection_verb(self, req, t)
        if t.subresource:
            return await subresource_verb(self, req, t)
        return await object_verb(self, req, t)

    # -- shared by the verbs -------------------------------------------------------------
    def body(self, req: Request) -> Any:
        """The request body as JSON (no Content-Type counts as JSON, as upstream) or YAML."""
        ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype == "application/vnd.kubernetes.protobuf":
            return protobuf.decode(req.body)
        if ctype not in BODY_TYPES and not ctype.endswith("+json") and not ctype.endswith("+yaml"):
            raise UnsupportedMediaType(
                f"the body of the request was in an unknown format - accepted media types include: {', '.join(BODY_TYPES[1:4])}"
            )
        try:
            if ctype in ("application/yaml", "application/x-yaml"):
                return yaml.safe_load(req.body)
            return orjson.loads(req.body) if req.body else None
        except (orjson.JSONDecodeError, yaml.YAMLError) as e:
            raise BadRequest(f"the request body is not valid JSON: {str(e).splitlines()[0]}") from None

    def wants_table(self, req: Request) -> bool:
        return "as=Table" in req.headers.get("accept", "")

    def table(self, kind: str, items: list[dict[str, Any]], rv: int, include_object: str, cont: str = "") -> Response:
        return ok(
            tables.table(
                kind,
                items,
                self.backend.now(),
                include_object=include_object,
                resource_version=str(rv),
                continue_token=cont,
            )
        )

    def watch(self, req: Request, t: Target, opts: Any) -> WatchStream:
        return WatchStream(watch_lines(self, req, t, opts))

    def patch(self, current: dict[str, Any] | None, req: Request, kind: str) -> dict[str, Any]:
        ctype = req.headers.get("content-type", "")
        return apply_patch(current, ctype, req.body, kind)
