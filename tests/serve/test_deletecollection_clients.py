"""Deleting many objects at once against ``kubemu serve``, as the clients do it: the Python
client's ``delete_collection_*`` (one DELETE on the collection URL), ``kubectl delete -l`` and
``kubectl delete --all`` (a list, then one DELETE each)."""

import pytest
from kubernetes import client, config
from servedcluster import needs_kubectl


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def _config_maps(api, *names, **labels):
    for name in names:
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels or None))
        api.create_namespaced_config_map("default", body)


def _names(api, prefix):
    return sorted(
        c.metadata.name for c in api.list_namespaced_config_map("default").items if c.metadata.name.startswith(prefix)
    )


def test_the_python_client_deletes_a_collection_by_label(api):
    _config_maps(api, "dc-a", "dc-b", app="dc")
    _config_maps(api, "dc-keep", app="other")
    answer = api.delete_collection_namespaced_config_map("default", label_selector="app=dc")
    assert answer.status in (None, "Success") or answer.kind == "ConfigMapList"
    assert _names(api, "dc-") == ["dc-keep"]
    dry = api.delete_collection_namespaced_config_map("default", dry_run="All")
    assert dry is not None and _names(api, "dc-") == ["dc-keep"]
    api.delete_collection_namespaced_config_map("default", field_selector="metadata.name=dc-keep")
    assert _names(api, "dc-") == []


@needs_kubectl
def test_kubectl_deletes_by_label_and_all(served, api):
    _config_maps(api, "kd-a", "kd-b", app="x")
    _config_maps(api, "kd-c", app="y")
    out = served.kubectl("delete", "cm", "-l", "app=x").stdout.splitlines()
    assert out == ['configmap "kd-a" deleted', 'configmap "kd-b" deleted'] and _names(api, "kd-") == ["kd-c"]
    served.kubectl("delete", "cm", "--all")
    assert _names(api, "kd-") == []
