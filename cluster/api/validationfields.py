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
from contextlib import contextmanager
from typing import Any, NoReturn, TypeGuard

from .errors import Cause
from .selectors import KEY_RULE, VALUE_RULE, LabelSelector, SelectorError, is_label_value, is_qualified_name


class _NoValue:
    """The sentinel for "this error shows no value"; pickles back to the same object."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_VALUE"

    def __reduce__(self) -> str:
        return "NO_VALUE"


NO_VALUE = _NoValue()


class Shown(str):
    """A value already written as upstream's field error prints it (a Go struct's ``%#v``)."""


def shown(value: Any) -> str:
    """A value as upstream's field errors print it: strings quoted, numbers and booleans
    bare, a string map as Go prints ``map[string]string``, anything else as JSON."""
    if isinstance(value, Shown):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
        return f"map[string]string{{{inner}}}"
    return str(value) if isinstance(value, (int, float)) else json.dumps(value, default=str, ensure_ascii=False)


# upstream's error types: the word a message starts with, and the Status cause reason.
_TYPES = (
    ("Required value", "FieldValueRequired"),
    ("Forbidden", "FieldValueForbidden"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Not found", "FieldValueNotFound"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
)


def cause_type(body: str) -> str:
    """The Status cause reason of an error body (``Required value...`` is FieldValueRequired)."""
    return next((reason for word, reason in _TYPES if body.startswith(word)), "FieldValueInvalid")


class ValidationError(ValueError):
    """An invalid object: ``str()`` is upstream's one line, ``<path>: Invalid value: <value>:
    <detail>`` when a bad value is shown, else ``<path>: <detail>`` (the detail then starts
    with its type: ``Required value``, ``Unsupported value: ...``); several errors of one
    object are ``[<e1>, <e2>]`` with one cause each (``aggregate``)."""

    retryable = False

    def __init__(self, path: str, value: Any = NO_VALUE, detail: str = "", causes: tuple[Cause, ...] = ()) -> None:
        # ``causes``: one per field when several are reported together (an aggregate), so
        # the Status names each field rather than one made-up field for them all.
        self.path, self.value, self.detail = path, value, detail
        body = detail
        if value is not NO_VALUE:
            body = f"Invalid value: {shown(value)}: {detail}" if detail else f"Invalid value: {shown(value)}"
        self.causes = tuple(causes) or (Cause(cause_type(body), body, path),)
        super().__init__(f"{path}: {body}" if path else body)

    def __reduce__(self) -> tuple[type[ValidationError], tuple[str, Any, str, tuple[Cause, ...]]]:
        # Errors cross actor boundaries; rebuild from the fields, not from the message.
        return (ValidationError, (self.path, self.value, self.detail, self.causes))


def aggregate(errors: list[ValidationError]) -> ValidationError:
    """One error for several, as upstream's aggregate prints them: ``[<e1>, <e2>]``."""
    if len(errors) == 1:
        return errors[0]
    causes = tuple(c for e in errors for c in e.causes)
    lines = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    return ValidationError("", NO_VALUE, "[" + ", ".join(lines) + "]", causes)


class Errors:
    """Collects an object's independent errors so all are reported, as upstream does.

    ``with errors.each():`` runs one independent check, keeping its error instead of
    stopping; ``raise_any`` raises what was kept (one error as is, several aggregated)."""

    def __init__(self) -> None:
        self.found: list[ValidationError] = []

    @contextmanager
    def each(self) -> Iterator[None]:
        try:
            yield
        except ValidationError as e:
            self.found.append(e)

    def add(self, path: str, body: str) -> None:
        """Keep one error whose body is already in upstream's words."""
        self.found.append(ValidationError(path, NO_VALUE, body))

    def raise_any(self) -> None:
        if self.found:
            raise aggregate(self.found)


# ---- names ---------------------------------------------------------------------------

LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


_GOOD_LABELS: set[str] = set()  # labels that passed: they repeat (namespaces), unlike object names


def check_name(value: object, path: str, label: bool) -> None:
    """A DNS-1123 label or subdomain; too long and malformed are two errors, as upstream."""
    if not isinstance(value, str):
        raise ValidationError(path, value, "must be a string")
    if label and value in _GOOD_LABELS:
        return  # a namespace or a container name seen before (every create checks a few)
    limit, pattern, rule = (63, _DNS_LABEL, LABEL_RULE) if label else (253, _DNS_SUBDOMAIN, SUBDOMAIN_RULE)
    if len(value) <= limit and pattern.fullmatch(value):
        if label and len(_GOOD_LABELS) < 4096:
            _GOOD_LABELS.add(value)
        return  # the good ones pass with one match
    found = []
    if len(value) > limit:
        found.append(ValidationError(path, value, f"must be no more than {limit} characters"))
    if not pattern.fullmatch(value):
        found.append(ValidationError(path, value, rule))
    if found:
        raise aggregate(found)


# ---- paths and small typed getters ---------------------------------------------------

_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _at(path: str, field: str) -> str:
    if not path:
        return field
    return path + field if field.startswith("[") else f"{path}.{field}"


_METADATA_PATHS: dict[str, tuple[str, str, str, str, str]] = {}


def metadata_paths(path: str) -> tuple[str, str, str, str, str]:
    """``path.metadata`` and its ``name``, ``namespace``, ``labels`` and ``annotations``,
    built once per prefix: every write checks an object's metadata."""
    hit = _METADATA_PATHS.get(path)
    if hit is None:
        m = _at(path, "metadata")
        hit = (m, _at(m, "name"), _at(m, "namespace"), _at(m, "labels"), _at(m, "annotations"))
        if len(_METADATA_PATHS) < 1024:  # the prefixes are few (templates' paths; a scenario's items)
            _METADATA_PATHS[path] = hit
    return hit


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


def unsupported(path: str, value: Any, supported: tuple[str, ...]) -> ValidationError:
    """upstream's NotSupported: ``<path>: Unsupported value: "x": supported values: "a", "b"``."""
    listed = ", ".join(json.dumps(a) for a in supported)
    return ValidationError(path, NO_VALUE, f"Unsupported value: {shown(value)}: supported values: {listed}")


def _enum(d: dict[str, Any], field: str, path: str, allowed: tuple[str, ...], show_empty: bool = False) -> None:
    """``allowed`` in the order upstream lists them; an allowed "" (the field's default)
    is listed only where upstream lists it (``show_empty``)."""
    v = d.get(field)
    if v is not None and v not in allowed:
        raise unsupported(_at(path, field), v, tuple(a for a in allowed if a or show_empty))


def _res_key(path: str, name: str) -> str:
    """A resource map's entry as upstream names it: ``requests[cpu]``."""
    return f"{path}[{name}]"


def _str(d: dict[str, Any], field: str, path: str) -> None:
    v = d.get(field)
    if v is not None and not isinstance(v, str):
        raise ValidationError(_at(path, field), v, "must be a string")


# ---- labels ---------------------------------------------------------------------------


def check_labels(labels: dict[str, Any], path: str, annotations: bool = False) -> None:
    """Keys are qualified names and values strings; label values are also length-limited."""
    for k, v in labels.items():
        if not annotations and v.__class__ is str and (k, v) in _GOOD_LABEL_PAIRS:
            continue  # a workload's pods repeat their labels: each pair is checked once
        if not is_qualified_name(k):
            raise ValidationError(_key(path, k), k, KEY_RULE)
        if not isinstance(v, str):
            raise ValidationError(_key(path, k), v, "must be a string")
        if not annotations and not is_label_value(v):
            raise ValidationError(_key(path, k), v, VALUE_RULE)
        if not annotations and len(_GOOD_LABEL_PAIRS) < 8192:
            _GOOD_LABEL_PAIRS.add((k, v))


_GOOD_LABEL_PAIRS: set[tuple[str, str]] = set()


def compile_selector(raw: Any, at: str) -> LabelSelector:
    """A metav1.LabelSelector at ``at`` compiled, or the ValidationError naming its bad field."""
    try:
        return LabelSelector.from_dict(raw)
    except SelectorError as e:
        value = e.value if e.has_value else NO_VALUE
        raise ValidationError(_at(at, e.field) if e.field else at, value, e.detail) from None
