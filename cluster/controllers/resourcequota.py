"""The resource quota controller: keeps each ResourceQuota's ``status`` current.

Owns upstream's ``pkg/controller/resourcequota`` as a ``Reconciler`` keyed by namespace:
a change to any object a quota counts (pods, services, claims, config maps, secrets,
workloads, the quotas themselves) names its namespace, and a reconcile recomputes every
quota there: ``status.hard`` = ``spec.hard``, ``status.used`` = what the standing objects
in the quota's scopes use (``cluster/api/quota.py``), masked to the hard resources. A
status is written only when it changed, guarded by the quota's resourceVersion
(``quotapatch.QuotaStatus``), so a charge quota admission made since is never lowered by
an older count; a refused write comes back as the key's next reconcile. Every namespace
holding a quota is looked at again after the resync period (upstream's
``--resource-quota-sync-period``, 5 min).

Until the first ResourceQuota appears the controller keeps no pods (the manager's
shared parked copy, ``ownedpods.ParkedPods``): a cluster without quotas pays nothing.
Registered in ``manager.default_controllers`` as ``ResourceQuotaStep``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from ..api.quota import COUNTED_KINDS, parse_list, quota_used, render_list
from ..api.quotapatch import QuotaStatus
from ..api.requests import Patch, Request
from .ownedpods import ParkedPods
from .reconciler import Indexer, Key, Obj, ObjectCache, Outcome, ReconcilerStep, Watches

RESYNC_SECONDS = 300.0  # upstream's --resource-quota-sync-period default


def _namespace_key(event_type: str, obj: Obj) -> Iterable[Key]:
    return (((obj.get("metadata") or {}).get("namespace") or "", ""),)


def _namespace(obj: Obj) -> Iterable[str]:
    return ((obj.get("metadata") or {}).get("namespace") or "",)


class ResourceQuotaReconciler:
    name: ClassVar[str] = "resourcequota"
    watches: ClassVar[tuple[Watches, ...]] = tuple(Watches(kind, _namespace_key) for kind in COUNTED_KINDS)
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = tuple(
        (kind, "namespace", _namespace) for kind in COUNTED_KINDS
    )

    def __init__(self, cache: ObjectCache, resync: float = RESYNC_SECONDS) -> None:
        self.cache = cache
        self.resync = resync

    def reconcile(self, key: Key, now: float) -> Outcome:
        ns = key[0]
        quotas = self.cache.by_index("ResourceQuota", "namespace", ns)
        if not quotas:
            return Outcome()
        objects = [(kind, obj) for kind in COUNTED_KINDS for obj in self.cache.by_index(kind, "namespace", ns)]
        writes: list[Request] = []
        for quota in quotas:
            status = self.status(quota, objects, now)
            if status != (quota.get("status") or {}):
                m = quota["metadata"]
                op = QuotaStatus(m.get("resourceVersion", ""), status)
                writes.append(Patch("ResourceQuota", ns, m["name"], m.get("uid", ""), op))
        return Outcome(writes, requeue_after=self.resync)

    @staticmethod
    def status(quota: Obj, objects: list[tuple[str, Obj]], now: float) -> Obj:
        hard = parse_list((quota.get("spec") or {}).get("hard"))
        return {"hard": render_list(hard), "used": render_list(quota_used(quota, objects, now))}


class ResourceQuotaStep(ReconcilerStep):
    """The reconciler in the manager, parking pods until the first quota comes."""

    def __init__(self, resync: float = RESYNC_SECONDS) -> None:
        super().__init__(lambda cache: ResourceQuotaReconciler(cache, resync), sort_keys=True)
        self._parked = ParkedPods()

    @property
    def parking(self) -> ParkedPods:
        return self._parked

    def on_event(self, kind: str, event_type: str, obj: Obj, now: float) -> None:
        if kind == "Pod" and self._parked.park(event_type, obj):
            return
        if kind == "ResourceQuota":
            for pod in self._parked.release():
                super().on_event("Pod", "ADDED", pod, now)
        super().on_event(kind, event_type, obj, now)
