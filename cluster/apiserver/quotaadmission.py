"""LimitRanger and ResourceQuota admission: the store-facing half.

Owns reading a namespace's LimitRanges and ResourceQuotas from the apiserver's store,
applying the rules of ``cluster/api/limitrange.py`` and ``cluster/api/quota.py``, and
charging ``status.used`` of the quotas an admitted object counts against, as upstream's
quota admission does (so the next create of the same write batch sees the charge at once;
the resource quota controller later recomputes it). Refusals are 403 Forbidden with
upstream's ``<resource> "<name>" is forbidden: <reason>``.

Who calls it: ``Admission._admit_pod`` calls ``limit_defaults`` (mutation, pod create);
the apiserver's create and update call ``admit_limits_and_quota`` last, once the object's
name is drawn and just before it is stored (upstream's validating admission). A
namespace without LimitRanges or quotas costs a dict lookup.
"""

from __future__ import annotations

from typing import Any

from ..api import kinds
from ..api.errors import Forbidden
from ..api.limitrange import fill_defaults, message, violations
from ..api.quota import QuotaRefusal, check, render_list

Obj = dict[str, Any]


def _in_namespace(store, kind: str, ns: str) -> list[Obj]:
    if not ns or not store.count(kind):
        return []
    return [o for k in sorted(store.keys(kind)) if k[0] == ns and (o := store.peek(kind, *k)) is not None]


def limit_defaults(store, pod: Obj) -> None:
    """LimitRanger's mutation of a pod being created."""
    if not store.count("LimitRange"):
        return
    ranges = _in_namespace(store, "LimitRange", (pod.get("metadata") or {}).get("namespace") or "")
    if ranges:
        fill_defaults(pod, ranges)


def admit_limits_and_quota(store, kind: str, obj: Obj, old: Obj | None, now: float) -> None:
    """LimitRanger's validation, then ResourceQuota's check and charge, of ``obj`` about
    to be stored (``old``: the stored object of an update). Raises ``Forbidden``."""
    if not store.count("LimitRange") and not store.count("ResourceQuota"):
        return  # no bound to check and no quota to charge: most clusters, most writes
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    if kind == "PersistentVolumeClaim" or (kind == "Pod" and old is None):
        problems = violations(kind, obj, _in_namespace(store, "LimitRange", ns))
        if problems:
            raise _forbidden(kind, obj, message(problems))
    if kind == "Pod" and old is not None:
        return  # pods are charged at create only (in-place resize is not modelled)
    quotas = _in_namespace(store, "ResourceQuota", ns)
    if not quotas:
        return
    try:
        charges = check(quotas, kind, obj, old, now)
    except QuotaRefusal as e:
        raise _forbidden(kind, obj, str(e)) from None
    for quota, used in charges:
        m = quota["metadata"]
        fresh = store.get("ResourceQuota", ns, m["name"])
        fresh["status"] = {**(fresh.get("status") or {}), "used": render_list(used)}
        store.put("ResourceQuota", fresh, "MODIFIED")


def _forbidden(kind: str, obj: Obj, reason: str) -> Forbidden:
    r = kinds.BY_KIND.get(kind) or kinds.CUSTOM.get(kind)
    resource = (f"{r.plural}.{r.group}" if r.group else r.plural) if r else kind.lower()
    name = (obj.get("metadata") or {}).get("name", "")
    err = Forbidden(f'{resource} "{name}" is forbidden: {reason}')
    return err
