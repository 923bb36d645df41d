"""The protobuf schema kubemu reads and writes: upstream's field numbers, compiled for the codec.

Owns the model ``cluster/frontend/protobuf.py`` (decoding) and ``protobuf_encode.py`` (encoding)
walk: every message of every served kind, its fields in number order with their JSON names,
types and zero-value rules, and which message an envelope's (apiVersion, kind) names. The facts
are generated into ``protobuf_table.py`` by ``python -m cluster.api.protogen`` from upstream's
``generated.proto`` files and Go types; this module only compiles them, once, at import.

A message in the table is a comma-separated list of ``<number> <jsonName>[:<type>][flag]``:

- type, by default ``string``: ``string``, ``int32``, ``int64``, ``bool``, ``bytes`` (base64 in
  JSON), ``double``; ``Quantity``, ``Time``, ``MicroTime``, ``IntOrString``, ``Duration``, ``Raw`` (a
  RawExtension, FieldsV1 or apiextensions JSON: JSON bytes); or another message of the table.
  ``[T]`` is a repeated field, ``{T}`` a ``map<string, T>``.
- ``...`` as the JSON name: an embedded Go struct; its fields belong to the parent in JSON
  (``Volume`` carries its ``VolumeSource`` inline, ``Probe`` its ``ProbeHandler``).
- ``*``: a Go pointer (or ``[]byte``). Upstream's gogo encoder writes it only when set, and a
  present zero is a value (``replicas: 0``).
- ``!``: a Go value without ``omitempty``: JSON carries its zero, so a present zero is kept
  (and an unset list or map is JSON's ``null``).
- no flag: a Go value with ``omitempty``. Upstream writes it even when zero (every non-pointer
  field is written), so presence on the wire says nothing: a zero is dropped, as JSON omits it.
  A present message is always kept, even empty (``emptyDir: {}`` means something).
"""

from __future__ import annotations

from cluster.frontend import protobuf_table

# Wire types. Groups (3, 4) are legal protobuf but no Kubernetes message uses them.
VARINT, I64, LEN, I32 = 0, 1, 2, 5

SCALARS = frozenset({"string", "int32", "int64", "bool", "bytes", "double"})
SPECIALS = frozenset({"Quantity", "Time", "MicroTime", "IntOrString", "Duration", "Raw"})
_WIRE = {"int32": VARINT, "int64": VARINT, "bool": VARINT, "double": I64}


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint; negative numbers as Go writes them (64-bit two's complement)."""
    value &= 0xFFFFFFFFFFFFFFFF
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class Field:
    """One field: where it goes in JSON, how it is read and when upstream writes it."""

    __slots__ = (
        "number",
        "json",
        "type",
        "message",
        "repeated",
        "map",
        "pointer",
        "keep_zero",
        "wire",
        "value_wire",
        "key",
    )

    def __init__(self, number: int, json: str, typ: str, repeated: bool, is_map: bool, flag: str) -> None:
        self.number, self.json, self.type = number, json, typ
        self.message: Message | None = None  # resolved once every message is compiled
        self.repeated, self.map = repeated, is_map
        self.pointer = flag == "*"
        self.keep_zero = flag in ("*", "!")
        self.value_wire = _WIRE.get(typ, LEN)  # a map entry's value comes with this one
        self.wire = LEN if is_map else self.value_wire
        self.key = varint(number << 3 | self.wire)

    def __repr__(self) -> str:
        return f"Field({self.number} {self.json}:{self.type})"


class Message:
    """A message: its fields by number and in number order (the order upstream writes them).

    ``shape`` names a JSON form of its own: ``list`` for a Go named slice (``Verbs``: the JSON is
    the ``items`` array), or ``SchemaOrArray``/``SchemaOrBool``/``SchemaOrStringArray``."""

    __slots__ = ("name", "fields", "by_number", "shape", "inline_keys", "nulls")

    def __init__(self, name: str, fields: list[Field], shape: str) -> None:
        self.name, self.shape = name, shape
        self.fields = tuple(sorted(fields, key=lambda f: f.number))
        self.by_number = {f.number: f for f in self.fields}
        self.inline_keys: frozenset[str] = frozenset()
        # Lists and maps without omitempty: Go's JSON writes null for an unset one, and so does decode.
        self.nulls = tuple(f.json for f in self.fields if f.repeated and f.keep_zero)

    def __repr__(self) -> str:
        return f"Message({self.name})"


def _field(item: str, owner: str, names: set[str]) -> Field:
    """``'3 template:core.v1.PodTemplateSpec!'`` -> Field."""
    number, _, rest = item.strip().partition(" ")
    flag = rest[-1] if rest[-1:] in ("*", "!") else ""
    json_name, _, typ = rest.rstrip("*!").partition(":")
    typ = typ or "string"
    base = typ.strip("[]{}")
    if base not in SCALARS and base not in SPECIALS and base not in names:
        raise ValueError(f"protobuf schema: {owner}.{json_name} has unknown type {base!r}")
    return Field(int(number), json_name, base, typ.startswith("[") or typ.startswith("{"), typ.startswith("{"), flag)


def compile_messages(
    table: dict[str, str], wrappers: frozenset[str] = frozenset(), shaped: dict[str, str] | None = None
) -> dict[str, Message]:
    """The table compiled: every message by name, its message-typed fields resolved."""
    shaped = shaped or {}
    names = set(table)
    messages: dict[str, Message] = {}
    for owner, spec in table.items():
        fields: list[Field] = []
        seen: set[int] = set()
        for item in spec.split(",") if spec.strip() else ():
            f = _field(item, owner, names)
            if f.number in seen:
                raise ValueError(f"protobuf schema: {owner} repeats field number {f.number}")
            seen.add(f.number)
            fields.append(f)
        shape = "list" if owner in wrappers else shaped.get(owner, "")
        messages[owner] = Message(owner, fields, shape)
    for message in messages.values():
        for f in message.fields:
            f.message = messages.get(f.type)
    for message in messages.values():
        message.inline_keys = frozenset(_json_keys(message))
    return messages


def _json_keys(message: Message) -> set[str]:
    """The JSON keys a message's fields take, with those of its embedded structs."""
    keys: set[str] = set()
    for f in message.fields:
        if f.json == "..." and f.message is not None:
            keys |= _json_keys(f.message)
        else:
            keys.add(f.json)
    return keys


# A typo in the table fails at import, not on the first request that reaches it.
MESSAGES: dict[str, Message] = compile_messages(
    protobuf_table.MESSAGES, protobuf_table.LIST_WRAPPERS, protobuf_table.SHAPED
)


def lookup(api_version: str, kind: str) -> Message | None:
    """The message an envelope's apiVersion and kind name, or None when kubemu has none (a
    custom resource, a kind not served, a version not served)."""
    name = protobuf_table.KINDS.get(f"{api_version} {kind}") or protobuf_table.ANY_VERSION_KINDS.get(kind)
    return MESSAGES[name] if name is not None else None
