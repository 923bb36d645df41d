"""fieldValidation: every served built-in kind under Strict,
Warn and Ignore, with upstream's messages and codes; duplicate keys; the verbs' different
answers (create/update 400, patches 422, server-side apply 500); custom resources pruned and
checked by their structural schema; and every object kubemu itself stores passes Strict."""

from __future__ import annotations

import copy
import pathlib
import re
from typing import Any

import orjson
import pytest
from manifest_builders import manifests, widget_schema

from cluster.api.errors import BadRequest, Cause, Invalid
from cluster.api.kinds import RESOURCES, served
from cluster.frontend import fieldvalidation as fv
from cluster.frontend.fieldvalidation import IGNORE, STRICT, WARN, check, duplicates, parse_mode

ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILT_IN = [r.kind for r in RESOURCES]
FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

# kind -> (an object inside the manifest, an unknown key put there)
NESTED = {
    "Pod": ("spec.containers[0]", "imagePullPolcy"),
    "Deployment": ("spec.template.spec.containers[0]", "imagePullPolcy"),
    "ReplicaSet": ("spec.selector", "matchLabel"),
    "DaemonSet": ("spec.updateStrategy.rollingUpdate", "maxUnavailabel"),
    "StatefulSet": ("spec.volumeClaimTemplates[0].spec", "accesModes"),
    "ReplicationController": ("spec.template.metadata", "labelz"),
    "PodTemplate": ("template.spec.initContainers[0]", "imag"),
    "Job": ("spec.template.spec", "restartPolcy"),
    "CronJob": ("spec.jobTemplate.spec", "backofLimit"),
    "ControllerRevision": ("metadata", "generateNam"),
    "Node": ("status.nodeInfo", "kernel"),
    "Namespace": ("spec", "finalizer"),
    "Event": ("involvedObject", "nam"),
    "ConfigMap": ("metadata", "labelz"),
    "Secret": ("metadata", "annotationz"),
    "Service": ("spec.ports[0]", "targetPrt"),
    "ServiceAccount": ("imagePullSecrets[0]", "nam"),
    "Endpoints": ("subsets[0].addresses[0]", "hostnam"),
    "PersistentVolume": ("spec.hostPath", "paht"),
    "PersistentVolumeClaim": ("spec.resources", "request"),
    "ResourceQuota": ("spec", "hrd"),
    "LimitRange": ("spec.limits[0]", "maxx"),
    "PriorityClass": ("metadata", "nam"),
    "PodDisruptionBudget": ("spec.selector", "matchLabel"),
    "Lease": ("spec", "holder"),
    "HorizontalPodAutoscaler": ("spec.scaleTargetRef", "nam"),
    "EndpointSlice": ("endpoints[0].conditions", "redy"),
    "StorageClass": ("metadata", "labelz"),
    "CSINode": ("spec.drivers[0].allocatable", "cnt"),
    "CSIDriver": ("spec", "attachReq"),
    "CSIStorageCapacity": ("nodeTopology", "matchLabel"),
    "VolumeAttachment": ("spec.source", "pvName"),
    "Role": ("rules[0]", "verb"),
    "RoleBinding": ("roleRef", "nam"),
    "ClusterRole": ("aggregationRule", "clusterRoleSelector"),
    "ClusterRoleBinding": ("subjects[0]", "namespac"),
    "CustomResourceDefinition": ("spec.names", "knd"),
    "Ingress": ("spec.rules[0].http.paths[0].backend.service", "prt"),
    "IngressClass": ("spec.parameters", "namespac"),
    "NetworkPolicy": ("spec.ingress[0].from[0].ipBlock", "exept"),
    "APIService": ("spec.service", "prot"),
    "MutatingWebhookConfiguration": ("webhooks[0].clientConfig.service", "pth"),
    "ValidatingWebhookConfiguration": ("webhooks[0].rules[0]", "operation"),
    "ValidatingAdmissionPolicy": ("spec.validations[0]", "expresion"),
    "ValidatingAdmissionPolicyBinding": ("spec.paramRef", "nam"),
    "RuntimeClass": ("scheduling", "tolerations2"),
    "CertificateSigningRequest": ("status.conditions[0]", "reasn"),
    "SchedulingResult": ("status.history[1].ranking[0]", "byPlugins"),
}

