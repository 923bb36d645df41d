"""The official Python client (``kubernetes`` from PyPI) against ``kubemu serve``: it
parses every object strictly, so a missing required field fails here first. Also runs the
external scheduler from ``examples/``."""

import json
import os
import subprocess
import sys
import time

import pytest
from kubernetes import client, config, watch
from servedcluster import ROOT


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def pod(name, scheduler=None, **annotations):
    spec = client.V1PodSpec(
        containers=[
            client.V1Container(name="c", image="x", resources=client.V1ResourceRequirements(requests={"cpu": "100m"}))
        ],
        scheduler_name=scheduler,
    )
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, annotations=annotations or None), spec=spec)


def test_list_nodes_and_pods_parse_strictly(api):
    nodes = api.list_node().items
    assert [n.metadata.name for n in nodes] == ["node-0", "node-1", "node-2"]
    assert all(n.status.node_info.kubelet_version for n in nodes)
    api.list_pod_for_all_namespaces()
    api.list_namespaced_event("default")


def test_create_watch_and_evict_a_pod(api):
    # Its containers take 20 s to stop, so the evicted pod is seen terminating.
    api.create_namespaced_pod("default", pod("py-web", **{"kubemu.io/stop-seconds": "20"}))
    seen = None
    for event in watch.Watch().stream(
        api.list_namespaced_pod, "default", field_selector="metadata.name=py-web", timeout_seconds=10
    ):
        if event["object"].status.phase == "Running":
            seen = event["object"]
            break
    assert seen is not None and seen.spec.node_name.startswith("node-")
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="py-web", namespace="default"))
    api.create_namespaced_pod_eviction("py-web", "default", eviction)
    got = api.read_namespaced_pod("py-web", "default")
    assert got.metadata.deletion_timestamp is not None


def test_a_stale_update_is_a_409(api):
    # A ConfigMap: no component touches it, so only this test moves its resourceVersion.
    api.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-stale")))
    first = api.read_namespaced_config_map("py-stale", "default")
    first.data = {"v": "1"}
    api.replace_namespaced_config_map("py-stale", "default", first)
    first.data = {"v": "2"}
    with pytest.raises(client.ApiException) as e:
        api.replace_namespaced_config_map("py-stale", "default", first)
    assert e.value.status == 409
    assert api.read_namespaced_config_map("py-stale", "default").data == {"v": "1"}


def test_the_external_scheduler_example_binds_the_pods_that_name_it(served, api):
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "examples/external_scheduler.py"), "--max-pods", "3", "--timeout", "30"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)
    for i in range(3):
        api.create_namespaced_pod("default", pod(f"mine-{i}", scheduler="my-scheduler"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert sorted(line.split()[1] for line in out.splitlines()) == [
        "default/mine-0",
        "default/mine-1",
        "default/mine-2",
    ]
    for i in range(3):
        got = api.read_namespaced_pod(f"mine-{i}", "default")
        assert got.spec.node_name and got.spec.scheduler_name == "my-scheduler"


def raw(answer):
    """A call's answer as the server sent it (``_preload_content=False``): a client's own
    models vary with its version (delete of a ConfigMap is ``V1Status`` in some, ``object``
    in 37)."""
    return json.loads(answer.data)


def test_delete_answers_a_status_or_the_object_as_upstream(api):
    api.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-gone")))
    uid = api.read_namespaced_config_map("py-gone", "default").metadata.uid
    answer = raw(api.delete_namespaced_config_map("py-gone", "default", _preload_content=False))
    assert answer == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "py-gone", "kind": "configmaps", "uid": uid},
    }
    status = client.ApiClient()._ApiClient__deserialize(answer, "V1Status")  # what a V1Status client reads
    assert status.status == "Success" and status.details.kind == "configmaps"
    apps = client.AppsV1Api()
    labels = {"app": "py-rs"}
    template = client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=labels), spec=pod("x").spec)
    rs = client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name="py-rs"),
        spec=client.V1ReplicaSetSpec(
            replicas=0, selector=client.V1LabelSelector(match_labels=labels), template=template
        ),
    )
    apps.create_namespaced_replica_set("default", rs)
    gone = raw(apps.delete_namespaced_replica_set("py-rs", "default", _preload_content=False))
    assert gone["details"]["group"] == "apps" and gone["details"]["kind"] == "replicasets"
    # A pod is one of the resources whose delete answers the object (here still terminating).
    api.create_namespaced_pod("default", pod("py-del"))
    terminating = api.delete_namespaced_pod("py-del", "default")
    assert terminating.metadata.name == "py-del" and terminating.kind == "Pod"


def test_a_dry_run_delete_through_the_client_leaves_the_object(api):
    api.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-keep")))
    before = api.read_namespaced_config_map("py-keep", "default").metadata.resource_version
    answer = raw(api.delete_namespaced_config_map("py-keep", "default", dry_run="All", _preload_content=False))
    assert answer["status"] == "Success"
    assert api.read_namespaced_config_map("py-keep", "default").metadata.resource_version == before
