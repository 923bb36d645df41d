"""Builders for the YuniKorn preemption unit tests (not a test module).

``Sim`` holds what the core would: a queue tree parsed from queues.yaml, nodes, placed pods
and asks; it is also the preemptors' host, with a predicate that checks resources only
(nodes named in ``refuse`` fail every pod, to play upstream's mocked predicates). CPU is
given in cores, memory in bytes; every pod carries ``pods: 1``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cluster.yunikorn.asks import Alloc, App
from cluster.yunikorn.config import parse
from cluster.yunikorn.nodes import Node, NodeSet
from cluster.yunikorn.preemption import Decision, Gate, preempt
from cluster.yunikorn.queues import QueueTree
from cluster.yunikorn.resources import Res, fits_defined

MI = 1024**2


def res(cpu: float = 0, mem: int = 0, pods: int = 1, **other: int) -> Res:
    out: Res = {"pods": pods} if pods else {}
    if cpu:
        out["vcore"] = round(cpu * 1000)
    if mem:
        out["memory"] = mem
    out.update(other)
    return out


def node_cap(cpu: float, pods: int = 110, mem: int = 0, **other: int) -> Res:
    return res(cpu, mem, pods, **other)


def config_text(queues: str, *, delay: str = "3s", preemption: str = "") -> str:
    """A one-partition queues.yaml: ``queues`` is the YAML list of root's children."""
    indented = "\n".join("          " + line for line in queues.strip("\n").splitlines())
    switch = f"    preemption: {{{preemption}}}\n" if preemption else ""
    return (
        "partitions:\n"
        "  - name: default\n"
        f"{switch}"
        "    queues:\n"
        "      - name: root\n"
        "        submitacl: '*'\n"
        f"        properties: {{preemption.delay: {delay}}}\n"
        "        queues:\n"
        f"{indented}\n"
    )


class Sim:
    def __init__(self, queues: str, nodes: dict[str, Res], *, delay: str = "3s", preemption: str = ""):
        self.tree = QueueTree(parse(config_text(queues, delay=delay, preemption=preemption)).partition("default"))
        self.nodes = NodeSet()
        for name, cap in nodes.items():
            self.nodes.upsert(name, {"metadata": {"name": name}, "spec": {}}, dict(cap))
        self.nodes.settle()
        self.tree.cluster = dict(self.nodes.total)
        self.apps: dict[str, App] = {}
        self.pods: dict[str, Alloc] = {}
        self.refuse: set[str] = set()
        self.checks: list[tuple[str, tuple[str, ...]]] = []  # every predicate call: (node, removed)

    # ---- the host ---------------------------------------------------------------------

    def passes(self, ask: Alloc, node: Node, removed: Sequence[Alloc]) -> bool:
        self.checks.append((node.name, tuple(a.name for a in removed)))
        if node.name in self.refuse:
            return False
        back: Res = {}
        for a in removed:
            if a.node == node.name:
                for k, v in a.res.items():
                    back[k] = back.get(k, 0) + v
        return node.fits(ask.res, back)

    # ---- pods ---------------------------------------------------------------------------

    def pod(
        self,
        name: str,
        queue: str,
        size: Res,
        *,
        app: str | None = None,
        created: float = 0.0,
        priority: int = 0,
        opted_out: bool = False,
        may_preempt: bool = True,
        ds_node: str = "",
        originator: bool | None = None,
    ) -> Alloc:
        """A pod in ``queue``'s application ``app`` (default: one per pod). The first pod of
        an application is its originator unless ``originator`` says otherwise."""
        app_id = app or f"app-{name}"
        a = Alloc(
            uid=f"uid-{name}",
            namespace="default",
            name=name,
            app_id=app_id,
            queue_name=queue,
            res=dict(size),
            priority=priority,
            allow_preempt_self=not opted_out,
            allow_preempt_other=may_preempt,
            required_node=ds_node,
            create_time=created,
            pod={},
            seq=len(self.pods),
        )
        a.queue = self.tree.by_path[queue]
        owner = self.apps.get(app_id)
        if owner is None:
            owner = self.apps[app_id] = App(app_id, a.queue)
            a.queue.apps[app_id] = owner
        first = not owner.originator_uid
        a.originator = first if originator is None else originator
        if a.originator:
            owner.originator_uid = a.uid
        owner.allocs[a.uid] = a
        a.app = owner
        self.pods[name] = a
        return a

    def run(self, name: str, queue: str, node: str, size: Res, **kw) -> Alloc:
        """A placed pod (an allocation) on ``node``."""
        a = self.pod(name, queue, size, **kw)
        a.node = node
        n = self.nodes.get(node)
        assert n is not None
        n.allocs[a.uid] = a
        self.nodes.bind(n, a.res)
        self.tree.allocate(a)
        return a

    def ask(self, name: str, queue: str, size: Res, **kw) -> Alloc:
        a = self.pod(name, queue, size, **kw)
        self.tree.set_pending(a)
        return a

    def reserve(self, ask: Alloc, node: str) -> None:
        n = self.nodes.get(node)
        assert n is not None
        n.reserved.append(ask)
        ask.reserved_node = node

    def victim(self, name: str) -> None:
        """Mark a placed pod as chosen by an earlier preemption (as the core's commit does)."""
        a = self.pods[name]
        a.victim = True
        self.tree.mark_preempting(a)

    def gone(self, name: str) -> None:
        """A placed pod has ended: off its node, its queue and its application."""
        a = self.pods.pop(name)
        n = self.nodes.get(a.node)
        assert n is not None and a.app is not None
        del n.allocs[a.uid]
        self.nodes.bind(n, a.res, -1)
        self.tree.allocate(a, -1)
        if a.victim:
            self.tree.mark_preempting(a, -1)
        del a.app.allocs[a.uid]

    # ---- running the preemptor ------------------------------------------------------------

    def in_quota(self, ask: Alloc) -> bool:
        return fits_defined(ask.res, self.tree.headroom(ask.queue))

    def preempt(
        self, ask: Alloc, now: float = 1000.0, *, nodes_tried: bool | None = None, gate: Gate | None = None
    ) -> Decision | None:
        """As the cycle calls it: "nodes not yet tried" when the ask is over its queue quota."""
        if nodes_tried is None:
            nodes_tried = self.in_quota(ask)
        return preempt(self, ask, now, nodes_tried=nodes_tried, gate=gate or Gate())


