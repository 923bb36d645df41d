"""Containers that cannot be created, and readiness gates, through ``kubemu serve``: the real
kubectl shows ErrImagePull/ImagePullBackOff (Init: ones too) and CreateContainerConfigError
as a real cluster does, ``kubectl describe`` the pull events; a ConfigMap created later lets
the container start; a pod behind a Service with a readiness gate joins the EndpointSlice's
ready endpoints only once a client patches the gate's condition True."""

import json
import re

import pytest
from kubernetes import client, config
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

BAD = "gcr.io/k8s-conform/invalid-image:v1"


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def create(served, name, spec, **meta):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": spec}
    served.kubectl("create", "-f", "-", input=json.dumps(body))


def status_column(served, name):
    out = served.kubectl("get", "pod", name, "--no-headers", check=False).stdout.split()
    return out[1:3] if len(out) > 2 else None


def test_kubectl_run_with_an_invalid_image_shows_the_pull_errors_and_events(served, api):
    served.kubectl("run", "bad", f"--image={BAD}")
    seen = set()

    def both():
        row = status_column(served, "bad")
        if row:
            seen.add(tuple(row))
        return {("0/1", "ErrImagePull"), ("0/1", "ImagePullBackOff")} <= seen

    assert until(both, 20), seen
    described = served.kubectl("describe", "pod", "bad").stdout
    assert re.search(r"Status:\s+Pending", described)
    assert re.search(r"Warning\s+Failed\s+.*Failed to pull image \"" + re.escape(BAD) + r"\": rpc error: ", described)
    assert re.search(r"Normal\s+BackOff\s+.*Back-off pulling image \"" + re.escape(BAD) + '"', described)
    assert re.search(r"Warning\s+Failed\s+.*Error: ImagePullBackOff", described)

    pod = api.read_namespaced_pod("bad", "default")
    assert pod.status.phase == "Pending"
    (cs,) = pod.status.container_statuses
    assert cs.ready is False and cs.state.waiting.reason in ("ErrImagePull", "ImagePullBackOff")
    ready = next(c for c in pod.status.conditions if c.type == "Ready")
    assert ready.status == "False"


def test_an_init_container_that_cannot_pull_shows_init_reasons(served):
    spec = {
        "initContainers": [{"name": "setup", "image": "foo:non-existent"}],
        "containers": [{"name": "app", "image": "nginx"}],
    }
    create(served, "init-bad", spec)
    row = until(
        lambda: (lambda r: r if r and r[1] in ("Init:ErrImagePull", "Init:ImagePullBackOff") else None)(
            status_column(served, "init-bad")
        )
    )
    assert row and row[0] == "0/1", status_column(served, "init-bad")


def test_the_annotation_fails_a_pull_and_a_bad_value_is_refused(served):
    create(
        served,
        "ann-bad",
        {"containers": [{"name": "c", "image": "nginx"}]},
        annotations={"kubemu.io/image-pull": "fail"},
    )
    assert until(lambda: (r := status_column(served, "ann-bad")) and r[1] in ("ErrImagePull", "ImagePullBackOff"))
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ann-typo", "annotations": {"kubemu.io/image-pull": "maybe"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    proc = served.kubectl("create", "-f", "-", input=json.dumps(body), check=False)
    assert proc.returncode != 0
    assert (
        "kubemu.io/image-pull" in proc.stderr and "maybe" in proc.stderr and "must be one of: fail, pass" in proc.stderr
    )
    assert served.kubectl("get", "pod", "ann-typo", check=False).returncode != 0  # nothing stored


def test_pull_policy_never_shows_err_image_never_pull(served):
    create(served, "never", {"containers": [{"name": "c", "image": BAD, "imagePullPolicy": "Never"}]})
    assert until(lambda: status_column(served, "never") == ["0/1", "ErrImageNeverPull"]), status_column(served, "never")


def test_a_missing_configmap_key_then_the_configmap_created(served, api):
    env = [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "later", "key": "mode"}}}]
    create(served, "needs-cm", {"containers": [{"name": "c", "image": "nginx", "env": env}]})
    assert until(lambda: status_column(served, "needs-cm") == ["0/1", "CreateContainerConfigError"])
    (cs,) = api.read_namespaced_pod("needs-cm", "default").status.container_statuses
    assert cs.state.waiting.message == 'configmap "later" not found'
    described = served.kubectl("describe", "pod", "needs-cm").stdout
    assert re.search(r'Warning\s+Failed\s+.*Error: configmap "later" not found', described)
    served.kubectl("create", "configmap", "later", "--from-literal=mode=fast")
    assert until(lambda: status_column(served, "needs-cm") == ["1/1", "Running"]), status_column(served, "needs-cm")


def test_a_subpath_expr_expanding_to_an_absolute_path_is_a_config_error(served, api):
    container = {
        "name": "c",
        "image": "nginx",
        "env": [{"name": "WHERE", "value": "/etc"}],
        "volumeMounts": [{"name": "v", "mountPath": "/data", "subPathExpr": "$(WHERE)"}],
    }
    create(served, "abs-sub", {"containers": [container], "volumes": [{"name": "v", "emptyDir": {}}]})
    assert until(lambda: status_column(served, "abs-sub") == ["0/1", "CreateContainerConfigError"])
    (cs,) = api.read_namespaced_pod("abs-sub", "default").status.container_statuses
    assert cs.state.waiting.message == "error SubPath `/etc` must not be an absolute path"


def test_a_readiness_gate_keeps_the_pod_out_of_the_endpointslice_until_patched(served, api):
    spec = {
        "readinessGates": [{"conditionType": "example.com/lb-ready"}],
        "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}],
    }
    create(served, "gated", spec, labels={"app": "gated"})
    served.kubectl("create", "service", "clusterip", "gated", "--tcp=80:80")
    served.kubectl("label", "service", "gated", "app=gated", "--overwrite")
    served.kubectl("set", "selector", "service", "gated", "app=gated")

    def endpoints():
        out = served.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=gated", "-o", "json").stdout
        items = json.loads(out)["items"]
        return [(e["targetRef"]["name"], e["conditions"].get("ready")) for s in items for e in s.get("endpoints") or ()]

    assert until(lambda: endpoints() == [("gated", False)]), endpoints()
    ready = next(c for c in api.read_namespaced_pod("gated", "default").status.conditions if c.type == "Ready")
    assert (ready.status, ready.reason) == ("False", "ReadinessGatesNotReady")
    assert ready.message == 'corresponding condition of pod readiness gate "example.com/lb-ready" does not exist.'
    assert until(lambda: status_column(served, "gated") == ["1/1", "Running"])
    gates = served.kubectl("get", "pod", "gated", "-o", "wide", "--no-headers").stdout.split()
    assert gates[-1] == "0/1"  # READINESS GATES column

    patch = {"status": {"conditions": [{"type": "example.com/lb-ready", "status": "True"}]}}
    served.kubectl("patch", "pod", "gated", "--subresource=status", "--type=strategic", "-p", json.dumps(patch))
    assert until(lambda: endpoints() == [("gated", True)]), endpoints()
    pod = api.read_namespaced_pod("gated", "default")
    ready = next(c for c in pod.status.conditions if c.type == "Ready")
    assert ready.status == "True"
    assert any(c.type == "example.com/lb-ready" and c.status == "True" for c in pod.status.conditions)
