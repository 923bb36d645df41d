"""Probes through ``kubemu serve``: the real kubectl shows a pod whose readiness probe fails
as READY 0/1 with ``Unhealthy`` events in ``kubectl describe``; a liveness failure restarts
the container; the official Python client reads the container's ready and started flags;
a bad probe annotation is refused with the annotation named."""

import json
import re

import pytest
from kubernetes import client, config
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl


@pytest.fixture(scope="module")
def api(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.CoreV1Api()


def pod(name, probes, **annotations):
    ann = {f"kubemu.io/{k}": str(v) for k, v in annotations.items()}
    container = {"name": "web", "image": "nginx", **probes}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "annotations": ann},
            "spec": {"containers": [container]},
        }
    )


READINESS = {"readinessProbe": {"httpGet": {"path": "/ready", "port": 80}, "periodSeconds": 1}}


def test_a_failing_readiness_probe_shows_not_ready_with_unhealthy_events(served, api):
    served.kubectl("create", "-f", "-", input=pod("unready", READINESS, readiness="fail"))

    def row():
        out = served.kubectl("get", "pod", "unready", "--no-headers", check=False).stdout.split()
        return out if out[1:3] == ["0/1", "Running"] else None

    assert until(row), served.kubectl("get", "pod", "unready", check=False).stdout
    described = until(
        lambda: (lambda out: out if "Unhealthy" in out else None)(served.kubectl("describe", "pod", "unready").stdout)
    )
    assert described, "no Unhealthy event in kubectl describe"
    assert "Readiness probe failed: HTTP probe failed with statuscode: 500" in described
    assert re.search(r"Warning\s+Unhealthy\s", described)
    assert re.search(r"\n\s+ContainersReady\s+False\s*\n", described)

    status = api.read_namespaced_pod("unready", "default").status
    (cs,) = status.container_statuses
    assert (cs.ready, cs.started, cs.restart_count) == (False, True, 0)
    ready = next(c for c in status.conditions if c.type == "Ready")
    assert (ready.status, ready.reason, ready.message) == (
        "False",
        "ContainersNotReady",
        "containers with unready status: [web]",
    )


def test_a_passing_readiness_probe_shows_ready(served):
    served.kubectl("create", "-f", "-", input=pod("ready", READINESS, readiness="pass-after=2s"))

    def ready():
        return (
            served.kubectl("get", "pod", "ready", "-o", "jsonpath={.status.containerStatuses[0].ready}").stdout
            == "true"
        )

    assert until(ready, 30)


def test_a_failing_liveness_probe_restarts_the_container(served):
    liveness = {"livenessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 1, "failureThreshold": 2}}
    served.kubectl("create", "-f", "-", input=pod("dying", liveness, liveness="fail"))

    def killed():
        events = served.kubectl(
            "get", "events", "--field-selector", "involvedObject.name=dying,reason=Killing", "-o", "json"
        ).stdout
        return [e["message"] for e in json.loads(events)["items"]]

    assert until(killed, 30) == ["Container web failed liveness probe, will be restarted"]
    restarts = served.kubectl("get", "pod", "dying", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")
    assert int(restarts.stdout) >= 1


def test_a_bad_probe_annotation_is_refused(served):
    proc = served.kubectl("create", "-f", "-", input=pod("bad", READINESS, readiness="sometimes"), check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        'The Pod "bad" is invalid: metadata.annotations[kubemu.io/readiness]: Invalid value: "sometimes": is not a probe outcome'
    )
    assert "not found" in served.kubectl("get", "pod", "bad", check=False).stderr
