"""Builders for the kubelet tests: pods, node configs, and a driver that records traces."""

from __future__ import annotations

import itertools

import pytest

from cluster.api.codec import encode
from cluster.clock import FakeClock, rfc3339
from cluster.kubelet import NodeConfig, NodeHost
from cluster.runtime.component import WatchEvent

_uids = itertools.count(1)


def build_pod(
    name="p",
    node="node-0",
    *,
    cpu=None,
    memory=None,
    limits=None,
    requests=None,
    annotations=None,
    restart_policy=None,
    containers=None,
    init_containers=None,
    uid=None,
    namespace="default",
    grace=None,
    labels=None,
):
    """A bound pod with one container ``c`` unless ``containers`` is given."""
    if containers is None:
        req = dict(requests or {})
        if cpu is not None:
            req["cpu"] = cpu
        if memory is not None:
            req["memory"] = memory
        res = {}
        if req:
            res["requests"] = req
        if limits:
            res["limits"] = dict(limits)
        containers = [{"name": "c", "image": "busybox", "resources": res}]
    spec = {"nodeName": node, "containers": containers}
    if init_containers:
        spec["initContainers"] = init_containers
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    meta = {"name": name, "namespace": namespace, "uid": uid or f"uid-{next(_uids)}"}
    if annotations:
        meta["annotations"] = {f"kubemu.io/{k}": str(v) for k, v in annotations.items()}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def terminating(pod, grace, at=0.0):
    """The pod as the apiserver shows it after a graceful delete."""
    out = {**pod, "metadata": dict(pod["metadata"])}
    out["metadata"]["deletionTimestamp"] = rfc3339(at + grace)
    out["metadata"]["deletionGracePeriodSeconds"] = grace
    return out


def build_config(name="node-0", cpu="4", memory="8Gi", pods="110", extra=None, **kw):
    capacity = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi", **(extra or {})}
    return NodeConfig(name=name, capacity=capacity, **kw)


class Driver:
    """Runs a NodeHost on a FakeClock and logs every output with the time it was drained."""

    def __init__(self, configs):
        self.clock = FakeClock()
        self.host = NodeHost(configs)
        self.log: list[tuple] = []
        self.statuses: dict[str, dict] = {}
        self.deletes: list[tuple[float, str]] = []
        self.events: list[tuple[float, str, str, str]] = []
        self.raw_events: list[dict] = []
        self.leases: list[tuple[float, str, float]] = []
        self.node_creates: list[dict] = []
        self.node_statuses: list[tuple[float, str, dict]] = []

    @property
    def now(self) -> float:
        return self.clock.now()

    def register(self):
        """Register every node; the kubelets' startup Events (asserted in
        ``test_node_events.py``) are kept apart so each test's events are its pods'."""
        self.host.register_all(self.now)
        self.flush()
        self.startup_events, self.events = self.events, []
        self.raw_events = []

    def feed(self, events, now):
        """A watch batch of (type, pod) pairs, each pod as the bytes the watch delivers: the
        host judges most events by the pod's head (``NodeHost.on_watch``), so every test
        also checks what the head alone decides."""
        self.host.on_watch([WatchEvent("Pod", etype, raw=encode(pod)) for etype, pod in events], now)

    def send(self, etype, pod):
        self.feed([(etype, pod)], self.now)
        self.flush()

    def run_until(self, t):
        while True:
            nt = self.host.next_timer()
            if nt is None or nt > t:
                break
            self.clock.set(nt)
            self.host.tick(nt)
            self.flush()
        self.clock.set(t)

    def flush(self):
        out = self.host.drain()
        now = self.now
        self.node_creates += out.node_creates
        for name, st in out.node_status.items():
            self.node_statuses.append((now, name, st))
        for name, renew in sorted(out.leases.items()):
            self.leases.append((now, name, renew))
        for _ns, name, _uid, st in out.pod_status.values():
            self.statuses[name] = st
            cs = (st.get("containerStatuses") or [{}])[0]
            self.log.append(
                (now, name, st["phase"], cs.get("restartCount", 0), next(iter(cs.get("state") or {"-": 0})))
            )
        self.raw_events += out.events
        for ev in out.events:
            self.events.append((now, ev["involvedObject"]["name"], ev["reason"], ev["message"]))
        for _ns, name, _uid in out.pod_deletes.values():
            self.deletes.append((now, name))

    def trace(self, name):
        return [entry[:1] + entry[2:] for entry in self.log if entry[1] == name]


@pytest.fixture
def pod():
    return build_pod


@pytest.fixture
def config():
    return build_config


@pytest.fixture
def driver():
    def make(*configs):
        d = Driver(list(configs) or [build_config()])
        d.register()
        return d

    return make


@pytest.fixture
def deleting():
    return terminating
