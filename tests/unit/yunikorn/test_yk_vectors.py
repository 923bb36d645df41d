"""The test vectors of YuniKorn's preemption (V01-V19 of the developers' reference), on
the preemptors alone: a queue tree from queues.yaml, nodes, placed pods and one ask, and
the exact victims and node that come out. The host's predicate is resources only."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from cluster.yunikorn.asks import Alloc, App
from cluster.yunikorn.config import parse
from cluster.yunikorn.dspreempt import preempt_required_node, victim_order
from cluster.yunikorn.nodes import Node, NodeSet
from cluster.yunikorn.preemption import Gate, preempt
from cluster.yunikorn.queues import QueueTree
from cluster.yunikorn.quotapreempt import QuotaWatch, quota_victims
from cluster.yunikorn.resources import Res

MI = 1024 * 1024


def yaml_tree(queues: str, delay: str = "3s", extra: str = "") -> str:
    body = "\n".join("          " + line for line in queues.strip("\n").splitlines())
    return f"""partitions:
  - name: default
{extra}    queues:
      - name: root
        submitacl: '*'
        properties: {{preemption.delay: {delay}}}
        queues:
{body}
"""


class World:
    """A queue tree, nodes and pods, as the core would hold them."""

    def __init__(self, queues: str, nodes: dict[str, Res], delay: str = "3s", extra: str = ""):
        self.tree = QueueTree(parse(yaml_tree(queues, delay, extra)).partition())
        self.nodes = NodeSet()
        for name, cap in nodes.items():
            self.nodes.upsert(name, {"metadata": {"name": name}, "spec": {}}, dict(cap))
        self.nodes.settle()
        self.tree.cluster = dict(self.nodes.total)
        self.apps: dict[str, App] = {}
        self.by_name: dict[str, Alloc] = {}

    def passes(self, ask: Alloc, node: Node, removed: Sequence[Alloc]) -> bool:
        back: Res = {}
        for a in removed:
            if a.node == node.name:
                for k, v in a.res.items():
                    back[k] = back.get(k, 0) + v
        return node.fits(ask.res, back)

    def pod(
        self, name: str, queue: str, app: str, *, cpu: float = 0, mem: int = 0, created: float = 0.0, **kw
    ) -> Alloc:
        res = {"pods": 1}
        if cpu:
            res["vcore"] = int(cpu * 1000)
        if mem:
            res["memory"] = mem
        a = Alloc(
            uid=name,
            namespace="default",
            name=name,
            app_id=app,
            queue_name=queue,
            res=res,
            priority=kw.get("priority", 0),
            allow_preempt_self=not kw.get("opted_out", False),
            allow_preempt_other=kw.get("may_preempt", True),
            required_node=kw.get("required_node", ""),
            create_time=created,
            pod={},
        )
        a.queue = self.tree.by_path[queue]
        owner = self.apps.get(app)
        if owner is None:
            owner = self.apps[app] = App(app, a.queue)
            a.queue.apps[app] = owner
        if not owner.originator_uid and not kw.get("not_originator", False):
            owner.originator_uid, a.originator = a.uid, True
        owner.allocs[a.uid] = a
        a.app = owner
        self.by_name[name] = a
        return a

    def run(self, name: str, queue: str, app: str, node: str, **kw) -> Alloc:
        a = self.pod(name, queue, app, **kw)
        a.node = node
        n = self.nodes.get(node)
        n.allocs[a.uid] = a
        self.nodes.bind(n, a.res)
        self.tree.allocate(a)
        return a

    def finish(self, a: Alloc) -> None:
        """The pod has ended: gone from its node, queue and application."""
        node = self.nodes.get(a.node)
        del node.allocs[a.uid]
        self.nodes.bind(node, a.res, -1)
        self.tree.allocate(a, -1)
        del a.app.allocs[a.uid]

    def ask(self, name: str, queue: str, app: str, **kw) -> Alloc:
        a = self.pod(name, queue, app, **kw)
        self.tree.set_pending(a)
        return a

    def preempt(self, ask: Alloc, now: float = 100.0, nodes_tried: bool | None = None):
        if nodes_tried is None:  # as the cycle does: quota first, then the nodes
            headroom = self.tree.headroom(ask.queue)
            nodes_tried = all(ask.res.get(k, 0) <= v for k, v in headroom.items() if k in ask.res)
        return preempt(self, ask, now, nodes_tried=nodes_tried, gate=Gate())


def names(decision) -> list[str]:
    return [] if decision is None else [v.name for v in decision.victims]


def node_res(cpu: float, pods: int = 110, mem: int = 0) -> Res:
    out = {"vcore": int(cpu * 1000), "pods": pods}
    if mem:
        out["memory"] = mem
    return out


# ---- V01: sibling preemption on full nodes ------------------------------------------------

V01 = """
- name: parent
  resources: {guaranteed: {vcore: 10}, max: {vcore: 20}}
  queues:
    - {name: child1, resources: {guaranteed: {vcore: 5}, max: {vcore: 10}}}
    - {name: child2, resources: {guaranteed: {vcore: 5}, max: {vcore: 10}}}
