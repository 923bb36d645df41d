"""The HorizontalPodAutoscaler's metric sources: one ``spec.metrics[]`` entry, evaluated or refused.

Owns upstream's ``computeReplicasForMetric`` per source type (``horizontal.go``), with its
reasons and messages:

- Resource: the pods' summed usage against their requests (``hpametrics.resource_metric``);
- ContainerResource: the same, for one named container of each pod (the usage the resource
  metrics API reports for that container, ``cluster/api/podmetrics.py``, and that container's
  request); a pod the metrics API reports without the container fails the metric, as upstream;
- Pods and Object: read from the custom metrics API (``custom.metrics.k8s.io``), which kubemu
  does not serve, so they always fail as upstream fails without a metrics adapter
  (``FailedGetPodsMetric`` / ``FailedGetObjectMetric``: ``no custom metrics API
  (custom.metrics.k8s.io) registered``);
- External: read from the external metrics API, also not served (``FailedGetExternalMetric``:
  ``the server could not find the requested resource (get <metric>.external.metrics.k8s.io)``).

A failed metric proposes nothing: the controller (``hpa.py``) scales on the other metrics
only when upstream would (some valid metric, and no scale-down while one fails) and reports
ScalingActive False with the first failure's reason otherwise. Pure.
"""

from __future__ import annotations

from typing import Any

from ..api.gostrings import label_selector
from ..api.objects import name_of, namespace_of
from ..api.podmetrics import container_usage_now
from ..api.quantity import QuantityError, to_milli
from ..api.selectors import LabelSelector, SelectorError
from . import hpametrics as hm

DEFAULT_READINESS = hm.Readiness()
NO_CUSTOM_METRICS = (
    "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
)


class MetricFailed(Exception):
    """A metric without a proposal: the ScalingActive condition's reason and the Event's
    message (``message``), and the error the FailedComputeMetricsReplicas Event quotes (``outer``)."""

    def __init__(self, reason: str, message: str, outer: str) -> None:
        super().__init__(outer)
        self.reason, self.message, self.outer = reason, message, outer


def evaluate(
    spec: dict[str, Any],
    pods: list[dict[str, Any]],
    namespace: str,
    current: int,
    now: float,
    tolerance: tuple[float, float] = (hm.TOLERANCE, hm.TOLERANCE),
    readiness: hm.Readiness = DEFAULT_READINESS,
) -> tuple[int, str, dict[str, Any]]:
    """One metric's (proposal, name for the rescale reason, status entry); raises MetricFailed."""
    kind = spec.get("type", "")
    if kind == "Resource":
        res = spec.get("resource") or {}
        try:
            return hm.resource_metric(res, pods, current, now, tolerance, readiness)
        except hm.MetricError as e:
            outer = f"failed to get {res.get('name', '')} resource metric value: {e.message}"
            raise MetricFailed("FailedGetResourceMetric", e.message, outer) from None
    if kind == "ContainerResource":
        src = spec.get("containerResource") or {}
        try:
            return container_resource_metric(src, pods, current, now, tolerance, readiness)
        except hm.MetricError as e:
            outer = f"failed to get {src.get('container', '')} container metric value: {e.message}"
            raise MetricFailed("FailedGetContainerResourceMetric", e.message, outer) from None
    if kind == "Pods":
        raise _pods(spec.get("pods") or {})
    if kind == "Object":
        raise _object(spec.get("object") or {}, namespace)
    if kind == "External":
        raise _external(spec.get("external") or {}, namespace)
    msg = f'unknown metric source type "{kind}"'
    raise MetricFailed("InvalidMetricSourceType", msg, msg)


# ---- ContainerResource ----------------------------------------------------------------------


def container_usage(pod: dict[str, Any], resource: str, container: str, now: float) -> int | None:
    """The container's usage of ``resource`` now in milli-units, None when the metrics API
    has none for the pod or the container does not declare the resource's usage; raises
    MetricError when the API reports the pod without the container (upstream's
    getContainerMetrics)."""
    per = container_usage_now(pod, now)
    if per is None or resource not in ("cpu", "memory"):
        return None
    if container not in per:
        raise hm.MetricError(
            f"failed to get container metrics: container {container} not present in metrics for pod "
            f"{namespace_of(pod)}/{name_of(pod)}"
        )
    cpu, memory = per[container]
    return cpu if resource == "cpu" else memory * 1000


def container_request(pod: dict[str, Any], resource: str, container: str) -> tuple[int | None, str]:
    """(the named container's request in milli-units, "") or (None, upstream's error); 0 when
    the pod has no such container, as upstream's calculatePodRequests sums none."""
    for c in (pod.get("spec") or {}).get("containers") or ():
        if c.get("name") != container:
            continue
        req = ((c.get("resources") or {}).get("requests") or {}).get(resource)
        if req is None:
            return None, f"missing request for {resource} in container {container} of Pod {name_of(pod)}"
        try:
            return to_milli(req), ""
        except QuantityError as e:
            return None, str(e)
    return 0, ""


