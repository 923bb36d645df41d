"""Upstream's defaulting of pods, pod templates and the core kinds
(upstream's SetDefaults_* functions).

Owns the fields the apiserver fills in when a client leaves them out, as upstream's
``SetDefaults_*`` functions do on every decode: a PodSpec's (every template's too) and its
containers', probes', ports' and volumes' defaults, the Pod-only ones (``enableServiceLinks``,
requests copied from limits, host ports under ``hostNetwork``), the ``SchedulingGated``
condition the pod strategy adds at create, and the defaults of Service, Secret, Namespace,
PersistentVolume(Claim), StorageClass, Endpoints, LimitRange, Node and
ReplicationController. Who calls it: ``admission.py`` for Pods (before the QoS class and
Priority admission read the spec), ``workloaddefaults.py`` for every other kind
(``CORE_DEFAULTS``) and for the pod templates of the workload kinds.

Every function tolerates a sparse or mistyped object (a field of the wrong type is left
alone): validation of the kinds kubemu only stores checks little more than metadata.
Deliberately left out: ClusterIP and NodePort allocation (a Service keeps the addresses
it was given), quantity rounding to milli precision, the ServiceAccount admission plugin's
token volume (kubemu serves no tokens), and ConfigMap's empty ``data`` (invisible on the
wire, as upstream omits an empty map).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..api.objects import DEFAULT_SCHEDULER

DEFAULT_GRACE_SECONDS = 30
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
VOLUME_DEFAULT_MODE = 420  # 0644
TOKEN_EXPIRATION_SECONDS = 3600
CLIENT_IP_TIMEOUT_SECONDS = 10800
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLER_FIELDS = frozenset((*_PROBES, "lifecycle"))
_PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))
# Per volume source: the fields upstream fills in when they are unset.
_VOLUME_SOURCE_DEFAULTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "hostPath": (("type", ""),),
    "secret": (("defaultMode", VOLUME_DEFAULT_MODE),),
    "configMap": (("defaultMode", VOLUME_DEFAULT_MODE),),
    "downwardAPI": (("defaultMode", VOLUME_DEFAULT_MODE),),
    "projected": (("defaultMode", VOLUME_DEFAULT_MODE),),
    "iscsi": (("iscsiInterface", "default"),),
    "rbd": (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring")),
    "azureDisk": (("cachingMode", "ReadWrite"), ("kind", "Shared"), ("fsType", "ext4"), ("readOnly", False)),
    "scaleIO": (("storageMode", "ThinProvisioned"), ("fsType", "xfs")),
}


def _map(parent: Any, key: str) -> dict[str, Any] | None:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else None


def _maps(parent: Any, key: str) -> list[dict[str, Any]]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _unset(obj: dict[str, Any], key: str) -> bool:
    """Upstream's test for an unset field: absent, null or the zero value."""
    return obj.get(key) in (None, "", 0)


def _fill(obj: dict[str, Any], pairs: tuple[tuple[str, Any], ...]) -> None:
    for key, value in pairs:
        if obj.get(key) is None or obj.get(key) == "":
            obj[key] = value


# ---- pods and pod templates ----------------------------------------------------------------


def default_pod(pod: dict[str, Any]) -> None:
    """A Pod's defaults: its spec's, then the Pod-only ones (``SetDefaults_Pod``)."""
    spec = pod.get("spec") if isinstance(pod, dict) else None
    if not isinstance(spec, dict):
        return
    default_pod_spec(spec)
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        if containers and isinstance(containers, list):  # most pods have no init containers
            for c in containers:
                if isinstance(c, dict):
                    _requests_from_limits(c)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork") is True:
        for c in _maps(spec, "containers") + _maps(spec, "initContainers"):
            for port in _maps(c, "ports"):
                if _unset(port, "hostPort") and port.get("containerPort") is not None:
                    port["hostPort"] = port["containerPort"]


def default_pod_spec(spec: dict[str, Any]) -> None:
    """Every PodSpec's defaults (Pods' and all templates'): ``SetDefaults_PodSpec`` and
    its containers', probes', ports' and volumes'. Every pod create runs it: the lists are
    read in place (no copies), and a field a container lacks costs one lookup."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_GRACE_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    for key in _CONTAINER_LISTS:
        containers = spec.get(key)
        if containers and isinstance(containers, list):
            for c in containers:
                if isinstance(c, dict):
                    default_container(c)
    volumes = spec.get("volumes")
    if volumes and isinstance(volumes, list):
        for v in volumes:
            if isinstance(v, dict):
                _default_volume(v)


def default_container(c: dict[str, Any]) -> None:
    """``SetDefaults_Container`` and the defaults of what a container holds."""
    if not c.get("imagePullPolicy"):
        image = c.get("image")
        c["imagePullPolicy"] = pull_policy(image if isinstance(image, str) else "")
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = TERMINATION_MESSAGE_PATH
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    ports = c.get("ports")
    if ports and isinstance(ports, list):  # (an empty list has nothing to default either)
        for port in ports:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"
    env = c.get("env")
    if env and isinstance(env, list):
        for e in env:
            if isinstance(e, dict):
                _field_ref(_map(_map(e, "valueFrom"), "fieldRef"))
    if not _HANDLER_FIELDS.isdisjoint(c):  # one test in C for the four fields most containers lack
        _default_probes(c)


def _default_probes(c: dict[str, Any]) -> None:
    """A container's probes and lifecycle hooks."""
    for name in _PROBES:
        probe = c.get(name)
        if isinstance(probe, dict):
            for key, value in _PROBE_DEFAULTS:
                if _unset(probe, key):
                    probe[key] = value
            _default_handler(probe)
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            handler = lifecycle.get(hook)
            if isinstance(handler, dict):
                _default_handler(handler)


