"""What the EndpointSlice and Endpoints controllers read: Services, the pods they select,
nodes' zones; and the step that feeds them.

Owns ``ServicePodCache`` (an ``ObjectCache`` that keeps a pod decoded only while some
Service in its namespace selects it: every other pod is kept as the ``PodRecord`` the
controller-manager built for it anyway, its bytes shared with pod GC, and decoded again
when a Service that selects it appears) and ``ServicePodsStep`` (a ``ReconcilerStep``
that hears pods as records, names the Services a pod event concerns and queues them after
the controllers' batch period). At a million pods and no Service selecting them, the two
controllers cost a dict slot per pod, not a decoded pod.

The selector rules (``selects``), a pod's readiness and the target-port lookup are here
too, read by ``endpointslice.py`` and ``endpoints.py``, both registered by
``manager.default_controllers`` over one shared cache.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from .podrecord import PodRecord, PodRecords
from .reconciler import Indexer, Key, Obj, ObjectCache, Reconciler, ReconcilerStep

ZONE_LABEL = "topology.kubernetes.io/zone"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
DEFAULT_BATCH_SECONDS = 1.0
SLICE_CHANGE_DELAY = 1.0  # a sync caused by someone else's slice edit waits at least this


def selector_of(svc: Obj) -> dict[str, str] | None:
    """The Service's selector when the controllers manage its endpoints (a selector, not
    ExternalName), else None."""
    spec = svc.get("spec") or {}
    sel = spec.get("selector")
    if not sel or not isinstance(sel, dict) or spec.get("type") == "ExternalName":
        return None
    return sel


def selects(selector: dict[str, str], pod: Obj) -> bool:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


def pod_ready(pod: Obj) -> bool:
    conds = (pod.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds if isinstance(c, dict))


def pod_ip(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("podIP") or "")


def target_port(svc_port: Obj, pod: Obj) -> int | None:
    """The Service port's target on ``pod``: a number as is, a name looked up among the
    pod's container ports (None when the pod has no such port)."""
    target = svc_port.get("targetPort", svc_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in (pod.get("spec") or {}).get("containers") or ():
        for p in c.get("ports") or ():
            if p.get("name") == target and p.get("protocol", "TCP") == svc_port.get("protocol", "TCP"):
                return int(p.get("containerPort") or 0) or None
    return None


def _service_name_index(obj: Obj) -> Iterable[str]:
    m = obj.get("metadata") or {}
    name = (m.get("labels") or {}).get(SERVICE_NAME_LABEL)
    return (f"{m.get('namespace', '')}/{name}",) if name else ()


def _namespace_index(obj: Obj) -> Iterable[str]:
    return ((obj.get("metadata") or {}).get("namespace", ""),)


INDEXERS: tuple[tuple[str, str, Indexer], ...] = (
    ("Service", "namespace", _namespace_index),
    ("EndpointSlice", "service", _service_name_index),
)


class ServicePodCache(ObjectCache):
    """An ``ObjectCache`` whose pods are kept decoded only while selected (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._selected: dict[str, dict[str, Obj]] = {}  # ns -> name -> pod
        self._parked: dict[str, dict[str, PodRecord]] = {}  # ns -> name -> record
        self._zones: dict[str, str] = {}
        self._records = PodRecords()
        self._last: tuple[PodRecord | None, list[Obj]] = (None, [])

    # -- reads ----------------------------------------------------------------------------
    def zone(self, node: str) -> str:
        return self._zones.get(node, "")

    def selected_pods(self, namespace: str, selector: dict[str, str]) -> list[Obj]:
        pods = self._selected.get(namespace, {})
        return [pods[n] for n in sorted(pods) if selects(selector, pods[n])]

    def services_selecting(self, pod: Obj) -> list[Key]:
        ns = (pod.get("metadata") or {}).get("namespace", "")
        out = []
        for svc in self.by_index("Service", "namespace", ns):
            sel = selector_of(svc)
            if sel is not None and selects(sel, pod):
                out.append((ns, svc["metadata"]["name"]))
        return out

    def kept(self) -> tuple[int, int]:
        """(pods kept decoded, pods kept as records)."""
        return sum(map(len, self._selected.values())), sum(map(len, self._parked.values()))

    # -- events ---------------------------------------------------------------------------
    def apply_node(self, event_type: str, node: Obj) -> None:
        m = node.get("metadata") or {}
        zone = (m.get("labels") or {}).get(ZONE_LABEL)
        if event_type == "DELETED" or not zone:
            self._zones.pop(m.get("name", ""), None)
        else:
            self._zones[m.get("name", "")] = sys.intern(zone)

    def apply_record(self, event_type: str, rec: PodRecord) -> list[Obj]:
        """Take a pod event; returns the pod's copies (before and now) the Services to look
        at are named by. Both controllers hand in the same record: applied once."""
        if rec is self._last[0]:
            return self._last[1]
        ns, name = rec.key
        old: Obj | None = self._selected.get(ns, {}).pop(name, None)
        self._parked.get(ns, {}).pop(name, None)
        seen = [old] if old is not None else []
        if event_type != "DELETED":
            pod = self._keep(ns, name, rec)
            if pod is not None:
                seen.append(pod)
        self._last = (rec, seen)
        return seen

    def _keep(self, ns: str, name: str, rec: PodRecord) -> Obj | None:
        """Keep the pod decoded when a Service in its namespace may select it, else park its
        record; the decoded pod (or None)."""
        if not any(selector_of(s) is not None for s in self.by_index("Service", "namespace", ns)):
            self._parked.setdefault(ns, {})[name] = rec
            return None
        pod = rec.pod()
        if self.services_selecting(pod):
            self._selected.setdefault(ns, {})[name] = pod
            return pod
        self._parked.setdefault(ns, {})[name] = rec
        return None

    def apply_pod(self, event_type: str, pod: Obj) -> list[Obj]:
        """A pod event without a record (a caller with the dict alone)."""
        return self.apply_record(event_type, self._records.make(pod, None))

    def apply(self, kind: str, event_type: str, obj: Obj) -> Obj | None:
        old: Obj | None = super().apply(kind, event_type, obj)
        if kind == "Service" and event_type != "DELETED" and selector_of(obj) is not None:
            self._promote(obj)
        return old

    def _promote(self, svc: Obj) -> None:
        """A Service that selects: its parked pods that it selects are decoded and kept.
        (A pod no Service selects any more stays decoded until its next event.)"""
        ns, sel = svc["metadata"].get("namespace", ""), selector_of(svc) or {}
        parked = self._parked.get(ns)
        if not parked:
            return
        for name in list(parked):
            pod = parked[name].pod()
            if selects(sel, pod):
                del parked[name]
                self._selected.setdefault(ns, {})[name] = pod
        if not parked:
            del self._parked[ns]


class ServicePodsStep(ReconcilerStep):
    """A ``ReconcilerStep`` over a ``ServicePodCache``: pods come as records (or dicts) and
    name the Services selecting them (before and after the change), queued after the batch
    period; a slice or Endpoints edit names its Service after ``SLICE_CHANGE_DELAY``."""

    def __init__(
        self,
        make: Callable[[ObjectCache], Reconciler],
        cache: ServicePodCache,
        batch_seconds: float = DEFAULT_BATCH_SECONDS,
    ) -> None:
        # Pods as the manager's shared records (the reconcilers' pod watch says
        # ``records``): their bytes are the ones pod GC keeps, never encoded again here.
        super().__init__(make, cache, sort_keys=True, records=cache._records)
        self.pods: ServicePodCache = cache
        self.batch_seconds = batch_seconds

    def on_pod_record(self, event_type: str, rec: PodRecord, now: float) -> None:
        self._pod_keys(self.pods.apply_record(event_type, rec), now)

    def on_event(self, kind: str, event_type: str, obj: Obj, now: float) -> None:
        if kind == "Pod":
            self._pod_keys(self.pods.apply_pod(event_type, obj), now)
        elif kind == "Node":
            self.pods.apply_node(event_type, obj)
        elif kind in ("EndpointSlice", "Endpoints"):
            self.cache.apply(kind, event_type, obj)
            for key in self._routes[kind].keys(event_type, obj):
                self.queue.add_after(key, SLICE_CHANGE_DELAY, now)
        else:
            super().on_event(kind, event_type, obj, now)

    def _pod_keys(self, copies: list[Obj], now: float) -> None:
        keys = {k for pod in copies for k in self.pods.services_selecting(pod)}
        for key in sorted(keys):
            if self.batch_seconds > 0:
                self.queue.add_after(key, self.batch_seconds, now)
            else:
                self.queue.add(key)

    def inspect(self) -> dict[str, Any]:
        decoded, records = self.pods.kept()
        return {**self.metrics(), "podsDecoded": decoded, "podsAsRecords": records}
