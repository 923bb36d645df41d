"""A node host: many kubelets sharing the pod and Node watches, a timer queue and an outbox.

Owns the routing inside one node-host Ray actor (docs/architecture.md §7): pod watch
events go to the kubelet named by ``spec.nodeName``, Node watch events to the kubelet of
that node (read as far as ``apinode.read_node`` reads them: the Node watch selects every
node, so the events of other hosts' nodes are dropped once their name is read), due timer
tokens to the kubelet named by the token's first element, and every kubelet writes into
the one ``Outbox`` the shell drains and sends in batches. The actor shell calls
``register_all`` once, then ``on_watch`` per watch batch and ``tick`` whenever
``next_timer`` comes due, and ``drain`` after each of those.

A restart of the host process (upstream: a kubelet restart; the container runtime keeps
the containers running) is a new ``NodeHost`` built from the same configs: the shell calls
``register_all(now, restarted=True)`` and its fresh informer's first batch is the list of
the Nodes, then of the pods bound to its nodes, which the kubelets adopt in the state
their status shows (``reconcile.py``). Every kubelet of the new host is alive, including one ``kill_node``
stopped in the previous process: a restart revives the whole host, like a rebooted rack.
"""

from __future__ import annotations

import base64
import binascii

from ..runtime.component import WatchEvent
from ..runtime.timers import TimerQueue
from .apinode import read_node
from .kubelet import Kubelet
from .node import NodeConfig
from .outbox import Outbox
from .reconcile import adopted_first


