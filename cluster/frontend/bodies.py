"""The body of a request to a kind served by a schema of its own version: a view or a review.

Owns reading such a body (``body_object``: the kind and apiVersion the URL names), its
``fieldValidation`` against the schema table's entry for that version (``checked``; the
table's ``VERSIONED`` keys, ``cluster/api/schemagen.py``) and the ``Invalid`` a view's own
rules answer with (``refused``). Shared by ``views.py`` and ``reviews.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import BadRequest, Cause
from ..api.kinds import Resource, schema_key
from . import fieldvalidation
from .backend import ObjectInvalid
from .wire import Request

if TYPE_CHECKING:
    from .handler import Handler


def checked(
    r: Resource, obj: dict[str, Any], req: Request, verb: str, patch: Any = None
) -> tuple[dict[str, Any], list[str]]:
    """``fieldvalidation.check`` of an object of the view or review ``r``, by its own schema."""
    mode = fieldvalidation.parse_mode(req.query, verb)
    ctype, json_body = fieldvalidation.body_type(req.headers, req.body)
    key = schema_key(r)
    try:
        return fieldvalidation.check(
            key,
            obj,
            mode,
            verb=verb,
            body=json_body,
            patch_type=ctype,
            patch=patch,
        )
    except BadRequest as e:  # the decoder names the kind, not the table's key
        raise BadRequest(e.message.replace(f"handled as a {key}:", f"handled as a {r.kind}:"), e.causes) from None


def refused(r: Resource, name: str, causes: list[Cause]) -> ObjectInvalid:
    """A view's own refusal, named as upstream names an invalid object of that group."""
    texts = [f"{c.field}: {c.message}" for c in causes]
    detail = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return ObjectInvalid.about(r, name, detail, tuple(causes))


def body_object(h: Handler, req: Request, r: Resource) -> dict[str, Any]:
    """The request body as an object of ``r`` (kind and apiVersion defaulted from the URL)."""
    obj = h.body(req)
    if not isinstance(obj, dict):
        raise BadRequest(f"the request body must be a {r.kind} object")
    obj.setdefault("kind", r.kind)
    obj.setdefault("apiVersion", r.api_version)
    if obj["kind"] != r.kind:
        raise BadRequest(f"the body is a {obj['kind']}, not a {r.kind} (the URL names {r.plural})")
    if obj["apiVersion"] != r.api_version:
        raise BadRequest(
            f"the API version in the data ({obj['apiVersion']}) does not match the expected API version ({r.api_version})"
        )
    if not isinstance(obj.setdefault("metadata", {}), dict):
        raise BadRequest("metadata: must be a map")
    return obj
