"""ResourceQuota arithmetic: what an object uses, which quotas cover it, and the check.

Owns upstream's quota evaluators (``pkg/quota/v1/evaluator/core``: pods, services,
persistent volume claims, and the object count of any other resource) and the pure part
of the ResourceQuota admission plugin (``CheckRequest``): scopes, the "must specify"
constraint, the "status unknown" refusal and the ``exceeded quota`` comparison, with
upstream's messages. Quantities keep their format (binary ``Mi`` or decimal) through
sums and print in upstream's canonical form (``700Mi``, ``500m``, ``1k``).

Callers: the apiserver's quota admission (``cluster/apiserver/quotaadmission.py``), which
charges ``status.used`` as it admits, and the resource quota controller
(``cluster/controllers/resourcequota.py``), which recomputes it from what stands.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any, NamedTuple

from ..clock import parse_timestamp
from . import kinds
from .qos import BEST_EFFORT, compute_pod_qos
from .quantity import parse
from .resources import is_extended, pod_requests

Obj = dict[str, Any]


class Qty(NamedTuple):
    """A quantity and whether it prints with binary suffixes (upstream's BinarySI)."""

    value: Fraction
    binary: bool = False


ZERO = Qty(Fraction(0))
_BINARY = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")
_DECIMAL = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "u"), (-9, "n"))


def qty(value: Any) -> Qty:
    """A manifest's quantity (``700Mi``, ``0.5``, ``2``) with its format."""
    binary = isinstance(value, str) and value.endswith(_BINARY)
    return Qty(parse(value), binary)


def render(q: Qty) -> str:
    """Upstream's canonical string: binary suffixes for a binary whole number from 1024
    up, else the largest decimal suffix that keeps the number whole."""
    v = q.value
    if q.binary and v.denominator == 1 and abs(v) >= 1024:
        n = int(v)
        for i, suffix in enumerate(_BINARY):
            unit = 1 << (10 * (6 - i))
            if n % unit == 0:
                return f"{n // unit}{suffix}"
        return str(n)
    if v == 0:
        return "0"
    for exp, suffix in _DECIMAL:
        scaled = v / Fraction(10) ** exp
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    nanos = -((-v * 10**9).__floor__())  # rounded up to nano units, as upstream
    return f"{nanos}n"


def add(a: Qty, b: Qty) -> Qty:
    """The sum, in ``a``'s format unless ``a`` is zero (upstream ``Quantity.Add``)."""
    return Qty(a.value + b.value, b.binary if a.value == 0 else a.binary)


def add_all(into: dict[str, Qty], other: dict[str, Qty]) -> None:
    for name, q in other.items():
        into[name] = add(into.get(name, ZERO), q)


def pretty(usage: dict[str, Qty]) -> str:
    """``k=v,k=v`` with keys sorted (upstream ``prettyPrint``)."""
    return ",".join(f"{k}={render(usage[k])}" for k in sorted(usage))


def parse_list(values: dict[str, Any] | None) -> dict[str, Qty]:
    return {k: qty(v) for k, v in (values or {}).items()}


def render_list(values: dict[str, Qty]) -> dict[str, str]:
    return {k: render(values[k]) for k in sorted(values)}


# ---- what an object uses ---------------------------------------------------------------

POD_RESOURCES = frozenset(
    (
        "count/pods",
        "pods",
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
    )
)
SERVICE_RESOURCES = frozenset(("services", "count/services", "services.loadbalancers", "services.nodeports"))
PVC_RESOURCES = frozenset(("persistentvolumeclaims", "count/persistentvolumeclaims", "requests.storage"))
_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
# Core resources whose object count a quota may also name without ``count/``.
LEGACY_COUNTS = frozenset(
    ("services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims")
)
# The resources whose absence from a container a quota on them refuses (upstream's
# validationSet: "it was a mistake", kept for compatibility).
MUST_SPECIFY = frozenset(("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"))
_ONE = Qty(Fraction(1))


def count_name(kind: str) -> str:
    """``count/<resource>`` or ``count/<resource>.<group>`` for ``kind``."""
    r = kinds.BY_KIND.get(kind) or kinds.CUSTOM.get(kind)
    if r is None:
        return f"count/{kind.lower()}"
    return f"count/{r.plural}.{r.group}" if r.group else f"count/{r.plural}"


def handles(kind: str, name: str) -> bool:
    """Whether ``kind``'s evaluator measures resource ``name`` (upstream MatchingResources)."""
    if kind == "Pod":
        return (
            name in POD_RESOURCES
            or name.startswith(("hugepages-", "requests.hugepages-"))
            or (name.startswith("requests.") and is_extended(name[len("requests.") :]))
        )
    if kind == "Service":
        return name in SERVICE_RESOURCES
    if kind == "PersistentVolumeClaim":
        return name in PVC_RESOURCES or (
            _CLASS_SUFFIX in name and name.endswith(("/requests.storage", "/persistentvolumeclaims"))
        )
    count = count_name(kind)
    return name == count or (name in LEGACY_COUNTS and count == f"count/{name}")


