"""The real kubectl (1.33) updating a DaemonSet on a ``kubemu serve`` process: the
defaulted update strategy, ``set image``, ``rollout status|history|undo`` and
``rollout restart``, and the ControllerRevisions and pod labels behind them; the Python
client reads the same revisions."""

import json

from kubernetes import client, config
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

DS = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "fluentd:1"}]
"""


def rolled_out(served) -> str:
    return served.kubectl("rollout", "status", "ds/agent", "--timeout=40s").stdout.strip()


def pod_images(served) -> list[str]:
    items = json.loads(served.kubectl("get", "pods", "-l", "app=agent", "-o", "json").stdout)["items"]
    return sorted(p["spec"]["containers"][0]["image"] for p in items if not p["metadata"].get("deletionTimestamp"))


def test_set_image_rollout_status_history_and_undo(served):
    served.kubectl("apply", "-f", "-", input=DS)
    spec = json.loads(served.kubectl("get", "ds", "agent", "-o", "json").stdout)["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10
    assert rolled_out(served).endswith('daemon set "agent" successfully rolled out')
    nodes = len(pod_images(served))
    assert nodes > 0

    served.kubectl("set", "image", "ds/agent", "agent=fluentd:2")
    assert rolled_out(served).endswith('daemon set "agent" successfully rolled out')
    assert until(lambda: pod_images(served) == ["fluentd:2"] * nodes)
    history = served.kubectl("rollout", "history", "ds/agent").stdout.split()
    assert history[-4:] == ["1", "<none>", "2", "<none>"]
    detail = served.kubectl("rollout", "history", "ds/agent", "--revision=1").stdout
    assert "fluentd:1" in detail

    api = client.AppsV1Api(config.new_client_from_config(config_file=str(served.kubeconfig)))
    revs = api.list_namespaced_controller_revision("default").items
    owned = sorted(
        (r.revision, r.metadata.owner_references[0].kind) for r in revs if r.metadata.name.startswith("agent-")
    )
    assert owned == [(1, "DaemonSet"), (2, "DaemonSet")]
    pods = json.loads(served.kubectl("get", "pods", "-l", "app=agent", "-o", "json").stdout)["items"]
    newest = max(revs, key=lambda r: r.revision).metadata.name
    assert {f"agent-{p['metadata']['labels']['controller-revision-hash']}" for p in pods} == {newest}

    assert served.kubectl("rollout", "undo", "ds/agent").stdout.strip() == "daemonset.apps/agent rolled back"
    assert rolled_out(served).endswith('daemon set "agent" successfully rolled out')
    assert until(lambda: pod_images(served) == ["fluentd:1"] * nodes)
    # Undo renumbers revision 1 as 3.
    history = served.kubectl("rollout", "history", "ds/agent").stdout.split()
    assert history[-4:] == ["2", "<none>", "3", "<none>"]
    missing = served.kubectl("rollout", "undo", "ds/agent", "--to-revision=9", check=False)
    assert missing.returncode == 1 and "unable to find specified revision 9 in history" in missing.stderr


def test_on_delete_is_refused_by_rollout_status_and_restart_rolls(served):
    served.kubectl("apply", "-f", "-", input=DS.replace("name: agent,", "name: od,").replace("agent", "od"))
    served.kubectl("patch", "ds/od", "-p", '{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}')
    status = served.kubectl("rollout", "status", "ds/od", check=False)
    assert (
        status.returncode == 1 and "rollout status is only available for RollingUpdate strategy type" in status.stderr
    )
    served.kubectl("patch", "ds/od", "-p", '{"spec":{"updateStrategy":{"type":"RollingUpdate"}}}')
    served.kubectl("rollout", "restart", "ds/od")
    out = served.kubectl("rollout", "status", "ds/od", "--timeout=40s").stdout.strip()
    assert out.endswith('daemon set "od" successfully rolled out')
    pods = json.loads(served.kubectl("get", "pods", "-l", "app=od", "-o", "json").stdout)["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert live and all("kubectl.kubernetes.io/restartedAt" in p["metadata"]["annotations"] for p in live)
