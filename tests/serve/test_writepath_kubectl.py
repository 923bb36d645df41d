"""A pod's create through ``kubemu serve`` stores what upstream would: the real kubectl and
the official Python client read back upstream's defaults, the canonical quantities (a
number in a manifest comes back as a string), the two DefaultTolerationSeconds
tolerations (also when the manifest sends ``tolerations: null``) and the QoS class."""

import json

import pytest
from kubernetes import client, config
from servedcluster import needs_kubectl

pytestmark = needs_kubectl

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = dict(NOT_READY, key="node.kubernetes.io/unreachable")


@pytest.fixture(scope="module")
def core(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def _manifest(name: str, spec: dict) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def _get(served, name: str) -> dict:
    return json.loads(served.kubectl("get", "pod", name, "-o", "json").stdout)


def test_kubectl_reads_back_defaults_canonical_quantities_and_tolerations(served):
    spec = {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": 0.5, "memory": "1.5Gi"}, "limits": {"cpu": 1}},
            }
        ],
        "initContainers": [{"name": "i", "image": "busybox:1.36", "resources": {"limits": {"memory": "1024Ki"}}}],
    }
    served.kubectl("create", "-f", "-", input=_manifest("shapes", spec))
    pod = _get(served, "shapes")
    c, init = pod["spec"]["containers"][0], pod["spec"]["initContainers"][0]
    assert c["resources"] == {"requests": {"cpu": "500m", "memory": "1536Mi"}, "limits": {"cpu": "1"}}
    assert init["resources"] == {"limits": {"memory": "1Mi"}, "requests": {"memory": "1Mi"}}  # requests from limits
    assert (c["imagePullPolicy"], init["imagePullPolicy"]) == ("Always", "IfNotPresent")
    assert c["terminationMessagePath"] == "/dev/termination-log" and c["terminationMessagePolicy"] == "File"
    assert pod["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    assert pod["status"]["qosClass"] == "Burstable"
    assert (pod["spec"]["dnsPolicy"], pod["spec"]["restartPolicy"], pod["spec"]["schedulerName"]) == (
        "ClusterFirst",
        "Always",
        "default-scheduler",
    )


def test_null_tolerations_are_unset(served, core):
    served.kubectl(
        "create",
        "-f",
        "-",
        input=_manifest("null-tol", {"containers": [{"name": "c", "image": "nginx"}], "tolerations": None}),
    )
    assert _get(served, "null-tol")["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    read = core.read_namespaced_pod("null-tol", "default")
    assert [(t.key, t.toleration_seconds) for t in read.spec.tolerations] == [
        ("node.kubernetes.io/not-ready", 300),
        ("node.kubernetes.io/unreachable", 300),
    ]
    assert read.status.qos_class == "BestEffort"


def test_the_python_client_creates_and_reads_a_guaranteed_pod(core):
    body = client.V1Pod(
        metadata=client.V1ObjectMeta(name="guaranteed", labels={"app": "web"}),
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(
                    name="c",
                    image="nginx:1.25",
                    resources=client.V1ResourceRequirements(limits={"cpu": "1000m", "memory": "1024Mi"}),
                )
            ],
            tolerations=[client.V1Toleration(operator="Exists")],
        ),
    )
    made = core.create_namespaced_pod("default", body)
    assert made.spec.containers[0].resources.requests == {"cpu": "1", "memory": "1Gi"}
    assert made.status.qos_class == "Guaranteed"
    assert [(t.operator, t.key) for t in made.spec.tolerations] == [("Exists", None)]  # tolerates all: nothing added


def test_a_bad_quantity_is_refused_and_nothing_is_stored(served):
    spec = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1x"}}}]}
    out = served.kubectl("create", "-f", "-", input=_manifest("bad-q", spec), check=False)
    assert out.returncode != 0
    # Over HTTP a malformed quantity fails the decode, as upstream's (400, before any admission).
    assert "Error from server (BadRequest)" in out.stderr
    assert "quantities must match the regular expression" in out.stderr
    assert served.kubectl("get", "pod", "bad-q", check=False).returncode != 0
