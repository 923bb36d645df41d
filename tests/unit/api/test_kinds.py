"""The kinds table: every served kind once, modelled kinds validated field by field, and
kinds kubemu only stores (ConfigMap, Deployment, RBAC, ...) checked on their metadata."""

import pytest

from cluster.api.codec import decode
from cluster.api.errors import AlreadyExists, Invalid
from cluster.api.kinds import BY_KIND, BY_PLURAL, RESOURCES
from cluster.api.objects import KINDS
from cluster.api.requests import Create, Update
from cluster.api.validation import ValidationError, validate
from cluster.apiserver.apiserver import APIServer


def test_every_kind_and_plural_appears_once_and_objects_kinds_follows_the_table():
    assert len(BY_KIND) == len(RESOURCES) == len(BY_PLURAL) == len(KINDS)
    assert KINDS["Deployment"] == ("apps/v1", True) and KINDS["ClusterRole"] == ("rbac.authorization.k8s.io/v1", False)
    assert BY_PLURAL[("", "pods")].short_names == ("po",) and BY_KIND["Pod"].singular == "pod"


@pytest.mark.parametrize(
    "obj, error",
    [
        ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"k": "v"}}, None),
        (
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web"},
                "spec": {"anything": 1, "ports": [{"port": 80}]},
            },
            None,
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}},
            'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "web"}},
            'apiVersion: Invalid value: "apps/v1beta1": is not served for Deployment (use "apps/v1")',
        ),
    ],
)
def test_stored_kinds_are_checked_on_their_metadata_only(obj, error):
    try:
        validate(obj)
    except ValidationError as e:
        assert str(e) == error
    else:
        assert error is None


def test_the_apiserver_stores_lists_and_versions_a_kind_it_does_not_model():
    api = APIServer(seed=1)
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default"},
        "data": {"a": "1"},
    }
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "reader"}}
    assert api.write([Create(cm), Create(role)], 0.0) == [None, None]
    (again,) = api.write([Create(cm)], 1.0)
    assert isinstance(again, AlreadyExists)
    stored = api.get("ConfigMap", "default", "cfg")
    assert stored["data"] == {"a": "1"} and stored["metadata"]["uid"]
    changed = {**stored, "data": {"a": "2"}}
    assert api.write([Update(changed)], 2.0) == [None]
    assert api.get("ConfigMap", "default", "cfg")["data"] == {"a": "2"}
    assert [decode(b)["metadata"]["name"] for b in api.list("ClusterRole").items] == ["reader"]
    assert "namespace" not in api.get("ClusterRole", "", "reader")["metadata"]


def test_a_stored_kind_in_a_namespace_that_does_not_exist_is_refused():
    api = APIServer(seed=1)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "nowhere"}}
    (err,) = api.write([Create(cm)], 0.0)
    assert err is not None and err.code == 404 and not isinstance(err, Invalid)
