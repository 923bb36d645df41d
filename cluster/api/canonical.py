"""Quantities and times as upstream stores them: every ``resource.Quantity`` field in its
canonical string, every ``metav1.Time`` and ``MicroTime`` in UTC as its encoder writes them.

Owns ``canonical_quantity`` (what upstream's ``Quantity.String()`` gives for a parsed value:
``0.5`` and ``"0.5"`` become ``"500m"``, ``2000`` becomes ``"2k"``, ``"1.5Gi"`` becomes
``"1536Mi"``) and ``canonicalize``, which rewrites every quantity field of a built-in object
in place, found through the kind's schema (``schema.py``). The apiserver calls it on every
create and update, after defaulting, so what a client reads back is what upstream would
answer: a number written in a manifest (``cpu: 0.5``) comes back as a string, which typed
clients such as the Python client require.

Upstream's rules, from its quantity formatting: a value parsed with a binary suffix stays
binary when it is a whole number of bytes of at least 1024 (then the largest power of 1024
that divides it names the suffix), else it is written in decimal; a decimal value is an
integer mantissa times a power of ten that is a multiple of three (the largest such power),
with the SI suffix of that power; a value written with an exponent keeps the exponent form
(``e3``). Precision below a nano unit rounds up to one nano unit, as upstream's parser does.

A ``metav1.Time`` is written in UTC to the second (``2026-01-01T10:00:00Z``: an offset is
applied, a fraction dropped); a ``MicroTime`` in UTC with six fraction digits. A string
that is not RFC 3339 is left as it is (validation answers for it).

Two walks give the same result: ``walk`` reads the schema at every step (the plain
reference), and ``canonicalize`` runs each kind's walk written out once from the same
schema as straight-line Python (``_Emitter``), visiting only the fields that can hold a
quantity or a time, so a create pays for a few dict lookups instead of a call and a
dispatch per node. ``tests/unit/test_writepath_equivalence.py`` holds them equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timezone
from fractions import Fraction
from functools import cache
from typing import Any

from . import schema
from .quantity import QuantityError, parse

_SI = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_CACHE: dict[Any, Any] = {}
_STRINGS: dict[str, str] = {}  # the string entries of _CACHE by the string alone: no key tuple


def _format_of(value: str | int | float) -> str:
    if not isinstance(value, str):
        return "exp" if "e" in repr(value).lower() and not isinstance(value, int) else "si"
    s = value.strip()
    if s[-2:] in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"):
        return "bin"
    return "exp" if ("e" in s or "E" in s) else "si"


def _decimal(v: Fraction, exponent_form: bool) -> str:
    sign = "-" if v < 0 else ""
    v = abs(v)
    nano = v * 10**9
    mantissa = math.ceil(nano)  # below a nano unit rounds up
    exp = -9
    while mantissa and mantissa % 10 == 0:
        mantissa //= 10
        exp += 1
    while exp % 3:
        mantissa *= 10
        exp -= 1
    if exponent_form:
        return f"{sign}{mantissa}" + (f"e{exp}" if exp else "")
    while exp > 18:  # past Exa there is no suffix: a longer mantissa
        mantissa *= 1000
        exp -= 3
    return f"{sign}{mantissa}{_SI[exp]}"


def canonical_quantity(value: str | int | float) -> str:
    """Upstream's string for a quantity; raises ``QuantityError`` for a value that is not one."""
    if value.__class__ is str:
        hit = _STRINGS.get(value)
        if hit is not None:
            return hit
    key = (type(value), value)
    hit = _CACHE.get(key)
    if hit is not None:
        return str(hit)
    v = parse(value)
    if v == 0:
        out = "0"
    else:
        fmt = _format_of(value)
        if fmt == "bin" and abs(v) >= 1024 and v.denominator == 1:
            n, power = abs(v.numerator), 0
            while n % 1024 == 0 and power < 6:
                n //= 1024
                power += 1
            out = f"{'-' if v < 0 else ''}{n}{_BIN[power]}"
        else:
            out = _decimal(v, fmt == "exp")
    if len(_CACHE) < 65536:
        _CACHE[key] = out
        if value.__class__ is str:
            _STRINGS[value] = out
    return out