# kind -> (field, a value of the wrong type, what encoding/json says after "json: cannot unmarshal ")
WRONG = {
    "Pod": (
        "spec.terminationGracePeriodSeconds",
        "30",
        "string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64",
    ),
    "Deployment": ("spec.replicas", "3", "string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    "ReplicaSet": (
        "spec.minReadySeconds",
        True,
        "bool into Go struct field ReplicaSetSpec.spec.minReadySeconds of type int32",
    ),
    "DaemonSet": (
        "spec.revisionHistoryLimit",
        1.5,
        "number 1.5 into Go struct field DaemonSetSpec.spec.revisionHistoryLimit of type int32",
    ),
    "StatefulSet": (
        "spec.serviceName",
        5,
        "number into Go struct field StatefulSetSpec.spec.serviceName of type string",
    ),
    "ReplicationController": (
        "spec.selector",
        ["app"],
        "array into Go struct field ReplicationControllerSpec.spec.selector of type map[string]string",
    ),
    "PodTemplate": (
        "template.spec.containers",
        {"name": "x"},
        "object into Go struct field PodSpec.template.spec.containers of type []v1.Container",
    ),
    "Job": ("spec.completions", "4", "string into Go struct field JobSpec.spec.completions of type int32"),
    "CronJob": ("spec.suspend", "false", "string into Go struct field CronJobSpec.spec.suspend of type bool"),
    "ControllerRevision": ("revision", "1", "string into Go struct field ControllerRevision.revision of type int64"),
    "Node": ("spec.unschedulable", "yes", "string into Go struct field NodeSpec.spec.unschedulable of type bool"),
    "Namespace": (
        "metadata.generation",
        "1",
        "string into Go struct field ObjectMeta.metadata.generation of type int64",
    ),
    "Event": ("count", "1", "string into Go struct field Event.count of type int32"),
    "ConfigMap": ("data", ["a"], "array into Go struct field ConfigMap.data of type map[string]string"),
    "Secret": ("data.password", 5, "number into Go struct field Secret.data of type []uint8"),
    "Service": ("spec.ports[0].port", "80", "string into Go struct field ServicePort.spec.ports.port of type int32"),
    "ServiceAccount": (
        "automountServiceAccountToken",
        "false",
        "string into Go struct field ServiceAccount.automountServiceAccountToken of type bool",
    ),
    "Endpoints": (
        "subsets[0].ports[0].port",
        "80",
        "string into Go struct field EndpointPort.subsets.ports.port of type int32",
    ),
    "PersistentVolume": (
        "spec.mountOptions",
        "ro",
        "string into Go struct field PersistentVolumeSpec.spec.mountOptions of type []string",
    ),
    "PersistentVolumeClaim": (
        "spec.storageClassName",
        1,
        "number into Go struct field PersistentVolumeClaimSpec.spec.storageClassName of type string",
    ),
    "ResourceQuota": (
        "spec.scopeSelector",
        [],
        "array into Go struct field ResourceQuotaSpec.spec.scopeSelector of type v1.ScopeSelector",
    ),
    "LimitRange": (
        "spec.limits",
        {},
        "object into Go struct field LimitRangeSpec.spec.limits of type []v1.LimitRangeItem",
    ),
    "PriorityClass": ("value", "1000", "string into Go struct field PriorityClass.value of type int32"),
    "PodDisruptionBudget": (
        "spec.selector",
        "app=web",
        "string into Go struct field PodDisruptionBudgetSpec.spec.selector of type v1.LabelSelector",
    ),
    "Lease": (
        "spec.leaseDurationSeconds",
        "40",
        "string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32",
    ),
    "HorizontalPodAutoscaler": (
        "spec.maxReplicas",
        "10",
        "string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32",
    ),
    "EndpointSlice": (
        "endpoints[0].conditions.ready",
        "true",
        "string into Go struct field EndpointConditions.endpoints.conditions.ready of type bool",
    ),
    "StorageClass": (
        "allowVolumeExpansion",
        "true",
        "string into Go struct field StorageClass.allowVolumeExpansion of type bool",
    ),
    "CSINode": (
        "spec.drivers[0].allocatable.count",
        "16",
        "string into Go struct field VolumeNodeResources.spec.drivers.allocatable.count of type int32",
    ),
    "CSIDriver": (
        "spec.attachRequired",
        1,
        "number into Go struct field CSIDriverSpec.spec.attachRequired of type bool",
    ),
    "CSIStorageCapacity": (
        "storageClassName",
        ["standard"],
        "array into Go struct field CSIStorageCapacity.storageClassName of type string",
    ),
    "VolumeAttachment": (
        "spec.attacher",
        5,
        "number into Go struct field VolumeAttachmentSpec.spec.attacher of type string",
    ),
    "Role": ("rules[0].verbs", "get", "string into Go struct field PolicyRule.rules.verbs of type []string"),
    "RoleBinding": ("subjects", {}, "object into Go struct field RoleBinding.subjects of type []v1.Subject"),
    "ClusterRole": (
        "rules[1].nonResourceURLs",
        5,
        "number into Go struct field PolicyRule.rules.nonResourceURLs of type []string",
    ),
    "ClusterRoleBinding": ("roleRef.name", 5, "number into Go struct field RoleRef.roleRef.name of type string"),
    "CustomResourceDefinition": (
        "spec.versions[0].served",
        "true",
        "string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool",
    ),
    "Ingress": (
        "spec.rules[0].http.paths[0].backend.service.port.number",
        "80",
        "string into Go struct field ServiceBackendPort.spec.rules.http.paths.backend.service.port.number of type int32",
    ),
    "IngressClass": (
        "spec.controller",
        1,
        "number into Go struct field IngressClassSpec.spec.controller of type string",
    ),
    "NetworkPolicy": (
        "spec.ingress[0].ports[0].endPort",
        "6380",
        "string into Go struct field NetworkPolicyPort.spec.ingress.ports.endPort of type int32",
    ),
    "APIService": (
        "spec.groupPriorityMinimum",
        "100",
        "string into Go struct field APIServiceSpec.spec.groupPriorityMinimum of type int32",
    ),
    "MutatingWebhookConfiguration": (
        "webhooks[0].timeoutSeconds",
        "5",
        "string into Go struct field MutatingWebhook.webhooks.timeoutSeconds of type int32",
    ),
    "ValidatingWebhookConfiguration": (
        "webhooks[0].admissionReviewVersions",
        "v1",
        "string into Go struct field ValidatingWebhook.webhooks.admissionReviewVersions of type []string",
    ),
    "ValidatingAdmissionPolicy": (
        "spec.validations",
        {},
        "object into Go struct field ValidatingAdmissionPolicySpec.spec.validations of type []v1.Validation",
    ),
    "ValidatingAdmissionPolicyBinding": (
        "spec.policyName",
        5,
        "number into Go struct field ValidatingAdmissionPolicyBindingSpec.spec.policyName of type string",
    ),
    "RuntimeClass": ("handler", True, "bool into Go struct field RuntimeClass.handler of type string"),
    "CertificateSigningRequest": (
        "spec.expirationSeconds",
        "1h",
        "string into Go struct field CertificateSigningRequestSpec.spec.expirationSeconds of type int32",
    ),
    "SchedulingResult": (
        "status.history[0].preemption.victimCount",
        "1",
        "string into Go struct field PreemptionResult.status.history.preemption.victimCount of type int32",
    ),
}


