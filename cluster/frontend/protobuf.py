"""Kubernetes protobuf on the wire: request bodies read into JSON, answers written when asked for.

Owns ``application/vnd.kubernetes.protobuf`` for the HTTP front end (``cluster/frontend/handler.py``):
``decode`` reads a request body (``Handler.body``) into the JSON the JSON API would carry, and
``answer`` turns a JSON answer into protobuf when the request's Accept prefers it (client-go's
typed clients send ``application/vnd.kubernetes.protobuf,application/json``; kubectl 1.32+
``create <kind>`` and kube-scheduler send protobuf bodies, and a 415 is not retried as JSON).
The wire reader is written here (no protobuf library), the writer in ``protobuf_encode.py``;
the field numbers of every served kind are ``protobuf_schema.py``'s.

A body is the 4 bytes ``k8s\\x00`` and a ``runtime.Unknown`` message: 1 TypeMeta {1 apiVersion,
2 kind}, 2 the object's bytes, 3 contentEncoding, 4 contentType. The object is decoded by the
message of its (apiVersion, kind); unknown field numbers are skipped, as upstream does. Custom
resources have no protobuf upstream: their bodies get a 415 and their answers stay JSON.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from cluster.api import kinds
from cluster.api.errors import BadRequest, UnsupportedMediaType
from cluster.frontend import protobuf_encode
from cluster.frontend.protobuf_answer import PROTOBUF, answer, preferred
from cluster.frontend.protobuf_schema import I32, I64, LEN, SCALARS, VARINT, Field, Message, lookup

__all__ = ["MAGIC", "PROTOBUF", "answer", "decode", "preferred"]
MAGIC = protobuf_encode.MAGIC

# Types whose zero value the field's flag decides about; messages and the other specials are kept.
_ZERO_CHECKED = SCALARS | {"IntOrString"}
# Go's zero time.Time as Unix seconds: upstream's JSON writes it as null.
_GO_ZERO_SECONDS = -62135596800
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_NS_PER_S = 1_000_000_000

_Raw = int | bytes  # a field's undecoded value: an int for numeric wire types, else the bytes
_ABSENT = object()  # what a zero time or empty RawExtension decodes to: left out of the JSON
_MISSING = object()  # a map entry's value that was not on the wire


class _Malformed(Exception):
    """A wire-format fault; ``decode`` turns it into one BadRequest line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = ""  # the innermost message being read, filled in on the way out


def decode(body: bytes | bytearray | memoryview) -> dict[str, Any]:
    """The object a protobuf request body carries, as Kubernetes JSON with apiVersion and kind.

    Raises BadRequest for a body that is not well-formed Kubernetes protobuf and
    UnsupportedMediaType (415) for a kind kubemu has no message for.
    """
    body = bytes(body)  # the reader works on bytes; a bytearray or memoryview is copied once
    if not body.startswith(MAGIC):
        raise BadRequest("the request body is not Kubernetes protobuf: it does not start with k8s\\x00")
    try:
        api_version, kind, raw = _envelope(body[len(MAGIC) :])
        if not kind:
            raise BadRequest("the protobuf request body names no kind in its envelope")
        message = lookup(api_version, kind)
        if message is None:
            raise UnsupportedMediaType(_unsupported(api_version, kind))
        return {"apiVersion": api_version, "kind": kind, **_message(raw, message)}
    except _Malformed as e:
        raise BadRequest(f"the protobuf request body is malformed: {e.reason} (in {e.where})") from None


def _unsupported(api_version: str, kind: str) -> str:
    custom = kinds.CUSTOM.get(kind)
    if custom is not None and custom.api_version == api_version:
        # Upstream serves custom resources as JSON and YAML only.
        return "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    return (
        f"the body of the request was protobuf for {api_version} {kind}, which kubemu does not "
        "decode: send it as JSON (Content-Type: application/json)"
    )


