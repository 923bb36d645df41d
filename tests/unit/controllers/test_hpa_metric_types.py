"""HorizontalPodAutoscaler metric types beyond Resource (issue 36): upstream's validation of
Pods, Object, External and ContainerResource metrics, ContainerResource evaluated from one
container's emulated usage, and the conditions and Events upstream shows for Pods, Object and
External metrics when no custom or external metrics API serves them (kubemu serves none)."""

from __future__ import annotations

from typing import Any

import pytest
from hpa_builders import hpa, target, worker
from test_hpa import Drive, conds, events, status_of

from cluster.api.workloadvalidation import FieldError, check_hpa
from cluster.clock import rfc3339
from cluster.controllers import hpasources
from cluster.frontend import tables

PACKETS = {"metric": {"name": "packets"}, "target": {"type": "AverageValue", "averageValue": "1k"}}
INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"}
OBJECT = {"describedObject": INGRESS, "metric": {"name": "rps"}, "target": {"type": "Value", "value": "10k"}}
EXTERNAL = {
    "metric": {"name": "queue", "selector": {"matchLabels": {"queue": "work"}}},
    "target": {"type": "AverageValue", "averageValue": "30"},
}
CONTAINER = {"name": "cpu", "container": "app", "target": {"type": "Utilization", "averageUtilization": 50}}
CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}


def metric(kind: str, **fields: Any) -> dict:
    source = {"Pods": "pods", "Object": "object", "External": "external", "ContainerResource": "containerResource"}
    default = {"Pods": PACKETS, "Object": OBJECT, "External": EXTERNAL, "ContainerResource": CONTAINER}
    return {"type": kind, source[kind]: {**default[kind], **fields}} if kind in source else {"type": kind, **fields}


def refusal(*metrics: dict) -> str:
    try:
        check_hpa(hpa(metrics=list(metrics)))
    except FieldError as e:
        return str(e)
    return ""


# ---- validation ---------------------------------------------------------------------------------

M = "spec.metrics[0]"


@pytest.mark.parametrize("kind", ["Pods", "Object", "External", "ContainerResource"])
def test_every_metric_type_is_accepted(kind):
    assert refusal(metric(kind)) == ""


@pytest.mark.parametrize(
    "m, error",
    [
        ({"type": ""}, f"{M}.type: Required value: must specify a metric source type"),
        ({"type": "Bogus"}, f'{M}.type: Unsupported value: "Bogus": supported values: '
                            '"ContainerResource", "External", "Object", "Pods", "Resource"'),
        ({"type": "Pods"}, f"{M}.pods: Required value: must populate information for the given metric source"),
        ({**metric("Pods"), "resource": CPU["resource"]}, f"{M}.resource: Forbidden: must populate the given metric source only"),
        (metric("Pods", target={"type": "AverageValue"}), f"{M}.pods.target.averageValue: Required value: must specify a positive target averageValue"),
        (metric("Pods", metric={}), f"{M}.pods.metric.name: Required value: must specify a metric name"),
        (metric("Pods", metric={"name": "a/b"}), f'{M}.pods.metric.name: Invalid value: "a/b": may not contain \'/\''),
        (metric("Pods", target={"type": "Percent", "averageValue": "1"}),
         f'{M}.pods.target.type: Invalid value: "Percent": must be either Utilization, Value, or AverageValue'),
        (metric("Pods", target={"type": "AverageValue", "averageValue": "-1"}), f'{M}.pods.target.averageValue: Invalid value: "-1": must be positive'),
        (metric("Object", target={"type": "Value"}), f"{M}.object.target.averageValue: Required value: must set either a target value or averageValue"),
        (metric("Object", describedObject={"kind": "Ingress"}), f"{M}.object.describedObject.name: Required value"),
        (metric("External", target={"type": "Value", "value": "1", "averageValue": "1"}),
         f"{M}.external.target.value: Forbidden: may not set both a target value for metric and a per-pod target"),
        (metric("External", target={"type": "Value"}),
         f"{M}.external.target.averageValue: Required value: must set either a target value for metric or a per-pod target"),
        (metric("ContainerResource", name="gpu"), f'{M}.containerResource.name: Invalid value: "gpu": must be a standard resource for containers'),
        (metric("ContainerResource", container=""), f"{M}.containerResource.container: Required value: must specify a container"),
        (metric("ContainerResource", container="App"), f'{M}.containerResource.container: Invalid value: "App": a lowercase RFC 1123 label'),
        (metric("ContainerResource", target={"type": "Utilization", "averageUtilization": 0}),
         f"{M}.containerResource.target.averageUtilization: Invalid value: 0: must be greater than 0"),
        (metric("ContainerResource", target={"type": "Utilization", "averageUtilization": 50, "averageValue": "1"}),
         f"{M}.containerResource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"),
    ],
)  # fmt: skip
def test_a_bad_metric_is_refused_with_upstreams_words(m, error):
    assert refusal(m).startswith(error)


