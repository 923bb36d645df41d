"""kubectl 1.33 against ``kubemu serve``: a pod refused by a ResourceQuota shows upstream's
message, ``describe quota`` shows used and hard, a LimitRange fills a pod's resources, and
``scale rc`` scales a ReplicationController through the scale subresource."""

import json

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: small, namespace: quota-test}
spec:
  hard: {pods: "1", requests.cpu: "1"}
"""
LIMITS = """
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: quota-test}
spec:
  limits:
  - {type: Container, default: {cpu: 200m, memory: 64Mi}}
"""
RC = """
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
"""


def test_a_quota_refuses_the_second_pod_and_describe_shows_used_and_hard(served):
    served.kubectl("create", "namespace", "quota-test")
    served.kubectl("apply", "-f", "-", input=QUOTA)
    served.kubectl("apply", "-f", "-", input=LIMITS)
    until(
        lambda: (
            "used"
            in json.loads(served.kubectl("get", "quota", "small", "-n", "quota-test", "-o", "json").stdout).get(
                "status", {}
            )
        )
    )
    served.kubectl("run", "first", "-n", "quota-test", "--image=nginx")
    pod = json.loads(served.kubectl("get", "pod", "first", "-n", "quota-test", "-o", "json").stdout)
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "200m", "memory": "64Mi"},
        "requests": {"cpu": "200m", "memory": "64Mi"},
    }
    refused = served.kubectl("run", "second", "-n", "quota-test", "--image=nginx", check=False)
    assert refused.returncode == 1
    assert (
        'Error from server (Forbidden): pods "second" is forbidden: exceeded quota: small, '
        "requested: pods=1, used: pods=1, limited: pods=1"
    ) in refused.stderr
    described = served.kubectl("describe", "quota", "small", "-n", "quota-test").stdout
    rows = {
        line.split()[0]: line.split()[1:]
        for line in described.splitlines()
        if line.startswith(("pods", "requests.cpu"))
    }
    assert rows == {"pods": ["1", "1"], "requests.cpu": ["200m", "1"]}


def test_scale_rc_up_and_down(served):
    served.kubectl("apply", "-f", "-", input=RC)
    assert (
        served.kubectl("scale", "rc", "legacy", "--replicas=3").stdout.strip() == "replicationcontroller/legacy scaled"
    )

    def ready(n):
        rc = json.loads(served.kubectl("get", "rc", "legacy", "-o", "json").stdout)
        return rc.get("status", {}).get("readyReplicas") == n and rc["status"]

    status = until(lambda: ready(3))
    assert status["replicas"] == 3 and status["fullyLabeledReplicas"] == 3
    scale = json.loads(
        served.kubectl("get", "--raw", "/api/v1/namespaces/default/replicationcontrollers/legacy/scale").stdout
    )
    assert scale["spec"] == {"replicas": 3} and scale["status"]["selector"] == "app=legacy"
    served.kubectl("scale", "rc", "legacy", "--replicas=1")
    until(lambda: len(served.kubectl("get", "pods", "-l", "app=legacy", "--no-headers").stdout.splitlines()) == 1)
    row = served.kubectl("get", "rc", "legacy", "--no-headers").stdout.split()
    assert row[:4] == ["legacy", "1", "1", "1"]


def test_the_python_client_sees_the_refusal_and_the_rc_scale(served):
    api = config.new_client_from_config(str(served.kubeconfig))
    core = client.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": "quota-py"}})
    core.create_namespaced_resource_quota("quota-py", {"metadata": {"name": "one"}, "spec": {"hard": {"pods": "1"}}})
    until(lambda: (core.read_namespaced_resource_quota("one", "quota-py").status or None) is not None)
    pod = {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    core.create_namespaced_pod("quota-py", pod)
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("quota-py", {**pod, "metadata": {"name": "b"}})
    assert refused.value.status == 403
    body = json.loads(refused.value.body)
    assert (body["reason"], body["message"]) == (
        "Forbidden",
        'pods "b" is forbidden: exceeded quota: one, requested: pods=1, used: pods=1, limited: pods=1',
    )
    rc = {"metadata": {"name": "py"}, "spec": {"replicas": 1, "selector": {"app": "py"}}}
    rc["spec"]["template"] = {
        "metadata": {"labels": {"app": "py"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    core.create_namespaced_replication_controller("default", rc)
    core.patch_namespaced_replication_controller_scale("py", "default", {"spec": {"replicas": 2}})
    until(lambda: (core.read_namespaced_replication_controller("py", "default").status.ready_replicas or 0) == 2)
    scale = core.read_namespaced_replication_controller_scale("py", "default")
    assert (scale.spec.replicas, scale.status.replicas, scale.status.selector) == (2, 2, "app=py")