def _steps(path: str) -> list[str | int]:
    return [int(s) if s.isdigit() else s for s in re.findall(r"[^.\[\]]+", path)]


def at(obj: Any, path: str) -> Any:
    for step in _steps(path):
        obj = obj[step]
    return obj


def put(obj: Any, path: str, value: Any) -> None:
    *parents, last = _steps(path)
    for step in parents:
        obj = obj[step]
    obj[last] = value


def handled(kind: str) -> str:
    version = manifests()[kind]["apiVersion"].rpartition("/")[2]
    return f'{kind} in version "{version}" cannot be handled as a {kind}: '


def outcome(kind: str, obj: dict, mode: str, **kw: Any) -> tuple[Any, ...]:
    try:
        return check(kind, obj, mode, **kw)
    except (BadRequest, Invalid) as e:
        return (type(e), e.code, e.message)


# ---- every built-in kind -----------------------------------------------------------------
def test_the_tables_cover_every_served_built_in_kind():
    assert set(BUILT_IN) == set(manifests()) == set(NESTED) == set(WRONG)
    assert all(r.kind in BUILT_IN for r in served() if r.group != "example.com")


@pytest.mark.parametrize("kind", BUILT_IN)
def test_a_full_manifest_passes_strict_unchanged(kind):
    obj = manifests()[kind]
    for mode in (STRICT, WARN, IGNORE):
        out, warnings = check(kind, obj, mode, body=orjson.dumps(obj))
        assert out is obj and warnings == [] and obj == manifests()[kind]


