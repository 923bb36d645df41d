"""Regenerate ``cluster/api/schema_table.py``: the fields and Go types of every built-in kind kubemu serves.

Run from the repository root (``kubernetes-validate`` is a test dependency; a wheel's path may be
given instead of using the installed package):

    python -m cluster.api.schemagen > cluster/api/schema_table.py

The source is the ``kubernetes-validate`` package: it ships upstream's OpenAPI definitions for each
Kubernetes release as JSON schema (``kubernetes-json-schema/v1.33.0-local/_definitions.json``). It is
read rather than the ``kubernetes`` Python client because the client's models lose what the typed
decoder's messages and rules need: ``openapi_types`` says ``int`` for int32 and int64 alike, ``str``
for resource quantities, ``object`` for both int-or-string and free-form fields, and its class names
(``CoreV1EndpointPort``, ``V1ObjectMeta``) drop the Go package. The definitions keep the format
(``int32``/``int64``/``byte``/``double``), the ``$ref`` to ``Quantity``/``IntOrString``/``Time``, the
list-map keys and the Go package path in each definition's name (``io.k8s.api.apps.v1.DeploymentSpec``).
``tests/unit/api/test_schema.py`` checks the table against the client's models where both know a field.

The release is kubemu's advertised one (``/version`` says v1.33). Only the wheel (or an installed
``kubernetes_validate``) is read; nothing is imported from it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from collections import deque
from pathlib import Path
from typing import Any

from .kinds import OWN_GROUP, RESOURCES, REVIEWS, VIEWS, schema_key  # OWN_GROUP: written by hand, not generated

RELEASE = "v1.33.0"
MEMBER = f"kubernetes_validate/kubernetes-json-schema/{RELEASE}-local/_definitions.json"

# Definitions whose Go types decode themselves (UnmarshalJSON): the table names them by what they accept.
SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "IntOrString",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "MicroTime",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray": "SchemaOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool": "SchemaOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": "SchemaOrStringArray",
}
SCALARS = {
    ("string", None): "string",
    ("string", "byte"): "bytes",
    ("integer", "int32"): "int32",
    ("integer", "int64"): "int64",
    ("boolean", None): "bool",
    ("number", "double"): "float64",
}


def load(source: str) -> dict[str, Any]:
    if source.endswith(".whl"):
        with zipfile.ZipFile(source) as z:
            doc = json.loads(z.read(MEMBER))
    else:
        doc = json.loads((Path(source) / MEMBER).read_text())
    return dict(doc["$defs"])


def short(name: str) -> str:
    """``io.k8s.api.apps.v1.DeploymentSpec`` -> ``apps.v1.DeploymentSpec`` (package, version, Go name)."""
    parts = name.split(".")
    return ".".join(parts[-3:])


def ref_name(prop: dict[str, Any]) -> str:
    return str(prop["$ref"]).rsplit("/", 1)[-1]


def type_of(prop: dict[str, Any], queue: deque[str]) -> str:
    if "$ref" in prop:
        name = ref_name(prop)
        if name in SPECIAL:
            return SPECIAL[name]
        queue.append(name)
        return short(name)
    types = prop.get("type")
    kinds = [t for t in types if t != "null"] if isinstance(types, list) else [types]
    kind = kinds[0] if len(kinds) == 1 else None
    if kind == "array":
        elem = type_of(prop["items"], queue)
        keys = prop.get("x-kubernetes-list-map-keys") if prop.get("x-kubernetes-list-type") == "map" else None
        return f"[{elem}]" + (",".join(keys) if keys else "")
    if kind == "object":
        if "additionalProperties" in prop:
            return "{" + type_of(prop["additionalProperties"], queue) + "}"
        return "any"
    scalar = SCALARS.get((str(kind), prop.get("format")))
    if scalar is None:
        raise SystemExit(f"no table type for {prop}")
    return scalar


def build(defs: dict[str, Any]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    by_gvk = {}
    for name, d in defs.items():
        for gvk in d.get("x-kubernetes-group-version-kind") or ():
            by_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = name
    kinds: dict[str, str] = {}
    versioned: dict[str, str] = {}
    queue: deque[str] = deque()
    for r in RESOURCES:
        if r.group == OWN_GROUP:
            continue
        name = by_gvk[(r.group, r.version, r.kind)]
        kinds[r.kind] = short(name)
        queue.append(name)
    for r in (*VIEWS, *REVIEWS):
        name = by_gvk[(r.group, r.version, r.kind)]
        versioned[schema_key(r)] = short(name)
        queue.append(name)
    queue.extend(OPENAPI_ROOTS)
    structs: dict[str, str] = {}
    full: dict[str, str] = {}
    while queue:
        name = queue.popleft()
        key = short(name)
        if key in structs:
            if full[key] != name:
                raise SystemExit(f"{name} and {full[key]} shorten alike")
            continue
        props = defs[name].get("properties") or {}
        full[key] = name
        structs[key] = " ".join(f"{field}:{type_of(p, queue)}" for field, p in props.items())
    return kinds, versioned, dict(sorted(structs.items()))


def render(kinds: dict[str, str], versioned: dict[str, str], structs: dict[str, str], source: str) -> str:
    out = [
        '"""Generated by ``python -m cluster.api.schemagen``: do not edit. Read by ``cluster/api/schema.py`` only.',
        "",
        f"Source: {Path(source).name}, upstream's OpenAPI definitions of Kubernetes {RELEASE}.",
        "``KINDS``: served kind -> its struct. ``VERSIONED``: ``apiVersion Kind`` -> the struct of a kind served",
        "at a second version (a view) or only created (a review). ``STRUCTS``: struct (package.version.GoName)",
        "-> space-separated ``jsonName:type``; types are described in ``cluster/api/schema.py``.",
        '"""',
        "",
        f'RELEASE = "{RELEASE}"',
        "",
        "KINDS: dict[str, str] = {",
        *(f'    "{k}": "{v}",' for k, v in kinds.items()),
        "}",
        "",
        "VERSIONED: dict[str, str] = {",
        *(f'    "{k}": "{v}",' for k, v in versioned.items()),
        "}",
        "",
        "STRUCTS: dict[str, str] = {",
        *(f'    "{k}": "{v}",' for k, v in structs.items()),
        "}",
        "",
    ]
    return "\n".join(out)


