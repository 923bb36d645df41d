"""Create-time validation (cluster/api/validation.py): one table row per rule.

Each failing row names the mutation applied to a valid object and the exact one-line
error expected, so the message formats are pinned here.
"""

import copy
import pickle
import re

import pytest

from cluster.api.objects import KINDS
from cluster.api.validation import (
    API_VERSIONS,
    HIGHEST_USER_PRIORITY,
    NO_VALUE,
    SYSTEM_PRIORITY_CLASSES,
    ValidationError,
    validate,
    validate_pod_spec,
)

KEY = "is not a valid key (an optional DNS-subdomain prefix and '/', then a name of at most 63 of letters, digits, '-', '_', '.'; starting and ending with a letter or digit)"
VALUE = "is not a valid label value (empty, or at most 63 of letters, digits, '-', '_', '.'; starting and ending with a letter or digit)"
from cluster.api.validationfields import LABEL_RULE as DNS_LABEL  # noqa: E402
from cluster.api.validationfields import SUBDOMAIN_RULE as SUBDOMAIN  # noqa: E402

KNOWN = "(known: kubemu.io/start-seconds, kubemu.io/run-seconds, kubemu.io/exit-code, kubemu.io/stop-seconds, kubemu.io/memory-usage, kubemu.io/cpu-usage, kubemu.io/log, kubemu.io/readiness, kubemu.io/liveness, kubemu.io/startup, kubemu.io/post-start-seconds, kubemu.io/pre-stop-seconds, kubemu.io/image-pull)"

_DELETE = object()


def _set(obj, path, value):
    """Set (or with _DELETE remove) a path such as ``spec.containers[0].name``.

    ``[n]`` indexes a list (n == len appends); ``[key]`` is a map key that may hold dots.
    """
    parts = []
    for piece in re.findall(r"\[[^\]]+\]|[^.\[]+", path):
        parts.append(int(piece[1:-1]) if piece[1:-1].isdigit() else piece.strip("[]"))
    target = obj
    for p in parts[:-1]:
        if isinstance(target, dict) and p not in target:
            target[p] = {}
        target = target[p]
    if value is _DELETE:
        del target[parts[-1]]
    elif isinstance(target, list) and parts[-1] == len(target):
        target.append(value)
    else:
        target[parts[-1]] = value
    return obj


def _error(obj, prefix=""):
    try:
        validate(obj, prefix)
    except ValidationError as e:
        return str(e)
    return None


def _check(base, changes, expected, prefix=""):
    obj = copy.deepcopy(base)
    for path, value in changes.items():
        _set(obj, path, value)
    assert _error(obj, prefix) == expected


def _obj(api_version, kind, name, namespace="default", **fields):
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


WEB = {
    "name": "web",
    "image": "nginx",
    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
}
POD = _obj("v1", "Pod", "web-1", spec={"containers": [WEB]})
POD["metadata"]["labels"] = {"app": "web"}

C0 = "spec.containers[0]"
RES = f"{C0}.resources"


# ---- the error type ----------------------------------------------------------------------


def test_error_formats():
    e = ValidationError("spec.replicas", -1, "must be greater than or equal to 0")
    assert str(e) == "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    assert (e.path, e.value, e.detail, e.retryable) == (
        "spec.replicas",
        -1,
        "must be greater than or equal to 0",
        False,
    )
    assert str(ValidationError("spec", detail="Required value")) == "spec: Required value"
    assert ValidationError("spec", detail="x").value is NO_VALUE
    assert str(ValidationError("a", "line\nbreak", "bad")) == 'a: Invalid value: "line\\nbreak": bad'
    assert isinstance(e, ValueError)


def test_error_pickles():
    e = ValidationError("metadata.name", NO_VALUE, "Required value")
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and back.value is NO_VALUE and back.path == e.path
    back = pickle.loads(pickle.dumps(ValidationError("x", "250x", "is not a quantity")))
    assert (back.path, back.value, back.detail) == ("x", "250x", "is not a quantity")


# ---- kind, apiVersion, metadata --------------------------------------------------------


