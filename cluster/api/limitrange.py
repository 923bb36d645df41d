"""LimitRange: the defaults it fills into containers and the bounds it enforces.

Owns upstream's LimitRanger admission plugin as pure functions over a namespace's
LimitRanges: ``fill_defaults`` (pod create: each container's missing limits from the
Container item's ``default``, missing requests from ``defaultRequest``, and the
``kubernetes.io/limit-ranger`` annotation naming what was set) and ``violations`` (pods on
create, PersistentVolumeClaims on create and update: ``min``, ``max`` and
``maxLimitRequestRatio`` for the Container, Pod and PersistentVolumeClaim types, with
upstream's messages). Called by ``cluster/apiserver/quotaadmission.py``; the LimitRange's
own defaults (``default`` from ``max``, ``defaultRequest`` from ``default`` and ``min``)
are applied when it is stored (``cluster/apiserver/defaults.py``).
"""

from __future__ import annotations

import math
from typing import Any

from .quota import Qty, pod_qty, qty, render
from .resources import pod_requests

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"


def fill_defaults(pod: Obj, ranges: list[Obj]) -> bool:
    """Fill each container's missing limits and requests from the ranges' Container items
    (later items win, as upstream's merge of them); returns whether anything was set."""
    limits: dict[str, Any] = {}
    requests: dict[str, Any] = {}
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or ():
            if item.get("type") == "Container":
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
    if not limits and not requests:
        return False
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for prefix, field in (("container", "containers"), ("init container", "initContainers")):
        for c in spec.get(field) or ():
            res = c.get("resources")
            if not isinstance(res, dict):
                res = c["resources"] = {}
            set_requests = _merge(res, "requests", requests)
            set_limits = _merge(res, "limits", limits)
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {prefix} {c.get('name', '')}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {prefix} {c.get('name', '')}")
    if not notes:
        return False
    meta = pod.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}
    return True


def _merge(res: Obj, field: str, defaults: dict[str, Any]) -> list[str]:
    have = res.get(field) or {}
    missing = sorted(k for k in defaults if k not in have)
    if missing:
        res[field] = {**have, **{k: defaults[k] for k in missing}}
    return missing


def violations(kind: str, obj: Obj, ranges: list[Obj]) -> list[str]:
    """Every bound ``obj`` breaks, in upstream's words (resources in name order)."""
    out: list[str] = []
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or ():
            t = item.get("type")
            if kind == "Pod" and t == "Container":
                spec = obj.get("spec") or {}
                for c in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
                    res = c.get("resources") or {}
                    out += _check(t, item, _qtys(res.get("requests")), _qtys(res.get("limits")))
            elif kind == "Pod" and t == "Pod":
                out += _check(t, item, _pod_totals(obj, "requests"), _pod_totals(obj, "limits"))
            elif kind == "PersistentVolumeClaim" and t == "PersistentVolumeClaim":
                requests = _qtys(((obj.get("spec") or {}).get("resources") or {}).get("requests"))
                out += _check_claim(t, item, requests)
    seen: set[str] = set()
    return [m for m in out if not (m in seen or seen.add(m))]  # type: ignore[func-returns-value]


def message(problems: list[str]) -> str:
    """One problem as it is; several as ``[a, b]`` (upstream's aggregate error)."""
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"


def _qtys(values: dict[str, Any] | None) -> dict[str, Qty]:
    return {k: qty(v) for k, v in (values or {}).items()}


def _pod_totals(pod: Obj, field: str) -> dict[str, Qty]:
    return {k: pod_qty(pod, field, k, v) for k, v in pod_requests(pod, field=field).items()}


def _milli(q: Qty) -> int:
    return math.ceil(q.value * 1000)


def _check(t: str, item: Obj, req: dict[str, Qty], lim: dict[str, Qty]) -> list[str]:
    """A container's or a pod's requests and limits against one LimitRange item."""
    out = _below_min(t, item, req, lim) + _above_max(t, item, (lim, "limit"), (req, "request"))
    for name, raw in sorted((item.get("maxLimitRequestRatio") or {}).items()):
        bound = qty(raw)
        per = f"{name} max limit to request ratio per {t} is {render(bound)}"
        r, m = _milli(req[name]) if name in req else 0, _milli(lim[name]) if name in lim else 0
        if r == 0:
            out.append(f"{per}, but no request is specified or request is 0")
        elif m == 0:
            out.append(f"{per}, but no limit is specified or limit is 0")
        elif m / r * 1000 > _milli(bound):
            out.append(f"{per}, but provided ratio is {m / r:f}")
    return out


def _check_claim(t: str, item: Obj, req: dict[str, Qty]) -> list[str]:
    """A claim's storage request against one LimitRange item (a claim has no limits)."""
    return _below_min(t, item, req, {}) + _above_max(t, item, (req, "request"), ({}, ""))


def _below_min(t: str, item: Obj, req: dict[str, Qty], lim: dict[str, Qty]) -> list[str]:
    out = []
    for name, raw in sorted((item.get("min") or {}).items()):
        bound = qty(raw)
        per = f"minimum {name} usage per {t} is {render(bound)}"
        if name not in req:
            out.append(f"{per}.  No request is specified")
        elif _milli(req[name]) < _milli(bound):
            out.append(f"{per}, but request is {render(req[name])}")
        elif name in lim and _milli(lim[name]) < _milli(bound):
            out.append(f"{per}, but limit is {render(lim[name])}")
    return out


def _above_max(t: str, item: Obj, first: tuple[dict[str, Qty], str], then: tuple[dict[str, Qty], str]) -> list[str]:
    """``max`` against ``first`` (which must be given), then ``then`` (the limits and then the
    requests of a pod; a claim's requests alone)."""
    (values, word), (others, other_word) = first, then
    out = []
    for name, raw in sorted((item.get("max") or {}).items()):
        bound = qty(raw)
        per = f"maximum {name} usage per {t} is {render(bound)}"
        if name not in values:
            out.append(f"{per}.  No {word} is specified")
        elif _milli(values[name]) > _milli(bound):
            out.append(f"{per}, but {word} is {render(values[name])}")
        elif name in others and _milli(others[name]) > _milli(bound):
            out.append(f"{per}, but {other_word} is {render(others[name])}")
    return out