_WRITTEN_LENGTH = {False: 20, True: 27}  # a Time and a MicroTime as upstream writes them, in UTC


def canonical_time(value: str, micro: bool = False) -> str:
    """Upstream's string for an RFC 3339 time (``micro``: a MicroTime); ``value`` itself
    when it is not one."""
    if len(value) == _WRITTEN_LENGTH[micro] and value[-1] == "Z" and value[10] == "T":
        return value  # already as upstream writes it (the common case: no parse)
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return value
    if t.tzinfo is None or len(value) < 20 or value[10] not in "Tt":
        return value  # RFC 3339 needs the time and an offset
    t = t.astimezone(timezone.utc)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


_TIMES = (schema.TIME, schema.MICRO_TIME)


@cache
def _carries(struct: schema.Struct) -> tuple[tuple[str, schema.Type], ...]:
    """The fields of ``struct`` under which a quantity or a time can be found, with their
    types (pruning the walk: a handful per struct, looked up in the object one by one)."""
    return tuple((name, t) for name, t in struct.fields.items() if _type_carries(t, set()))


def _type_carries(t: schema.Type, seen: set[str]) -> bool:
    if t.code == schema.QUANTITY or t.code in _TIMES:
        return True
    if t.code in (schema.LIST, schema.MAP) and t.elem is not None:
        return _type_carries(t.elem, seen)
    if t.code == schema.STRUCT and t.struct is not None:
        key = f"{t.struct.package}.{t.struct.name}"
        if key in seen:
            return False
        seen.add(key)
        return any(_type_carries(f, seen) for f in t.struct.fields.values())
    return False


def _walk(t: schema.Type, value: Any) -> Any:
    """``value`` with its quantities and times canonical (containers edited in place)."""
    code = t.code
    if code in _TIMES:
        return canonical_time(value, code == schema.MICRO_TIME) if isinstance(value, str) else value
    if code == schema.QUANTITY:
        return _quantity(value)
    if code == schema.STRUCT and t.struct is not None and isinstance(value, dict):
        for name, ft in _carries(t.struct):
            v = value.get(name)
            if v is not None:
                value[name] = _walk(ft, v)
    elif code == schema.LIST and t.elem is not None and isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = _walk(t.elem, item)
    elif code == schema.MAP and t.elem is not None and isinstance(value, dict):
        for k, item in value.items():
            value[k] = _walk(t.elem, item)
    return value