@pytest.mark.parametrize("kind", BUILT_IN)
@pytest.mark.parametrize("where", ["top", "nested"])
def test_an_unknown_field_fails_strict_warns_and_is_dropped(kind, where):
    obj = manifests()[kind]
    parent, key = ("", "bogus") if where == "top" else NESTED[kind]
    (at(obj, parent) if parent else obj)[key] = 4
    path = f"{parent}.{key}" if parent else key
    e = outcome(kind, obj, STRICT)
    assert e == (BadRequest, 400, handled(kind) + f'strict decoding error: unknown field "{path}"')
    assert check(kind, copy.deepcopy(obj), WARN) == (manifests()[kind], [f'unknown field "{path}"'])
    assert check(kind, copy.deepcopy(obj), IGNORE) == (manifests()[kind], [])


@pytest.mark.parametrize("kind", BUILT_IN)
def test_a_wrong_type_fails_in_every_mode(kind):
    obj = manifests()[kind]
    path, value, said = WRONG[kind]
    put(obj, path, value)
    for mode in (STRICT, WARN, IGNORE):
        assert outcome(kind, obj, mode) == (BadRequest, 400, handled(kind) + "json: cannot unmarshal " + said)


# ---- the cases from the issue ------------------------------------------------------------
def deployment_with_typos() -> dict:
    """``replicas`` and ``imagePullPolicy`` misspelt where they stood (errors come in document order)."""
    dep = manifests()["Deployment"]
    dep["spec"] = {("replcas" if k == "replicas" else k): v for k, v in dep["spec"].items()}
    c = dep["spec"]["template"]["spec"]["containers"][0]
    dep["spec"]["template"]["spec"]["containers"][0] = {
        ("imagePullPolcy" if k == "imagePullPolicy" else k): v for k, v in c.items()
    }
    return dep


def test_replcas_typo_answers_as_upstream_per_verb():
    typos = 'unknown field "spec.replcas", unknown field "spec.template.spec.containers[0].imagePullPolcy"'
    dep = deployment_with_typos()
    assert outcome("Deployment", dep, STRICT) == (
        BadRequest,
        400,
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ' + typos,
    )
    assert outcome("Deployment", dep, STRICT, verb="update")[:2] == (BadRequest, 400)
    out, warnings = check("Deployment", dep, WARN)
    assert warnings == typos.split(", ") and "replcas" in dep["spec"]  # the request's object is left alone
    assert "replicas" not in out["spec"] and "imagePullPolicy" not in out["spec"]["template"]["spec"]["containers"][0]


