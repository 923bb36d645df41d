"""A node host as a component (``cluster/runtime/component.py``): many kubelets, two watches.

Owns the translation between the component protocol and ``NodeHost``: the first batch of
an incarnation registers every node (after a restart the Node objects exist, so their
status follows, and the kubelets adopt the pods the first list brings, ``reconcile.py``);
watch events and due timers go to the kubelets; the ``Outbox`` they filled becomes
requests in the order they must land (Nodes first, then pod statuses, so a confirmed pod's
final status precedes its grace-0 delete, then events, then Lease renewals as server-side
applies, which create a node's Lease the first time); chaos commands go to the kubelet
they name. The Node's status is only ever written through the status subresource
(``UpdateStatus``), so heartbeats and conditions never touch the labels and taints set
through the API; the create at registration fails harmlessly once the Node exists.

It watches the pods bound to its nodes and, listed first, every Node (read lazily: the
kubelets admit against their stored Node, ``apinode.py``). Upstream's kubelet selects its
own Node with ``metadata.name``; kubemu's store selects by node name for pods only, so
each host reads the name of every Node event and drops the others' (``NodeHost.on_watch``).

A refused write that only says the object moved on (NotFound, Conflict, AlreadyExists) is
expected churn; anything else is kept for ``inspect`` so a health check can show it.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import AlreadyExists, Conflict, NotFound
from ..api.eventcorrelation import EventCorrelator
from ..api.kubeletcalls import ContainerExec, ContainerGet, ContainerLogs
from ..api.objects import NODE_LEASE_NAMESPACE
from ..api.patches import Apply
from ..api.requests import Create, Delete, Patch, RecordEvent, Request, UpdateStatus, Watch
from ..clock import rfc3339_micro
from ..runtime.commands import DeviceHealth, DevicePlugin, KillNode, Partition, Pressure
from ..runtime.component import RESTART, Batch, CommandError, Component, Result
from .host import NodeHost
from .node import NodeConfig
from .outbox import Outbox

LEASE_DURATION_SECONDS = 40
MAX_ERRORS = 20


class NodeHostComponent(Component):
    def __init__(self, configs: list[NodeConfig], first_index: int = 0, adopt: bool = False):
        self.host = NodeHost(configs, first_index)
        # ``adopt``: the Nodes were created through the API (``adopt.py``); the kubelets post
        # their status at once and never create them (a deleted one stays deleted).
        self._adopt = adopt
        self._names = frozenset(self.host.node_names())
        self.errors: list[str] = []
        self._recorder = EventCorrelator()  # the kubelets' recorders (their keys name the node)

    def watches(self) -> tuple[Watch, ...]:
        # Nodes first: a batch then brings a node's change before the pods bound after it,
        # and a restarted host lists its Nodes before it adopts or admits a pod.
        # ConfigMaps and Secrets before the pods too: a container's env reads them (``creation.py``).
        return (
            Watch("Node", self._names, lazy=True),
            Watch("ConfigMap"),
            Watch("Secret"),
            Watch("Pod", self._names, heads=True),
        )

    def reconcile(self, batch: Batch) -> Result:
        host, now = self.host, batch.now
        if batch.boot:
            restarted = batch.boot == RESTART
            # An adopted Node exists already, but its kubelet starts for the first time.
            host.register_all(now, restarted=restarted or self._adopt, first_start=not restarted)
            if self._adopt:
                host.outbox.node_creates.clear()
        for req, err in batch.failures:
            if not isinstance(err, (NotFound, Conflict, AlreadyExists)):
                self.errors = [*self.errors, f"{type(req).__name__}: {err.reason}: {err.message}"][-MAX_ERRORS:]
        if batch.events:
            host.on_watch(batch.events, now)
        host.tick(now)
        out = host.drain()
        if out.events:
            out.events = self._recorder.correlate(out.events, now)
        return Result(requests(out), wake_at=host.next_timer(), next_change=host.next_change())

    def handle(self, command: Any, now: float) -> Any:
        host = self.host
        if command.node not in self._names:
            raise CommandError(f"node: {command.node!r} is not a node of {self.name}")
        try:
            if isinstance(command, KillNode):
                host.kill_node(command.node)
            elif isinstance(command, Partition):
                host.partition(command.node, now, command.duration)
            elif isinstance(command, Pressure):
                host.pressure(command.node, command.usage, now, command.duration)
            elif isinstance(command, DeviceHealth):
                host.device_health(command.node, command.resource, command.device, command.healthy, now)
            elif isinstance(command, DevicePlugin):
                host.device_plugin(command.node, command.resource, command.running, now)
            elif isinstance(command, (ContainerExec, ContainerGet, ContainerLogs)):  # the apiserver's calls: answered
                kubelet = host.kubelet(command.node)
                if kubelet.stopped:
                    raise CommandError(f"node: the kubelet of {command.node} does not answer")
                host.tick(now)
                return kubelet.answer_call(command, now)
            else:
                raise CommandError(f"command: {type(command).__name__} is not a node command")
        except ValueError as e:  # an unknown resource or device, in one line
            raise CommandError(str(e)) from None
        return ""

    def inspect(self, now: float) -> dict[str, Any]:
        return {
            "podResources": self.host.pod_resources(now),
            "nodeResources": self.host.node_resources(),
            "errors": list(self.errors),
        }


def requests(out: Outbox) -> list[Request]:
    """What the kubelets wrote since the last drain, in the order it must land."""
    reqs: list[Request] = [Create(node) for node in out.node_creates]
    reqs += [UpdateStatus("Node", "", name, "", status) for name, status in out.node_status.items()]
    reqs += [UpdateStatus("Pod", ns, name, uid, status) for ns, name, uid, status in out.pod_status.values()]
    reqs += [Delete("Pod", ns, name, uid, 0) for ns, name, uid in out.pod_deletes.values()]
    reqs += [RecordEvent(ev) for ev in out.events]
    reqs += [Patch("Lease", NODE_LEASE_NAMESPACE, node, "", Apply(lease(node, t))) for node, t in out.leases.items()]
    return reqs


def lease(node: str, renew: float) -> dict[str, Any]:
    """The node's Lease as its kubelet applies it at each renewal."""
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": node, "namespace": NODE_LEASE_NAMESPACE},
        "spec": {
            "holderIdentity": node,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": rfc3339_micro(renew),
        },
    }
