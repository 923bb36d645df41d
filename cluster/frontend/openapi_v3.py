"""``/openapi/v3`` and ``/openapi/v3/<group-version>``: the OpenAPI 3.0 documents kubectl
1.27 and later read for ``explain``, for server-side field validation (a ``patch`` with the
kind's group-version-kind and a ``fieldValidation`` parameter) and, from 1.29, for the
strategic merge patches of ``apply`` (a ``patch`` whose body may be
``application/strategic-merge-patch+json`` makes kubectl use the v3 models).

Owns the v3 documents, their cache and how they are served, as upstream's kube-openapi
handler3 serves them: the index names each group-version's document with ``?hash=`` the
upper-case hex SHA-512 of its JSON; a document asked for with its current hash is
``Cache-Control: public, immutable``, with an old hash it is a 301 to the current one; an
``If-None-Match`` naming its ETag is a 304. A document's paths are ``openapi_v2``'s path
items converted (one source for both), its ``components.schemas`` the models of
``openapi_schemas`` those and its kinds reach. Each document is built once per set of
resources in its group-version and of its custom kinds' definitions (an edit rebuilds it).
Called by ``discovery.answer``; pure, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..api.errors import NotAcceptable, NotFound
from ..api.kinds import Resource
from . import openapi_schemas as schemas
from . import openapi_v2
from .discovery import VERSION, parse_accept
from .paths import NOT_FOUND
from .wire import JSON, Response, dumps

Crds = Sequence[Mapping[str, Any]]


class Built(NamedTuple):
    json: bytes
    hash: str  # upstream's: upper-case hex SHA-512 of the JSON (the ETag, unquoted)


_BUILT: dict[tuple[str, str], tuple[tuple[Any, ...], Built]] = {}


def key(group: str, version: str) -> str:
    """The index's name of a group-version: ``api/v1``, ``apis/apps/v1``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def resources_in(group: str, version: str) -> list[Resource]:
    return [r for r in schemas.described() if (r.group, r.version) == (group, version)]


# -- the document: v2 path items converted ---------------------------------------------------


def _schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    target = schema.get("$ref")
    return {"$ref": schemas.V3_REF + target.rpartition("/")[2]} if isinstance(target, str) else dict(schema)


def _parameter(p: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: p[k] for k in ("name", "in", "required") if k in p}
    out["schema"] = {k: p[k] for k in ("type", "uniqueItems") if k in p}
    return out


def _operation(op: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": op["operationId"]}
    given = op.get("parameters", ())
    params = [_parameter(p) for p in given if p["in"] != "body"]
    if params:
        out["parameters"] = params
    for body in (p for p in given if p["in"] == "body"):
        content = {media_type: {"schema": _schema(body["schema"])} for media_type in op["consumes"]}
        out["requestBody"] = {"content": content, **({"required": True} if body.get("required") else {})}
    out["responses"] = {}
    for code, answer in op["responses"].items():
        written = {"description": answer["description"]}
        if "schema" in answer:
            written["content"] = {media_type: {"schema": _schema(answer["schema"])} for media_type in op["produces"]}
        out["responses"][code] = written
    out.update((k, v) for k, v in op.items() if k.startswith("x-"))
    return out


def _path_item(item: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {method: _operation(op) for method, op in item.items() if method != "parameters"}
    out["parameters"] = [_parameter(p) for p in item.get("parameters", ())]
    return out


def build(resources: Sequence[Resource], crds: Crds = ()) -> dict[str, Any]:
    """The document of ``resources`` (one group-version's): their paths, and the models those
    and the kinds refer to."""
    models = schemas.models(resources, crds, v2=False)
    paths = {path: _path_item(item) for path, item in openapi_v2.path_items(resources, models).items()}
    roots = [*schemas.refs(paths), *(openapi_v2.model_name(r) for r in resources)]
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
        "paths": paths,
        "components": {
            "schemas": schemas.closure(roots, models),
            "securitySchemes": {"BearerToken": openapi_v2.BEARER},
        },
    }


def document(group: str, version: str, crds: Crds = ()) -> Built | None:
    """The document of a served group-version (None if none is), from the cache while neither
    its resources nor their definitions changed."""
    resources = resources_in(group, version)
    if not resources:
        _BUILT.pop((group, version), None)
        return None
    cache_key = (*resources, schemas.crd_fingerprint(resources, crds))
    cached = _BUILT.get((group, version))
    if cached is None or cached[0] != cache_key:
        body = dumps(build(resources, crds))
        cached = _BUILT[(group, version)] = (cache_key, Built(body, hashlib.sha512(body).hexdigest().upper()))
    return cached[1]


def index(crds: Crds = ()) -> dict[str, Any]:
    """``/openapi/v3``: each served group-version's document, named with its hash."""
    paths = {}
    for group, version in {(r.group, r.version) for r in schemas.described()}:
        built = document(group, version, crds)
        if built is not None:
            paths[key(group, version)] = {"serverRelativeURL": f"/openapi/v3/{key(group, version)}?hash={built.hash}"}
    return {"paths": dict(sorted(paths.items()))}


# -- serving -----------------------------------------------------------------------------------


def _not_modified(headers: Mapping[str, str], tag: str) -> bool:
    """Go's http.ServeContent reading of If-None-Match: "*", or a list compared weakly."""
    for candidate in headers.get("if-none-match", "").split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == tag:
            return True
    return False


def _serve(body: bytes, tag: str, headers: Mapping[str, str], more: tuple[tuple[str, str], ...] = ()) -> Response:
    answered = (("ETag", tag), *more)
    if _not_modified(headers, tag):
        return Response(304, b"", JSON, answered)
    return Response(200, body, JSON, answered)


def answer_index(headers: Mapping[str, str], crds: Crds = ()) -> Response:
    body = dumps(index(crds))
    return _serve(body, '"' + hashlib.sha512(body).hexdigest().upper() + '"', headers)


def answer_document(
    group: str, version: str, headers: Mapping[str, str], query: Mapping[str, str], crds: Crds = ()
) -> Response:
    """One group-version's document in JSON, the only encoding kubemu writes (upstream's
    handler also writes protobuf, and answers any other Accept with a bare 406; kubemu's 406
    is a Status, as every answer of its surface)."""
    built = document(group, version, crds)
    if built is None:
        raise NotFound(NOT_FOUND)
    vary = (("Vary", "Accept"),)
    if not any(clause.matches(JSON) for clause in parse_accept(headers.get("accept") or "*/*")):
        raise NotAcceptable(f"only the following media types are accepted: {JSON}")
    asked = query.get("hash", "")
    if asked and asked != built.hash:  # an index read before the document changed
        location = f"/openapi/v3/{key(group, version)}?hash={built.hash}"
        moved = f'<a href="{location}">Moved Permanently</a>.\n\n'.encode()  # Go's http.Redirect body
        return Response(301, moved, "text/html; charset=utf-8", (("Location", location), *vary))
    cache = (("Cache-Control", "public, immutable"),) if asked else ()
    return _serve(built.json, f'"{built.hash}"', headers, (*vary, *cache))