def test_patches_under_strict_answer_422_showing_the_patched_object_or_the_patch():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replcas": 3}}
    detail = 'Invalid value: "{\\"apiVersion\\":\\"apps/v1\\",\\"kind\\":\\"Deployment\\",\\"metadata\\":{\\"name\\":\\"web\\"},\\"spec\\":{\\"replcas\\":3}}": strict decoding error: unknown field "spec.replcas"'
    with pytest.raises(Invalid) as e:
        check("Deployment", dep, STRICT, verb="patch", patch_type=fv.MERGE_PATCH, patch={"spec": {"replcas": 3}})
    assert e.value.message == ' "" is invalid: patch: ' + detail
    assert e.value.causes == (Cause("FieldValueInvalid", detail, "patch"),)
    smp = outcome(
        "Deployment", dep, STRICT, verb="patch", patch_type=fv.STRATEGIC_PATCH, patch={"spec": {"replcas": 3}}
    )
    assert smp == (
        Invalid,
        422,
        ' "" is invalid: patch: Invalid value: "map[spec:map[replcas:3]]": strict decoding error: unknown field "spec.replcas"',
    )
    assert check("Deployment", dep, WARN, verb="patch", patch={"spec": {"replcas": 3}})[1] == [
        'unknown field "spec.replcas"'
    ]


def test_a_json_patch_names_unknown_op_keys_first():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replcas": 3}}
    ops = [{"op": "add", "path": "/spec/replcas", "value": 3, "valu": 4}]
    body = b'[{"op":"add","path":"/spec/replcas","value":3,"valu":4,"op":"add"}]'
    _, warnings = check("Deployment", dep, WARN, verb="patch", patch_type=fv.JSON_PATCH, patch=ops, body=body)
    assert warnings == [
        'json patch unknown field "[0].valu"',
        'json patch duplicate field "[0].op"',
        'unknown field "spec.replcas"',
    ]


def test_a_mistyped_patch_result_is_422_with_the_json_error():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": "3"}}
    err = outcome("Deployment", dep, IGNORE, verb="patch")
    assert err[:2] == (Invalid, 422)
    assert err[2].endswith(
        '\\"replicas\\":\\"3\\"}}": json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'
    )


def test_server_side_apply_fails_on_unknown_fields_whatever_the_mode():
    dep = deployment_with_typos()
    dep["metadata"]["namespace"] = "prod"
    where = "failed to create typed patch object (prod/web; apps/v1, Kind=Deployment): "
    for mode in (IGNORE, WARN, STRICT):
        # The walk over one object stops at its first undeclared field: replcas hides the rest of spec.
        # v1.33 answers 500 with no reason; kubemu the 400 upstream proposes, with v1.33's text.
        assert outcome("Deployment", dep, mode, verb="apply") == (
            BadRequest,
            400,
            where + ".spec.replcas: field not declared in schema",
        )
    dep["spec"]["replicas"] = dep["spec"].pop("replcas")
    dep["metadata"]["labelz"] = {}
    assert outcome("Deployment", dep, IGNORE, verb="apply")[2] == (
        where + "errors:\n"
        "  .metadata.labelz: field not declared in schema\n"
        '  .spec.template.spec.containers[name="web"].imagePullPolcy: field not declared in schema'
    )
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {"unschedulable": "yes"}}
    assert outcome("Node", node, WARN, verb="apply")[2] == (
        "failed to create typed patch object (/n1; /v1, Kind=Node): .spec.unschedulable: expected boolean, got &{yes}"
    )
    assert check("Deployment", manifests()["Deployment"], STRICT, verb="apply")[1] == []


def test_secret_data_must_be_base64():
    secret = manifests()["Secret"]
    secret["data"]["password"] = "not base64!"
    assert outcome("Secret", secret, IGNORE)[2] == handled("Secret") + "illegal base64 data at input byte 3"
    secret["data"]["password"] = "YWJjZA="
    assert outcome("Secret", secret, IGNORE)[2] == handled("Secret") + "illegal base64 data at input byte 7"
    secret["data"]["password"] = "YWJj\nZA=="  # Go skips newlines
    assert check("Secret", secret, STRICT)[1] == []
    secret["data"]["password"] = [104, 105]  # a list of bytes decodes too, and is stored as base64
    assert check("Secret", secret, STRICT)[0]["data"]["password"] == "aGk="


