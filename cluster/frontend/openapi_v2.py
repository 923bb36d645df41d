"""``/openapi/v2``: the Swagger 2.0 document of every served kind, as JSON or as the gnostic
protobuf (``openapi.v2.Document``) kubectl 1.27 and 1.28 read.

Owns the v2 document and its wire forms. Those kubectl versions build their schema
validator from ``/openapi/v2`` before ``create``/``apply``/``replace``, and a 404 there ends the
command; they then look for each object's kind in the paths: a ``patch`` operation whose
``x-kubernetes-group-version-kind`` is the kind and whose parameters name ``fieldValidation``
lets them hand validation to the server.
The paths come from ``discovery.endpoints`` (for every resource discovery lists); the v3
documents (``openapi_v3.py``) are converted from the same path items. ``definitions`` are
``openapi_schemas``' models: every kind (custom ones from their definitions' schemas), its
list and what they reach, which kubectl reads for ``explain --output plaintext-openapiv2``,
for the strategic merge patches of 1.27 and 1.28 ``apply``, and for the client-side
validation of ``kind: List`` files (which no kubectl hands to the server's).
The protobuf is written here from the field numbers of gnostic's ``OpenAPIv2.proto``,
translating the JSON as gnostic's compiler does (``ToProtoBinary`` upstream). The document
is built once per set of served kinds and custom resource definitions (an edit of one
changes it). Called by ``discovery.answer``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import orjson
import yaml

from ..api.kinds import Resource
from . import openapi_schemas as schemas
from .discovery import VERSION, Endpoint, endpoints, etag, parse_accept
from .protobuf_schema import I64, LEN, VARINT
from .protobuf_schema import varint as _varint  # one varint writer for every protobuf kubemu writes
from .wire import JSON, Response, dumps

# What upstream's handler answers each accepted type with (kube-openapi handler.go): the
# "@" form kubectl sends is deprecated and answered with the "." form.
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
PROTOBUF_DEPRECATED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_ACCEPTED = ((JSON, JSON), (PROTOBUF_DEPRECATED, PROTOBUF), (PROTOBUF, PROTOBUF))

# -- the document ----------------------------------------------------------------------

_QUERY_TYPES = {
    **dict.fromkeys(("allowWatchBookmarks", "force", "orphanDependents", "sendInitialEvents", "watch"), "boolean"),
    **dict.fromkeys(("follow", "insecureSkipTLSVerifyBackend", "previous", "timestamps"), "boolean"),
    **dict.fromkeys(("gracePeriodSeconds", "limit", "timeoutSeconds"), "integer"),
    **dict.fromkeys(("limitBytes", "sinceSeconds", "tailLines"), "integer"),
}
_LIST = tuple(
    "allowWatchBookmarks continue fieldSelector labelSelector limit resourceVersion"
    " resourceVersionMatch sendInitialEvents timeoutSeconds watch".split()
)
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = ("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy")
_LOG = tuple(
    "container follow insecureSkipTLSVerifyBackend limitBytes previous sinceSeconds tailLines timestamps".split()
)


class _Verb(NamedTuple):
    method: str
    action: str  # x-kubernetes-action
    op_prefix: str  # of the operationId, as upstream names them
    query: tuple[str, ...]
    body: str  # "kind", a meta model's name, or "" for none
    codes: tuple[str, ...]


_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_VERBS = {
    "list": _Verb("get", "list", "list", _LIST, "", ("200",)),
    "create": _Verb("post", "post", "create", _WRITE, "kind", ("200", "201", "202")),
    "deletecollection": _Verb("delete", "deletecollection", "delete", _LIST + _DELETE, "DeleteOptions", ("200",)),
    "get": _Verb("get", "get", "read", (), "", ("200",)),
    "update": _Verb("put", "put", "replace", _WRITE, "kind", ("200", "201")),
    "patch": _Verb("patch", "patch", "patch", (*_WRITE, "force"), "Patch", ("200", "201")),
    "delete": _Verb("delete", "delete", "delete", _DELETE, "DeleteOptions", ("200", "202")),
}
_CODES = {"200": "OK", "201": "Created", "202": "Accepted"}
_PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
_PRODUCES = [JSON, "application/yaml", "application/vnd.kubernetes.protobuf"]


def model_name(r: Resource) -> str:
    """The definitions key of ``r``'s schema, as upstream names it: the Go package path of a
    built-in kind, the reversed group of a custom one."""
    return schemas.model_name(r.group, r.version, r.kind, schemas.is_custom(r))


def _ident(group: str) -> str:
    """A group as upstream's operationIds spell it: "" Core, rbac.authorization.k8s.io RbacAuthorization."""
    parts = group.removesuffix(".k8s.io").split(".") if group else ["core"]
    return "".join(p[:1].upper() + p[1:] for p in parts)