# ---- ContainerResource: one container's usage --------------------------------------------------


def two_containers(name: str, app: str, side: str) -> Any:
    """A Running pod with containers ``app`` (500m requested) and ``side`` (100m), using
    ``app`` and ``side`` cpu (kubemu.io/cpu-usage.<container>)."""
    p = worker(name, usage=None)
    p.spec["containers"] = [
        {"name": "app", "image": "x", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "side", "image": "x", "resources": {"requests": {"cpu": "100m"}}},
    ]
    p.meta["annotations"] = {"kubemu.io/cpu-usage.app": app, "kubemu.io/cpu-usage.side": side}
    running = {"running": {"startedAt": rfc3339(0.0)}}
    p["status"]["containerStatuses"] = [{"name": "app", "state": running}, {"name": "side", "state": running}]
    return p


def test_container_resource_scales_on_the_named_container_alone():
    # The pods as a whole use 1300m of 600m (216 %); the app container 400m of 500m (80 %).
    pods = [two_containers(f"web-{c}", "400m", "900m") for c in "ab"]
    d = Drive(hpa(metrics=[metric("ContainerResource")]), target(replicas=2), *pods)
    w = d.sync(400.0)
    assert [u["spec"]["replicas"] for u in w.updates] == [4]  # ceil(2 x 80 / 50)
    status = status_of(w)
    assert status["currentMetrics"] == [
        {"type": "ContainerResource",
         "containerResource": {"name": "cpu", "container": "app", "current": {"averageUtilization": 80, "averageValue": "400m"}}}
    ]  # fmt: skip
    assert conds(status)["ScalingActive"][1:] == (
        "ValidMetricFound",
        "the HPA was able to successfully calculate a replica count from cpu container resource utilization "
        "(percentage of request)",
    )
    assert ("Normal", "SuccessfulRescale",
            "New size: 4; reason: cpu container resource utilization (percentage of request) above target") in events(w)  # fmt: skip


def test_container_resource_fails_when_the_metrics_lack_the_container():
    lone = worker("web-a", "200m")  # its only container is "c"
    d = Drive(hpa(metrics=[metric("ContainerResource")]), target(replicas=1), lone)
    w = d.sync(400.0)
    inner = (
        "failed to get cpu utilization: unable to get metrics for resource cpu: failed to get container metrics: "
        "container app not present in metrics for pod default/web-a"
    )
    assert w.updates == []
    assert conds(status_of(w))["ScalingActive"] == (
        "False", "FailedGetContainerResourceMetric", f"the HPA was unable to compute the replica count: {inner}"
    )  # fmt: skip
    assert events(w) == [
        ("Warning", "FailedGetContainerResourceMetric", inner),
        ("Warning", "FailedComputeMetricsReplicas",
         f"invalid metrics (1 invalid out of 1), first error is: failed to get app container metric value: {inner}"),
    ]  # fmt: skip


# ---- Pods, Object, External: no metrics API in kubemu ---------------------------------------------

BAD_SELECTOR = {"matchExpressions": [{"key": "a", "operator": "Bad"}]}
BAD_SELECTOR_TEXT = 'matchExpressions[0].operator: is not a valid selector operator (supported: "In", "NotIn", "Exists", "DoesNotExist")'
NO_CUSTOM = "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
NO_EXTERNAL = (
    "unable to get external metric default/queue/&LabelSelector{MatchLabels:map[string]string{queue: work,},"
    "MatchExpressions:[]LabelSelectorRequirement{},}: unable to fetch metrics from external metrics API: "
    "the server could not find the requested resource (get queue.external.metrics.k8s.io)"
)


