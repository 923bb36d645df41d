"""YuniKorn's resource vectors and their arithmetic.

Owns ``Res`` (``{type: int}``: ``vcore`` in millicores, ``memory`` in bytes, ``pods`` and
every other type as a count), the conversion of pods, nodes and configuration quantities
into it, and the comparisons the queue accounting and preemption are written in. A type
missing from a vector is "not defined", which is not the same as zero: a max without
``memory`` does not limit memory, and a difference keeps only its first operand's types
(upstream ``SubOnlyExisting``). Called by every module of ``cluster/yunikorn``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..api.quantity import QuantityError, to_milli, to_units
from ..api.resources import node_allocatable, pod_requests

VCORE, MEMORY, PODS = "vcore", "memory", "pods"

Res = dict[str, int]


def quantity(kind: str, value: Any) -> int:
    """A configuration value as YuniKorn keeps it: ``vcore`` in millicores, anything else
    in whole units. Raises ValueError naming the value when it is not a quantity."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{value!r} is not a quantity")
    try:
        amount = to_milli(value) if kind == VCORE else to_units(value)
    except (QuantityError, ValueError, TypeError):
        raise ValueError(f"{value!r} is not a quantity") from None
    if amount < 0:
        raise ValueError(f"{value!r} is negative")
    return amount


def from_k8s(values: Mapping[str, int]) -> Res:
    """Kubernetes resource integers (cpu in millicores) as a YuniKorn vector."""
    return {(VCORE if k == "cpu" else k): v for k, v in values.items()}


def of_pod(pod: dict[str, Any]) -> Res:
    """An ask's size: the pod's effective requests (init containers, sidecars, overhead as
    Kubernetes counts them) plus ``pods: 1``; zero entries dropped."""
    out = {k: v for k, v in from_k8s(pod_requests(pod)).items() if v}
    out[PODS] = 1
    return out


def of_node(node: dict[str, Any]) -> Res:
    """A node's capacity for YuniKorn: its allocatable, every type."""
    return from_k8s(node_allocatable(node))


def add(a: Mapping[str, int], b: Mapping[str, int]) -> Res:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def total(vectors: Iterable[Mapping[str, int]]) -> Res:
    """The sum of ``vectors``, every type any of them defines."""
    out: Res = {}
    for v in vectors:
        add_into(out, v)
    return out


def add_into(into: Res, b: Mapping[str, int], sign: int = 1) -> None:
    for k, v in b.items():
        into[k] = into.get(k, 0) + sign * v


def component_min(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> Res | None:
    """Per-type minimum; a type present in only one keeps its value; None is "no vector"."""
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    out = dict(a)
    for k, v in b.items():
        out[k] = min(out[k], v) if k in out else v
    return out


def fits_defined(ask: Mapping[str, int], limit: Mapping[str, int]) -> bool:
    """Every type of ``ask`` that ``limit`` defines is at most the limit (upstream
    ``FitInMaxUndef`` on the ask's side)."""
    return all(v <= limit[k] for k, v in ask.items() if k in limit)


def any_negative(rem: Mapping[str, int], types: Iterable[str]) -> bool:
    return any(rem.get(k, 0) < 0 for k in types if k in rem)


def strictly_greater(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """Upstream's "strictly greater" over the types both define: no shared type of ``b``
    above ``a``'s and at least one below; with nothing shared, ``a`` must be all positive."""
    shared = [k for k in a if k in b]
    if not shared:
        return bool(a) and all(v > 0 for v in a.values())
    return all(a[k] >= b[k] for k in shared) and any(a[k] > b[k] for k in shared)


def shares_type(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    if a.get(PODS, 0) > 0 and b.get(PODS, 0) > 0:
        return True  # every pod and every ask carries pods: 1
    return any(v > 0 and b.get(k, 0) > 0 for k, v in a.items())


def missing(ask: Mapping[str, int], free: Mapping[str, int]) -> Res:
    """How much of ``ask`` ``free`` still lacks, per type (zero entries dropped)."""
    out = {}
    for k, v in ask.items():
        short = v - max(free.get(k, 0), 0)
        if short > 0:
            out[k] = short
    return out


def is_zero(r: Mapping[str, int] | None) -> bool:
    return not r or all(v == 0 for v in r.values())


def fmt(r: Mapping[str, int]) -> str:
    """Upstream's ``Resource.String()``: ``map[memory:1024 pods:1 vcore:2000]``."""
    return "map[" + " ".join(f"{k}:{r[k]}" for k in sorted(r)) + "]"
