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
from fractions import Fraction
from typing import Any

from . import codec, kindspec
from .annotationvalidation import check_kubemu_annotations
from .containervalidation import check_container, check_node_affinity, check_volumes
from .datakeyvalidation import check_config_map, check_secret
from .errors import Cause
from .networkvalidation import check_endpoints, check_ingress, check_network_policy
from .objects import KINDS
from .quantity import QuantityError
from .quantity import parse as parse_quantity
from .resources import is_extended
from .selectors import (
    KEY_RULE as _KEY_RULE,
)
from .selectors import (
    VALUE_RULE as _VALUE_RULE,
)
from .selectors import (
    LabelSelector,
    SelectorError,
    is_dns_label,
    is_dns_subdomain,
    is_label_value,
    is_qualified_name,
)
from .servicevalidation import check_resource_quota, check_service
from .storagevalidation import check_persistent_volume, check_persistent_volume_claim
from .validationfields import (
    NO_VALUE,
    Errors,
    ValidationError,
    _at,
    _enum,
    _int,
    _is_int,
    _item_map,
    _items,
    _key,
    _list,
    _map,
    _required,
    _res_key,
    _str,
    check_name,
    metadata_paths,
    shown,
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


def _check_labels(labels: dict[str, Any], path: str, annotations: bool = False) -> None:
    """Keys are qualified names and values strings; label values are also length-limited."""
    for k, v in labels.items():
        if not annotations and v.__class__ is str and (k, v) in _GOOD_LABEL_PAIRS:
            continue  # a workload's pods repeat their labels: each pair is checked once
        if not is_qualified_name(k):
            raise ValidationError(_key(path, k), k, _KEY_RULE)
        if not isinstance(v, str):
            raise ValidationError(_key(path, k), v, "must be a string")
        if not annotations and not is_label_value(v):
            raise ValidationError(_key(path, k), v, _VALUE_RULE)
        if not annotations and len(_GOOD_LABEL_PAIRS) < 8192:
            _GOOD_LABEL_PAIRS.add((k, v))


_GOOD_LABEL_PAIRS: set[tuple[str, str]] = set()


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
        _check_labels(_map(meta, "labels", mpath), labels_path)
    if meta.get("annotations") is not None:
        _check_labels(_map(meta, "annotations", mpath), annotations_path, annotations=True)


# ---- pods ------------------------------------------------------------------------------

_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_OPERATORS = ("", "Equal", "Exists")


def _quantities(res: dict[str, Any], field: str, path: str) -> dict[str, tuple[Any, Fraction]]:
    """``{name: (raw, exact value)}`` for a requests/limits/capacity map, checked."""
    out: dict[str, tuple[Any, Fraction]] = {}
    for name, raw in _map(res, field, path).items():
        at = _res_key(_at(path, field), name)
        try:
            amount = parse_quantity(raw)
        except QuantityError:
            raise ValidationError(at, raw, "is not a quantity") from None
        if amount.numerator < 0:  # a Fraction's sign is its numerator's
            raise ValidationError(at, raw, "must be greater than or equal to 0")
        if is_extended(name) and amount.denominator != 1:  # upstream IsIntegerResourceName
            raise ValidationError(at, raw, "must be an integer")
        out[name] = (raw, amount)
    return out


def _check_resources(container: dict[str, Any], cpath: str) -> None:
    """Requests against limits; upstream names the ``requests`` (or ``limits``) map itself."""
    path = _at(cpath, "resources")
    res = _map(container, "resources", cpath)
    requests = _quantities(res, "requests", path)
    limits = _quantities(res, "limits", path)
    for name, (raw, amount) in requests.items():
        limit = limits.get(name)
        if limit is None and not is_extended(name):
            continue
        p = _at(path, "requests")
        if is_extended(name):
            if limit is None:
                _required(_at(path, "limits"), "Limit must be set for non overcommitable resources")
            if amount != limit[1]:
                raise ValidationError(p, raw, f"must be equal to {name} limit of {limit[0]}")
        elif limit is not None and amount > limit[1]:
            raise ValidationError(p, raw, f"must be less than or equal to {name} limit of {limit[0]}")


def _check_containers(spec: dict[str, Any], path: str, volumes: set[str], errors: Errors) -> set[str]:
    """Check every init and app container, keeping each one's errors; returns their names."""
    seen: set[str] = set()
    for field in ("initContainers", "containers"):
        with errors.each():
            for cpath, c in _items(spec, field, path):
                with errors.each():
                    _check_container(c, cpath, field, seen, volumes, errors)
    return seen


def _check_container(
    c: dict[str, Any], cpath: str, field: str, seen: set[str], volumes: set[str], errors: Errors
) -> None:
    """One container, in upstream's order: its name, its own fields, then its name again
    among the others (a duplicate), its restart policy and resources."""
    name, npath = c.get("name"), _at(cpath, "name")
    if name in (None, ""):
        errors.add(npath, "Required value")
    else:
        with errors.each():
            check_name(name, npath, label=True)
    check_container(c, cpath, volumes, field == "initContainers", errors)
    if name in seen:
        errors.add(npath, f"Duplicate value: {shown(name)}")
    if isinstance(name, str):
        seen.add(name)
    if field == "initContainers":
        with errors.each():
            _enum(c, "restartPolicy", cpath, ("Always",))
    _check_resources(c, cpath)


def _check_toleration(t: dict[str, Any], path: str) -> None:
    _enum(t, "operator", path, _TOLERATION_OPERATORS)
    _enum(t, "effect", path, ("",) + _TAINT_EFFECTS)
    _str(t, "key", path)
    _str(t, "value", path)
    op = t.get("operator") or "Equal"
    if not t.get("key") and op != "Exists":
        shown = t.get("operator") or NO_VALUE
        raise ValidationError(_at(path, "operator"), shown, "must be Exists when key is empty (which matches all keys)")
    if op == "Exists" and t.get("value"):
        raise ValidationError(_at(path, "value"), t["value"], "must be empty when operator is Exists")
    if _int(t, "tolerationSeconds", path) is not None and t.get("effect") != "NoExecute":
        raise ValidationError(
            _at(path, "effect"), t.get("effect", ""), "must be NoExecute when tolerationSeconds is set"
        )


def validate_pod_spec(spec: dict[str, Any], path: str = "spec") -> set[str]:
    """Check a PodSpec found at ``path``, reporting all its independent errors together;
    returns the pod's container names."""
    if not spec.get("containers"):
        _list(spec, "containers", path)  # a wrong type gets its own message first
        _required(_at(path, "containers"), "a pod needs at least one container")
    errors = Errors()
    volumes: set[str] = set()
    with errors.each():
        volumes = check_volumes(spec, path, errors)
    names = _check_containers(spec, path, volumes, errors)
    for check in _POD_FIELD_CHECKS:
        with errors.each():
            check(spec, path)
    errors.raise_any()
    return names


def _check_pod_fields(spec: dict[str, Any], path: str) -> None:
    _enum(spec, "restartPolicy", path, _RESTART_POLICIES)
    _enum(spec, "dnsPolicy", path, _DNS_POLICIES)
    _int(spec, "terminationGracePeriodSeconds", path, lo=0)
    _int(spec, "priority", path)
    _int(spec, "activeDeadlineSeconds", path, lo=1, hi=2**31 - 1)
    _enum(spec, "preemptionPolicy", path, _PREEMPTION_POLICIES)


def _check_tolerations(spec: dict[str, Any], path: str) -> None:
    for p, t in _items(spec, "tolerations", path):
        _check_toleration(t, p)


def _check_security(spec: dict[str, Any], path: str) -> None:
    security, spath = _map(spec, "securityContext", path), _at(path, "securityContext")
    _int(security, "runAsUser", spath, 0, 2**31 - 1)
    _check_sysctls(security, spath)


_POD_FIELD_CHECKS = (
    _check_pod_fields,
    _check_tolerations,
    lambda spec, path: _check_labels(_map(spec, "nodeSelector", path), _at(path, "nodeSelector")),
    lambda spec, path: check_node_affinity(_map(spec, "affinity", path), _at(path, "affinity")),
    lambda spec, path: _quantities(spec, "overhead", path),
    _check_security,
)


# Upstream's sysctl name rule (IsValidSysctlName): dot- or slash-separated segments.
_SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
SYSCTL_PATTERN = f"^({_SYSCTL_SEGMENT}[\\./])*{_SYSCTL_SEGMENT}$"
SYSCTL_MAX_LENGTH = 253
_SYSCTL = re.compile(SYSCTL_PATTERN)


def _check_sysctls(security: dict[str, Any], path: str) -> None:
    """``securityContext.sysctls``: every name valid and named once. All the bad names are
    reported together, as upstream's aggregate does (``[<e1>, <e2>]``), since a pod with
    one bad sysctl often has more."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for p, s in _items(security, "sysctls", path):
        name, npath = s.get("name"), _at(p, "name")
        if name in (None, ""):
            causes.append(Cause("FieldValueRequired", "Required value", npath))
            continue
        if not isinstance(name, str):
            raise ValidationError(npath, name, "must be a string")
        if len(name) > SYSCTL_MAX_LENGTH or not _SYSCTL.fullmatch(name):
            rule = f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex {SYSCTL_PATTERN}"
            causes.append(Cause("FieldValueInvalid", f"Invalid value: {json.dumps(name)}: {rule}", npath))
        elif name in seen:
            causes.append(Cause("FieldValueDuplicate", f"Duplicate value: {json.dumps(name)}", npath))
        seen.add(name)
    errors = [f"{c.field}: {c.message}" for c in causes]
    if len(errors) == 1:
        raise ValidationError("", NO_VALUE, errors[0], tuple(causes))
    if errors:
        raise ValidationError("", NO_VALUE, "[" + ", ".join(errors) + "]", tuple(causes))


def validate_create(obj: dict[str, Any]) -> None:
    """The rules only a create obeys, checked after ``validate``: a pod's ephemeral
    containers come only through its ``ephemeralcontainers`` subresource."""
    if obj.get("kind") == "Pod" and ((obj.get("spec") or {}).get("ephemeralContainers")):
        field = "spec.ephemeralContainers"
        raise ValidationError(
            field, NO_VALUE, "Forbidden: cannot be set on create", (_forbidden(field, "cannot be set on create"),)
        )


def _forbidden(field: str, why: str) -> Cause:
    return Cause("FieldValueForbidden", f"Forbidden: {why}", field)


def _check_pod(obj: dict[str, Any], path: str) -> None:
    """A Pod, or a pod template at ``path`` (its metadata is checked by the caller)."""
    spec_path = _at(path, "spec")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        if spec is None:
            _required(_at(spec_path, "containers"), "a pod needs at least one container")
        raise ValidationError(spec_path, spec, "must be a map")
    names = _valid_spec_names(spec, spec_path)
    check_kubemu_annotations(obj, path, names)


# Specs that passed, by path and encoding: a controller's or a benchmark's pods share one
# spec, and checking it field by field cost more than the rest of a create's admission.
_VALID_SPECS: dict[tuple[str, bytes], set[str]] = {}
_VALID_SPECS_MAX = 256


def _valid_spec_names(spec: dict[str, Any], path: str) -> set[str]:
    """``validate_pod_spec`` of ``spec``, remembered for the specs that passed (the
    container names returned are shared: never change them)."""
    try:
        key = (path, codec.encode(spec))
    except OverflowError:  # the store could not keep it either: say which field
        checked = validate_pod_spec(spec, path)
        _check_int_range(spec, path)
        return checked
    except (TypeError, ValueError):  # not plain msgpack data: checked field by field, not kept
        return validate_pod_spec(spec, path)
    names = _VALID_SPECS.get(key)
    if names is None:
        names = _VALID_SPECS[key] = validate_pod_spec(spec, path)
        if len(_VALID_SPECS) > _VALID_SPECS_MAX:
            del _VALID_SPECS[next(iter(_VALID_SPECS))]
    return names


INT_RANGE = (-(2**63), 2**64 - 1)  # what the wire (msgpack) and the store hold


def _check_int_range(value: Any, path: str) -> None:
    """Raise for the first integer under ``value`` the store cannot encode."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_int_range(v, _key(path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_int_range(v, _at(path, f"[{i}]"))
    elif _is_int(value) and not INT_RANGE[0] <= value <= INT_RANGE[1]:
        raise ValidationError(path, value, "is out of range (integers are at most 64 bits)")


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
        _enum(taint, "effect", p, _TAINT_EFFECTS)
        _str(taint, "value", p)
    status = _map(obj, "status", path)
    for field in ("capacity", "allocatable"):
        _quantities(status, field, _at(path, "status"))


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
    _enum(obj, "preemptionPolicy", path, _PREEMPTION_POLICIES)


def _check_selector(spec: dict[str, Any], spath: str, required: bool) -> LabelSelector | None:
    path = _at(spath, "selector")
    raw = spec.get("selector")
    if raw is None:
        if required:
            _required(path)
        return None
    if isinstance(raw, dict) and isinstance(raw.get("matchLabels"), dict):
        _check_labels(raw["matchLabels"], _at(path, "matchLabels"))
    try:
        selector = LabelSelector.from_dict(raw)
    except SelectorError as e:
        shown = e.value if e.has_value else NO_VALUE
        raise ValidationError(_at(path, e.field) if e.field else path, shown, e.detail) from None
    return selector


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
    _check_pod(template, tpath)
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
    _check_pod(template, tpath)
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
        "Pod": _check_pod,
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
        raise ValidationError(field, NO_VALUE, f"Forbidden: {why}", (_forbidden(field, why),))
    _check_pod(template, tpath)
