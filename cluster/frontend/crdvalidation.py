"""Field validation of custom resources: pruning and defaulting by the CRD's structural schema,
and its type checks.

Owns what the apiserver's custom-resource handler does with a decoded object before storing it
(upstream's structural-schema pruning): drop every field its version's ``openAPIV3Schema`` does not
declare (except under ``x-kubernetes-preserve-unknown-fields``, and the root's or an embedded
resource's ``apiVersion``/``kind``/``metadata``), drop unknown or malformed ``metadata`` fields, drop
``null`` where the schema neither allows it (``nullable``) nor defaults it, and report the pruned
paths so Warn and Strict can name them; then apply the schema's ``default``s (upstream's structural
defaulting: a missing field, or a ``null`` one that is not nullable, gets a copy of its default,
parents before children, so a defaulted object gets its own fields' defaults too); then check
types, enums and required fields, each failure a ``Cause`` for upstream's 422
(``spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:
"string"``). Called by ``fieldvalidation.py`` (writes) and ``customresources.py`` (reads: what
storage hands back is pruned and defaulted by the storage version's schema, as upstream's
storage decoder does, so a default added to a CRD shows on objects stored before it).

Not done here: formats, bounds, patterns and CEL rules.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from ..api import codec
from ..api import schema as sch
from ..api.errors import Cause
from . import typeddecode

_META = ("apiVersion", "kind", "metadata")
Schema = Mapping[str, Any]


def prune(obj: dict[str, Any], schema: Schema | None) -> tuple[dict[str, Any], list[str]]:
    """The object without what the schema does not declare, its defaults applied, and the
    pruned paths (sorted, as upstream sorts them; unknown ``metadata`` fields first). ``obj``
    is not changed."""
    meta, meta_unknown = _metadata(obj.get("metadata"))
    root = dict(schema or {"x-kubernetes-preserve-unknown-fields": True})
    root["x-kubernetes-embedded-resource"] = True
    pruned: list[str] = []
    out = _prune(obj, root, "", pruned)
    if meta is not None:
        out["metadata"] = meta
    if schema is not None:
        out = codec.clone(out)  # kept values may be shared with ``obj``: defaults go into a copy
        default(out, schema)
    return out, meta_unknown + sorted(pruned)


def default(x: Any, s: Schema | None) -> None:
    """Apply the schema's defaults to ``x`` in place (upstream's structural ``Default``): a
    property that is missing, or ``null`` without ``nullable``, gets a copy of its default;
    then every property, additional property and list item is defaulted in turn. A
    ``default: null`` is no default."""
    if not s:
        return
    if isinstance(x, dict):
        props: Schema = s.get("properties") or {}
        for k, prop in props.items():
            if isinstance(prop, Mapping) and prop.get("default") is not None and _unset(x, k, prop):
                x[k] = copy.deepcopy(prop["default"])
        extra = s.get("additionalProperties")
        for k, v in x.items():
            sub = props.get(k)
            if sub is None and isinstance(extra, Mapping):
                if v is None and not extra.get("nullable") and extra.get("default") is not None:
                    x[k] = copy.deepcopy(extra["default"])
                sub = extra
            if isinstance(sub, Mapping):
                default(x[k], sub)
    elif isinstance(x, list):
        items = s.get("items")
        if isinstance(items, Mapping):
            for i, v in enumerate(x):
                if v is None and not items.get("nullable") and items.get("default") is not None:
                    x[i] = copy.deepcopy(items["default"])
                default(x[i], items)


def _unset(x: dict[str, Any], k: str, prop: Schema) -> bool:
    return k not in x or (x[k] is None and not prop.get("nullable"))


def for_read(obj: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    """A stored custom resource as upstream's storage decoder hands it out: pruned by its
    storage version's schema and defaulted (nothing reported: storage is not a client)."""
    if schema is None:
        return obj
    return prune(obj, schema)[0]


def _metadata(meta: Any) -> tuple[Any, list[str]]:
    """ObjectMeta decoded as upstream's custom-resource path does: unknown fields reported and
    dropped, fields of the wrong type dropped without a word."""
    if not isinstance(meta, dict):
        return meta, []
    fields = sch.struct("meta.v1.ObjectMeta").fields
    out: dict[str, Any] = {}
    unknown: list[str] = []
    for k, v in meta.items():
        t = fields.get(k)
        if t is None:
            unknown.append(f"metadata.{k}")
            continue
        d = typeddecode.decode_field(v, t, f"metadata.{k}", "ObjectMeta")
        if d.error is None:
            out[k] = d.obj
            unknown.extend(d.unknown)
    return out, unknown