def _quantity(value: Any) -> Any:
    """A quantity field's value, canonical when it is a quantity (else as it is)."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            return canonical_quantity(value)
        except QuantityError:
            return value  # validation names it; nothing to rewrite
    return value


def walk(kind: str, obj: dict[str, Any]) -> None:
    """``canonicalize`` the plain way, reading the schema at every step (the reference)."""
    t = schema.kind_type(kind)
    if t is not None:
        _walk(t, obj)


def canonicalize(kind: str, obj: dict[str, Any]) -> None:
    """Rewrite every quantity and time field of ``obj`` (a built-in ``kind``) to its canonical string."""
    fix = _PLANS.get(kind, _kind_plan)
    if fix is _kind_plan:  # the kind's first object
        fix = _PLANS[kind] = _kind_plan(kind)
    if fix is not None:
        fix(obj)


# ---- the compiled plan -----------------------------------------------------------------------

Fix = Callable[[Any], Any]  # an object -> the same object, canonical (edited in place)
_INLINE_DEPTH = 10  # levels of nesting one function spells out; deeper structs call their own
_FUNCTIONS: dict[int, Fix | None] = {}  # by id(Struct): the schema's structs live for the process
_PLANS: dict[str, Fix | None] = {}  # by kind, compiled on its first object


def _kind_plan(kind: str) -> Fix | None:
    t = schema.kind_type(kind)
    return _struct_function(t.struct) if t is not None and t.struct is not None else None


def _struct_function(struct: schema.Struct) -> Fix | None:
    """``_walk`` of one struct as one function (None when it has nothing to rewrite)."""
    key = id(struct)
    if key in _FUNCTIONS:
        return _FUNCTIONS[key]
    if not _carries(struct):
        _FUNCTIONS[key] = None
        return None
    # A struct may hold itself (JSONSchemaProps): while it is compiled, a call to it finds
    # the finished function through the table.
    _FUNCTIONS[key] = lambda value: _FUNCTIONS[key](value)  # type: ignore[misc]
    fix = _FUNCTIONS[key] = _Emitter().function(struct)
    return fix


def _rewrites(t: schema.Type) -> bool:
    """Whether ``_walk`` can change anything under a value of type ``t``."""
    if t.code in _TIMES or t.code == schema.QUANTITY:
        return True
    if t.code == schema.STRUCT and t.struct is not None:
        return bool(_carries(t.struct))
    return t.code in (schema.LIST, schema.MAP) and t.elem is not None and _rewrites(t.elem)


class _Emitter:
    """Writes ``_walk`` over one struct as straight-line Python, compiled once (as
    ``dataclasses`` writes its methods): a create then pays for a lookup per field that can
    hold a quantity or a time, not for a call and a dispatch per node of the object."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.scope: dict[str, Any] = {"_hits": _STRINGS, "_quantity": _quantity, "_time": canonical_time}

    def function(self, struct: schema.Struct) -> Fix:
        self.lines.append("def fix(v0):")
        self._struct(struct, "v0", "    ", 0, ())
        self.lines.append("    return v0")
        exec("\n".join(self.lines), self.scope)
        fix: Fix = self.scope["fix"]
        return fix

    def _value(self, t: schema.Type, var: str, slot: str, pad: str, depth: int, path: tuple[int, ...]) -> None:
        """Lines making ``var`` (of type ``t``) canonical; a scalar's new value goes to ``slot``."""
        code, lines = t.code, self.lines
        if code in _TIMES:
            micro = code == schema.MICRO_TIME
            # canonical_time's own first test, spelled out: most times are written as upstream writes them.
            written = f'len({var}) == {_WRITTEN_LENGTH[micro]} and {var}[-1] == "Z" and {var}[10] == "T"'
            lines += [
                f"{pad}if isinstance({var}, str) and not ({written}):",
                f"{pad}    {slot} = _time({var}{', True' if micro else ''})",
            ]
        elif code == schema.QUANTITY:
            lines += [
                f"{pad}q = _hits.get({var}) if {var}.__class__ is str else None",
                f"{pad}{slot} = q if q is not None else _quantity({var})",
            ]
        elif code == schema.STRUCT and t.struct is not None:
            if depth >= _INLINE_DEPTH or id(t.struct) in path:
                name = f"s{len(self.scope)}"
                self.scope[name] = _struct_function(t.struct)
                lines += [f"{pad}if isinstance({var}, dict):", f"{pad}    {name}({var})"]
            else:
                self._struct(t.struct, var, pad, depth, path)
        elif t.elem is not None:
            item, at = f"v{depth + 1}", f"i{depth}"
            if code == schema.LIST:
                lines += [f"{pad}if isinstance({var}, list):", f"{pad}    for {at}, {item} in enumerate({var}):"]
            else:
                lines += [f"{pad}if isinstance({var}, dict):", f"{pad}    for {at}, {item} in {var}.items():"]
            self._value(t.elem, item, f"{var}[{at}]", pad + "        ", depth + 1, path)

    def _struct(self, struct: schema.Struct, var: str, pad: str, depth: int, path: tuple[int, ...]) -> None:
        field = f"v{depth + 1}"
        self.lines.append(f"{pad}if isinstance({var}, dict):")
        for name, ft in _carries(struct):
            if not _rewrites(ft):
                continue
            # Most fields are absent: ``is not None`` turns them away before any type check.
            self.lines += [f"{pad}    {field} = {var}.get({name!r})", f"{pad}    if {field} is not None:"]
            self._value(ft, field, f"{var}[{name!r}]", pad + "        ", depth + 1, (*path, id(struct)))