class NodeHost:
    def __init__(self, configs: list[NodeConfig], first_index: int = 0):
        self.outbox = Outbox()
        self.timers = TimerQueue()
        self._kubelets: dict[str, Kubelet] = {}
        # ("cm" | "secret", namespace, name) -> data, what containers' env reads (``creation.py``)
        self._objects: dict[tuple[str, str, str], dict[str, str]] = {}
        for i, config in enumerate(configs):
            if config.name in self._kubelets:
                raise ValueError(f"node {config.name!r} appears twice in one host")
            k = self._kubelets[config.name] = Kubelet(config, self.outbox, self.timers, first_index + i)
            k.objects = self.lookup

    def node_names(self) -> set[str]:
        """The live nodes: what the host's shared pod watch should select."""
        return {name for name, k in self._kubelets.items() if not k.stopped}

    def kubelet(self, name: str) -> Kubelet:
        return self._kubelets[name]

    def register_all(self, now: float, restarted: bool = False, first_start: bool | None = None) -> None:
        """Register every live node; ``restarted``: the Nodes exist already (from a previous
        process, or created through the API); ``first_start`` (default: not ``restarted``):
        the kubelets start for the first time, so their first status adds its conditions."""
        for k in self._kubelets.values():
            k.register(now, restarted, not restarted if first_start is None else first_start)

    def on_watch(self, events: list[WatchEvent], now: float) -> None:
        """Apply one batch of Node and pod watch events, the Nodes' first. Each pod event
        is judged by its head; the pod is decoded only for a kubelet that has not seen it
        (most events are the echoes of the kubelets' own status writes, and deletions)."""
        # Timers due by now happened before these events did.
        self.tick(now)
        nodes = [ev for ev in events if ev.kind == "Node"]
        if nodes:
            # A pod bound after a change to its node's labels comes in the same batch as
            # the change at the latest: admission must see the change (upstream's pod
            # source waits for the Node informer's sync).
            self._on_nodes(nodes, now)
            events = [ev for ev in events if ev.kind != "Node"]
        if any(ev.kind in _DATA_KINDS for ev in events):
            self._on_objects([ev for ev in events if ev.kind in _DATA_KINDS], now)
            events = [ev for ev in events if ev.kind not in _DATA_KINDS]
        kubelets = self._kubelets
        for ev in adopted_first(events):
            head = ev.head
            k = kubelets.get(head.node_name)
            if k is None:
                continue  # not bound here (or BOOKMARK-like noise the shell passed on)
            if ev.type == "DELETED":
                k.on_pod_deleted(head.uid, now)
            elif ev.type in ("ADDED", "MODIFIED"):
                k.on_pod_event(ev, now)

    def _on_nodes(self, events: list[WatchEvent], now: float) -> None:
        kubelets = self._kubelets
        for ev in events:
            read = read_node(ev.raw, None if ev.raw is not None else ev.obj)
            k = None if read is None else kubelets.get(read.name)
            if read is None or k is None:
                continue  # another host's node
            if ev.type == "DELETED":
                k.on_node_deleted()
            else:
                k.on_node(read, now)

    def lookup(self, kind: str, namespace: str, name: str) -> dict[str, str] | None:
        """The data of a ConfigMap (``kind`` "cm") or Secret ("secret"), None when absent."""
        return self._objects.get((kind, namespace, name))

    def _on_objects(self, events: list[WatchEvent], now: float) -> None:
        """ConfigMaps and Secrets changed: keep their data, then let held pods try again."""
        for ev in events:
            meta = ev.obj.get("metadata") or {}
            key = (_DATA_KINDS[ev.kind], meta.get("namespace", ""), meta.get("name", ""))
            if ev.type == "DELETED":
                self._objects.pop(key, None)
            else:
                self._objects[key] = _data_of(ev.kind, ev.obj)
        for k in self._kubelets.values():
            if not k.stopped:
                k.config_changed(now)

    def tick(self, now: float) -> None:
        """Run every timer due at or before ``now``, including ones those timers schedule."""
        kubelets = self._kubelets
        while True:
            due = self.timers.pop_due(now)
            if not due:
                return
            for token in due:
                k = kubelets.get(token[0])
                if k is not None:
                    k.on_timer(token, now)

    def next_timer(self) -> float | None:
        return self.timers.next_time()

    def next_change(self) -> float | None:
        """When a kubelet next changes something on its own (heartbeats and monitoring aside)."""
        return self.timers.next_time(foreground=True)

    def drain(self) -> Outbox:
        return self.outbox.drain()

    def kill_node(self, name: str) -> None:
        """Chaos: this node's kubelet stops; no heartbeats, no status, pods frozen (until a
        restart of the host process, which revives it)."""
        self._kubelets[name].stop()

    def partition(self, name: str, now: float, duration: float | None) -> None:
        """Chaos: this node's heartbeats stop for ``duration`` (forever if None); pods keep running."""
        self.tick(now)
        self._kubelets[name].partition(now, duration)

    def pressure(self, name: str, extra: dict[str, int], now: float, duration: float | None = None) -> None:
        """Chaos: node-level usage (memory, disk and inode bytes/counts, pids) on top of the pods'."""
        self.tick(now)
        self._kubelets[name].set_pressure(extra, now, duration)

    def device_health(self, name: str, resource: str, device: str | int, healthy: bool, now: float) -> str:
        """Chaos: a device of ``resource`` on node ``name`` turns (un)healthy; returns its ID.
        Raises ValueError (one line) for an unknown resource or device."""
        self.tick(now)
        return self._kubelets[name].set_device_health(resource, device, healthy, now)

    def device_plugin(self, name: str, resource: str, running: bool, now: float) -> None:
        """Chaos: the device plugin for ``resource`` on node ``name`` goes away or comes back.
        Raises ValueError (one line) for a resource without a plugin."""
        self.tick(now)
        self._kubelets[name].set_device_plugin(resource, running, now)

    def pod_resources(self, now: float) -> dict[str, dict]:
        """Every live node's PodResources view: uid -> what the pod holds, with ``node``."""
        out = {}
        for name, k in self._kubelets.items():
            if k.stopped:
                continue
            for uid, view in k.pod_resources(now).items():
                view["node"] = name
                out[uid] = view
        return out

    def node_resources(self) -> dict[str, dict]:
        return {name: k.node_resources() for name, k in self._kubelets.items() if not k.stopped}


_DATA_KINDS = {"ConfigMap": "cm", "Secret": "secret"}


def _data_of(kind: str, obj: dict) -> dict[str, str]:
    """A ConfigMap's ``data`` (``binaryData`` is not env), or a Secret's decoded ``data``."""
    data = obj.get("data") or {}
    if kind == "ConfigMap":
        return {str(k): str(v) for k, v in data.items()}
    out = {str(k): str(v) for k, v in (obj.get("stringData") or {}).items()}
    for k, v in data.items():
        try:
            out[str(k)] = base64.b64decode(str(v)).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            out[str(k)] = str(v)
    return out
