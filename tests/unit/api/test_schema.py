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

from cluster.api import schema as sch
from cluster.api import schema_table
from cluster.api.kinds import CUSTOM, RESOURCES, served

ROOT = Path(__file__).resolve().parents[3]


def test_every_served_built_in_kind_has_a_schema_and_custom_kinds_none():
    built_in = [r for r in served() if r.kind not in CUSTOM]
    assert [r.kind for r in built_in] == [r.kind for r in RESOURCES] == list(sch.kinds())
    for r in built_in:
        s = sch.kind_struct(r.kind)
        assert s is not None and s.name == r.kind, r.kind
        assert {"apiVersion", "kind", "metadata"} <= set(s.fields), r.kind
    assert sch.kind_struct("Widget") is None and sch.kind_type("Widget") is None


@pytest.mark.parametrize(
    "kind, path, code, go",
    [
        ("Deployment", "spec.replicas", sch.INT32, "int32"),
        ("Deployment", "metadata.generation", sch.INT64, "int64"),
        ("Pod", "spec.terminationGracePeriodSeconds", sch.INT64, "int64"),
        ("Pod", "spec.containers.ports.containerPort", sch.INT32, "int32"),
        ("Pod", "spec.containers.resources.limits", sch.MAP, "map[string]resource.Quantity"),
        ("Pod", "spec.containers.livenessProbe.httpGet.port", sch.INT_OR_STRING, "intstr.IntOrString"),
        ("Deployment", "spec.strategy.rollingUpdate.maxSurge", sch.INT_OR_STRING, "intstr.IntOrString"),
        ("Pod", "metadata.creationTimestamp", sch.TIME, "v1.Time"),
        ("Lease", "spec.renewTime", sch.MICRO_TIME, "v1.MicroTime"),
        ("Secret", "data", sch.MAP, "map[string][]uint8"),
        ("ConfigMap", "data", sch.MAP, "map[string]string"),
        ("ControllerRevision", "data", sch.ANY, "interface {}"),
        ("Pod", "metadata.managedFields.fieldsV1", sch.ANY, "interface {}"),
        ("Pod", "spec.containers", sch.LIST, "[]v1.Container"),
        ("Pod", "spec.affinity.nodeAffinity", sch.STRUCT, "v1.NodeAffinity"),
        ("HorizontalPodAutoscaler", "spec.metrics", sch.LIST, "[]v2.MetricSpec"),
        (
            "CustomResourceDefinition",
            "spec.versions.schema.openAPIV3Schema.items",
            sch.SCHEMA_OR_ARRAY,
            "v1.JSONSchemaPropsOrArray",
        ),
        ("CustomResourceDefinition", "spec.versions.schema.openAPIV3Schema.maximum", sch.FLOAT64, "float64"),
        ("Node", "spec.unschedulable", sch.BOOL, "bool"),
    ],
)
def test_field_types_and_go_names(kind, path, code, go):
    t = sch.field_type(kind, path)
    assert t is not None and (t.code, t.go) == (code, go)


def test_go_struct_names_and_list_keys():
    assert sch.field_type("Deployment", "spec").struct.name == "DeploymentSpec"
    assert sch.field_type("Pod", "metadata").struct.go == "v1.ObjectMeta"
    assert sch.field_type("EndpointSlice", "ports").elem.struct.package == "discovery.v1"
    assert sch.field_type("Endpoints", "subsets.ports").elem.struct.package == "core.v1"
    assert sch.field_type("Pod", "spec.containers").keys == ("name",)
    assert sch.field_type("Pod", "spec.containers.ports").keys == ("containerPort", "protocol")
    assert sch.field_type("Pod", "spec.tolerations").keys == ()
    assert sch.field_type("Pod", "spec.nosuch") is None and sch.field_type("Nope", "spec") is None
    props = sch.struct("apiextensions.v1.JSONSchemaProps")
    assert props.fields["properties"].elem.struct is props  # a struct may contain itself
    assert sch.RELEASE == "v1.33.0"


# ---- the official client agrees ----------------------------------------------------------
_SIMPLE = {
    "int": {sch.INT32, sch.INT64},
    "str": {sch.STRING, sch.QUANTITY},  # the client models quantities as strings
    "bool": {sch.BOOL},
    "float": {sch.FLOAT64},
    "datetime": {sch.TIME, sch.MICRO_TIME},
    "bytes": {sch.BYTES},
    "object": {sch.INT_OR_STRING, sch.ANY, sch.SCHEMA_OR_ARRAY, sch.SCHEMA_OR_BOOL, sch.SCHEMA_OR_STRINGS},
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


def _agrees(t: sch.Type, c: str) -> bool:
    for opener, closer, code in (
        ("List[", "]", sch.LIST),
        ("list[", "]", sch.LIST),
        ("Dict[str, ", "]", sch.MAP),
        ("dict(str, ", ")", sch.MAP),
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
            assert not sch.struct(key).fields, key  # only an empty struct has no model
            continue
        by_json = {j: cls.openapi_types[attr] for attr, j in cls.attribute_map.items()}
        for name, t in sch.struct(key).fields.items():
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
