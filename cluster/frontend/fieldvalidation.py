"""``fieldValidation``: what a create, update or patch does with unknown, duplicate and mistyped fields.

Owns the apiserver's answer to a request body field its schema does not know, a JSON key given
twice and a value of the wrong type: the ``fieldValidation``
query value (``parse_mode``), the object to store (unknown fields dropped, as upstream's decode
drops them), the ``Warning`` texts under Warn, and the errors under Strict or for a type mismatch,
with upstream's codes and words per verb. Built-in kinds are checked against
``cluster/api/schema.py`` (``typeddecode.py`` emulates the typed decode), custom resources against
their CRD's structural schema (``crdvalidation.py``), server-side apply bodies by
``applyvalidation.py``. Called by the front end's verbs on every POST, PUT and PATCH.

How a caller uses it, per request (verb: create, update, patch, or apply for server-side apply):

    mode = parse_mode(req.query, verb)        # first: a bad value is a 422 whatever the body
    obj, warnings = check(kind, obj, mode, verb=verb, body=json_body_or_None,
                          patch_type=content_type, patch=parsed_patch)   # the last two for patches
    # store obj (unknown fields dropped); send each warning as `Warning: 299 - "<text>"`

For a patch, ``obj`` is the patched object. ``body`` is the raw request body when it is JSON:
duplicate keys exist only there (every JSON parser keeps the last), and they cost only a byte
count when there are none. YAML and protobuf bodies pass None (their duplicates go unreported).
Only an object of the kind's served version may be passed: the schema is of that version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from ..api import schema as sch
from ..api.errors import BadRequest, Cause, Invalid
from . import applyvalidation, crdvalidation, gotext, typeddecode

IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"
MODES = (IGNORE, WARN, STRICT)
CREATE, UPDATE, PATCH, APPLY = "create", "update", "patch", "apply"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
_OPTIONS = {CREATE: "CreateOptions", UPDATE: "UpdateOptions", PATCH: "PatchOptions", APPLY: "PatchOptions"}
_JSON_PATCH_KEYS = frozenset(("op", "path", "from", "value"))


def body_type(headers: Mapping[str, str], body: bytes) -> tuple[str, bytes | None]:
    """A request's media type and, when it is JSON (no Content-Type counts as JSON), its body
    for ``check``'s duplicate-key scan (None for YAML and protobuf)."""
    ctype = headers.get("content-type", "").split(";")[0].strip()
    return ctype, body if ctype in ("", "application/json") or ctype.endswith("+json") else None


def parse_mode(query: Mapping[str, str], verb: str = CREATE) -> str:
    """The request's ``fieldValidation``: absent or empty means Warn; anything but the three
    values is upstream's 422 on the verb's options kind."""
    value = query.get("fieldValidation") or WARN
    if value in MODES:
        return value
    detail = f'Unsupported value: {json.dumps(value)}: supported values: "", "Ignore", "Strict", "Warn"'
    raise Invalid(
        f'{_OPTIONS.get(verb, "CreateOptions")}.meta.k8s.io "" is invalid: fieldValidation: {detail}',
        (Cause("FieldValueNotSupported", detail, "fieldValidation"),),
    )


class _Request(NamedTuple):
    """What the answers depend on: the kind, the object, the mode and how it came."""

    kind: str
    obj: dict[str, Any]
    mode: str
    verb: str
    patch_type: str
    patch: Any


