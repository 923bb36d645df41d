"""What upstream's typed JSON decode makes of an object of a built-in kind, without Go.

Owns the emulation of ``sigs.k8s.io/json``'s strict decode into a Go struct (the apiserver's
create, update and patch paths): which fields it does not know (``unknown field "spec.replcas"``,
dropped from what is stored), and the first type error it would answer with (``json: cannot
unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32``, a bad base64
value, a bad quantity or time). The schema is ``cluster/api/schema.py``. Called by
``fieldvalidation.py`` on every create, update and patch.

Two walks: ``clean`` answers "nothing to report or change" fast (the usual request: about
10 µs for a pod), and only when it says no does ``diagnose`` walk again to find the paths and
the message, building the object to store without the unknown fields.

How Go decides, and so how the walks do (``encoding/json`` forked by Kubernetes):
- a type mismatch is saved and decoding goes on; the first one saved is the answer;
- a type with its own ``UnmarshalJSON`` (quantities, int-or-string, times, the CRD schema unions)
  returns its error at once and that error wins over a saved one;
- the message names the innermost struct and the chain of JSON field names from the root,
  without list indices or map keys; ``null`` is accepted everywhere;
- unknown-field paths carry list indices and map keys (``spec.containers[0].imagePullPolcy``),
  and nothing inside an unknown field is looked at.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from ..api import schema as sch
from . import gotext

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_MAX_STRICT_ERRORS = 100  # upstream stops collecting there
_TIME = re.compile(
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-4]):([0-5]\d|60))$"
)
_MICRO = re.compile(
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{6}(Z|[+-]([01]\d|2[0-4]):([0-5]\d|60))$"
)
_GOOD_QUANTITIES: dict[str, bool] = {}  # quantity strings seen, and whether they parse


# ---- the fast walk -----------------------------------------------------------------------
def clean(obj: dict[str, Any], t: sch.Type) -> bool:
    """True when decoding ``obj`` would report nothing and change nothing."""
    assert t.struct is not None
    return _clean_struct(obj, t.struct)


def _clean_struct(d: dict[str, Any], s: sch.Struct) -> bool:
    fields = s.fields
    for k, v in d.items():
        t = fields.get(k)
        if t is None:
            return False
        if v is None:
            continue
        code = t.code
        if code == sch.STRING:
            if type(v) is not str:
                return False
        elif code == sch.STRUCT:
            if type(v) is not dict or not _clean_struct(v, t.struct):  # type: ignore[arg-type]
                return False
        elif not _clean_value(v, t):
            return False
    return True


def _clean_value(v: Any, t: sch.Type) -> bool:
    code = t.code
    if code == sch.STRUCT:
        return type(v) is dict and _clean_struct(v, t.struct)  # type: ignore[arg-type]
    if code == sch.LIST:
        if type(v) is not list:
            return False
        elem = t.elem
        assert elem is not None
        if elem.code == sch.STRING:
            return all(type(x) is str for x in v)
        return all(x is None or _clean_value(x, elem) for x in v)
    if code == sch.MAP:
        if type(v) is not dict:
            return False
        elem = t.elem
        assert elem is not None
        if elem.code == sch.STRING:
            return all(type(x) is str for x in v.values())
        return all(x is None or _clean_value(x, elem) for x in v.values())
    return _SCALAR_OK[code](v)


def _int_in(lo_hi: tuple[int, int]) -> Any:
    lo, hi = lo_hi
    return lambda v: type(v) is int and lo <= v <= hi


def _quantity_ok(v: Any) -> bool:
    if type(v) is str:
        ok = _GOOD_QUANTITIES.get(v)
        if ok is None:
            ok = gotext.quantity_error(v.strip()) is None
            if len(_GOOD_QUANTITIES) < 10_000:
                _GOOD_QUANTITIES[v] = ok
        return ok
    return type(v) is int or type(v) is float


def _time_ok(pattern: re.Pattern[str]) -> Any:
    def ok(v: Any) -> bool:
        if type(v) is not str:
            return False
        m = pattern.match(v)
        return m is not None and (int(m.group(2)) <= 28 or gotext.time_error(v[:10] + "T00:00:00Z") is None)

    return ok


_SCALAR_OK: dict[int, Any] = {
    sch.STRING: lambda v: type(v) is str,
    sch.INT32: _int_in(_INT32),
    sch.INT64: _int_in(_INT64),
    sch.BOOL: lambda v: type(v) is bool,
    sch.FLOAT64: lambda v: type(v) is int or type(v) is float,
    sch.BYTES: lambda v: type(v) is str and gotext.BASE64_PLAIN.match(v) is not None,
    sch.QUANTITY: _quantity_ok,
    sch.INT_OR_STRING: lambda v: type(v) is str or (type(v) is int and _INT32[0] <= v <= _INT32[1]),
    sch.TIME: _time_ok(_TIME),
    sch.MICRO_TIME: _time_ok(_MICRO),
    sch.ANY: lambda v: True,
    sch.SCHEMA_OR_ARRAY: lambda v: _clean_schema(v) or (type(v) is list and all(map(_clean_schema, v))),
    sch.SCHEMA_OR_BOOL: lambda v: type(v) is bool or _clean_schema(v),
    sch.SCHEMA_OR_STRINGS: lambda v: _clean_schema(v) or (type(v) is list and all(type(x) is str for x in v)),
}


def _clean_schema(v: Any) -> bool:
    """A CRD schema union's object form: a JSONSchemaProps with nothing to drop or report."""
    return type(v) is dict and _clean_struct(v, sch.struct("apiextensions.v1.JSONSchemaProps"))


