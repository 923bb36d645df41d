"""The schema of every built-in kind kubemu serves: its fields, their JSON names and Go types.

Owns the one answer to "which fields does upstream's typed decoder know, and of what type" for
each kind in ``kinds.RESOURCES``. The facts come from upstream's OpenAPI definitions of the release
kubemu advertises (v1.33), generated into ``schema_table.py`` by ``cluster/api/schemagen.py`` from the
``kubernetes-validate`` package; nothing here is written by hand but the names of the Go types that
decode themselves. kubemu's own group (``kubemu.io``), which upstream's definitions lack, is
written by hand in the same notation in ``schema_kubemu.py`` and read beside the generated
table. Read by the HTTP front end's field validation
(``cluster/frontend/fieldvalidation.py``) on every create, update and patch.

A field's type is a ``Type``: a ``code`` (below), and for structs the ``Struct``, for lists and
maps the element ``Type``. ``go`` is the Go type as ``encoding/json`` names it in its messages
(``int32``, ``[]v1.Container``, ``map[string]string``, ``v1.NodeAffinity``). The int32/int64
distinction is the OpenAPI ``format`` of each integer field. Named Go types over strings and maps
(``v1.Protocol``, ``v1.ResourceList``, ``types.UID``) are not in the definitions: ``go`` gives their
underlying type (``string``, ``map[string]resource.Quantity``).

The table parses on first use (about 3 ms) and is cached for the process.
"""

from __future__ import annotations

from functools import cache

from . import schema_kubemu, schema_table

# The generated table and kubemu's own group's hand-written one, read as one.
_KINDS = {**schema_table.KINDS, **schema_kubemu.KINDS}
_STRUCTS = {**schema_table.STRUCTS, **schema_kubemu.STRUCTS}
_REQUIRED = {**schema_table.REQUIRED, **schema_kubemu.REQUIRED}
_PATCH = {**schema_table.PATCH, **schema_kubemu.PATCH}

# Type codes. Scalars first; STRUCT, LIST and MAP carry more.
STRING = 0
INT32 = 1
INT64 = 2
BOOL = 3
FLOAT64 = 4
BYTES = 5  # []byte: a base64 string on the wire (Secret.data)
QUANTITY = 6  # resource.Quantity: a quantity string or a number
INT_OR_STRING = 7  # intstr.IntOrString
TIME = 8  # metav1.Time: RFC 3339
MICRO_TIME = 9  # metav1.MicroTime: RFC 3339 with six fraction digits
ANY = 10  # RawExtension, FieldsV1, apiextensions JSON: any JSON, kept as sent
SCHEMA_OR_ARRAY = 11  # apiextensions JSONSchemaPropsOrArray
SCHEMA_OR_BOOL = 12  # apiextensions JSONSchemaPropsOrBool
SCHEMA_OR_STRINGS = 13  # apiextensions JSONSchemaPropsOrStringArray
STRUCT = 14
LIST = 15
MAP = 16

_SCALARS = {
    "string": (STRING, "string"),
    "int32": (INT32, "int32"),
    "int64": (INT64, "int64"),
    "bool": (BOOL, "bool"),
    "float64": (FLOAT64, "float64"),
    "bytes": (BYTES, "[]uint8"),
    "Quantity": (QUANTITY, "resource.Quantity"),
    "IntOrString": (INT_OR_STRING, "intstr.IntOrString"),
    "Time": (TIME, "v1.Time"),
    "MicroTime": (MICRO_TIME, "v1.MicroTime"),
    "any": (ANY, "interface {}"),
    "SchemaOrArray": (SCHEMA_OR_ARRAY, "v1.JSONSchemaPropsOrArray"),
    "SchemaOrBool": (SCHEMA_OR_BOOL, "v1.JSONSchemaPropsOrBool"),
    "SchemaOrStringArray": (SCHEMA_OR_STRINGS, "v1.JSONSchemaPropsOrStringArray"),
}


