"""The models of the OpenAPI documents: each served kind, its list, and every struct they
reach, as upstream names and shapes them, in the Swagger 2.0 form of ``/openapi/v2``
(``#/definitions/...``) and the OpenAPI 3.0 form of ``/openapi/v3/<gv>``
(``#/components/schemas/...``).

Owns how the one field schema (``cluster/api/schema.py``, generated from upstream's
definitions) becomes OpenAPI, which ``kubectl explain`` walks and which kubectl's apply and
client-side validation read: the int32/int64/double/byte formats, Quantity, IntOrString and
Time as upstream's named models (v3 in its ``oneOf`` forms), required fields, list-map keys,
``x-kubernetes-group-version-kind`` on every kind and list, and the patch strategies. A
list's merge key is the one the server merges by (``strategicpatch``'s table), so a kubectl
that computes a strategic merge patch from these documents sends what the server applies;
``retainKeys`` and ``replace`` are upstream's tags. Descriptions are kubemu's own, on kinds
and common fields, and on every field of kubemu's own group (``schema_kubemu.py``, whose
models are named ``io.kubemu.<version>.<Kind>`` as a custom kind's would be). Custom kinds are their definition's ``openAPIV3Schema`` for the served version, made
kube-native (metadata, apiVersion, kind; embedded resources) as upstream's CRD builder
makes it, and for v2 cut down to what kubectl's v2 reader copes with. Built-in models are
built once per process; called by ``openapi_v2.py`` and ``openapi_v3.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from ..api import kindspec, schema_kubemu
from ..api import schema as sch
from ..api.kinds import BY_KIND, CUSTOM, Resource, discoverable
from ..api.strategicpatch import _list_strategy  # how the server merges each list: one table
from . import metricsapi
from . import openapi_descriptions as descriptions
from .openapi_descriptions import field_description

Schema = dict[str, Any]
V2_REF, V3_REF = "#/definitions/", "#/components/schemas/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CRD_KIND = "CustomResourceDefinition"

# Upstream's Go package of the table's API groups that are not under k8s.io/api.
_PACKAGES = {
    "meta": "io.k8s.apimachinery.pkg.apis.meta",
    "apiextensions": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions",
    "apiregistration": "io.k8s.kube-aggregator.pkg.apis.apiregistration",
    "metrics": "io.k8s.metrics.pkg.apis.metrics",
    "kubemu": "io.kubemu",  # kubemu's own group (schema_kubemu.py): named as a custom kind would be
}
_EXTENSIONS = _PACKAGES["apiextensions"] + ".v1."
_DATE_TIME = {"type": "string", "format": "date-time"}
# Types that decode themselves: their model, its v2 form, its v3 form (kube-openapi's
# OpenAPIV3OneOfTypes where they have one).
_SPECIAL: dict[int, tuple[str, Schema, Schema]] = {
    sch.QUANTITY: (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        {"type": "string"},
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
    ),
    sch.INT_OR_STRING: (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        {"type": "string", "format": "int-or-string"},
        {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    ),
    sch.TIME: (META + "Time", _DATE_TIME, _DATE_TIME),
    sch.MICRO_TIME: (META + "MicroTime", _DATE_TIME, _DATE_TIME),
    sch.SCHEMA_OR_ARRAY: (_EXTENSIONS + "JSONSchemaPropsOrArray", {}, {}),
    sch.SCHEMA_OR_BOOL: (_EXTENSIONS + "JSONSchemaPropsOrBool", {}, {}),
    sch.SCHEMA_OR_STRINGS: (_EXTENSIONS + "JSONSchemaPropsOrStringArray", {}, {}),
}
_SCALARS: dict[int, Schema] = {
    sch.STRING: {"type": "string"},
    sch.INT32: {"type": "integer", "format": "int32"},
    sch.INT64: {"type": "integer", "format": "int64"},
    sch.BOOL: {"type": "boolean"},
    sch.FLOAT64: {"type": "number", "format": "double"},
    sch.BYTES: {"type": "string", "format": "byte"},
    # RawExtension, FieldsV1, JSON: no type (kubectl's v2 reader takes any value), and not
    # empty (kubectl explain's template refuses an empty schema).
    sch.ANY: {"description": "Any JSON value, kept as sent."},
}
# Models the paths answer with or take besides the kinds (openapi_v2's operations), and the
# kinds of the scale, eviction and binding subresources with their group-version-kind.
_PATH_MODELS = ("meta.v1.Status", "meta.v1.DeleteOptions", "meta.v1.Patch", "meta.v1.ListMeta")
_SUBRESOURCE_KINDS = (("autoscaling", "v1", "Scale"), ("policy", "v1", "Eviction"), ("", "v1", "Binding"))


def model_name(group: str, version: str, kind: str, custom: bool = False) -> str:
    """A kind's model as upstream names it: the Go package of a built-in kind
    (``io.k8s.api.apps.v1.Deployment``), the reversed group of a custom one (``com.example.v1.Widget``)."""
    if custom:
        return ".".join([*reversed(group.split(".")), version, kind])
    package = group.split(".")[0] or "core"
    return f"{_PACKAGES.get(package, 'io.k8s.api.' + package)}.{version}.{kind}"


def struct_model(s: sch.Struct) -> str:
    group, version = s.package.split(".")
    return model_name(group if group != "core" else "", version, s.name)


def is_custom(r: Resource) -> bool:
    # Any served version of a custom kind (``CUSTOM`` holds its storage version only).
    return r.kind in CUSTOM and (CUSTOM[r.kind].group, CUSTOM[r.kind].plural) == (r.group, r.plural)


def gvk(r: Resource, kind: str = "") -> dict[str, str]:
    return {"group": r.group, "version": r.version, "kind": kind or r.kind}


def ref(model: str, v2: bool, **extra: Any) -> Schema:
    """A reference to ``model``: plain in v2; in v3 wrapped in ``allOf`` as upstream writes it,
    which keeps sibling keys (a patch strategy) meaningful."""
    if v2:
        return {"$ref": V2_REF + model, **extra}
    return {"allOf": [{"$ref": V3_REF + model}], **extra}


def refs(schema: Any) -> Iterator[str]:
    """The models a schema (or a document's paths) refers to, by name."""
    if isinstance(schema, dict):
        target = schema.get("$ref")
        if isinstance(target, str) and target.startswith(("#/definitions/", "#/components/schemas/")):
            yield target.rpartition("/")[2]
        for value in schema.values():
            yield from refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from refs(value)


def closure(roots: Iterable[str], models: Mapping[str, Schema]) -> dict[str, Schema]:
    """``roots`` and every model they reach, sorted by name (as upstream's JSON writes them)."""
    found: set[str] = set()
    todo = [name for name in roots if name in models]
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo.extend(target for target in refs(models[name]) if target in models and target not in found)
    return {name: models[name] for name in sorted(found)}


# -- built-in kinds ---------------------------------------------------------------------------


def kind_struct(r: Resource) -> sch.Struct:
    """The struct of a built-in resource: the stored kind's, or a view's or review's."""
    stored = BY_KIND.get(r.kind) == r
    t = sch.kind_type(r.kind) if stored else sch.kind_type(f"{r.api_version} {r.kind}")
    if t is None or t.struct is None:
        raise KeyError(f"no schema for {r.api_version} {r.kind}")
    return t.struct


def _key(s: sch.Struct) -> str:
    return f"{s.package}.{s.name}"


def _inner(t: sch.Type) -> sch.Type:
    while t.code in (sch.LIST, sch.MAP) and t.elem is not None:
        t = t.elem
    return t


def list_strategies(resources: Sequence[Resource]) -> dict[tuple[str, str], set[str | None]]:
    """For each list field (struct key, field) of the built-in kinds: how the server merges it
    on every path that reaches it (a merge key, "" for a set of scalars, None: replaced)."""
    found: dict[tuple[str, str], set[str | None]] = {}

    def walk(kind: str, s: sch.Struct, path: tuple[str, ...], above: frozenset[str]) -> None:
        for field, t in s.fields.items():
            at = (*path, field)
            if t.code == sch.LIST:
                found.setdefault((_key(s), field), set()).add(_list_strategy(kind, at))
            inner = _inner(t).struct
            if inner is not None and _key(inner) not in above:
                walk(kind, inner, at, above | {_key(inner)})

    for r in resources:
        s = kind_struct(r)
        walk(r.kind, s, (), frozenset({_key(s)}))
    return found


def _patch_tags(s: sch.Struct, field: str, t: sch.Type, merged: Mapping[tuple[str, str], set[str | None]]) -> Schema:
    upstream = s.patch.get(field, "").partition(":")[0]
    strategies = [x for x in upstream.split(",") if x and x != "merge"]  # retainKeys, replace
    tags: Schema = {}
    if t.code == sch.LIST:
        how = merged.get((_key(s), field), {None})
        merge_key = next(iter(how)) if len(how) == 1 else None  # paths that disagree: replaced
        if merge_key is not None:
            strategies.insert(0, "merge")
        if merge_key:
            tags["x-kubernetes-patch-merge-key"] = merge_key
    if strategies:
        tags["x-kubernetes-patch-strategy"] = ",".join(strategies)
    return tags


def _tags(s: sch.Struct, field: str, t: sch.Type, merged: Mapping[tuple[str, str], set[str | None]]) -> Schema:
    """A field's patch tags and, for the common fields, its description."""
    tags = _patch_tags(s, field, t, merged)
    text = schema_kubemu.DESCRIPTIONS.get((_key(s), field)) or field_description(_key(s), field, t.struct is not None)
    return {"description": text, **tags} if text else tags


def field_schema(t: sch.Type, v2: bool, extra: Schema | None = None) -> Schema:
    """The schema of one field of type ``t`` (``extra``: its patch tags)."""
    extra = extra or {}
    if t.struct is not None:
        return ref(struct_model(t.struct), v2, **extra)
    if t.code in _SPECIAL:
        return ref(_SPECIAL[t.code][0], v2, **extra)
    if t.code == sch.LIST and t.elem is not None:
        out: Schema = {"type": "array", "items": field_schema(t.elem, v2)}
        if t.keys:
            out["x-kubernetes-list-map-keys"] = list(t.keys)
            out["x-kubernetes-list-type"] = "map"
        return {**out, **extra}
    if t.code == sch.MAP and t.elem is not None:
        return {"type": "object", "additionalProperties": field_schema(t.elem, v2), **extra}
    return {**_SCALARS[t.code], **extra}


def struct_schema(s: sch.Struct, v2: bool, merged: Mapping[tuple[str, str], set[str | None]]) -> Schema:
    out: Schema = {"type": "object"}
    if s.fields:
        out["properties"] = {f: field_schema(t, v2, _tags(s, f, t, merged)) for f, t in s.fields.items()}
    if s.required:
        out["required"] = list(s.required)
    return out


def describe(r: Resource) -> str:
    """kubemu's own one-line description of a kind: what kubemu does with it."""
    stored = BY_KIND.get(r.kind)
    if r.kind in schema_kubemu.KIND_DESCRIPTIONS and stored == r:
        return schema_kubemu.KIND_DESCRIPTIONS[r.kind]
    if stored is not None and stored != r:
        return f"{r.kind} served at {r.api_version}: the stored {stored.api_version} {r.kind}, converted."
    if "list" not in r.verbs:
        return f"{r.kind}: answered when created, never stored."
    if r.modeled:
        return f"{r.kind}: kubemu models it (validated field by field, defaulted, acted on by its components)."
    return f"{r.kind}: kubemu stores, lists and watches it; none of its components acts on it."


def _reachable(roots: Iterable[sch.Struct]) -> tuple[list[sch.Struct], set[int]]:
    """The structs ``roots`` reach (themselves included) and the special type codes on the way."""
    seen: dict[str, sch.Struct] = {}
    special: set[int] = set()
    todo = list(roots)
    while todo:
        s = todo.pop()
        if _key(s) in seen:
            continue
        seen[_key(s)] = s
        for t in s.fields.values():
            inner = _inner(t)
            if inner.struct is not None:
                todo.append(inner.struct)
            elif inner.code in _SPECIAL:
                special.add(inner.code)
    return list(seen.values()), special


def list_schema(model: str, list_gvk: dict[str, str], v2: bool) -> Schema:
    """A kind's list, as upstream's ``<Kind>List`` models are."""
    return {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": ref(model, v2)},
            "kind": {"type": "string"},
            "metadata": ref(META + "ListMeta", v2),
        },
        "x-kubernetes-group-version-kind": [list_gvk],
    }


