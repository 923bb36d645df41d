"""Every served kind in Kubernetes protobuf (cluster/frontend/protobuf*.py): the generated table
covers ``kinds.py`` and agrees with ``schema.py`` on every name; a realistic object of every kind
survives encode -> decode; what real kubectl 1.33 sent decodes to the JSON it sends otherwise and
encodes back to the same bytes; and the API answers in protobuf when Accept prefers it."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from http_builders import AUTH, call, serve
from kubectl_protobuf_bodies import KUBECTL_133_BODIES
from manifest_builders import manifests

from cluster.api import kinds, schema
from cluster.frontend import protobuf, protobuf_encode
from cluster.frontend.protobuf import decode
from cluster.frontend.protobuf_encode import Unencodable, encode_object, go_duration_ns
from cluster.frontend.protobuf_schema import MESSAGES, Message, lookup, varint
from cluster.frontend.protobuf_schema import compile_messages as compile_table

CLIENT_GO = {**AUTH, "accept": "application/vnd.kubernetes.protobuf,application/json"}
PB_ONLY = {**AUTH, "accept": "application/vnd.kubernetes.protobuf"}
SUBRESOURCE_KINDS = {
    "binding": ("v1", "Binding"),
    "eviction": ("policy/v1", "Eviction"),
    "scale": ("autoscaling/v1", "Scale"),
}


def served() -> list[tuple[str, str]]:
    """(apiVersion, kind) of every built-in kind kubemu serves, its subresources' kinds too;
    not kubemu's own kinds, served as JSON only (``test_explain_frontend.py`` checks them)."""
    rs = [*kinds.RESOURCES, *getattr(kinds, "VIEWS", ()), *getattr(kinds, "REVIEWS", ())]
    rs = [r for r in rs if not kinds.json_only(r.kind)]
    out = {(r.api_version, r.kind) for r in rs}
    out |= {SUBRESOURCE_KINDS[s] for r in rs for s in r.subresources if s in SUBRESOURCE_KINDS}
    return sorted(out)


# --- a realistic object of every kind ------------------------------------------------------

META = {"name": "web", "namespace": "default", "labels": {"app": "web"}, "uid": "0d9c6c1e-5f0b-4a53-9f43-1f0e2b9c6a11"}
SELECTOR = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}
RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}
WEBHOOK = {
    "name": "check.example.com",
    "clientConfig": {"service": {"namespace": "default", "name": "hook", "port": 443}, "caBundle": "Y2E="},
    "rules": [RULE],
    "failurePolicy": "Fail",
    "sideEffects": "None",
    "admissionReviewVersions": ["v1"],
    "timeoutSeconds": 5,
    "namespaceSelector": SELECTOR,
}
REVIEW_SPEC = {
    "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods", "name": "web"},
    "user": "alice",
    "groups": ["devs"],
    "extra": {"scopes": ["a", "b"]},
}

