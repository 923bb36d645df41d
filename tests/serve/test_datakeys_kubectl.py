"""Secret and ConfigMap keys through ``kubemu serve``: a key upstream refuses (empty, with a
'/', '..'-prefixed) is a 422 naming ``data[<key>]`` for kubectl and the Python client, and
nothing is stored (the conformance test "Secrets should fail to create secret due to empty
secret key")."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from servedcluster import needs_kubectl

pytestmark = needs_kubectl

RULE = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"


def test_kubectl_refuses_a_secret_with_an_empty_key(served) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "empty-key"}, "data": {"": "dg=="}}
    out = served.kubectl("create", "-f", "-", input=json.dumps(secret), check=False)
    assert out.returncode != 0
    assert 'Secret "empty-key" is invalid: data[]: Invalid value: "": ' + RULE in out.stderr
    assert served.kubectl("get", "secret", "empty-key", check=False).returncode != 0


def test_kubectl_refuses_a_configmap_key_with_a_slash(served) -> None:
    # From a file: `kubectl create configmap --from-literal` checks the key before sending.
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "slash"}, "data": {"a/b": "1"}}
    out = served.kubectl("create", "-f", "-", input=json.dumps(cm), check=False)
    assert out.returncode != 0
    assert 'ConfigMap "slash" is invalid: data[a/b]: Invalid value: "a/b": ' + RULE in out.stderr
    assert served.kubectl("get", "configmap", "slash", check=False).returncode != 0
    assert served.kubectl("create", "configmap", "fine", "--from-literal=key.name=1").returncode == 0


def test_python_client_gets_the_status_with_its_cause(served) -> None:
    config.load_kube_config(config_file=str(served.kubeconfig))
    body = client.V1Secret(metadata=client.V1ObjectMeta(name="dots"), string_data={"..x": "v"})
    with pytest.raises(ApiException) as err:
        client.CoreV1Api().create_namespaced_secret("default", body)
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: \"..x\": must not start with '..'",
            "field": "data[..x]",
        }
    ]