def _param(name: str, where: str = "query") -> dict[str, Any]:
    param = {"name": name, "in": where, "type": _QUERY_TYPES.get(name, "string"), "uniqueItems": True}
    return {**param, "required": True} if where == "path" else param


def _schema(model: str, definitions: Mapping[str, Any], fallback: str = "object") -> dict[str, Any]:
    return {"$ref": f"#/definitions/{model}"} if model in definitions else {"type": fallback}


def _operation(r: Resource, e: Endpoint, verb: str, definitions: Mapping[str, Any]) -> dict[str, Any]:
    spec = _VERBS[verb]
    own = e.gvk == {"group": r.group, "version": r.version, "kind": r.kind}  # not scale, eviction...
    custom = schemas.is_custom(r)
    kind_model = (
        "" if e.part == "log" else schemas.model_name(e.gvk["group"], e.gvk["version"], e.gvk["kind"], custom and own)
    )
    subject = r.kind if e.part in ("collection", "object") else r.kind + e.part.title()
    scope = ("Collection" if verb == "deletecollection" else "") + ("Namespaced" if r.namespaced else "")
    answer = _schema(_META + "Status" if spec.method == "delete" else kind_model, definitions)
    if e.part == "log":
        answer = {"type": "string"}
    elif verb == "list":
        answer = _schema(kind_model + "List", definitions)
    patch_types = (
        _PATCH_TYPES if custom else [*_PATCH_TYPES[:2], "application/strategic-merge-patch+json", _PATCH_TYPES[2]]
    )
    op: dict[str, Any] = {
        "operationId": f"{spec.op_prefix}{_ident(r.group)}{_ident(r.version)}{scope}{subject}",
        "consumes": patch_types if verb == "patch" else ["*/*"],
        "produces": ["text/plain"] if e.part == "log" else _PRODUCES[:2] if custom else _PRODUCES,
        "responses": {
            **{code: {"description": _CODES[code], "schema": answer} for code in spec.codes},
            "401": {"description": "Unauthorized"},
        },
        "x-kubernetes-action": spec.action,
        "x-kubernetes-group-version-kind": e.gvk,
    }
    params = [_param(name) for name in (_LOG if e.part == "log" else spec.query)]
    if spec.body:
        body_model = kind_model if spec.body == "kind" else _META + spec.body
        body = {"name": "body", "in": "body", "schema": _schema(body_model, definitions)}
        params.insert(0, {**body, "required": True} if spec.body != "DeleteOptions" else body)
    if params:  # upstream leaves the key out when there are none
        op["parameters"] = params
    return op


def path_items(resources: Sequence[Resource], definitions: Mapping[str, Any]) -> dict[str, Any]:
    """For each endpoint of ``resources``, its path item: one operation per verb (sorted by path,
    as upstream's JSON writes its path map). Bodies and answers refer to ``definitions``' models."""
    paths: dict[str, Any] = {}
    for r in resources:
        for e in endpoints(r):
            item: dict[str, Any] = {_VERBS[verb].method: _operation(r, e, verb, definitions) for verb in e.verbs}
            shared = [] if e.part == "collection" else [_param("name", "path")]
            shared += [_param("namespace", "path")] if "{namespace}" in e.path else []
            item["parameters"] = [*shared, _param("pretty")]
            paths[e.path] = item
    return dict(sorted(paths.items()))


