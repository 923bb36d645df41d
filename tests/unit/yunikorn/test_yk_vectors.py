"""The test vectors of YuniKorn's preemption (V01-V19 of the developers' reference), on
the preemptors alone: a queue tree from queues.yaml, nodes, placed pods and one ask, and
the exact victims and node that come out. The scenes are ``yk_builders``'; the host's
predicate is resources only."""

from __future__ import annotations

import pytest
from yk_builders import Sim, names, node_cap, res, v01, v03, v05, v07, v09, v11, v13, v15

from cluster.yunikorn.dspreempt import preempt_required_node, victim_order
from cluster.yunikorn.preemption import Decision, Gate, preempt
from cluster.yunikorn.quotapreempt import QuotaWatch, quota_victims


def victims(d: Decision | None) -> list[str]:
    return names(d) or []


# ---- V01: sibling preemption on full nodes ------------------------------------------------


@pytest.mark.parametrize(
    ("second_app", "victim", "node"), [("app-1", "alloc2", "node-2"), ("app-3", "alloc1", "node-1")]
)
def test_v01_the_guarantee_protects_a_second_victim(second_app, victim, node):
    s, ask = v01(second_app)
    d = s.preempt(ask)
    assert (victims(d), d.node) == ([victim], node)


# ---- V03: quota-limited, the victim on another node ---------------------------------------


def test_v03_quota_limited_preemption_takes_a_victim_on_another_node():
    s, ask = v03()
    d = s.preempt(ask)
    assert (victims(d), d.node) == (["alloc2"], "node-1")


# ---- V05: two queues, two nodes, the third victim not needed ------------------------------


def test_v05_victims_from_two_queues_stop_once_the_ask_is_covered():
    s, ask = v05()
    d = s.preempt(ask)
    assert (sorted(victims(d)), d.node) == (["alloc2", "alloc4"], "node-1")


# ---- V07: resource types and the victim queue's guarantee --------------------------------


def test_v07_only_victims_of_a_queue_over_its_guarantee_in_an_ask_type():
    s, ask = v07()
    assert sorted(victims(s.preempt(ask))) == ["alloc2", "alloc3"]


# ---- V09: no guarantee on the siblings: no storm ------------------------------------------


@pytest.mark.parametrize(("child2", "expected"), [("", []), (", resources: {guaranteed: {vcore: 1}}", ["alloc2"])])
def test_v09_siblings_under_a_guaranteed_parent(child2, expected):
    s, ask = v09(child2)
    assert victims(s.preempt(ask)) == expected


# ---- V11: law 4 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parent_g", "child2_g", "ask_cpu", "expected"),
    [
        ("", "", 5, []),
        (", guaranteed: {vcore: 10}", "", 5, ["alloc2"]),
        ("", ", resources: {guaranteed: {vcore: 5}}", 5, ["alloc2"]),
        (", guaranteed: {vcore: 10}", ", resources: {guaranteed: {vcore: 5}}", 5, ["alloc2"]),
        (", guaranteed: {vcore: 10}", ", resources: {guaranteed: {vcore: 5}}", 25, []),
    ],
)
def test_v11_only_a_queue_under_its_guarantee_triggers(parent_g, child2_g, ask_cpu, expected):
    s, ask = v11(parent_g, child2_g, ask_cpu)
    assert victims(s.preempt(ask)) == expected
    if not expected and ask_cpu == 5:
        assert ask.log[-1] == "Preemption queue guarantees check failed"


# ---- V13: the gate -------------------------------------------------------------------------


def test_v13_all_conditions_met():
    s, x = v13()
    assert victims(s.preempt(x, now=41)) == ["b2"]


@pytest.mark.parametrize(
    ("kw", "now"),
    [({"may_preempt": False}, 41), ({"ds_node": "node-1"}, 41), ({}, 39)],
)
def test_v13_the_gate_refuses(kw, now):
    s, x = v13(**kw)
    assert s.preempt(x, now=now) is None
    assert x.log == ["Preemption preconditions failed"]


def test_v13_a_try_is_not_repeated_for_15s_and_an_ask_preempts_once():
    s, x = v13()
    gate = Gate()
    s.reserve(s.ask("other", "root.a", res(5), app="app-o", created=9), "node-1")
    assert preempt(s, x, 41, nodes_tried=True, gate=gate) is None  # passed the gate, no node
    gate.new_cycle()
    assert preempt(s, x, 50, nodes_tried=True, gate=gate) is None
    assert x.log[-1] == "Preemption preconditions failed"
    s.nodes.get("node-1").reserved.clear()
    gate.new_cycle()
    assert victims(preempt(s, x, 56, nodes_tried=True, gate=gate)) == ["b2"]
    x.triggered_preemption = True
    gate.new_cycle()
    assert preempt(s, x, 90, nodes_tried=True, gate=gate) is None


def test_the_gate_lets_ten_asks_per_leaf_through_in_a_cycle():
    s, _ = v13()
    gate = Gate()
    refused = s.ask("never", "root.a", res(5), app="app-n", created=10, may_preempt=False)
    asks = [s.ask(f"q{i}", "root.a", res(5), app=f"app-q{i}", created=10) for i in range(11)]
    preempt(s, refused, 41, nodes_tried=True, gate=gate)  # refused at the gate: does not count
    for a in asks:
        preempt(s, a, 41, nodes_tried=True, gate=gate)
    assert refused.log == ["Preemption preconditions failed"]
    assert all(a.gate_passed_at == 41 for a in asks[:10])
    assert asks[10].log == ["Preemption max attempts exhausted"] and asks[10].gate_passed_at is None
    gate.new_cycle()
    assert preempt(s, asks[10], 41, nodes_tried=True, gate=gate) is not None


