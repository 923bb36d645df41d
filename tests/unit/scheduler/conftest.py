"""Builders shared by the scheduler unit tests.

``make_pod``/``make_node`` return dict subclasses whose chainable methods fill in the
Kubernetes-shaped fields, so a builder is itself the object the scheduler consumes:
``make_pod("a").req(cpu="2").node("n1")``.

Test modules import them as ``from sched_builders import ...``: the tests tree has no
``__init__.py`` files, so several ``conftest`` modules share one name; this module
registers itself under a unique alias when pytest loads it (before any test module here).
"""

from __future__ import annotations

import copy
import sys
import weakref

import pytest

from cluster.api.codec import encode
from cluster.runtime.component import WatchEvent
from cluster.scheduler import Scheduler, SchedulerConfig
from cluster.scheduler.cache import Cache


class PodBuilder(dict):
    def __init__(self, name: str, namespace: str = "default", uid: str | None = None):
        super().__init__(
            apiVersion="v1",
            kind="Pod",
            metadata={"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"},
            spec={"schedulerName": "default-scheduler", "containers": []},
            status={"phase": "Pending"},
        )

    def req(self, **requests) -> PodBuilder:
        """Add a container requesting ``requests`` (underscores allowed for dashes)."""
        reqs = {k.replace("_", "-"): v for k, v in requests.items()}
        c = {"name": f"c{len(self['spec']['containers'])}", "image": "x"}
        if reqs:
            c["resources"] = {"requests": reqs}
        self["spec"]["containers"].append(c)
        return self

    def ext(self, name: str, amount: str) -> PodBuilder:
        """Add a container requesting an extended resource (requests = limits)."""
        self["spec"]["containers"].append(
            {
                "name": f"c{len(self['spec']['containers'])}",
                "image": "x",
                "resources": {"requests": {name: amount}, "limits": {name: amount}},
            }
        )
        return self

    def node(self, node_name: str) -> PodBuilder:
        self["spec"]["nodeName"] = node_name
        return self

    def prio(self, priority: int) -> PodBuilder:
        self["spec"]["priority"] = priority
        return self

    def nominated(self, node_name: str) -> PodBuilder:
        self["status"]["nominatedNodeName"] = node_name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self["status"]["phase"] = phase
        return self

    def scheduler(self, name: str) -> PodBuilder:
        self["spec"]["schedulerName"] = name
        return self

    def terminating(self) -> PodBuilder:
        self["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self["metadata"].setdefault("labels", {})[key] = value
        return self

    def toleration(
        self, key: str = "", operator: str = "Equal", value: str = "", effect: str = "", seconds: int | None = None
    ) -> PodBuilder:
        t = {"key": key, "operator": operator, "value": value, "effect": effect}
        if seconds is not None:
            t["tolerationSeconds"] = seconds
        self["spec"].setdefault("tolerations", []).append(t)
        return self

    def node_selector(self, **labels) -> PodBuilder:
        self["spec"].setdefault("nodeSelector", {}).update(labels)
        return self

    def _affinity(self, kind: str) -> dict:
        return self["spec"].setdefault("affinity", {}).setdefault(kind, {})

    def node_affinity(self, *terms: dict) -> PodBuilder:
        """Required node affinity: each term is a NodeSelectorTerm (ORed)."""
        req = self._affinity("nodeAffinity").setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        req["nodeSelectorTerms"].extend(terms)
        return self

    def preferred_node_affinity(self, weight: int, term: dict) -> PodBuilder:
        self._affinity("nodeAffinity").setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": term}
        )
        return self

    def pod_affinity(
        self, topology_key: str, selector: dict, weight: int | None = None, anti: bool = False, **term_fields
    ) -> PodBuilder:
        """A required (weight None) or preferred inter-pod (anti-)affinity term.
        ``selector`` is a metav1.LabelSelector; extra fields (namespaces,
        namespaceSelector) go into the PodAffinityTerm."""
        term = {"labelSelector": selector, "topologyKey": topology_key, **term_fields}
        section = self._affinity("podAntiAffinity" if anti else "podAffinity")
        if weight is None:
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def pod_anti_affinity(
        self, topology_key: str, selector: dict, weight: int | None = None, **term_fields
    ) -> PodBuilder:
        return self.pod_affinity(topology_key, selector, weight, anti=True, **term_fields)

    def spread(
        self, topology_key: str, max_skew: int = 1, when: str = "DoNotSchedule", selector: dict | None = None, **fields
    ) -> PodBuilder:
        """A topologySpreadConstraint; extra fields (minDomains, nodeAffinityPolicy,
        nodeTaintsPolicy, matchLabelKeys) are passed through."""
        c = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when,
            "labelSelector": selector
            if selector is not None
            else {"matchLabels": dict(self["metadata"].get("labels") or {})},
            **fields,
        }
        self["spec"].setdefault("topologySpreadConstraints", []).append(c)
        return self

    def host_port(self, port: int, protocol: str = "TCP", ip: str = "", init: bool = False) -> PodBuilder:
        group = "initContainers" if init else "containers"
        containers = self["spec"].setdefault(group, [])
        if not containers:
            containers.append({"name": f"{group[:4]}0", "image": "x"})
        p = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if ip:
            p["hostIP"] = ip
        containers[-1].setdefault("ports", []).append(p)
        return self

    def image(self, *images: str) -> PodBuilder:
        """One container per image."""
        for img in images:
            self["spec"]["containers"].append({"name": f"c{len(self['spec']['containers'])}", "image": img})
        return self

    def copy_(self) -> PodBuilder:
        import copy

        return copy.deepcopy(self)


