"""The EndpointSlice controller: a Service's selected pods as EndpointSlices.

Owns what upstream's EndpointSlice reconciler decides for a Service with a selector: the
desired endpoints (a pod that is not terminal and has an IP; terminating pods included,
with ``ready``/``serving``/``terminating`` conditions), grouped by the ports they resolve
to (a named target port looked up per pod), packed into slices of at most 100 endpoints
(``plan``: keep unchanged slices, update changed ones and fill them, then fill the fullest
unchanged slice that has room, then create; a create and a delete become an update; an
empty placeholder slice when nothing is desired), with the labels, ownerReference and
trigger-time annotation upstream writes. Registered by ``manager.default_controllers``
(a ``ServicePodsStep``, ``servicepods.py``); it reads the shared ``ServicePodCache``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..api.requests import Create, Delete, Update
from .reconciler import Indexer, Key, Obj, Outcome, Watches
from .servicepods import (
    INDEXERS,
    SERVICE_NAME_LABEL,
    ServicePodCache,
    pod_ip,
    pod_ready,
    selector_of,
    target_port,
)

MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
MAX_ENDPOINTS_PER_SLICE = 100
Ports = tuple[tuple[str, int, str, str], ...]  # (name, port, protocol, appProtocol) per Service port


@dataclass
class Plan:
    """What to write for one Service: slices to update (name -> endpoints), to create."""

    updates: dict[str, tuple[Ports, list[Obj]]] = field(default_factory=dict)
    creates: list[tuple[Ports, list[Obj]]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)


def _ep_key(ep: Obj) -> tuple[str, str]:
    ref = ep.get("targetRef") or {}
    return (str(ref.get("name") or ""), str((ep.get("addresses") or [""])[0]))


def plan(existing: list[tuple[str, Ports, list[Obj]]], desired: dict[Ports, list[Obj]], limit: int) -> Plan:
    """Upstream's packing: ``existing`` slices (name, ports, endpoints) against the
    ``desired`` endpoints by port set, at most ``limit`` endpoints a slice."""
    out = Plan()
    for ports in sorted(set(desired) | {p for _, p, _ in existing}):
        want = {_ep_key(ep): ep for ep in desired.get(ports, ())}
        to_update: list[tuple[str, list[Obj]]] = []
        unchanged: list[tuple[str, list[Obj]]] = []
        for name, _, eps in sorted((s for s in existing if s[1] == ports), key=lambda s: s[0]):
            kept = [want.pop(_ep_key(ep)) for ep in eps if _ep_key(ep) in want]
            if not kept:
                out.deletes.append(name)
            elif kept != eps:
                to_update.append((name, kept))
            else:
                unchanged.append((name, kept))
        rest = list(want.values())
        for _, eps in sorted(to_update, key=lambda s: -len(s[1])):  # fill the fullest first
            while rest and len(eps) < limit:
                eps.append(rest.pop(0))
        while rest:
            fit = [s for s in unchanged if len(s[1]) + len(rest) <= limit] if len(rest) < limit else []
            if fit:
                chosen = max(fit, key=lambda s: len(s[1]))
                unchanged.remove(chosen)
                to_update.append(chosen)
                eps = chosen[1]
            else:
                eps = []
                out.creates.append((ports, eps))
            while rest and len(eps) < limit:
                eps.append(rest.pop(0))
        for name, eps in to_update:
            out.updates[name] = (ports, eps)
    if len(out.deletes) == len(existing) and not out.creates:
        placeholder = [s for s in existing if s[1] == () and not s[2]]
        if len(out.deletes) == 1 and placeholder:
            out.deletes = []  # the placeholder stays as it is
        else:
            out.creates.append(((), []))
    while out.deletes and out.creates:  # a delete and a create make one update
        out.updates[out.deletes.pop(0)] = out.creates.pop(0)
    return out


def desired_endpoints(svc: Obj, pods: list[Obj], zone_of: Any) -> dict[Ports, list[Obj]]:
    spec = svc.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    out: dict[Ports, list[Obj]] = {}
    for pod in pods:
        status, m = pod.get("status") or {}, pod.get("metadata") or {}
        ip = pod_ip(pod)
        if not ip or status.get("phase") in ("Succeeded", "Failed"):
            continue
        ports: list[tuple[str, int, str, str]] = []
        for sp in spec.get("ports") or ():
            port = target_port(sp, pod)
            if port is not None:
                ports.append((sp.get("name") or "", port, sp.get("protocol") or "TCP", sp.get("appProtocol") or ""))
        serving, terminating = pod_ready(pod), bool(m.get("deletionTimestamp"))
        ep: Obj = {
            "addresses": [ip],
            "conditions": {
                "ready": publish or (serving and not terminating),
                "serving": serving,
                "terminating": terminating,
            },
        }
        pspec = pod.get("spec") or {}
        if pspec.get("hostname") and pspec.get("subdomain") == svc["metadata"]["name"]:
            ep["hostname"] = pspec["hostname"]
        ep["targetRef"] = {
            "kind": "Pod",
            "namespace": m.get("namespace", ""),
            "name": m.get("name", ""),
            "uid": m.get("uid", ""),
        }
        node = pspec.get("nodeName")
        if node:
            ep["nodeName"] = node
            if zone_of(node):
                ep["zone"] = zone_of(node)
        out.setdefault(tuple(ports), []).append(ep)
    return out


def trigger_time(svc: Obj, pods: list[Obj]) -> str:
    """The time of the last change the endpoints follow: a pod's Ready transition (its
    creation when it has none) or the Service's creation, the latest."""
    times = [str((svc.get("metadata") or {}).get("creationTimestamp") or "")]
    for pod in pods:
        ready = [
            c.get("lastTransitionTime")
            for c in (pod.get("status") or {}).get("conditions") or ()
            if isinstance(c, dict) and c.get("type") == "Ready"
        ]
        times.append(str((ready[0] if ready else None) or (pod.get("metadata") or {}).get("creationTimestamp") or ""))
    return max(times)