def test_valid_pod():
    assert _error(POD) is None


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"kind": _DELETE}, "kind: Required value"),
        (
            {"kind": "Widget"},
            f'kind: Invalid value: "Widget": is not a kind kubemu serves (known: {", ".join(sorted(KINDS))})',
        ),
        ({"apiVersion": "v2"}, 'apiVersion: Invalid value: "v2": is not served for Pod (use "v1")'),
        ({"apiVersion": _DELETE}, 'apiVersion: Invalid value: null: is not served for Pod (use "v1")'),
        ({"metadata": _DELETE}, "metadata.name: Required value: name or generateName is required"),
        ({"metadata": []}, "metadata: Invalid value: []: must be a map"),
        ({"metadata.name": ""}, "metadata.name: Required value: name or generateName is required"),
        ({"metadata.name": _DELETE, "metadata.generateName": "web-"}, None),
        ({"metadata.name": 5}, "metadata.name: Invalid value: 5: must be a string"),
        ({"metadata.name": "Web"}, f'metadata.name: Invalid value: "Web": {SUBDOMAIN}'),
        ({"metadata.name": "web-"}, f'metadata.name: Invalid value: "web-": {SUBDOMAIN}'),
        (
            {"metadata.name": "a" * 254},
            f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters',
        ),
        ({"metadata.name": "web.v1"}, None),
        ({"metadata.name": "a" * 253}, None),
        ({"metadata.namespace": "kube_system"}, f'metadata.namespace: Invalid value: "kube_system": {DNS_LABEL}'),
        ({"metadata.namespace": "a.b"}, f'metadata.namespace: Invalid value: "a.b": {DNS_LABEL}'),
        ({"metadata.labels": ["app"]}, 'metadata.labels: Invalid value: ["app"]: must be a map'),
        ({"metadata.labels": {"app.kubernetes.io/name": "web", "v": "", "A_b.c": "X-y_z.1"}}, None),
        ({"metadata.labels": {"bad key": "x"}}, f'metadata.labels[bad key]: Invalid value: "bad key": {KEY}'),
        (
            {"metadata.labels": {"Example.com/x": "y"}},
            f'metadata.labels[Example.com/x]: Invalid value: "Example.com/x": {KEY}',
        ),
        ({"metadata.labels": {"/x": "y"}}, f'metadata.labels[/x]: Invalid value: "/x": {KEY}'),
        ({"metadata.labels": {"a/b/c": "y"}}, f'metadata.labels[a/b/c]: Invalid value: "a/b/c": {KEY}'),
        ({"metadata.labels": {"app": 1}}, "metadata.labels.app: Invalid value: 1: must be a string"),
        ({"metadata.labels": {"app": "-web"}}, f'metadata.labels.app: Invalid value: "-web": {VALUE}'),
        ({"metadata.labels": {"app": "x" * 64}}, f'metadata.labels.app: Invalid value: "{"x" * 64}": {VALUE}'),
        ({"metadata.labels": {"x" * 64: "a"}}, f'metadata.labels.{"x" * 64}: Invalid value: "{"x" * 64}": {KEY}'),
        ({"metadata.annotations": {"note": "any text at all, even: spaces!"}}, None),
        (
            {"metadata.annotations": {"replicas": 3}},
            "metadata.annotations.replicas: Invalid value: 3: must be a string",
        ),
        ({"metadata.annotations": "x"}, 'metadata.annotations: Invalid value: "x": must be a map'),
        (
            {
                "metadata.uid": "abc",
                "metadata.resourceVersion": "7",
                "metadata.ownerReferences": [{"kind": "ReplicaSet"}],
            },
            None,
        ),
    ],
)
def test_kind_and_metadata(changes, expected):
    _check(POD, changes, expected)


def test_non_dict_object():
    assert _error(["x"]) == 'Invalid value: ["x"]: must be a map (a Kubernetes object)'
    assert (
        _error(["x"], "spec.objects[0]") == 'spec.objects[0]: Invalid value: ["x"]: must be a map (a Kubernetes object)'
    )


def test_path_prefix():
    bad = _set(copy.deepcopy(POD), "spec.containers", [])
    assert (
        _error(bad, "spec.objects[3]")
        == "spec.objects[3].spec.containers: Required value: a pod needs at least one container"
    )
    bad = _set(copy.deepcopy(POD), "kind", "Widget")
    assert _error(bad, "spec.objects[3]").startswith('spec.objects[3].kind: Invalid value: "Widget": is not a kind')