def _default_handler(handler: dict[str, Any]) -> None:
    http = _map(handler, "httpGet")
    if http is not None:
        _fill(http, (("path", "/"), ("scheme", "HTTP")))
    grpc = _map(handler, "grpc")
    if grpc is not None and grpc.get("service") is None:
        grpc["service"] = ""


def _field_ref(ref: dict[str, Any] | None) -> None:
    if ref is not None and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _default_volume(v: dict[str, Any]) -> None:
    if all(k == "name" for k in v):  # no source at all
        v["emptyDir"] = {}
        return
    for source, pairs in _VOLUME_SOURCE_DEFAULTS.items():
        s = _map(v, source)
        if s is not None:
            _fill(s, pairs)
    for item in _maps(_map(v, "downwardAPI"), "items"):
        _field_ref(_map(item, "fieldRef"))
    for src in _maps(_map(v, "projected"), "sources"):
        for item in _maps(_map(src, "downwardAPI"), "items"):
            _field_ref(_map(item, "fieldRef"))
        token = _map(src, "serviceAccountToken")
        if token is not None and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = TOKEN_EXPIRATION_SECONDS
    claim = _map(_map(_map(v, "ephemeral"), "volumeClaimTemplate"), "spec")
    if claim is not None and claim.get("volumeMode") is None:
        claim["volumeMode"] = "Filesystem"


def _requests_from_limits(container: dict[str, Any]) -> None:
    res = container.get("resources")
    if not isinstance(res, dict):
        return
    limits = res.get("limits")
    if not limits or not isinstance(limits, dict):
        return
    requests = res.get("requests")
    if not isinstance(requests, dict):
        requests = res["requests"] = {}
    for name, q in limits.items():
        requests.setdefault(name, q)


def scheduling_gated(pod: dict[str, Any]) -> None:
    """The pod strategy at create: a pod with scheduling gates gets ``PodScheduled=False``
    with reason ``SchedulingGated`` (what ``kubectl get pods`` shows as its STATUS)."""
    spec = _map(pod, "spec")
    if spec is None or not spec.get("schedulingGates"):
        return
    status = pod.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    if any(isinstance(c, dict) and c.get("type") == "PodScheduled" for c in conditions):
        return
    conditions.append(
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated", "message": GATED_MESSAGE}
    )


# ---- image pull policy -----------------------------------------------------------------------

# The image reference grammar of docker's distribution/reference, which upstream parses with.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"  # upstream writes the dashes as [-]*; -+ is the same language without the backtracking
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?"
)
_HEX64 = re.compile(r"[a-f0-9]{64}")
_NAME_MAX = 255


@lru_cache(maxsize=4096)
def pull_policy(image: str) -> str:
    """``Always`` when the image's tag is ``latest`` or it has neither tag nor digest;
    otherwise (a tag, a digest, or a name that does not parse) ``IfNotPresent``."""
    parsed = _tag_and_digest(image)
    if parsed is None:
        return "IfNotPresent"
    tag, digest = parsed
    return "Always" if tag == "latest" or (tag is None and digest is None) else "IfNotPresent"


def _tag_and_digest(image: str) -> tuple[str | None, str | None] | None:
    """(tag, digest) of an image reference, or None when upstream's parser refuses it
    (``ParseNormalizedNamed``: a 64-hex identifier, an upper-case repository, bad syntax)."""
    if not image or _HEX64.fullmatch(image):
        return None
    first, slash, rest = image.partition("/")
    remainder = rest if slash and ("." in first or ":" in first or first == "localhost") else image
    repository = remainder.partition(":")[0]
    if repository != repository.lower():
        return None
    m = _REFERENCE.fullmatch(image)
    if m is None or len(m.group("name")) > _NAME_MAX:
        return None
    return m.group("tag"), m.group("digest")


# ---- the core kinds ----------------------------------------------------------------------------


