"""``kubemu serve --runtime ray``: the same API in front of the Ray runtime (the components
in actors, writes through the apiserver actor), checked with the Python client."""

import os
import time

import pytest
from kubernetes import client, config
from servedcluster import Served

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def on_ray(tmp_path_factory):
    env_had = os.environ.pop("RAY_ADDRESS", None)  # its own embedded Ray, not the suite's
    s = Served(tmp_path_factory.mktemp("serve-ray"), nodes=4, extra=("--runtime", "ray"))
    yield s
    s.stop()
    if env_had is not None:
        os.environ["RAY_ADDRESS"] = env_had


def test_nodes_register_and_a_pod_is_scheduled_run_and_deleted_through_the_actors(on_ray):
    config.load_kube_config(config_file=str(on_ray.kubeconfig))
    api = client.CoreV1Api()
    assert sorted(n.metadata.name for n in api.list_node().items) == ["node-0", "node-1", "node-2", "node-3"]
    spec = client.V1PodSpec(containers=[client.V1Container(name="c", image="x")])
    api.create_namespaced_pod("default", client.V1Pod(metadata=client.V1ObjectMeta(name="on-ray"), spec=spec))
    deadline = time.time() + 30
    while time.time() < deadline and api.read_namespaced_pod("on-ray", "default").status.phase != "Running":
        time.sleep(0.2)
    got = api.read_namespaced_pod("on-ray", "default")
    assert got.status.phase == "Running" and got.spec.node_name.startswith("node-")
    api.delete_namespaced_pod("on-ray", "default")
    deadline = time.time() + 30
    while time.time() < deadline and any(p.metadata.name == "on-ray" for p in api.list_namespaced_pod("default").items):
        time.sleep(0.2)
    assert not any(p.metadata.name == "on-ray" for p in api.list_namespaced_pod("default").items)


def test_kubectl_exec_and_the_pod_proxy_reach_the_kubelet_in_its_host_actor(on_ray):
    on_ray.kubectl("run", "exec-on-ray", "--image=httpd", "--port=80")
    on_ray.kubectl("wait", "--for=condition=Ready", "pod/exec-on-ray", "--timeout=60s")
    ran = on_ray.kubectl("exec", "exec-on-ray", "--", "sh", "-c", "echo hi; exit 3", check=False)
    assert (ran.returncode, ran.stdout) == (3, "hi\n")
    served = on_ray.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/exec-on-ray/proxy/index.html")
    assert served.stdout == "<html><body><h1>It works!</h1></body></html>\n"
