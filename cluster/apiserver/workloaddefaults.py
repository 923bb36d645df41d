"""Defaulting of every kind but Pod, and ``metadata.generation``, as the apiserver applies them.

Owns the fields the apiserver fills in for Deployments, ReplicaSets, DaemonSets,
StatefulSets, Jobs, CronJobs and HorizontalPodAutoscalers (upstream's
SetDefaults_* of apps, batch and autoscaling), the dispatch to the core kinds'
defaults (``defaults.py``, which also defaults every pod template), a DaemonSet's
``deprecated.daemonset.template.generation`` annotation (1 at create, one more whenever
an update changes the template), and the ``metadata.generation`` rule: 1 at create, one
more whenever an update changes the spec, untouched by status and metadata-only writes.
Pods are defaulted by admission (``admission.py``). The apiserver logic
(``apiserver.py``) calls ``default_object`` on every create and update (after
validation; upstream defaults on decode, so a re-applied manifest compares equal to the
stored one) and ``next_generation`` on every update. Who reads the result: the workload
controllers (``cluster/controllers/``) and clients (``kubectl rollout status`` waits for
``status.observedGeneration >= metadata.generation``).
"""

from __future__ import annotations

from typing import Any

from ..api import kindspec
from ..api.kinds import BY_KIND, CUSTOM
from .defaults import CORE_DEFAULTS, default_pod_spec

JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
# The unprefixed labels upstream still adds beside the prefixed ones.
LEGACY_JOB_UID_LABEL, LEGACY_JOB_NAME_LABEL = "controller-uid", "job-name"
_NO_GENERATION = frozenset({"Pod", "Node", "Namespace"})
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def has_generation(kind: str) -> bool:
    """Kinds with a spec and a status subresource count generations (Pods too upstream
    since 1.33; kubemu leaves them out, as nothing reads it and pods are most writes)."""
    r = BY_KIND.get(kind) or CUSTOM.get(kind)
    return r is not None and "status" in r.subresources and kind not in _NO_GENERATION


def next_generation(kind: str, current: dict, new: dict) -> None:
    """Set ``new``'s generation from ``current``'s: one more when the spec changed."""
    if not has_generation(kind):
        return
    gen = (current.get("metadata") or {}).get("generation") or 1
    changed = _spec(kind, current) != _spec(kind, new)
    new.setdefault("metadata", {})["generation"] = gen + 1 if changed else gen
    if kind == "DaemonSet":
        _template_generation(current, new)


def _template_generation(current: dict, new: dict) -> None:
    """The DaemonSet strategy's template generation: the stored one, one more when the
    template changed (whatever the update sent)."""
    was = _int_annotation(current, TEMPLATE_GENERATION) or 1
    changed = (current.get("spec") or {}).get("template") != (new.get("spec") or {}).get("template")
    annotations = new.setdefault("metadata", {}).get("annotations")
    if not isinstance(annotations, dict):
        annotations = new["metadata"]["annotations"] = {}
    annotations[TEMPLATE_GENERATION] = str(was + 1 if changed else was)


def _int_annotation(obj: dict, key: str) -> int:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        return int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def _spec(kind: str, obj: dict) -> Any:
    # A custom resource's "spec" is whatever is not metadata or status.
    if kind in CUSTOM:
        return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
    return obj.get("spec")


def default_object(kind: str, obj: dict, creating: bool) -> None:
    """Fill in ``obj``'s defaults in place (and, at create, its first generation)."""
    if creating and has_generation(kind):
        obj.setdefault("metadata", {})["generation"] = 1
    if creating and kind == "DaemonSet" and _int_annotation(obj, TEMPLATE_GENERATION) < 1:
        annotations = obj["metadata"].get("annotations")
        if not isinstance(annotations, dict):
            annotations = obj["metadata"]["annotations"] = {}
        annotations[TEMPLATE_GENERATION] = "1"
    spec = kindspec.get(kind)
    if spec is not None and spec.defaults is not None:
        spec.defaults(obj)


def prune_nulls(value: Any) -> Any:
    """``value`` without null map entries: a typed upstream field sent as null is unset
    (kubectl's rollout undo sends a template with ``creationTimestamp: null``), and a
    template must compare equal to the one it was copied from."""
    if isinstance(value, dict):
        return {k: prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [prune_nulls(v) for v in value]
    return value


def _template_spec(spec: dict) -> dict:
    if isinstance(spec.get("template"), dict):
        spec["template"] = prune_nulls(spec["template"])
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {})
    return template.setdefault("spec", {})


def _default_pod_template(spec: dict) -> None:
    default_pod_spec(_template_spec(spec))


def _deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxSurge", "25%")
        rolling.setdefault("maxUnavailable", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _default_pod_template(spec)


def _replicaset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    _default_pod_template(spec)


def _daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _default_pod_template(spec)


def _statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        # Upstream adds rollingUpdate only when it chose the type itself.
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        strategy["rollingUpdate"].setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _default_pod_template(spec)


def _job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    _job_spec(spec)
    m = obj.setdefault("metadata", {})
    uid = m.get("uid")
    if uid and not spec.get("manualSelector"):
        tm = spec["template"]["metadata"]
        labels = tm.setdefault("labels", {})
        labels.update({JOB_UID_LABEL: uid, JOB_NAME_LABEL: m.get("name", "")})
        labels.update({LEGACY_JOB_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: m.get("name", "")})
        spec.setdefault("selector", {"matchLabels": {JOB_UID_LABEL: uid}})
    if not m.get("labels") and spec["template"]["metadata"].get("labels"):
        m["labels"] = dict(spec["template"]["metadata"]["labels"])


def _job_spec(spec: dict) -> None:
    """A Job's spec defaults."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or ():
        for pattern in rule.get("onPodConditions") or ():
            if not pattern.get("status"):
                pattern["status"] = "True"
    _default_pod_template(spec)


def _cronjob(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    # Only the pod template's defaults: the Job's own come when the controller creates it.
    template = spec.setdefault("jobTemplate", {})
    _default_pod_template(template.setdefault("spec", {}))


def _hpa(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        target = {"type": "Utilization", "averageUtilization": 80}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    behavior = spec.get("behavior")
    if behavior is not None:
        up = behavior.setdefault("scaleUp", {})
        up.setdefault("stabilizationWindowSeconds", 0)
        up.setdefault("selectPolicy", "Max")
        up.setdefault(
            "policies",
            [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}],
        )
        down = behavior.setdefault("scaleDown", {})
        down.setdefault("selectPolicy", "Max")
        down.setdefault("policies", [{"type": "Percent", "value": 100, "periodSeconds": 15}])


# Each kind's defaults, kept in its spec (``kindspec``); ``default_object`` reads them there.
_DEFAULTS = {
    **CORE_DEFAULTS,
    "Deployment": _deployment,
    "ReplicaSet": _replicaset,
    "DaemonSet": _daemonset,
    "StatefulSet": _statefulset,
    "Job": _job,
    "CronJob": _cronjob,
    "HorizontalPodAutoscaler": _hpa,
}
kindspec.attach_all("defaults", _DEFAULTS)