def usage(kind: str, obj: Obj, now: float) -> dict[str, Qty]:
    """What ``obj`` uses (upstream's evaluators' ``Usage``)."""
    if kind == "Pod":
        return pod_usage(obj, now)
    out = {count_name(kind): _ONE}
    if kind == "Service":
        out["services"] = _ONE
        spec = obj.get("spec") or {}
        ports = spec.get("ports") or ()
        kind_of = spec.get("type") or "ClusterIP"
        if kind_of == "LoadBalancer":
            out["services.loadbalancers"] = _ONE
            if spec.get("allocateLoadBalancerNodePorts") is False:
                ports = [p for p in ports if p.get("nodePort")]
        if kind_of in ("NodePort", "LoadBalancer") and ports:
            out["services.nodeports"] = Qty(Fraction(len(ports)))
    elif kind == "PersistentVolumeClaim":
        out["persistentvolumeclaims"] = _ONE
        spec = obj.get("spec") or {}
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        cls = spec.get("storageClassName") or ""
        if cls:
            out[f"{cls}{_CLASS_SUFFIX}persistentvolumeclaims"] = _ONE
        if storage is not None:
            out["requests.storage"] = qty(storage)
            if cls:
                out[f"{cls}{_CLASS_SUFFIX}requests.storage"] = qty(storage)
    else:
        legacy = count_name(kind)[len("count/") :]
        if legacy in LEGACY_COUNTS:
            out[legacy] = _ONE
    return out


def pod_counted(pod: Obj, now: float) -> bool:
    """Charged for compute: not Succeeded/Failed, and not deleted past its grace period."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    m = pod.get("metadata") or {}
    at, grace = m.get("deletionTimestamp"), m.get("deletionGracePeriodSeconds")
    if at and grace is not None:
        when = parse_timestamp(at)
        if when is not None and now > when + grace:
            return False
    return True


def pod_usage(pod: Obj, now: float) -> dict[str, Qty]:
    out = {"count/pods": _ONE}  # every stored pod, whatever its state
    if not pod_counted(pod, now):
        return out
    out["pods"] = _ONE
    requests = pod_requests(pod)
    limits = pod_requests(pod, field="limits")
    for name, amount in requests.items():
        q = pod_qty(pod, "requests", name, amount)
        if name in ("cpu", "memory", "ephemeral-storage"):
            out[name] = out[f"requests.{name}"] = q
        elif name.startswith("hugepages-"):
            out[name] = out[f"requests.{name}"] = q
        elif is_extended(name):
            out[f"requests.{name}"] = q
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in limits:
            out[f"limits.{name}"] = pod_qty(pod, "limits", name, limits[name])
    return out


def pod_qty(pod: Obj, field: str, name: str, amount: int) -> Qty:
    """An effective pod amount (millicores for cpu) as a quantity, binary when the first
    container naming it wrote a binary suffix (the format upstream's sum keeps)."""
    value = Fraction(amount, 1000) if name == "cpu" else Fraction(amount)
    binary = False
    for c in _containers(pod):
        raw = ((c.get("resources") or {}).get(field) or {}).get(name)
        if raw is not None:
            binary = isinstance(raw, str) and raw.endswith(_BINARY)
            break
    return Qty(value, binary)


def _containers(pod: Obj) -> Iterable[Obj]:
    spec = pod.get("spec") or {}
    yield from spec.get("containers") or ()
    yield from spec.get("initContainers") or ()


def missing_constraints(pod: Obj, required: Iterable[str]) -> str:
    """``must specify <res> for: <c1>,<c2>; ...`` for the containers that do not declare
    what a quota on cpu or memory requires, or "" (upstream ``Constraints``)."""
    needed = MUST_SPECIFY.intersection(required)
    if not needed:
        return ""
    missing: dict[str, set[str]] = {}
    for c in _containers(pod):
        res = c.get("resources") or {}
        declared = set()
        for name in ("cpu", "memory"):
            if name in (res.get("requests") or {}):
                declared |= {name, f"requests.{name}"}
            if name in (res.get("limits") or {}):
                declared.add(f"limits.{name}")
        for name in needed - declared:
            missing.setdefault(name, set()).add(c.get("name", ""))
    if not missing:
        return ""
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


# ---- scopes ------------------------------------------------------------------------------


def scope_selectors(quota: Obj) -> list[Obj]:
    """``spec.scopes`` as Exists requirements, then ``spec.scopeSelector``'s expressions."""
    spec = quota.get("spec") or {}
    out: list[Obj] = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or ()]
    out += list((spec.get("scopeSelector") or {}).get("matchExpressions") or ())
    return out