@pytest.mark.parametrize(
    "kind, versions",
    [
        ("Pod", ("v1",)),
        ("PriorityClass", ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1")),
        ("PodDisruptionBudget", ("policy/v1", "policy/v1beta1")),
        ("ReplicaSet", ("apps/v1",)),
    ],
)
def test_api_versions(kind, versions):
    assert API_VERSIONS[kind] == versions


# ---- pods --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, expected",
    [
        # containers
        ({"spec.containers": []}, "spec.containers: Required value: a pod needs at least one container"),
        ({"spec.containers": _DELETE}, "spec.containers: Required value: a pod needs at least one container"),
        ({"spec": _DELETE}, "spec.containers: Required value: a pod needs at least one container"),
        ({"spec": "x"}, 'spec: Invalid value: "x": must be a map'),
        (
            {"spec.containers": {"name": "web"}},
            'spec.containers: Invalid value: map[string]string{"name":"web"}: must be a list',
        ),
        ({"spec.containers": ["web"]}, 'spec.containers[0]: Invalid value: "web": must be a map'),
        ({f"{C0}.name": _DELETE}, f"{C0}.name: Required value"),
        ({f"{C0}.name": "Web"}, f'{C0}.name: Invalid value: "Web": {DNS_LABEL}'),
        ({"spec.containers[1]": {"name": "web", "image": "x"}}, 'spec.containers[1].name: Duplicate value: "web"'),
        (
            {"spec.containers[1]": {"name": "web"}},
            '[spec.containers[1].image: Required value, spec.containers[1].name: Duplicate value: "web"]',
        ),
        (
            {"spec.initContainers": [{"name": "web", "image": "x"}]},
            'spec.containers[0].name: Duplicate value: "web"',
        ),
        (
            {
                "spec.initContainers": [{"name": "init", "image": "i"}],
                "spec.containers[1]": {"name": "side", "image": "s"},
            },
            None,
        ),
        ({"spec.initContainers": [{"name": "proxy", "image": "p", "restartPolicy": "Always"}]}, None),
        (
            {"spec.initContainers": [{"name": "proxy", "image": "p", "restartPolicy": "Never"}]},
            'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"',
        ),
        (
            {"spec.initContainers": [{"name": "i", "image": "i", "resources": {"requests": {"cpu": "1x"}}}]},
            'spec.initContainers[0].resources.requests[cpu]: Invalid value: "1x": is not a quantity',
        ),
        # resources
        (
            {f"{RES}.requests[cpu]": "250x"},
            'spec.containers[0].resources.requests[cpu]: Invalid value: "250x": is not a quantity',
        ),
        (
            {f"{RES}.limits[memory]": "1 Mi"},
            'spec.containers[0].resources.limits[memory]: Invalid value: "1 Mi": is not a quantity',
        ),
        (
            {f"{RES}.requests[cpu]": "-1"},
            'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (
            {f"{RES}.limits[cpu]": "-100m"},
            'spec.containers[0].resources.limits[cpu]: Invalid value: "-100m": must be greater than or equal to 0',
        ),
        ({f"{RES}.requests[cpu]": 0.5, f"{RES}.limits[cpu]": 1}, None),
        (
            {f"{RES}.requests[cpu]": "2"},
            'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
        ),
        (
            {f"{RES}.requests[memory]": "129Mi"},
            'spec.containers[0].resources.requests: Invalid value: "129Mi": must be less than or equal to memory limit of 128Mi',
        ),
        ({f"{RES}.requests[memory]": "128Mi"}, None),
        ({f"{RES}.requests[cpu]": "1000m"}, None),
        ({f"{RES}.limits": _DELETE}, None),
        ({f"{RES}.requests": _DELETE}, None),
        ({f"{RES}.requests": ["cpu"]}, 'spec.containers[0].resources.requests: Invalid value: ["cpu"]: must be a map'),
        ({f"{RES}.limits[nvidia.com/gpu]": "2"}, None),
        ({f"{RES}.requests[nvidia.com/gpu]": "1", f"{RES}.limits[nvidia.com/gpu]": "1"}, None),
        (
            {f"{RES}.requests[nvidia.com/gpu]": "1", f"{RES}.limits[nvidia.com/gpu]": "2"},
            'spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2',
        ),
        (
            {f"{RES}.requests[nvidia.com/gpu]": "1"},
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
        ),
        ({f"{RES}.requests.hugepages-2Mi": "2Mi"}, None),  # not an extended resource
        (
            {f"{RES}.limits[nvidia.com/gpu]": "1.5"},
            'spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "1.5": must be an integer',
        ),
        (
            {f"{RES}.limits[nvidia.com/gpu]": "500m"},
            'spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
        ),
        ({"spec.overhead": {"cpu": "x"}}, 'spec.overhead[cpu]: Invalid value: "x": is not a quantity'),
        # ports
        ({f"{C0}.ports": [{"containerPort": 1}, {"containerPort": 65535, "hostPort": 0, "protocol": "SCTP"}]}, None),
        (
            {f"{C0}.ports[0].containerPort": 0},
            f"{C0}.ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        (
            {f"{C0}.ports[0].containerPort": 65536},
            f"{C0}.ports[0].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive",
        ),
        (
            {f"{C0}.ports[0].containerPort": "80"},
            f'{C0}.ports[0].containerPort: Invalid value: "80": must be an integer',
        ),
        ({f"{C0}.ports[0].containerPort": _DELETE}, f"{C0}.ports[0].containerPort: Required value"),
        (
            {f"{C0}.ports[0].hostPort": 70000},
            f"{C0}.ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            {f"{C0}.ports[0].hostPort": -1},
            f"{C0}.ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive",
        ),
        (
            {f"{C0}.ports[0].protocol": "tcp"},
            f'{C0}.ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
        ),
        ({f"{C0}.ports": [8080]}, f"{C0}.ports[0]: Invalid value: 8080: must be a map"),
        # pod-level fields
        ({"spec.restartPolicy": "Never"}, None),
        (
            {"spec.restartPolicy": "Sometimes"},
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        ),
        ({"spec.terminationGracePeriodSeconds": 0}, None),
        (
            {"spec.terminationGracePeriodSeconds": -1},
            "spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"spec.terminationGracePeriodSeconds": 1.5},
            "spec.terminationGracePeriodSeconds: Invalid value: 1.5: must be an integer",
        ),
        (
            {"spec.terminationGracePeriodSeconds": True},
            "spec.terminationGracePeriodSeconds: Invalid value: true: must be an integer",
        ),
        ({"spec.priority": -5}, None),
        ({"spec.activeDeadlineSeconds": 30}, None),
        (
            {"spec.activeDeadlineSeconds": 0},
            "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
        ),
        (
            {"spec.activeDeadlineSeconds": 1e23},
            "spec.activeDeadlineSeconds: Invalid value: 1e+23: must be an integer",
        ),  # kubectl's big numbers
        ({"spec.priority": "high"}, 'spec.priority: Invalid value: "high": must be an integer'),
        ({"spec.preemptionPolicy": "Never"}, None),
        (
            {"spec.preemptionPolicy": "Always"},
            'spec.preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"',
        ),
        ({"spec.nodeSelector": {"disktype": "ssd", "kubernetes.io/hostname": "node-1"}}, None),
        (
            {"spec.nodeSelector": {"disktype": True}},
            "spec.nodeSelector.disktype: Invalid value: true: must be a string",
        ),
        ({"spec.nodeSelector": "ssd"}, 'spec.nodeSelector: Invalid value: "ssd": must be a map'),
    ],
)
def test_pod(changes, expected):
    _check(POD, changes, expected)