@cache
def builtin_models(resources: tuple[Resource, ...], v2: bool) -> Mapping[str, Schema]:
    """Every model of the built-in ``resources`` (neither custom nor to be changed: cached)."""
    merged = list_strategies(resources)
    extra = [sch.struct(key) for key in _PATH_MODELS]
    extra += [sch.struct(f"{g or 'core'}.{v}.{k}") for g, v, k in _SUBRESOURCE_KINDS]
    structs, special = _reachable([*(kind_struct(r) for r in resources), *extra])
    models: dict[str, Schema] = {struct_model(s): struct_schema(s, v2, merged) for s in structs}
    for code in special:
        name, in_v2, in_v3 = _SPECIAL[code]
        models[name] = dict(in_v2 if v2 else in_v3)
    for g, v, k in _SUBRESOURCE_KINDS:
        models[model_name(g, v, k)]["x-kubernetes-group-version-kind"] = [{"group": g, "version": v, "kind": k}]
    for r in resources:
        name = model_name(r.group, r.version, r.kind)
        models[name] = {"description": describe(r), **models[name], "x-kubernetes-group-version-kind": [gvk(r)]}
        if "list" in r.verbs:
            models[name + "List"] = list_schema(name, gvk(r, r.kind + "List"), v2)
    return models


# -- metrics.k8s.io (served by metricsapi.py; not in the schema table: k8s.io/metrics' types) ----
# metricsapi's resources as the OpenAPI documents describe them (read-only).
METRICS = tuple(
    Resource(kind, metricsapi.GROUP, metricsapi.VERSION, plural, namespaced, verbs=("get", "list"))
    for plural, kind, namespaced in metricsapi._RESOURCES
)