def _service(svc: dict[str, Any]) -> None:
    spec = _map(svc, "spec")
    if spec is None:
        spec = svc["spec"] = {}
    affinity = spec.get("sessionAffinity") or "None"
    spec["sessionAffinity"] = affinity
    if affinity == "None":
        spec.pop("sessionAffinityConfig", None)
    elif affinity == "ClientIP":
        client_ip = _map(_map(spec, "sessionAffinityConfig"), "clientIP")
        if client_ip is None or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": CLIENT_IP_TIMEOUT_SECONDS}}
    kind = spec.get("type") or "ClusterIP"
    spec["type"] = kind
    for port in _maps(spec, "ports"):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, "") and port.get("port") is not None:
            port["targetPort"] = port["port"]
    if kind in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if kind in ("ClusterIP", "NodePort", "LoadBalancer") and spec.get("internalTrafficPolicy") is None:
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    if kind != "ExternalName":
        _ip_families(spec)
    if not isinstance(svc.get("status"), dict):
        svc["status"] = {"loadBalancer": {}}


def _ip_families(spec: dict[str, Any]) -> None:
    """The IP family fields the Service REST storage fills in on a single-stack IPv4
    cluster (alloc.go initIPFamilyFields): a headless Service without selector asks for
    both families; every other Service is SingleStack IPv4."""
    headless_any = spec.get("clusterIP") == "None" and not spec.get("selector")
    if spec.get("ipFamilyPolicy") is None:
        spec["ipFamilyPolicy"] = "RequireDualStack" if headless_any else "SingleStack"
    families = spec.get("ipFamilies")
    if families is None:
        families = spec["ipFamilies"] = []
    if not isinstance(families, list):
        return
    if not families:
        families.append("IPv4")
    if headless_any and len(families) < 2 and spec["ipFamilyPolicy"] != "SingleStack":
        families.append("IPv6" if families[0] == "IPv4" else "IPv4")


def _secret(obj: dict[str, Any]) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _namespace(obj: dict[str, Any]) -> None:
    m = obj.setdefault("metadata", {})
    name = m.get("name")
    if name:
        labels = m.get("labels")
        if not isinstance(labels, dict):
            labels = m["labels"] = {}
        labels[NAMESPACE_NAME_LABEL] = name


def _persistent_volume(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        _fill(spec, (("persistentVolumeReclaimPolicy", "Retain"), ("volumeMode", "Filesystem")))
        for source in ("iscsi", "rbd", "azureDisk", "scaleIO"):
            s = _map(spec, source)
            if s is not None:
                _fill(s, _VOLUME_SOURCE_DEFAULTS[source])
    _phase(obj, "Pending")


def _persistent_volume_claim(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    _phase(obj, "Pending")


def _phase(obj: dict[str, Any], phase: str) -> None:
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    if not status.get("phase"):
        status["phase"] = phase


def _storage_class(obj: dict[str, Any]) -> None:
    _fill(obj, (("reclaimPolicy", "Delete"), ("volumeBindingMode", "Immediate")))


def _endpoints(obj: dict[str, Any]) -> None:
    for subset in _maps(obj, "subsets"):
        for port in _maps(subset, "ports"):
            if not port.get("protocol"):
                port["protocol"] = "TCP"


def _limit_range(obj: dict[str, Any]) -> None:
    for item in _maps(_map(obj, "spec"), "limits"):
        if item.get("type") != "Container":
            continue
        default = item["default"] = _map(item, "default") or {}
        request = item["defaultRequest"] = _map(item, "defaultRequest") or {}
        for key, q in (_map(item, "max") or {}).items():
            default.setdefault(key, q)
        for key, q in default.items():
            request.setdefault(key, q)
        for key, q in (_map(item, "min") or {}).items():
            request.setdefault(key, q)


def _node(obj: dict[str, Any]) -> None:
    status = _map(obj, "status")
    capacity = _map(status, "capacity")
    if status is not None and capacity is not None and status.get("allocatable") is None:
        status["allocatable"] = dict(capacity)


def _replication_controller(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    template = _map(spec, "template")
    labels = _map(_map(template, "metadata"), "labels")
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        m = obj.setdefault("metadata", {})
        if not m.get("labels"):
            m["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    template_spec = _map(template, "spec")
    if template_spec is not None:
        default_pod_spec(template_spec)


def _pod_template(obj: dict[str, Any]) -> None:
    spec = _map(_map(obj, "template"), "spec")
    if spec is not None:
        default_pod_spec(spec)


CORE_DEFAULTS = {
    "Service": _service,
    "Secret": _secret,
    "Namespace": _namespace,
    "PersistentVolume": _persistent_volume,
    "PersistentVolumeClaim": _persistent_volume_claim,
    "StorageClass": _storage_class,
    "Endpoints": _endpoints,
    "LimitRange": _limit_range,
    "Node": _node,
    "ReplicationController": _replication_controller,
    "PodTemplate": _pod_template,
}
