"""A stored kind served at a second group-version: requests converted in, answers converted out.

Owns how the HTTP API serves a view (``kinds.VIEWS``: ``autoscaling/v1`` HorizontalPodAutoscaler
over the stored autoscaling/v2 ones, ``events.k8s.io/v1`` Event over the stored core Events):
one storage, two views. A request to a view is checked
against the view's own schema (``fieldValidation`` as for any kind), converted to the stored
version (``cluster/api/conversion.py``) and carried out by the stored kind's verbs
(``verbs.py``, ``watch.py``) unchanged; whatever comes back (an object, a list, a Table's
objects, each watch event) is converted to the view. A patch is applied to the object as
the view shows it, then written as an update of the stored one. Field selectors are renamed
to the stored kind's (``regarding.name`` -> ``involvedObject.name``).

``answer`` is the front end's hook for the paths no stored kind serves (``handler.py``): the
views here, the review kinds (``reviews.py``) and the local APIServices
(``apiservices.py``); None for any other path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from ..api.conversion import Converter, converter
from ..api.errors import BadRequest, NotFound
from ..api.kinds import BY_KIND, REVIEWS, Resource, served_at
from . import apiservices, fieldvalidation, reviews
from .bodies import body_object, checked, refused
from .paths import NOT_FOUND, Target
from .query_fields import parse_terms
from .verbs import collection_verb, object_verb, subresource_verb
from .wire import JSON, Request, Response, WatchStream, dumps, not_allowed

if TYPE_CHECKING:
    from .handler import Handler

APPLY = "application/apply-patch+yaml"
_EVENTS = (b"ADDED", b"MODIFIED", b"DELETED")


async def answer(h: Handler, req: Request, group: str, version: str, rest: list[str]) -> Response | WatchStream | None:
    """The answer to a path served here, or None when the stored kinds serve it."""
    namespace, tail = _split(rest)
    r = served_at(group, version, tail[0]) if tail else None
    if r is None:
        return await apiservices.answer(h, req, group, version, namespace, tail)
    if namespace and not r.namespaced:
        raise NotFound(NOT_FOUND)
    if r in REVIEWS:
        return await reviews.answer(h, req, r, namespace, tail)
    if len(tail) > 3 or (len(tail) == 3 and tail[2] not in r.subresources):
        raise NotFound(NOT_FOUND)
    stored = BY_KIND[r.kind]
    t = Target(stored, namespace, tail[1] if len(tail) > 1 else "", tail[2] if len(tail) == 3 else "")
    return await View(h, r, converter(r)).serve(req, t)


def _split(rest: list[str]) -> tuple[str, list[str]]:
    if len(rest) >= 3 and rest[0] == "namespaces":
        return rest[1], rest[2:]
    return "", rest


class View:
    """One request to the view ``r`` of a stored kind."""

    def __init__(self, h: Handler, r: Resource, conv: Converter) -> None:
        self.h, self.r, self.conv = h, r, conv

    async def serve(self, req: Request, t: Target) -> Response | WatchStream:
        if req.method == "GET" or (req.method == "DELETE" and not t.subresource):
            return self._out(await self._stored(self._renamed(req), t), [])
        if req.method == "POST" and not t.name:
            return await self._write(req, t, body_object(self.h, req, self.r), fieldvalidation.CREATE)
        if req.method == "PUT" and t.name:
            return await self._write(req, t, body_object(self.h, req, self.r), fieldvalidation.UPDATE)
        if req.method == "PATCH" and t.name:
            return await self._patch(req, t)
        raise not_allowed(req.method, f"{self.r.plural}/{t.subresource}" if t.subresource else self.r.plural)

    async def _stored(self, req: Request, t: Target) -> Response | WatchStream:
        if not t.name:
            return await collection_verb(self.h, req, t)
        if t.subresource:
            return await subresource_verb(self.h, req, t)
        return await object_verb(self.h, req, t)

    def _renamed(self, req: Request) -> Request:
        """The request with its field selector in the stored kind's names."""
        selector = req.query.get("fieldSelector")
        if not selector:
            return req
        esc = str.maketrans({"\\": "\\\\", ",": "\\,", "=": "\\="})
        terms = []
        for label, op, value in parse_terms(selector):
            stored = self.conv.field_label(label)
            if stored is None:
                raise BadRequest(f"field label not supported: {label}")
            terms.append(f"{stored}{op}{value.translate(esc)}")
        return req._replace(query={**req.query, "fieldSelector": ",".join(terms)})

    async def _write(self, req: Request, t: Target, obj: dict[str, Any], verb: str, patch: Any = None) -> Response:
        """Check ``obj`` (the view's) by the view's schema and rules, write it converted."""
        obj, warnings = checked(self.r, obj, req, verb, patch)
        new = self.conv.to_stored(obj)
        name = (new.get("metadata") or {}).get("name") or t.name
        old = None
        if t.name:
            try:
                old = await self.h.backend.get(t.resource.kind, t.namespace, t.name)
            except NotFound:
                if verb != fieldvalidation.APPLY:
                    raise
        causes = self.conv.causes(new, old)
        if causes:
            raise refused(self.r, name, causes)
        if old is not None and verb == fieldvalidation.APPLY and not t.subresource:
            new["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
        forwarded = req._replace(
            method="POST" if old is None and verb != fieldvalidation.UPDATE else "PUT",
            headers={**req.headers, "content-type": JSON},
            body=dumps(new),
        )
        where = t if forwarded.method == "PUT" else t._replace(name="", subresource="")
        answer = await self._stored(forwarded, where)
        assert isinstance(answer, Response)  # a write answers once, it does not stream
        converted = self._out(answer, warnings)
        assert isinstance(converted, Response)
        return converted

    async def _patch(self, req: Request, t: Target) -> Response:
        apply = req.headers.get("content-type", "").startswith(APPLY)
        verb = fieldvalidation.APPLY if apply else fieldvalidation.PATCH
        try:
            current: dict[str, Any] | None = self.conv.from_stored(
                await self.h.backend.get(t.resource.kind, t.namespace, t.name)
            )
        except NotFound:
            if not apply or t.subresource:
                raise
            current = None
        new = self.h.patch(current, req, self.r.kind)
        if not isinstance(new, dict):
            raise BadRequest(f"the patched {self.r.kind} is not an object")
        new.setdefault("kind", self.r.kind)
        new.setdefault("apiVersion", self.r.api_version)
        meta = new.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise BadRequest(f"metadata: the patched {self.r.kind}'s metadata must be a map")
        meta["name"] = t.name
        if t.namespace:
            meta["namespace"] = t.namespace
        if current is not None and new == current:
            return _ok_json(current)  # a patch that changes nothing writes nothing
        # Every patch type but apply is JSON, already parsed once by ``patch``: it is valid.
        document = orjson.loads(req.body) if verb == fieldvalidation.PATCH else None
        return await self._write(req, t, new, verb, document)

    # -- answers, converted --------------------------------------------------------------------
    def _out(self, answer: Response | WatchStream, warnings: list[str]) -> Response | WatchStream:
        if isinstance(answer, WatchStream):
            return answer._replace(lines=self._lines(answer.lines))
        if not answer.body.startswith(b"{"):
            return answer
        converted = self._convert(orjson.loads(answer.body))
        headers = answer.headers + tuple(("Warning", w) for w in fieldvalidation.warning_headers(warnings))
        return answer._replace(body=dumps(converted), headers=headers)

    def _convert(self, doc: dict[str, Any]) -> dict[str, Any]:
        """An answer of the stored kind's verbs as the view's: an object, a list, a Table."""
        stored = BY_KIND[self.r.kind]
        kind, version = doc.get("kind"), doc.get("apiVersion")
        if kind == self.r.kind and version == stored.api_version:
            return self.conv.from_stored(doc)
        if kind == f"{self.r.kind}List":
            doc["apiVersion"] = self.r.api_version
            doc["items"] = [self.conv.from_stored(i) for i in doc.get("items") or ()]
        elif kind == "Table":
            for row in doc.get("rows") or ():
                obj = row.get("object")
                if (
                    isinstance(obj, dict)
                    and obj.get("kind") == self.r.kind
                    and obj.get("apiVersion") == stored.api_version
                ):
                    row["object"] = self.conv.from_stored(obj)
        return doc

    async def _lines(self, lines: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for chunk in lines:
            out = []
            for line in chunk.splitlines():
                event = orjson.loads(line)
                obj = event.get("object")
                if isinstance(obj, dict):
                    if event.get("type", "").encode() in _EVENTS:
                        event["object"] = self._convert(obj)
                    elif event.get("type") == "BOOKMARK":
                        obj["apiVersion"] = self.r.api_version
                out.append(dumps(event) + b"\n")
            yield b"".join(out)


def _ok_json(obj: dict[str, Any]) -> Response:
    return Response(200, dumps(obj))
