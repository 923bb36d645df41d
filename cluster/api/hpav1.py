"""autoscaling/v1 HorizontalPodAutoscaler: the view of the stored autoscaling/v2 one.

Owns upstream's conversion between the two versions (``pkg/apis/autoscaling/v1/conversion.go``):
v1 knows one target, ``spec.targetCPUUtilizationPercentage``, which is v2's Resource cpu
Utilization metric; whatever else v2 holds travels through v1 in four annotations, JSON
encoded, so that a client reading v1 and writing it back loses nothing:

- ``autoscaling.alpha.kubernetes.io/metrics``: the metrics other than the cpu utilization
  one, in v1's MetricSpec shape (``targetAverageValue``, ``metricName``, ...);
- ``autoscaling.alpha.kubernetes.io/current-metrics``: every ``status.currentMetrics``;
- ``autoscaling.alpha.kubernetes.io/conditions``: ``status.conditions``;
- ``autoscaling.alpha.kubernetes.io/behavior``: ``spec.behavior``, in upstream's internal
  Go field names (``{"ScaleUp":{"StabilizationWindowSeconds":0,...}}``), as upstream writes it.

v1 -> v2 reads them back (an annotation that does not parse is ignored, as upstream) and
drops them; a v1 object with no cpu target and no other metric gets the 80 % cpu default
here, as upstream's conversion gives it. Pure functions of plain dicts; called through
``conversion.py`` by the HTTP front end's views (``cluster/frontend/views.py``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

V1, V2 = "autoscaling/v1", "autoscaling/v2"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS)
DEFAULT_CPU_UTILIZATION = 80
ZERO = "0"  # a Go resource.Quantity that was never set marshals as "0"

Obj = dict[str, Any]


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _some(**fields: Any) -> Obj:
    """The fields that are set (Go's omitempty on pointers), in the order given."""
    return {k: v for k, v in fields.items() if v is not None}


def _go_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _meta(obj: Obj, annotations: dict[str, str]) -> Obj:
    meta = copy.deepcopy(_d(obj.get("metadata")))
    kept = {k: v for k, v in _d(meta.get("annotations")).items() if k not in ROUND_TRIP}
    kept.update(annotations)
    if kept:
        meta["annotations"] = kept
    else:
        meta.pop("annotations", None)
    return meta


def _ref(ref: Any) -> Obj:
    r = _d(ref)
    return _some(kind=r.get("kind", ""), name=r.get("name", ""), apiVersion=r.get("apiVersion") or None)


def _is_cpu_utilization(metric: Obj) -> bool:
    res = _d(metric.get("resource"))
    return (
        metric.get("type") == "Resource"
        and res.get("name") == "cpu"
        and _d(res.get("target")).get("averageUtilization") is not None
    )


# ---- v2 -> v1 ---------------------------------------------------------------------------------


def _metric_to_v1(m: Obj) -> Obj:
    """One v2 MetricSpec in v1's shape (the annotation's)."""
    out: Obj = {"type": m.get("type", "")}
    obj, pods, res, cres, ext = (_d(m.get(k)) if m.get(k) is not None else None for k in _SOURCES)
    if obj is not None:
        t, metric = _d(obj.get("target")), _d(obj.get("metric"))
        out["object"] = _some(
            target=_ref(obj.get("describedObject")),
            metricName=metric.get("name", ""),
            targetValue=t.get("value") if t.get("value") is not None else ZERO,
            selector=metric.get("selector"),
            averageValue=t.get("averageValue"),
        )
    if pods is not None:
        t, metric = _d(pods.get("target")), _d(pods.get("metric"))
        out["pods"] = _some(
            metricName=metric.get("name", ""),
            targetAverageValue=t.get("averageValue") if t.get("averageValue") is not None else ZERO,
            selector=metric.get("selector"),
        )
    for key, src in (("resource", res), ("containerResource", cres)):
        if src is not None:
            t = _d(src.get("target"))
            out[key] = _some(
                name=src.get("name", ""),
                targetAverageUtilization=t.get("averageUtilization"),
                targetAverageValue=t.get("averageValue"),
                container=src.get("container", "") if key == "containerResource" else None,
            )
    if ext is not None:
        t, metric = _d(ext.get("target")), _d(ext.get("metric"))
        out["external"] = _some(
            metricName=metric.get("name", ""),
            metricSelector=metric.get("selector"),
            targetValue=t.get("value"),
            targetAverageValue=t.get("averageValue"),
        )
    return out


_SOURCES = ("object", "pods", "resource", "containerResource", "external")


def _status_metric_to_v1(m: Obj) -> Obj:
    """One v2 MetricStatus in v1's shape."""
    out: Obj = {"type": m.get("type", "")}
    obj, pods, res, cres, ext = (_d(m.get(k)) if m.get(k) is not None else None for k in _SOURCES)
    if obj is not None:
        cur, metric = _d(obj.get("current")), _d(obj.get("metric"))
        out["object"] = _some(
            target=_ref(obj.get("describedObject")),
            metricName=metric.get("name", ""),
            currentValue=cur.get("value") if cur.get("value") is not None else ZERO,
            selector=metric.get("selector"),
            averageValue=cur.get("averageValue"),
        )
    if pods is not None:
        cur, metric = _d(pods.get("current")), _d(pods.get("metric"))
        out["pods"] = _some(
            metricName=metric.get("name", ""),
            currentAverageValue=cur.get("averageValue") if cur.get("averageValue") is not None else ZERO,
            selector=metric.get("selector"),
        )
    for key, src in (("resource", res), ("containerResource", cres)):
        if src is not None:
            cur = _d(src.get("current"))
            out[key] = _some(
                name=src.get("name", ""),
                currentAverageUtilization=cur.get("averageUtilization"),
                currentAverageValue=cur.get("averageValue") if cur.get("averageValue") is not None else ZERO,
                container=src.get("container", "") if key == "containerResource" else None,
            )
    if ext is not None:
        cur, metric = _d(ext.get("current")), _d(ext.get("metric"))
        out["external"] = _some(
            metricName=metric.get("name", ""),
            metricSelector=metric.get("selector"),
            currentValue=cur.get("value") if cur.get("value") is not None else ZERO,
            currentAverageValue=cur.get("averageValue"),
        )
    return out


def _rules_internal(rules: Any) -> Obj | None:
    if not isinstance(rules, dict):
        return None
    return {
        "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
        "SelectPolicy": rules.get("selectPolicy"),
        "Policies": [
            {
                "Type": _d(p).get("type", ""),
                "Value": _d(p).get("value", 0),
                "PeriodSeconds": _d(p).get("periodSeconds", 0),
            }
            for p in rules.get("policies") or ()
        ]
        or None,
    }


def _condition(c: Any) -> Obj:
    c = _d(c)
    return _some(
        type=c.get("type", ""),
        status=c.get("status", ""),
        lastTransitionTime=c.get("lastTransitionTime"),
        reason=c.get("reason") or None,
        message=c.get("message") or None,
    )


def to_v1(hpa: Obj) -> Obj:
    """The stored (v2) HorizontalPodAutoscaler as autoscaling/v1 serves it."""
    spec, status = _d(hpa.get("spec")), _d(hpa.get("status"))
    metrics = [_d(m) for m in spec.get("metrics") or ()]
    cpu = next((m for m in metrics if _is_cpu_utilization(m)), None)
    annotations: dict[str, str] = {}
    others = [_metric_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRICS] = _go_json(others)
    current = [_d(m) for m in status.get("currentMetrics") or ()]
    if current:
        annotations[CURRENT_METRICS] = _go_json([_status_metric_to_v1(m) for m in current])
    if spec.get("behavior") is not None:
        behavior = _d(spec.get("behavior"))
        annotations[BEHAVIOR] = _go_json(
            {
                "ScaleUp": _rules_internal(behavior.get("scaleUp")),
                "ScaleDown": _rules_internal(behavior.get("scaleDown")),
            }
        )
    if status.get("conditions"):
        annotations[CONDITIONS] = _go_json([_condition(c) for c in status["conditions"]])
    v1_spec = _some(
        scaleTargetRef=_ref(spec.get("scaleTargetRef")),
        minReplicas=spec.get("minReplicas"),
        maxReplicas=spec.get("maxReplicas", 0),
        targetCPUUtilizationPercentage=_d(_d(cpu.get("resource")).get("target")).get("averageUtilization")
        if cpu
        else None,
    )
    cpu_now = None
    for m in current:  # the last cpu utilization, as upstream's loop leaves it
        res = _d(m.get("resource"))
        if m.get("type") == "Resource" and res.get("name") == "cpu":
            cpu_now = _d(res.get("current")).get("averageUtilization", cpu_now)
    v1_status = _some(
        observedGeneration=status.get("observedGeneration"),
        lastScaleTime=status.get("lastScaleTime"),
        currentReplicas=status.get("currentReplicas", 0),
        desiredReplicas=status.get("desiredReplicas", 0),
        currentCPUUtilizationPercentage=cpu_now,
    )
    out: Obj = {
        "kind": hpa.get("kind", "HorizontalPodAutoscaler"),
        "apiVersion": V1,
        "metadata": _meta(hpa, annotations),
    }
    out.update(spec=v1_spec, status=v1_status)
    return out


# ---- v1 -> v2 ---------------------------------------------------------------------------------


def _metric_id(name: Any, selector: Any) -> Obj:
    return _some(name=name if isinstance(name, str) else "", selector=selector)


def _metric_to_v2(m: Obj) -> Obj:
    """One v1 MetricSpec (from the annotation) in v2's shape."""
    out: Obj = {"type": m.get("type", "")}
    obj, pods, res, cres, ext = (_d(m.get(k)) if m.get(k) is not None else None for k in _SOURCES)
    if obj is not None:
        average = obj.get("averageValue")
        target = _some(
            type="Value" if average is None else "AverageValue",
            value=obj.get("targetValue", ZERO),
            averageValue=average,
        )
        out["object"] = {
            "describedObject": _ref(obj.get("target")),
            "metric": _metric_id(obj.get("metricName"), obj.get("selector")),
            "target": target,
        }
    if pods is not None:
        out["pods"] = {
            "metric": _metric_id(pods.get("metricName"), pods.get("selector")),
            "target": {"type": "AverageValue", "averageValue": pods.get("targetAverageValue", ZERO)},
        }
    for key, src in (("resource", res), ("containerResource", cres)):
        if src is not None:
            utilization = src.get("targetAverageUtilization")
            target = _some(
                type="AverageValue" if utilization is None else "Utilization",
                averageValue=src.get("targetAverageValue"),
                averageUtilization=utilization,
            )
            entry = _some(name=src.get("name", ""), container=src.get("container") if key != "resource" else None)
            out[key] = {**entry, "target": target}
    if ext is not None:
        value = ext.get("targetValue")
        target = _some(
            type="AverageValue" if value is None else "Value", value=value, averageValue=ext.get("targetAverageValue")
        )
        out["external"] = {"metric": _metric_id(ext.get("metricName"), ext.get("metricSelector")), "target": target}
    return out


def _status_metric_to_v2(m: Obj) -> Obj:
    """One v1 MetricStatus (from the annotation) in v2's shape."""
    out: Obj = {"type": m.get("type", "")}
    obj, pods, res, cres, ext = (_d(m.get(k)) if m.get(k) is not None else None for k in _SOURCES)
    if obj is not None:
        out["object"] = {
            "describedObject": _ref(obj.get("target")),
            "metric": _metric_id(obj.get("metricName"), obj.get("selector")),
            "current": _some(value=obj.get("currentValue", ZERO), averageValue=obj.get("averageValue")),
        }
    if pods is not None:
        out["pods"] = {
            "metric": _metric_id(pods.get("metricName"), pods.get("selector")),
            "current": {"averageValue": pods.get("currentAverageValue", ZERO)},
        }
    for key, src in (("resource", res), ("containerResource", cres)):
        if src is not None:
            current = _some(
                averageValue=src.get("currentAverageValue", ZERO),
                averageUtilization=src.get("currentAverageUtilization"),
            )
            entry = _some(name=src.get("name", ""), container=src.get("container") if key != "resource" else None)
            out[key] = {**entry, "current": current}
    if ext is not None:
        out["external"] = {
            "metric": _metric_id(ext.get("metricName"), ext.get("metricSelector")),
            "current": _some(value=ext.get("currentValue", ZERO), averageValue=ext.get("currentAverageValue")),
        }
    return out


def _annotation_list(annotations: Obj, key: str) -> list[Obj] | None:
    """A round-trip annotation's JSON list, or None when absent or unreadable (ignored, as upstream)."""
    raw = annotations.get(key)
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return [_d(x) for x in parsed] if isinstance(parsed, list) else None


def _folded(d: Obj, name: str) -> Any:
    """Go's json.Unmarshal matches field names case-insensitively: ``ScaleUp`` or ``scaleUp``."""
    return next((v for k, v in d.items() if k.lower() == name.lower()), None)


def _rules_v2(rules: Any) -> Obj | None:
    if not isinstance(rules, dict):
        return None
    policies = _folded(rules, "policies")
    out = _some(
        stabilizationWindowSeconds=_folded(rules, "stabilizationWindowSeconds"),
        selectPolicy=_folded(rules, "selectPolicy"),
    )
    if isinstance(policies, list):
        out["policies"] = [
            {
                "type": _folded(_d(p), "type") or "",
                "value": _folded(_d(p), "value") or 0,
                "periodSeconds": _folded(_d(p), "periodSeconds") or 0,
            }
            for p in policies
        ]
    return out


def _behavior(annotations: Obj) -> Obj | None:
    raw = annotations.get(BEHAVIOR)
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    behavior = _some(scaleUp=_rules_v2(_folded(parsed, "scaleUp")), scaleDown=_rules_v2(_folded(parsed, "scaleDown")))
    return behavior or None  # an empty behavior is no behavior, as upstream


def to_v2(hpa: Obj) -> Obj:
    """An autoscaling/v1 HorizontalPodAutoscaler as it is stored (autoscaling/v2)."""
    spec, status = _d(hpa.get("spec")), _d(hpa.get("status"))
    annotations = _d(_d(hpa.get("metadata")).get("annotations"))
    metrics: list[Obj] = []
    others = _annotation_list(annotations, METRICS)
    if others is not None:
        metrics = [_metric_to_v2(m) for m in others]
    cpu = spec.get("targetCPUUtilizationPercentage")
    utilization = DEFAULT_CPU_UTILIZATION if cpu is None and not metrics else cpu
    if utilization is not None:  # after the others, as upstream places it
        target = {"type": "Utilization", "averageUtilization": utilization}
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
    v2_spec = _some(
        scaleTargetRef=_ref(spec.get("scaleTargetRef")),
        minReplicas=spec.get("minReplicas"),
        maxReplicas=spec.get("maxReplicas"),
        metrics=metrics,
        behavior=_behavior(annotations),
    )
    v2_status = _some(
        observedGeneration=status.get("observedGeneration"),
        lastScaleTime=status.get("lastScaleTime"),
        currentReplicas=status.get("currentReplicas"),
        desiredReplicas=status.get("desiredReplicas"),
    )
    current = _annotation_list(annotations, CURRENT_METRICS)
    if current is not None:
        v2_status["currentMetrics"] = [_status_metric_to_v2(m) for m in current]
    elif status.get("currentCPUUtilizationPercentage") is not None:
        cpu_now = {"averageUtilization": status["currentCPUUtilizationPercentage"]}
        v2_status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": cpu_now}}]
    conditions = _annotation_list(annotations, CONDITIONS)
    if conditions is not None:
        v2_status["conditions"] = [_condition(c) for c in conditions]
    out: Obj = {"kind": hpa.get("kind", "HorizontalPodAutoscaler"), "apiVersion": V2, "metadata": _meta(hpa, {})}
    out["spec"] = v2_spec
    if v2_status or "status" in hpa:
        out["status"] = v2_status
    return out
