"""SchedulingResult through ``kubemu serve``: kubectl get/describe/explain (1.33, and 1.27
over OpenAPI v2), the read-only refusal, ``kubemu explain pod`` over the kubeconfig, the
Python client, and deletion with the pod."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest
from servedcluster import ROOT, kubectl_binary, until

BIG = """apiVersion: v1
kind: Pod
metadata: {name: too-big}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "64"}}}]
"""
PICKY = """apiVersion: v1
kind: Pod
metadata: {name: picky}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: c, image: x}]
"""
MESSAGE_BIG = "0/3 nodes are available: 3 Insufficient cpu."


@pytest.fixture(scope="module")
def explained(served):
    served.kubectl("apply", "-f", "-", input=BIG)
    served.kubectl("apply", "-f", "-", input=PICKY)
    found = until(lambda: served.kubectl("get", "schedulingresults", "-o", "name", check=False).stdout.split(), 20)
    assert sorted(found) == ["schedulingresult.kubemu.io/picky", "schedulingresult.kubemu.io/too-big"]
    return served


def test_get_schedulingresults_prints_the_table(explained):
    out = explained.kubectl("get", "schedulingresults").stdout.splitlines()
    assert out[0].split() == ["NAME", "ATTEMPTS", "RESULT", "NODE", "REASON", "AGE"]
    rows = {line.split()[0]: line for line in out[1:]}
    assert rows["too-big"].split()[1:4] == ["1", "Unschedulable", "<none>"]
    assert MESSAGE_BIG in rows["too-big"]
    assert "3 node(s) didn't match Pod's node affinity/selector" in rows["picky"]
    short = explained.kubectl("get", "sr", "too-big", "-o", "wide").stdout.splitlines()
    assert short[0].split()[-3:] == ["SCHEDULER", "LAST", "ATTEMPT"]
    assert "default-scheduler" in short[1]


def test_describe_schedulingresult_shows_per_plugin_reasons(explained):
    out = explained.kubectl("describe", "schedulingresult", "too-big").stdout
    assert "Kind:         SchedulingResult" in out
    assert "Plugin:    NodeResourcesFit" in out or "Plugin:  NodeResourcesFit" in out
    assert "Insufficient cpu" in out and "Count:" in out


def test_the_kind_is_read_only_for_clients(explained):
    obj = json.loads(explained.kubectl("get", "sr", "too-big", "-o", "json").stdout)
    obj["metadata"] = {"name": "forged", "namespace": "default"}
    created = explained.kubectl("create", "-f", "-", input=json.dumps(obj), check=False)
    assert created.returncode != 0
    assert "MethodNotAllowed" in created.stderr and "the server does not allow this method" in created.stderr
    deleted = explained.kubectl("delete", "sr", "too-big", check=False)
    assert deleted.returncode != 0 and "MethodNotAllowed" in deleted.stderr
    patched = explained.kubectl("label", "sr", "too-big", "a=b", check=False)
    assert patched.returncode != 0 and "MethodNotAllowed" in patched.stderr
    assert (
        explained.kubectl("get", "sr", "too-big", "-o", "name").stdout.strip() == "schedulingresult.kubemu.io/too-big"
    )


def test_discovery_lists_the_kind(explained):
    out = explained.kubectl("api-resources", "--api-group=kubemu.io").stdout
    line = next(line for line in out.splitlines() if line.startswith("schedulingresults"))
    assert line.split() == ["schedulingresults", "sr", "kubemu.io/v1alpha1", "true", "SchedulingResult"]


def test_kubectl_explain_walks_the_kinds_schema(explained):
    out = explained.kubectl("explain", "schedulingresults").stdout
    assert "KIND:       SchedulingResult" in out and "written by the" in out
    assert "status\t<SchedulingResultStatus>" in out
    status = explained.kubectl("explain", "schedulingresults.status").stdout
    assert "history\t<[]SchedulingAttempt>" in status and "attempts\t<integer>" in status
    deep = explained.kubectl("explain", "sr.status.history.ranking.byPlugin").stdout
    assert "FIELD: byPlugin <map[string]integer>" in deep and "The weighted score of each Score plugin." in deep
    missing = explained.kubectl("explain", "sr.status.bogus", check=False)
    assert missing.returncode != 0 and 'field "bogus" does not exist' in missing.stderr


def kubectl_127(served, *args: str) -> subprocess.CompletedProcess:
    path = kubectl_binary("1.27")
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
    cache = tempfile.mkdtemp(dir=served.kubeconfig.parent)  # an empty discovery cache
    return subprocess.run([path, "--cache-dir", cache, *args], env=env, capture_output=True, text=True, timeout=60)


def test_kubectl_127_gets_describes_and_explains_it(explained):
    got = kubectl_127(explained, "get", "sr")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].split() == ["NAME", "ATTEMPTS", "RESULT", "NODE", "REASON", "AGE"]
    assert any(line.split()[:3] == ["too-big", "1", "Unschedulable"] for line in lines[1:])
    described = kubectl_127(explained, "describe", "sr", "too-big")
    assert described.returncode == 0 and "Reason:  Insufficient cpu" in described.stdout
    walked = kubectl_127(explained, "explain", "sr.status")
    assert walked.returncode == 0, walked.stderr
    assert "history\t<[]SchedulingAttempt>" in walked.stdout and "lastAttemptTime\t<string>" in walked.stdout
    v2 = kubectl_127(explained, "explain", "sr.status.history", "--output=plaintext-openapiv2")
    assert v2.returncode == 0, v2.stderr
    assert "RESOURCE: history <[]Object>" in v2.stdout and "filters\t<[]Object>" in v2.stdout
    refused = kubectl_127(explained, "delete", "sr", "too-big")
    assert refused.returncode != 0 and "MethodNotAllowed" in refused.stderr


def _explain(served, *args):
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
    return subprocess.run(
        [sys.executable, "-m", "actors.harness.cli", "explain", "pod", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_kubemu_explain_pod_reads_the_served_result(explained):
    done = _explain(explained, "default/too-big")
    assert done.returncode == 0, done.stderr
    assert MESSAGE_BIG in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("NodeResourcesFit"))
    assert row.split()[:4] == ["NodeResourcesFit", "Insufficient", "cpu", "3"]
    missing = _explain(explained, "default/nobody")
    assert missing.returncode == 1 and "pod default/nobody: no SchedulingResult" in missing.stderr


def test_the_python_client_reads_it(explained):
    kubernetes = pytest.importorskip("kubernetes")
    client = kubernetes.config.new_client_from_config(config_file=str(explained.kubeconfig))
    api = kubernetes.client.CustomObjectsApi(client)
    obj = api.get_namespaced_custom_object("kubemu.io", "v1alpha1", "default", "schedulingresults", "picky")
    assert obj["status"]["result"] == "Unschedulable"
    filters = obj["status"]["history"][-1]["filters"]
    assert [(f["plugin"], f["rejected"]) for f in filters] == [("NodeAffinity", 3)]
    listed = api.list_namespaced_custom_object("kubemu.io", "v1alpha1", "default", "schedulingresults")
    assert {i["metadata"]["name"] for i in listed["items"]} >= {"picky", "too-big"}


def test_the_result_goes_with_its_pod(explained):
    explained.kubectl("delete", "pod", "picky", "--wait=false")
    gone = until(lambda: explained.kubectl("get", "sr", "picky", check=False).returncode != 0, 30)
    assert gone