"""


@pytest.mark.parametrize(
    ("second_app", "victim", "node"), [("app-1", "alloc2", "node-2"), ("app-3", "alloc1", "node-1")]
)
def test_v01_the_guarantee_protects_a_second_victim(second_app, victim, node):
    w = World(V01, {"node-1": node_res(5, 1), "node-2": node_res(5, 1)})
    w.run("alloc1", "root.parent.child1", "app-1", "node-1", cpu=5, created=1)
    w.run("alloc2", "root.parent.child1", second_app, "node-2", cpu=5, created=2)
    d = w.preempt(w.ask("alloc3", "root.parent.child2", "app-2", cpu=5, created=3))
    assert (names(d), d.node) == ([victim], node)


# ---- V03: quota-limited, the victim on another node ---------------------------------------


def test_v03_quota_limited_preemption_takes_a_victim_on_another_node():
    w = World(
        """
- name: parent
  resources: {max: {vcore: 10}}
  queues:
    - {name: child1, resources: {guaranteed: {vcore: 5}}}
    - {name: child2, resources: {guaranteed: {vcore: 5}}}
""",
        {"node-1": node_res(10, 2), "node-2": node_res(10, 2)},
    )
    w.run("alloc1", "root.parent.child1", "app-1", "node-1", cpu=5, created=1)
    w.run("alloc2", "root.parent.child1", "app-1", "node-2", cpu=5, created=2)
    d = w.preempt(w.ask("alloc3", "root.parent.child2", "app-2", cpu=5, created=3))
    assert (names(d), d.node) == (["alloc2"], "node-1")


# ---- V05: two queues, two nodes, the third victim not needed ------------------------------


def test_v05_victims_from_two_queues_stop_once_the_ask_is_covered():
    w = World(
        """
- name: parent
  resources: {max: {vcore: 18}}
  queues:
    - {name: child1}
    - {name: child2, resources: {guaranteed: {vcore: 15}}}
    - {name: child3}
""",
        {"node-1": node_res(30), "node-2": node_res(30)},
    )
    w.run("alloc1", "root.parent.child1", "app-1", "node-1", cpu=5, created=1)
    w.run("alloc2", "root.parent.child1", "app-1", "node-2", cpu=5, created=2)
    w.run("alloc4", "root.parent.child3", "app-3", "node-2", cpu=5, created=3)
    d = w.preempt(w.ask("alloc3", "root.parent.child2", "app-2", cpu=10, created=4))
    assert (sorted(names(d)), d.node) == (["alloc2", "alloc4"], "node-1")


# ---- V07: resource types and the victim queue's guarantee --------------------------------


def test_v07_only_victims_of_a_queue_over_its_guarantee_in_an_ask_type():
    w = World(
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
        {"node-1": {"vcore": 5000, "memory": 700 * MI, "pods": 110}},
    )
    child2 = "root.parent.parent2.child2"
    for i, name in enumerate(["alloc5", "alloc6", "alloc7"]):
        w.run(name, child2, "app-1", "node-1", mem=100 * MI, created=1 + i)
    for i, name in enumerate(["alloc1", "alloc2", "alloc3"]):
        w.run(name, child2, "app-1", "node-1", cpu=1, mem=100 * MI, created=4 + i)
    d = w.preempt(w.ask("alloc4", "root.parent.parent1.child1", "app-4", cpu=2, created=10))
    assert sorted(names(d)) == ["alloc2", "alloc3"]


# ---- V09: no guarantee on the siblings: no storm ------------------------------------------

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


@pytest.mark.parametrize(("child2", "victims"), [("", []), (", resources: {guaranteed: {vcore: 1}}", ["alloc2"])])
def test_v09_siblings_under_a_guaranteed_parent(child2, victims):
    w = World(V09 % child2, {"node-1": node_res(2)})
    w.run("alloc1", "root.parent.parent1.child1", "app-1", "node-1", cpu=1, created=1)
    w.run("alloc2", "root.parent.parent1.child1", "app-2", "node-1", cpu=1, created=2)
    d = w.preempt(w.ask("alloc3", "root.parent.parent1.child2", "app-3", cpu=1, created=3))
    assert names(d) == victims


# ---- V11: law 4 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parent_g", "child2_g", "ask_cpu", "victims"),
    [
        ("", "", 5, []),
        (", guaranteed: {vcore: 10}", "", 5, ["alloc2"]),
        ("", ", resources: {guaranteed: {vcore: 5}}", 5, ["alloc2"]),
        (", guaranteed: {vcore: 10}", ", resources: {guaranteed: {vcore: 5}}", 5, ["alloc2"]),
        (", guaranteed: {vcore: 10}", ", resources: {guaranteed: {vcore: 5}}", 25, []),
    ],
)
def test_v11_only_a_queue_under_its_guarantee_triggers(parent_g, child2_g, ask_cpu, victims):
    w = World(
        f"""
