"""The scenario runner's view of the cluster, built only from watch events.

Owns the copies of Pods, Nodes, Events and every other kind the runner watches (the
workload kinds: ``driver.KINDS``), the times it first saw each pod created, bound and
Running (for the report's metrics), the latest view of the kubelets' PodResources API
(what each pod holds: cgroups, cpuset, devices, usage; the driver polls it), and the
invariant checks (``noOvercommit``, ``noDoubleBinding``, ``noLostPods`` (``ownership.py``),
``rolloutBounds`` and ``statefulSetIdentity`` (``workloadinvariants.py``) incrementally;
``cpusetsExclusive``, ``devicesExclusive`` on each new PodResources view).
It sees what a user with ``kubectl get -w`` and the kubelets' PodResources sockets would
see, never any component's private state. Called by the driver after every watch batch;
read by expectations and the report.
"""

from __future__ import annotations

from ..api.objects import node_name_of, phase_of
from ..api.resources import node_allocatable, pod_requests
from .ownership import OwnedPods
from .podresources import cpuset_violations, device_violations
from .workloadinvariants import RolloutBounds, StatefulSetIdentity


class Mirror:
    def __init__(self) -> None:
        self.pods: dict[tuple[str, str], dict] = {}
        self.nodes: dict[str, dict] = {}
        self.events: list[dict] = []
        self._event_at: dict[tuple[str, str], int] = {}  # (namespace, name) -> index in events
        self.created_at: dict[str, float] = {}  # uid -> emulated time first seen
        self.bound_at: dict[str, float] = {}  # uid -> real seconds when first seen bound
        self.running_at: dict[str, float] = {}  # uid -> emulated time first seen Running
        self.rollouts, self.identity = RolloutBounds(), StatefulSetIdentity()
        self.violations: dict[str, list[str]] = {
            "noOvercommit": [],
            "noDoubleBinding": [],
            "cpusetsExclusive": [],
            "devicesExclusive": [],
            "noLostPods": [],
            "rolloutBounds": self.rollouts.violations,
            "statefulSetIdentity": self.identity.violations,
        }
        self.owned = OwnedPods()
        self.objects: dict[str, dict[tuple[str, str], dict]] = {}  # other kinds: kind -> key -> object
        self.resources: dict[str, dict] = {}  # uid -> the kubelet's PodResources view
        self.node_resources: dict[str, dict] = {}  # node -> QoS cgroups, shared CPUs, devices
        self._bound_node: dict[str, str] = {}
        self._running: dict[str, tuple[str, dict]] = {}  # uid -> (node, requests)
        self._node_sum: dict[str, dict[str, int]] = {}
        self._dirty: set[str] = set()
        self._alloc: dict[str, dict[str, int]] = {}
        self._over: set[str] = set()

    # -- applying watch events -------------------------------------------------------------
    def apply(self, kind: str, etype: str, obj: dict, now: float, real_now: float) -> None:
        if kind == "Pod":
            self._pod(etype, obj, now, real_now)
        elif kind == "Node":
            name = obj["metadata"]["name"]
            if etype == "DELETED":
                self.nodes.pop(name, None)
                self._alloc.pop(name, None)
            else:
                self.nodes[name] = obj
                self._alloc[name] = node_allocatable(obj)
                self._dirty.add(name)
        elif kind == "Event":
            # A recorder counts a repeated event up on the one Event (``count``): its
            # later versions replace it; an expired Event stays seen.
            m = obj.get("metadata") or {}
            key = (m.get("namespace", ""), m.get("name", ""))
            at = self._event_at.get(key) if key[1] else None
            if at is not None and etype != "DELETED":
                self.events[at] = obj
            elif etype in ("ADDED", "MODIFIED"):
                self._event_at[key] = len(self.events)
                self.events.append(obj)
        else:
            if kind == "ReplicaSet":
                self.owned.on_replicaset(etype, obj)
            m = obj["metadata"]
            store = self.objects.setdefault(kind, {})
            if etype == "DELETED":
                store.pop((m.get("namespace", ""), m["name"]), None)
            else:
                store[(m.get("namespace", ""), m["name"])] = obj

    def _pod(self, etype: str, pod: dict, now: float, real_now: float) -> None:
        m = pod["metadata"]
        key, uid = (m.get("namespace", ""), m["name"]), m.get("uid", "")
        self.owned.on_pod(etype, pod)
        held = self.pods.get(key)
        self.rollouts.on_pod(etype, pod, held)
        self.identity.on_pod(etype, pod, held, now)
        if etype == "DELETED":
            self.pods.pop(key, None)
            self._set_running(uid, None, pod)
            return
        self.pods[key] = pod
        self.created_at.setdefault(uid, now)
        node = node_name_of(pod)
        if node:
            first = self._bound_node.setdefault(uid, node)
            if first != node:
                self.violations["noDoubleBinding"].append(
                    f"pod {key[0]}/{key[1]} ({uid}) bound to {first} and then to {node}"
                )
            self.bound_at.setdefault(uid, real_now)
        running = phase_of(pod) == "Running"
        if running:
            self.running_at.setdefault(uid, now)
        self._set_running(uid, node if running else None, pod)

    def _set_running(self, uid: str, node: str | None, pod: dict) -> None:
        prev = self._running.get(uid)
        if prev and prev[0] == node:
            return
        if prev:
            _sub(self._node_sum.setdefault(prev[0], {}), prev[1])
            self._dirty.add(prev[0])
            del self._running[uid]
        if node:
            req = pod_requests(pod)
            req["pods"] = 1  # the pod count is a resource like any other for overcommit
            self._running[uid] = (node, req)
            _add(self._node_sum.setdefault(node, {}), req)
            self._dirty.add(node)

    # -- invariants ------------------------------------------------------------------------
    def check_invariants(self, now: float) -> None:
        """Re-check the nodes whose running pods changed since the last call."""
        for node in self._dirty:
            alloc = self._alloc.get(node)
            used = self._node_sum.get(node, {})
            over = [r for r, v in used.items() if alloc is not None and v > alloc.get(r, 0) and v > 0]
            if over and node not in self._over:
                assert alloc is not None  # over is empty for a node without allocatable
                self._over.add(node)
                self.violations["noOvercommit"].append(
                    f"at {now:.1f}s node {node}: running pods request {', '.join(f'{r}={used[r]}' for r in over)} "
                    f"above allocatable {', '.join(f'{r}={alloc.get(r, 0)}' for r in over)}"
                )
            elif not over:
                self._over.discard(node)
        self._dirty.clear()
        self.violations["noLostPods"] += self.owned.check(now)
        # statefulSetIdentity is judged on each pod event; rolloutBounds looks only while
        # Deployments exist, and at the pods of those rolling out.
        if self.objects.get("Deployment"):
            self.rollouts.check(now, self.objects["Deployment"], self.objects.get("ReplicaSet", {}), self.nodes)

    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        """The latest copy of an object the watch showed, or None."""
        if kind == "Pod":
            return self.pods.get((namespace, name))
        if kind == "Node":
            return self.nodes.get(name)
        if kind == "Event":
            found = (e for e in reversed(self.events) if (e.get("metadata") or {}).get("name") == name)
            return next((e for e in found if e["metadata"].get("namespace", "") == namespace), None)
        return self.objects.get(kind, {}).get((namespace, name))

    def set_pod_resources(self, pods: dict[str, dict], nodes: dict[str, dict], now: float) -> None:
        """A fresh PodResources view from every node host; checks the two invariants on it."""
        self.resources, self.node_resources = pods, nodes
        refs = {p["metadata"].get("uid", ""): f"{ns}/{name}" for (ns, name), p in self.pods.items()}
        entries = [
            (refs.get(uid, uid), v.get("node", ""), v.get("cpuset"), v.get("exclusiveCpus"))
            for uid, v in sorted(pods.items())
        ]
        shared = {n: v.get("sharedCpus") for n, v in nodes.items()}
        found = {
            "cpusetsExclusive": cpuset_violations(entries, shared),
            "devicesExclusive": device_violations(
                (refs.get(uid, uid), v.get("devices")) for uid, v in sorted(pods.items())
            ),
        }
        for name, lines in found.items():
            for line in lines:
                line = f"at {now:.1f}s {line}"
                if not any(v.split(" ", 2)[2] == line.split(" ", 2)[2] for v in self.violations[name]):
                    self.violations[name].append(line)

    def requested_on(self, node: str) -> dict[str, int]:
        return dict(self._node_sum.get(node, {}))


def _add(into: dict, other: dict) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _sub(into: dict, other: dict) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) - v
