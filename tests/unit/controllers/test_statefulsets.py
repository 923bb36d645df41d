"""The StatefulSet controller through the local runtime: names, revisions, OnDelete,
failed pods, and the status it reports."""

from localrun import run_objects


def run(spec, timeline=(), duration=120, pod_spec=None):
    template = {
        "metadata": {"labels": {"app": "web"}, "annotations": {"kubemu.io/start-seconds": "2"}},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "c", "image": "nginx:1"}],
            **(pod_spec or {}),
        },
    }
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template, **spec},
    }
    # Held to the end: never more pods than replicas.
    expect = [{"until": duration, "count": {"labelSelector": "app=web"}, "atMost": 2}]
    return run_objects([sts], duration=duration, expect=expect, timeline=timeline, nodes=1)


def image_patch(image):
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "type": "merge",
        "patch": patch,
    }


def pods(report):
    return {p["name"]: p for p in report["pods"]}


def deletes(report):
    return [(e["time"], e["message"]) for e in report["events"] if e["reason"] == "SuccessfulDelete"]


def test_pods_get_their_identity():
    report = run({"serviceName": "web"}, duration=20)
    assert sorted(pods(report)) == ["web-0", "web-1"]
    assert report["passed"], [e for e in report["expectations"] if not e["ok"]]


def test_on_delete_replaces_only_the_pods_someone_deletes():
    report = run(
        {"updateStrategy": {"type": "OnDelete"}},
        timeline=[{"at": "10s", "patch": image_patch("nginx:2")}, {"at": "30s", "delete": {"name": "web-1"}}],
        duration=60,
    )
    assert deletes(report) == []  # the controller deleted nothing for the update
    creates = [(e["time"], e["message"]) for e in report["events"] if e["reason"] == "SuccessfulCreate"]
    assert creates[-1][1] == "create Pod web-1 in StatefulSet web successful" and creates[-1][0] >= 30


def test_a_failed_pod_is_deleted_and_created_again():
    # Bound straight to a node that cannot hold it: the kubelet rejects it (OutOfcpu, Failed).
    too_big = {
        "nodeName": "node-0",
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "64"}}}],
    }
    report = run({"replicas": 1}, pod_spec=too_big, duration=3)
    warnings = [e["message"] for e in report["events"] if e["reason"] == "RecreatingFailedPod"]
    assert warnings and warnings[0] == "StatefulSet default/web is recreating failed Pod web-0"