# fmt: off
# Kinds manifest_builders.py has no manifest for (yet), as clients send them.
EXTRA: dict[tuple[str, str], dict[str, Any]] = {
    ("networking.k8s.io/v1", "Ingress"): {
        "metadata": META, "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
        "rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.9", "ports": [{"port": 80, "protocol": "TCP"}]}]}},
    },
    ("networking.k8s.io/v1", "IngressClass"): {
        "metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx",
        "parameters": {"kind": "IngressParameters", "name": "p", "scope": "Cluster", "apiGroup": "k8s.example.com"}},
    },
    ("networking.k8s.io/v1", "NetworkPolicy"): {
        "metadata": META, "spec": {"podSelector": SELECTOR, "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                     "ports": [{"protocol": "TCP", "port": "http", "endPort": 8080}]}],
        "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"team": "a"}}}], "ports": [{"port": 53}]}]},
    },
    ("apiregistration.k8s.io/v1", "APIService"): {
        "metadata": {"name": "v1beta1.metrics.k8s.io"}, "spec": {"service": {"namespace": "kube-system",
        "name": "metrics-server", "port": 443}, "group": "metrics.k8s.io", "version": "v1beta1",
        "insecureSkipTLSVerify": True, "groupPriorityMinimum": 100, "versionPriority": 100},
        "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
                                   "reason": "Passed", "message": "all checks passed"}]},
    },
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"): {
        "metadata": {"name": "mutate"}, "webhooks": [{**WEBHOOK, "reinvocationPolicy": "IfNeeded"}],
    },
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): {
        "metadata": {"name": "validate"}, "webhooks": [{**WEBHOOK, "matchConditions": [{"name": "c", "expression": "true"}]}],
    },
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"): {
        "metadata": {"name": "replicas"}, "spec": {"failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                             "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
        "validations": [{"expression": "object.spec.replicas <= 5", "message": "too many"}],
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}},
    },
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"): {
        "metadata": {"name": "replicas"}, "spec": {"policyName": "replicas", "validationActions": ["Deny"],
        "paramRef": {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"}},
    },
    ("node.k8s.io/v1", "RuntimeClass"): {
        "metadata": {"name": "gvisor"}, "handler": "runsc", "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
        "scheduling": {"nodeSelector": {"sandbox": "true"}, "tolerations": [{"key": "sandbox", "operator": "Exists",
                       "effect": "NoSchedule"}]},
    },
    ("events.k8s.io/v1", "Event"): {
        "metadata": META, "eventTime": "2026-01-01T00:00:00.123456Z", "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-n1", "action": "Binding", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "apiVersion": "v1"},
        "note": "Successfully assigned default/web to n1", "type": "Normal",
        "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000001Z"},
    },
    ("autoscaling/v1", "HorizontalPodAutoscaler"): {
        "metadata": META, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
        "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80},
        "status": {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 91},
    },
    ("authentication.k8s.io/v1", "SelfSubjectReview"): {
        "metadata": {}, "status": {"userInfo": {"username": "admin", "groups": ["system:masters"],
                                                "extra": {"scopes": ["all"]}}},
    },
    ("authentication.k8s.io/v1", "TokenReview"): {
        "metadata": {}, "spec": {"token": "abc", "audiences": ["api"]},
        "status": {"authenticated": True, "user": {"username": "admin", "groups": ["system:masters"]},
                   "audiences": ["api"]},
    },
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): {
        "metadata": {"name": "node-csr"}, "spec": {"request": "LS0tLS1CRUdJTg==", "signerName":
        "kubernetes.io/kube-apiserver-client", "expirationSeconds": 86400, "usages": ["client auth"],
        "username": "admin", "groups": ["system:masters"], "extra": {"scopes": ["all"]}},
        "status": {"conditions": [{"type": "Approved", "status": "True", "reason": "AutoApproved",
                   "message": "ok", "lastUpdateTime": "2026-01-01T00:00:00Z"}], "certificate": "LS0tLS1DRVJU"},
    },
    ("authorization.k8s.io/v1", "SubjectAccessReview"): {
        "metadata": {}, "spec": REVIEW_SPEC, "status": {"allowed": True, "reason": "RBAC"},
    },
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): {
        "metadata": {"namespace": "default"}, "spec": REVIEW_SPEC, "status": {"allowed": False, "denied": True},
    },
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): {
        "metadata": {}, "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
        "status": {"allowed": True},
    },
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): {
        "metadata": {}, "spec": {"namespace": "default"},
        "status": {"resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
                   "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}], "incomplete": False},
    },
    ("v1", "Binding"): {"metadata": {"name": "web", "namespace": "default"}, "target": {"kind": "Node", "name": "n1"}},
    ("policy/v1", "Eviction"): {
        "metadata": {"name": "web", "namespace": "default"},
        "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": META["uid"]}},
    },
    ("autoscaling/v1", "Scale"): {
        "metadata": META, "spec": {"replicas": 0}, "status": {"replicas": 2, "selector": "app=web"},
    },
}
# fmt: on


def realistic(api_version: str, kind: str) -> dict[str, Any]:
    built = manifests().get(kind)
    if built is not None and built.get("apiVersion") == api_version:
        return built
    return {"apiVersion": api_version, "kind": kind, **EXTRA[(api_version, kind)]}


def go_zero(value: Any) -> bool:
    """A value Go's JSON writes for an unset field: a zero scalar, null, or a struct of them."""
    if isinstance(value, dict):
        return all(go_zero(v) for v in value.values())
    return value in (None, "", 0, False, [])


