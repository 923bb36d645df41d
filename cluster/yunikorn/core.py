"""The YuniKorn-mode scheduler's state: what it knows of pods, nodes, queues and its
configuration, and how a watch event changes it.

Owns ``YuniKorn``: the queue tree (``queues.py``) built from the ConfigMap
``yunikorn/yunikorn-configs`` (key ``queues.yaml``; no ConfigMap: the built-in default; an
invalid one is refused with a Warning event and the previous configuration stays), the
applications and their placement, the nodes with every bound pod's requests (pods of other
schedulers take room too), the asks' reservations, and the commit of a placement, a
reservation or a preemption (section 6.11 of docs/yunikorn.md). The allocation cycle is in
``cycle.py``; the component shell in ``component.py`` feeds it watch events and sends what
it writes. Pods of other schedulers are never touched.

An allocation's life, as this class sees it:

| state    | event                                | next      | done here                          |
|----------|--------------------------------------|-----------|------------------------------------|
| (none)   | pod added, pending                   | ask       | placed in a queue, pending counted |
| ask      | the cycle finds a node               | bound     | allocated counted, Bind written    |
| ask      | the bind is refused                  | ask       | allocation undone                  |
| bound    | chosen as a victim                   | victim    | preempting counted, Delete written |
| any      | pod deleted or terminal              | (none)    | every count undone                 |
"""

from __future__ import annotations

from typing import Any

from ..api.events import make_event
from ..api.objects import is_terminal
from ..api.predicates import host_ports
from ..clock import rfc3339
from . import config as cfg
from .asks import Alloc, App, is_yunikorn, read_pod
from .nodefit import NodeIndex, passes
from .nodes import Node, NodeSet
from .output import Output
from .placement import place
from .preemption import Decision, Gate
from .queues import Queue, QueueTree
from .quotapreempt import QuotaResult, QuotaWatch
from .resources import Res, of_node, of_pod

COMPONENT = "yunikorn"
CONFIG_KEY = cfg.CONFIG_KEY
RESERVATION_DELAY = 2.0  # an ask no node fits reserves one once it is this old


