"""Small builders for the controller tests, and ``Loop``: an apiserver, the controller
manager and a reflector in one process, pumped by hand like the controller-manager actor
pumps its informer (list, watch, feed, sync, send), so traces are exact and time is ours."""

from __future__ import annotations

from cluster.api.objects import NODE_LEASE_NAMESPACE
from cluster.api.patches import Apply, NodeConditions, NodeTaints, PodConditions
from cluster.api.requests import Delete, Patch, RecordEvent, UpdateStatus
from cluster.apiserver.apiserver import APIServer
from cluster.clock import rfc3339
from cluster.controllers.manager import ControllerManager
from cluster.controllers.writes import Writes, requests
from cluster.kubelet.component import lease as kubelet_lease
from cluster.runtime.reflector import Reflector

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"


def cond(ctype: str, status: str, heartbeat: float = 0.0, transition: float = 0.0, **extra) -> dict:
    return {
        "type": ctype,
        "status": status,
        "lastHeartbeatTime": rfc3339(heartbeat),
        "lastTransitionTime": rfc3339(transition),
        **extra,
    }


def node(
    name: str = "n1",
    ready: str | None = "True",
    heartbeat: float = 0.0,
    rv: str = "1",
    taints=(),
    pressure: bool = True,
) -> dict:
    conds = []
    if pressure:
        conds = [cond(t, "False", heartbeat) for t in ("MemoryPressure", "DiskPressure", "PIDPressure")]
    if ready is not None:
        conds.append(cond("Ready", ready, heartbeat))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "resourceVersion": rv, "uid": f"uid-{name}", "creationTimestamp": rfc3339(0)},
        "spec": {"taints": [dict(t) for t in taints]},
        "status": {"conditions": conds},
    }


def lease(name: str = "n1", renew: float = 0.0, ns: str = NODE_LEASE_NAMESPACE) -> dict:
    micro = rfc3339(renew)[:-1] + f".{int(round((renew % 1) * 1e6)):06d}Z"
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"holderIdentity": name, "renewTime": micro},
    }


def taint(key: str, effect: str = "NoExecute", value: str | None = None, added: float | None = None) -> dict:
    t = {"key": key, "effect": effect}
    if value is not None:
        t["value"] = value
    if added is not None:
        t["timeAdded"] = rfc3339(added)
    return t


def toleration(
    key: str = "",
    seconds: int | None = None,
    operator: str = "Exists",
    effect: str = "NoExecute",
    value: str | None = None,
) -> dict:
    t = {"key": key, "operator": operator, "effect": effect}
    if value is not None:
        t["value"] = value
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


def pod(
    name: str = "p",
    node_name: str | None = "n1",
    ns: str = "default",
    tolerations=None,
    phase: str = "Running",
    created: float = 0.0,
    terminating: bool = False,
    uid: str | None = None,
    **status,
) -> dict:
    p = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}", "creationTimestamp": rfc3339(created)},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
        "status": {"phase": phase, **status},
    }
    if node_name:
        p["spec"]["nodeName"] = node_name
    if tolerations is not None:
        p["spec"]["tolerations"] = list(tolerations)
    if terminating:
        p["metadata"]["deletionTimestamp"] = rfc3339(created + 30)
        p["metadata"]["deletionGracePeriodSeconds"] = 30
    return p


def summary(writes: Writes) -> list[tuple]:
    """A compact, exact trace of a sync's writes, in the order they are sent: (call, object, detail)."""
    out: list[tuple] = []
    for req in requests(writes):
        patch = getattr(req, "patch", None)
        if isinstance(patch, NodeConditions):
            out += [("condition", req.name, c["type"], c["status"], c["reason"]) for c in patch.conditions]
        elif isinstance(patch, NodeTaints):
            out += [("taint+", req.name, t["key"], t["effect"]) for t in patch.add]
            out += [("taint-", req.name, t["key"], t["effect"]) for t in patch.remove]
        elif isinstance(patch, PodConditions):
            out += [("pod-condition", f"{req.namespace}/{req.name}", c["type"], c["reason"]) for c in patch.conditions]
        elif isinstance(req, UpdateStatus) and req.kind == "Pod":
            out.append(("pod-status", f"{req.namespace}/{req.name}", req.status.get("phase")))
        elif isinstance(req, Delete) and req.kind == "Pod" and not req.propagation:
            out.append(("delete", f"{req.namespace}/{req.name}", req.grace))
        elif isinstance(req, RecordEvent):
            ev, io = req.event, req.event["involvedObject"]
            out.append(("event", ev["reason"], ev["message"], ev["type"], io["kind"]))
    return out


# ---- an in-process control plane -------------------------------------------------------


class Loop:
    """APIServer + ControllerManager + Reflector, pumped by ``at(now)``."""

    def __init__(self, controllers=None, api: APIServer | None = None):
        self.api = api or APIServer()
        self.manager = ControllerManager(controllers)
        self.reflector = Reflector(self.manager.kinds)
        self.trace: list[tuple] = []  # (now, summary line) of every write sent
        self.results: list = []
        self.now = 0.0

    def restart_controllers(self, controllers=None) -> None:
        """A fresh controller-manager against the same apiserver (it relists)."""
        self.manager = ControllerManager(controllers)
        self.reflector = Reflector(self.manager.kinds)

    def _poll(self) -> list:
        events = []
        for kind in self.reflector.kinds_to_list():
            events += self.reflector.on_list(kind, self.api.list(kind))
        for kind, part in self.api.watch(self.reflector.watch_since()).items():
            events += self.reflector.on_watch(kind, part)
        return events

    def at(self, now: float, rounds: int = 5) -> list[tuple]:
        """Pump until quiet at emulated ``now``; returns the trace lines written at ``now``."""
        self.now = now
        lines = []
        for _ in range(rounds):
            self.manager.on_events(self._poll(), now)
            writes = self.manager.sync(now)
            if not writes:
                break
            lines += summary(writes)
            self._send(writes, now)
        self.trace += [(now, line) for line in lines]
        return lines

    def run(self, until: float, step: float | None = None) -> None:
        """Advance to ``until`` stopping at every controller wakeup (and every ``step``)."""
        now = self.now
        for _ in range(10_000):
            nxt = self.manager.next_wakeup()
            candidates = [t for t in (nxt, until) if t is not None]
            if step is not None:
                candidates.append(now + step)
            now = max(now, min(candidates))
            self.at(now)
            if now >= until:
                return
        raise AssertionError(f"no progress past {now}: next wakeup {self.manager.next_wakeup()}")

    def _send(self, writes: Writes, now: float) -> None:
        reqs = requests(writes)
        for req, err in zip(reqs, self.api.write(reqs, now)):
            self.results.append((req, err))
            if err is not None:
                self.manager.on_failed(req, err, now)

    # -- acting as the kubelets -----------------------------------------------------
    def register(self, name: str, now: float = 0.0) -> None:
        n = node(name, heartbeat=now)
        for key in ("resourceVersion", "uid", "creationTimestamp"):
            del n["metadata"][key]
        self.api.create(n, now)
        self.renew([name], now)

    def renew(self, names, now: float) -> None:
        self.api.write([Patch("Lease", NODE_LEASE_NAMESPACE, n, "", Apply(kubelet_lease(n, now))) for n in names], now)

    def post_ready(self, name: str, now: float) -> None:
        """The kubelet's full status write: every condition healthy, heartbeat now."""
        self.api.write([UpdateStatus("Node", "", name, "", node(name, heartbeat=now)["status"])], now)

    def node(self, name: str) -> dict:
        return self.api.get("Node", "", name)
