"""Kubernetes JSON objects written as upstream's protobuf: the bytes a real apiserver would send.

Owns the writer side of ``application/vnd.kubernetes.protobuf``: ``encode_object`` wraps an object
(or list, or Status) in the ``k8s\\x00`` + ``runtime.Unknown`` envelope, ``watch_frame`` writes one
watch event as upstream's stream does (a 4-byte big-endian length, then a ``WatchEvent`` whose
object is an enveloped object). Called by ``cluster/frontend/protobuf.py``'s ``answer``; the field
numbers come from ``protobuf_schema.py``.

The bytes are the ones upstream's gogo-generated marshallers write for the same Go value, so
that ``encode(decode(x)) == x`` for what a Go client sends: fields in number order; every
non-pointer field written, zero or not (an absent struct as its zero value, recursively); a
pointer, slice, map entry list or ``[]byte`` only when set; map entries sorted by key;
repeated numbers unpacked; ``Time`` as whole seconds with ``nanos`` 0, ``MicroTime`` to the
microsecond, a zero time as an empty message.
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import orjson

from cluster.frontend.protobuf_schema import Field, Message, lookup, varint

MAGIC = b"k8s\x00"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_GO_ZERO_SECONDS = -62135596800  # Go's zero time.Time as Unix seconds: written as an empty message
_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


class Unencodable(Exception):
    """An object kubemu cannot write as protobuf: no message for its kind, or a value of the
    wrong type for its field. The answer then stays JSON."""


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """``k8s\\x00`` and a runtime.Unknown around ``raw``, as upstream's serializer writes it."""
    type_meta = _ld(1, api_version.encode()) + _ld(2, kind.encode())
    return MAGIC + _ld(1, type_meta) + _ld(2, raw) + b"\x1a\x00\x22\x00"  # contentEncoding, contentType: ""


def encode_object(obj: Any) -> bytes:
    """``obj`` (with apiVersion and kind) as an enveloped protobuf object; Unencodable if it cannot be."""
    if not isinstance(obj, Mapping):
        raise Unencodable(f"a {type(obj).__name__} is not an object")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    message = lookup(api_version, kind) if isinstance(api_version, str) and isinstance(kind, str) else None
    if message is None:
        raise Unencodable(f"kubemu has no protobuf message for {api_version} {kind}")
    return envelope(str(api_version), str(kind), encode_message(message, obj))


def encode_message(message: Message, obj: Mapping[str, Any]) -> bytes:
    """The fields of ``obj`` by ``message``'s numbers (apiVersion and kind, which are not fields, are not written)."""
    out = bytearray()
    try:
        _write(message, obj, out)
    except (TypeError, ValueError, AttributeError, OverflowError) as e:
        raise Unencodable(f"a value does not fit its field in {message.name}: {e}") from None
    except RecursionError:
        raise Unencodable(f"{message.name} is nested too deeply") from None
    return bytes(out)


def watch_frame(event: Mapping[str, Any]) -> bytes:
    """One watch event as upstream streams it: length-prefixed ``WatchEvent{type, object: RawExtension}``."""
    etype = event.get("type")
    if not isinstance(etype, str):
        raise Unencodable("a watch event without a type")
    embedded = encode_object(event.get("object"))
    body = _ld(1, etype.encode()) + _ld(2, _ld(1, embedded))
    return len(body).to_bytes(4, "big") + body


# --- messages ------------------------------------------------------------------------------


def _ld(key: int | bytes, payload: bytes) -> bytes:
    tag = bytes(((key << 3) | 2,)) if isinstance(key, int) else key
    return tag + varint(len(payload)) + payload


def _write(message: Message, obj: Mapping[str, Any] | None, out: bytearray) -> None:
    for f in message.fields:
        if f.json == "...":  # an embedded struct: its fields are this object's keys
            out += _ld(f.key, _nested(f, obj))
            continue
        value = obj.get(f.json) if obj else None
        if value is None:
            if not f.pointer and not f.repeated:
                out += _zero(f)
        elif f.map:
            for key in sorted(value):
                out += _ld(f.key, _ld(1, key.encode()) + _map_value(f, value[key]))
        elif f.repeated:
            if not isinstance(value, list):
                raise TypeError(f"{f.json} is a {type(value).__name__}, not a list")
            for item in value:
                out += _one(f, item)
        else:
            out += _one(f, value)


def _nested(f: Field, obj: Any) -> bytes:
    assert f.message is not None
    if obj is None:
        return _zero_message(f.message)
    out = bytearray()
    _write(f.message, _shape_in(f.message, obj), out)
    return bytes(out)