# -- what only the OpenAPI documents need (cluster/frontend/openapi_schemas.py) ---------------
# Models the documents' paths answer with besides the kinds: list metadata, Status, the bodies
# of DELETE and PATCH, and the kinds of the scale, eviction and binding subresources.
OPENAPI_ROOTS = (
    *(f"io.k8s.apimachinery.pkg.apis.meta.v1.{name}" for name in ("ListMeta", "Status", "DeleteOptions", "Patch")),
    "io.k8s.api.autoscaling.v1.Scale",
    "io.k8s.api.policy.v1.Eviction",
    "io.k8s.api.core.v1.Binding",
)


def openapi_facts(defs: dict[str, Any], structs: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each table struct's required fields, and its fields' patch strategies as upstream tags
    them (``x-kubernetes-patch-strategy``, then ``:`` and the merge key if there is one)."""
    full: dict[str, str] = {}
    for name in defs:
        if short(name) in structs and full.setdefault(short(name), name) != name:
            raise SystemExit(f"{name} and {full[short(name)]} shorten alike")
    required: dict[str, str] = {}
    patch: dict[str, str] = {}
    for key in structs:
        d = defs[full[key]]
        if d.get("required"):
            required[key] = " ".join(d["required"])
        tags = []
        for field, prop in (d.get("properties") or {}).items():
            strategy = prop.get("x-kubernetes-patch-strategy")
            if strategy:
                merge_key = prop.get("x-kubernetes-patch-merge-key")
                tags.append(f"{field}={strategy}" + (f":{merge_key}" if merge_key else ""))
        if tags:
            patch[key] = " ".join(tags)
    return required, patch


def render_openapi_facts(required: dict[str, str], patch: dict[str, str]) -> str:
    out = [
        "",
        "# Read by cluster/frontend/openapi_schemas.py (through schema.Struct): required fields, and",
        "# field=patchStrategy[:mergeKey] as upstream tags them.",
        "REQUIRED: dict[str, str] = {",
        *(f'    "{k}": "{v}",' for k, v in required.items()),
        "}",
        "",
        "PATCH: dict[str, str] = {",
        *(f'    "{k}": "{v}",' for k, v in patch.items()),
        "}",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else ""
    if not source:  # an installed kubernetes-validate: found, not imported
        spec = importlib.util.find_spec("kubernetes_validate")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("usage: gen_schema_table.py [kubernetes_validate-*.whl] (or install kubernetes-validate)")
        source = str(Path(next(iter(spec.submodule_search_locations))).parent)
    defs = load(source)
    kinds, versioned, structs = build(defs)
    sys.stdout.write(render(kinds, versioned, structs, source) + render_openapi_facts(*openapi_facts(defs, structs)))


if __name__ == "__main__":
    main()
