"""``kubemu serve``'s service-range flag and advertised address, checked before anything
starts (``actors/harness/serve.py``)."""

from __future__ import annotations

import pytest

from actors.harness.serve import ServeOptions, advertised_address, check


@pytest.mark.parametrize(
    "opts,message",
    [
        (
            ServeOptions(service_cidr="10.0.0.0/8"),
            "--service-cluster-ip-range: '10.0.0.0/8' is too large; for 32-bit addresses, the mask must be >= 12",
        ),
        (ServeOptions(service_cidr="x/1"), "--service-cluster-ip-range: 'x/1' is not a CIDR"),
        (
            ServeOptions(service_cidr="10.100.0.0/16", runtime="ray"),
            "--service-cluster-ip-range: 10.100.0.0/16 is served over the local runtime only",
        ),
    ],
)
def test_bad_service_range_refused_in_one_line(opts, message):
    with pytest.raises(ValueError) as e:
        check(opts)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_good_service_ranges_pass():
    check(ServeOptions(service_cidr="10.100.0.0/16"))
    check(ServeOptions())  # the default, on either runtime
    check(ServeOptions(runtime="ray"))


@pytest.mark.parametrize(
    "host,ip", [("127.0.0.1", "127.0.0.1"), ("localhost", "127.0.0.1"), ("192.0.2.9", "192.0.2.9")]
)
def test_advertised_address(host, ip):
    assert advertised_address(host) == ip


def test_all_interfaces_advertise_a_real_address():
    ip = advertised_address("0.0.0.0")
    assert ip and ip != "0.0.0.0"