def names(d: Decision | None) -> list[str] | None:
    return None if d is None else [v.name for v in d.victims]


# ---- scenes of the reference's vectors (section 12): the cluster and the ask ------------------

V01 = """
- name: parent
  resources: {guaranteed: {vcore: 10}, max: {vcore: 20}}
  queues:
    - {name: child1, resources: {guaranteed: {vcore: 5}, max: {vcore: 10}}}
    - {name: child2, resources: {guaranteed: {vcore: 5}, max: {vcore: 10}}}
"""


def v01(app2: str) -> tuple[Sim, Alloc]:
    s = Sim(V01, {"node-1": node_cap(5, pods=1), "node-2": node_cap(5, pods=1)})
    s.run("alloc1", "root.parent.child1", "node-1", res(5), app="app-1", created=1)
    s.run("alloc2", "root.parent.child1", "node-2", res(5), app=app2, created=2)
    return s, s.ask("alloc3", "root.parent.child2", res(5), app="app-2", created=3)


def v03() -> tuple[Sim, Alloc]:
    s = Sim(
        """
- name: parent
  resources: {max: {vcore: 10}}
  queues:
    - {name: child1, resources: {guaranteed: {vcore: 5}}}
    - {name: child2, resources: {guaranteed: {vcore: 5}}}
""",
        {"node-1": node_cap(10, pods=2), "node-2": node_cap(10, pods=2)},
    )
    s.run("alloc1", "root.parent.child1", "node-1", res(5), app="app-1", created=1)
    s.run("alloc2", "root.parent.child1", "node-2", res(5), app="app-1", created=2)
    return s, s.ask("alloc3", "root.parent.child2", res(5), app="app-2", created=3)


def v05() -> tuple[Sim, Alloc]:
    s = Sim(
        """
- name: parent
  resources: {max: {vcore: 18}}
  queues:
    - {name: child1}
    - {name: child2, resources: {guaranteed: {vcore: 15}}}
    - {name: child3}
""",
        {"node-1": node_cap(30), "node-2": node_cap(30)},
    )
    s.run("alloc1", "root.parent.child1", "node-1", res(5), app="app-1", created=1)
    s.run("alloc2", "root.parent.child1", "node-2", res(5), app="app-1", created=2)
    s.run("alloc4", "root.parent.child3", "node-2", res(5), app="app-3", created=3)
    return s, s.ask("alloc3", "root.parent.child2", res(10), app="app-2", created=4)


