"""Nodes created and deleted through the API, with kubectl 1.33 and the Python client against
a ``kubemu serve`` process, as a user (or a node autoscaler's provider) would: ``kubectl
create -f node.yaml`` gets the Node a kubelet (Ready within seconds, its capacity and
allocatable as written), a pod is scheduled onto it and runs; ``kubectl delete node`` stops
the kubelet and pod GC deletes its pods (40 emulated seconds: the server runs 10x). A Node
annotated ``kubemu.io/managed: "false"`` is left alone, a capacity that is not a quantity is
refused by the API, and one no kubelet can run is logged in one line with the server up."""

import json
import os
import shutil
import subprocess

import pytest
from servedcluster import Served, needs_kubectl, until

pytestmark = needs_kubectl

NODE = """
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{pool: api}}
  annotations: {annotations}
status:
  capacity: {{cpu: "8", memory: 16Gi, pods: "20"}}
  allocatable: {allocatable}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: on-api}
spec:
  nodeSelector: {pool: api}
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "6"}}}]
"""


def kubectl_133() -> str:
    folder = os.path.dirname(os.path.realpath(shutil.which("kubectl") or ""))
    return os.path.join(folder, "kubectl.1.33")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("nodes-api"), nodes=1, extra=("--time-scale", "10"))
    yield s
    s.stop()


def kubectl(served, *args, input=None, check=True):
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
    proc = subprocess.run(
        [kubectl_133(), "--cache-dir", str(served.cache), *args],
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def node_yaml(name, allocatable='{cpu: 7500m, memory: 15Gi, pods: "20"}', annotations="{}"):
    return NODE.format(name=name, allocatable=allocatable, annotations=annotations)


def ready(served, name):
    got = kubectl(
        served, "get", "node", name, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}", check=False
    )
    return got.returncode == 0 and got.stdout == "True"


def test_kubectl_create_node_gets_a_kubelet_and_runs_pods_then_delete_node_takes_them(served):
    assert kubectl(served, "version", "--client", "-o", "json").stdout.count('"minor": "33"') == 1
    created = kubectl(served, "create", "-f", "-", input=node_yaml("api-0"))
    assert created.stdout.strip() == "node/api-0 created"
    assert until(lambda: ready(served, "api-0"), 10), kubectl(served, "get", "node", "api-0", "-o", "yaml").stdout
    table = kubectl(served, "get", "nodes", "api-0", "--no-headers").stdout.split()
    assert table[:2] == ["api-0", "Ready"]
    node = json.loads(kubectl(served, "get", "node", "api-0", "-o", "json").stdout)
    assert node["status"]["capacity"] == {"cpu": "8", "memory": "16Gi", "pods": "20", "ephemeral-storage": "100Gi"}
    assert {k: node["status"]["allocatable"][k] for k in ("cpu", "memory", "pods")} == {
        "cpu": "7500m",
        "memory": "15Gi",
        "pods": "20",
    }
    lease = json.loads(kubectl(served, "get", "lease", "-n", "kube-node-lease", "api-0", "-o", "json").stdout)
    assert lease["spec"]["holderIdentity"] == "api-0"

    kubectl(served, "create", "-f", "-", input=POD)
    placed = until(
        lambda: (
            kubectl(served, "get", "pod", "on-api", "-o", "jsonpath={.spec.nodeName} {.status.phase}").stdout
            == "api-0 Running"
        ),
        15,
    )
    assert placed, kubectl(served, "describe", "pod", "on-api").stdout

    assert kubectl(served, "delete", "node", "api-0").stdout.strip() == 'node "api-0" deleted'
    gone = until(lambda: kubectl(served, "get", "pod", "on-api", check=False).returncode != 0, 20)
    assert gone, kubectl(served, "get", "pod", "on-api", "-o", "yaml").stdout
    assert "NotFound" in kubectl(served, "get", "node", "api-0", check=False).stderr  # no kubelet brought it back
    pods = kubectl(served, "get", "pods", "-A", "--field-selector", "spec.nodeName=api-0", "-o", "name").stdout
    assert pods == ""


def test_the_python_client_creates_a_node_that_a_kubelet_takes_over(served):
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(str(served.kubeconfig)))
    body = client.V1Node(
        metadata=client.V1ObjectMeta(name="py-0", labels={"pool": "py"}),
        spec=client.V1NodeSpec(taints=[client.V1Taint(key="dedicated", value="py", effect="NoSchedule")]),
        status=client.V1NodeStatus(capacity={"cpu": "2", "memory": "4Gi"}),
    )
    api.create_node(body)
    assert until(lambda: ready(served, "py-0"), 10)
    got = api.read_node("py-0")
    assert got.status.allocatable["cpu"] == "2" and got.status.allocatable["memory"] == "4Gi"
    assert [t.key for t in got.spec.taints] == ["dedicated"]  # the object's own, kept
    api.delete_node("py-0")


def test_an_opted_out_node_is_left_alone_and_a_bad_one_is_refused_or_logged(served):
    kubectl(served, "create", "-f", "-", input=node_yaml("virtual-0", annotations='{kubemu.io/managed: "false"}'))
    bad = kubectl(served, "create", "-f", "-", input=node_yaml("bad-0", allocatable="{cpu: abc}"), check=False)
    assert bad.returncode == 1 and "(BadRequest)" in bad.stderr and "quantities must match" in bad.stderr  # upstream's
    assert "NotFound" in kubectl(served, "get", "node", "bad-0", check=False).stderr  # nothing stored
    over = kubectl(served, "create", "-f", "-", input=node_yaml("over-0", allocatable='{cpu: "9"}'))
    assert over.stdout.strip() == "node/over-0 created"  # stored: the API has no rule against it
    kubectl(served, "create", "-f", "-", input=node_yaml("api-1"))
    assert until(lambda: ready(served, "api-1"), 10)  # the server goes on
    assert not ready(served, "virtual-0") and not ready(served, "over-0")
    out = served.stop()
    assert 'kubemu: node over-0: status.allocatable.cpu: "9" is more than the capacity "8"; no kubelet runs it' in out
    assert out.count("node over-0:") == 1
    assert "node virtual-0" not in out
