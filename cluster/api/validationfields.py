"""The error type and field getters shared by the create-time validation modules.

Owns ``ValidationError`` and ``NO_VALUE`` (the one-line error naming a path and a value)
and the small helpers that build field paths and read a field as a map, list, integer,
enum or string, raising that error on the first mismatch. ``validation`` and
``annotationvalidation`` call them; everyone else imports the error from ``validation``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NoReturn, TypeGuard

from .errors import Cause


class _NoValue:
    """The sentinel for "this error shows no value"; pickles back to the same object."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_VALUE"

    def __reduce__(self) -> str:
        return "NO_VALUE"


NO_VALUE = _NoValue()


class ValidationError(ValueError):
    """The first invalid field of an object. ``str()`` is one line naming path and value."""

    retryable = False

    def __init__(self, path: str, value: Any = NO_VALUE, detail: str = "", causes: tuple[Cause, ...] = ()) -> None:
        # ``causes``: one per field when several are reported together (an aggregate), so
        # the Status names each field rather than one made-up field for them all.
        self.path, self.value, self.detail, self.causes = path, value, detail, tuple(causes)
        body = detail
        if value is not NO_VALUE:
            shown = json.dumps(value, default=str, ensure_ascii=False)
            body = f"{shown} {detail}" if detail else shown
        super().__init__(f"{path}: {body}" if path else body)

    def __reduce__(self) -> tuple[type[ValidationError], tuple[str, Any, str, tuple[Cause, ...]]]:
        # Errors cross actor boundaries; rebuild from the fields, not from the message.
        return (ValidationError, (self.path, self.value, self.detail, self.causes))


# ---- paths and small typed getters ---------------------------------------------------

_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _at(path: str, field: str) -> str:
    if not path:
        return field
    return path + field if field.startswith("[") else f"{path}.{field}"


def _key(path: str, name: str) -> str:
    """``path.name`` for plain names, ``path[name]`` for names with '/' or '.'."""
    return f"{path}.{name}" if _SIMPLE_KEY.fullmatch(str(name)) else f"{path}[{name}]"


def _required(path: str, why: str = "") -> NoReturn:
    raise ValidationError(path, NO_VALUE, f"Required value: {why}" if why else "Required value")


def _map(d: dict[str, Any], field: str, path: str) -> dict[str, Any]:
    v = d.get(field)
    if v is not None and not isinstance(v, dict):
        raise ValidationError(_at(path, field), v, "must be a map")
    return v or {}


def _list(d: dict[str, Any], field: str, path: str) -> list[Any]:
    v = d.get(field)
    if v is not None and not isinstance(v, list):
        raise ValidationError(_at(path, field), v, "must be a list")
    return v or []


def _item_map(item: Any, path: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValidationError(path, item, "must be a map")
    return item


def _items(d: dict[str, Any], field: str, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(item path, item)`` for each entry of a list-of-maps field."""
    for i, item in enumerate(_list(d, field, path)):
        p = _at(path, f"{field}[{i}]")
        yield p, _item_map(item, p)


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(
    d: dict[str, Any], field: str, path: str, lo: int | None = None, hi: int | None = None, required: bool = False
) -> int | None:
    """Check an optional integer field against an inclusive range; returns it (or None)."""
    if d.get(field) is None:
        if required:
            _required(_at(path, field))
        return None
    v, p = d[field], _at(path, field)
    if not _is_int(v):
        raise ValidationError(p, v, "must be an integer")
    if hi is not None and lo is not None and not lo <= v <= hi:
        raise ValidationError(p, v, f"must be between {lo} and {hi}, inclusive")
    if lo is not None and v < lo:
        raise ValidationError(p, v, f"must be greater than or equal to {lo}")
    return v


def _enum(d: dict[str, Any], field: str, path: str, allowed: tuple[str, ...]) -> None:
    v = d.get(field)
    if v is not None and v not in allowed:
        shown = ", ".join(json.dumps(a) for a in allowed if a)
        raise ValidationError(_at(path, field), v, f"is not supported (supported values: {shown})")


def _str(d: dict[str, Any], field: str, path: str) -> None:
    v = d.get(field)
    if v is not None and not isinstance(v, str):
        raise ValidationError(_at(path, field), v, "must be a string")
