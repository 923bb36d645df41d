"""Service ClusterIP and NodePort allocation: upstream's ranges, offsets, refusals, release
on delete and the tables rebuilt after a restart; the `kubernetes` Service bootstrap."""

from __future__ import annotations

import pytest

from cluster.api.errors import InternalError, Invalid
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.serviceips import ServiceIPs, ip_offset, port_offset


def _svc(name: str, **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"ports": [{"port": 80}], **spec},
    }


@pytest.mark.parametrize("size,offset", [(16, 0), (8, 0), (256, 16), (4096, 256), (1 << 20, 256), (1024, 64)])
def test_ip_static_band_as_upstream(size, offset):
    assert ip_offset(size) == offset


@pytest.mark.parametrize("size,offset", [(2768, 86), (16, 0), (100, 16), (10000, 128)])
def test_port_static_band_as_upstream(size, offset):
    assert port_offset(size) == offset


def test_kubernetes_service_endpoints_and_slice_at_start():
    api = APIServer()
    svc = api.get("Service", "default", "kubernetes")
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["clusterIPs"] == ["10.96.0.1"]
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    ep = api.get("Endpoints", "default", "kubernetes")
    assert ep["subsets"] == [
        {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}
    ]
    sl = api.get("EndpointSlice", "default", "kubernetes")
    assert sl["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}


def test_kubernetes_service_recreated_and_readvertised():
    api = APIServer()
    api.delete("Service", "default", "kubernetes", None, None, 1.0)
    api.masters.advertise("127.0.0.1", 40000)
    api.write([], 2.0)
    assert api.get("Service", "default", "kubernetes")["spec"]["ports"][0]["targetPort"] == 40000
    assert api.get("Endpoints", "default", "kubernetes")["subsets"][0]["ports"][0]["port"] == 40000


def test_dynamic_then_static_band_lowest_free_first():
    api = APIServer()
    assert api.create(_svc("a"), 1)["spec"]["clusterIP"] == "10.96.1.1"  # above the 256 static addresses
    assert api.create(_svc("b"), 1)["spec"]["clusterIP"] == "10.96.1.2"
    assert api.create(_svc("c", clusterIP="10.96.0.10"), 1)["spec"]["clusterIPs"] == ["10.96.0.10"]


@pytest.mark.parametrize(
    "spec,message",
    [
        (
            {"clusterIP": "10.96.0.1"},
            'spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP '
            "10.96.0.1: provided IP is already allocated",
        ),
        (
            {"clusterIP": "10.0.0.5"},
            'spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP '
            "10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/12",
        ),
        (
            {"type": "NodePort", "ports": [{"port": 80, "nodePort": 29999}]},
            "spec.ports[0].nodePort: Invalid value: "
            "29999: provided port is not in the valid range. The range of valid ports is 30000-32767",
        ),
        (
            {"ipFamilyPolicy": "RequireDualStack"},
            'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this '
            "cluster is not configured for dual-stack services",
        ),
    ],
)
def test_refusals_name_field_and_value_and_change_nothing(spec, message):
    api = APIServer()
    before = api.store.rv
    with pytest.raises(Invalid) as e:
        api.create(_svc("x", **spec), 1)
    assert e.value.message == message
    assert api.store.rv == before and not api.store.has("Service", "default", "x")


def test_node_ports_shared_by_port_number_taken_refused_and_released_on_delete():
    api = APIServer()
    s = api.create(
        _svc(
            "np",
            type="NodePort",
            ports=[{"name": "a", "port": 80}, {"name": "b", "port": 80, "protocol": "UDP"}, {"name": "c", "port": 81}],
        ),
        1,
    )
    assert [p["nodePort"] for p in s["spec"]["ports"]] == [30086, 30086, 30087]
    with pytest.raises(
        Invalid, match=r"^spec.ports\[0\].nodePort: Invalid value: 30086: provided port is already allocated$"
    ):
        api.create(_svc("np2", type="NodePort", ports=[{"port": 80, "nodePort": 30086}]), 1)
    api.delete("Service", "default", "np", None, None, 2)
    again = api.create(_svc("np2", type="NodePort", ports=[{"port": 80, "nodePort": 30086}]), 3)
    assert again["spec"]["ports"][0]["nodePort"] == 30086
    assert again["spec"]["clusterIP"] == s["spec"]["clusterIP"] == "10.96.1.1"  # freed with np


def test_headless_and_external_name_get_no_address():
    api = APIServer()
    h = api.create(_svc("h", clusterIP="None", selector={"a": "b"}), 1)["spec"]
    assert (h["clusterIP"], h["clusterIPs"], h["ipFamilyPolicy"]) == ("None", ["None"], "SingleStack")
    e = api.create(_svc("e", type="ExternalName", externalName="example.com"), 1)["spec"]
    assert "clusterIP" not in e and "ipFamilies" not in e


def test_update_keeps_addresses_and_type_change_allocates_and_releases():
    api = APIServer()
    s = api.create(_svc("u"), 1)
    ip = s["spec"]["clusterIP"]
    sent = _svc("u", type="NodePort")  # a replace that leaves clusterIP out keeps it
    new = api.update(sent, 2)
    assert new["spec"]["clusterIP"] == ip and new["spec"]["ports"][0]["nodePort"] == 30086
    back = api.update(_svc("u"), 3)
    assert "nodePort" not in back["spec"]["ports"][0]
    with pytest.raises(Invalid, match="may not change once set"):
        api.update(_svc("u", clusterIP="10.96.9.9"), 4)


def test_restarted_apiserver_rebuilds_tables_from_stored_services():
    api = APIServer()
    api.create(_svc("a"), 1)
    again = APIServer(store=api.store)
    with pytest.raises(Invalid, match="already allocated"):
        again.create(_svc("b", clusterIP="10.96.1.1"), 2)
    assert again.create(_svc("c"), 2)["spec"]["clusterIP"] == "10.96.1.2"


def test_full_ranges_are_internal_errors():
    ips = ServiceIPs("10.0.0.0/30")  # two usable addresses

    class _Store:
        def kind_revision(self, kind):
            return 0

        def peek_all(self, kind):
            return []

    store = _Store()
    for name in ("a", "b"):
        ips.assign(_svc(name), store)
    with pytest.raises(InternalError, match="failed to allocate a serviceIP: range is full"):
        ips.assign(_svc("c"), store)
    ports = ServiceIPs(node_ports=(30000, 30000))
    ports.assign(_svc("a", type="NodePort"), store)
    with pytest.raises(InternalError, match="failed to allocate a nodePort: range is full"):
        ports.assign(_svc("b", type="NodePort"), store)


def test_dry_run_create_stores_nothing_and_leaves_the_address_free():
    api = APIServer()
    with api.dry_run():
        assert api.create(_svc("d"), 1)["spec"]["clusterIP"] == "10.96.1.1"
    assert api.create(_svc("real"), 2)["spec"]["clusterIP"] == "10.96.1.1"