class NodeBuilder(dict):
    def __init__(self, name: str):
        super().__init__(
            apiVersion="v1",
            kind="Node",
            metadata={"name": name, "labels": {}},
            spec={},
            status={"allocatable": {"pods": "110"}},
        )

    def alloc(self, **resources) -> NodeBuilder:
        self["status"]["allocatable"].update({k.replace("_", "-"): v for k, v in resources.items()})
        return self

    def ext(self, name: str, amount: str) -> NodeBuilder:
        self["status"]["allocatable"][name] = amount
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self["metadata"]["labels"][key] = value
        return self

    def taint(self, key: str, effect: str = "NoSchedule", value: str = "") -> NodeBuilder:
        self["spec"].setdefault("taints", []).append({"key": key, "value": value, "effect": effect})
        return self

    def unschedulable(self) -> NodeBuilder:
        self["spec"]["unschedulable"] = True
        return self

    def image(self, size_bytes: int, *names: str) -> NodeBuilder:
        self["status"].setdefault("images", []).append({"names": list(names), "sizeBytes": size_bytes})
        return self

    def heartbeat(self, t: str) -> NodeBuilder:
        self["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": t}]
        return self

    def copy_(self) -> NodeBuilder:
        import copy

        return copy.deepcopy(self)


def make_pod(name: str = "p", namespace: str = "default", uid: str | None = None) -> PodBuilder:
    return PodBuilder(name, namespace, uid)


def make_node(name: str = "n", cpu: str = "4", memory: str = "16Gi", pods: str = "110") -> NodeBuilder:
    return NodeBuilder(name).alloc(cpu=cpu, memory=memory, pods=pods)


def cache_with(nodes, bound_pods=()) -> Cache:
    """A scheduler cache holding ``nodes`` and the already-bound ``bound_pods``."""
    c = Cache()
    for n in nodes:
        c.add_node(n)
    for p in bound_pods:
        c.add_pod(p)
    return c


def make_scheduler(nodes=(), pods=(), now: float = 0.0, seed: int = 0, **config) -> Scheduler:
    s = Scheduler(SchedulerConfig(**config), seed=seed)
    for n in nodes:
        s.on_node("ADDED", n, now)
    for p in pods:
        s.on_pod("ADDED", p, now)
    return s


