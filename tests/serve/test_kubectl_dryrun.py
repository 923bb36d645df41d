"""kubectl's server-side dry runs against ``kubemu serve``: ``diff``, ``apply``, ``delete``,
``scale`` and ``create`` with ``--dry-run=server`` print what they would do and change
nothing: the objects, their resourceVersions and the pods a ReplicaSet owns stay as they
were (the issue a user found: ``kubectl diff`` scaled a ReplicaSet for real)."""

import json

from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

REPLICASET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api}
spec:
  replicas: %d
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""
CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: keep}
data: {mode: %s}
"""


def snapshot(served):
    """Every object a dry run could touch, with its resourceVersion."""
    got = json.loads(served.kubectl("get", "rs,cm,pods", "-o", "json").stdout)
    return sorted((o["kind"], o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in got["items"])


def pods(served):
    return served.kubectl("get", "pods", "-l", "app=api", "--no-headers").stdout.splitlines()


def test_server_dry_runs_print_what_they_would_do_and_change_nothing(served):
    served.kubectl("apply", "-f", "-", input=REPLICASET % 2)
    served.kubectl("apply", "-f", "-", input=CONFIGMAP % "fast")
    assert len(until(lambda: [ln for ln in pods(served) if " Running " in ln] if len(pods(served)) == 2 else [])) == 2
    before = snapshot(served)

    diff = served.kubectl("diff", "-f", "-", input=REPLICASET % 5, check=False)
    assert diff.returncode == 1, diff.stderr  # 1: there are differences
    assert "-  replicas: 2" in diff.stdout and "+  replicas: 5" in diff.stdout

    out = served.kubectl("apply", "--dry-run=server", "-f", "-", input=REPLICASET % 7).stdout
    assert out.strip() == "replicaset.apps/api configured (server dry run)"
    out = served.kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=CONFIGMAP % "slow").stdout
    assert out.strip() == "configmap/keep serverside-applied (server dry run)"
    out = served.kubectl("scale", "rs", "api", "--replicas=9", "--dry-run=server").stdout
    assert out.strip() == "replicaset.apps/api scaled (server dry run)"
    out = served.kubectl("delete", "cm", "keep", "--dry-run=server").stdout
    assert out.strip() == 'configmap "keep" deleted (server dry run)'
    out = served.kubectl("delete", "rs", "api", "--dry-run=server").stdout
    assert out.strip() == 'replicaset.apps "api" deleted (server dry run)'
    out = served.kubectl("create", "configmap", "other", "--from-literal=a=b", "--dry-run=server").stdout
    assert out.strip() == "configmap/other created (server dry run)"

    assert snapshot(served) == before
    assert len(pods(served)) == 2
    assert served.kubectl("get", "cm", "keep", "-o", "jsonpath={.data.mode}").stdout == "fast"
    assert served.kubectl("get", "cm", "other", check=False).returncode == 1

    refused = served.kubectl("delete", "cm", "keep", "--dry-run=bogus", check=False)
    assert refused.returncode != 0 and "bogus" in refused.stderr  # kubectl's own check, before any request