BEARER = {"type": "apiKey", "name": "authorization", "in": "header", "description": "Bearer Token authentication"}


def build(resources: Sequence[Resource], definitions: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The Swagger 2.0 document of ``resources``: their path items, and of ``definitions`` the
    models those and the kinds refer to."""
    paths = path_items(resources, definitions)
    roots = [*schemas.refs(paths), *(model_name(r) for r in resources)]
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
        "paths": paths,
        "definitions": schemas.closure(roots, definitions),
        "securityDefinitions": {"BearerToken": BEARER},
        "security": [{"BearerToken": []}],
    }


# -- the gnostic protobuf ----------------------------------------------------------------
# How gnostic's compiler reads each JSON object into a message: key -> (field number, type).
# Types: "s" string, "b" bool, "i" int64, "d" double, "any" (gnostic Any: the value as
# YAML), or a message name; a trailing "*" repeats. Key "x-" is the vendor_extension field
# (NamedAny) that every "x-..." key goes to. Keys a message does not know are dropped.
_BOUNDS = "maximum:d exclusiveMaximum:b minimum:d exclusiveMinimum:b maxLength:i minLength:i pattern:s"
_BOUNDS += " maxItems:i minItems:i uniqueItems:b"
_VALIDATIONS = f"{_BOUNDS} enum:any* multipleOf:d"
_PRIMITIVE = f"type:s format:s items:PrimitivesItems collectionFormat:s default:any {_VALIDATIONS}"
_SPECS = {
    "Document": "swagger:s info:Info host:s basePath:s schemes:s* consumes:s* produces:s* paths:Paths"
    " definitions:Definitions parameters:ParameterDefinitions responses:ResponseDefinitions"
    " security:SecurityRequirement* securityDefinitions:SecurityDefinitions tags:Tag*"
    " externalDocs:ExternalDocs x-",
    "Info": "title:s version:s description:s termsOfService:s contact:Contact license:License x-",
    "Contact": "name:s url:s email:s x-",
    "License": "name:s url:s x-",
    "ExternalDocs": "description:s url:s x-",
    "Tag": "name:s description:s externalDocs:ExternalDocs x-",
    "PathItem": "$ref:s get:Operation put:Operation post:Operation delete:Operation options:Operation"
    " head:Operation patch:Operation parameters:ParametersItem* x-",
    "Operation": "tags:s* summary:s description:s externalDocs:ExternalDocs operationId:s produces:s*"
    " consumes:s* parameters:ParametersItem* responses:Responses schemes:s* deprecated:b"
    " security:SecurityRequirement* x-",
    "BodyParameter": "description:s name:s in:s required:b schema:Schema x-",
    "QueryParameterSubSchema": f"required:b in:s description:s name:s allowEmptyValue:b {_PRIMITIVE} x-",
    "FormDataParameterSubSchema": f"required:b in:s description:s name:s allowEmptyValue:b {_PRIMITIVE} x-",
    "HeaderParameterSubSchema": f"required:b in:s description:s name:s {_PRIMITIVE} x-",
    "PathParameterSubSchema": f"required:b in:s description:s name:s {_PRIMITIVE} x-",
    "PrimitivesItems": f"{_PRIMITIVE} x-",
    "Header": f"{_PRIMITIVE} description:s x-",
    "JsonReference": "$ref:s description:s",
    "Response": "description:s schema:SchemaItem headers:Headers examples:Examples x-",
    "Schema": f"$ref:s format:s title:s description:s default:any multipleOf:d {_BOUNDS}"
    " maxProperties:i minProperties:i required:s* enum:any* additionalProperties:AdditionalPropertiesItem"
    " type:TypeItem items:ItemsItem allOf:Schema* properties:Properties discriminator:s readOnly:b"
    " xml:Xml externalDocs:ExternalDocs example:any x-",
    "FileSchema": "format:s title:s description:s default:any required:s* type:s readOnly:b"
    " externalDocs:ExternalDocs example:any x-",
    "Xml": "name:s namespace:s prefix:s attribute:b wrapped:b x-",
    "ApiKeySecurity": "type:s name:s in:s description:s x-",
    "BasicAuthenticationSecurity": "type:s description:s x-",
    "TypeItem": "value:s*",
    "ItemsItem": "schema:Schema*",
    "StringArray": "value:s*",
}
# Messages that are a JSON object's entries: (field of the entries, the values' type, field
# of "x-..." entries or 0); an entry is {1 name, 2 value}. Paths takes only "/..." keys.
_NAMED = {
    "Paths": (2, "PathItem", 1),
    "Definitions": (1, "Schema", 0),
    "Properties": (1, "Schema", 0),
    "ParameterDefinitions": (1, "Parameter", 0),
    "ResponseDefinitions": (1, "Response", 0),
    "Responses": (1, "ResponseValue", 2),
    "SecurityDefinitions": (1, "SecurityDefinitionsItem", 0),
    "SecurityRequirement": (1, "StringArray", 0),
    "Headers": (1, "Header", 0),
    "Examples": (1, "any", 0),
}
_IN = {"header": (1, "HeaderParameterSubSchema"), "formData": (2, "FormDataParameterSubSchema")}
_IN |= {"query": (3, "QueryParameterSubSchema"), "path": (4, "PathParameterSubSchema")}
_SECURITY = {"basic": (1, "BasicAuthenticationSecurity"), "apiKey": (2, "ApiKeySecurity")}


def _ref_or(message: str) -> Callable[[Any], tuple[int, str] | None]:
    return lambda v: (2, "JsonReference") if "$ref" in v else (1, message)


# Oneof messages: which member (field, type) a JSON value is, as gnostic's compiler picks it.
_ONEOF: dict[str, Callable[[Any], tuple[int, str] | None]] = {
    "ParametersItem": _ref_or("Parameter"),
    "ResponseValue": _ref_or("Response"),
    "Parameter": lambda v: (1, "BodyParameter") if v.get("in") == "body" else (2, "NonBodyParameter"),
    "NonBodyParameter": lambda v: _IN.get(v.get("in")),
    "SchemaItem": lambda v: (2, "FileSchema") if v.get("type") == "file" else (1, "Schema"),
    "AdditionalPropertiesItem": lambda v: (2, "b") if isinstance(v, bool) else (1, "Schema"),
    "SecurityDefinitionsItem": lambda v: _SECURITY.get(v.get("type")),
}
# Messages a JSON scalar or list stands for (``"type": "object"`` is a TypeItem).
_WRAPPED: dict[str, Callable[[Any], dict[str, Any]]] = {
    "TypeItem": lambda v: {"value": v if isinstance(v, list) else [v]},
    "ItemsItem": lambda v: {"schema": v if isinstance(v, list) else [v]},
    "StringArray": lambda v: {"value": v},
}


def _compile(spec: str) -> dict[str, tuple[int, str]]:
    """A _SPECS line as {key: (field number, type)}: the keys are numbered in order from 1."""
    fields = {}
    for number, item in enumerate(spec.split(), 1):
        key, _, typ = item.partition(":")
        fields[key] = (number, typ)
    return fields


_MESSAGES = {name: _compile(spec) for name, spec in _SPECS.items()}


def _len(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | LEN) + _varint(len(data)) + data


_YAML: dict[bytes, str] = {}


def _any(value: Any) -> bytes:
    """gnostic's Any: {2 yaml}, the value written as block YAML (its compiler.Marshal)."""
    key = orjson.dumps(value)  # the same few extension values recur on every path
    if key not in _YAML:
        text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False, allow_unicode=True)
        _YAML[key] = text.removesuffix("...\n")  # PyYAML ends a lone scalar so; Go does not
    return _len(2, _YAML[key].encode())


