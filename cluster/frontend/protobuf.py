"""Kubernetes protobuf request bodies, read into the JSON the JSON API would carry.

Owns decoding ``application/vnd.kubernetes.protobuf``: kubectl 1.32+ (``kubectl create
namespace|deployment|...``), client-go typed clients and kube-scheduler (bindings, events,
leases) send their bodies that way, and a 415 is not retried as JSON. The HTTP front end
(``cluster/frontend/handler.py``, ``Handler.body``) calls ``decode`` and then treats the result
exactly like a JSON body. The wire reader is written here (no protobuf library); the field
numbers live in ``cluster/frontend/protobuf_schema.py``.

A body is the 4 bytes ``k8s\\x00`` and a ``runtime.Unknown`` message: 1 TypeMeta {1 apiVersion,
2 kind}, 2 the object's bytes, 3 contentEncoding, 4 contentType. The object is decoded by the
schema of its (apiVersion, kind); unknown field numbers are skipped, as upstream does.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from cluster.api.errors import BadRequest, UnsupportedMediaType
from cluster.frontend.protobuf_schema import ANY_VERSION_KINDS, KINDS, MESSAGES

MAGIC = b"k8s\x00"

# Wire types. Groups (3, 4) are legal protobuf but no Kubernetes message uses them.
VARINT, I64, LEN, I32 = 0, 1, 2, 5

SCALARS = frozenset({"s", "b", "i", "bool", "d", "f"})
SPECIALS = frozenset({"Quantity", "Time", "MicroTime", "IntOrString", "Duration", "Raw"})
# Which wire type each type arrives with; messages and specials are length-delimited.
_WIRE = {"i": VARINT, "bool": VARINT, "d": I64, "f": I32}
# Types whose zero value ``!`` decides about; messages and the other specials are kept.
_ZERO_CHECKED = SCALARS | {"IntOrString"}
# Go's zero time.Time as Unix seconds: upstream's JSON writes it as null.
_GO_ZERO_SECONDS = -62135596800
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_NS_PER_S = 1_000_000_000

_Raw = int | bytes  # a field's undecoded value: an int for numeric wire types, else the bytes
_ABSENT = object()  # what a zero time or empty RawExtension decodes to: left out of the JSON


class Field(NamedTuple):
    """One field of a message: where it goes in the JSON and how to read it."""

    json: str  # "..." when the message is embedded in its parent
    type: str  # a scalar code, a special, or a message name (see protobuf_schema)
    repeated: bool
    map: bool  # map<string, type>: repeated entries {1 key, 2 value}
    keep_zero: bool


class _Malformed(Exception):
    """A wire-format fault; ``decode`` turns it into one BadRequest line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = ""  # the innermost message being read, filled in on the way out


def decode(body: bytes | bytearray | memoryview) -> dict[str, Any]:
    """The object a protobuf request body carries, as Kubernetes JSON with apiVersion and kind.

    Raises BadRequest for a body that is not well-formed Kubernetes protobuf and
    UnsupportedMediaType (415) for a kind the schema does not cover.
    """
    body = bytes(body)  # the reader works on bytes; a bytearray or memoryview is copied once
    if not body.startswith(MAGIC):
        raise BadRequest("the request body is not Kubernetes protobuf: it does not start with k8s\\x00")
    try:
        api_version, kind, raw = _envelope(body[len(MAGIC) :])
        if not kind:
            raise BadRequest("the protobuf request body names no kind in its envelope")
        message = KINDS.get((api_version, kind)) or ANY_VERSION_KINDS.get(kind)
        if message is None:
            raise UnsupportedMediaType(
                f"the body of the request was protobuf for {api_version} {kind}, which kubemu does not "
                "decode: send it as JSON (Content-Type: application/json)"
            )
        return {"apiVersion": api_version, "kind": kind, **_message(raw, message)}
    except _Malformed as e:
        raise BadRequest(f"the protobuf request body is malformed: {e.reason} (in {e.where})") from None


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
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise _Malformed("a field has number 0")
        value: _Raw
        if wire == VARINT:
            value, pos = _varint(buf, pos)
        elif wire == LEN:
            size, pos = _varint(buf, pos)
            if size > end - pos:
                raise _Malformed(f"field {num} declares {size} bytes but only {end - pos} remain")
            value, pos = buf[pos : pos + size], pos + size
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
    return _bytes(raw).decode("utf-8", errors="replace")


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