@pytest.mark.parametrize(
    "text, at_byte",
    [("YWJj", None), ("YWJ", 0), ("YQ==", None), ("YQ=", 3), ("Y===", 1), ("YQ==YQ==", 4), ("a b", 1), ("", None)],
)
def test_base64_offsets_are_gos(text, at_byte):
    from cluster.frontend.gotext import base64_error

    assert base64_error(text) == at_byte


def test_a_node_affinity_written_as_a_list_is_a_type_error():
    pod = manifests()["Pod"]
    pod["spec"]["affinity"]["nodeAffinity"] = [pod["spec"]["affinity"]["nodeAffinity"]]
    assert outcome("Pod", pod, WARN) == (
        BadRequest,
        400,
        handled("Pod")
        + "json: cannot unmarshal array into Go struct field Affinity.spec.affinity.nodeAffinity of type v1.NodeAffinity",
    )
    dep = manifests()["Deployment"]
    dep["spec"]["template"]["spec"]["affinity"] = []
    assert outcome("Deployment", dep, WARN)[2].endswith(
        "Go struct field PodSpec.spec.template.spec.affinity of type v1.Affinity"
    )


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("resources.limits.cpu", "1KB", FORMAT),
        ("resources.limits.cpu", True, FORMAT),
        ("resources.requests.memory", "1Ki2", "unable to parse quantity's suffix"),
        (
            "livenessProbe.httpGet.port",
            True,
            "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32",
        ),
        (
            "ports[0].containerPort",
            3000000000,
            "json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
        ),
    ],
)
def test_self_decoding_types_speak_for_themselves(field, value, said):
    pod = manifests()["Pod"]
    put(pod["spec"]["containers"][0], field, value)
    assert outcome("Pod", pod, IGNORE)[2] == handled("Pod") + said


def test_a_bad_time_is_gos_parse_error_and_wins_over_an_earlier_type_error():
    pod = manifests()["Pod"]
    pod["metadata"]["generation"] = "1"  # saved first ...
    pod["status"]["startTime"] = "yesterday"  # ... but a time's own error returns at once
    assert outcome("Pod", pod, IGNORE)[2] == handled("Pod") + (
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'
    )
    pod["status"]["startTime"] = "2024-02-30T00:00:00Z"
    assert outcome("Pod", pod, IGNORE)[2].endswith('parsing time "2024-02-30T00:00:00Z": day out of range')
    pod["status"]["startTime"] = 5
    assert outcome("Pod", pod, IGNORE)[2].endswith("Go struct field PodStatus.status.startTime of type string")


def test_nothing_inside_an_unknown_or_free_form_field_is_looked_at():
    cr = manifests()["ControllerRevision"]
    cr["data"]["anything"] = {"goes": [1, "two"]}
    assert check("ControllerRevision", cr, STRICT)[1] == []
    pod = manifests()["Pod"]
    pod["spec"]["extra"] = {"replicas": "x", "bogus": 1}
    assert check("Pod", pod, WARN)[1] == ['unknown field "spec.extra"']
    assert check("Pod", manifests()["Pod"] | {"x": 1, "y": 2}, WARN)[1] == ['unknown field "x"', 'unknown field "y"']


def test_crd_schema_unions_decode_without_strictness():
    crd = manifests()["CustomResourceDefinition"]
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["tags"]["items"]["bogus"] = 1  # inside a union: dropped, not reported
    out, warnings = check("CustomResourceDefinition", crd, STRICT)
    assert (
        warnings == []
        and "bogus"
        not in out["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tags"][
            "items"
        ]
    )
    spec_schema["properties"]["labels"]["additionalProperties"] = "yes"
    assert (
        outcome("CustomResourceDefinition", crd, IGNORE)[2]
        == handled("CustomResourceDefinition") + "boolean or JSON schema expected"
    )


