"""The real kubectl driving workloads on a ``kubemu serve`` process: rollouts of a
Deployment (create, status, set image, history, undo, pause/resume, restart, scale) as a
user types them, and what kubectl prints back."""

import json

import pytest
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl


def revisions(served) -> dict[str, str]:
    """ReplicaSet name -> its revision annotation."""
    items = json.loads(served.kubectl("get", "rs", "-l", "app=web", "-o", "json").stdout)["items"]
    return {i["metadata"]["name"]: i["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for i in items}


def rolled_out(served, name: str = "web") -> str:
    return served.kubectl("rollout", "status", f"deployment/{name}", "--timeout=40s").stdout.strip()


def test_a_deployment_rolls_out_rolls_back_and_scales(served):
    assert served.kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=3").stdout.strip() == (
        "deployment.apps/web created"
    )
    assert rolled_out(served) == 'deployment "web" successfully rolled out'
    served.kubectl("set", "image", "deployment/web", "nginx=nginx:2")
    assert rolled_out(served).endswith('deployment "web" successfully rolled out')
    history = served.kubectl("rollout", "history", "deployment/web").stdout.split()
    assert history[-4:] == ["1", "<none>", "2", "<none>"]
    first = min(revisions(served), key=lambda n: revisions(served)[n])
    assert served.kubectl("rollout", "undo", "deployment/web").stdout.strip() == "deployment.apps/web rolled back"
    rolled_out(served)
    # Undo reuses revision 1's ReplicaSet, which becomes revision 3.
    assert revisions(served)[first] == "3" and sorted(revisions(served).values()) == ["2", "3"]
    missing = served.kubectl("rollout", "undo", "deployment/web", "--to-revision=9", check=False)
    assert missing.returncode == 1 and "unable to find specified revision 9 in history" in missing.stderr
    served.kubectl("scale", "deployment/web", "--replicas=5")
    rows = until(lambda: [r for r in served.kubectl("get", "deploy", "web").stdout.splitlines() if " 5/5 " in r])
    assert rows and rows[0].split()[:4] == ["web", "5/5", "5", "5"]


def test_pause_resume_and_restart(served):
    served.kubectl("create", "deployment", "api", "--image=nginx:1", "--replicas=2")
    rolled_out(served, "api")
    served.kubectl("rollout", "pause", "deployment/api")
    served.kubectl("set", "image", "deployment/api", "nginx=nginx:2")
    paused = json.loads(served.kubectl("get", "deploy", "api", "-o", "json").stdout)
    cond = until(lambda: _progressing(served, "api").get("reason") == "DeploymentPaused")
    assert cond and paused["spec"]["paused"] is True
    assert len(json.loads(served.kubectl("get", "rs", "-l", "app=api", "-o", "json").stdout)["items"]) == 1
    served.kubectl("rollout", "resume", "deployment/api")
    assert rolled_out(served, "api").endswith('deployment "api" successfully rolled out')
    served.kubectl("rollout", "restart", "deployment/api")
    rolled_out(served, "api")
    rs = json.loads(served.kubectl("get", "rs", "-l", "app=api", "-o", "json").stdout)["items"]
    assert sorted(r["spec"]["replicas"] for r in rs) == [0, 0, 2]


def _progressing(served, name: str) -> dict:
    status = json.loads(served.kubectl("get", "deploy", name, "-o", "json").stdout).get("status") or {}
    return next((c for c in status.get("conditions") or () if c["type"] == "Progressing"), {})


@pytest.mark.parametrize(
    "manifest, message",
    [
        (
            "spec: {replicas: 1, selector: {matchLabels: {app: x}}, strategy: {rollingUpdate: {maxSurge: 0, "
            "maxUnavailable: 0}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: x}]}}}",
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
        ),
        (
            "spec: {selector: {matchLabels: {app: api}}, template: {metadata: {labels: {app: web}}, "
            "spec: {containers: [{name: c, image: x}]}}}",
            "`selector` does not match template `labels`",
        ),
    ],
)
def test_a_bad_deployment_is_refused_with_upstreams_message(served, manifest, message):
    doc = f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: bad}}\n{manifest}\n"
    refused = served.kubectl("apply", "-f", "-", input=doc, check=False)
    assert refused.returncode == 1 and message in refused.stderr
    assert served.kubectl("get", "deploy", "bad", check=False).returncode == 1


HOG = """
apiVersion: v1
kind: Pod
metadata:
  name: hog
  annotations: {kubemu.io/cpu-usage: "ramp(100m, 900m, 600s)", kubemu.io/memory-usage: 300Mi}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}
"""


def test_top_shows_the_emulated_usage(served):
    served.kubectl("create", "-f", "-", input=HOG)
    rows = until(lambda: [r.split() for r in served.kubectl("top", "pods", check=False).stdout.splitlines()[1:]])
    (name, cpu, memory) = next(r for r in rows if r[0] == "hog")
    assert memory == "300Mi" and 100 <= int(cpu.removesuffix("m")) < 200  # early on the ramp
    nodes = served.kubectl("top", "nodes").stdout.splitlines()
    assert nodes[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert any("300Mi" in line for line in nodes[1:])
    missing = served.kubectl("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/none", check=False)
    assert missing.returncode == 1 and "(NotFound)" in missing.stderr


def test_kubectl_create_job_runs_to_completion(served):
    # No kubemu.io/run-seconds: the pod runs the default 5 emulated seconds, then exits 0.
    assert served.kubectl("create", "job", "pi", "--image=perl").stdout.strip() == "job.batch/pi created"
    waited = served.kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=40s")
    assert waited.stdout.strip() == "job.batch/pi condition met"
    row = served.kubectl("get", "job", "pi").stdout.splitlines()[1].split()
    assert row[:3] == ["pi", "Complete", "1/1"]


def test_kubectl_create_job_from_a_cronjob(served):
    served.kubectl("create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *")
    got = served.kubectl("get", "cronjob", "nightly").stdout.splitlines()[1].split()
    assert got[:7] == ["nightly", "0", "3", "*", "*", "*", "<none>"]
    assert (
        served.kubectl("create", "job", "manual", "--from=cronjob/nightly").stdout.strip() == "job.batch/manual created"
    )
    job = json.loads(served.kubectl("get", "job", "manual", "-o", "json").stdout)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    waited = served.kubectl("wait", "--for=condition=complete", "job/manual", "--timeout=40s")
    assert waited.stdout.strip() == "job.batch/manual condition met"
    bad = served.kubectl("create", "cronjob", "bad", "--image=x", "--schedule=61 * * * *", check=False)
    assert bad.returncode == 1 and "end of range (61) above maximum (59): 61" in bad.stderr


def test_kubectl_autoscale_sends_an_hpa_in_protobuf(served):
    served.kubectl("create", "deployment", "scaled", "--image=nginx", "--replicas=2")
    out = served.kubectl("autoscale", "deployment", "scaled", "--cpu-percent=50", "--min=2", "--max=5").stdout
    assert out.strip() == "horizontalpodautoscaler.autoscaling/scaled autoscaled"
    hpa = json.loads(served.kubectl("get", "hpa", "scaled", "-o", "json").stdout)
    target = hpa["spec"]["metrics"][0]["resource"]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"], target["target"]["averageUtilization"]) == (
        2,
        5,
        50,
    )
    row = until(lambda: [r.split() for r in served.kubectl("get", "hpa", "scaled").stdout.splitlines()[1:]])
    assert row[0][:2] == ["scaled", "Deployment/scaled"]
