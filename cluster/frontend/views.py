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

The same machinery serves a custom kind at a version other than its storage version when
its definition converts by webhook (``CustomConverted``): the conversions are then the
webhook's (``crdconversion.py``), called once per object written or read and once per list
or watch batch; the checks of a write are the custom kind's at the version the URL names.
Admission webhooks see such a write at the storage version, and a Table's cells are computed
from the stored objects (only its rows' objects are converted).

``answer`` is the front end's hook for the paths no stored kind serves (``handler.py``): the
views here, custom kinds converted by webhook, the review kinds (``reviews.py``) and the
local APIServices (``apiservices.py``); None for any other path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from ..api.conversion import Converter, converter
from ..api.errors import BadRequest, NotFound, StatusError
from ..api.kinds import BY_KIND, CUSTOM, REVIEWS, Resource, at_version, served_at
from . import apiservices, crdconversion, crdvalidation, fieldvalidation, reviews
from .bodies import body_object, checked, refused
from .customresources import CRD_KIND, CustomView, view_from
from .paths import NOT_FOUND, Target, target
from .query_fields import parse_terms
from .verbs import _checked as checked_custom  # the custom kinds' fieldValidation, one rule in one place
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
        custom = await _converted_custom(h, req, group, version, rest, tail)
        if custom is not None:
            return custom
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


async def _converted_custom(
    h: Handler, req: Request, group: str, version: str, rest: list[str], tail: list[str]
) -> Response | WatchStream | None:
    """The answer to a custom kind at a version other than its storage version when its
    definition converts by webhook; None for any other path (the stored kinds' verbs serve it)."""
    r = at_version(group, version, tail[0]) if tail else None
    stored = CUSTOM.get(r.kind) if r is not None else None
    if r is None or stored is None or stored.version == version:
        return None
    try:
        crd = await h.backend.get(CRD_KIND, "", f"{r.plural}.{r.group}")
    except NotFound:
        return None
    hook = crdconversion.webhook_of(crd)
    view = view_from(crd, r)
    if hook is None or view is None or view.storage_version != stored.version:
        return None
    return await CustomConverted(h, r, view, hook, stored).serve(
        req, target(group, version, rest)._replace(resource=stored)
    )


def _split(rest: list[str]) -> tuple[str, list[str]]:
    if len(rest) >= 3 and rest[0] == "namespaces":
        return rest[1], rest[2:]
    return "", rest


class View:
    """One request to the view ``r`` of a stored kind."""

    forward_query: dict[str, str] = {}  # query parameters a converted write is forwarded with

    def __init__(self, h: Handler, r: Resource, conv: Converter, stored: Resource | None = None) -> None:
        self.h, self.r, self.conv = h, r, conv
        self.stored = stored or BY_KIND[r.kind]

    async def serve(self, req: Request, t: Target) -> Response | WatchStream:
        if req.method == "GET" or (req.method == "DELETE" and not t.subresource):
            return await self._out(await self._stored(self._renamed(req), t), [])
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
        obj, warnings = await self._checked(obj, req, verb, patch)
        new = await self._to_stored(obj)
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
            query={**req.query, **self.forward_query},
            body=dumps(new),
        )
        where = t if forwarded.method == "PUT" else t._replace(name="", subresource="")
        answer = await self._stored(forwarded, where)
        assert isinstance(answer, Response)  # a write answers once, it does not stream
        converted = await self._out(answer, warnings)
        assert isinstance(converted, Response)
        return converted

    async def _patch(self, req: Request, t: Target) -> Response:
        apply = req.headers.get("content-type", "").startswith(APPLY)
        verb = fieldvalidation.APPLY if apply else fieldvalidation.PATCH
        try:
            stored = await self.h.backend.get(t.resource.kind, t.namespace, t.name)
            current: dict[str, Any] | None = (await self._from_stored([stored], single=True))[0]
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

    # -- the conversions: a subclass converting otherwise overrides these ----------------------
    async def _checked(
        self, obj: dict[str, Any], req: Request, verb: str, patch: Any
    ) -> tuple[dict[str, Any], list[str]]:
        return checked(self.r, obj, req, verb, patch)

    async def _to_stored(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.conv.to_stored(obj)

    async def _from_stored(self, objs: list[dict[str, Any]], single: bool = False) -> list[dict[str, Any]]:
        """Stored objects as the view's (``single``: one object read or written, not a list)."""
        return [self.conv.from_stored(o) for o in objs]

    # -- answers, converted --------------------------------------------------------------------
    async def _out(self, answer: Response | WatchStream, warnings: list[str]) -> Response | WatchStream:
        if isinstance(answer, WatchStream):
            return answer._replace(lines=self._lines(answer.lines))
        if not answer.body.startswith(b"{"):
            return answer
        converted = (await self._convert_all([orjson.loads(answer.body)]))[0]
        headers = answer.headers + tuple(("Warning", w) for w in fieldvalidation.warning_headers(warnings))
        return answer._replace(body=dumps(converted), headers=headers)

    def _of_stored(self, obj: Any) -> bool:
        return (
            isinstance(obj, dict)
            and obj.get("kind") == self.r.kind
            and obj.get("apiVersion") == self.stored.api_version
        )

    async def _convert_all(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answers of the stored kind's verbs (objects, lists, Tables) as the view's: every
        object of the stored kind in them converted by one ``_from_stored``."""
        out = list(docs)
        slots: list[tuple[Any, Any]] = []  # (container, key) of each object to convert
        for n, doc in enumerate(out):
            if self._of_stored(doc):
                slots.append((out, n))
            elif doc.get("kind") == f"{self.r.kind}List":
                doc["apiVersion"] = self.r.api_version
                doc["items"] = items = list(doc.get("items") or ())
                slots += [(items, i) for i in range(len(items))]
            elif doc.get("kind") == "Table":
                slots += [(row, "object") for row in doc.get("rows") or () if self._of_stored(row.get("object"))]
        if slots:
            single = len(slots) == 1 and slots[0][0] is out
            converted = await self._from_stored([c[k] for c, k in slots], single)
            for (c, k), obj in zip(slots, converted):
                c[k] = obj
        return out

    async def _lines(self, lines: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for chunk in lines:
            events = [orjson.loads(line) for line in chunk.splitlines()]
            changes = [e for e in events if isinstance(e.get("object"), dict) and e.get("type", "").encode() in _EVENTS]
            try:
                converted = await self._convert_all([e["object"] for e in changes])
            except StatusError as e:  # a conversion that failed ends the watch with its Status
                yield dumps({"type": "ERROR", "object": e.status()}) + b"\n"
                return
            for event, obj in zip(changes, converted):
                event["object"] = obj
            out = []
            for event in events:
                obj = event.get("object")
                if isinstance(obj, dict):
                    if event.get("type") == "BOOKMARK":
                        obj["apiVersion"] = self.r.api_version
                out.append(dumps(event) + b"\n")
            yield b"".join(out)


class CustomConverted(View):
    """A request to a custom kind at a version other than its storage version, when its
    definition's ``spec.conversion.strategy`` is ``Webhook``: the body is checked against the
    schema of the version the URL names, converted by the webhook (``crdconversion.py``) and
    written at the storage version, where the schema prunes whatever it does not declare
    (hence ``fieldValidation=Ignore`` on the forwarded write, as upstream prunes a converted
    object silently); whatever comes back is converted by the webhook again (a list's or a
    watch batch's objects in one review), then pruned and defaulted by the version's schema."""

    forward_query = {"fieldValidation": "Ignore"}

    def __init__(self, h: Handler, r: Resource, view: CustomView, hook: crdconversion.Webhook, stored: Resource):
        super().__init__(h, r, Converter(_unchanged, _unchanged), stored)
        self.view, self.hook = view, hook

    async def _checked(
        self, obj: dict[str, Any], req: Request, verb: str, patch: Any
    ) -> tuple[dict[str, Any], list[str]]:
        mode = fieldvalidation.parse_mode(req.query, verb)
        return await checked_custom(self.h, req, Target(self.r, "", "", ""), obj, mode, verb, self.view)

    async def _to_stored(self, obj: dict[str, Any]) -> dict[str, Any]:
        return (await crdconversion.convert(self.hook, [obj], self.stored.api_version, single=True))[0]

    async def _from_stored(self, objs: list[dict[str, Any]], single: bool = False) -> list[dict[str, Any]]:
        out = await crdconversion.convert(self.hook, objs, self.r.api_version, single=single)
        return [crdvalidation.for_read(o, self.view.schema) for o in out]


def _unchanged(obj: dict[str, Any]) -> dict[str, Any]:
    return obj


def _ok_json(obj: dict[str, Any]) -> Response:
    return Response(200, dumps(obj))