def _prune(x: Any, s: Schema | None, path: str, pruned: list[str]) -> Any:
    if s is not None and s.get("x-kubernetes-preserve-unknown-fields"):
        return _keep(x, s, path, pruned)
    schema: Schema = s or {}
    if isinstance(x, dict):
        out: dict[str, Any] = {}
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for k, v in x.items():
            p = f"{path}.{k}" if path else k
            sub = props.get(k, extra if isinstance(extra, Mapping) else None)
            if schema.get("x-kubernetes-embedded-resource") and k in _META:
                out[k] = v
            elif sub is not None:
                if v is None and not (sub.get("nullable") or "default" in sub):
                    continue  # a null the schema neither allows nor defaults is dropped
                out[k] = _prune(v, sub, p, pruned)
            elif extra is True:
                out[k] = v
            else:
                pruned.append(p)
        return out
    if isinstance(x, list):
        items = schema.get("items")
        sub_items = items if isinstance(items, Mapping) else None
        return [_prune(v, sub_items, f"{path}[{i}]", pruned) for i, v in enumerate(x)]
    return x


def _keep(x: Any, s: Schema, path: str, pruned: list[str]) -> Any:
    """Under x-kubernetes-preserve-unknown-fields: unknown fields stay, known ones are pruned inside."""
    if isinstance(x, dict):
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        out: dict[str, Any] = {}
        for k, v in x.items():
            p = f"{path}.{k}" if path else k
            if s.get("x-kubernetes-embedded-resource") and k in _META:
                out[k] = v
            elif k in props:
                out[k] = _prune(v, props[k], p, pruned)
            elif isinstance(extra, Mapping):
                out[k] = _prune(v, extra, p, pruned)
            else:
                out[k] = v
        return out
    if isinstance(x, list):
        items = s.get("items")
        if isinstance(items, Mapping):
            return [_keep(v, items, f"{path}[{i}]", pruned) for i, v in enumerate(x)]
    return x


# ---- the schema checks -------------------------------------------------------------------
def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "string"


def _fits(v: Any, want: str) -> bool:
    got = _json_type(v)
    return (
        got == want
        or (want == "number" and got == "integer")
        or (want == "integer" and got == "number" and float(v).is_integer())
    )


def _shown(v: Any) -> str:
    """A value as upstream's field errors print it: strings quoted, numbers and booleans bare."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v, separators=(",", ":"))


def validate(obj: Any, schema: Schema | None) -> list[Cause]:
    """The schema's type, enum and required checks over a pruned object."""
    causes: list[Cause] = []
    if schema is not None and isinstance(obj, dict):
        props = schema.get("properties") or {}
        for k, v in obj.items():
            if k not in _META and k in props:
                _check(v, props[k], k, causes)
        _required(obj, schema, "", causes)
    return sorted(causes, key=lambda c: c.field)


def _type_cause(v: Any, want: str, path: str) -> Cause:
    got = _json_type(v)
    detail = f"{path} in body must be of type {want}: {json.dumps(got)}"
    return Cause("FieldValueTypeInvalid", f"Invalid value: {json.dumps(got)}: {detail}", path)


def _check(v: Any, s: Schema, path: str, causes: list[Cause]) -> None:
    if v is None:
        if not s.get("nullable") and (s.get("type") or s.get("x-kubernetes-int-or-string")):
            causes.append(_type_cause(v, str(s.get("type") or "integer,string"), path))
        return
    if s.get("x-kubernetes-int-or-string"):
        if not (_fits(v, "integer") or isinstance(v, str)):
            causes.append(_type_cause(v, "integer,string", path))
            return
    elif s.get("type") and not _fits(v, str(s["type"])):
        causes.append(_type_cause(v, str(s["type"]), path))
        return
    enum = s.get("enum")
    if enum is not None and v not in enum:
        supported = ", ".join(json.dumps(e) if isinstance(e, str) else _shown(e) for e in enum)
        causes.append(
            Cause("FieldValueNotSupported", f"Unsupported value: {_shown(v)}: supported values: {supported}", path)
        )
    if isinstance(v, dict):
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for k, x in v.items():
            sub = props.get(k) or (extra if isinstance(extra, Mapping) else None)
            if sub is not None and not (s.get("x-kubernetes-embedded-resource") and k in _META):
                _check(x, sub, f"{path}.{k}", causes)
        _required(v, s, path, causes)
    elif isinstance(v, list) and isinstance(s.get("items"), Mapping):
        for i, x in enumerate(v):
            _check(x, s["items"], f"{path}[{i}]", causes)


def _required(v: dict[str, Any], s: Schema, path: str, causes: list[Cause]) -> None:
    for name in s.get("required") or ():
        if name not in v:
            causes.append(Cause("FieldValueRequired", "Required value", f"{path}.{name}" if path else name))
