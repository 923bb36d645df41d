"""Quantities and times are stored as upstream writes them (Quantity.String(), RFC 3339 in UTC)."""

from __future__ import annotations

import pytest

from cluster.api.canonical import canonical_quantity, canonical_time, canonicalize
from cluster.api.quantity import QuantityError
from cluster.apiserver.apiserver import APIServer


@pytest.mark.parametrize(
    "given, stored",
    [
        (0.5, "500m"),  # a JSON number in a manifest
        ("0.5", "500m"),
        (2, "2"),
        (2000, "2k"),
        ("1500", "1500"),
        ("1000m", "1"),
        ("250m", "250m"),
        ("0.0001", "100u"),
        ("0.0000000001", "1n"),  # below a nano unit rounds up
        ("-1.5", "-1500m"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1.5Ki", "1536"),  # not a multiple of 1024: plain bytes
        ("0.5Ki", "512"),  # under 1024 bytes: decimal
        ("100M", "100M"),
        ("1e3", "1e3"),  # the exponent form stays
        ("1.5e3", "1500"),
        ("0", "0"),
    ],
)
def test_canonical_quantity(given, stored):
    assert canonical_quantity(given) == stored


def test_not_a_quantity_raises():
    with pytest.raises(QuantityError):
        canonical_quantity("1.5x")


def _pod(cpu, memory) -> dict:
    res = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": res}], "overhead": {"cpu": 0.25}},
    }


def test_every_quantity_field_of_a_pod_is_rewritten_and_nothing_else():
    pod = _pod(0.5, "1024Mi")
    canonicalize("Pod", pod)
    c = pod["spec"]["containers"][0]
    assert c["resources"] == {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "500m"}}
    assert pod["spec"]["overhead"] == {"cpu": "250m"}
    assert c["image"] == "nginx" and pod["metadata"] == {"name": "p", "namespace": "default"}


def test_the_apiserver_stores_numbers_as_strings():
    api = APIServer()
    pod = _pod(1.5, 2 * 1024**3)
    del pod["spec"]["overhead"]  # only a RuntimeClass may set it
    stored = api.create(pod, 0.0)
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "1500m",
        "memory": "2147483648",
    }  # a number is decimal
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"capacity": {"cpu": 4, "memory": "16Gi"}},
    }
    assert api.create(node, 0.0)["status"]["capacity"] == {"cpu": "4", "memory": "16Gi"}


@pytest.mark.parametrize(
    "given, time, micro",
    [
        ("2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00.000000Z"),
        ("2026-01-01T10:00:00+00:00", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00.000000Z"),  # the Python client's
        (
            "2026-01-01T12:30:00.25+02:00",
            "2026-01-01T10:30:00Z",
            "2026-01-01T10:30:00.250000Z",
        ),  # to UTC; Time drops the fraction
        ("2026-01-01T10:00:00.123456Z", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00.123456Z"),
        ("2026-01-01", "2026-01-01", "2026-01-01"),  # not RFC 3339: left for validation
        ("2026-01-01T10:00:00", "2026-01-01T10:00:00", "2026-01-01T10:00:00"),  # no offset
        ("yesterday", "yesterday", "yesterday"),
    ],
)
def test_canonical_time(given, time, micro):
    assert canonical_time(given) == time
    assert canonical_time(given, micro=True) == micro


def test_the_apiserver_stores_an_events_times_in_utc_as_upstream_writes_them():
    api = APIServer()
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Started",
        "firstTimestamp": "2026-01-01T12:00:00+02:00",
        "lastTimestamp": "2026-01-01T10:00:05.9+00:00",
        "eventTime": "2026-01-01T10:00:00.5Z",  # a MicroTime
        "count": 1,
    }
    stored = api.create(event, 0.0)
    assert (stored["firstTimestamp"], stored["lastTimestamp"]) == ("2026-01-01T10:00:00Z", "2026-01-01T10:00:05Z")
    assert stored["eventTime"] == "2026-01-01T10:00:00.500000Z"
    assert stored["reason"] == "Started" and stored["count"] == 1