def described() -> list[Resource]:
    """Every resource the OpenAPI documents describe: what discovery lists."""
    return [*discoverable(), *METRICS]


def metrics_models(v2: bool) -> dict[str, Schema]:
    """NodeMetrics, PodMetrics and their lists, as k8s.io/metrics v1beta1 declares them."""
    usage = {"type": "object", "additionalProperties": ref(_SPECIAL[sch.QUANTITY][0], v2)}
    common = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": ref(META + "ObjectMeta", v2),
        "timestamp": ref(META + "Time", v2),
        "window": ref(META + "Duration", v2),
    }
    container = model_name(metricsapi.GROUP, metricsapi.VERSION, "ContainerMetrics")
    fields = {
        "NodeMetrics": {"usage": usage},
        "PodMetrics": {"containers": {"type": "array", "items": ref(container, v2)}},
    }
    out: dict[str, Schema] = {
        META + "Duration": {"type": "string"},
        container: {
            "type": "object",
            "required": ["name", "usage"],
            "properties": {"name": {"type": "string"}, "usage": usage},
        },
    }
    for r in METRICS:
        name = model_name(r.group, r.version, r.kind)
        props = {**common, **fields[r.kind]}
        out[name] = {
            "description": f"{r.kind}: emulated usage, computed when read (kubectl top).",
            "type": "object",
            "required": ["timestamp", "window", *fields[r.kind]],
            "properties": dict(sorted(props.items())),
            "x-kubernetes-group-version-kind": [gvk(r)],
        }
        out[name + "List"] = list_schema(name, gvk(r, r.kind + "List"), v2)
    return out


