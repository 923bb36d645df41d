"""The real kubectl and the Python client against ``kubemu serve``: a container whose
command the emulated shell knows runs it when it starts; its output is what ``kubectl
logs`` shows (asked of the kubelet), its exit code ends the pod as restartPolicy says, and
its termination message is the file it wrote. Init containers that fail hold the pod."""

import json

import pytest
from kubernetes import client, config
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl


def manifest(name, containers, restart="Never", init=None):
    spec = {"restartPolicy": restart, "containers": containers}
    if init:
        spec["initContainers"] = init
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def phase(served, name, want):
    def check():
        return served.kubectl("get", "pod", name, "-o", "jsonpath={.status.phase}", check=False).stdout == want

    assert until(check), f"pod {name} is not {want}"


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def test_a_script_prints_its_env_and_exits_with_its_code(served, api):
    env = [
        {"name": "GREETING", "value": "hello"},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]
    script = "echo $(GREETING) from $POD_NAME; echo -n bye > /dev/termination-log; exit 3"
    c = {"name": "c", "image": "busybox", "command": ["sh", "-c", script], "env": env}
    served.kubectl("create", "-f", "-", input=manifest("script", [c]))
    phase(served, "script", "Failed")
    assert served.kubectl("logs", "script").stdout == "hello from script\n"
    assert api.read_namespaced_pod_log("script", "default") == "hello from script\n"
    got = served.kubectl("get", "pod", "script", "-o", "jsonpath={.status.containerStatuses[0].state.terminated}")
    terminated = json.loads(got.stdout)
    assert (terminated["exitCode"], terminated["reason"], terminated["message"]) == (3, "Error", "bye")


def test_an_unknown_command_runs_until_stopped_and_shows_the_rendered_log(served):
    c = {"name": "c", "image": "nginx", "command": ["nginx", "-g", "daemon off;"]}
    served.kubectl("create", "-f", "-", input=manifest("daemon", [c]))
    phase(served, "daemon", "Running")
    assert served.kubectl("logs", "daemon").stdout.startswith("kubemu: container c started at ")


def test_a_failing_init_container_fails_a_never_restarting_pod(served, api):
    init = [{"name": "init1", "image": "busybox", "command": ["/bin/false"]}]
    app = [{"name": "run1", "image": "busybox", "command": ["/bin/true"]}]
    served.kubectl("create", "-f", "-", input=manifest("initfail", app, init=init))
    phase(served, "initfail", "Failed")
    pod = api.read_namespaced_pod("initfail", "default")
    assert pod.status.init_container_statuses[0].state.terminated.exit_code == 1
    assert pod.status.container_statuses[0].state.waiting.reason == "PodInitializing"
    initialized = next(c for c in pod.status.conditions if c.type == "Initialized")
    assert (initialized.status, initialized.message) == ("False", "containers with incomplete status: [init1]")


def test_a_restarting_container_keeps_its_previous_log(served):
    c = {"name": "c", "image": "busybox", "command": ["sh", "-c", "echo attempt; exit 1"]}
    served.kubectl("create", "-f", "-", input=manifest("again", [c], restart="Always"))

    def restarted():
        got = served.kubectl("get", "pod", "again", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")
        return got.stdout == "1"

    assert until(restarted, 30), "the container did not restart"
    assert served.kubectl("logs", "again", "--previous").stdout == "attempt\n"
