"""Builders and a harness for the Deployment controller tests.

``deployment("web", replicas=10)`` builds a Deployment; ``rs(...)`` a ReplicaSet dict for
the pure-function tables. ``Rollout`` runs the Deployment, ReplicaSet and garbage
collector controllers against the real ``APIServer`` logic with a tiny kubelet: a pod is
bound at once, Running and Ready ``ready_after`` emulated seconds after it was created
(never, for pods the test marks stuck), and a deleted pod is gone at once. ``step()``
advances one emulated second; the harness records, after every step, the pods that exist
and the available ones, so tests can assert the rollout's bounds.
"""

from __future__ import annotations

import copy

from cluster.api.requests import Bind, Delete, UpdateStatus
from cluster.apiserver.apiserver import APIServer
from cluster.clock import parse_timestamp, rfc3339
from cluster.controllers.deployment import DeploymentController
from cluster.controllers.garbagecollector import GarbageCollector
from cluster.controllers.manager import ControllerManager
from cluster.controllers.replicaset import ReplicaSetController
from cluster.controllers.writes import requests
from cluster.runtime.reflector import Reflector

CONTAINERS = [{"name": "c", "image": "nginx:1"}]


def deployment(name: str = "web", replicas: int = 10, **spec) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": copy.deepcopy(CONTAINERS)}},
            **spec,
        },
    }


def rs(
    name: str, replicas: int, available: int = 0, created: float = 0.0, max_replicas: int | None = None, **ann
) -> dict:
    annotations = {k.replace("_", "-"): v for k, v in ann.items()}
    if max_replicas is not None:
        annotations["deployment.kubernetes.io/max-replicas"] = str(max_replicas)
    return {
        "metadata": {"name": name, "creationTimestamp": rfc3339(created), "annotations": annotations},
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "availableReplicas": available},
    }


class Rollout:
    def __init__(self, ready_after: float = 5.0):
        self.now = 0.0
        self.ready_after = ready_after
        self.api = APIServer()
        self.manager = ControllerManager([DeploymentController(), ReplicaSetController(), GarbageCollector()])
        self.kinds = self.manager.kinds
        self.reflector = Reflector(list(self.kinds))
        self.rv: dict = {k: None for k in self.kinds}
        self.stuck: set[str] = set()  # images whose pods never become Ready
        self.samples: list[tuple[float, int, int]] = []  # (time, pods not terminating, available)
        self.refused: list = []  # (request, error) the apiserver refused

    # -- driving ---------------------------------------------------------------------------
    def create(self, obj: dict) -> dict:
        return self.api.create(copy.deepcopy(obj), self.now)

    def update(self, kind: str, name: str, change) -> dict:
        obj = copy.deepcopy(self.api.get(kind, "default", name))
        change(obj)
        return self.api.update(obj, self.now)

    def run(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            self.step()

    def step(self) -> None:
        self._kubelet()
        self._pump()
        self.samples.append((self.now, *self._count()))
        self.now += 1.0

    def _pump(self, rounds: int = 30) -> None:
        for _ in range(rounds):
            self._feed()
            w = self.manager.sync(self.now)
            if not w:
                return
            reqs = requests(w)
            for req, err in zip(reqs, self.api.write(reqs, self.now)):
                if err is not None:
                    self.refused.append((req, err))
                    self.manager.on_failed(req, err, self.now)  # as the component reports it
        raise AssertionError("the controllers did not settle")

    def _feed(self) -> None:
        events = []
        for kind in self.kinds:
            if self.rv[kind] is None:
                events += self.reflector.on_list(kind, self.api.list(kind))
            else:
                events += self.reflector.on_watch(kind, self.api.watch({kind: self.rv[kind]})[kind])
            self.rv[kind] = self.reflector.rv[kind]
        self.manager.on_events(events, self.now)

    def _kubelet(self) -> None:
        for pod in list(self.api.store.objects("Pod")):
            m = pod["metadata"]
            if m.get("deletionTimestamp"):
                self.api.write([Delete("Pod", m["namespace"], m["name"], m["uid"], 0)], self.now)
                continue
            if not pod["spec"].get("nodeName"):
                self.api.write([Bind(m["namespace"], m["name"], m["uid"], "n1")], self.now)
            created = parse_timestamp(m["creationTimestamp"]) or 0.0
            image = pod["spec"]["containers"][0]["image"]
            ready = (pod.get("status") or {}).get("phase") == "Running"
            if not ready and image not in self.stuck and self.now >= created + self.ready_after:
                status = {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(self.now)}],
                }
                self.api.write([UpdateStatus("Pod", m["namespace"], m["name"], m["uid"], status)], self.now)

    def _count(self) -> tuple[int, int]:
        pods = [p for p in self.api.store.objects("Pod") if not p["metadata"].get("deletionTimestamp")]
        ready = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        return len(pods), len(ready)

    # -- reading ---------------------------------------------------------------------------
    def get(self, kind: str, name: str) -> dict:
        return self.api.get(kind, "default", name)

    def replicasets(self) -> list[dict]:
        return sorted(self.api.store.objects("ReplicaSet"), key=lambda r: r["metadata"]["creationTimestamp"])

    def sizes(self) -> list[int]:
        return [r["spec"]["replicas"] for r in self.replicasets()]

    def events(self, reason: str) -> list[str]:
        evs = sorted(self.api.store.objects("Event"), key=lambda e: int(e["metadata"]["resourceVersion"]))
        return [e["message"] for e in evs if e["reason"] == reason]

    def condition(self, name: str, kind: str) -> dict | None:
        status = self.get("Deployment", name).get("status") or {}
        return next((c for c in status.get("conditions") or () if c["type"] == kind), None)
