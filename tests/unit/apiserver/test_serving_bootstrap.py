"""What ``kubemu serve`` tells the apiserver: the service range (``--service-cluster-ip-range``
checked as upstream's flag is), the address it is served at (the ``kubernetes`` Endpoints and
EndpointSlice) and its CA (``kube-system/extension-apiserver-authentication``), kept across a
restart and written again when deleted."""

from __future__ import annotations

import pytest

from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.bootstrap_services import AUTH_NAME, AUTH_NAMESPACE, CLIENT_CA_KEY
from cluster.apiserver.durable import restart_in_memory
from cluster.apiserver.serviceips import parse_cidr

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(
    "text,network",
    [
        ("10.96.0.0/12", "10.96.0.0/12"),
        ("10.100.0.0/16", "10.100.0.0/16"),
        ("10.96.0.1/12", "10.96.0.0/12"),  # host bits masked off, as Go's ParseCIDR
        ("fd00::/108", "fd00::/108"),
    ],
)
def test_service_ranges_accepted(text, network):
    assert str(parse_cidr(text)) == network


@pytest.mark.parametrize(
    "text,message",
    [
        ("10.96.0.0", "'10.96.0.0' is not a CIDR (no /prefix length)"),
        ("banana/12", "'banana/12' is not a CIDR ('banana/12' does not appear to be an IPv4 or IPv6 network)"),
        ("10.96.0.0/33", "'10.96.0.0/33' is not a CIDR ('10.96.0.0/33' does not appear to be an IPv4 or IPv6 network)"),
        ("10.0.0.0/8", "'10.0.0.0/8' is too large; for 32-bit addresses, the mask must be >= 12"),
        ("fd00::/64", "'fd00::/64' is too large; for 128-bit addresses, the mask must be >= 108"),
    ],
)
def test_service_ranges_refused_in_one_line(text, message):
    with pytest.raises(ValueError) as e:
        parse_cidr(text)
    assert str(e.value) == message


def test_configured_range_moves_the_kubernetes_service_to_its_first_address():
    api = APIServer()
    assert api.get("Service", "default", "kubernetes")["spec"]["clusterIP"] == "10.96.0.1"
    api.services.configure("10.100.0.0/16")
    api.write([], 1.0)
    assert api.get("Service", "default", "kubernetes")["spec"]["clusterIPs"] == ["10.100.0.1"]
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "namespace": "default"}}
    made = api.create({**svc, "spec": {"ports": [{"port": 80}]}}, 2.0)
    assert made["spec"]["clusterIP"] == "10.100.1.1"  # above the /16's 256 static addresses


def test_advertised_address_names_the_served_ip_and_port():
    api = APIServer()
    api.masters.advertise("192.0.2.7", 41234)
    api.write([], 1.0)
    ep = api.get("Endpoints", "default", "kubernetes")
    assert ep["subsets"] == [
        {"addresses": [{"ip": "192.0.2.7"}], "ports": [{"name": "https", "port": 41234, "protocol": "TCP"}]}
    ]
    sl = api.get("EndpointSlice", "default", "kubernetes")
    assert (sl["addressType"], sl["endpoints"][0]["addresses"], sl["ports"][0]["port"]) == (
        "IPv4",
        ["192.0.2.7"],
        41234,
    )
    assert api.get("Service", "default", "kubernetes")["spec"]["ports"][0]["targetPort"] == 41234


def test_published_ca_is_written_and_rewritten_when_deleted_or_changed():
    api = APIServer()
    assert not api.store.has("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)  # nothing served, nothing published
    api.masters.publish_ca(PEM)
    api.write([], 1.0)
    assert api.get("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)["data"] == {CLIENT_CA_KEY: PEM}
    api.delete("ConfigMap", AUTH_NAMESPACE, AUTH_NAME, None, None, 2.0)
    api.write([], 3.0)
    assert api.get("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)["data"] == {CLIENT_CA_KEY: PEM}
    cm = api.get("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)
    api.update({**cm, "data": {CLIENT_CA_KEY: "tampered", "extra": "kept"}}, 4.0)
    api.write([], 5.0)
    assert api.get("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)["data"] == {CLIENT_CA_KEY: PEM, "extra": "kept"}


def test_restart_keeps_what_serve_told_the_apiserver():
    api = APIServer()
    api.services.configure("10.100.0.0/16")
    api.masters.advertise("192.0.2.7", 41234)
    api.masters.publish_ca(PEM)
    api.write([], 1.0)
    again = restart_in_memory(api, seed=1)
    again.delete("Endpoints", "default", "kubernetes", None, None, 2.0)
    again.delete("ConfigMap", AUTH_NAMESPACE, AUTH_NAME, None, None, 2.0)
    again.write([], 3.0)
    assert again.get("Service", "default", "kubernetes")["spec"]["clusterIP"] == "10.100.0.1"
    assert again.get("Endpoints", "default", "kubernetes")["subsets"][0]["addresses"] == [{"ip": "192.0.2.7"}]
    assert again.get("ConfigMap", AUTH_NAMESPACE, AUTH_NAME)["data"] == {CLIENT_CA_KEY: PEM}
