"""``kubemu serve --schedulers default-scheduler,yunikorn``: YuniKorn mode behind the API,
configured as a user would (a Namespace and the ``yunikorn-configs`` ConfigMap through
kubectl), read back through YuniKorn's REST API and ``/metrics`` with the kubeconfig's token."""

import json
import ssl
import urllib.error
import urllib.request

import pytest
from servedcluster import Served, needs_kubectl, until

from actors.harness.cli import main

CONFIG = """
apiVersion: v1
kind: Namespace
metadata: {name: yunikorn}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: yunikorn-configs, namespace: yunikorn}
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            submitacl: '*'
            queues:
              - name: a
                resources:
                  guaranteed: {vcore: 1}
              - name: b
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: in-a, labels: {queue: root.a}}
spec:
  schedulerName: yunikorn
  containers: [{name: c, image: x, resources: {requests: {cpu: 250m}}}]
"""
CPU_MILLIS = 250


@pytest.fixture(scope="module")
def yk(tmp_path_factory):
    s = Served(
        tmp_path_factory.mktemp("serve-yunikorn"),
        nodes=3,
        extra=("--schedulers", "default-scheduler,yunikorn", "--runtime", "local"),
    )
    yield s
    s.stop()


def get(served: Served, path: str) -> tuple[int, bytes]:
    """GET ``path`` as a REST client would: the bearer token, the self-signed certificate."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    req = urllib.request.Request(
        f"https://127.0.0.1:{served.port}{path}", headers={"Authorization": f"Bearer {served.token}"}
    )
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def find(queue: dict, path: str) -> dict | None:
    if queue.get("queuename") == path:
        return queue
    for child in queue.get("children") or ():
        hit = find(child, path)
        if hit is not None:
            return hit
    return None


@needs_kubectl
def test_a_pod_in_a_configured_queue_shows_in_the_rest_api_and_the_metrics(yk):
    yk.kubectl("apply", "-f", "-", input=CONFIG)
    # The ConfigMap reloads the queues: root.a exists once YuniKorn mode has read it.
    assert until(lambda: get(yk, "/ws/v1/partition/default/queue/root.a")[0] == 200, 30), get(
        yk, "/ws/v1/partition/default/queues"
    )
    yk.kubectl("apply", "-f", "-", input=POD)
    phase = lambda: yk.kubectl("get", "pod", "in-a", "-o", "jsonpath={.status.phase}").stdout  # noqa: E731
    assert until(lambda: phase() == "Running", 30), yk.kubectl("describe", "pod", "in-a").stdout

    code, body = get(yk, "/ws/v1/partition/default/queues")
    assert code == 200
    root = json.loads(body)
    a = find(root, "root.a")
    assert a is not None, root
    assert a["allocatedResource"].get("vcore") == CPU_MILLIS, a
    assert a["guaranteedResource"].get("vcore") == 1000, a

    code, body = get(yk, "/ws/v1/partition/default/queue/root.a/applications")
    assert code == 200 and len(json.loads(body)) == 1

    code, body = get(yk, "/metrics")
    assert code == 200
    text = body.decode()
    lines = [ln for ln in text.splitlines() if ln.startswith("yunikorn_queue_resource{") and 'queue="root.a"' in ln]
    assert any('resource="vcore"' in ln and 'state="allocated"' in ln for ln in lines), lines
    allocated = [ln for ln in lines if 'resource="vcore"' in ln and 'state="allocated"' in ln]
    assert float(allocated[0].split()[-1]) == CPU_MILLIS


def test_an_unknown_scheduler_is_one_line_and_exit_2(capsys, tmp_path):
    argv = ["serve", "--schedulers", "default-scheduler,volcano", "--kubeconfig", str(tmp_path / "k")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "kubemu: --schedulers: 'volcano' is not one of default-scheduler, yunikorn"
    )
    assert not (tmp_path / "k").exists()


def test_an_empty_scheduler_list_is_refused(capsys, tmp_path):
    assert main(["serve", "--schedulers", ",", "--kubeconfig", str(tmp_path / "k")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kubemu: --schedulers: ") and "\n" not in err
    assert not (tmp_path / "k").exists()