class Struct:
    """One Go struct: ``name`` as Go spells it (``DeploymentSpec``), ``package`` (``apps.v1``)
    and its fields by JSON name."""

    __slots__ = ("name", "package", "fields", "go", "required", "patch")

    def __init__(self, key: str) -> None:
        self.package, _, self.name = key.rpartition(".")
        self.go = f"{self.package.rpartition('.')[2]}.{self.name}"  # v1.DeploymentSpec
        self.fields: dict[str, Type] = {}
        # What the OpenAPI documents publish (cluster/frontend/openapi_schemas.py): the fields
        # upstream marks required, and field -> its x-kubernetes-patch-strategy[:merge key].
        self.required: tuple[str, ...] = tuple(_REQUIRED.get(key, "").split())
        self.patch: dict[str, str] = dict(tag.split("=", 1) for tag in _PATCH.get(key, "").split())

    def __repr__(self) -> str:
        return f"Struct({self.package}.{self.name})"


class Type:
    """A field's type. ``keys``: a list's map keys (``x-kubernetes-list-map-keys``), which
    server-side apply names list items by."""

    __slots__ = ("code", "go", "struct", "elem", "keys")

    def __init__(
        self,
        code: int,
        go: str,
        struct: Struct | None = None,
        elem: Type | None = None,
        keys: tuple[str, ...] = (),
    ) -> None:
        self.code, self.go, self.struct, self.elem, self.keys = code, go, struct, elem, keys

    def __repr__(self) -> str:
        return f"Type({self.go})"


class _Builder:
    def __init__(self) -> None:
        self.structs: dict[str, Struct] = {}
        self.scalars = {name: Type(code, go) for name, (code, go) in _SCALARS.items()}

    def struct(self, key: str) -> Struct:
        s = self.structs.get(key)
        if s is None:
            s = self.structs[key] = Struct(key)  # registered first: a struct may contain itself
            for spec in _STRUCTS[key].split():
                field, _, type_spec = spec.partition(":")
                s.fields[field] = self.type(type_spec)
        return s

    def type(self, spec: str) -> Type:
        if spec in self.scalars:
            return self.scalars[spec]
        if spec.startswith("["):
            inner, _, keys = spec[1:].rpartition("]")
            elem = self.type(inner)
            return Type(LIST, f"[]{elem.go}", elem=elem, keys=tuple(keys.split(",")) if keys else ())
        if spec.startswith("{"):
            elem = self.type(spec[1:-1])
            return Type(MAP, f"map[string]{elem.go}", elem=elem)
        s = self.struct(spec)
        return Type(STRUCT, s.go, struct=s)


@cache
def _built() -> _Builder:
    b = _Builder()
    for key in _KINDS.values():
        b.struct(key)
    return b


RELEASE = schema_table.RELEASE


def kind_struct(kind: str) -> Struct | None:
    """The top-level struct of a built-in kind (``Deployment`` -> ``apps.v1.Deployment``), or
    None for a kind without a built-in schema (a custom resource)."""
    key = _KINDS.get(kind)
    return _built().structs[key] if key is not None else None


def kind_type(kind: str) -> Type | None:
    """``kind_struct`` as a ``Type``: where a walk over an object starts. ``kind`` may also
    be a ``VERSIONED`` key (``autoscaling/v1 HorizontalPodAutoscaler``): a kind served at a
    second version, or only created (``cluster/frontend/views.py``, ``reviews.py``)."""
    return _kind_types().get(kind)


@cache
def _kind_types() -> dict[str, Type]:
    out: dict[str, Type] = {}
    for kind, key in (*_KINDS.items(), *schema_table.VERSIONED.items()):
        s = struct(key)
        out[kind] = Type(STRUCT, s.go, struct=s)
    return out


def struct(key: str) -> Struct:
    """A struct by its table key (``meta.v1.ObjectMeta``); KeyError if the table lacks it."""
    return _built().struct(key)


def kinds() -> tuple[str, ...]:
    """Every kind the table describes (the built-in kinds of ``kinds.RESOURCES``)."""
    return tuple(_KINDS)


def field_type(kind: str, path: str) -> Type | None:
    """The type at a dotted JSON path (``spec.template.spec.containers.ports``; list items are
    walked through without an index), or None when the kind or a step is unknown."""
    t = kind_type(kind)
    for step in path.split(".") if path else ():
        while t is not None and t.code in (LIST, MAP):
            t = t.elem
        if t is None or t.struct is None:
            return None
        t = t.struct.fields.get(step)
    return t
