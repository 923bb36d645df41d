"""The health endpoints answer as kube-apiserver's: ``ok``, the checks with ``?verbose``,
and each check on its own path."""

import pytest

from cluster.frontend.handler import health_answer


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
def test_plain_is_ok(path):
    assert health_answer(path, {}).body == b"ok"


def test_verbose_lists_the_checks_then_passes():
    body = health_answer("/readyz", {"verbose": ""}).body.decode()
    assert body.splitlines()[0] == "[+]ping ok"
    assert "[+]etcd ok" in body and body.endswith("readyz check passed\n")
    assert health_answer("/livez", {"verbose": "1"}).body.decode().endswith("livez check passed\n")


def test_each_check_has_its_path_and_others_are_not_health():
    assert health_answer("/readyz/ping", {}).body == b"ok"
    assert health_answer("/readyz/nope", {}) is None
    assert health_answer("/version", {}) is None and health_answer("/api", {}) is None
