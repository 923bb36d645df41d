"""The queue tree of one partition and its resource accounting.

Owns ``Queue`` (a configured or placement-created queue: guaranteed, max, effective
properties, and the sums over its subtree of what is allocated, pending and being
preempted) and ``QueueTree`` (building the tree from a ``config.Partition``, keeping the
applications across a reload, creating queues for placement rules, the headroom of a leaf,
the effective max, and the fair order of queues and applications). Called by the core
(``core.py``) and read by the preemptors, which take their own snapshots.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from . import config as cfg
from .asks import Alloc, App
from .resources import Res, add_into, component_min, is_zero


@dataclass(eq=False)
class Queue:
    name: str
    path: str
    parent: Queue | None
    is_leaf: bool
    guaranteed: Res = field(default_factory=dict)  # {}: none
    max: Res = field(default_factory=dict)  # {}: unlimited (root: the cluster)
    properties: dict[str, str] = field(default_factory=dict)  # effective
    dynamic: bool = False  # created by a placement rule
    template: cfg.Template | None = None
    max_applications: int = 0
    children: dict[str, Queue] = field(default_factory=dict)
    apps: dict[str, App] = field(default_factory=dict)
    allocated: Res = field(default_factory=dict)
    pending: Res = field(default_factory=dict)
    preempting: Res = field(default_factory=dict)
    preemptions: int = 0  # victims taken from this queue (its subtree)

    def __post_init__(self) -> None:
        self.read_properties()

    def read_properties(self) -> None:
        p = self.properties
        self.preemption_policy = cfg.preemption_policy(p)
        self.preemption_delay = cfg.preemption_delay(p)
        self.priority_offset = cfg.priority_offset(p)
        self.priority_policy = cfg.priority_policy(p)
        self.app_sort_policy = cfg.app_sort_policy(p)
        self.app_sort_priority = cfg.app_sort_priority(p)
        self.quota_preemption_delay = cfg.quota_preemption_delay(p)

    def ancestors(self) -> Iterator[Queue]:
        """This queue, then its parent, up to root."""
        q: Queue | None = self
        while q is not None:
            yield q
            q = q.parent

    def used(self) -> Res:
        return {k: v - self.preempting.get(k, 0) for k, v in self.allocated.items()}


def _from_config(qc: cfg.QueueConfig, parent: Queue | None) -> Queue:
    q = Queue(
        name=qc.name,
        path=qc.path,
        parent=parent,
        is_leaf=not qc.parent,
        guaranteed=dict(qc.guaranteed),
        max=dict(qc.max),
        properties=dict(qc.effective),
        template=qc.template,
        max_applications=qc.max_applications,
    )
    for child in qc.children:
        q.children[child.name] = _from_config(child, q)
    return q


class QueueTree:
    """One partition's queues. ``cluster`` is root's max: the sum of the nodes' allocatable."""

    def __init__(self, partition: cfg.Partition):
        self.partition = partition
        self.root = _from_config(partition.root, None)
        self.cluster: Res = {}
        self.by_path: dict[str, Queue] = {}
        self._index(self.root)

    def _index(self, q: Queue) -> None:
        self.by_path[q.path] = q
        for c in q.children.values():
            self._index(c)

    def leaves(self) -> Iterator[Queue]:
        return (q for q in self.by_path.values() if q.is_leaf)

    def lookup(self, path: str) -> str | None:
        q = self.by_path.get(path)
        return None if q is None else ("leaf" if q.is_leaf else "parent")

    def create(self, path: str) -> Queue:
        """A leaf for a placement rule with ``create``, its missing parents included; each
        new queue takes only its parent's child template (no merged properties)."""
        parts = path.split(".")
        q = self.root
        for i, name in enumerate(parts[1:], start=2):
            child = q.children.get(name)
            if child is None:
                t = q.template
                child = Queue(
                    name=name,
                    path=".".join(parts[:i]),
                    parent=q,
                    is_leaf=i == len(parts),
                    guaranteed=dict(t.guaranteed) if t else {},
                    max=dict(t.max) if t else {},
                    properties=dict(t.properties) if t else {},
                    dynamic=True,
                    max_applications=t.max_applications if t else 0,
                )
                q.children[name] = child
                self.by_path[child.path] = child
            q = child
        return q

    # ---- accounting -------------------------------------------------------------------

    def allocate(self, a: Alloc, sign: int = 1) -> None:
        for q in a.queue.ancestors():
            add_into(q.allocated, a.res, sign)

    def set_pending(self, a: Alloc, sign: int = 1) -> None:
        for q in a.queue.ancestors():
            add_into(q.pending, a.res, sign)

    def mark_preempting(self, a: Alloc, sign: int = 1) -> None:
        for q in a.queue.ancestors():
            add_into(q.preempting, a.res, sign)
            if sign > 0:
                q.preemptions += 1

    def max_of(self, q: Queue) -> Res:
        return self.cluster if q.parent is None else q.max

    def emax(self, q: Queue) -> Res:
        """The per-type minimum of the queue's max and its ancestors' (root: the cluster)."""
        out: Res | None = None
        for a in q.ancestors():
            out = component_min(out, self.max_of(a))
        return out or {}

    def headroom(self, leaf: Queue) -> Res:
        """What the leaf may still take: the minimum over it and its ancestors of max −
        allocated, in the types each max defines."""
        out: Res | None = None
        for q in leaf.ancestors():
            limit = self.max_of(q)
            if limit:
                out = component_min(out, {k: v - q.allocated.get(k, 0) for k, v in limit.items()})
        return out or {}

    # ---- reload -------------------------------------------------------------------------

    def adopt(self, old: QueueTree, place) -> None:
        """Carry every application of ``old`` into this tree (a configuration reload):
        same queue path where it still is a leaf, else wherever ``place(app)`` puts it."""
        self.cluster = old.cluster
        for q in old.leaves():
            for app in q.apps.values():
                target = self.by_path.get(q.path)
                if target is None:
                    target = self.create(q.path)  # a removed queue drains as a dynamic leaf
                elif not target.is_leaf:
                    target = place(app) or self.create(f"root.{q.name}-draining")
                self.move_app(app, target)

    def move_app(self, app: App, target: Queue) -> None:
        app.queue = target
        target.apps[app.app_id] = app
        for a in app.allocs.values():
            a.queue = target
            if a.node:
                self.allocate(a)
                if a.victim:
                    self.mark_preempting(a)
            else:
                self.set_pending(a)