def _field(number: int, typ: str, value: Any, oneof: bool = False) -> bytes:
    """One field; proto3 leaves out a zero scalar unless it is a oneof's member."""
    if typ.endswith("*"):
        return b"".join(_field(number, typ[:-1], item, True) for item in value)
    if typ == "s":
        return _len(number, value.encode()) if value or oneof else b""
    if typ in ("b", "i"):
        return _varint(number << 3 | VARINT) + _varint(int(value)) if value or oneof else b""
    if typ == "d":
        return _varint(number << 3 | I64) + struct.pack("<d", value) if value or oneof else b""
    return _len(number, _any(value) if typ == "any" else _message(typ, value))


def _message(name: str, value: Any) -> bytes:
    if name in _ONEOF:
        member = _ONEOF[name](value)
        return _field(*member, value, oneof=True) if member else b""
    if name in _WRAPPED:
        value = _WRAPPED[name](value)
    if name in _NAMED:
        return _named(name, value)
    fields = _MESSAGES[name]
    parts: list[tuple[int, bytes]] = []
    for key, item in value.items():
        if key.startswith("x-") and "x-" in fields:
            extension = _len(1, key.encode()) + _len(2, _any(item))
            parts.append((fields["x-"][0], _len(fields["x-"][0], extension)))
        elif key in fields:
            parts.append((fields[key][0], _field(*fields[key], item)))
    return b"".join(data for _, data in sorted(parts, key=lambda p: p[0]))  # Go writes by number


