"""PersistentVolume, PersistentVolumeClaim, Endpoints, Ingress and NetworkPolicy validation:
upstream's messages for each rule, every error of an object at once, through ``validate``
(what the apiserver and the scenario loader call)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cluster.api.validation import ValidationError, validate

CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
VOLUME = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}
SUBSET = {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}
BACKEND = {"service": {"name": "web", "port": {"number": 80}}}


def obj(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    version = "networking.k8s.io/v1" if kind in ("Ingress", "NetworkPolicy") else "v1"
    return {"apiVersion": version, "kind": kind, "metadata": {"name": "x", "namespace": "default"}, **body}


def claim(**spec: Any) -> dict[str, Any]:
    return obj("PersistentVolumeClaim", {"spec": {**copy.deepcopy(CLAIM), **spec}})


def volume(**spec: Any) -> dict[str, Any]:
    return obj("PersistentVolume", {"spec": {**copy.deepcopy(VOLUME), **spec}})


def endpoints(**subset: Any) -> dict[str, Any]:
    return obj("Endpoints", {"subsets": [{**copy.deepcopy(SUBSET), **subset}]})


def ingress(**spec: Any) -> dict[str, Any]:
    return obj("Ingress", {"spec": spec})


def rule(path: str = "/", path_type: str = "Prefix", **backend: Any) -> dict[str, Any]:
    entry = {"path": path, "pathType": path_type, "backend": backend or BACKEND}
    return {"host": "example.com", "http": {"paths": [entry]}}


def policy(**spec: Any) -> dict[str, Any]:
    return obj("NetworkPolicy", {"spec": {"podSelector": {}, **spec}})


VALID = [
    claim(),
    claim(accessModes=["ReadWriteOncePod"], storageClassName="fast", volumeMode="Block"),
    claim(selector={"matchLabels": {"tier": "gold"}}),
    claim(dataSource={"kind": "PersistentVolumeClaim", "name": "src"}),
    volume(),
    volume(persistentVolumeReclaimPolicy="Recycle", volumeMode="Filesystem", storageClassName="slow"),
    volume(hostPath=None, local={"path": "/mnt"}, nodeAffinity={"required": {"nodeSelectorTerms": []}}),
    volume(hostPath=None, csi={"driver": "d", "volumeHandle": "h"}),
    endpoints(),
    endpoints(addresses=[], notReadyAddresses=[{"ip": "fd00::1", "hostname": "web-0", "nodeName": "n1"}]),
    endpoints(ports=[{"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]),
    ingress(defaultBackend=BACKEND),
    ingress(rules=[rule()], tls=[{"hosts": ["*.example.com"], "secretName": "tls"}], ingressClassName="nginx"),
    ingress(rules=[rule(path="", path_type="ImplementationSpecific")]),
    ingress(rules=[{"host": "*.example.com"}]),
    ingress(rules=[rule(resource={"kind": "Bucket", "name": "b", "apiGroup": "k8s.example.com"})]),
    policy(),
    policy(
        ingress=[{"from": [{"podSelector": {}, "namespaceSelector": {}}], "ports": [{"port": 80, "endPort": 90}]}],
        egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}], "ports": [{"port": "dns"}]}],
        policyTypes=["Ingress", "Egress"],
    ),
]


@pytest.mark.parametrize("o", VALID, ids=lambda o: o["kind"])
def test_what_upstream_accepts_is_accepted(o):
    validate(o)


REFUSED = [
    # claims
    (claim(accessModes=[]), "spec.accessModes: Required value: at least 1 access mode is required"),
    (
        claim(accessModes=["ReadWriteSometimes"]),
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    ),
    (
        claim(accessModes=["ReadWriteOncePod", "ReadOnlyMany"]),
        "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
    ),
    (claim(resources={}), "spec.resources[storage]: Required value"),
    (
        claim(resources={"requests": {"storage": "0"}}),
        'spec.resources[storage]: Invalid value: "0": must be greater than zero',
    ),
    (
        claim(volumeMode="Raw"),
        'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ),
    (claim(storageClassName="Fast_Disk"), 'spec.storageClassName: Invalid value: "Fast_Disk": a lowercase RFC 1123'),
    (
        claim(dataSource={"kind": "Snapshot", "name": "s"}),
        "spec.dataSource: Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing the default apiGroup",
    ),
    (claim(selector={"matchExpressions": [{"key": "a", "operator": "Maybe"}]}), "spec.selector.matchExpressions[0]"),
    # volumes
    (volume(accessModes=None), "spec.accessModes: Required value"),
    (volume(capacity={}), "spec.capacity: Required value"),
    (
        volume(capacity={"cpu": "1"}),
        'spec.capacity: Unsupported value: core.ResourceList{"cpu":"1"}: supported values: "storage"',
    ),
    (volume(capacity={"storage": "-1Gi"}), 'spec.capacity[storage]: Invalid value: "-1Gi": must be greater than zero'),
    (volume(hostPath=None), "spec: Required value: must specify a volume type"),
    (volume(nfs={"server": "s", "path": "/"}), "spec.nfs: Forbidden: may not specify more than 1 volume type"),
    (volume(cephfs={"monitors": ["m"]}), "spec.cephFS: Forbidden: may not specify more than 1 volume type"),
    (
        volume(hostPath=None, local={"path": "/mnt"}),
        "spec.nodeAffinity: Required value: Local volume requires node affinity",
    ),
    (
        volume(persistentVolumeReclaimPolicy="Keep"),
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
    ),
    (
        volume(hostPath={"path": "/"}, persistentVolumeReclaimPolicy="Recycle"),
        "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
    ),
    # endpoints
    (endpoints(addresses=[]), "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"),
    (
        endpoints(addresses=[{"ip": "10.0.0.300"}]),
        'subsets[0].addresses[0].ip: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ),
    (
        endpoints(addresses=[{"ip": "127.0.0.1"}]),
        'subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ),
    (
        endpoints(addresses=[{"ip": "169.254.1.1"}]),
        'Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ),
    (endpoints(addresses=[{"ip": "0.0.0.0"}]), 'Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)'),
    (endpoints(ports=[{"port": 80}, {"name": "b", "port": 81}]), "subsets[0].ports[0].name: Required value"),
    (
        endpoints(ports=[{"port": 0}]),
        "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
    ),
    (
        endpoints(ports=[{"port": 80, "protocol": "HTTP"}]),
        'subsets[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    ),
    # ingresses
    (
        ingress(),
        "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified",
    ),
    (
        ingress(rules=[rule(path="api")]),
        'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path',
    ),
    (ingress(rules=[rule(path="/a//b")]), "must not contain '//'"),
    (ingress(rules=[rule(path="/a/..")]), "cannot end with '/..'"),
    (
        ingress(rules=[rule(path_type="Regex")]),
        'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", '
        '"ImplementationSpecific", "Prefix"',
    ),
    (
        ingress(
            rules=[{"host": "10.0.0.1", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": BACKEND}]}}]
        ),
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
    ),
    (ingress(rules=[{"host": "a.*.com"}]), "a wildcard DNS-1123 subdomain must start with '*.'"),
    (ingress(rules=[{"host": "x.com", "http": {"paths": []}}]), "spec.rules[0].http.paths: Required value"),
    (
        ingress(defaultBackend={"service": {"name": "Web", "port": {"number": 80}}}),
        'spec.defaultBackend.service.name: Invalid value: "Web": a DNS-1035 label',
    ),
    (
        ingress(defaultBackend={"service": {"name": "web", "port": {}}}),
        "spec.defaultBackend: Required value: port name or number is required",
    ),
    (
        ingress(defaultBackend={"service": {"name": "web", "port": {"name": "http", "number": 80}}}),
        'spec.defaultBackend: Invalid value: "": cannot set both port name & port number',
    ),
    (ingress(defaultBackend={}), 'spec.defaultBackend: Invalid value: "": resource or service backend is required'),
    (
        ingress(defaultBackend={"service": {"name": "web", "port": {"number": 70000}}}),
        "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ),
    # network policies
    (
        policy(ingress=[{"from": [{}]}]),
        "spec.ingress[0].from[0]: Required value: must specify a peer",
    ),
    (
        policy(egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]),
        "spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer",
    ),
    (
        policy(egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["192.168.0.0/16"]}}]}]),
        'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must be a strict subset of `cidr`',
    ),
    (policy(egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0"}}]}]), 'Invalid value: "10.0.0.0": not a valid CIDR'),
    (
        policy(ingress=[{"ports": [{"port": 90, "endPort": 80}]}]),
        "spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`",
    ),
    (
        policy(ingress=[{"ports": [{"endPort": 80}]}]),
        "spec.ingress[0].ports[0].endPort: Invalid value: 80: may not be specified when `port` is not specified",
    ),
    (
        policy(ingress=[{"ports": [{"protocol": "ICMP"}]}]),
        'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
    ),
    (
        policy(policyTypes=["Ingress", "Sideways"]),
        'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
    ),
]


@pytest.mark.parametrize("o, message", REFUSED, ids=lambda v: v if isinstance(v, str) else v["kind"])
def test_what_upstream_refuses_is_refused_with_its_words(o, message):
    with pytest.raises(ValidationError) as e:
        validate(o)
    assert message in str(e.value)


def test_every_error_of_an_object_is_reported_at_once():
    bad = claim(accessModes=[], resources={}, volumeMode="Raw")
    with pytest.raises(ValidationError) as e:
        validate(bad)
    fields = [c.field for c in e.value.causes]
    assert fields == ["spec.accessModes", "spec.resources[storage]", "spec.volumeMode"]
    assert str(e.value).startswith("[spec.accessModes: Required value")
