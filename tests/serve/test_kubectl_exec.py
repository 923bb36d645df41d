"""``kubectl exec`` and the pod proxy against ``kubemu serve``: the real kubectl 1.33 (over
WebSocket) runs emulated commands and exits with their code; moving an httpd pod's
index.html away makes it unready at its next probe and moving it back ready (what
upstream's StatefulSet conformance tests do); the Python client's ``stream`` reads stdout
and the exit code; the pod proxy answers agnhost ``serve-hostname`` with the pod's name;
kubectl 1.29 (SPDY only) is refused with one line saying why."""

import json
import os
import subprocess

import pytest
from kubernetes import client, config
from kubernetes.stream import stream
from servedcluster import kubectl_binary, needs_kubectl, until

pytestmark = needs_kubectl

HTTPD = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.43"
PROBE = {"httpGet": {"path": "/index.html", "port": 80}, "periodSeconds": 1, "failureThreshold": 1}


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


@pytest.fixture(scope="module")
def pods(served):
    web = {"name": "httpd", "image": HTTPD, "readinessProbe": PROBE}
    host = {"name": "a", "image": AGNHOST, "args": ["serve-hostname"], "ports": [{"containerPort": 9376}]}
    for name, c in (("web", web), ("host", host)):
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [c]}}
        served.kubectl("create", "-f", "-", input=json.dumps(manifest))
    for name in ("web", "host"):
        assert until(lambda n=name: ready(served, n) == "true"), served.kubectl("get", "pods").stdout
    return served


def ready(served, name):
    path = "jsonpath={.status.containerStatuses[0].ready}"
    return served.kubectl("get", "pod", name, "-o", path, check=False).stdout


def test_kubectl_exec_prints_the_output_and_exits_with_the_code(pods):
    out = pods.kubectl("exec", "web", "--", "sh", "-c", "echo hi; exit 3", check=False)
    assert (out.returncode, out.stdout, out.stderr) == (3, "hi\n", "command terminated with exit code 3\n")
    out = pods.kubectl("exec", "web", "--", "frobnicate", check=False)
    assert (out.returncode, out.stderr.splitlines()) == (
        127,
        ['exec: "frobnicate": executable file not found in $PATH', "command terminated with exit code 127"],
    )
    assert pods.kubectl("exec", "web", "--", "cat", "/etc/hostname").stdout == "web\n"


def test_moving_index_html_away_and_back_flips_ready(pods):
    docroot = "/usr/local/apache2/htdocs"
    out = pods.kubectl("exec", "web", "--", "/bin/sh", "-x", "-c", f"mv -v {docroot}/index.html /tmp/ || true")
    assert out.stdout == f"renamed '{docroot}/index.html' -> '/tmp/index.html'\n"
    assert out.stderr == f"+ mv -v {docroot}/index.html /tmp/\n"
    assert until(lambda: ready(pods, "web") == "false")
    out = pods.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/web/proxy/index.html", check=False)
    assert out.returncode != 0 and "NotFound" in out.stderr
    pods.kubectl("exec", "web", "--", "/bin/sh", "-x", "-c", f"mv -v /tmp/index.html {docroot}/ || true")
    assert until(lambda: ready(pods, "web") == "true")
    body = pods.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/web/proxy/").stdout
    assert body == "<html><body><h1>It works!</h1></body></html>\n"


def test_the_python_client_streams_an_exec(pods, api):
    out = stream(
        api.connect_get_namespaced_pod_exec,
        "web",
        "default",
        command=["sh", "-c", "echo out; echo err >&2; exit 4"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    out.run_forever(timeout=10)
    assert (out.read_stdout(), out.read_stderr(), out.returncode) == ("out\n", "err\n", 4)


def test_the_pod_proxy_answers_serve_hostname_with_the_pod_name(pods, api):
    assert pods.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/host/proxy/").stdout == "host"
    assert api.connect_get_namespaced_pod_proxy_with_path("host:9376", "default", "x") == "host"


def test_kubectl_1_29_speaks_spdy_only_and_is_refused_with_one_line(pods):
    env = {**os.environ, "KUBECONFIG": str(pods.kubeconfig), "KUBECACHEDIR": str(pods.cache)}
    argv = [kubectl_binary("1.29"), "exec", "web", "--", "true"]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr == (
        "Error from server: kubemu emulates containers: exec is served over WebSocket (v5.channel.k8s.io or "
        "v4.channel.k8s.io: kubectl 1.30 or newer), not SPDY (pod default/web, container httpd)\n"
    )