def differences(sent: Any, back: Any, path: str = "") -> list[str]:
    """Where ``back`` (decoded) differs from ``sent`` other than as Go's JSON would differ: zero
    fields added or dropped, a number sent for a quantity coming back as its string."""
    if isinstance(sent, dict) and isinstance(back, dict):
        out = []
        for k in sent.keys() | back.keys():
            if k not in back:
                out += [] if sent[k] in (None, "", 0, False, [], {}) else [f"{path}.{k} lost"]
            elif k not in sent:
                out += [] if go_zero(back[k]) else [f"{path}.{k} added"]
            else:
                out += differences(sent[k], back[k], f"{path}.{k}")
        return out
    if isinstance(sent, list) and isinstance(back, list) and len(sent) == len(back):
        return [d for i, (a, b) in enumerate(zip(sent, back)) for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(sent, (int, float)) and not isinstance(sent, bool) and back == str(sent):
        return []
    return [] if sent == back else [f"{path}: {sent!r} came back as {back!r}"]


# --- the table covers the served kinds and agrees with schema.py ------------------------------


@pytest.mark.parametrize("api_version, kind", served(), ids=lambda v: v)
def test_every_served_kind_has_a_message(api_version: str, kind: str) -> None:
    assert lookup(api_version, kind) is not None
    r = kinds.BY_KIND.get(kind)
    if r is not None and r.api_version == api_version and r in kinds.RESOURCES:
        assert lookup(api_version, kind + "List") is not None  # lists and watches answer in protobuf too


def _fields(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in message.fields:
        out.update(_fields(f.message) if f.json == "..." and f.message is not None else {f.json: f})
    return out


def test_the_table_and_schema_py_name_the_same_fields_everywhere() -> None:
    # Two upstream sources, one set of names: the OpenAPI definitions (schema.py) and the Go
    # json tags beside the protobuf tags (the table). A walk over every struct of every kind.
    seen: set[tuple[str, str]] = set()
    mismatches: list[str] = []

    def walk(struct: schema.Struct, message: Message, top: bool) -> None:
        if (struct.package + struct.name, message.name) in seen or message.shape:
            return
        seen.add((struct.package + struct.name, message.name))
        fields = _fields(message)
        names = set(struct.fields) - ({"apiVersion", "kind"} if top else set())
        mismatches.extend(
            f"{message.name}: {n} only in {w}" for n, w in [(n, "schema.py") for n in names - set(fields)]
        )
        mismatches.extend(f"{message.name}: {n} only in the table" for n in set(fields) - names)
        for name in names & set(fields):
            t = struct.fields[name]
            while t.code in (schema.LIST, schema.MAP) and t.elem is not None:
                t = t.elem
            if t.struct is not None and fields[name].message is not None:
                walk(t.struct, fields[name].message, False)

    for kind in schema.kinds():
        if kinds.json_only(kind):
            assert lookup(kinds.BY_KIND[kind].api_version, kind) is None  # kubemu's own: no message
            continue
        r = kinds.BY_KIND[kind]
        struct, message = schema.kind_struct(kind), lookup(r.api_version, kind)
        assert struct is not None and message is not None
        walk(struct, message, True)
    assert len(seen) > 250 and mismatches == []


# --- every kind round-trips -----------------------------------------------------------------


@pytest.mark.parametrize("api_version, kind", served(), ids=lambda v: v)
def test_a_realistic_object_of_every_kind_round_trips(api_version: str, kind: str) -> None:
    obj = realistic(api_version, kind)
    raw = encode_object(obj)
    back = decode(raw)
    assert differences(obj, back) == []
    assert encode_object(back) == raw  # what decode gives encodes to the same bytes


def test_a_list_encodes_its_items_without_their_type_meta() -> None:
    items = [realistic("v1", "Pod"), dict(realistic("v1", "Pod"), metadata={"name": "db", "namespace": "default"})]
    listing = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": items}
    back = decode(encode_object(listing))
    assert back["metadata"] == {"resourceVersion": "7"}
    assert [p["metadata"]["name"] for p in back["items"]] == ["web", "db"]
    assert (
        "kind" not in back["items"][0]
        and differences(items[1] | {"kind": None, "apiVersion": None}, back["items"][1]) == []
    )


# --- what real kubectl 1.33 sent ------------------------------------------------------------


@pytest.mark.parametrize("command, hex_body, expected", KUBECTL_133_BODIES, ids=[b[0] for b in KUBECTL_133_BODIES])
def test_kubectl_133_bodies_decode_to_its_json_and_encode_back_byte_for_byte(
    command: str, hex_body: str, expected: str
) -> None:
    raw = bytes.fromhex(hex_body)
    assert decode(raw) == orjson.loads(expected)
    assert encode_object(decode(raw)) == raw


def _path(obj: dict[str, Any], ns: str) -> str:
    r = kinds.BY_KIND[obj["kind"]]
    base = f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"
    return f"{base}/namespaces/{ns}/{r.plural}" if r.namespaced else f"{base}/{r.plural}"


def _stored(obj: dict[str, Any]) -> bytes:
    """The stored object less what two creates of it differ in: name, namespace, uid (wherever a
    controller copied it), resourceVersion, times, managedFields, a namespace's name label."""
    meta = dict(obj["metadata"])
    meta["labels"] = {k: v for k, v in meta.get("labels", {}).items() if k != "kubernetes.io/metadata.name"}
    kept = {**obj, "metadata": {k: v for k, v in meta.items() if k not in IGNORED}}
    if obj["kind"] == "Service":  # each create is given its own ClusterIP
        kept["spec"] = {k: v for k, v in obj["spec"].items() if k not in ("clusterIP", "clusterIPs")}
    return orjson.dumps(kept, option=orjson.OPT_SORT_KEYS).replace(f'"{meta["uid"]}"'.encode(), b'"UID"')


IGNORED = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields")


def test_kubectl_133_creates_store_what_the_same_json_creates() -> None:
    # Each captured body POSTed as protobuf, and kubectl's JSON for the same command POSTed as
    # JSON in another namespace (or under another name): kubemu stores the same object.
    h, _ = serve()
    for ns in ("pb", "js"):
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        assert call(h, "POST", "/api/v1/namespaces", namespace)[0] == 201
    for command, hex_body, expected in KUBECTL_133_BODIES:
        as_json = orjson.loads(expected)
        if not kinds.BY_KIND[as_json["kind"]].namespaced:
            as_json["metadata"]["name"] += "-js"
        pb_headers = {**AUTH, "content-type": "application/vnd.kubernetes.protobuf"}
        code, from_pb = call(h, "POST", _path(as_json, "pb"), bytes.fromhex(hex_body), headers=pb_headers)
        assert code == 201, (command, from_pb)
        code, from_json = call(h, "POST", _path(as_json, "js"), as_json)
        assert code == 201, (command, from_json)
        assert _stored(from_pb) == _stored(from_json), command


# --- the encoder ----------------------------------------------------------------------------


def test_an_unset_value_field_is_written_as_gos_zero_and_a_pointer_is_not() -> None:
    # kubectl create namespace x, as kubectl 1.32 wrote it: every ObjectMeta string, generation 0,
    # an empty creationTimestamp, spec {} and status {phase: ""}; no deletionTimestamp, no labels.
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    assert encode_object(namespace).hex() == (
        "6b3873000a0f0a02763112094e616d65737061636512190a110a017812001a0022002a0032003800420012001a020a001a002200"
    )


@pytest.mark.parametrize(
    "field, value, wire",
    [
        ("labels", {"b": "2", "a": "1"}, "5a060a0161120131" + "5a060a0162120132"),  # map entries sorted by key
        ("deletionGracePeriodSeconds", -1, "50ffffffffffffffffff01"),  # negative: 10-byte two's complement
        ("deletionTimestamp", "2026-01-01T00:00:00.5Z", "4a0808" + varint(1767225600).hex() + "1000"),  # nanos 0
        ("finalizers", ["a", ""], "72016172" + "00"),  # repeated strings, an empty one too
    ],
)
def test_object_meta_fields_are_written_as_gogo_writes_them(field: str, value: Any, wire: str) -> None:
    raw = protobuf_encode.encode_message(MESSAGES["meta.v1.ObjectMeta"], {field: value})
    assert wire in raw.hex()


@pytest.mark.parametrize(
    "text, ns",
    [
        ("0s", 0),
        ("0", 0),
        ("1.5s", 1_500_000_000),
        ("1m30s", 90 * 10**9),
        ("1h0m0.5s", 3_600_500_000_000),
        ("-1s", -(10**9)),
        ("300ms", 300_000_000),
        ("2µs", 2000),
        ("2us", 2000),
        ("7ns", 7),
    ],
)
def test_durations_parse_like_go(text: str, ns: int) -> None:
    assert go_duration_ns(text) == ns
    assert (
        protobuf._go_duration(ns) == text
        or text in ("0", "2us", "1.5s")
        or go_duration_ns(protobuf._go_duration(ns)) == ns
    )


@pytest.mark.parametrize("text", ["", "1", "1x", "s", "1h-2m"])
def test_a_bad_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        go_duration_ns(text)


def test_a_micro_time_keeps_its_microseconds() -> None:
    event = realistic("events.k8s.io/v1", "Event")
    assert decode(encode_object(event))["eventTime"] == "2026-01-01T00:00:00.123456Z"


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 5}},
        {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": {"name": "c"}}},
        {"apiVersion": "v1", "kind": "Pod", "spec": {"priority": "high"}},
        {"apiVersion": "v1", "kind": "Secret", "data": {"k": "not base64!"}},
        {"apiVersion": "example.com/v1", "kind": "Widget"},
        {"kind": "Pod"},
        ["not", "an", "object"],
    ],
)
def test_what_cannot_be_written_is_unencodable(obj: Any) -> None:
    with pytest.raises(Unencodable):
        encode_object(obj)