T0 = "spec.tolerations[0]"


@pytest.mark.parametrize(
    "toleration, expected",
    [
        ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, None),
        ({"key": "dedicated", "value": "gpu"}, None),
        ({"operator": "Exists"}, None),
        ({"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}, None),
        (
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            None,
        ),
        ({"key": "k", "operator": "Equal", "effect": ""}, None),
        (
            {"key": "k", "operator": "Gt", "value": "1"},
            f'{T0}.operator: Unsupported value: "Gt": supported values: "Equal", "Exists"',
        ),
        (
            {"key": "k", "effect": "NoRun"},
            f'{T0}.effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        ),
        (
            {"key": "k", "operator": "Exists", "value": "v"},
            f'{T0}.value: Invalid value: "v": must be empty when operator is Exists',
        ),
        ({"value": "v"}, f"{T0}.operator: must be Exists when key is empty (which matches all keys)"),
        (
            {"operator": "Equal"},
            f'{T0}.operator: Invalid value: "Equal": must be Exists when key is empty (which matches all keys)',
        ),
        (
            {"key": "k", "effect": "NoExecute", "tolerationSeconds": "300"},
            f'{T0}.tolerationSeconds: Invalid value: "300": must be an integer',
        ),
        (
            {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 30},
            f'{T0}.effect: Invalid value: "NoSchedule": must be NoExecute when tolerationSeconds is set',
        ),
        ({"key": 5}, f"{T0}.key: Invalid value: 5: must be a string"),
        ("k", f'{T0}: Invalid value: "k": must be a map'),
    ],
)
def test_tolerations(toleration, expected):
    _check(POD, {"spec.tolerations": [toleration]}, expected)


ANN = "metadata.annotations"


@pytest.mark.parametrize(
    "annotations, expected",
    [
        (
            {
                "kubemu.io/start-seconds": "2.5",
                "kubemu.io/run-seconds": "60",
                "kubemu.io/exit-code": "3",
                "kubemu.io/stop-seconds": "1",
            },
            None,
        ),
        ({"kubemu.io/memory-usage": "100Mi", "kubemu.io/cpu-usage": "500m"}, None),
        ({"kubemu.io/memory-usage": "ramp(10Mi, 200Mi, 60s)"}, None),
        ({"kubemu.io/cpu-usage": "spike(1, 10s)"}, None),
        ({"kubemu.io/memory-usage.web": "50Mi", "kubemu.io/start-seconds.web": "4"}, None),
        (
            {"kubemu.io/start-seconds": "soon"},
            f'{ANN}[kubemu.io/start-seconds]: Invalid value: "soon": is not a number of seconds',
        ),
        (
            {"kubemu.io/run-seconds": "-1"},
            f'{ANN}[kubemu.io/run-seconds]: Invalid value: "-1": must be a finite number of seconds >= 0',
        ),
        (
            {"kubemu.io/exit-code": "256"},
            f'{ANN}[kubemu.io/exit-code]: Invalid value: "256": must be between 0 and 255',
        ),
        (
            {"kubemu.io/exit-code": "one"},
            f'{ANN}[kubemu.io/exit-code]: Invalid value: "one": is not an integer exit code',
        ),
        (
            {"kubemu.io/memory-usage": "lots"},
            f'{ANN}[kubemu.io/memory-usage]: Invalid value: "lots": is not a quantity or a usage profile (ramp(...), spike(...))',
        ),
        (
            {"kubemu.io/cpu-usage": "-1"},
            f'{ANN}[kubemu.io/cpu-usage]: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (
            {"kubemu.io/memory-usage.web": "lots"},
            f'{ANN}[kubemu.io/memory-usage.web]: Invalid value: "lots": is not a quantity or a usage profile (ramp(...), spike(...))',
        ),
        (
            {"kubemu.io/start-seconds.web": "x"},
            f'{ANN}[kubemu.io/start-seconds.web]: Invalid value: "x": is not a number of seconds',
        ),
        (
            {"kubemu.io/memory-usage.db": "1Mi"},
            f'{ANN}[kubemu.io/memory-usage.db]: Invalid value: "kubemu.io/memory-usage.db": names no container of this pod (containers: web)',
        ),
        (
            {"kubemu.io/memory-usage.": "1Mi"},
            f'{ANN}[kubemu.io/memory-usage.]: Invalid value: "kubemu.io/memory-usage.": {KEY}',
        ),
        (
            {"kubemu.io/start-second": "1"},
            f'{ANN}[kubemu.io/start-second]: Invalid value: "kubemu.io/start-second": is not a kubemu.io annotation {KNOWN}',
        ),
        ({"example.com/kubemu.io-ish": "1", "kubemu.io.other/x": "y"}, None),  # only the kubemu.io/ prefix is ours
    ],
)
def test_kubemu_annotations(annotations, expected):
    _check(POD, {ANN: annotations}, expected)


def test_per_container_override_may_name_an_init_container():
    _check(
        POD, {"spec.initContainers": [{"name": "setup", "image": "s"}], ANN: {"kubemu.io/run-seconds.setup": "5"}}, None
    )


def test_realistic_manifest_with_unknown_fields_validates():
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "web-7d4b9c-",
            "namespace": "shop",
            "labels": {"app.kubernetes.io/name": "web", "pod-template-hash": "7d4b9c"},
            "annotations": {"prometheus.io/scrape": "true", "kubemu.io/run-seconds": "120"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c", "uid": "u1", "controller": True}
            ],
            "finalizers": ["example.com/cleanup"],
        },
        "spec": {
            "serviceAccountName": "web",
            "securityContext": {"runAsNonRoot": True, "fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}},
            "volumes": [
                {"name": "cfg", "configMap": {"name": "web-config"}},
                {"name": "tmp", "emptyDir": {"medium": "Memory"}},
            ],
            "initContainers": [
                {
                    "name": "migrate",
                    "image": "shop/migrate:1.2",
                    "command": ["./migrate"],
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
            "containers": [
                {
                    "name": "web",
                    "image": "shop/web:1.2",
                    "imagePullPolicy": "IfNotPresent",
                    "args": ["--port=8080"],
                    "env": [
                        {"name": "MODE", "value": "prod"},
                        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                    ],
                    "ports": [{"name": "http", "containerPort": 8080}],
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "1Gi"},
                        "limits": {"memory": "512Mi"},
                    },
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
                    "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10},
                    "volumeMounts": [{"name": "cfg", "mountPath": "/etc/web"}],
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                },
                {
                    "name": "log-shipper",
                    "image": "fluent-bit:3",
                    "resources": {"limits": {"cpu": "200m", "memory": "64Mi"}},
                },
            ],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}
            ],
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "priorityClassName": "shop-high",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
    }
    validate(pod)


