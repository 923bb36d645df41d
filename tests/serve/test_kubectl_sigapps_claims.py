"""The real kubectl against ``kubemu serve``: what the sig-apps conformance tests check of
ownership and failure reporting. A Job re-adopts an orphaned pod and releases one whose
labels stop matching; a DaemonSet's ControllerRevisions carry its pods' hash label; a
ReplicationController refused by a pod quota shows ``ReplicaFailure`` until scaled to fit."""

import json

from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: sleeper, namespace: default}
spec:
  parallelism: 1
  completions: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: [sleep, "300"]}]
"""

DS = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: claims-agent, namespace: default}
spec:
  selector: {matchLabels: {app: claims-agent}}
  template:
    metadata: {labels: {app: claims-agent}}
    spec:
      containers: [{name: c, image: "fluentd:1"}]
"""

QUOTA_NS = """
apiVersion: v1
kind: Namespace
metadata: {name: rcquota}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: two-pods, namespace: rcquota}
spec: {hard: {pods: "2"}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: rcquota}
spec:
  replicas: 3
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: c, image: busybox}]
"""


def get(served, *args) -> dict:
    return json.loads(served.kubectl("get", *args, "-o", "json").stdout)


def controller(pod: dict) -> str | None:
    return next((r["name"] for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)


def test_a_job_readopts_an_orphaned_pod_and_releases_an_unlabelled_one(served):
    served.kubectl("apply", "-f", "-", input=JOB)
    pods = until(lambda: get(served, "pods", "-l", "job-name=sleeper")["items"])
    name = pods[0]["metadata"]["name"]
    served.kubectl("patch", "pod", name, "--type=json", "-p", '[{"op":"remove","path":"/metadata/ownerReferences"}]')
    assert until(lambda: controller(get(served, "pod", name)) == "sleeper")
    served.kubectl("label", "pod", name, "batch.kubernetes.io/controller-uid-", "controller-uid-")
    assert until(lambda: controller(get(served, "pod", name)) is None)
    assert get(served, "job", "sleeper")["status"].get("failed", 0) == 0  # released, not failed
    assert get(served, "pod", name)["metadata"]["annotations"]["kubemu.io/run-seconds"] == "300"


def test_daemonset_revisions_carry_the_pods_hash_label(served):
    served.kubectl("apply", "-f", "-", input=DS)
    revs = until(lambda: get(served, "controllerrevisions", "-l", "app=claims-agent")["items"])
    pods = until(lambda: get(served, "pods", "-l", "app=claims-agent")["items"])
    (rev,) = revs
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {
        rev["metadata"]["labels"]["controller-revision-hash"]
    }
    assert rev["data"]["spec"]["template"]["metadata"] == {"creationTimestamp": None, "labels": {"app": "claims-agent"}}


def test_an_rc_over_its_pod_quota_shows_replica_failure_until_scaled_to_fit(served):
    served.kubectl("apply", "-f", "-", input=QUOTA_NS)

    def failure() -> dict | None:
        conds = get(served, "rc", "legacy", "-n", "rcquota")["status"].get("conditions") or ()
        return next((c for c in conds if c["type"] == "ReplicaFailure"), None)

    cond = until(failure)
    assert (cond["status"], cond["reason"]) == ("True", "FailedCreate")
    assert "exceeded quota: two-pods" in cond["message"]
    served.kubectl("scale", "rc", "legacy", "-n", "rcquota", "--replicas=2")
    assert until(lambda: failure() is None)