class YuniKorn:
    def __init__(self) -> None:
        self.config: cfg.Config = cfg.DEFAULT
        self.partition = self.config.partition("default")
        self.tree = QueueTree(self.partition)
        self.nodes = NodeSet()
        self.index = NodeIndex(self.nodes, self.partition.node_sort_policy, self.partition.resource_weights)
        self.allocs: dict[str, Alloc] = {}
        self.apps: dict[str, App] = {}
        self.foreign: dict[str, tuple[str, Res, tuple]] = {}  # other schedulers' bound pods: uid -> (node, res, ports)
        self.unplaced: dict[str, list[str]] = {}  # node not seen yet -> uids of foreign pods bound to it
        self.ports: dict[str, list[tuple[str, Any]]] = {}  # node -> [(uid, host port)]
        self.classes: dict[str, dict[str, Any]] = {}
        self.gate = Gate()
        self.quota = QuotaWatch()
        self.out = Output()
        self.seq = 0
        self.stats = {"scheduled": 0, "preemptions": 0, "reservations": 0, "configReloads": 0, "configRejected": 0}
        self.reserved: dict[str, Alloc] = {}  # asks holding a reservation, by uid
        self.configmap: dict[str, Any] | None = None  # the configuration's ConfigMap, when there is one

    # ---- configuration --------------------------------------------------------------

    def on_configmap(self, etype: str, cm: dict[str, Any], now: float) -> None:
        meta = cm.get("metadata") or {}
        if (meta.get("namespace"), meta.get("name")) != cfg.CONFIGMAP:
            return
        self.configmap = None if etype == "DELETED" else cm
        text = None if etype == "DELETED" else (cm.get("data") or {}).get(CONFIG_KEY)
        try:
            new = cfg.DEFAULT if text is None else cfg.parse(text)
        except cfg.ConfigError as e:
            self.stats["configRejected"] += 1
            msg = f"yunikorn-configs: {CONFIG_KEY} refused, the previous configuration stays: {e}"
            self.out.events.append(make_event(cm, "ConfigRejected", msg, now, type="Warning", component=COMPONENT))
            return
        if new.checksum == self.config.checksum:
            return
        self.apply_config(new, now)

    def apply_config(self, new: cfg.Config, now: float) -> None:
        old = self.tree
        self.config, self.partition = new, new.partition("default")
        self.tree = QueueTree(self.partition)
        self.tree.adopt(old, self._placed_queue)
        self.tree.cluster = dict(self.nodes.total)
        self.index.set_policy(self.partition.node_sort_policy, self.partition.resource_weights)
        self.stats["configReloads"] += 1
        self.quota.on_change(self.tree, now)
        self.nodes.epoch += 1  # a larger max may let waiting asks in

    def _placed_queue(self, app: App) -> Queue | None:
        sample = next(iter(app.allocs.values()), None)
        if sample is None:
            return None
        return self._place(sample)

    def _place(self, a: Alloc) -> Queue | None:
        placed = place(self.partition.rules, queue=a.queue_name, namespace=a.namespace, lookup=self.tree.lookup)
        if placed is None:
            return None
        q = self.tree.by_path.get(placed.path)
        return q if q is not None and q.is_leaf else self.tree.create(placed.path)

    # ---- watch events ---------------------------------------------------------------

    def on_priority_class(self, etype: str, pc: dict[str, Any], now: float) -> None:
        name = (pc.get("metadata") or {}).get("name") or ""
        if etype == "DELETED":
            self.classes.pop(name, None)
        else:
            self.classes[name] = pc

    def on_node(self, etype: str, obj: dict[str, Any], now: float) -> None:
        name = (obj.get("metadata") or {}).get("name") or ""
        if etype == "DELETED":
            node = self.nodes.remove(name)
            if node is not None:
                for ask in list(node.reserved):
                    self.unreserve(ask)
                self.index.invalidate_static()
        else:
            old = self.nodes.get(name)
            before = _static_view(old.obj) if old is not None else None
            node = self.nodes.upsert(name, obj, of_node(obj))
            if old is None or before != _static_view(obj):
                self.index.invalidate_static()
                self.nodes.epoch += 1
            if old is None:
                for uid in self.unplaced.pop(name, ()):  # pods the watch showed before their node
                    held = self.foreign.get(uid)
                    if held is not None and held[0] == name:
                        self.nodes.bind(node, held[1])
        self.tree.cluster = dict(self.nodes.total)

    def on_pod(self, etype: str, pod: dict[str, Any], now: float) -> None:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        uid = meta.get("uid") or ""
        gone = etype == "DELETED" or is_terminal(pod)
        known = self.allocs.get(uid)
        if gone and known is not None:
            # By uid, whatever the last copy says: a relist's DELETED carries only the
            # key, uid and node the reflector remembers.
            self.release(known)
            return
        if not is_yunikorn(pod):
            self._on_foreign(uid, pod, spec.get("nodeName") or "", gone)
            return
        if gone:
            return
        if known is None:
            self._on_new(pod, now)
            return
        known.pod = pod
        bound_to = spec.get("nodeName") or ""
        if bound_to and not known.node:
            self._account(known, bound_to)  # bound by someone else (or before a restart)

    def _on_foreign(self, uid: str, pod: dict[str, Any], node_name: str, gone: bool) -> None:
        had = self.foreign.get(uid)
        if had is not None and (gone or had[0] != node_name):
            self.foreign.pop(uid)
            node = self.nodes.get(had[0])
            if node is not None:
                self.nodes.bind(node, had[1], -1)
            self._drop_ports(had[0], uid)
            had = None
        if had is None and node_name and not gone:
            res, ports = of_pod(pod), host_ports(pod)
            self.foreign[uid] = (node_name, res, ports)
            node = self.nodes.get(node_name)
            if node is not None:
                self.nodes.bind(node, res)
            else:
                self.unplaced.setdefault(node_name, []).append(uid)
            self.ports.setdefault(node_name, []).extend((uid, p) for p in ports)

    def _on_new(self, pod: dict[str, Any], now: float) -> None:
        a = read_pod(pod, self.classes)
        self.seq += 1
        a.seq = self.seq
        app = self.apps.get(a.app_id)
        if app is None:
            leaf = self._place(a)
            app = App(a.app_id, leaf, submit_time=a.create_time, seq=self.seq)
            self.apps[a.app_id] = app
            if leaf is None:
                app.rejected = "application rejected: no placement rule matched"
            else:
                leaf.apps[a.app_id] = app
        self.allocs[a.uid] = a
        app.allocs[a.uid] = a
        a.app = app
        if app.rejected:
            self._reject(a, now)
            return
        a.queue = app.queue
        if not app.originator_uid:  # the first pod seen is the originator, for the app's life
            app.originator_uid, a.originator = a.uid, True
        if a.node:
            self._account(a, a.node, pending_before=False)
        else:
            self.tree.set_pending(a)
            msg = f"{a.key} is queued and waiting for allocation"
            self.out.events.append(make_event(pod, "Scheduling", msg, now, component=COMPONENT))

    def _reject(self, a: Alloc, now: float) -> None:
        app = a.app
        assert app is not None
        why = f"Application {app.app_id} scheduling failed, reason: ApplicationRejected: {app.rejected}"
        self.out.events.append(make_event(a.pod, "ApplicationFailed", why, now, type="Warning", component=COMPONENT))
        status = dict(a.pod.get("status") or {}, phase="Failed", reason="ApplicationRejected", message=why)
        self.out.failed.append((a.namespace, a.name, a.uid, status))

    # ---- accounting -------------------------------------------------------------------

    def _account(self, a: Alloc, node_name: str, pending_before: bool = True) -> None:
        """An ask becomes an allocation on ``node_name``."""
        if pending_before and a.queue is not None:
            self.tree.set_pending(a, -1)
        a.node = node_name
        self.unreserve(a)
        if a.queue is not None:
            self.tree.allocate(a)
        node = self.nodes.get(node_name)
        if node is not None:
            node.allocs[a.uid] = a
            self.nodes.bind(node, a.res)
        self.ports.setdefault(node_name, []).extend((a.uid, p) for p in host_ports(a.pod))

    def release(self, a: Alloc) -> None:
        """The pod is gone: undo every count it held."""
        self.allocs.pop(a.uid, None)
        self.unreserve(a)
        app = a.app
        if app is not None:
            app.allocs.pop(a.uid, None)
            if not app.allocs:
                self.apps.pop(app.app_id, None)
                if app.queue is not None:
                    app.queue.apps.pop(app.app_id, None)
        if a.queue is None:
            return
        if a.node:
            if a.victim:
                self.tree.mark_preempting(a, -1)
            self._unplace(a)
        else:
            self.tree.set_pending(a, -1)

    def unbind(self, a: Alloc) -> None:
        """A bind the apiserver refused: the allocation goes back to being an ask."""
        if not a.node:
            return
        self._unplace(a)
        a.node = ""
        self.tree.set_pending(a)
        self.stats["scheduled"] -= 1

    def _unplace(self, a: Alloc) -> None:
        """Undo what a placement counted: the queues, the node and its ports."""
        self.tree.allocate(a, -1)
        node = self.nodes.get(a.node)
        if node is not None:
            node.allocs.pop(a.uid, None)
            self.nodes.bind(node, a.res, -1)
        self._drop_ports(a.node, a.uid)

    def _drop_ports(self, node_name: str, uid: str) -> None:
        held = self.ports.get(node_name)
        if held:
            self.ports[node_name] = [p for p in held if p[0] != uid]

    # ---- what the cycle commits -----------------------------------------------------

    def bind(self, a: Alloc, node: Node, now: float) -> None:
        self._account(a, node.name)
        self.stats["scheduled"] += 1
        self.index.refresh(node)
        self.out.binds.append((a.namespace, a.name, a.uid, node.name))
        msg = f"Successfully assigned {a.key} to node {node.name}"
        self.out.events.append(make_event(a.pod, "Scheduled", msg, now, component=COMPONENT))

    def reserve(self, a: Alloc, node: Node, now: float) -> None:
        self.unreserve(a)
        a.reserved_node = node.name
        node.reserved.append(a)
        self.reserved[a.uid] = a
        self.index.set_reserved(node, True)
        self.stats["reservations"] += 1

    def unreserve(self, a: Alloc) -> None:
        if a.reserved_node:
            node = self.nodes.get(a.reserved_node)
            if node is not None and a in node.reserved:
                node.reserved.remove(a)
                if not node.reserved:
                    self.index.set_reserved(node, False)
                    self.nodes.epoch += 1  # the node is open to every ask again
            a.reserved_node = ""
        self.reserved.pop(a.uid, None)

    def passes(self, ask: Alloc, node: Node, removed) -> bool:
        """Every predicate for ``ask`` on ``node`` with ``removed`` off it (the preemptors' host)."""
        return passes(ask, node, removed, self.ports)

    def commit(self, d: Decision, now: float) -> bool:
        """Section 6.11: mark the victims, count them as preempting, record one Preempted
        event each, delete them gracefully and reserve the node for the ask. False (and
        nothing changed) when a victim was released meanwhile."""
        if any(self.allocs.get(v.uid) is not v or not v.node or v.victim for v in d.victims):
            if d.kind == "general":
                d.ask.note("Victims picked earlier were released at the final stage")
                return False
        ask = d.ask
        path = ask.queue.path if ask.queue is not None else ""
        for v in d.victims:  # the DaemonSet path skips a victim already gone
            self._take(v, f"Preempted by {ask.uid} from application {ask.app_id} in {path}", now)
        for other in d.cancel:
            self.unreserve(other)
        ask.triggered_preemption = True
        node = self.nodes.get(d.node)
        if node is not None:
            self.reserve(ask, node, now)
        return True

    def _take(self, v: Alloc, message: str, now: float) -> None:
        """A victim: counted as preempting, one Preempted event, deleted gracefully."""
        if self.allocs.get(v.uid) is not v or v.victim:
            return
        v.victim = True
        self.tree.mark_preempting(v)
        self.out.events.append(make_event(v.pod, "Preempted", message, now, component=COMPONENT))
        self.out.deletes.append((v.namespace, v.name, v.uid))
        self.stats["preemptions"] += 1

    def commit_quota(self, result: QuotaResult, now: float) -> None:
        """A quota preemption: each victim gets its event and is deleted; the summary goes
        on the configuration's ConfigMap (the queue is no Kubernetes object)."""
        for v in result.victims:
            self._take(v, f"Preempted by Quota change enforcement process in {result.queue_path}", now)
        if self.configmap is not None:
            self.out.events.append(
                make_event(self.configmap, "QuotaPreemption", result.summary(), now, component=COMPONENT)
            )

    def pending_condition(self, a: Alloc, now: float, message: str) -> None:
        """Show the allocation log on a pending pod (its PodScheduled condition)."""
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastTransitionTime": rfc3339(now),
        }
        self.out.conditions.append((a.namespace, a.name, a.uid, cond))

    def take_output(self) -> Output:
        out, self.out = self.out, Output()
        return out


def _static_view(node: dict[str, Any]) -> tuple:
    meta, spec = node.get("metadata") or {}, node.get("spec") or {}
    return (repr(meta.get("labels")), repr(spec.get("taints")), bool(spec.get("unschedulable")))