def test_validate_pod_spec_directly():
    assert validate_pod_spec(
        {"containers": [{"name": "a", "image": "a"}], "initContainers": [{"name": "b", "image": "b"}]}
    ) == {"a", "b"}
    with pytest.raises(ValidationError) as info:
        validate_pod_spec({"containers": []}, "template.spec")
    assert str(info.value) == "template.spec.containers: Required value: a pod needs at least one container"


# ---- nodes -------------------------------------------------------------------------------

NODE = _obj(
    "v1", "Node", "node-0", None, spec={"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
)
NODE["status"] = {
    "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
    "allocatable": {"cpu": "3900m", "memory": "7Gi"},
}


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"metadata.name": "node.example.com"}, None),
        ({"metadata.name": "Node_0"}, f'metadata.name: Invalid value: "Node_0": {SUBDOMAIN}'),
        ({"metadata.namespace": "default"}, None),
        ({"spec.taints[0].effect": "NoExecute"}, None),
        ({"spec.taints[0].effect": "PreferNoSchedule"}, None),
        ({"spec.taints[0].key": _DELETE}, "spec.taints[0].key: Required value"),
        ({"spec.taints[0].key": "bad key"}, f'spec.taints[0].key: Invalid value: "bad key": {KEY}'),
        ({"spec.taints[0].effect": _DELETE}, "spec.taints[0].effect: Required value"),
        (
            {"spec.taints[0].effect": "Evict"},
            'spec.taints[0].effect: Unsupported value: "Evict": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        ),
        ({"spec.taints": {"key": "x"}}, 'spec.taints: Invalid value: map[string]string{"key":"x"}: must be a list'),
        ({"status.capacity.cpu": "4 cores"}, 'status.capacity[cpu]: Invalid value: "4 cores": is not a quantity'),
        (
            {"status.allocatable.memory": "-1Gi"},
            'status.allocatable[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
        ),
        (
            {"status.capacity[nvidia.com/gpu]": "x"},
            'status.capacity[nvidia.com/gpu]: Invalid value: "x": is not a quantity',
        ),
        ({"spec": _DELETE, "status": _DELETE}, None),
    ],
)
def test_node(changes, expected):
    _check(NODE, changes, expected)


# ---- priority classes ------------------------------------------------------------------