def check(
    kind: str,
    obj: dict[str, Any],
    mode: str,
    *,
    verb: str = CREATE,
    body: bytes | None = None,
    patch_type: str = MERGE_PATCH,
    patch: Any = None,
    crd_schema: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The object to store and the warnings to send, or the error upstream answers with.

    ``obj``: the object as sent (create, update) or as patched (patch, apply); it is not changed.
    ``body``: the raw JSON body when there is one (the object, or the patch document), for its
    duplicate keys. ``patch_type``: a patch's content type; ``patch``: the parsed patch document
    (a strategic merge patch's error shows it; a JSON patch's op keys are checked). ``crd_schema``:
    a custom resource's ``openAPIV3Schema`` for its version. Raises BadRequest (400: create or
    update decode errors, Strict), Invalid (422: patches under Strict or with a mistyped value,
    custom resources failing their schema) or BadRequest (400: server-side apply with an
    undeclared or mistyped field, whatever the mode)."""
    if mode not in MODES:
        raise ValueError(f"fieldValidation mode {mode!r}")
    req = _Request(kind, obj, mode, verb, patch_type, patch)
    t = sch.kind_type(kind)
    doc_errors = _document_errors(req, body, t is not None)
    if t is None:
        return _custom(req, crd_schema, doc_errors)
    if verb == APPLY:
        applyvalidation.check(obj, t)  # undeclared or mistyped fields fail in every mode
    if not doc_errors and typeddecode.clean(obj, t):
        return obj, []
    d = typeddecode.diagnose(obj, t)
    if d.error is not None:
        raise _failure(req, d.error)
    unknown = [f"unknown field {gotext.quote(p)}" for p in d.unknown]
    return d.obj, _by_mode(req, _ordered(req, doc_errors, unknown))


def _ordered(req: _Request, doc_errors: list[str], unknown: list[str]) -> list[str]:
    # A patch document's own problems come first (found before the patched object is decoded);
    # a body's duplicates come with its unknown fields (here after them: the order met is lost).
    return doc_errors + unknown if req.verb in (PATCH, APPLY) else unknown + doc_errors


def _document_errors(req: _Request, body: bytes | None, typed: bool) -> list[str]:
    """Strict errors about the request document itself: its duplicate keys, a JSON patch's unknown op keys."""
    if req.mode == IGNORE or not (body or req.verb == PATCH):
        return []
    if req.verb in (CREATE, UPDATE):
        return duplicates(body, req.kind if typed else "")
    errs = duplicates(body) if req.verb == PATCH else []
    if req.verb == PATCH and req.patch_type == JSON_PATCH and isinstance(req.patch, list):
        unknown = [
            f"unknown field {gotext.quote(f'[{i}].{k}')}"
            for i, op in enumerate(req.patch)
            if isinstance(op, dict)
            for k in op
            if k not in _JSON_PATCH_KEYS
        ]
        errs = [f"json patch {e}" for e in unknown + errs]
    return errs


def _by_mode(req: _Request, strict: list[str]) -> list[str]:
    """Strict errors as the mode wants them: dropped (Ignore), warnings (Warn) or the failure (Strict)."""
    strict = list(dict.fromkeys(strict))  # each text once
    if not strict or req.mode == IGNORE:
        return []
    if req.mode == WARN:
        return strict
    raise _failure(req, "strict decoding error: " + ", ".join(strict))


def _failure(req: _Request, error: str) -> Exception:
    """A decode failure as the verb answers it: 400 for a create or update, 422 for a patch."""
    obj = req.obj
    if req.verb != PATCH:
        body_kind = str(obj.get("kind") or req.kind)
        version = str(obj.get("apiVersion") or "").rpartition("/")[2]
        return BadRequest(f"{body_kind} in version {gotext.quote(version)} cannot be handled as a {req.kind}: {error}")
    shown = gotext.value(req.patch) if req.patch_type == STRATEGIC_PATCH else gotext.marshal(obj)
    detail = f"Invalid value: {gotext.quote(shown)}: {error}"
    return Invalid(f' "" is invalid: patch: {detail}', (Cause("FieldValueInvalid", detail, "patch"),))