@pytest.mark.parametrize(
    "m, reason, inner, outer",
    [
        (metric("Pods"), "FailedGetPodsMetric", f"unable to get metric packets: {NO_CUSTOM}",
         f"failed to get pods metric value: unable to get metric packets: {NO_CUSTOM}"),
        (metric("Object"), "FailedGetObjectMetric", f"unable to get metric rps: {NO_CUSTOM} on Ingress default/main",
         f"failed to get object metric value: unable to get metric rps: {NO_CUSTOM} on Ingress default/main"),
        (metric("Object", target={"type": "AverageValue", "averageValue": "5"}), "FailedGetObjectMetric",
         f"unable to get metric rps: {NO_CUSTOM} on Ingress default/main",
         f"failed to get object metric value: failed to get rps object metric: unable to get metric rps: {NO_CUSTOM} on Ingress default/main"),
        (metric("External"), "FailedGetExternalMetric", NO_EXTERNAL,
         f"failed to get queue external metric value: failed to get queue external metric: {NO_EXTERNAL}"),
        (metric("External", target={"type": "Value", "value": "100"}, metric={"name": "queue"}), "FailedGetExternalMetric",
         NO_EXTERNAL.replace("&LabelSelector{MatchLabels:map[string]string{queue: work,},MatchExpressions:[]LabelSelectorRequirement{},}", "nil"),
         "failed to get queue external metric value: failed to get external metric queue: "
         + NO_EXTERNAL.replace("&LabelSelector{MatchLabels:map[string]string{queue: work,},MatchExpressions:[]LabelSelectorRequirement{},}", "nil")),
        (metric("Pods", metric={"name": "packets", "selector": BAD_SELECTOR}), "FailedGetPodsMetric", BAD_SELECTOR_TEXT,
         f"failed to get pods metric value: {BAD_SELECTOR_TEXT}"),
    ],
)  # fmt: skip
def test_a_metric_no_api_serves_fails_as_upstream_and_scales_nothing(m, reason, inner, outer):
    d = Drive(hpa(metrics=[m]), target(replicas=2), worker("web-a", "900m"), worker("web-b", "900m"))
    w = d.sync(400.0)
    assert w.updates == []
    status = status_of(w)
    assert status["currentMetrics"] == [{"type": ""}]
    assert conds(status)["ScalingActive"] == (
        "False",
        reason,
        f"the HPA was unable to compute the replica count: {inner}",
    )
    assert events(w) == [
        ("Warning", reason, inner),
        ("Warning", "FailedComputeMetricsReplicas", f"invalid metrics (1 invalid out of 1), first error is: {outer}"),
    ]


def test_a_failing_metric_beside_a_valid_one_allows_a_scale_up_only():
    pods = [worker("web-a", "900m"), worker("web-b", "900m")]  # 180 % of the 500m request
    up = Drive(hpa(metrics=[metric("Pods"), CPU]), target(replicas=2), *pods).sync(400.0)
    assert [u["spec"]["replicas"] for u in up.updates] == [4]
    assert conds(status_of(up))["ScalingActive"][:2] == ("True", "ValidMetricFound")
    quiet = [worker("web-a", "50m"), worker("web-b", "50m")]  # 10 %: cpu alone would scale down
    down = Drive(hpa(metrics=[metric("Pods"), CPU]), target(replicas=2), *quiet).sync(400.0)
    assert down.updates == []
    assert conds(status_of(down))["ScalingActive"][:2] == ("False", "FailedGetPodsMetric")


def test_an_unknown_source_type_is_refused_by_the_controller_too():
    with pytest.raises(hpasources.MetricFailed) as e:
        hpasources.evaluate({"type": "Bogus"}, [], "default", 1, 0.0)
    assert (e.value.reason, e.value.message) == ("InvalidMetricSourceType", 'unknown metric source type "Bogus"')


# ---- kubectl get hpa: the TARGETS column -----------------------------------------------------------


@pytest.mark.parametrize(
    "m, current, shown",
    [
        (metric("Pods"), {"type": ""}, "<unknown>/1k"),
        (metric("Pods"), {"type": "Pods", "pods": {"metric": {"name": "packets"}, "current": {"averageValue": "500"}}}, "500/1k"),
        (metric("Object"), {"type": ""}, "<unknown>/10k"),
        (metric("External"), {"type": ""}, "<unknown>/30 (avg)"),
        (metric("ContainerResource"),
         {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app", "current": {"averageUtilization": 80}}},
         "cpu: 80%/50%"),
    ],
)  # fmt: skip
def test_the_targets_column_shows_every_metric_type(m, current, shown):
    obj = {**hpa(metrics=[m]), "status": {"currentMetrics": [current]}}
    assert tables.table("HorizontalPodAutoscaler", [obj], 0.0)["rows"][0]["cells"][2] == shown