def bound(pod: dict, node_name: str) -> dict:
    """The object the watch delivers once ``pod`` is bound to ``node_name``."""
    import copy

    out = copy.deepcopy(pod)
    out["spec"]["nodeName"] = node_name
    return out


def confirm_all(s: Scheduler, out, pods_by_uid: dict, now: float) -> None:
    for _, _, uid, node_name in out.binds:
        s.on_pod("MODIFIED", bound(pods_by_uid[uid], node_name), now)


def cycle_trail(s: Scheduler, out) -> tuple:
    """What one ``schedule`` call decided, as the equivalence tests compare it."""
    return (out.binds, out.deletes, out.nominations, [e["message"] for e in out.events], s.next_start_node_index)


def feed_back(s: Scheduler, out, pods: dict, now: float) -> None:
    """Deliver the watch events a ``schedule`` call's writes cause: each bind, each
    nomination, each victim's deletion (``pods``, by uid, follows)."""
    for _, _, uid, node_name in out.binds:
        pods[uid] = bound(pods[uid], node_name)
        s.on_pod("MODIFIED", pods[uid], now)
    for _, _, uid, node_name in out.nominations:
        pods[uid] = dict(pods[uid], status={**pods[uid]["status"], "nominatedNodeName": node_name})
        s.on_pod("MODIFIED", pods[uid], now)
    for _, _, uid in out.deletes:
        if uid in pods:  # two preemptors may name the same victim
            s.on_pod("DELETED", pods.pop(uid), now)


@pytest.fixture(autouse=True)
def _placed_pods_as_bytes(monkeypatch):
    """The runtimes hand the scheduler each object's encoding with its watch event, and the
    scheduler keeps nodes, placed pods and untried pending pods as those bytes: every test
    here drives the scheduler and the cache that way, so each one also checks that nothing
    needs the dropped dicts."""
    for cls, method in ((Cache, "add_pod"), (Cache, "add_node"), (Cache, "update_node")):
        monkeypatch.setattr(cls, method, _with_raw(getattr(cls, method), 0, 1))
    monkeypatch.setattr(Scheduler, "on_node", _with_raw(Scheduler.on_node, 1, 3))
    monkeypatch.setattr(Scheduler, "on_pod", _as_watch_event)


# scheduler -> uid -> the last object a test handed its ``on_pod``: a placed pod keeps no
# object in the scheduler, so a test that wants to send it again (deleted, started) asks here.
_GIVEN: weakref.WeakKeyDictionary[Scheduler, dict[str, dict]] = weakref.WeakKeyDictionary()


def last_given(s: Scheduler, uid: str) -> dict:
    """The last object of pod ``uid`` this test gave ``s.on_pod`` (a copy)."""
    return copy.deepcopy(_GIVEN[s][uid])


def _as_watch_event(self, event_type: str, pod: dict, now: float, raw: bytes | None = None) -> None:
    """``on_pod`` as the runtimes drive it: a watch event carrying the encoding, judged by
    the pod's head first (``Scheduler.on_pod_event``)."""
    _GIVEN.setdefault(self, {})[(pod.get("metadata") or {}).get("uid", "")] = pod
    self.on_pod_event(WatchEvent("Pod", event_type, raw=encode(pod) if raw is None else raw), now)


def _with_raw(method, obj_at: int, raw_at: int):
    """``method`` given the object's encoding when the caller gave none (``obj_at`` and
    ``raw_at``: the positions of the object and of ``raw`` among the arguments after self)."""

    def as_watched(self, *args, raw=None, **kwargs):
        if len(args) > raw_at:
            *args, raw = args
        return method(self, *args, raw=encode(args[obj_at]) if raw is None else raw, **kwargs)

    return as_watched


@pytest.fixture
def pod():
    return make_pod


@pytest.fixture
def node():
    return make_node


sys.modules.setdefault("sched_builders", sys.modules[__name__])