PC = _obj("scheduling.k8s.io/v1", "PriorityClass", "high", None, value=1000)
RESERVED = (
    "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: "
)


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"apiVersion": "scheduling.k8s.io/v1beta1"}, None),
        (
            {"apiVersion": "scheduling.k8s.io/v1alpha1"},
            'apiVersion: Invalid value: "scheduling.k8s.io/v1alpha1": is not served for PriorityClass (use "scheduling.k8s.io/v1" or "scheduling.k8s.io/v1beta1")',
        ),
        ({"value": -100, "globalDefault": True, "preemptionPolicy": "Never", "description": "batch"}, None),
        ({"value": HIGHEST_USER_PRIORITY}, None),
        (
            {"value": HIGHEST_USER_PRIORITY + 1},
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
        ),
        ({"value": _DELETE}, "value: Required value"),
        ({"value": "1000"}, 'value: Invalid value: "1000": must be an integer'),
        ({"value": 2**31}, "value: Invalid value: 2147483648: must be between -2147483648 and 2147483647, inclusive"),
        ({"globalDefault": "yes"}, 'globalDefault: Invalid value: "yes": must be a boolean'),
        (
            {"preemptionPolicy": "Sometimes"},
            'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
        ),
        ({"metadata.name": "system-cluster-critical", "value": 2000000000}, None),
        ({"metadata.name": "system-node-critical", "value": 2000001000, "globalDefault": False}, None),
        (
            {"metadata.name": "system-cluster-critical", "value": 1000},
            RESERVED + "value of system-cluster-critical PriorityClass must be 2000000000",
        ),
        (
            {"metadata.name": "system-node-critical", "value": 2000001000, "globalDefault": True},
            RESERVED + "globalDefault of system-node-critical PriorityClass must be false",
        ),
        (
            {"metadata.name": "system-custom", "value": 5},
            RESERVED + "system-custom is not a known system priority class",
        ),
        ({"metadata.name": "High"}, f'metadata.name: Invalid value: "High": {SUBDOMAIN}'),
    ],
)
def test_priority_class(changes, expected):
    _check(PC, changes, expected)