- name: parent
  resources: {{max: {{vcore: 10}}{parent_g}}}
  queues:
    - {{name: child1, resources: {{guaranteed: {{vcore: 5}}}}}}
    - {{name: child2{child2_g}}}
""",
        {"node-1": node_res(20), "node-2": node_res(20)},
    )
    w.run("alloc1", "root.parent.child1", "app-1", "node-1", cpu=5, created=1)
    w.run("alloc2", "root.parent.child1", "app-1", "node-2", cpu=5, created=2)
    ask = w.ask("alloc3", "root.parent.child2", "app-2", cpu=ask_cpu, created=3)
    assert names(w.preempt(ask)) == victims
    if not victims and ask_cpu == 5:
        assert ask.log[-1] == "Preemption queue guarantees check failed"


# ---- V13: the gate -------------------------------------------------------------------------

V13 = """
- {name: a, resources: {guaranteed: {vcore: 5}}, properties: {preemption.delay: 30s}}
- {name: b, resources: {guaranteed: {vcore: 5}}, properties: {preemption.delay: 30s}}
"""


def v13(**ask_kw) -> tuple[World, Alloc]:
    w = World(V13, {"node-1": node_res(10)})
    w.run("b1", "root.b", "app-b", "node-1", cpu=5, created=1)
    w.run("b2", "root.b", "app-b", "node-1", cpu=5, created=2)
    return w, w.ask("x", "root.a", "app-x", cpu=5, created=10, **ask_kw)


def test_v13_all_conditions_met():
    w, x = v13()
    assert names(w.preempt(x, now=41)) == ["b2"]


@pytest.mark.parametrize(
    ("kw", "now"),
    [({"may_preempt": False}, 41), ({"required_node": "node-1"}, 41), ({}, 39)],
)
def test_v13_the_gate_refuses(kw, now):
    w, x = v13(**kw)
    assert w.preempt(x, now=now) is None
    assert x.log == ["Preemption preconditions failed"]


def test_v13_a_try_is_not_repeated_for_15s_and_an_ask_preempts_once():
    w, x = v13()
    gate = Gate()
    w.nodes.get("node-1").reserved.append(w.ask("other", "root.a", "app-o", cpu=5, created=9))
    assert preempt(w, x, 41, nodes_tried=True, gate=gate) is None  # passed the gate, no node
    gate.new_cycle()
    assert preempt(w, x, 50, nodes_tried=True, gate=gate) is None
    assert x.log[-1] == "Preemption preconditions failed"
    w.nodes.get("node-1").reserved.clear()
    gate.new_cycle()
    assert names(preempt(w, x, 56, nodes_tried=True, gate=gate)) == ["b2"]
    x.triggered_preemption = True
    gate.new_cycle()
    assert preempt(w, x, 90, nodes_tried=True, gate=gate) is None


def test_the_gate_lets_ten_asks_per_leaf_through_in_a_cycle():
    w, _ = v13()
    gate = Gate()
    refused = w.ask("never", "root.a", "app-n", cpu=5, created=10, may_preempt=False)
    asks = [w.ask(f"q{i}", "root.a", f"app-q{i}", cpu=5, created=10) for i in range(11)]
    preempt(w, refused, 41, nodes_tried=True, gate=gate)  # refused at the gate: does not count
    for a in asks:
        preempt(w, a, 41, nodes_tried=True, gate=gate)
    assert refused.log == ["Preemption preconditions failed"]
    assert all(a.gate_passed_at == 41 for a in asks[:10])
    assert asks[10].log == ["Preemption max attempts exhausted"] and asks[10].gate_passed_at is None
    gate.new_cycle()
    assert preempt(w, asks[10], 41, nodes_tried=True, gate=gate) is not None


# ---- V15: node pressure; the unlimited queue's big pods do not fit the guarantee ----------


@pytest.mark.parametrize(("app2", "victim", "node"), [("app-1b", "alloc1", "node-1"), ("app-1a", "alloc2", "node-2")])
def test_v15_victims_per_node_and_the_tie(app2, victim, node):
    w = World(
        """
