"""The Endpoints controller: a Service's selected pods as the core/v1 Endpoints object.

Owns upstream's rules for the Endpoints named like a Service with a selector: pods that
are not terminal and have an IP, terminating ones left out unless the Service publishes
not-ready addresses; ready pods under ``addresses``, the others under
``notReadyAddresses`` (all under ``addresses`` with ``publishNotReadyAddresses``); subsets
grouped by identical port sets (a named target port looked up per pod), addresses sorted
by IP; at most 1000 addresses, past which they are cut and the object annotated
``endpoints.kubernetes.io/over-capacity: truncated``; the labels of the Service (plus
``service.kubernetes.io/headless`` when headless) and the last-change-trigger-time
annotation. The object is deleted with its Service; one whose Service this controller never
saw is a user's and stays (upstream hears Endpoints only when one is deleted; its sweep of
leftovers at start-up kubemu does not do). Registered by
``manager.default_controllers`` over the shared ``ServicePodCache`` (``servicepods.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..api.requests import Create, Delete, Update
from .endpointslice import TRIGGER_TIME, EndpointSliceReconciler, service_labels, trigger_time
from .reconciler import Indexer, Key, Obj, Outcome, Watches
from .servicepods import (
    DEFAULT_BATCH_SECONDS,
    INDEXERS,
    ServicePodCache,
    ServicePodsStep,
    pod_ip,
    pod_ready,
    selector_of,
    target_port,
)

MAX_ADDRESSES = 1000
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"


def subsets(svc: Obj, pods: list[Obj]) -> tuple[list[Obj], bool]:
    """The Endpoints' subsets for ``pods``, and whether addresses were cut at 1000."""
    spec = svc.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    groups: dict[tuple[tuple[str, int, str, str], ...], tuple[list[Obj], list[Obj]]] = {}
    total = 0
    for pod in pods:
        m, status = pod.get("metadata") or {}, pod.get("status") or {}
        ip = pod_ip(pod)
        if not ip or status.get("phase") in ("Succeeded", "Failed"):
            continue
        if m.get("deletionTimestamp") and not publish:
            continue
        ports = []
        for sp in spec.get("ports") or ():
            port = target_port(sp, pod)
            if port is not None:
                ports.append((sp.get("name") or "", port, sp.get("protocol") or "TCP", sp.get("appProtocol") or ""))
        if not ports and spec.get("ports"):
            continue
        addr: Obj = {"ip": ip}
        pspec = pod.get("spec") or {}
        if pspec.get("hostname") and pspec.get("subdomain") == svc["metadata"]["name"]:
            addr["hostname"] = pspec["hostname"]
        if pspec.get("nodeName"):
            addr["nodeName"] = pspec["nodeName"]
        addr["targetRef"] = {
            "kind": "Pod",
            "namespace": m.get("namespace", ""),
            "name": m.get("name", ""),
            "uid": m.get("uid", ""),
        }
        ready, not_ready = groups.setdefault(tuple(sorted(ports)), ([], []))
        total += 1
        (ready if publish or pod_ready(pod) else not_ready).append(addr)
    out, kept = [], 0
    for port_set, (ready, not_ready) in sorted(groups.items()):
        subset: Obj = {}
        for field, addrs in (("addresses", ready), ("notReadyAddresses", not_ready)):
            addrs = sorted(addrs, key=lambda a: (a["ip"], a["targetRef"]["uid"]))[: max(0, MAX_ADDRESSES - kept)]
            kept += len(addrs)
            if addrs:
                subset[field] = addrs
        if not subset:
            continue
        subset["ports"] = [_port(p) for p in port_set]
        out.append(subset)
    return out, total > MAX_ADDRESSES


def _port(p: tuple[str, int, str, str]) -> Obj:
    out: Obj = {"port": p[1], "protocol": p[2]}
    if p[0]:
        out = {"name": p[0], **out}
    if p[3]:
        out["appProtocol"] = p[3]
    return out


class EndpointsReconciler:
    name: ClassVar[str] = "endpoints"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Service"),
        Watches("Pod", records=True),  # handled by ServicePodsStep.on_pod_record
        Watches("Endpoints"),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = INDEXERS

    def __init__(self, cache: ServicePodCache) -> None:
        self.cache = cache
        # The Services this controller has seen: when one goes, its Endpoints go with it. An
        # Endpoints whose Service this controller never saw is a user's (created before its
        # Service, or for none) and stays, as upstream's controller leaves it.
        self.served: set[Key] = set()

    def reconcile(self, key: Key, now: float) -> Outcome:
        ns, name = key
        svc = self.cache.get("Service", ns, name)
        have = self.cache.get("Endpoints", ns, name)
        if svc is None:
            if have is None:
                self.served.discard(key)
            elif key in self.served:
                return Outcome(writes=[Delete("Endpoints", ns, name, have["metadata"].get("uid", ""))])
            return Outcome()
        self.served.add(key)
        sel = selector_of(svc)
        if sel is None:
            return Outcome()  # no selector: the user's Endpoints, not ours
        pods = self.cache.selected_pods(ns, sel)
        subs, truncated = subsets(svc, pods)
        labels = service_labels(svc)
        if have is not None and _current(have, subs, labels, truncated):
            return Outcome()
        annotations: dict[str, Any] = {}
        stamp = trigger_time(svc, pods)
        if stamp:
            annotations[TRIGGER_TIME] = stamp
        if truncated:
            annotations[OVER_CAPACITY] = "truncated"
        meta: Obj = {"name": name, "namespace": ns, "labels": labels}
        if annotations:
            meta["annotations"] = annotations
        obj: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta, "subsets": subs}
        if have is None:
            return Outcome(writes=[Create(obj)])
        meta["resourceVersion"] = have["metadata"].get("resourceVersion")
        return Outcome(writes=[Update(obj)])


def _current(have: Obj, subs: list[Obj], labels: dict[str, str], truncated: bool) -> bool:
    m = have.get("metadata") or {}
    cut = (m.get("annotations") or {}).get(OVER_CAPACITY) == "truncated"
    return (have.get("subsets") or []) == subs and (m.get("labels") or {}) == labels and cut == truncated


def service_endpoint_steps(batch_seconds: float = DEFAULT_BATCH_SECONDS) -> list[ServicePodsStep]:
    """The EndpointSlice and Endpoints controllers over one shared pod cache, as the
    controller-manager runs them."""
    pods = ServicePodCache()
    return [
        ServicePodsStep(lambda _: EndpointSliceReconciler(pods), pods, batch_seconds),
        ServicePodsStep(lambda _: EndpointsReconciler(pods), pods, batch_seconds),
    ]