def _message(data: bytes, name: str) -> dict[str, Any]:
    """One message of the schema as a JSON object."""
    schema = SCHEMA[name]
    out: dict[str, Any] = {}
    try:
        for num, wire, raw in _fields(data):
            field = schema.get(num)
            if field is not None:  # else a field newer than the table, or one it leaves out
                _set(out, field, num, wire, raw)
    except _Malformed as e:
        e.where = e.where or name
        raise
    return out


def _set(out: dict[str, Any], field: Field, num: int, wire: int, raw: _Raw) -> None:
    """Put one occurrence of ``field`` into ``out``: append, add a map entry, or (re)place it."""
    if field.map:
        _check_wire(num, wire, LEN, field.json)
        key, value = _map_entry(_bytes(raw), field.type)
        out.setdefault(field.json, {})[key] = None if value is _ABSENT else value
    elif field.repeated:
        items = out.setdefault(field.json, [])
        if wire == LEN and _WIRE.get(field.type, LEN) != LEN:
            items.extend(_packed(_bytes(raw), field.type))  # packed encoding; Go writes it unpacked
        else:
            items.append(_value(field.type, num, wire, raw, field.json))
    else:
        value = _value(field.type, num, wire, raw, field.json)
        if field.json == "...":
            out.update(value)
        elif value is not _ABSENT and (field.keep_zero or field.type not in _ZERO_CHECKED or value not in ("", 0)):
            out[field.json] = value


def _value(typ: str, num: int, wire: int, raw: _Raw, what: str = "") -> Any:
    """One value of type ``typ`` after checking it came with the right wire type."""
    _check_wire(num, wire, _WIRE.get(typ, LEN), what)
    if typ == "i":
        return _signed(_int(raw))
    if typ == "bool":
        return _int(raw) != 0
    if typ == "d":
        return struct.unpack("<d", _int(raw).to_bytes(8, "little"))[0]
    if typ == "f":
        return struct.unpack("<f", _int(raw).to_bytes(4, "little"))[0]
    if typ == "s":
        return _text(raw)
    if typ == "b":
        return base64.b64encode(_bytes(raw)).decode("ascii")
    special = _SPECIAL_READERS.get(typ)
    return special(_bytes(raw)) if special else _message(_bytes(raw), typ)


def _map_entry(data: bytes, typ: str) -> tuple[str, Any]:
    """Key and value of one map entry; a missing part is its type's empty value, as in Go."""
    key: str = ""
    value: Any = None
    for num, wire, raw in _fields(data):
        if num == 1:
            key = _value("s", num, wire, raw, "key")
        elif num == 2:
            value = _value(typ, num, wire, raw, "value")
    if value is None:
        wire = _WIRE.get(typ, LEN)
        value = _value(typ, 2, wire, b"" if wire == LEN else 0)
    return key, value


def _packed(data: bytes, typ: str) -> list[Any]:
    wire = _WIRE[typ]
    if wire == VARINT:
        out, pos = [], 0
        while pos < len(data):
            value, pos = _varint(data, pos)
            out.append(_value(typ, 0, VARINT, value))
        return out
    width = 8 if wire == I64 else 4
    if len(data) % width:
        raise _Malformed(f"a packed field of {len(data)} bytes is not a whole number of {width}-byte values")
    return [_value(typ, 0, wire, int.from_bytes(data[i : i + width], "little")) for i in range(0, len(data), width)]


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
    return _signed(_int(fields.get(2, 0)))


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


# --- the schema, compiled from protobuf_schema's compact text -------------------------------


def _compile_field(item: str, owner: str) -> tuple[int, Field]:
    """``'3 template:PodTemplateSpec'`` -> (3, Field(...)); see protobuf_schema for the syntax."""
    number, _, rest = item.strip().partition(" ")
    keep_zero = rest.endswith("!")
    name, _, typ = rest.rstrip("!").partition(":")
    typ = typ or "s"
    base = typ.strip("[]{}")
    if base not in SCALARS and base not in SPECIALS and base not in MESSAGES:
        raise ValueError(f"protobuf schema: {owner}.{name} has unknown type {base!r}")
    return int(number), Field(name, base, typ.startswith("["), typ.startswith("{"), keep_zero)


def _compile(messages: dict[str, str]) -> dict[str, dict[int, Field]]:
    schema: dict[str, dict[int, Field]] = {}
    for owner, spec in messages.items():
        fields: dict[int, Field] = {}
        for item in spec.split(","):
            number, field = _compile_field(item, owner)
            if number in fields:
                raise ValueError(f"protobuf schema: {owner} repeats field number {number}")
            fields[number] = field
        schema[owner] = fields
    return schema


# A typo in the table fails at import, not on the first request that reaches it.
SCHEMA: dict[str, dict[int, Field]] = _compile(MESSAGES)