- name: unlimited
- name: parent
  resources: {guaranteed: {vcore: 10}, max: {vcore: 20}}
  queues:
    - {name: child1, resources: {guaranteed: {vcore: 5}}}
    - {name: child2, resources: {guaranteed: {vcore: 5}}}
""",
        {"node-1": node_res(20), "node-2": node_res(20)},
        delay="30s",
    )
    w.run("alloc0-0", "root.unlimited", "app-0", "node-1", cpu=11, created=1)
    w.run("alloc0-1", "root.unlimited", "app-0", "node-2", cpu=11, created=2)
    w.run("alloc1", "root.parent.child1", "app-1a", "node-1", cpu=5, created=3)
    w.run("alloc2", "root.parent.child1", app2, "node-2", cpu=5, created=4)
    ask = w.ask("alloc3", "root.parent.child2", "app-2", cpu=5, created=5)
    w.nodes.get("node-1").reserved.append(ask)  # its normal reservation, 2 s after creation
    ask.reserved_node = "node-1"
    assert w.preempt(ask, now=30, nodes_tried=True) is None  # before the delay
    d = w.preempt(ask, now=50, nodes_tried=True)
    assert (names(d), d.node) == ([victim], node)


def test_v15_another_asks_reservation_is_cancelled_only_when_old_and_lower():
    w = World("- {name: a, resources: {guaranteed: {vcore: 5}}}\n- {name: b}", {"node-1": node_res(5)})
    w.run("b1", "root.b", "app-b", "node-1", cpu=5, created=1)
    ask = w.ask("x", "root.a", "app-x", cpu=5, created=8000, priority=10)
    holder = w.ask("old", "root.b", "app-o", cpu=5, created=2, priority=5)
    w.nodes.get("node-1").reserved.append(holder)
    d = w.preempt(ask, now=9000, nodes_tried=True)
    assert names(d) == ["b1"] and d.cancel == [holder]
    holder.priority = 10
    ask.triggered_preemption = False
    assert w.preempt(ask, now=9100, nodes_tried=True) is None


# ---- V17: DaemonSet victims ----------------------------------------------------------------


def v17() -> World:
    w = World("- name: ds\n- name: apps", {"node-1": node_res(100), "node-2": node_res(100)})
    spec = [  # name, cpu, priority, opted out, created
        ("ask9", 5, 10, True, 0),
        ("ask1", 10, 10, False, 1),
        ("ask2", 8, 10, False, 0),
        ("ask3", 10, 15, False, 2),
        ("ask4", 5, 10, False, 0),
        ("ask5", 5, 5, False, 3),
        ("ask6", 10, 10, True, 4),
        ("ask7", 8, 10, True, 0),
        ("ask8", 10, 15, True, 5),
    ]
    for name, cpu, prio, out, t in spec:
        w.run(name, "root.apps", "app-1", "node-1", cpu=cpu, priority=prio, opted_out=out, created=t)
    w.run("ask10", "root.apps", "app-10", "node-1", cpu=5, priority=5, created=6)
    return w


def test_v17_daemonset_victim_order():
    w = v17()
    order = sorted(w.nodes.get("node-1").allocs.values(), key=victim_order)
    assert [a.name for a in order] == ["ask5", "ask1", "ask4", "ask2", "ask3", "ask6", "ask7", "ask8", "ask10", "ask9"]


@pytest.mark.parametrize(
    ("cpu", "priority", "victims"),
    [(25, 20, ["ask5", "ask1", "ask4", "ask2"]), (24, 1, None)],
)
def test_v17_daemonset_selection(cpu, priority, victims):
    w = v17()
    ds = w.ask("agent", "root.ds", "ds", cpu=cpu, priority=priority, required_node="node-1", created=10)
    d = preempt_required_node(w, ds, 20)
    assert (None if d is None else names(d)) == victims
    if victims is None:
        assert ds.log == ["No fit on required node, preemption does not help"]


def test_v17_a_daemonset_ask_needing_a_type_no_candidate_has_gets_no_victims():
    w = v17()
    ds = w.ask("agent", "root.ds", "ds", cpu=1, priority=20, required_node="node-1", created=10)
    ds.res["nvidia.com/gpu"] = 1
    assert preempt_required_node(w, ds, 20) is None


def test_daemonset_pods_are_never_general_victims():
    w = World("- {name: a, resources: {guaranteed: {vcore: 5}}}\n- {name: b}", {"node-1": node_res(5)})
    w.run("agent", "root.b", "ds", "node-1", cpu=5, created=1, required_node="node-1")
    assert w.preempt(w.ask("x", "root.a", "app-x", cpu=5, created=2)) is None


# ---- V19: quota preemption --------------------------------------------------------------------

MINUTE = 60.0


@pytest.mark.parametrize(
    ("guaranteed", "running", "amount", "preempted", "claimed"),
    [
        ("", [], None, [], None),
        ("", [("ask1", 10, 5), ("ask2", 8, 4)], 8, ["ask2"], 8),
        ("", [("ask6", 11, 3)], 1, [], None),
        ("", [("ask21", 9, 4), ("ask3", 11, 3)], 10, ["ask21"], 9),
        ("", [("ask4", 5, 3), ("ask41", 6, 2), ("ask42", 9, 1)], 10, ["ask4"], 5),
        ("guaranteed: {vcore: 5}, ", [("ask4", 5, 3), ("ask41", 6, 2), ("ask42", 9, 1)], 10, ["ask4"], 5),
        (
            "guaranteed: {vcore: 10}, ",
            [("ask5", 5, 4), ("ask51", 6, 3), ("ask52", 3, 2), ("ask53", 4, 1)],
            8,
            ["ask52", "ask53"],
            7,
        ),
    ],
)
def test_v19_quota_victims(guaranteed, running, amount, preempted, claimed):
    now = 3600.0
    w = World(f"- {{name: leaf, resources: {{{guaranteed}max: {{vcore: 10}}}}}}", {"node-1": node_res(100)})
    w.finish(w.run("first", "root.leaf", "app-q", "node-1", cpu=0.001, created=0))  # the originator is done
    for name, cpu, age in running:
        w.run(name, "root.leaf", "app-q", "node-1", cpu=cpu, priority=10, created=now - age * MINUTE)
    result = quota_victims(w.tree, w.tree.by_path["root.leaf"])
    assert sorted(v.name for v in result.victims) == preempted
    assert result.amount.get("vcore", 0) == (amount or 0) * 1000
    assert result.claimed.get("vcore", 0) == (claimed or 0) * 1000


def test_quota_preemption_starts_after_its_delay_and_only_when_switched_on():
    extra = "    preemption: {quotapreemptionenabled: true}\n"
    w = World(
        "- {name: leaf, resources: {max: {vcore: 10}}, properties: {quota.preemption.delay: 30s}}",
        {"node-1": node_res(100)},
        extra=extra,
    )
    for i in range(3):
        w.run(f"p{i}", "root.leaf", "app", "node-1", cpu=5, created=i)
    watch = QuotaWatch()
    watch.on_change(w.tree, 100)
    assert watch.due(100) == 130
    assert watch.run(w.tree, 120, True) == []
    (result,) = watch.run(w.tree, 130, True)
    assert [v.name for v in result.victims] == ["p0"]  # the originator first: upstream's quota order
    watch.on_change(w.tree, 130)
    assert watch.run(w.tree, 200, False) == []
