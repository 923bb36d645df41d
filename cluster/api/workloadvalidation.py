"""Validation of the workload kinds: Deployment, DaemonSet, StatefulSet, Job, CronJob,
HorizontalPodAutoscaler.

Owns the field rules of upstream's apps, batch and autoscaling validation, with
upstream's field paths and messages in upstream's shape (``spec.replicas: Invalid value:
-1: must be greater than or equal to 0``), so ``kubectl apply`` of a bad manifest prints
what a real apiserver would. ``validation.validate`` calls ``CHECKS[kind]`` after the
metadata checks; validation runs before defaulting (``cluster/apiserver/workloaddefaults.py``),
so a field the apiserver defaults may be absent here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NoReturn

from .cronschedule import CronError, check_time_zone, parse_schedule
from .quantity import QuantityError, parse
from .selectors import LabelSelector, SelectorError
from .validationfields import Shown
from .validationfields import shown as _go

_PERCENT = re.compile(r"[0-9]+%")
MAX_INT32 = 2**31 - 1


class FieldError(ValueError):
    """One invalid field, in upstream's words; ``validation`` turns it into its own error."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


def _strings(values: Any) -> str:
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(json.dumps(str(v)) for v in values) + "}"


def label_selector_shown(sel: Any) -> Shown:
    """A LabelSelector as upstream's field errors print it: ``%#v`` of the Go struct."""
    if not isinstance(sel, dict):
        return Shown("null")
    labels = sel.get("matchLabels")
    if labels is None:
        shown_labels = "map[string]string(nil)"
    else:
        inner = ", ".join(f"{json.dumps(str(k))}:{json.dumps(str(v))}" for k, v in sorted(labels.items()))
        shown_labels = f"map[string]string{{{inner}}}"
    exprs = sel.get("matchExpressions")
    if exprs is None:
        shown_exprs = "[]v1.LabelSelectorRequirement(nil)"
    else:
        items = [
            f"v1.LabelSelectorRequirement{{Key:{json.dumps(str(e.get('key', '')))}, "
            f"Operator:{json.dumps(str(e.get('operator', '')))}, Values:{_strings(e.get('values'))}}}"
            for e in exprs
            if isinstance(e, dict)
        ]
        shown_exprs = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    return Shown(f"v1.LabelSelector{{MatchLabels:{shown_labels}, MatchExpressions:{shown_exprs}}}")


def invalid(path: str, value: Any, detail: str) -> NoReturn:
    raise FieldError(path, f"Invalid value: {_go(value)}: {detail}")


def required(path: str) -> NoReturn:
    raise FieldError(path, "Required value")


def forbidden(path: str, detail: str) -> NoReturn:
    raise FieldError(path, f"Forbidden: {detail}")


def unsupported(path: str, value: Any, allowed: tuple[str, ...]) -> NoReturn:
    raise FieldError(path, f"Unsupported value: {_go(value)}: supported values: {', '.join(map(json.dumps, allowed))}")


def _nonneg(spec: dict[str, Any], field: str, path: str) -> int | None:
    v = spec.get(field)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        invalid(f"{path}.{field}", v, "must be an integer")
    if v < 0:
        invalid(f"{path}.{field}", v, "must be greater than or equal to 0")
    return v


def _enum(spec: dict[str, Any], field: str, path: str, allowed: tuple[str, ...]) -> None:
    v = spec.get(field)
    if v is not None and v not in allowed:
        unsupported(f"{path}.{field}", v, allowed)


def _map(d: dict[str, Any], field: str, path: str) -> dict[str, Any]:
    v = d.get(field)
    if v is not None and not isinstance(v, dict):
        invalid(f"{path}.{field}", v, "must be an object")
    return v or {}


# ---- shared -------------------------------------------------------------------------


