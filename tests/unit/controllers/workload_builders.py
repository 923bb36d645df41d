"""Builders for the ReplicaSet and DaemonSet controller tests, and two harnesses.

The builders are dict subclasses with chainable methods, so a builder is the object the
controller consumes: ``rs("web", replicas=3).labels(app="web")``,
``pod("web-a").owned_by(r).phase("Running").ready(at=5)``, ``node("n1").taint("k")``.

``Fake`` plays the apiserver by hand: ``land(writes)`` gives each created pod a name
(``<generateName><n>``), a uid and a creationTimestamp and feeds it back as ADDED, so a test
can assert exact writes step by step. ``Real`` pumps the controller against the real
``APIServer`` logic (validation, admission, graceful deletion) with a reflector, as the
controller-manager actor would.
"""

from __future__ import annotations

import copy

from cluster.api.errors import Forbidden, NotAttempted
from cluster.api.requests import Create
from cluster.apiserver.apiserver import APIServer
from cluster.clock import rfc3339
from cluster.controllers.writes import requests
from cluster.runtime.reflector import Reflector

CONTAINERS = [{"name": "c", "image": "busybox"}]


class _Obj(dict):
    @property
    def meta(self) -> dict:
        return self.setdefault("metadata", {})

    @property
    def spec(self) -> dict:
        return self.setdefault("spec", {})

    @property
    def key(self) -> tuple[str, str]:
        return self.meta.get("namespace", ""), self.meta["name"]

    def uid(self, uid: str):
        self.meta["uid"] = uid
        return self

    def rv(self, rv: str):
        self.meta["resourceVersion"] = rv
        return self

    def generation(self, g: int):
        self.meta["generation"] = g
        return self

    def terminating(self, at: float = 100.0):
        self.meta["deletionTimestamp"] = rfc3339(at)
        return self

    def status(self, **fields):
        self.setdefault("status", {}).update(fields)
        return self

    def copy(self):
        return type(self)(copy.deepcopy(dict(self)))


class Workload(_Obj):
    """A ReplicaSet or DaemonSet."""

    @property
    def template(self) -> dict:
        return self.spec.setdefault("template", {"metadata": {}, "spec": {"containers": list(CONTAINERS)}})

    def labels(self, **labels):
        self.spec["selector"] = {"matchLabels": dict(labels)}
        self.template.setdefault("metadata", {})["labels"] = dict(labels)
        return self

    def template_labels(self, **labels):
        self.template["metadata"]["labels"] = {**self.template["metadata"].get("labels", {}), **labels}
        return self

    def pod_spec(self, **fields):
        self.template["spec"].update(fields)
        return self

    def min_ready(self, seconds: int):
        self.spec["minReadySeconds"] = seconds
        return self

    def replicas(self, n: int):
        self.spec["replicas"] = n
        return self


def rs(name: str, replicas: int | None = 3, ns: str = "default", uid: str | None = None) -> Workload:
    obj = Workload(
        apiVersion="apps/v1",
        kind="ReplicaSet",
        metadata={"name": name, "namespace": ns, "uid": uid or f"uid-rs-{name}"},
        spec={},
    )
    if replicas is not None:
        obj.spec["replicas"] = replicas
    obj.template  # noqa: B018 - create the template
    return obj.labels(app=name)


def ds(name: str, ns: str = "default", uid: str | None = None) -> Workload:
    obj = Workload(
        apiVersion="apps/v1",
        kind="DaemonSet",
        metadata={"name": name, "namespace": ns, "uid": uid or f"uid-ds-{name}"},
        spec={},
    )
    obj.template  # noqa: B018
    return obj.labels(app=name)


class Pod(_Obj):
    def labels(self, **labels):
        self.meta["labels"] = dict(labels)
        return self

    def owned_by(self, owner: dict, controller: bool = True):
        m = owner["metadata"]
        self.meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner["kind"],
                "name": m["name"],
                "uid": m["uid"],
                "controller": controller,
                "blockOwnerDeletion": True,
            }
        ]
        labels = (((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
        if labels and not self.meta.get("labels"):
            self.meta["labels"] = dict(labels)
        return self

    def phase(self, phase: str):
        self.setdefault("status", {})["phase"] = phase
        return self

    def ready(self, at: float = 0.0, ready: bool = True):
        conds = self.setdefault("status", {}).setdefault("conditions", [])
        conds[:] = [c for c in conds if c["type"] != "Ready"]
        conds.append({"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": rfc3339(at)})
        return self.phase("Running") if self["status"].get("phase") in (None, "Pending") else self

    def on(self, node: str):
        self.spec["nodeName"] = node
        return self

    def for_node(self, node: str):
        self.spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                }
            }
        }
        return self

    def created(self, at: float):
        self.meta["creationTimestamp"] = rfc3339(at)
        return self

    def restarts(self, n: int):
        self.setdefault("status", {})["containerStatuses"] = [{"name": "c", "restartCount": n}]
        return self

    def cost(self, c):
        self.meta.setdefault("annotations", {})["controller.kubernetes.io/pod-deletion-cost"] = str(c)
        return self