# ---- the careful walk --------------------------------------------------------------------
class Decoded:
    """What the decode found: ``obj`` to store (unknown fields dropped), ``unknown`` paths in
    document order, and ``error``, the decode's failure text (None when it decodes)."""

    __slots__ = ("obj", "unknown", "error")

    def __init__(self, obj: Any, unknown: list[str], error: str | None) -> None:
        self.obj, self.unknown, self.error = obj, unknown, error


class _Stop(Exception):
    """A self-decoding type failed: Go's decode returns at once."""


_DROP = object()  # a value Go's decode leaves out (a CRD schema union holding neither form)


def json_type(v: Any) -> str:
    """How encoding/json names the JSON value it could not store."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "string"  # str, and a YAML timestamp (JSON has only its text)


def _number(v: Any) -> str:
    return f"number {v!r}" if isinstance(v, float) else f"number {v}"


def type_error(value: str, go: str, struct: str, path: str) -> str:
    """encoding/json's UnmarshalTypeError text."""
    if struct or path:
        return f"json: cannot unmarshal {value} into Go struct field {struct}.{path} of type {go}"
    return f"json: cannot unmarshal {value} into Go value of type {go}"


class _Walk:
    """One careful walk: the unknown paths met, the first failure Go saves and goes on after,
    and the first one it returns with (which ends the walk, as it ends Go's decode)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.seen: set[str] = set()
        self.saved: str | None = None
        self.hard: str | None = None
        self.changed = False  # something is dropped or rewritten: the stored object differs

    def save(self, message: str, nested: bool) -> None:
        if nested:  # inside a nested decode every failure comes back as its UnmarshalJSON's error
            self.hard = message
            raise _Stop
        if self.saved is None:
            self.saved = message

    def fail(self, message: str) -> None:
        self.hard = message
        raise _Stop

    def unknown_field(self, path: str, nested: bool) -> None:
        if nested or path in self.seen or len(self.unknown) >= _MAX_STRICT_ERRORS:
            return  # a nested decode is not strict; repeats are reported once
        self.seen.add(path)
        self.unknown.append(path)

    def struct(self, d: Any, s: sch.Struct, go: str, sp: str, ctx: tuple[str, str], nested: bool) -> Any:
        if not isinstance(d, dict):
            self.save(type_error(json_type(d), go, *ctx), nested)
            return d
        out: dict[str, Any] = {}
        for k, v in d.items():
            p = f"{sp}.{k}" if sp else k
            t = s.fields.get(k)
            if t is None:
                self.unknown_field(p, nested)
                self.changed = True
                continue
            inner = ctx if nested else (s.name, f"{ctx[1]}.{k}" if ctx[1] else k)
            nv = self.value(v, t, p, inner, nested)
            if nv is not _DROP:
                out[k] = nv
            else:
                self.changed = True
        return out

    def value(self, v: Any, t: sch.Type, sp: str, ctx: tuple[str, str], nested: bool) -> Any:
        if v is None:
            return None
        code = t.code
        if code == sch.STRUCT:
            assert t.struct is not None
            return self.struct(v, t.struct, t.go, sp, ctx, nested)
        if code == sch.LIST:
            if not isinstance(v, list):
                self.save(type_error(json_type(v), t.go, *ctx), nested)
                return v
            assert t.elem is not None
            return [self.value(x, t.elem, f"{sp}[{i}]", ctx, nested) for i, x in enumerate(v)]
        if code == sch.MAP:
            if not isinstance(v, dict):
                self.save(type_error(json_type(v), t.go, *ctx), nested)
                return v
            assert t.elem is not None
            return {k: self.value(x, t.elem, f"{sp}.{k}", ctx, nested) for k, x in v.items()}
        return self.scalar(v, t, ctx, nested)

    def scalar(self, v: Any, t: sch.Type, ctx: tuple[str, str], nested: bool) -> Any:
        code = t.code
        if code in (sch.INT32, sch.INT64) or (code == sch.INT_OR_STRING and not isinstance(v, str)):
            self.integer(v, code, ctx, nested)
        elif code == sch.BYTES:
            return self.bytes(v, t, ctx, nested)
        elif code == sch.QUANTITY:
            text = v if isinstance(v, str) else gotext.marshal(v)  # Quantity.UnmarshalJSON parses the raw text
            err = gotext.QUANTITY_FORMAT if isinstance(v, (bool, list, dict)) else gotext.quantity_error(text.strip())
            if err is not None:
                self.fail(err)
        elif code in (sch.TIME, sch.MICRO_TIME):
            self.time(v, code, ctx)
        elif code >= sch.SCHEMA_OR_ARRAY:
            return self.schema_union(v, code, ctx)
        elif not (_SCALAR_OK[code](v) or (code == sch.STRING and hasattr(v, "isoformat"))):
            self.save(type_error(json_type(v), t.go, *ctx), nested)
        return v

    def integer(self, v: Any, code: int, ctx: tuple[str, str], nested: bool) -> None:
        lo, hi = _INT64 if code == sch.INT64 else _INT32
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            bad = json_type(v)
        elif isinstance(v, float) or not lo <= v <= hi:
            bad = _number(v)  # Go parses the literal as an integer of the field's size
        else:
            return
        message = type_error(bad, "int64" if code == sch.INT64 else "int32", *ctx)
        if code == sch.INT_OR_STRING:
            self.fail(message)  # IntOrString.UnmarshalJSON returns its inner decode's error
        self.save(message, nested)

    def time(self, v: Any, code: int, ctx: tuple[str, str]) -> None:
        """metav1.Time and MicroTime decode a JSON string, then parse it as RFC 3339."""
        if isinstance(v, str):
            err = gotext.time_error(v, gotext.RFC3339 if code == sch.TIME else gotext.RFC3339_MICRO)
            if err is not None:
                self.fail(err)
        elif not hasattr(v, "isoformat"):  # a YAML timestamp is its text
            self.fail(type_error(json_type(v), "string", *ctx))

    def bytes(self, v: Any, t: sch.Type, ctx: tuple[str, str], nested: bool) -> Any:
        if isinstance(v, str):
            at = gotext.base64_error(v)
            if at is not None:
                self.save(f"illegal base64 data at input byte {at}", nested)
            return v
        if isinstance(v, list):  # Go fills a []byte from a list of numbers, and writes it back as base64
            for x in v:
                if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 255:
                    bad = _number(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else json_type(x)
                    self.save(type_error(bad, "uint8", *ctx), nested)
                    return v
            self.changed = True
            return base64.b64encode(bytes(v)).decode()
        self.save(type_error(json_type(v), t.go, *ctx), nested)
        return v

    def schema_union(self, v: Any, code: int, ctx: tuple[str, str]) -> Any:
        """The CRD schema unions decode their inner value with a plain (not strict) decode:
        unknown fields there are dropped unreported, failures name the union's field."""
        props = sch.struct("apiextensions.v1.JSONSchemaProps")
        if isinstance(v, dict):
            return self.struct(v, props, "v1.JSONSchemaProps", "", ctx, True)
        if code == sch.SCHEMA_OR_BOOL:
            if not isinstance(v, bool):
                self.fail("boolean or JSON schema expected")
            return v
        if isinstance(v, list):
            if code == sch.SCHEMA_OR_ARRAY:
                return [None if x is None else self.struct(x, props, "v1.JSONSchemaProps", "", ctx, True) for x in v]
            for x in v:
                if x is not None and not isinstance(x, str):
                    self.fail(type_error(json_type(x), "string", *ctx))
            return v
        return _DROP  # neither an object nor a list: the union stays empty


def decode_field(v: Any, t: sch.Type, path: str, struct: str) -> Decoded:
    """The careful walk over one field of ``struct`` (its Go name) at ``path``: what a typed
    decode of just that field keeps, leaves unknown, and fails with."""
    w = _Walk()
    out: Any = v
    try:
        out = w.value(v, t, path, (struct, path), False)
    except _Stop:
        pass
    return Decoded(out, w.unknown, w.hard or w.saved)


def diagnose(obj: dict[str, Any], t: sch.Type) -> Decoded:
    """The careful walk: the object to store, the unknown fields and the decode's failure."""
    assert t.struct is not None
    w = _Walk()
    out: Any = obj
    try:
        out = w.struct(obj, t.struct, t.go, "", ("", ""), False)
    except _Stop:
        pass
    return Decoded(out if w.changed else obj, w.unknown, w.hard or w.saved)