# ---- duplicates --------------------------------------------------------------------------
def test_duplicate_keys_in_a_body():
    body = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},"spec":{"containers":[{"name":"c","image":"i","image":"j"}],"bogus":{"k":1,"k":2}}}'
    obj = orjson.loads(body)
    said = [
        'duplicate field "metadata.name"',
        'duplicate field "metadata.labels.x"',
        'duplicate field "spec.containers[0].image"',
    ]
    assert duplicates(body, "Pod") == said
    assert duplicates(body) == [*said[:2], said[2], 'duplicate field "spec.bogus.k"']  # untyped: everywhere
    out, warnings = check("Pod", obj, WARN, body=body)
    assert warnings == ['unknown field "spec.bogus"', *said] and out["metadata"]["name"] == "b"
    assert outcome("Pod", obj, STRICT, body=body)[2] == handled("Pod") + "strict decoding error: " + ", ".join(
        ['unknown field "spec.bogus"', *said]
    )
    assert check("Pod", obj, IGNORE, body=body)[1] == []


def test_no_duplicates_is_cheap_and_right_whatever_the_spacing():
    obj = manifests()["Deployment"]
    assert duplicates(orjson.dumps(obj), "Deployment") == []
    assert duplicates(orjson.dumps(obj, option=orjson.OPT_INDENT_2), "Deployment") == []
    assert duplicates(b'{"kind" : "Pod", "kind" : "Pod"}') == ['duplicate field "kind"']
    assert duplicates(b'{"a":"x\\":","a":1}') == ['duplicate field "a"']  # a string holding ": does not hide it
    assert duplicates(b"not json") == [] and duplicates(b"") == []


# ---- custom resources --------------------------------------------------------------------
def widget(**spec: Any) -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"},
        "spec": {"size": "small", **spec},
    }


def test_a_custom_resource_is_pruned_by_its_structural_schema():
    obj = widget(
        junk=1, ports=[{"name": "a", "port": 1, "x": 2}], config={"level": 1, "free": {"any": 1}}, note=None, ratio=None
    )
    obj["metadata"]["labelz"] = {"a": "b"}
    obj["metadata"]["labels"] = 5  # malformed metadata is dropped without a word
    obj["spec"]["template"] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"}, "spec": {"x": 1}, "y": 1}
    out, warnings = check("Widget", obj, WARN, crd_schema=widget_schema())
    assert warnings == [
        'unknown field "metadata.labelz"',
        'unknown field "spec.junk"',
        'unknown field "spec.ports[0].x"',
        'unknown field "spec.template.spec.x"',  # an object without properties keeps nothing
        'unknown field "spec.template.y"',
    ]
    assert out["metadata"] == {"name": "w1", "namespace": "default"}
    assert out["spec"] == {
        "size": "small",
        "ports": [{"name": "a", "port": 1}],
        "config": {"level": 1, "free": {"any": 1}},
        "note": None,
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"}, "spec": {}},
        "paused": False,  # the schema's default
    }
    assert outcome("Widget", obj, STRICT, crd_schema=widget_schema()) == (
        BadRequest,
        400,
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: ' + ", ".join(warnings),
    )
    assert check("Widget", obj, IGNORE, crd_schema=widget_schema())[1] == []
    assert outcome("Widget", obj, IGNORE, verb="apply", crd_schema=widget_schema())[:2] == (BadRequest, 400)