def scope_matches(req: Obj, kind: str, obj: Obj) -> bool:
    """Whether ``obj`` is in one scope requirement; objects other than pods are in none."""
    if kind != "Pod":
        return False
    spec = obj.get("spec") or {}
    scope = req.get("scopeName")
    if scope in ("Terminating", "NotTerminating"):
        deadline = spec.get("activeDeadlineSeconds")
        terminating = deadline is not None and deadline >= 0
        return bool(terminating == (scope == "Terminating"))
    if scope in ("BestEffort", "NotBestEffort"):
        return bool((compute_pod_qos(obj) == BEST_EFFORT) == (scope == "BestEffort"))
    if scope == "PriorityClass":
        name, op, values = spec.get("priorityClassName") or "", req.get("operator"), req.get("values") or ()
        if op == "Exists":
            return bool(name)
        if op == "DoesNotExist":
            return not name
        if op == "In":
            return bool(name) and name in values
        if op == "NotIn":
            return not name or name not in values
        return False
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(spec)
    return False


def _cross_namespace_affinity(spec: Obj) -> bool:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) or {}
        terms = list(a.get("requiredDuringSchedulingIgnoredDuringExecution") or ())
        terms += [
            w.get("podAffinityTerm") or {} for w in a.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms):
            return True
    return False


def covers(quota: Obj, kind: str, obj: Obj, hard: Iterable[str]) -> list[str]:
    """The resources of ``hard`` that ``quota`` tracks for ``obj``: none unless ``obj`` is
    in every scope of the quota (upstream ``Matches``)."""
    matched = [name for name in hard if handles(kind, name)]
    if not matched:
        return []
    if not all(scope_matches(req, kind, obj) for req in scope_selectors(quota)):
        return []
    return matched


# ---- the admission check -------------------------------------------------------------


class QuotaRefusal(Exception):
    """Why admission refuses: the body after ``<resource> "<name>" is forbidden: ``."""


def check(quotas: list[Obj], kind: str, obj: Obj, old: Obj | None, now: float) -> list[tuple[Obj, dict[str, Qty]]]:
    """Upstream ``CheckRequest`` for one object: the quotas to charge with their new
    ``status.used``, or ``QuotaRefusal``. ``old``: the stored object of an update, whose
    usage is subtracted (never below zero)."""
    interesting: list[tuple[Obj, list[str]]] = []
    for quota in quotas:
        status = quota.get("status") or {}
        hard_names = list((status.get("hard") or {}).keys())
        matched = covers(quota, kind, obj, hard_names)
        if not matched:
            continue
        name = (quota.get("metadata") or {}).get("name", "")
        if kind == "Pod":
            missing = missing_constraints(obj, matched)
            if missing:
                raise QuotaRefusal(f"failed quota: {name}: {missing}")
        known = status.get("used") or {}
        if any(r not in known for r in matched):
            raise QuotaRefusal(f"status unknown for quota: {name}, resources: {','.join(sorted(matched))}")
        interesting.append((quota, matched))
    if not interesting:
        return []
    delta = usage(kind, obj, now)
    if old is not None:
        before = usage(kind, old, now)
        delta = {k: Qty(max(q.value - before.get(k, ZERO).value, Fraction(0)), q.binary) for k, q in delta.items()}
    delta = {k: q for k, q in delta.items() if q.value != 0}
    if not delta:
        return []
    out = []
    for quota, _ in interesting:
        status = quota["status"]
        hard, used = parse_list(status.get("hard")), parse_list(status.get("used"))
        requested = {k: q for k, q in delta.items() if k in hard}
        new_used = dict(used)
        add_all(new_used, requested)
        exceeded = sorted(k for k in requested if new_used[k].value > hard[k].value)
        if exceeded:
            raise QuotaRefusal(
                f"exceeded quota: {quota['metadata']['name']}, "
                f"requested: {pretty({k: requested[k] for k in exceeded})}, "
                f"used: {pretty({k: used[k] for k in exceeded if k in used})}, "
                f"limited: {pretty({k: hard[k] for k in exceeded})}"
            )
        if requested:
            out.append((quota, new_used))
    return out


# ---- the controller's figure -------------------------------------------------------------


def quota_used(quota: Obj, objects: Iterable[tuple[str, Obj]], now: float) -> dict[str, Qty]:
    """``status.used`` from the objects that stand: every hard resource some evaluator
    measures starts at zero; each object in the quota's scopes adds what it uses."""
    hard = list(((quota.get("spec") or {}).get("hard") or {}).keys())
    used = {name: ZERO for name in hard if any(handles(k, name) for k in _EVALUATED)}
    previous = parse_list((quota.get("status") or {}).get("used"))
    for name in hard:  # a resource nobody measures keeps what admission charged
        if name not in used and name in previous:
            used[name] = previous[name]
    for kind, obj in objects:
        matched = covers(quota, kind, obj, hard)
        if matched:
            u = usage(kind, obj, now)
            add_all(used, {k: u[k] for k in matched if k in u})
    return used


# The kinds the controller counts (it watches them); a ``count/`` of another kind is
# charged by admission and kept, never recounted.
_EVALUATED = (
    "Pod",
    "Service",
    "PersistentVolumeClaim",
    "ConfigMap",
    "Secret",
    "ReplicationController",
    "ResourceQuota",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
)
COUNTED_KINDS = _EVALUATED