def _selector(spec: dict[str, Any], path: str, kind: str, need: bool = True) -> LabelSelector | None:
    raw = spec.get("selector")
    if raw is None:
        if need:
            required(f"{path}.selector")
        return None
    try:
        selector = LabelSelector.from_dict(raw)
    except SelectorError as e:
        invalid(f"{path}.selector", raw, e.detail)
    if selector.empty:
        invalid(f"{path}.selector", raw, f"empty selector is invalid for {kind}")
    return selector


def _template_labels(spec: dict[str, Any], path: str, selector: LabelSelector | None) -> None:
    template = _map(spec, "template", path)
    if not template:
        required(f"{path}.template")
    labels = _map(template, "metadata", f"{path}.template").get("labels") or {}
    if selector is not None and not selector.matches(labels):
        invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`")


def _restart_policy(spec: dict[str, Any], path: str, allowed: tuple[str, ...]) -> None:
    pod = _map(_map(spec, "template", path), "spec", f"{path}.template")
    policy = pod.get("restartPolicy") or "Always"  # the pod default, as upstream validates it
    if policy not in allowed:
        unsupported(f"{path}.template.spec.restartPolicy", policy, allowed)
    if pod.get("activeDeadlineSeconds") is not None and "Always" in allowed:
        forbidden(f"{path}.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicaSet is not Supported")


def int_or_percent(value: Any, path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        invalid(path, value, "must be an integer or percentage (e.g. '5%')")
    if isinstance(value, int):
        if value < 0:
            invalid(path, value, "must be greater than or equal to 0")
        return
    if not _PERCENT.fullmatch(value):
        invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%'")


def resolve_percent(value: Any, total: int, round_up: bool) -> int:
    """An int-or-percent against ``total`` (upstream GetScaledValueFromIntOrPercent)."""
    if isinstance(value, int):
        return value
    pct = int(str(value).rstrip("%"))
    whole, rest = divmod(pct * total, 100)
    return whole + (1 if round_up and rest else 0)


# ---- Deployment ----------------------------------------------------------------------


def check_deployment(obj: dict[str, Any]) -> None:
    spec, path = _map(obj, "spec", ""), "spec"
    selector = _selector(spec, path, "deployment")
    _template_labels(spec, path, selector)
    for field in ("replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        _nonneg(spec, field, path)
    deadline, min_ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds") or 0
    if deadline is not None and deadline != MAX_INT32 and deadline <= min_ready:
        invalid(f"{path}.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds")
    _strategy(_map(spec, "strategy", path), f"{path}.strategy")
    _restart_policy(spec, path, ("Always",))


def _strategy(strategy: dict[str, Any], path: str) -> None:
    kind = strategy.get("type") or "RollingUpdate"
    if kind not in ("Recreate", "RollingUpdate"):
        unsupported(f"{path}.type", kind, ("Recreate", "RollingUpdate"))
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
        return
    rolling = _map(strategy, "rollingUpdate", path)
    rpath = f"{path}.rollingUpdate"
    surge, unavailable = rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%")
    int_or_percent(surge, f"{rpath}.maxSurge")
    int_or_percent(unavailable, f"{rpath}.maxUnavailable")
    if resolve_percent(surge, 100, True) == 0 and resolve_percent(unavailable, 100, True) == 0:
        invalid(f"{rpath}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
    if isinstance(unavailable, str) and int(unavailable.rstrip("%")) > 100:
        invalid(f"{rpath}.maxUnavailable", unavailable, "must not be greater than 100%")


# ---- DaemonSet -----------------------------------------------------------------------


def check_daemonset(obj: dict[str, Any]) -> None:
    """The update strategy and counters (upstream ValidateDaemonSetSpec's share of them;
    ``validation`` checks the selector and template first); absent fields are judged as
    the apiserver will default them."""
    spec, path = _map(obj, "spec", ""), "spec"
    for field in ("minReadySeconds", "revisionHistoryLimit"):
        _nonneg(spec, field, path)
    strategy, spath = _map(spec, "updateStrategy", path), f"{path}.updateStrategy"
    kind = strategy.get("type") or "RollingUpdate"
    if kind not in ("RollingUpdate", "OnDelete"):
        unsupported(spath, kind, ("RollingUpdate", "OnDelete"))
    if kind == "OnDelete":
        return
    rolling, rpath = _map(strategy, "rollingUpdate", spath), f"{spath}.rollingUpdate"
    surge, unavailable = rolling.get("maxSurge", 0), rolling.get("maxUnavailable", 1)
    for value, name in ((unavailable, "maxUnavailable"), (surge, "maxSurge")):
        int_or_percent(value, f"{rpath}.{name}")
        if isinstance(value, str) and int(value.rstrip("%")) > 100:
            invalid(f"{rpath}.{name}", value, "must not be greater than 100%")
    has_surge, has_unavailable = resolve_percent(surge, 100, True) != 0, resolve_percent(unavailable, 100, True) != 0
    if has_surge and has_unavailable:
        invalid(f"{rpath}.maxSurge", surge, "may not be set when maxUnavailable is non-zero")
    if not has_surge and not has_unavailable:
        raise FieldError(f"{rpath}.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0")


# ---- StatefulSet ---------------------------------------------------------------------


def check_statefulset(obj: dict[str, Any]) -> None:
    spec, path = _map(obj, "spec", ""), "spec"
    name = (obj.get("metadata") or {}).get("name") or ""
    if len(name) > 63 or not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name or "a"):
        invalid(
            "metadata.name",
            name,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
        )
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in ("OrderedReady", "Parallel"):
        invalid(f"{path}.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
    strategy = _map(spec, "updateStrategy", path)
    kind = strategy.get("type") or "RollingUpdate"
    if kind not in ("RollingUpdate", "OnDelete"):
        invalid(f"{path}.updateStrategy", kind, "must be 'RollingUpdate' or 'OnDelete'")
    if kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
        invalid(
            f"{path}.updateStrategy.rollingUpdate",
            strategy["rollingUpdate"],
            "only allowed for updateStrategy 'RollingUpdate'",
        )
    if kind == "RollingUpdate":
        _nonneg(
            _map(strategy, "rollingUpdate", f"{path}.updateStrategy"),
            "partition",
            f"{path}.updateStrategy.rollingUpdate",
        )
    for field in ("replicas", "minReadySeconds", "revisionHistoryLimit"):
        _nonneg(spec, field, path)
    _nonneg(_map(spec, "ordinals", path), "start", f"{path}.ordinals")
    selector = _selector(spec, path, "statefulset")
    _template_labels(spec, path, selector)
    _restart_policy(spec, path, ("Always",))


# ---- Job and CronJob -----------------------------------------------------------------


def check_job(obj: dict[str, Any]) -> None:
    uid = (obj.get("metadata") or {}).get("uid")
    _job_spec(_map(obj, "spec", ""), "spec", uid)


def _job_spec(spec: dict[str, Any], path: str, uid: str | None) -> None:
    for field in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        _nonneg(spec, field, path)
    _enum(spec, "completionMode", path, ("NonIndexed", "Indexed"))
    if spec.get("completionMode") == "Indexed":
        if spec.get("completions") is None:
            raise FieldError(f"{path}.completions", "Required value: when completion mode is Indexed")
        for field in ("completions", "parallelism"):
            if (spec.get(field) or 0) > 100_000:
                invalid(
                    f"{path}.{field}",
                    spec[field],
                    "must be less than or equal to 100000 when completion mode is Indexed",
                )
    _job_selector(spec, path, uid)
    if not _map(spec, "template", path):
        required(f"{path}.template")
    _restart_policy(spec, path, ("OnFailure", "Never"))
    if spec.get("podFailurePolicy") is not None:
        policy = (_map(_map(spec, "template", path), "spec", f"{path}.template").get("restartPolicy")) or "Always"
        if policy != "Never":
            invalid(
                f"{path}.template.spec.restartPolicy",
                policy,
                'only "Never" is supported when podFailurePolicy is specified',
            )
    _enum(spec, "podReplacementPolicy", path, ("TerminatingOrFailed", "Failed"))


def _job_selector(spec: dict[str, Any], path: str, uid: str | None) -> None:
    raw = spec.get("selector")
    if raw is None:
        return
    if spec.get("manualSelector"):
        _template_labels(spec, path, _selector(spec, path, "job"))
        return
    generated = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}} if uid else None
    if raw != generated:  # the one an update carries back is the apiserver's own
        invalid(f"{path}.selector", raw, "`selector` not auto-generated")


def check_cronjob(obj: dict[str, Any]) -> None:
    spec, path = _map(obj, "spec", ""), "spec"
    name = (obj.get("metadata") or {}).get("name") or ""
    if len(name) > 52:
        invalid("metadata.name", name, "must be no more than 52 characters")
    schedule = spec.get("schedule")
    if not schedule:
        required(f"{path}.schedule")
    if not isinstance(schedule, str):
        invalid(f"{path}.schedule", schedule, "must be a string")
    try:
        parse_schedule(schedule)
    except CronError as e:
        invalid(f"{path}.schedule", schedule, str(e))
    zone = spec.get("timeZone")
    if zone is not None:
        try:
            check_time_zone(zone)
        except CronError as e:
            invalid(f"{path}.timeZone", zone, str(e))
    _enum(spec, "concurrencyPolicy", path, ("Allow", "Forbid", "Replace"))
    for field in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        _nonneg(spec, field, path)
    template = _map(spec, "jobTemplate", path)
    if not template:
        required(f"{path}.jobTemplate")
    _job_spec(_map(template, "spec", f"{path}.jobTemplate"), f"{path}.jobTemplate.spec", None)


# ---- HorizontalPodAutoscaler ---------------------------------------------------------


def check_hpa(obj: dict[str, Any]) -> None:
    spec, path = _map(obj, "spec", ""), "spec"
    ref = _map(spec, "scaleTargetRef", path)
    _object_ref(ref, f"{path}.scaleTargetRef")
    low = spec.get("minReplicas")
    if low is not None and (not isinstance(low, int) or low < 1):
        invalid(f"{path}.minReplicas", low, "must be greater than or equal to 1")
    high = spec.get("maxReplicas")
    if high is None:
        required(f"{path}.maxReplicas")
    if not isinstance(high, int) or high < 1:
        invalid(f"{path}.maxReplicas", high, "must be greater than 0")
    if high < (low or 1):
        invalid(f"{path}.maxReplicas", high, "must be greater than or equal to `minReplicas`")
    for i, metric in enumerate(spec.get("metrics") or ()):
        _metric(metric, f"{path}.metrics[{i}]")


# The metric source types (upstream's sorted list) and the field each one fills.
METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCE = {"Object": "object", "External": "external", "Pods": "pods", "Resource": "resource"}
_SOURCE["ContainerResource"] = "containerResource"
_STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _required_because(path: str, detail: str) -> NoReturn:
    raise FieldError(path, f"Required value: {detail}")


def _path_segment(value: str, path: str) -> None:
    """upstream's IsValidPathSegmentName: a name that can stand in a URL path."""
    for bad, text in ((".", "may not be '.'"), ("..", "may not be '..'")):
        if value == bad:
            invalid(path, value, text)
    for ch in ("/", "%"):
        if ch in value:
            invalid(path, value, f"may not contain '{ch}'")


def _object_ref(ref: dict[str, Any], path: str) -> None:
    for field in ("kind", "name"):
        if not ref.get(field):
            required(f"{path}.{field}")
        _path_segment(str(ref[field]), f"{path}.{field}")


def _metric(metric: Any, path: str) -> None:
    """upstream's validateMetricSpec: a known type, its source filled in (the first source
    present is checked), and no other source beside it."""
    if not isinstance(metric, dict):
        invalid(path, metric, "must be an object")
    kind = metric.get("type")
    if not kind:
        _required_because(f"{path}.type", "must specify a metric source type")
    if kind not in METRIC_TYPES:
        unsupported(f"{path}.type", kind, METRIC_TYPES)
    present = [f for f in ("object", "external", "pods", "resource", "containerResource") if metric.get(f) is not None]
    if present:
        _SOURCE_CHECKS[present[0]](_map(metric, present[0], path), f"{path}.{present[0]}")
    expected = _SOURCE[kind]
    if metric.get(expected) is None:
        _required_because(f"{path}.{expected}", "must populate information for the given metric source")
    for extra in present:
        if extra != expected:
            forbidden(f"{path}.{extra}", "must populate the given metric source only")


def _target(src: dict[str, Any], path: str) -> dict[str, Any]:
    """upstream's validateMetricTarget: a known type and positive values."""
    target = _map(src, "target", path)
    path = f"{path}.target"
    kind = target.get("type")
    if not kind:
        _required_because(f"{path}.type", "must specify a metric target type")
    if kind not in ("Utilization", "Value", "AverageValue"):
        invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue")
    for field in ("value", "averageValue"):
        if target.get(field) is not None and not _positive(target[field]):
            invalid(f"{path}.{field}", target[field], "must be positive")
    utilization = target.get("averageUtilization")
    if utilization is not None and (not isinstance(utilization, int) or utilization < 1):
        invalid(f"{path}.averageUtilization", utilization, "must be greater than 0")
    return target


def _positive(quantity: Any) -> bool:
    try:
        return parse(quantity) > 0
    except QuantityError:
        return False


def _metric_id(src: dict[str, Any], path: str) -> None:
    name = _map(src, "metric", path).get("name")
    if not name:
        _required_because(f"{path}.metric.name", "must specify a metric name")
    _path_segment(str(name), f"{path}.metric.name")


def _object_source(src: dict[str, Any], path: str) -> None:
    _object_ref(_map(src, "describedObject", path), f"{path}.describedObject")
    _metric_id(src, path)
    target = _target(src, path)
    if target.get("value") is None and target.get("averageValue") is None:
        _required_because(f"{path}.target.averageValue", "must set either a target value or averageValue")


def _external_source(src: dict[str, Any], path: str) -> None:
    _metric_id(src, path)
    target = _target(src, path)
    if target.get("value") is None and target.get("averageValue") is None:
        _required_because(
            f"{path}.target.averageValue", "must set either a target value for metric or a per-pod target"
        )
    if target.get("value") is not None and target.get("averageValue") is not None:
        forbidden(f"{path}.target.value", "may not set both a target value for metric and a per-pod target")


def _pods_source(src: dict[str, Any], path: str) -> None:
    _metric_id(src, path)
    if _target(src, path).get("averageValue") is None:
        _required_because(f"{path}.target.averageValue", "must specify a positive target averageValue")


def _resource_source(src: dict[str, Any], path: str, container: bool = False) -> None:
    name = str(src.get("name") or "")
    if not name:
        _required_because(f"{path}.name", "must specify a resource name")
    if container:
        if "/" not in name and name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            invalid(f"{path}.name", name, "must be a standard resource for containers")
        owner = str(src.get("container") or "")
        if not owner:
            _required_because(f"{path}.container", "must specify a container")
        if len(owner) > 63 or not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", owner):
            invalid(f"{path}.container", owner, _DNS1123_LABEL)
    target = _target(src, path)
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        _required_because(
            f"{path}.target.averageUtilization", "must set either a target raw value or a target utilization"
        )
    if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        forbidden(f"{path}.target.averageValue", "may not set both a target raw value and a target utilization")


_DNS1123_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SOURCE_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "object": _object_source,
    "external": _external_source,
    "pods": _pods_source,
    "resource": _resource_source,
    "containerResource": lambda src, path: _resource_source(src, path, container=True),
}


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "Deployment": check_deployment,
    "StatefulSet": check_statefulset,
    "Job": check_job,
    "CronJob": check_cronjob,
    "HorizontalPodAutoscaler": check_hpa,
}