def v07() -> tuple[Sim, Alloc]:
    s = Sim(
        """
- name: parent
  resources: {max: {vcore: 3}}
  queues:
    - name: parent1
      queues: [{name: child1, resources: {guaranteed: {vcore: 2}}}]
    - name: parent2
      queues:
        - {name: child2, resources: {guaranteed: {vcore: 1}}}
        - {name: child3}
""",
        {"node-1": node_cap(5, mem=700 * MI)},
    )
    child2 = "root.parent.parent2.child2"
    for i, name in enumerate(["alloc5", "alloc6", "alloc7"]):
        s.run(name, child2, "node-1", res(mem=100 * MI), app="app-1", created=1 + i)
    for i, name in enumerate(["alloc1", "alloc2", "alloc3"]):
        s.run(name, child2, "node-1", res(1, 100 * MI), app="app-1", created=4 + i)
    return s, s.ask("alloc4", "root.parent.parent1.child1", res(2), app="app-4", created=10)


V09 = """
- name: parent
  resources: {max: {vcore: 20}}
  queues:
    - name: parent1
      resources: {guaranteed: {vcore: 10}}
      queues:
        - {name: child1}
        - {name: child2%s}
    - name: parent2
      queues: [{name: child3}]
"""


def v09(child2: str) -> tuple[Sim, Alloc]:
    s = Sim(V09 % child2, {"node-1": node_cap(2)})
    s.run("alloc1", "root.parent.parent1.child1", "node-1", res(1), app="app-1", created=1)
    s.run("alloc2", "root.parent.parent1.child1", "node-1", res(1), app="app-2", created=2)
    return s, s.ask("alloc3", "root.parent.parent1.child2", res(1), app="app-3", created=3)


def v11(parent_g: str, child2_g: str, cpu: float = 5) -> tuple[Sim, Alloc]:
    s = Sim(
        f"""
- name: parent
  resources: {{max: {{vcore: 10}}{parent_g}}}
  queues:
    - {{name: child1, resources: {{guaranteed: {{vcore: 5}}}}}}
    - {{name: child2{child2_g}}}
""",
        {"node-1": node_cap(20), "node-2": node_cap(20)},
    )
    s.run("alloc1", "root.parent.child1", "node-1", res(5), app="app-1", created=1)
    s.run("alloc2", "root.parent.child1", "node-2", res(5), app="app-1", created=2)
    return s, s.ask("alloc3", "root.parent.child2", res(cpu), app="app-2", created=3)


V13 = """
- {name: a, resources: {guaranteed: {vcore: 5}}, properties: {preemption.delay: 30s}}
- {name: b, resources: {guaranteed: {vcore: 5}}, properties: {preemption.delay: 30s}}
"""


def v13(**ask_kw) -> tuple[Sim, Alloc]:
    s = Sim(V13, {"node-1": node_cap(10)})
    s.run("b1", "root.b", "node-1", res(5), app="app-b", created=1)
    s.run("b2", "root.b", "node-1", res(5), app="app-b", created=2)
    return s, s.ask("x", "root.a", res(5), app="app-x", created=10, **ask_kw)


def v15(app2: str) -> tuple[Sim, Alloc]:
    s = Sim(
        """
- name: unlimited
- name: parent
  resources: {guaranteed: {vcore: 10}, max: {vcore: 20}}
  queues:
    - {name: child1, resources: {guaranteed: {vcore: 5}}}
    - {name: child2, resources: {guaranteed: {vcore: 5}}}
""",
        {"node-1": node_cap(20), "node-2": node_cap(20)},
        delay="30s",
    )
    s.run("alloc0-0", "root.unlimited", "node-1", res(11), app="app-0", created=1)
    s.run("alloc0-1", "root.unlimited", "node-2", res(11), app="app-0", created=2)
    s.run("alloc1", "root.parent.child1", "node-1", res(5), app="app-1a", created=3)
    s.run("alloc2", "root.parent.child1", "node-2", res(5), app=app2, created=4)
    ask = s.ask("alloc3", "root.parent.child2", res(5), app="app-2", created=5)
    s.reserve(ask, "node-1")  # the normal reservation made 2 s after its creation
    return s, ask