# ---- V15: node pressure; the unlimited queue's big pods do not fit the guarantee ----------


@pytest.mark.parametrize(("app2", "victim", "node"), [("app-1b", "alloc1", "node-1"), ("app-1a", "alloc2", "node-2")])
def test_v15_victims_per_node_and_the_tie(app2, victim, node):
    s, ask = v15(app2)
    assert s.preempt(ask, now=30, nodes_tried=True) is None  # before the delay
    d = s.preempt(ask, now=50, nodes_tried=True)
    assert (victims(d), d.node) == ([victim], node)


def test_v15_another_asks_reservation_is_cancelled_only_when_old_and_lower():
    s = Sim("- {name: a, resources: {guaranteed: {vcore: 5}}}\n- {name: b}", {"node-1": node_cap(5)})
    s.run("b1", "root.b", "node-1", res(5), app="app-b", created=1)
    ask = s.ask("x", "root.a", res(5), app="app-x", created=8000, priority=10)
    holder = s.ask("old", "root.b", res(5), app="app-o", created=2, priority=5)
    s.reserve(holder, "node-1")
    d = s.preempt(ask, now=9000, nodes_tried=True)
    assert victims(d) == ["b1"] and d.cancel == [holder]
    holder.priority = 10
    ask.triggered_preemption = False
    assert s.preempt(ask, now=9100, nodes_tried=True) is None


# ---- V17: DaemonSet victims ----------------------------------------------------------------


def v17() -> Sim:
    s = Sim("- name: ds\n- name: apps", {"node-1": node_cap(100), "node-2": node_cap(100)})
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
        s.run(name, "root.apps", "node-1", res(cpu), app="app-1", priority=prio, opted_out=out, created=t)
    s.run("ask10", "root.apps", "node-1", res(5), app="app-10", priority=5, created=6)
    return s


def test_v17_daemonset_victim_order():
    s = v17()
    order = sorted(s.nodes.get("node-1").allocs.values(), key=victim_order)
    assert [a.name for a in order] == ["ask5", "ask1", "ask4", "ask2", "ask3", "ask6", "ask7", "ask8", "ask10", "ask9"]


@pytest.mark.parametrize(
    ("cpu", "priority", "expected"),
    [(25, 20, ["ask5", "ask1", "ask4", "ask2"]), (24, 1, None)],
)
def test_v17_daemonset_selection(cpu, priority, expected):
    s = v17()
    ds = s.ask("agent", "root.ds", res(cpu), app="ds", priority=priority, ds_node="node-1", created=10)
    d = preempt_required_node(s, ds, 20)
    assert names(d) == expected
    if expected is None:
        assert ds.log == ["No fit on required node, preemption does not help"]


def test_v17_a_daemonset_ask_needing_a_type_no_candidate_has_gets_no_victims():
    s = v17()
    ds = s.ask("agent", "root.ds", res(1, **{"nvidia.com/gpu": 1}), app="ds", priority=20, ds_node="node-1", created=10)
    assert preempt_required_node(s, ds, 20) is None


def test_daemonset_pods_are_never_general_victims():
    s = Sim("- {name: a, resources: {guaranteed: {vcore: 5}}}\n- {name: b}", {"node-1": node_cap(5)})
    s.run("agent", "root.b", "node-1", res(5), app="ds", created=1, ds_node="node-1")
    assert s.preempt(s.ask("x", "root.a", res(5), app="app-x", created=2)) is None


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
    s = Sim(f"- {{name: leaf, resources: {{{guaranteed}max: {{vcore: 10}}}}}}", {"node-1": node_cap(100)})
    s.run("first", "root.leaf", "node-1", res(0.001), app="app-q", created=0)
    s.gone("first")  # the originator is done
    for name, cpu, age in running:
        s.run(name, "root.leaf", "node-1", res(cpu), app="app-q", priority=10, created=now - age * MINUTE)
    result = quota_victims(s.tree, s.tree.by_path["root.leaf"])
    assert sorted(v.name for v in result.victims) == preempted
    assert result.amount.get("vcore", 0) == (amount or 0) * 1000
    assert result.claimed.get("vcore", 0) == (claimed or 0) * 1000


def test_quota_preemption_starts_after_its_delay_and_only_when_switched_on():
    s = Sim(
        "- {name: leaf, resources: {max: {vcore: 10}}, properties: {quota.preemption.delay: 30s}}",
        {"node-1": node_cap(100)},
        preemption="quotapreemptionenabled: true",
    )
    for i in range(3):
        s.run(f"p{i}", "root.leaf", "node-1", res(5), app="app", created=i)
    watch = QuotaWatch()
    watch.on_change(s.tree, 100)
    assert watch.due(100) == 130
    assert watch.run(s.tree, 120, True) == []
    (result,) = watch.run(s.tree, 130, True)
    assert [v.name for v in result.victims] == ["p0"]  # the originator first: upstream's quota order
    watch.on_change(s.tree, 130)
    assert watch.run(s.tree, 200, False) == []