def fair_share(q: Queue, tree: QueueTree) -> float:
    """How full a queue is for the fair order: its largest share of usage against its
    guarantee (or, without one, its max, then the cluster)."""
    base = q.guaranteed if not is_zero(q.guaranteed) else (q.max or tree.cluster)
    share = 0.0
    for k, v in q.allocated.items():
        cap = base.get(k, 0)
        if cap > 0:
            share = max(share, v / cap)
        elif v > 0 and k in base:
            share = max(share, float("inf"))
    return share


def sorted_children(q: Queue, tree: QueueTree) -> list[Queue]:
    """Children with pending work, the least served first (ties by name)."""
    kids = [c for c in q.children.values() if any(v > 0 for v in c.pending.values())]
    kids.sort(key=lambda c: (fair_share(c, tree), c.name))
    return kids


def sorted_apps(leaf: Queue) -> list[App]:
    """Applications with pending asks in the leaf's order: ``fifo`` by submission, ``fair``
    by usage; with ``application.sort.priority`` the highest pending priority goes first."""
    apps = [a for a in leaf.apps.values() if any(not x.node for x in a.allocs.values())]

    def key(app: App) -> tuple:
        prio = -max((x.priority for x in app.allocs.values() if not x.node), default=0)
        prio = prio if leaf.app_sort_priority else 0
        if leaf.app_sort_policy == "fair":
            used = app.allocated()
            return (prio, used.get("vcore", 0), used.get("memory", 0), app.seq)
        return (prio, app.submit_time, app.seq)

    apps.sort(key=key)
    return apps
