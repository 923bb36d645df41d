"""Create-time validation of API objects, reporting the first bad field by its path.

Owns the rules an object must pass before the apiserver stores it or a scenario loader
accepts it: metadata names, labels and annotations, pod specs, and the per-kind rules for
the kinds in ``objects.KINDS``. Called by the apiserver on create and by the scenario
loader (with a path prefix such as ``spec.objects[3]``). Only fields kubemu models are
checked; unknown fields are kept and ignored, never rejected.

Error lines have one of two shapes (docs/architecture.md §2):
``<path>: <json value> <detail>`` when a bad value is shown, else ``<path>: <detail>``.
The error type and the field getters live in ``validationfields``, the ``kubemu.io/``
annotation rules in ``annotationvalidation`` and the workload kinds' rules in
``workloadvalidation``; ``ValidationError`` and ``NO_VALUE`` are re-exported from here,
where callers import them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import kindspec
from .datakeyvalidation import check_config_map, check_secret
from .networkvalidation import check_endpoints, check_ingress, check_network_policy
from .objects import KINDS
from .podvalidation import (
    PREEMPTION_POLICIES,
    TAINT_EFFECTS,
    check_pod,
    forbidden,
    quantities,
    validate_create,
    validate_pod_spec,
)
from .selectors import (
    KEY_RULE as _KEY_RULE,
)
from .selectors import (
    LabelSelector,
    is_dns_label,
    is_dns_subdomain,
    is_label_value,
    is_qualified_name,
)
from .servicevalidation import check_resource_quota, check_service
from .storagevalidation import check_persistent_volume, check_persistent_volume_claim
from .validationfields import (
    NO_VALUE,
    ValidationError,
    _at,
    _enum,
    _int,
    _is_int,
    _item_map,
    _items,
    _map,
    _required,
    _str,
    check_labels,
    check_name,
    compile_selector,
    metadata_paths,
)
from .workloadvalidation import CHECKS as WORKLOAD_CHECKS
from .workloadvalidation import FieldError, check_daemonset

__all__ = [
    "ValidationError",
    "NO_VALUE",
    "validate",
    "validate_create",
    "validate_pod_spec",
    "API_VERSIONS",
    "HIGHEST_USER_PRIORITY",
    "SYSTEM_PRIORITY_CLASSES",
    "is_dns_label",
    "is_dns_subdomain",
    "is_qualified_name",
    "is_label_value",  # re-exported
]

HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": 2 * HIGHEST_USER_PRIORITY,
    "system-node-critical": 2 * HIGHEST_USER_PRIORITY + 1000,
}
SYSTEM_PREFIX = "system-"


# ---- names, labels, annotations --------------------------------------------------------


def _check_metadata(obj: dict[str, Any], path: str, kind: str, name_required: bool = True) -> None:
    mpath, name_path, ns_path, labels_path, annotations_path = metadata_paths(path)
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = _map(obj, "metadata", path)  # {} when absent; raises when not a map
    name = meta.get("name")
    if name in (None, ""):
        if name_required and not meta.get("generateName"):
            _required(name_path, "name or generateName is required")
        _str(meta, "generateName", mpath)
    else:
        check_name(name, name_path, label=(kind == "Namespace"))
    ns = meta.get("namespace")
    if ns not in (None, ""):
        check_name(ns, ns_path, label=True)
    if meta.get("labels") is not None:  # (most objects have no annotations, many no labels)
        check_labels(_map(meta, "labels", mpath), labels_path)
    if meta.get("annotations") is not None:
        check_labels(_map(meta, "annotations", mpath), annotations_path, annotations=True)


# ---- other kinds -----------------------------------------------------------------------


def _spec(obj: dict[str, Any], path: str) -> tuple[dict[str, Any], str]:
    return _map(obj, "spec", path), _at(path, "spec")


def _check_node(obj: dict[str, Any], path: str) -> None:
    spec, spath = _spec(obj, path)
    for p, taint in _items(spec, "taints", spath):
        if not taint.get("key"):
            _required(_at(p, "key"))
        if not is_qualified_name(taint["key"]):
            raise ValidationError(_at(p, "key"), taint["key"], _KEY_RULE)
        if not taint.get("effect"):
            _required(_at(p, "effect"))
        _enum(taint, "effect", p, TAINT_EFFECTS)
        _str(taint, "value", p)
    status = _map(obj, "status", path)
    for field in ("capacity", "allocatable"):
        quantities(status, field, _at(path, "status"))


_SYSTEM_NAME_FORBIDDEN = (
    "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: "
)
_USER_VALUE_FORBIDDEN = f"Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"


def _system_class_problem(name: str, pc: dict[str, Any]) -> str | None:
    want = SYSTEM_PRIORITY_CLASSES.get(name)
    if want is None:
        return f"{name} is not a known system priority class"
    if pc.get("value") != want:
        return f"value of {name} PriorityClass must be {want}"
    if pc.get("globalDefault"):
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def _check_priority_class(obj: dict[str, Any], path: str) -> None:
    value = _int(obj, "value", path, -(2**31), 2**31 - 1, required=True)
    assert value is not None  # required: _int raised if it was missing
    if obj.get("globalDefault") is not None and not isinstance(obj["globalDefault"], bool):
        raise ValidationError(_at(path, "globalDefault"), obj["globalDefault"], "must be a boolean")
    name = (obj.get("metadata") or {}).get("name") or ""
    if name.startswith(SYSTEM_PREFIX):
        problem = _system_class_problem(name, obj)
        if problem:
            raise ValidationError(_at(path, "metadata.name"), NO_VALUE, _SYSTEM_NAME_FORBIDDEN + problem)
    elif value > HIGHEST_USER_PRIORITY:
        raise ValidationError(_at(path, "value"), NO_VALUE, _USER_VALUE_FORBIDDEN)
    _enum(obj, "preemptionPolicy", path, PREEMPTION_POLICIES)


def _check_selector(spec: dict[str, Any], spath: str, required: bool) -> LabelSelector | None:
    path = _at(spath, "selector")
    raw = spec.get("selector")
    if raw is None:
        if required:
            _required(path)
        return None
    if isinstance(raw, dict) and isinstance(raw.get("matchLabels"), dict):
        check_labels(raw["matchLabels"], _at(path, "matchLabels"))
    return compile_selector(raw, path)


_PERCENT = re.compile(r"([0-9]+)%")


def _check_int_or_percent(spec: dict[str, Any], field: str, path: str) -> None:
    v, p = spec[field], _at(path, field)
    if _is_int(v):
        _int(spec, field, path, lo=0)
        return
    m = _PERCENT.fullmatch(v) if isinstance(v, str) else None
    if not m:
        raise ValidationError(p, v, 'must be an integer or a percentage (e.g. "50%")')
    if int(m.group(1)) > 100:
        raise ValidationError(p, v, "must be a percentage between 0% and 100%")


def _check_pdb(obj: dict[str, Any], path: str) -> None:
    spec, spath = _spec(obj, path)
    given = [f for f in ("minAvailable", "maxUnavailable") if spec.get(f) is not None]
    if not given:
        _required(spath, "one of minAvailable or maxUnavailable")
    if len(given) == 2:
        raise ValidationError(spath, NO_VALUE, "minAvailable and maxUnavailable cannot both be set")
    _check_int_or_percent(spec, given[0], spath)
    _check_selector(spec, spath, required=False)


def _check_workload(obj: dict[str, Any], path: str) -> None:
    """ReplicaSet and DaemonSet: a non-empty selector that the pod template matches."""
    spec, spath = _spec(obj, path)
    if obj.get("kind") == "ReplicaSet":
        _int(spec, "replicas", spath, lo=0)
    selector = _check_selector(spec, spath, required=True)
    assert selector is not None  # required: _check_selector raised if it was missing
    if selector.empty:
        _required(_at(spath, "selector"), "a non-empty selector is required")
    tpath = _at(spath, "template")
    template = spec.get("template")
    if template is None:
        _required(tpath)
    _check_metadata(_item_map(template, tpath), tpath, "Pod", name_required=False)
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not selector.matches(labels):
        raise ValidationError(_at(tpath, "metadata.labels"), labels, f"does not match the selector {selector}")
    check_pod(template, tpath)
    _enum(template.get("spec") or {}, "restartPolicy", _at(tpath, "spec"), ("Always",))


def _check_replication_controller(obj: dict[str, Any], path: str) -> None:
    """A ReplicationController, judged as upstream judges it after defaulting: an absent or
    empty selector is the template's labels, and the template's labels must carry every
    selector pair (else the controller would create pods it can never count)."""
    spec, spath = _spec(obj, path)
    _int(spec, "replicas", spath, lo=0)
    _int(spec, "minReadySeconds", spath, lo=0)
    tpath = _at(spath, "template")
    template = spec.get("template")
    if template is None:
        _required(tpath)
    _check_metadata(_item_map(template, tpath), tpath, "Pod", name_required=False)
    labels = (template.get("metadata") or {}).get("labels") or {}
    selector = spec.get("selector") or labels
    if not isinstance(selector, dict) or not all(isinstance(v, str) for v in selector.values()):
        raise ValidationError(_at(spath, "selector"), selector, "must be a map of label keys to values")
    if not selector:
        _required(_at(spath, "selector"))
    if any(labels.get(k) != v for k, v in selector.items()):
        raise ValidationError(_at(tpath, "metadata.labels"), labels, "selector does not match template labels")
    check_pod(template, tpath)
    _enum(template.get("spec") or {}, "restartPolicy", _at(tpath, "spec"), ("Always",))


def _check_lease(obj: dict[str, Any], path: str) -> None:
    spec, spath = _spec(obj, path)
    _str(spec, "holderIdentity", spath)
    _int(spec, "leaseDurationSeconds", spath, lo=0)
    _int(spec, "leaseTransitions", spath, lo=0)


def _check_event(obj: dict[str, Any], path: str) -> None:
    if obj.get("involvedObject") is None:
        _required(_at(path, "involvedObject"))
    _map(obj, "involvedObject", path)
    _str(obj, "reason", path)
    _str(obj, "message", path)


# Each kind's create rules, kept in its spec (``kindspec``); ``validate`` reads them there.
kindspec.attach_all(
    "validate",
    {
        "Pod": check_pod,
        "Node": _check_node,
        "Namespace": lambda obj, path: None,  # its name is all there is to check
        "Event": _check_event,
        "PriorityClass": _check_priority_class,
        "PodDisruptionBudget": _check_pdb,
        "ReplicaSet": _check_workload,
        "ReplicationController": _check_replication_controller,
        "DaemonSet": lambda obj, path: _check_daemonset(obj, path),
        "Lease": _check_lease,
        "Secret": check_secret,
        "ConfigMap": check_config_map,
        "Service": check_service,
        "ResourceQuota": check_resource_quota,
        "PersistentVolume": check_persistent_volume,
        "PersistentVolumeClaim": check_persistent_volume_claim,
        "Endpoints": check_endpoints,
        "Ingress": check_ingress,
        "NetworkPolicy": check_network_policy,
        # The workload kinds' own rules (upstream's messages), then their pod templates.
        **{kind: (lambda obj, path, kind=kind: _check_workload_kind(kind, obj, path)) for kind in WORKLOAD_CHECKS},
    },
)

# Older API versions whose shape is the same for the fields kubemu reads.
_EXTRA_VERSIONS = {
    "PriorityClass": ("scheduling.k8s.io/v1beta1",),
    "PodDisruptionBudget": ("policy/v1beta1",),
}
API_VERSIONS = {kind: (version,) + _EXTRA_VERSIONS.get(kind, ()) for kind, (version, _) in KINDS.items()}


def validate(obj: dict[str, Any], path: str = "") -> None:
    """Raise a ValidationError for the first invalid field of ``obj``; paths start at ``path``."""
    if not isinstance(obj, dict):
        raise ValidationError(path, obj, "must be a map (a Kubernetes object)")
    kind = obj.get("kind")
    if not kind:
        _required(_at(path, "kind"))
    if not isinstance(kind, str) or kind not in KINDS:
        known = ", ".join(sorted(KINDS))
        raise ValidationError(_at(path, "kind"), kind, f"is not a kind kubemu serves (known: {known})")
    versions = API_VERSIONS.get(kind) or (KINDS[kind][0],)  # a custom kind: its one version
    if obj.get("apiVersion") not in versions:
        shown = " or ".join(json.dumps(v) for v in versions)
        raise ValidationError(_at(path, "apiVersion"), obj.get("apiVersion"), f"is not served for {kind} (use {shown})")
    _check_metadata(obj, path, kind)
    spec = kindspec.get(kind)
    if spec is not None and spec.validate is not None:  # a kind only stored: its metadata, nothing more
        spec.validate(obj, path)


def _check_daemonset(obj: dict[str, Any], path: str) -> None:
    _check_workload(obj, path)
    _check_workload_rules(check_daemonset, obj, path)


def _check_workload_rules(check: Any, obj: dict[str, Any], path: str) -> None:
    try:
        check(obj)
    except FieldError as e:
        raise ValidationError(_at(path, e.path), NO_VALUE, e.message) from None


# Where each workload kind keeps its pod template.
_TEMPLATE_AT = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


def _check_workload_kind(kind: str, obj: dict[str, Any], path: str) -> None:
    """A workload kind's own rules (upstream's messages), then its pod template as a pod."""
    _check_workload_rules(WORKLOAD_CHECKS[kind], obj, path)
    where = _TEMPLATE_AT.get(kind)
    if where is None:
        return
    template: Any = obj
    for field in where:
        template = (template or {}).get(field) if isinstance(template, dict) else None
    tpath = _at(path, ".".join(where))
    _check_metadata(_item_map(template, tpath), tpath, "Pod", name_required=False)
    if ((template or {}).get("spec") or {}).get("ephemeralContainers"):
        field, why = _at(tpath, "spec.ephemeralContainers"), "ephemeral containers not allowed in pod template"
        raise ValidationError(field, NO_VALUE, f"Forbidden: {why}", (forbidden(field, why),))
    check_pod(template, tpath)
