"""Required-node (DaemonSet) preemption (``cluster/yunikorn/dspreempt.py``): V17's order and
selection, who may be a candidate, and when no victim set helps."""

from __future__ import annotations

import pytest
from yk_builders import Sim, names, node_cap, res

from cluster.yunikorn.dspreempt import preempt_required_node, victim_order

T = 100.0
# name, CPU, priority, opted out, created (V17); all in app-1 (originator ask9) but ask10
V17 = [
    ("ask9", 5, 10, True, T),
    ("ask1", 10, 10, False, T + 1),
    ("ask2", 8, 10, False, T),
    ("ask3", 10, 15, False, T + 2),
    ("ask4", 5, 10, False, T),
    ("ask5", 5, 5, False, T + 3),
    ("ask6", 10, 10, True, T + 4),
    ("ask7", 8, 10, True, T),
    ("ask8", 10, 15, True, T + 5),
]
V17_ORDER = ["ask5", "ask1", "ask4", "ask2", "ask3", "ask6", "ask7", "ask8", "ask10", "ask9"]


def v17() -> Sim:
    s = Sim("- name: ds\n- name: apps", {"node-1": node_cap(100), "node-2": node_cap(100)})
    for name, cpu, prio, out, created in V17:
        s.run(name, "root.apps", "node-1", res(cpu), app="app-1", priority=prio, opted_out=out, created=created)
    s.run("ask10", "root.apps", "node-1", res(5), app="app-10", priority=5, created=T + 6)
    return s


def ds_ask(s: Sim, size, priority: int = 20, node: str = "node-1", name: str = "agent"):
    return s.ask(name, "root.ds", size, app="ds", priority=priority, ds_node=node, created=T + 10)


def test_v17_order():
    s = v17()
    assert [a.name for a in sorted(s.nodes.get("node-1").allocs.values(), key=victim_order)] == V17_ORDER


@pytest.mark.parametrize(
    ("size", "priority", "victims"),
    [
        (res(25), 20, ["ask5", "ask1", "ask4", "ask2"]),  # 28 CPU: the free 24 is ignored while picking
        (res(5), 20, ["ask5"]),
        (res(25), 1, None),  # every pod has a higher priority
        (res(25), 5, ["ask5", "ask10"]),  # equal priority may go; ask10 is an originator, last class
        (res(1, nvidia_gpu=1), 20, None),  # a type no candidate has: they can never cover it
    ],
)
def test_v17_selection(size, priority, victims):
    s = v17()
    size = {("nvidia.com/gpu" if k == "nvidia_gpu" else k): v for k, v in size.items()}
    ask = ds_ask(s, size, priority)
    d = preempt_required_node(s, ask, 200)
    assert names(d) == victims
    if d is None:
        assert ask.log == ["No fit on required node, preemption does not help"]
    else:
        assert (d.node, d.kind) == ("node-1", "daemonset")


def test_a_victim_already_chosen_is_skipped():
    s = v17()
    s.victim("ask5")
    assert names(preempt_required_node(s, ds_ask(s, res(5)), 200)) == ["ask1"]


def test_other_daemonset_pods_are_never_victims_but_the_same_application_is():
    s = Sim("- name: ds\n- name: apps", {"node-1": node_cap(4)})
    s.run("other-agent", "root.ds", "node-1", res(2), app="ds", ds_node="node-1", created=1)
    s.run("sibling", "root.ds", "node-1", res(2), app="ds", created=2)
    assert names(preempt_required_node(s, ds_ask(s, res(2)), 10)) == ["sibling"]


def test_victims_and_free_room_must_cover_the_ask():
    s = Sim("- name: ds\n- name: apps", {"node-1": node_cap(4)})
    s.run("small", "root.apps", "node-1", res(1), created=1)
    s.run("big", "root.apps", "node-1", res(3), created=2, priority=50)  # above the ask: not a candidate
    ask = ds_ask(s, res(2))
    assert preempt_required_node(s, ask, 10) is None  # small alone is 1 of the 2
    assert ask.log == ["No fit on required node, preemption does not help"]


def test_an_overdrawn_node_gives_no_room():
    # Upstream compares every type of victims + free with the ask: a type the node is
    # overdrawn in (here memory, which the ask does not need) makes the sum fall short.
    s = Sim("- name: ds\n- name: apps", {"node-1": node_cap(4, mem=100)})
    s.run("keep", "root.apps", "node-1", res(1, mem=200), created=1, priority=50)
    s.run("v", "root.apps", "node-1", res(3), created=2)
    assert preempt_required_node(s, ds_ask(s, res(2)), 10) is None


def test_once_per_ask_and_silent_then():
    s = v17()
    ask = ds_ask(s, res(25))
    ask.triggered_preemption = True
    assert preempt_required_node(s, ask, 200) is None and ask.log == []


def test_normal_reservations_on_the_node_are_listed_for_cancelling():
    s = v17()
    ask = ds_ask(s, res(25))
    other_ds = ds_ask(s, res(1), name="other-agent")
    normal = s.ask("normal", "root.apps", res(30), created=T)
    for a in (ask, other_ds, normal):
        s.nodes.get("node-1").reserved.append(a)
    d = preempt_required_node(s, ask, 200)
    assert d is not None and d.cancel == [normal]


def test_it_changes_nothing():
    s = v17()
    before = (dict(s.tree.by_path["root.apps"].preempting), dict(s.nodes.get("node-1").allocated))
    assert preempt_required_node(s, ds_ask(s, res(25)), 200) is not None
    assert (dict(s.tree.by_path["root.apps"].preempting), dict(s.nodes.get("node-1").allocated)) == before
    assert not any(a.victim for a in s.pods.values())