def pod(name: str, ns: str = "default", uid: str | None = None) -> Pod:
    return Pod(
        apiVersion="v1",
        kind="Pod",
        metadata={
            "name": name,
            "namespace": ns,
            "uid": uid or f"uid-{name}",
            "labels": {},
            "creationTimestamp": rfc3339(0),
            "resourceVersion": "1",
        },
        spec={"containers": list(CONTAINERS)},
        status={"phase": "Pending"},
    )


class Node(_Obj):
    def labels(self, **labels):
        self.meta["labels"] = dict(labels)
        return self

    def taint(self, key: str, effect: str = "NoSchedule", value: str = ""):
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self.spec.setdefault("taints", []).append(t)
        return self


def node(name: str) -> Node:
    return Node(apiVersion="v1", kind="Node", metadata={"name": name, "uid": f"uid-{name}", "labels": {}}, spec={})


def names(items) -> list[str]:
    """Names of pods (dicts) or of (ns, name, ...) tuples."""
    return [i["metadata"]["name"] if isinstance(i, dict) else i[1] for i in items]


def target(p: dict) -> str:
    terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return terms["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]


class Fake:
    """A controller and a hand-driven stand-in for the apiserver."""

    def __init__(self, ctrl, now: float = 0.0):
        self.ctrl, self.now, self.seq = ctrl, now, 0

    def add(self, *objs, etype: str = "ADDED"):
        for o in objs:
            self.ctrl.on_event(o["kind"], etype, o, self.now)
        return self

    def modify(self, *objs):
        return self.add(*objs, etype="MODIFIED")

    def remove(self, *objs):
        return self.add(*objs, etype="DELETED")

    def sync(self):
        return self.ctrl.sync(self.now)

    def land(self, writes, fail: int = 0, error=None) -> list[Pod]:
        """Create ``writes.pod_creates`` as the apiserver applies their requests: the last
        ``fail`` are refused with ``error`` and, once one is, its owner's later slow-start
        batches are not attempted. Feeds back the ADDED events; returns the created pods."""
        made: list[Pod] = []
        error = Forbidden("exceeded quota") if error is None else error
        creates = [r for r in requests(writes) if isinstance(r, Create) and r.obj.get("kind") == "Pod"]
        stopped: dict[str, int] = {}
        for i, req in enumerate(creates):
            group, batch = req.slow_start or ("", i)
            if stopped.get(group, batch) < batch:
                self.ctrl.on_create_failed(req.obj, NotAttempted("not attempted"), self.now)
                continue
            if i >= len(creates) - fail:
                stopped.setdefault(group, batch)
                self.ctrl.on_create_failed(req.obj, error, self.now)
                continue
            p = Pod(copy.deepcopy(req.obj))
            name = f"{p.meta.pop('generateName')}{self.seq}"
            self.seq += 1
            p.meta.update(name=name, uid=f"uid-{name}", creationTimestamp=rfc3339(self.now), resourceVersion="1")
            p.setdefault("status", {"phase": "Pending"})
            made.append(p)
            self.add(p)
        return made


class Real:
    """A controller pumped against the real apiserver logic, like the actor pumps it."""

    def __init__(self, ctrl, now: float = 0.0):
        self.ctrl, self.now = ctrl, now
        self.api = APIServer()
        self.reflector = Reflector(list(ctrl.kinds))
        self.rv = {k: None for k in ctrl.kinds}
        self.errors: list = []

    def create(self, *objs) -> None:
        for o in objs:
            self.api.create(dict(o), self.now)

    def pump(self, rounds: int = 50) -> int:
        """Watch, feed, sync and send until a sync asks for nothing; returns rounds used."""
        for i in range(rounds):
            self._feed()
            w = self.ctrl.sync(self.now)
            if not w:
                return i
            self._send(w)
        raise AssertionError("did not settle")

    def _feed(self) -> None:
        for kind in self.ctrl.kinds:
            if self.rv[kind] is None:
                events = self.reflector.on_list(kind, self.api.list(kind))
            else:
                events = self.reflector.on_watch(kind, self.api.watch({kind: self.rv[kind]})[kind])
            self.rv[kind] = self.reflector.rv[kind]
            for k, etype, obj, _ in events:
                self.ctrl.on_event(k, etype, obj, self.now)

    def _send(self, w) -> None:
        """As the controller-manager component: the writes as requests, refusals reported back."""
        reqs = requests(w)
        for req, err in zip(reqs, self.api.write(reqs, self.now)):
            if err is not None:
                if isinstance(req, Create) and req.obj.get("kind") == "Pod":
                    self.errors.append(err)
                self.ctrl.on_failed(req, err, self.now)

    def pods(self) -> list[dict]:
        return sorted(self.api.store.objects("Pod"), key=lambda p: p["metadata"]["name"])

    def get(self, kind: str, name: str, ns: str = "default") -> dict:
        return self.api.get(kind, ns, name)