def _envelope(data: bytes) -> tuple[str, str, bytes]:
    """apiVersion, kind and the object's bytes from a runtime.Unknown."""
    unknown = _small(data, {1: LEN, 2: LEN, 3: LEN, 4: LEN}, "runtime.Unknown")
    type_meta = _small(_bytes(unknown.get(1, b"")), {1: LEN, 2: LEN}, "runtime.TypeMeta")
    return _text(type_meta.get(1, b"")), _text(type_meta.get(2, b"")), _bytes(unknown.get(2, b""))


# --- the wire format ---------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    result = shift = 0
    for i in range(pos, min(pos + 10, len(buf))):
        byte = buf[i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i + 1
        shift += 7
    if len(buf) - pos >= 10:
        raise _Malformed("a varint is longer than 10 bytes")
    raise _Malformed("a varint runs past the end of the message")


def _fields(buf: bytes) -> Iterator[tuple[int, int, _Raw]]:
    """(field number, wire type, value) for each field of one message, in wire order."""
    pos, end = 0, len(buf)
    while pos < end:
        key = buf[pos]  # one byte for every field number below 16: the common case, read inline
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise _Malformed("a field has number 0")
        value: _Raw
        if wire == LEN:
            size = buf[pos] if pos < end else 0x80
            if size < 0x80:
                pos += 1
            else:
                size, pos = _varint(buf, pos)
            if size > end - pos:
                raise _Malformed(f"field {num} declares {size} bytes but only {end - pos} remain")
            value, pos = buf[pos : pos + size], pos + size
        elif wire == VARINT:
            value = buf[pos] if pos < end else 0x80
            if value < 0x80:
                pos += 1
            else:
                value, pos = _varint(buf, pos)
        elif wire in (I64, I32):
            width = 8 if wire == I64 else 4
            if width > end - pos:
                raise _Malformed(f"field {num} needs {width} bytes but only {end - pos} remain")
            value, pos = int.from_bytes(buf[pos : pos + width], "little"), pos + width
        else:
            raise _Malformed(f"field {num} has wire type {wire}, which Kubernetes protobuf never uses")
        yield num, wire, value


def _signed(value: int) -> int:
    # Go writes negative int32 and int64 alike as the 64-bit two's complement.
    return value - (1 << 64) if value >= 1 << 63 else value


def _bytes(raw: _Raw) -> bytes:
    assert isinstance(raw, bytes)  # guaranteed by the wire-type check before every call
    return raw


def _int(raw: _Raw) -> int:
    assert isinstance(raw, int)
    return raw


def _text(raw: _Raw) -> str:
    # Go strings may hold invalid UTF-8; Go's JSON encoder writes U+FFFD for it, and so do we.
    assert isinstance(raw, bytes)
    return raw.decode("utf-8", errors="replace")


def _check_wire(num: int, wire: int, want: int, what: str = "") -> None:
    if wire != want:
        label = f" ({what})" if what else ""
        raise _Malformed(f"field {num}{label} has wire type {wire}, expected {want}")


def _small(data: bytes, wires: dict[int, int], where: str) -> dict[int, _Raw]:
    """The known fields of a small fixed message (envelope, time, quantity...); last one wins."""
    out: dict[int, _Raw] = {}
    try:
        for num, wire, raw in _fields(data):
            if num in wires:
                _check_wire(num, wire, wires[num])
                out[num] = raw
    except _Malformed as e:
        e.where = e.where or where
        raise
    return out


# --- messages ----------------------------------------------------------------------------


def _message(data: bytes, message: Message) -> dict[str, Any]:
    """One message as a JSON object, by its fields' JSON names."""
    out: dict[str, Any] = {}
    by_number = message.by_number
    try:
        for num, wire, raw in _fields(data):
            field = by_number.get(num)
            if field is not None:  # else a field newer than the table: skipped, as upstream does
                _set(out, field, num, wire, raw)
    except _Malformed as e:
        e.where = e.where or message.name
        raise
    for name in message.nulls:
        if name not in out:
            out[name] = None
    return out


def _set(out: dict[str, Any], field: Field, num: int, wire: int, raw: _Raw) -> None:
    """Put one occurrence of ``field`` into ``out``: append, add a map entry, or (re)place it."""
    if field.map:
        _check_wire(num, wire, LEN, field.json)
        key, value = _map_entry(_bytes(raw), field)
        out.setdefault(field.json, {})[key] = None if value is _ABSENT else value
    elif field.repeated:
        items = out.setdefault(field.json, [])
        if wire == LEN and field.wire != LEN:
            items.extend(_packed(_bytes(raw), field))  # packed encoding; Go writes it unpacked
        else:
            value = _value(field, num, wire, raw)
            items.append(None if value is _ABSENT else value)
    else:
        value = _value(field, num, wire, raw)
        if field.json == "...":
            out.update(value)
        elif value is not _ABSENT and (field.keep_zero or field.type not in _ZERO_CHECKED or value not in ("", 0)):
            out[field.json] = value


def _value(field: Field, num: int, wire: int, raw: _Raw, what: str = "") -> Any:
    """One value of ``field``'s type after checking it came with the right wire type."""
    typ = field.type
    if wire != field.value_wire:
        _check_wire(num, wire, field.value_wire, what or field.json)
    if typ == "string":
        return _text(raw)
    if field.message is not None:
        return _shaped(_bytes(raw), field.message)
    if typ == "int64":
        return _signed(_int(raw))
    if typ == "int32":
        value = _int(raw) & 0xFFFFFFFF  # Go keeps the low 32 bits of an int32's varint
        return value - (1 << 32) if value >= 1 << 31 else value
    if typ == "bool":
        return _int(raw) != 0
    if typ == "double":
        return struct.unpack("<d", _int(raw).to_bytes(8, "little"))[0]
    if typ == "bytes":
        return base64.b64encode(_bytes(raw)).decode("ascii")
    return _SPECIAL_READERS[typ](_bytes(raw))


def _shaped(data: bytes, message: Message) -> Any:
    """A message as JSON: its fields, or the JSON form of its own its Go type writes."""
    fields = _message(data, message)
    shape = message.shape
    if not shape:
        return fields
    if shape == "list":  # a Go named slice (Verbs, ExtraValue)
        return fields.get("items", [])
    if shape == "SchemaOrBool":
        return fields["schema"] if "schema" in fields else fields.get("allows", False)
    if shape == "SchemaOrArray":
        return fields.get("jSONSchemas") or fields.get("schema")
    return fields.get("property") or fields.get("schema")  # SchemaOrStringArray


def _map_entry(data: bytes, field: Field) -> tuple[str, Any]:
    """Key and value of one map entry; a missing part is its type's empty value, as in Go."""
    key: str = ""
    value: Any = _MISSING
    for num, wire, raw in _fields(data):
        if num == 1:
            _check_wire(num, wire, LEN, "key")
            key = _text(raw)
        elif num == 2:
            value = _value(field, num, wire, raw, "value")
    if value is _MISSING:
        wire = field.value_wire
        value = _value(field, 2, wire, b"" if wire == LEN else 0, "value")
    return key, value


def _packed(data: bytes, field: Field) -> list[Any]:
    wire = field.wire
    if wire == VARINT:
        out, pos = [], 0
        while pos < len(data):
            value, pos = _varint(data, pos)
            out.append(_value(field, 0, VARINT, value))
        return out
    width = 8 if wire == I64 else 4
    if len(data) % width:
        raise _Malformed(f"a packed field of {len(data)} bytes is not a whole number of {width}-byte values")
    return [_value(field, 0, wire, int.from_bytes(data[i : i + width], "little")) for i in range(0, len(data), width)]


# --- special types -------------------------------------------------------------------------


def _quantity(data: bytes) -> str:
    # resource.Quantity {1 string}; Go's zero Quantity prints as "0".
    return _text(_small(data, {1: LEN}, "Quantity").get(1, b"")) or "0"


def _seconds_nanos(data: bytes, where: str) -> tuple[int, int] | None:
    """Unix seconds and nanos of a Time/MicroTime, or None for Go's zero time (JSON null)."""
    fields = _small(data, {1: VARINT, 2: VARINT}, where)
    seconds, nanos = _signed(_int(fields.get(1, 0))), _signed(_int(fields.get(2, 0)))
    if not data or (seconds == _GO_ZERO_SECONDS and nanos == 0):
        return None  # upstream writes a zero time as an empty message
    return seconds, nanos


def _utc(seconds: int, micros: int, where: str) -> datetime:
    try:
        return _EPOCH + timedelta(seconds=seconds, microseconds=micros)
    except OverflowError:  # outside years 1..9999, which RFC 3339 cannot write either
        raise _Malformed(f"a {where} of {seconds} seconds is out of range") from None


def _time(data: bytes) -> object:
    # metav1.Time: RFC 3339 in whole seconds; upstream drops the nanos too.
    parts = _seconds_nanos(data, "Time")
    if parts is None:
        return _ABSENT
    return _utc(parts[0], 0, "Time").replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _micro_time(data: bytes) -> object:
    # metav1.MicroTime: RFC 3339 with exactly six fractional digits.
    parts = _seconds_nanos(data, "MicroTime")
    if parts is None:
        return _ABSENT
    stamp = _utc(parts[0], parts[1] // 1000, "MicroTime")
    return stamp.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _int_or_string(data: bytes) -> int | str:
    # intstr.IntOrString {1 type: 0 int, 1 string; 2 intVal; 3 strVal}
    fields = _small(data, {1: VARINT, 2: VARINT, 3: LEN}, "IntOrString")
    if _int(fields.get(1, 0)) == 1:
        return _text(fields.get(3, b""))
    value = _int(fields.get(2, 0)) & 0xFFFFFFFF  # an int32
    return value - (1 << 32) if value >= 1 << 31 else value


def _duration(data: bytes) -> str:
    # metav1.Duration {1 nanoseconds}: JSON carries Go's time.Duration.String().
    return _go_duration(_signed(_int(_small(data, {1: VARINT}, "Duration").get(1, 0))))


def _go_duration(ns: int) -> str:
    """Go's ``time.Duration.String``: 0s, 500ns, 1.5µs, 2ms, 1m30s, 1h0m0.5s."""
    if ns == 0:
        return "0s"
    sign, ns = ("-" if ns < 0 else ""), abs(ns)
    for unit, suffix in ((1_000, "ns"), (1_000_000, "µs"), (_NS_PER_S, "ms")):
        if ns < unit:
            return sign + _decimal(ns, unit // 1000) + suffix
    hours, rest = divmod(ns, 3600 * _NS_PER_S)
    minutes, rest = divmod(rest, 60 * _NS_PER_S)
    head = f"{hours}h{minutes}m" if hours else (f"{minutes}m" if minutes else "")
    return sign + head + _decimal(rest, _NS_PER_S) + "s"


def _decimal(value: int, unit: int) -> str:
    """``value / unit`` written without trailing zeros (unit a power of ten)."""
    whole, part = divmod(value, unit)
    digits = f"{part:0{len(str(unit)) - 1}d}".rstrip("0") if unit > 1 else ""
    return f"{whole}.{digits}" if digits else str(whole)


def _raw_json(data: bytes) -> Any:
    # runtime.RawExtension / metav1.FieldsV1 {1 raw}: the raw bytes are JSON already.
    raw = _bytes(_small(data, {1: LEN}, "RawExtension").get(1, b""))
    if not raw:
        return _ABSENT
    try:
        return json.loads(raw)
    except ValueError:
        raise _Malformed("an embedded raw object is not JSON") from None


_SPECIAL_READERS: dict[str, Callable[[bytes], Any]] = {
    "Quantity": _quantity,
    "Time": _time,
    "MicroTime": _micro_time,
    "IntOrString": _int_or_string,
    "Duration": _duration,
    "Raw": _raw_json,
}