def service_labels(svc: Obj) -> dict[str, str]:
    labels = dict((svc.get("metadata") or {}).get("labels") or {})
    if (svc.get("spec") or {}).get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    return labels


class EndpointSliceReconciler:
    name: ClassVar[str] = "endpointslice"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Node"),
        Watches("Service"),
        Watches("Pod", records=True),  # handled by ServicePodsStep.on_pod_record
        Watches(
            "EndpointSlice",
            keys=lambda t, o: [tuple(v.split("/", 1)) for v in INDEXERS[1][2](o)],  # type: ignore[misc]
        ),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = INDEXERS

    def __init__(self, cache: ServicePodCache, max_per_slice: int = MAX_ENDPOINTS_PER_SLICE) -> None:
        self.cache = cache
        self.max_per_slice = max_per_slice

    def reconcile(self, key: Key, now: float) -> Outcome:
        ns, name = key
        svc = self.cache.get("Service", ns, name)
        sel = selector_of(svc) if svc is not None else None
        if svc is None or sel is None:
            return Outcome()  # gone (its slices follow by ownerReference) or not ours to manage
        owned = [
            s
            for s in self.cache.by_index("EndpointSlice", "service", f"{ns}/{name}")
            if ((s.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY_LABEL) == CONTROLLER_NAME
        ]
        pods = self.cache.selected_pods(ns, sel)
        desired = desired_endpoints(svc, pods, self.cache.zone)
        existing = [(s["metadata"]["name"], _ports_of(s), list(s.get("endpoints") or ())) for s in owned]
        labels = {**service_labels(svc), SERVICE_NAME_LABEL: name, MANAGED_BY_LABEL: CONTROLLER_NAME}
        p = plan(existing, desired, self.max_per_slice)
        for s in owned:  # a slice whose labels drifted is rewritten as it stands
            m = s["metadata"]
            if m["name"] not in p.updates and m["name"] not in p.deletes and m.get("labels") != labels:
                p.updates[m["name"]] = (_ports_of(s), list(s.get("endpoints") or ()))
        stamp = trigger_time(svc, pods)
        by_name = {s["metadata"]["name"]: s for s in owned}
        writes: list[Any] = []
        for slice_name, (ports, eps) in sorted(p.updates.items()):
            obj = self._slice(svc, labels, ports, eps, stamp)
            old = by_name[slice_name]["metadata"]
            obj["metadata"].pop("generateName")
            obj["metadata"].update(name=slice_name, resourceVersion=old.get("resourceVersion"))
            writes.append(Update(obj))
        writes += [Create(self._slice(svc, labels, ports, eps, stamp)) for ports, eps in p.creates]
        writes += [Delete("EndpointSlice", ns, n, by_name[n]["metadata"].get("uid", "")) for n in p.deletes]
        return Outcome(writes=writes)

    def _slice(self, svc: Obj, labels: dict[str, str], ports: Ports, eps: list[Obj], stamp: str) -> Obj:
        m = svc["metadata"]
        meta: Obj = {
            "generateName": f"{m['name']}-",
            "namespace": m.get("namespace", ""),
            "labels": dict(labels),
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "name": m["name"],
                    "uid": m.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        if stamp:
            meta["annotations"] = {TRIGGER_TIME: stamp}
        return {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": meta,
            "addressType": "IPv4",
            "endpoints": eps,
            "ports": [_port(p) for p in ports],
        }


def _port(p: tuple[str, int, str, str]) -> Obj:
    out: Obj = {"name": p[0], "port": p[1], "protocol": p[2]}
    if p[3]:
        out["appProtocol"] = p[3]
    return out


def _ports_of(s: Obj) -> Ports:
    return tuple(
        (p.get("name") or "", int(p.get("port") or 0), p.get("protocol") or "TCP", p.get("appProtocol") or "")
        for p in s.get("ports") or ()
    )