def _named(name: str, value: Mapping[str, Any]) -> bytes:
    entries, typ, extensions = _NAMED[name]
    parts: list[tuple[int, bytes]] = []
    for key, item in value.items():
        if extensions and key.startswith("x-"):
            number, inner = extensions, _any(item)
        elif name == "Paths" and not key.startswith("/"):
            continue  # gnostic takes only "/..." and "x-..." keys there
        else:
            number, inner = entries, _any(item) if typ == "any" else _message(typ, item)
        parts.append((number, _len(number, _len(1, key.encode()) + _len(2, inner))))
    return b"".join(data for _, data in sorted(parts, key=lambda p: p[0]))


def to_protobuf(doc: Mapping[str, Any]) -> bytes:
    """``doc`` as the gnostic ``openapi.v2.Document`` message (no envelope, as upstream)."""
    return _message("Document", doc)


# -- serving -----------------------------------------------------------------------------


class Built(NamedTuple):
    json: bytes
    protobuf: bytes
    etag: str  # upstream's: quoted upper-case hex SHA-512 of the JSON, for both encodings


_BUILT: dict[tuple[Any, ...], Built] = {}


def document(crds: Sequence[Mapping[str, Any]] = ()) -> Built:
    """The document of the kinds served now (views, reviews and metrics too, as discovery lists them),
    custom ones described by their definitions among ``crds``; built once per set of kinds (a
    definition created or deleted changes it) and of those definitions' resourceVersions (an
    edit changes them)."""
    resources = schemas.described()
    key = (*resources, schemas.crd_fingerprint(resources, crds))
    built = _BUILT.get(key)
    if built is None:
        _BUILT.clear()  # only the newest set of kinds is ever asked for again
        _YAML.clear()
        doc = build(resources, schemas.models(resources, crds, v2=True))
        built = Built(dumps(doc), to_protobuf(doc), etag(doc))
        _BUILT[key] = built
    return built


def _matches(if_none_match: str, tag: str) -> bool:
    """Go's http.ServeContent reading of If-None-Match: "*", or a list compared weakly."""
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == tag:
            return True
    return False


def answer(headers: Mapping[str, str], crds: Sequence[Mapping[str, Any]] = ()) -> Response:
    """``/openapi/v2`` for the request's headers (lower-case names): the first Accept clause
    naming JSON or the protobuf picks the encoding (no Accept: JSON); 406 with no body when
    none does, as upstream's handler. ``crds``: the stored custom resource definitions."""
    built = document(crds)
    for clause in parse_accept(headers.get("accept") or "*/*"):
        for media_type, content_type in _ACCEPTED:
            if clause.matches(media_type):
                answered = (("ETag", built.etag), ("Vary", "Accept"))
                if _matches(headers.get("if-none-match", ""), built.etag):
                    return Response(304, b"", content_type, answered)
                body = built.json if content_type == JSON else built.protobuf
                return Response(200, body, content_type, answered)
    return Response(406, b"", "text/plain; charset=utf-8", (("Vary", "Accept"),))