def _samples(
    pods: list[dict[str, Any]], resource: str, container: str, now: float, readiness: hm.Readiness
) -> list[hm.Sample]:
    out = []
    try:
        usages = [container_usage(p, resource, container, now) for p in pods]
    except hm.MetricError as e:
        raise hm.MetricError(f"unable to get metrics for resource {resource}: {e.message}") from None
    for pod, usage in zip(pods, usages, strict=True):
        group = hm.classify(
            pod,
            resource,
            usage is not None,
            now,
            readiness.cpu_initialization_period,
            readiness.initial_readiness_delay,
        )
        request, error = container_request(pod, resource, container)
        out.append(hm.Sample(name_of(pod), group, usage, request, error))
    return out


def container_resource_metric(
    src: dict[str, Any],
    pods: list[dict[str, Any]],
    current: int,
    now: float,
    tolerance: tuple[float, float] = (hm.TOLERANCE, hm.TOLERANCE),
    readiness: hm.Readiness = DEFAULT_READINESS,
) -> tuple[int, str, dict[str, Any]]:
    """A ``metrics[].containerResource`` entry's (proposal, rescale reason name, status);
    raises MetricError with upstream's text (before "failed to get <container> container
    metric value: ")."""
    name, container, target = src.get("name", ""), src.get("container", ""), src.get("target") or {}
    if target.get("averageValue") is not None:
        try:
            samples = _samples(pods, name, container, now, readiness)
            goal = to_milli(target["averageValue"])
            p = hm.desired_replicas(current, goal, samples, resource=name, utilization=False, tolerance=tolerance)
        except (hm.MetricError, QuantityError, ZeroDivisionError) as e:
            raise hm.MetricError(f"failed to get {name} usage: {e}") from None
        return p.replicas, f"{name} resource", _status(name, container, {"averageValue": hm.milli_quantity(p.average)})
    if target.get("averageUtilization") is None:
        raise hm.MetricError(
            "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
        )
    try:
        samples = _samples(pods, name, container, now, readiness)
        p = hm.desired_replicas(current, int(target["averageUtilization"]), samples, resource=name, tolerance=tolerance)
    except (hm.MetricError, ZeroDivisionError) as e:
        raise hm.MetricError(f"failed to get {name} utilization: {e}") from None
    value = {"averageUtilization": p.utilization, "averageValue": hm.milli_quantity(p.average)}
    return p.replicas, f"{name} container resource utilization (percentage of request)", _status(name, container, value)


def _status(name: str, container: str, current: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "ContainerResource",
        "containerResource": {"name": name, "container": container, "current": current},
    }


# ---- Pods, Object, External: no API serves them in kubemu -------------------------------------


def _selector_error(selector: Any) -> str:
    """upstream's LabelSelectorAsSelector error for a metric's selector, "" when it parses."""
    try:
        LabelSelector.from_dict(selector)
    except SelectorError as e:
        return str(e)
    return ""


def _pods(src: dict[str, Any]) -> MetricFailed:
    metric = src.get("metric") or {}
    inner = _selector_error(metric.get("selector"))
    if not inner:
        inner = f"unable to get metric {metric.get('name', '')}: {NO_CUSTOM_METRICS}"
    return MetricFailed("FailedGetPodsMetric", inner, f"failed to get pods metric value: {inner}")


def _object(src: dict[str, Any], namespace: str) -> MetricFailed:
    metric, target, described = src.get("metric") or {}, src.get("target") or {}, src.get("describedObject") or {}
    name = metric.get("name", "")
    outer = "failed to get object metric value: "
    inner = _selector_error(metric.get("selector"))
    if inner:
        return MetricFailed("FailedGetObjectMetric", inner, outer + inner)
    fetch = f"unable to get metric {name}: {NO_CUSTOM_METRICS} on {described.get('kind', '')} {namespace}/{described.get('name', '')}"
    if target.get("type") == "Value" and target.get("value") is not None:
        return MetricFailed("FailedGetObjectMetric", fetch, outer + fetch)
    if target.get("type") == "AverageValue" and target.get("averageValue") is not None:
        return MetricFailed("FailedGetObjectMetric", fetch, f"{outer}failed to get {name} object metric: {fetch}")
    inner = "invalid object metric source: neither a value target nor an average value target was set"
    return MetricFailed("FailedGetObjectMetric", inner, outer + inner)


def _external(src: dict[str, Any], namespace: str) -> MetricFailed:
    metric, target = src.get("metric") or {}, src.get("target") or {}
    name, selector = metric.get("name", ""), metric.get("selector")
    outer = f"failed to get {name} external metric value: "
    fetch = _selector_error(selector) or (
        f"unable to get external metric {namespace}/{name}/{label_selector(selector)}: unable to fetch metrics "
        f"from external metrics API: the server could not find the requested resource (get {name}.external.metrics.k8s.io)"
    )
    if target.get("averageValue") is not None:
        return MetricFailed("FailedGetExternalMetric", fetch, f"{outer}failed to get {name} external metric: {fetch}")
    if target.get("value") is not None:
        return MetricFailed("FailedGetExternalMetric", fetch, f"{outer}failed to get external metric {name}: {fetch}")
    inner = "invalid external metric source: neither a value target nor an average value target was set"
    return MetricFailed("FailedGetExternalMetric", inner, outer + inner)