def _one(f: Field, value: Any) -> bytes:
    """One occurrence of ``f`` with a JSON ``value``: its key and payload."""
    typ = f.type
    if typ == "string":
        if not isinstance(value, str):
            raise TypeError(f"{f.json} is a {type(value).__name__}, not a string")
        return _ld(f.key, value.encode())
    if typ in ("int32", "int64"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{f.json} is a {type(value).__name__}, not an integer")
        return f.key + varint(value)
    if typ == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{f.json} is a {type(value).__name__}, not a boolean")
        return f.key + (b"\x01" if value else b"\x00")
    if typ == "double":
        return f.key + struct.pack("<d", float(value))
    if typ == "bytes":
        return _ld(f.key, base64.b64decode(value, validate=True))
    if f.message is not None:
        return _ld(f.key, _nested(f, value))
    return _ld(f.key, _SPECIAL_WRITERS[typ](value))


def _map_value(f: Field, value: Any) -> bytes:
    """A map entry's value (field 2); Go writes it even when empty, a nil ``[]byte`` or slice excepted."""
    key = b"\x10" if f.type in ("int32", "int64", "bool") else b"\x12"
    if value is None:
        if f.type == "bytes" or (f.message is not None and f.message.shape == "list"):
            return b""
        return _value_zero(f, key)
    return key + _one(f, value)[len(f.key) :]


def _shape_in(message: Message, value: Any) -> Mapping[str, Any]:
    """The fields of a message whose JSON has a form of its own (``Verbs``, ``JSONSchemaPropsOrBool``)."""
    shape = message.shape
    if not shape:
        if not isinstance(value, Mapping):
            raise TypeError(f"a {type(value).__name__} where {message.name} needs an object")
        return value
    if shape == "list":
        return {"items": value}
    if shape == "SchemaOrBool":
        return {"allows": value} if isinstance(value, bool) else {"allows": True, "schema": value}
    if isinstance(value, list):
        return {"jSONSchemas" if shape == "SchemaOrArray" else "property": value}
    return {"schema": value}


# --- zero values ---------------------------------------------------------------------------


def _zero(f: Field) -> bytes:
    """What Go writes for an unset non-pointer field: its zero value (nothing for a nil ``[]byte`` or slice)."""
    if f.type == "bytes" or (f.message is not None and f.message.shape == "list"):
        return b""
    return _value_zero(f, f.key)


def _value_zero(f: Field, key: bytes) -> bytes:
    typ = f.type
    if typ in ("string", "Time", "MicroTime", "Raw"):
        return key + b"\x00"
    if typ in ("int32", "int64", "bool"):
        return key + b"\x00"
    if typ == "double":
        return key + bytes(8)
    if f.message is not None:
        return _ld(key, _zero_message(f.message))
    return _ld(key, _SPECIAL_WRITERS[typ](None))


_ZEROS: dict[str, bytes] = {}


def _zero_message(message: Message) -> bytes:
    """A message's zero value as Go writes it; the same for every object, so computed once."""
    zero = _ZEROS.get(message.name)
    if zero is None:
        out = bytearray()
        _write(message, None, out)
        zero = _ZEROS[message.name] = bytes(out)
    return zero


# --- special types -------------------------------------------------------------------------


def _quantity(value: Any) -> bytes:
    # resource.Quantity {1 string}: Go's zero Quantity prints as "0".
    if value is None:
        return b"\x0a\x010"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError(f"a {type(value).__name__} is not a quantity")
    return _ld(1, str(value).encode())


@lru_cache(maxsize=4096)
def _unix(text: str) -> tuple[int, int]:
    """Unix seconds and microseconds of an RFC 3339 time (objects share many timestamps: parsed once)."""
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    delta = stamp - _EPOCH
    return delta.days * 86400 + delta.seconds, delta.microseconds


def _time(value: Any) -> bytes:
    # metav1.Time as Timestamp {1 seconds, 2 nanos}: upstream writes whole seconds, nanos 0.
    if value is None:
        return b""
    seconds, _ = _unix(value)
    return b"" if seconds == _GO_ZERO_SECONDS else b"\x08" + varint(seconds) + b"\x10\x00"


def _micro_time(value: Any) -> bytes:
    if value is None:
        return b""
    seconds, micros = _unix(value)
    if seconds == _GO_ZERO_SECONDS and not micros:
        return b""
    return b"\x08" + varint(seconds) + b"\x10" + varint(micros * 1000)


def _int_or_string(value: Any) -> bytes:
    # intstr.IntOrString {1 type, 2 intVal, 3 strVal}: all three, always.
    if value is None:
        return b"\x08\x00\x10\x00\x1a\x00"
    if isinstance(value, str):
        return b"\x08\x01\x10\x00" + _ld(3, value.encode())
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a {type(value).__name__} is neither an integer nor a string")
    return b"\x08\x00\x10" + varint(value) + b"\x1a\x00"


def _duration(value: Any) -> bytes:
    # metav1.Duration {1 nanoseconds}; JSON carries Go's duration text ("1m30s").
    return b"\x08" + varint(0 if value is None else go_duration_ns(value))


def go_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration``: "1h0m0.5s" -> 3600500000000."""
    sign, rest = (-1, text[1:]) if text.startswith("-") else (1, text.lstrip("+"))
    if rest == "0":
        return 0
    total, pos = 0, 0
    for m in _DURATION_PART.finditer(rest):
        if m.start() != pos:
            break
        whole, _, frac = m.group(1).partition(".")
        unit = _NANOS[m.group(2)]
        total += int(whole or 0) * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
        pos = m.end()
    if not rest or pos != len(rest):
        raise ValueError(f"{text!r} is not a duration")
    return sign * total


def _raw(value: Any) -> bytes:
    # runtime.RawExtension, metav1.FieldsV1, apiextensions JSON {1 raw}: the JSON bytes.
    return b"" if value is None else _ld(1, orjson.dumps(value))


_SPECIAL_WRITERS: dict[str, Callable[[Any], bytes]] = {
    "Quantity": _quantity,
    "Time": _time,
    "MicroTime": _micro_time,
    "IntOrString": _int_or_string,
    "Duration": _duration,
    "Raw": _raw,
}