def test_a_custom_resource_failing_its_schema_is_422():
    err = outcome("Widget", widget(replicas="string"), IGNORE, crd_schema=widget_schema())
    assert err == (
        Invalid,
        422,
        'Widget.example.com "w1" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    )
    err = outcome("Widget", widget(size="huge", tags=["a", 1], port=True), WARN, crd_schema=widget_schema())
    assert err[2] == (
        'Widget.example.com "w1" is invalid: ['
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean", '
        'spec.size: Unsupported value: "huge": supported values: "small", "large", '
        'spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"]'
    )
    missing = widget()
    del missing["spec"]["size"]
    assert (
        outcome("Widget", missing, WARN, crd_schema=widget_schema())[2]
        == 'Widget.example.com "w1" is invalid: spec.size: Required value'
    )
    assert check("Widget", widget(replicas=2.0, port="http", ratio=1), STRICT, crd_schema=widget_schema())[1] == []


def test_a_custom_resource_without_a_schema_keeps_its_fields():
    assert check("Widget", widget(anything=1), STRICT) == (widget(anything=1), [])


# ---- fieldValidation itself --------------------------------------------------------------
@pytest.mark.parametrize(
    "query, mode",
    [
        ({}, WARN),
        ({"fieldValidation": ""}, WARN),
        ({"fieldValidation": "Strict"}, STRICT),
        ({"fieldValidation": "Ignore"}, IGNORE),
    ],
)
def test_the_mode_defaults_to_warn(query, mode):
    assert parse_mode(query) == mode


@pytest.mark.parametrize(
    "verb, options",
    [("create", "CreateOptions"), ("update", "UpdateOptions"), ("patch", "PatchOptions"), ("apply", "PatchOptions")],
)
def test_an_unsupported_mode_is_422_on_the_verbs_options(verb, options):
    with pytest.raises(Invalid) as e:
        parse_mode({"fieldValidation": "strict"}, verb)
    assert e.value.message == (
        f'{options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    assert e.value.code == 422 and e.value.causes[0].field == "fieldValidation"


# ---- what kubemu writes itself -----------------------------------------------------------
def test_every_object_kubemu_stores_passes_strict(monkeypatch):
    from cluster.api import codec
    from cluster.apiserver.store import Store
    from cluster.scenario.local import run_local
    from cluster.scenario.schema import load_file

    refused: list[str] = []
    seen: set[str] = set()
    put_ = Store.put

    def put_checked(self: Store, kind: str, obj: dict, event_type: str) -> int:
        rv = put_(self, kind, obj, event_type)
        seen.add(kind)
        try:
            check(kind, codec.decode(codec.encode(obj)), STRICT)
        except (BadRequest, Invalid) as e:
            refused.append(e.message)
        return rv

    monkeypatch.setattr(Store, "put", put_checked)
    for name in ("workloads/rolling-update.yaml", "workloads/hpa-scale.yaml", "workloads/statefulset-ordered.yaml"):
        assert run_local(load_file(str(ROOT / "scenarios" / name)), lambda _: None)["passed"]
    assert refused == [] and {"Pod", "Node", "Event", "Deployment", "ReplicaSet", "StatefulSet"} <= seen


def test_text_that_looks_like_keys_does_not_hide_or_invent_duplicates():
    applied = manifests()["Deployment"]
    applied["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = orjson.dumps(
        applied
    ).decode()
    assert duplicates(orjson.dumps(applied), "Deployment") == []
    assert fv._written_keys(orjson.dumps(applied)) == fv._keys(applied)  # the quick count holds
    assert duplicates(b'{"a\\\\":1,"a\\\\":2}') == ['duplicate field "a\\\\"']  # a key ending in a backslash


def test_warning_headers_escape_dedupe_and_truncate_as_upstream():
    assert fv.warning_headers(['unknown field "spec.replcas"', 'unknown field "spec.replcas"', "a\\b"]) == [
        '299 - "unknown field \\"spec.replcas\\""',
        '299 - "a\\\\b"',
    ]
    long = [f"{i:04d}" + "x" * 996 for i in range(6)]  # 1,000 runes each
    headers = fv.warning_headers(long)
    assert [h[7:11] for h in headers] == ["0000", "0001", "0002", "0003", "0004", "0005"]
    assert all(len(h) == len('299 - ""') + 256 for h in headers)  # past 4096 in all: each cut to 256
    many = fv.warning_headers([f"{i:05d}" + "y" * 995 for i in range(40)])
    assert len(many) == 16  # cut ones stop once 4,096 runes are written
