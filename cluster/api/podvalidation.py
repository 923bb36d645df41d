"""Create-time rules of a pod's spec: containers, resources, tolerations, security, sysctls.

Owns upstream's pod rules kubemu models, shared by Pods and every pod template (the
workload kinds check their templates through ``check_pod``); the container, volume and
probe rules it calls live in ``containervalidation``. ``validation`` attaches ``check_pod``
to the Pod kind and re-exports ``validate_pod_spec`` and ``validate_create``. A spec that
passed is remembered by its encoding (controllers' and benchmarks' pods share one), so a
template's thousandth pod costs one lookup.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

from . import codec
from .annotationvalidation import check_kubemu_annotations
from .containervalidation import check_container, check_node_affinity, check_volumes
from .errors import Cause
from .quantity import QuantityError
from .quantity import parse as parse_quantity
from .resources import is_extended
from .validationfields import (
    NO_VALUE,
    Errors,
    ValidationError,
    _at,
    _enum,
    _int,
    _is_int,
    _items,
    _key,
    _list,
    _map,
    _required,
    _res_key,
    _str,
    check_labels,
    check_name,
    shown,
)

_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_OPERATORS = ("", "Equal", "Exists")


def quantities(res: dict[str, Any], field: str, path: str) -> dict[str, tuple[Any, Fraction]]:
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
    requests = quantities(res, "requests", path)
    limits = quantities(res, "limits", path)
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
    _enum(t, "effect", path, ("",) + TAINT_EFFECTS)
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
    _enum(spec, "preemptionPolicy", path, PREEMPTION_POLICIES)


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
    lambda spec, path: check_labels(_map(spec, "nodeSelector", path), _at(path, "nodeSelector")),
    lambda spec, path: check_node_affinity(_map(spec, "affinity", path), _at(path, "affinity")),
    lambda spec, path: quantities(spec, "overhead", path),
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
            field, NO_VALUE, "Forbidden: cannot be set on create", (forbidden(field, "cannot be set on create"),)
        )


def forbidden(field: str, why: str) -> Cause:
    return Cause("FieldValueForbidden", f"Forbidden: {why}", field)


def check_pod(obj: dict[str, Any], path: str) -> None:
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