# --- the generator ----------------------------------------------------------------------------

PROTO = """
syntax = "proto2";
package k8s.io.api.demo.v1;
import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";
// Widget is a demo.
message Widget {
  // +optional
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional WidgetSpec spec = 2;
}
message WidgetSpec {
  optional int32 replicas = 1;
  optional int32 port = 2;
  repeated string tags = 3;
  map<string, string> labels = 4;
  optional Source source = 5;
  optional bytes blob = 6;
  optional Names names = 7;
  optional string mode = 8;
}
message Source {
  optional string path = 1;
}
message Names {
  repeated string items = 1;
}
"""
TYPES = """
package v1

// WidgetSpec: every kind of field the generator tells apart.
type WidgetSpec struct {
	// replicas is a pointer.
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	Port int32 `json:"port" protobuf:"varint,2,opt,name=port"`
	Tags []string `json:"tags" protobuf:"bytes,3,rep,name=tags"`
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,4,rep,name=labels"`
	Source `json:",inline" protobuf:"bytes,5,opt,name=source"`
	Blob []byte `json:"blob,omitempty" protobuf:"bytes,6,opt,name=blob"`
	Names Names `json:"names,omitempty" protobuf:"bytes,7,opt,name=names"`
	Mode string `json:"x-mode,omitempty" protobuf:"bytes,8,opt,name=mode"`
}

type Widget struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec WidgetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

type Source struct {
	Path string `json:"path" protobuf:"bytes,1,opt,name=path"`
}

type Names []string
"""
META_PROTO = """
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;
message ObjectMeta {
  optional string name = 1;
}
"""