def test_priority_constants():
    assert HIGHEST_USER_PRIORITY == 1_000_000_000
    assert SYSTEM_PRIORITY_CLASSES == {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


# ---- pod disruption budgets ------------------------------------------------------------

PDB = _obj(
    "policy/v1", "PodDisruptionBudget", "web", spec={"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}
)


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"apiVersion": "policy/v1beta1"}, None),
        ({"spec.minAvailable": "50%"}, None),
        ({"spec.minAvailable": "0%"}, None),
        ({"spec.minAvailable": "100%"}, None),
        ({"spec.minAvailable": 0}, None),
        ({"spec.minAvailable": _DELETE, "spec.maxUnavailable": 1}, None),
        ({"spec.minAvailable": _DELETE, "spec.maxUnavailable": "25%"}, None),
        ({"spec.minAvailable": _DELETE}, "spec: Required value: one of minAvailable or maxUnavailable"),
        ({"spec": _DELETE}, "spec: Required value: one of minAvailable or maxUnavailable"),
        ({"spec.maxUnavailable": 1}, "spec: minAvailable and maxUnavailable cannot both be set"),
        ({"spec.minAvailable": -1}, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
        (
            {"spec.minAvailable": "101%"},
            'spec.minAvailable: Invalid value: "101%": must be a percentage between 0% and 100%',
        ),
        (
            {"spec.minAvailable": "5"},
            'spec.minAvailable: Invalid value: "5": must be an integer or a percentage (e.g. "50%")',
        ),
        (
            {"spec.minAvailable": "-5%"},
            'spec.minAvailable: Invalid value: "-5%": must be an integer or a percentage (e.g. "50%")',
        ),
        (
            {"spec.minAvailable": _DELETE, "spec.maxUnavailable": 1.5},
            'spec.maxUnavailable: Invalid value: 1.5: must be an integer or a percentage (e.g. "50%")',
        ),
        ({"spec.selector": _DELETE}, None),
        ({"spec.selector": {}}, None),
        ({"spec.selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}}, None),
        (
            {"spec.selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
            "spec.selector.matchExpressions[0].values: must be non-empty when operator is In",
        ),
        (
            {"spec.selector": {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}},
            'spec.selector.matchExpressions[0].values: Invalid value: ["x"]: must be empty when operator is Exists',
        ),
        (
            {"spec.selector": {"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}},
            'spec.selector.matchExpressions[0].operator: Invalid value: "Gt": is not a valid selector operator (supported: "In", "NotIn", "Exists", "DoesNotExist")',
        ),
        (
            {"spec.selector": {"matchExpressions": [{"key": "app", "operator": ["In"], "values": ["x"]}]}},
            'spec.selector.matchExpressions[0].operator: Invalid value: ["In"]: is not a valid selector operator (supported: "In", "NotIn", "Exists", "DoesNotExist")',
        ),
        (
            {"spec.selector": {"matchExpressions": [{"key": "bad key", "operator": "Exists"}]}},
            f'spec.selector.matchExpressions[0].key: Invalid value: "bad key": {KEY}',
        ),
        (
            {"spec.selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["ok", "not ok"]}]}},
            f'spec.selector.matchExpressions[0].values[1]: Invalid value: "not ok": {VALUE}',
        ),
        (
            {"spec.selector": {"matchLabels": {"app": 1}}},
            "spec.selector.matchLabels.app: Invalid value: 1: must be a string",
        ),
        (
            {"spec.selector": "app=web"},
            'spec.selector: Invalid value: "app=web": must be a map with matchLabels and/or matchExpressions',
        ),
    ],
)
def test_pdb(changes, expected):
    _check(PDB, changes, expected)


# ---- replica sets and daemon sets ------------------------------------------------------

TEMPLATE = {
    "metadata": {"labels": {"app": "web", "tier": "front"}},
    "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
}
RS = _obj(
    "apps/v1",
    "ReplicaSet",
    "web",
    spec={"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
)
DS = copy.deepcopy(RS)
DS["kind"] = "DaemonSet"
del DS["spec"]["replicas"]

TS = "spec.template.spec"


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"spec.replicas": 0}, None),
        ({"spec.replicas": _DELETE}, None),
        ({"spec.replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        ({"spec.replicas": "3"}, 'spec.replicas: Invalid value: "3": must be an integer'),
        (
            {"apiVersion": "extensions/v1beta1"},
            'apiVersion: Invalid value: "extensions/v1beta1": is not served for {kind} (use "apps/v1")',
        ),
        ({"spec.selector": _DELETE}, "spec.selector: Required value"),
        ({"spec.selector": {}}, "spec.selector: Required value: a non-empty selector is required"),
        (
            {"spec.selector": {"matchExpressions": [{"key": "tier", "operator": "NotIn"}]}},
            "spec.selector.matchExpressions[0].values: must be non-empty when operator is NotIn",
        ),
        (
            {"spec.selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]}]}},
            None,
        ),
        ({"spec.template": _DELETE}, "spec.template: Required value"),
        ({"spec.template": "pod"}, 'spec.template: Invalid value: "pod": must be a map'),
        (
            {"spec.template.metadata.labels": {"app": "db"}},
            'spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: does not match the selector app=web',
        ),
        (
            {"spec.template.metadata": _DELETE},
            "spec.template.metadata.labels: Invalid value: {}: does not match the selector app=web",
        ),
        (
            {"spec.template.metadata.labels": {"app": "web", "bad key": "x"}},
            f'spec.template.metadata.labels[bad key]: Invalid value: "bad key": {KEY}',
        ),
        ({"spec.template.metadata.name": "ignored-name"}, None),
        (
            {"spec.template.metadata.annotations": {"kubemu.io/run-seconds": "x"}},
            'spec.template.metadata.annotations[kubemu.io/run-seconds]: Invalid value: "x": is not a number of seconds',
        ),
        ({"spec.template.metadata.annotations": {"kubemu.io/memory-usage.web": "1Gi"}}, None),
        (
            {"spec.template.metadata.annotations": {"kubemu.io/nope": "1"}},
            f'spec.template.metadata.annotations[kubemu.io/nope]: Invalid value: "kubemu.io/nope": is not a kubemu.io annotation {KNOWN}',
        ),
        ({f"{TS}.containers": []}, f"{TS}.containers: Required value: a pod needs at least one container"),
        ({"spec.template.spec": _DELETE}, f"{TS}.containers: Required value: a pod needs at least one container"),
        (
            {f"{TS}.containers[0].resources.requests[cpu]": "250x"},
            f'{TS}.containers[0].resources.requests[cpu]: Invalid value: "250x": is not a quantity',
        ),
        ({f"{TS}.restartPolicy": "Always"}, None),
        (
            {f"{TS}.restartPolicy": "Never"},
            f'{TS}.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        ),
    ],
)
@pytest.mark.parametrize("base", [RS, DS], ids=["ReplicaSet", "DaemonSet"])
def test_workloads(base, changes, expected):
    if base is DS and "spec.replicas" in changes:
        return  # replicas is a ReplicaSet field; a DaemonSet ignores it like any unknown field
    _check(base, changes, expected and expected.replace("{kind}", base["kind"]))


def test_daemonset_ignores_replicas_field():
    _check(DS, {"spec.replicas": "many"}, None)


# ---- leases, events, namespaces --------------------------------------------------------

LEASE = _obj("coordination.k8s.io/v1", "Lease", "node-0", "kube-node-lease")
LEASE["spec"] = {"holderIdentity": "node-0", "leaseDurationSeconds": 40, "renewTime": "2026-01-01T00:00:00.000000Z"}


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"spec": _DELETE}, None),
        ({"spec.leaseDurationSeconds": 0}, None),
        ({"spec.holderIdentity": 7}, "spec.holderIdentity: Invalid value: 7: must be a string"),
        (
            {"spec.leaseDurationSeconds": -1},
            "spec.leaseDurationSeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        ({"spec.leaseDurationSeconds": "40"}, 'spec.leaseDurationSeconds: Invalid value: "40": must be an integer'),
        ({"spec.leaseTransitions": -1}, "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"),
    ],
)
def test_lease(changes, expected):
    _check(LEASE, changes, expected)


EVENT = _obj("v1", "Event", "web-1.kubelet.1f")
EVENT.update(involvedObject={"kind": "Pod", "name": "web-1"}, reason="Started", message="Started web", type="Normal")


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"involvedObject": _DELETE}, "involvedObject: Required value"),
        ({"involvedObject": "Pod/web-1"}, 'involvedObject: Invalid value: "Pod/web-1": must be a map'),
        ({"reason": 5}, "reason: Invalid value: 5: must be a string"),
        ({"reason": _DELETE}, None),
    ],
)
def test_event(changes, expected):
    _check(EVENT, changes, expected)


