"""Server-side printing of Endpoints and EndpointSlices: upstream's cells (three entries then
``+ N more...``, ``<none>`` and ``<unset>``, IPv6 brackets) and the Table the front end sends."""

from __future__ import annotations

import pytest

from cluster.frontend.tables import column_definitions, table
from cluster.frontend.tables_endpoints import endpoints_text, slice_endpoints_text, slice_ports_text


def _ss(ips, ports=()):
    return {"addresses": [{"ip": ip} for ip in ips], "ports": [{"port": p} for p in ports]}


@pytest.mark.parametrize(
    "subsets,text",
    [
        (None, "<none>"),
        ([], "<none>"),
        ([{}], ""),
        ([_ss(["10.0.0.1"], [80])], "10.0.0.1:80"),
        ([_ss(["10.0.0.1", "10.0.0.2"], [80, 443])], "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."),
        ([_ss(["10.0.0.1", "10.0.0.2"])], "10.0.0.1,10.0.0.2"),  # headless without ports
        ([_ss(["a", "b", "c", "d", "e"], [1])], "a:1,b:1,c:1 + 2 more..."),
        ([_ss(["a"], [1]), _ss(["b", "c"], [2]), _ss(["d"], [3])], "a:1,b:2,c:2 + 1 more..."),
        ([_ss(["fd00::1"], [8080])], "[fd00::1]:8080"),
        ([{"notReadyAddresses": [{"ip": "10.0.0.9"}], "ports": [{"port": 80}]}], ""),  # not-ready not shown
    ],
)
def test_endpoints_column(subsets, text):
    assert endpoints_text(subsets) == text


@pytest.mark.parametrize(
    "ports,text",
    [
        (None, "<unset>"),
        ([], "<unset>"),
        ([{"port": 8080, "name": "http"}], "8080"),
        ([{"name": "http"}], "http"),
        ([{}], "*"),
        ([{"port": 1}, {"port": 2}, {"port": 3}, {"port": 4}], "1,2,3 + 1 more..."),
    ],
)
def test_endpointslice_ports_column(ports, text):
    assert slice_ports_text(ports) == text


@pytest.mark.parametrize(
    "endpoints,text",
    [
        (None, "<unset>"),
        ([{"addresses": ["10.244.0.2"]}], "10.244.0.2"),
        ([{"addresses": [f"10.244.0.{i}"]} for i in range(2, 7)], "10.244.0.2,10.244.0.3,10.244.0.4 + 2 more..."),
    ],
)
def test_endpointslice_endpoints_column(endpoints, text):
    assert slice_endpoints_text(endpoints) == text


def test_tables_carry_upstreams_columns_and_one_cell_each():
    assert [c["name"] for c in column_definitions("Endpoints")] == ["Name", "Endpoints", "Age"]
    assert [c["name"] for c in column_definitions("EndpointSlice")] == [
        "Name",
        "AddressType",
        "Ports",
        "Endpoints",
        "Age",
    ]
    sl = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abcde", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["10.244.0.2"]}, {"addresses": ["10.244.1.2"]}],
    }
    t = table("EndpointSlice", [sl], 90.0, resource_version="7")
    assert t["rows"][0]["cells"] == ["web-abcde", "IPv4", "8080", "10.244.0.2,10.244.1.2", "90s"]
