"""The schema of the built-in kinds (cluster/api/schema.py, generated into schema_table.py): one
per served kind, the Go names and types upstream's messages use, and agreement with the official
``kubernetes`` Python client's models wherever both know a field."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cluster.api import schema as S
from cluster.api import schema_table
from cluster.api.kinds import CUSTOM, RESOURCES, served

ROOT = Path(__file__).resolve().parents[3]


def test_every_served_built_in_kind_has_a_schema_and_custom_kinds_none():
    built_in = [r for r in served() if r.kind not in CUSTOM]
    assert [r.kind for r in built_in] == [r.kind for r in RESOURCES] == list(S.kinds())
    for r in built_in:
        s = S.kind_struct(r.kind)
        assert s is not None and s.name == r.kind, r.kind
        assert {"apiVersion", "kind", "metadata"} <= set(s.fields), r.kind
    assert S.kind_struct("Widget") is None and S.kind_type("Widget") is None


@pytest.mark.parametrize(
    "kind, path, code, go",
    [
        ("Deployment", "spec.replicas", S.INT32, "int32"),
        ("Deployment", "metadata.generation", S.INT64, "int64"),
        ("Pod", "spec.terminationGracePeriodSeconds", S.INT64, "int64"),
        ("Pod", "spec.containers.ports.containerPort", S.INT32, "int32"),
        ("Pod", "spec.containers.resources.limits", S.MAP, "map[string]resource.Quantity"),
        ("Pod", "spec.containers.livenessProbe.httpGet.port", S.INT_OR_STRING, "intstr.IntOrString"),
        ("Deployment", "spec.strategy.rollingUpdate.maxSurge", S.INT_OR_STRING, "intstr.IntOrString"),
        ("Pod", "metadata.creationTimestamp", S.TIME, "v1.Time"),
        ("Lease", "spec.renewTime", S.MICRO_TIME, "v1.MicroTime"),
        ("Secret", "data", S.MAP, "map[string][]uint8"),
        ("ConfigMap", "data", S.MAP, "map[string]string"),
        ("ControllerRevision", "data", S.ANY, "interface {}"),
        ("Pod", "metadata.managedFields.fieldsV1", S.ANY, "interface {}"),
        ("Pod", "spec.containers", S.LIST, "[]v1.Container"),
        ("Pod", "spec.affinity.nodeAffinity", S.STRUCT, "v1.NodeAffinity"),
        ("HorizontalPodAutoscaler", "spec.metrics", S.LIST, "[]v2.MetricSpec"),
        (
            "CustomResourceDefinition",
            "spec.versions.schema.openAPIV3Schema.items",
            S.SCHEMA_OR_ARRAY,
            "v1.JSONSchemaPropsOrArray",
        ),
        ("CustomResourceDefinition", "spec.versions.schema.openAPIV3Schema.maximum", S.FLOAT64, "float64"),
        ("Node", "spec.unschedulable", S.BOOL, "bool"),
    ],
)
def test_field_types_and_go_names(kind, path, code, go):
    t = S.field_type(kind, path)
    assert t is not None and (t.code, t.go) == (code, go)


def test_go_struct_names_and_list_keys():
    assert S.field_type("Deployment", "spec").struct.name == "DeploymentSpec"
    assert S.field_type("Pod", "metadata").struct.go == "v1.ObjectMeta"
    assert S.field_type("EndpointSlice", "ports").elem.struct.package == "discovery.v1"
    assert S.field_type("Endpoints", "subsets.ports").elem.struct.package == "core.v1"
    assert S.field_type("Pod", "spec.containers").keys == ("name",)
    assert S.field_type("Pod", "spec.containers.ports").keys == ("containerPort", "protocol")
    assert S.field_type("Pod", "spec.tolerations").keys == ()
    assert S.field_type("Pod", "spec.nosuch") is None and S.field_type("Nope", "spec") is None
    props = S.struct("apiextensions.v1.JSONSchemaProps")
    assert props.fields["properties"].elem.struct is props  # a struct may contain itself
    assert S.RELEASE == "v1.33.0"


# ---- the official client agrees ----------------------------------------------------------
_SIMPLE = {
    "int": {S.INT32, S.INT64},
    "str": {S.STRING, S.QUANTITY},  # the client models quantities as strings
    "bool": {S.BOOL},
    "float": {S.FLOAT64},
    "datetime": {S.TIME, S.MICRO_TIME},
    "bytes": {S.BYTES},
    "object": {S.INT_OR_STRING, S.ANY, S.SCHEMA_OR_ARRAY, S.SCHEMA_OR_BOOL, S.SCHEMA_OR_STRINGS},
}
_PREFIX = re.compile(r"^([A-Z][a-z]+)?V\d+((alpha|beta)\d+)?")


def _client_class(models: Any, key: str) -> type | None:
    """The client's model of a table struct: ``CoreV1EndpointPort`` before ``V1EndpointPort``."""
    package, version, name = key.split(".")
    for candidate in (f"{package.capitalize()}{version.capitalize()}{name}", f"{version.capitalize()}{name}"):
        cls = getattr(models, candidate, None)
        if cls is not None and hasattr(cls, "attribute_map"):
            return cls
    return None


def _agrees(t: S.Type, c: str) -> bool:
    for opener, closer, code in (
        ("List[", "]", S.LIST),
        ("list[", "]", S.LIST),
        ("Dict[str, ", "]", S.MAP),
        ("dict(str, ", ")", S.MAP),
    ):
        if c.startswith(opener) and c.endswith(closer):
            return t.code == code and t.elem is not None and _agrees(t.elem, c[len(opener) : -len(closer)])
    if c == "object" and t.struct is not None and not t.struct.fields:
        return True  # an empty struct (CustomResourceSubresourceStatus) is a free-form object to the client
    if c in _SIMPLE:
        return t.code in _SIMPLE[c]
    return t.struct is not None and _PREFIX.sub("", c) == t.struct.name


def test_the_table_agrees_with_the_kubernetes_python_client():
    from kubernetes.client import models  # a test dependency: its absence is a failure, not a skip

    checked, missing, disagree = 0, [], []
    for key in schema_table.STRUCTS:
        cls = _client_class(models, key)
        if cls is None:
            assert not S.struct(key).fields, key  # only an empty struct has no model
            continue
        by_json = {j: cls.openapi_types[attr] for attr, j in cls.attribute_map.items()}
        for name, t in S.struct(key).fields.items():
            if name not in by_json:
                missing.append(f"{key}.{name}")
            elif not _agrees(t, by_json[name]):
                disagree.append(f"{key}.{name}: {t.go} vs {by_json[name]}")
            checked += 1
    assert checked == sum(len(spec.split()) for spec in schema_table.STRUCTS.values())  # every struct has a model
    assert disagree == []
    assert len(missing) < checked // 50, missing  # fields upstream dropped since (the client is newer)


def test_the_generator_reproduces_the_table():  # kubernetes-validate is a test dependency
    out = subprocess.run([sys.executable, "-m", "cluster.api.schemagen"], cwd=ROOT, capture_output=True, check=True)
    assert out.stdout.decode().split("\n", 3)[3] == (ROOT / "cluster/api/schema_table.py").read_text().split("\n", 3)[3]