def _custom(
    req: _Request, crd_schema: Mapping[str, Any] | None, doc_errors: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """A custom resource: pruned by its structural schema, then checked against it (422)."""
    obj = req.obj
    pruned, unknown = crdvalidation.prune(obj, crd_schema)
    if req.verb == APPLY and unknown:
        raise applyvalidation.failure(obj, [f".{p}: field not declared in schema" for p in unknown])
    warnings = _by_mode(req, _ordered(req, doc_errors, [f"unknown field {gotext.quote(p)}" for p in unknown]))
    causes = crdvalidation.validate(pruned, crd_schema)
    if causes:
        group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        name = (obj.get("metadata") or {}).get("name") or ""
        msgs = [f"{c.field}: {c.message}" for c in causes]
        detail = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
        raise Invalid(f"{req.kind}.{group} {json.dumps(name)} is invalid: {detail}", tuple(causes))
    return pruned, warnings


# ---- the Warning header ------------------------------------------------------------------
_WARNINGS_MAX_RUNES = 4096  # per response, then every warning is cut ...
_WARNING_MAX_RUNES = 256  # ... to this many runes


def warning_headers(texts: list[str]) -> list[str]:
    """The ``Warning`` header values for a response's warnings, as upstream's recorder writes
    them: ``299 - "<text>"`` with backslashes and quotes escaped, each text once. When the texts
    pass 4096 runes in all, the ones so far are written again cut to 256 runes each, and later
    ones (cut too) only until 4096 runes are written."""
    recorded: list[str] = []
    out: list[str] = []
    written, truncating = 0, False
    for text in dict.fromkeys(texts):
        if not text or (truncating and written >= _WARNINGS_MAX_RUNES):
            continue
        recorded.append(text)
        if truncating:
            text = text[:_WARNING_MAX_RUNES]
        if truncating or written + len(text) <= _WARNINGS_MAX_RUNES:
            out.append(text)
            written += len(text)
            continue
        truncating = True
        out = [t[:_WARNING_MAX_RUNES] for t in recorded]
        written = sum(len(t) for t in out)
    return ['299 - "' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in out]


# ---- duplicate keys ----------------------------------------------------------------------
_SPACED_KEY = re.compile(rb'"\s+:')


class _Object(dict[str, Any]):
    """A parsed JSON object that remembers which of its keys came more than once."""

    dups: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    d = _Object(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        again: list[str] = []
        for k, _ in pairs:
            if k in seen:
                again.append(k)
            seen.add(k)
        d.dups = tuple(again)
    return d


def _keys(v: Any) -> int:
    n = 0
    if type(v) is dict:
        n = len(v)
        for x in v.values():
            if type(x) is dict or type(x) is list:
                n += _keys(x)
    elif type(v) is list:
        for x in v:
            if type(x) is dict or type(x) is list:
                n += _keys(x)
    return n


def _written_keys(body: bytes) -> int:
    """How many keys the body writes, or -1 when counting bytes cannot tell. A key ends ``":``;
    inside a string a quote is escaped, so ``\\":`` there is text, not a key (a key ending in a
    backslash, ``\\\\":``, and a blank before the colon make the count unsure)."""
    if _SPACED_KEY.search(body) or b'\\\\":' in body:
        return -1
    return body.count(b'":') - body.count(b'\\":')


def duplicates(body: bytes | None, kind: str = "") -> list[str]:
    """``duplicate field "<path>"`` for each key a JSON body gives twice within one object.

    With ``kind`` (a built-in kind's body) only what the typed decode looks at counts: a known
    field of a struct or a key of a map, not anything inside an unknown field or a free-form
    value. Without it every object counts (a custom resource, a patch document). Cheap when there
    are none (a few µs): when the body writes as many keys as its parsed form has, no key came twice
    (``_written_keys``); only otherwise is it parsed again, slowly, to find where."""
    if not body:
        return []
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return []
    if _keys(parsed) == _written_keys(body):
        return []
    tree = json.loads(body, object_pairs_hook=_pairs)
    out: list[str] = []
    _dup_paths(tree, sch.kind_type(kind) if kind else None, "", out, bool(kind))
    return [f"duplicate field {gotext.quote(p)}" for p in dict.fromkeys(out)]


def _dup_paths(v: Any, t: sch.Type | None, path: str, out: list[str], typed: bool) -> None:
    """Collect duplicate keys under ``v``; ``typed``: only where the typed decode looks (``t``)."""
    if isinstance(v, dict):
        fields: dict[str, sch.Type] | None = None
        if typed:
            if t is None or t.code not in (sch.STRUCT, sch.MAP):
                return  # an unknown field, or a value decoded as a whole (RawExtension, ...)
            fields = t.struct.fields if t.struct is not None else None
        for k in getattr(v, "dups", ()):
            if fields is None or k in fields:  # a struct's unknown key is an unknown field, not a duplicate
                out.append(f"{path}.{k}" if path else k)
        for k, x in v.items():
            sub = (fields.get(k) if fields is not None else t.elem) if typed and t is not None else None
            _dup_paths(x, sub, f"{path}.{k}" if path else k, out, typed)
    elif isinstance(v, list):
        if typed and (t is None or t.code != sch.LIST):
            return
        for i, x in enumerate(v):
            _dup_paths(x, t.elem if typed and t is not None else None, f"{path}[{i}]", out, typed)
