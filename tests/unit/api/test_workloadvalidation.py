"""Workload manifests the apiserver refuses, with upstream's field path and message, and
the defaults it fills in."""

import copy

import pytest

from cluster.api.errors import Invalid
from cluster.apiserver.apiserver import APIServer

POD = {"containers": [{"name": "c", "image": "nginx"}]}


def deploy(**spec) -> dict:
    base = {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": dict(POD)},
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {**base, **spec}}


def rolling(surge, unavailable) -> dict:
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}


def job(**spec) -> dict:
    template = {"spec": {**POD, "restartPolicy": "Never"}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"}, "spec": {"template": template, **spec}}


def sts(**spec) -> dict:
    d = deploy(**spec)
    return {**d, "kind": "StatefulSet"}


def cronjob(name="tick", **spec) -> dict:
    template = {"spec": {"template": {"spec": {**POD, "restartPolicy": "OnFailure"}}}}
    base = {"schedule": "*/5 * * * *", "jobTemplate": template}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": {**base, **spec}}


def hpa(**spec) -> dict:
    base = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {**base, **spec},
    }


BAD = [
    (
        "surge and unavailable both 0",
        deploy(strategy=rolling(0, "0%")),
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0',
    ),
    (
        "selector not matching the template",
        deploy(selector={"matchLabels": {"app": "api"}}),
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`",
    ),
    ("negative replicas", deploy(replicas=-1), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    (
        "a bad percentage",
        deploy(strategy=rolling("25", 1)),
        'spec.strategy.rollingUpdate.maxSurge: Invalid value: "25": '
        "a valid percent string must be a numeric string followed by an ending '%'",
    ),
    (
        "unavailable over 100%",
        deploy(strategy=rolling(1, "120%")),
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
    ),
    (
        "Recreate with rollingUpdate",
        deploy(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ),
    (
        "an unknown strategy",
        deploy(strategy={"type": "BlueGreen"}),
        'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"',
    ),
    (
        "deadline not above minReadySeconds",
        deploy(minReadySeconds=10, progressDeadlineSeconds=10),
        "spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds",
    ),
    ("no selector", deploy(selector=None), "spec.selector: Required value"),
    (
        "an empty selector",
        deploy(selector={}),
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
    ),
    (
        "completions below 0",
        job(completions=-1),
        "spec.completions: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "a Job that restarts Always",
        job(template={"spec": dict(POD)}),
        'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ),
    (
        "Indexed without completions",
        job(completionMode="Indexed", parallelism=2),
        "spec.completions: Required value: when completion mode is Indexed",
    ),
    (
        "a user selector on a Job",
        job(selector={"matchLabels": {"a": "b"}}),
        'spec.selector: Invalid value: {"matchLabels": {"a": "b"}}: `selector` not auto-generated',
    ),
    (
        "a StatefulSet policy",
        sts(podManagementPolicy="Random"),
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
    ),
    (
        "OnDelete with rollingUpdate",
        sts(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}}),
        'spec.updateStrategy.rollingUpdate: Invalid value: {"partition": 1}: '
        "only allowed for updateStrategy 'RollingUpdate'",
    ),
    (
        "a malformed schedule",
        cronjob(schedule="61 * * * *"),
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
    ),
    ("no schedule", cronjob(schedule=None), "spec.schedule: Required value"),
    (
        "an unknown time zone",
        cronjob(timeZone="Mars/Olympus"),
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    ),
    (
        "a CronJob name too long for its Jobs",
        cronjob(name="a" * 53),
        f'metadata.name: Invalid value: "{"a" * 53}": must be no more than 52 characters',
    ),
    (
        "a CronJob's Job that restarts Always",
        cronjob(jobTemplate={"spec": {"template": {"spec": dict(POD)}}}),
        'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": '
        'supported values: "OnFailure", "Never"',
    ),
    (
        "HPA max below min",
        hpa(minReplicas=3, maxReplicas=2),
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
    ),
    (
        "HPA without a target name",
        hpa(scaleTargetRef={"kind": "Deployment"}),
        "spec.scaleTargetRef.name: Required value",
    ),
]


@pytest.mark.parametrize("obj, message", [(o, m) for _, o, m in BAD], ids=[name for name, _, _ in BAD])
def test_a_bad_manifest_is_refused_at_create_and_nothing_is_stored(obj, message):
    api = APIServer()
    obj = {k: v for k, v in obj.items()}
    obj["spec"] = {k: v for k, v in obj["spec"].items() if v is not None}
    rv = api.store.rv
    with pytest.raises(Invalid) as err:
        api.create(obj, 0.0)
    assert str(err.value) == message
    assert api.store.rv == rv and api.store.count(obj["kind"]) == 0


def test_a_deployment_is_defaulted_as_upstream_and_counts_generations():
    api = APIServer()
    d = deploy()
    del d["spec"]["replicas"]
    stored = api.create(d, 0.0)
    spec = stored["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == rolling("25%", "25%")
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert stored["metadata"]["generation"] == 1
    changed = copy.deepcopy(stored)
    changed["spec"]["replicas"] = 3
    assert api.update(changed, 1.0)["metadata"]["generation"] == 2
    labelled = copy.deepcopy(api.get("Deployment", "default", "web"))
    labelled["metadata"]["labels"] = {"team": "a"}
    labelled["status"] = {"replicas": 99}  # the status subresource alone writes it
    after = api.update(labelled, 2.0)
    assert after["metadata"]["generation"] == 2 and after.get("status", {}).get("replicas") is None


def test_a_job_gets_its_selector_and_pod_labels_and_may_be_applied_again():
    api = APIServer()
    stored = api.create(job(), 0.0)
    uid = stored["metadata"]["uid"]
    assert stored["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = stored["spec"]["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "pi" and labels["controller-uid"] == uid
    assert (stored["spec"]["completions"], stored["spec"]["parallelism"], stored["spec"]["backoffLimit"]) == (1, 1, 6)
    assert stored["metadata"]["labels"] == labels
    again = copy.deepcopy(stored)
    again["spec"]["activeDeadlineSeconds"] = 60
    assert api.update(again, 1.0)["spec"]["selector"] == stored["spec"]["selector"]


def test_an_hpa_without_metrics_gets_cpu_at_80_percent():
    stored = APIServer().create(hpa(), 0.0)
    (metric,) = stored["spec"]["metrics"]
    assert metric["resource"] == {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}
    assert stored["spec"]["minReplicas"] == 1