def test_the_generator_joins_proto_fields_and_go_tags(tmp_path: Any) -> None:
    from cluster.api import protogen

    demo = tmp_path / "api" / "demo" / "v1"
    meta = tmp_path / "apimachinery" / "pkg" / "apis" / "meta" / "v1"
    for directory, proto, go, group in (
        (demo, PROTO, TYPES, "demo.example.com"),
        (meta, META_PROTO, "", "meta.k8s.io"),
    ):
        directory.mkdir(parents=True)
        (directory / "generated.proto").write_text(proto)
        (directory / "types.go").write_text(
            go
            + '\ntype ObjectMeta struct {\n\tName string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`\n}\n'
        )
        (directory / "register.go").write_text(f'package v1\n\nconst GroupName = "{group}"\n')
    gen = protogen.Generator(protogen.load(tmp_path))
    assert gen.root("demo.example.com/v1", "Widget") == "k8s.io.api.demo.v1.Widget"
    gen.walk(["k8s.io.api.demo.v1.Widget"])
    assert gen.messages == {
        "demo.v1.Widget": "1 metadata:meta.v1.ObjectMeta, 2 spec:demo.v1.WidgetSpec",
        "demo.v1.WidgetSpec": (
            "1 replicas:int32*, 2 port:int32!, 3 tags:[string]!, 4 labels:{string}, 5 ...:demo.v1.Source, "
            "6 blob:bytes*, 7 names:demo.v1.Names, 8 x-mode"
        ),
        "demo.v1.Source": "1 path!",
        "demo.v1.Names": "1 items:[string]",
        "meta.v1.ObjectMeta": "1 name",
    }
    assert gen.wrappers() == ["demo.v1.Names"]
    compiled = compile_table(gen.messages, frozenset(gen.wrappers()))
    spec = {"replicas": 0, "tags": ["a"], "labels": {"k": "v"}, "path": "/x", "names": ["n"], "x-mode": "fast"}
    raw = protobuf_encode.encode_message(compiled["demo.v1.WidgetSpec"], spec)
    assert protobuf._message(raw, compiled["demo.v1.WidgetSpec"]) == {**spec, "port": 0}