def test_events_made_by_make_event_validate():
    from cluster.api.events import make_event

    ev = make_event(
        POD, "Scheduled", "Successfully assigned default/web-1 to node-0", 1.5, component="default-scheduler"
    )
    validate(ev)


NS = _obj("v1", "Namespace", "team-a", None)


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({}, None),
        ({"spec": {"finalizers": ["kubernetes"]}}, None),
        ({"metadata.name": "team.a"}, f'metadata.name: Invalid value: "team.a": {DNS_LABEL}'),
        (
            {"metadata.name": "a" * 64},
            f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters',
        ),
        ({"metadata.name": "a" * 63}, None),
        ({"metadata.name": _DELETE}, "metadata.name: Required value: name or generateName is required"),
    ],
)
def test_namespace(changes, expected):
    _check(NS, changes, expected)


def test_validate_does_not_modify_the_object():
    pod = copy.deepcopy(POD)
    validate(pod)
    assert pod == POD


def test_a_spec_that_passed_is_remembered_and_a_failing_one_is_checked_every_time():
    from cluster.api import podvalidation as validation

    good = copy.deepcopy(POD)
    validate(good)
    validate(copy.deepcopy(good))  # the same spec again
    bad = copy.deepcopy(good)
    bad["spec"]["terminationGracePeriodSeconds"] = True  # equal to 1 in Python, not on the wire
    for _ in range(2):
        with pytest.raises(
            ValidationError, match="terminationGracePeriodSeconds: Invalid value: true: must be an integer"
        ):
            validate(copy.deepcopy(bad))
    for i in range(validation._VALID_SPECS_MAX + 10):  # many kinds of pods: the memo stays bounded
        other = copy.deepcopy(good)
        other["spec"]["containers"][0]["name"] = f"c{i}"
        validate(other)
    assert len(validation._VALID_SPECS) <= validation._VALID_SPECS_MAX
    huge = copy.deepcopy(good)
    huge["spec"]["restartPolicy"] = "Sometimes"
    huge["spec"]["terminationGracePeriodSeconds"] = 2**70
    with pytest.raises(ValidationError, match="spec.restartPolicy"):  # checked field by field first
        validate(huge)
    huge["spec"]["restartPolicy"] = "Always"
    with pytest.raises(ValidationError) as e:  # then the integer the store could not keep
        validate(huge)
    assert (
        str(e.value)
        == f"spec.terminationGracePeriodSeconds: Invalid value: {2**70}: is out of range (integers are at most 64 bits)"
    )


# ---- sysctls -----------------------------------------------------------------------------

SYSCTL_RULE = (
    "must have at most 253 characters and match regex "
    "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
)
SC = "spec.securityContext.sysctls"


def _sysctls(*names):
    return {"spec.securityContext": {"sysctls": [{"name": n, "value": "1"} for n in names]}}


@pytest.mark.parametrize(
    "changes, expected",
    [
        (_sysctls("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net/ipv4/conf/eth0/forwarding"), None),
        (_sysctls("a" * 253), None),
        (_sysctls("foo-"), f'{SC}[0].name: Invalid value: "foo-": {SYSCTL_RULE}'),
        (_sysctls("a" * 254), f'{SC}[0].name: Invalid value: "{"a" * 254}": {SYSCTL_RULE}'),
        (_sysctls("Kernel.X"), f'{SC}[0].name: Invalid value: "Kernel.X": {SYSCTL_RULE}'),
        (_sysctls("kernel.x\n"), f'{SC}[0].name: Invalid value: "kernel.x\\n": {SYSCTL_RULE}'),
        (_sysctls("kernel.msgmax", "kernel.msgmax"), f'{SC}[1].name: Duplicate value: "kernel.msgmax"'),
        (_sysctls(""), f"{SC}[0].name: Required value"),
        # Every bad name at once, as upstream's conformance test expects ("foo-" and "bar..").
        (
            _sysctls("foo-", "kernel.shmmax", "safe-and-unsafe", "bar.."),
            f'[{SC}[0].name: Invalid value: "foo-": {SYSCTL_RULE}, '
            f'{SC}[3].name: Invalid value: "bar..": {SYSCTL_RULE}]',
        ),
        ({"spec.securityContext": {"sysctls": "x"}}, f'{SC}: Invalid value: "x": must be a list'),
        ({"spec.securityContext": {"sysctls": [{"name": 7}]}}, f"{SC}[0].name: Invalid value: 7: must be a string"),
    ],
)
def test_pod_sysctls(changes, expected):
    _check(POD, changes, expected)


def test_a_workload_template_sysctls_are_checked_too():
    deploy = _obj(
        "apps/v1",
        "Deployment",
        "web",
        spec={
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [WEB], "securityContext": {"sysctls": [{"name": "bar..", "value": "1"}]}},
            },
        },
    )
    assert _error(deploy) == (
        f'spec.template.spec.securityContext.sysctls[0].name: Invalid value: "bar..": {SYSCTL_RULE}'
    )