# -- custom kinds ------------------------------------------------------------------------------


def definition_for(r: Resource, crds: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The CustomResourceDefinition (among ``crds``) that defines ``r``."""
    for crd in crds:
        spec = crd.get("spec") or {}
        if spec.get("group") == r.group and (spec.get("names") or {}).get("kind") == r.kind:
            return crd
    return kindspec.definition(r.kind)  # a kind registered with its schema (cluster/api/kindspec.py)


def _version_schema(crd: Mapping[str, Any], version: str) -> Schema | None:
    for v in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(v, dict) and v.get("name") == version:
            found = (v.get("schema") or {}).get("openAPIV3Schema")
            return found if isinstance(found, dict) else None
    return None


def _children(s: Schema) -> Iterator[Schema]:
    props = s.get("properties")
    if isinstance(props, dict):
        yield from (p for p in props.values() if isinstance(p, dict))
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), dict):
            yield s[key]


def _for_v2(s: Schema) -> None:
    """What upstream's ToStructuralOpenAPIV2 cuts from a schema (in place, parents first) so
    that kubectl's v2 reader neither chokes nor refuses valid objects."""
    props = s.get("properties")
    nullable = (
        {k for k, p in props.items() if isinstance(p, dict) and p.get("nullable")} if isinstance(props, dict) else set()
    )
    extra = s.get("additionalProperties")
    if isinstance(s.get("required"), list):
        kept = (
            [] if isinstance(extra, dict) and extra.get("nullable") else [f for f in s["required"] if f not in nullable]
        )
        if kept:
            s["required"] = kept
        else:
            del s["required"]
    for key in ("allOf", "oneOf", "anyOf", "not"):
        s.pop(key, None)
    if s.pop("nullable", False):
        for key in ("type", "items", "properties"):
            s.pop(key, None)
    if s.get("x-kubernetes-preserve-unknown-fields") is True:
        s.pop("items", None)
        s.pop("properties", None)
        if s.get("type") == "object":
            s.pop("type")
    if s.get("type") == "array" and "items" not in s:
        s.pop("type")
    for child in _children(s):
        _for_v2(child)


def _for_v3(s: Schema) -> None:
    """Upstream's Unfold: an int-or-string field without ``anyOf`` gets integer|string."""
    if s.get("x-kubernetes-int-or-string") is True and "anyOf" not in s and "allOf" not in s:
        s["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    for child in _children(s):
        _for_v3(child)


def _kube_native(s: Schema, v2: bool) -> None:
    """apiVersion, kind and metadata where an object is a Kubernetes object: the root and every
    ``x-kubernetes-embedded-resource`` (left alone in v2 when it keeps unknown fields)."""
    for child in _children(s):
        _kube_native(child, v2)
    if s.get("x-kubernetes-embedded-resource") is True and not (
        v2 and s.get("x-kubernetes-preserve-unknown-fields") is True
    ):
        _type_meta(s, v2)
        s["required"] = [
            *(s.get("required") or ()),
            *(f for f in ("kind", "apiVersion") if f not in (s.get("required") or ())),
        ]


def _type_meta(s: Schema, v2: bool) -> None:
    props = s["properties"] = dict(s.get("properties") or {})
    props["apiVersion"] = {"description": descriptions.API_VERSION, "type": "string"}
    props["kind"] = {"description": descriptions.KIND, "type": "string"}
    props["metadata"] = ref(META + "ObjectMeta", v2, description=descriptions.METADATA)


def custom_schema(r: Resource, crd: Mapping[str, Any] | None, v2: bool) -> Schema:
    """The model of custom kind ``r`` from its definition's schema for ``r.version``."""
    raw = _version_schema(crd, r.version) if crd is not None else None
    keeps_unknown = raw is not None and raw.get("x-kubernetes-preserve-unknown-fields") is True
    if raw is None or (v2 and (keeps_unknown or (crd or {}).get("spec", {}).get("preserveUnknownFields") is True)):
        out: Schema = {"type": "object"}  # kubectl's v2 reader would refuse every unknown field
    else:
        out = copy.deepcopy(raw)
        if v2:
            _for_v2(out)
        else:
            _for_v3(out)
        _kube_native(out, v2)
        _type_meta(out, v2)
    out["x-kubernetes-group-version-kind"] = [gvk(r)]
    return out


def custom_models(r: Resource, crd: Mapping[str, Any] | None, v2: bool) -> dict[str, Schema]:
    """A custom kind's model and its list's (``spec.names.listKind``)."""
    name = model_name(r.group, r.version, r.kind, custom=True)
    list_kind = ((crd or {}).get("spec", {}).get("names") or {}).get("listKind") or r.kind + "List"
    return {name: custom_schema(r, crd, v2), name + "List": list_schema(name, gvk(r, str(list_kind)), v2)}


def models(resources: Sequence[Resource], crds: Sequence[Mapping[str, Any]], v2: bool) -> dict[str, Schema]:
    """Every model a document of ``resources`` may refer to: those of every built-in kind
    discovery lists (built once, shared: never to be changed by the caller), and of the custom
    kinds among ``resources``, from their definitions among ``crds``."""
    out = dict(builtin_models(tuple(r for r in discoverable() if not is_custom(r)), v2))
    out.update(metrics_models(v2))
    for r in resources:
        if is_custom(r):
            out.update(custom_models(r, definition_for(r, crds), v2))
    return out


def crd_fingerprint(resources: Sequence[Resource], crds: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """What a cache of documents over ``resources`` must be keyed by besides them: the name and
    resourceVersion of each definition of a custom kind among them (an edit changes it)."""
    out = []
    for r in resources:
        crd = definition_for(r, crds) if is_custom(r) else None
        if crd is not None:
            m = crd.get("metadata") or {}
            out.append((str(m.get("name", "")), str(m.get("resourceVersion", ""))))
    return tuple(out)
