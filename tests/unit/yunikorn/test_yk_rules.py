"""Preemption rules beyond the reference's vectors: priority offsets and priority fences,
preemption fences, ``disabled`` leaves, the opted-out and originator scores, and the
two-victim limit of the final selection."""

from __future__ import annotations

import pytest
from yk_builders import Sim, names, node_cap, res

from cluster.yunikorn.preemption import fence_root


def two_leaves(b_props: str = "", a_props: str = "") -> Sim:
    w = Sim(
        f"""
- {{name: a, resources: {{guaranteed: {{vcore: 1}}}}, properties: {{{a_props}}}}}
- {{name: b, properties: {{{b_props}}}}}
""",
        {"node-1": node_cap(1)},
    )
    return w


@pytest.mark.parametrize(
    ("b_props", "a_props", "victim_priority", "taken"),
    [
        ("", "", 0, True),
        ("", "", 1, False),  # higher than the ask
        ("", "", -1, True),
        ('priority.offset: "10"', "", 0, False),  # b's offset lifts its pods above the ask
        ('priority.offset: "-10"', "", 10, True),
        ("", 'priority.offset: "20"', 15, True),  # the ask's leaf offset lifts the ask
        ('priority.policy: fence, priority.offset: "5"', "", -100, False),  # fence above: all skipped
        ('priority.policy: fence, priority.offset: "-5"', "", 100, True),  # fence below: all eligible
    ],
)
def test_priority_offsets_and_fences(b_props, a_props, victim_priority, taken):
    w = two_leaves(b_props, a_props)
    w.run("victim", "root.b", "node-1", res(1), app="app-b", priority=victim_priority, created=1)
    d = w.preempt(w.ask("x", "root.a", res(1), app="app-x", created=2))
    assert names(d) == (["victim"] if taken else None)


def test_a_fence_keeps_the_search_inside_and_a_fenced_leaf_alone_gives_nothing():
    w = Sim(
        """
- name: t
  properties: {preemption.policy: fence}
  queues:
    - {name: t1, resources: {guaranteed: {vcore: 1}}}
- name: other
""",
        {"node-1": node_cap(1)},
    )
    w.run("o", "root.other", "node-1", res(1), app="app-o", created=1)
    ask = w.ask("x", "root.t.t1", res(1), app="app-x", created=2)
    assert fence_root(w.tree, ask).path == "root.t"
    assert w.preempt(ask) is None
    leaf_fence = Sim(
        "- {name: a, resources: {guaranteed: {vcore: 1}}, properties: {preemption.policy: fence}}\n- name: b",
        {"node-1": node_cap(1)},
    )
    leaf_fence.run("o", "root.b", "node-1", res(1), app="app-o", created=1)
    assert leaf_fence.preempt(leaf_fence.ask("x", "root.a", res(1), app="app-x", created=2)) is None


def test_reaching_a_max_exactly_does_not_fence():
    w = Sim(
        "- name: p\n  resources: {max: {vcore: 2}}\n  queues: [{name: a, resources: {guaranteed: {vcore: 1}}}]",
        {"node-1": node_cap(2)},
    )
    w.run("mine", "root.p.a", "node-1", res(1), app="app-m", created=1)
    assert fence_root(w.tree, w.ask("x", "root.p.a", res(1), app="app-x", created=2)).path == "root"
    # Over it, the fence is the first queue whose effective max (its ancestors' included) is
    # exceeded: here the leaf itself, which leaves nothing to search.
    assert fence_root(w.tree, w.ask("y", "root.p.a", res(2), app="app-y", created=3)).path == "root.p.a"


@pytest.mark.parametrize("where", ["leaf", "parent"])
def test_disabled_leaves_give_no_victims_and_disabled_passes_down(where):
    queues = (
        "- {name: a, resources: {guaranteed: {vcore: 1}}}\n- {name: b, properties: {preemption.policy: disabled}}"
        if where == "leaf"
        else "- {name: a, resources: {guaranteed: {vcore: 1}}}\n"
        "- {name: b, properties: {preemption.policy: disabled}, queues: [{name: c}]}"
    )
    w = Sim(queues, {"node-1": node_cap(1)})
    leaf = "root.b" if where == "leaf" else "root.b.c"
    w.run("v", leaf, "node-1", res(1), app="app-v", created=1)
    assert w.preempt(w.ask("x", "root.a", res(1), app="app-x", created=2)) is None


def test_a_disabled_queue_may_still_preempt():
    w = Sim(
        "- {name: a, resources: {guaranteed: {vcore: 1}}, properties: {preemption.policy: disabled}}\n- name: b",
        {"node-1": node_cap(1)},
    )
    w.run("v", "root.b", "node-1", res(1), app="app-v", created=1)
    assert names(w.preempt(w.ask("x", "root.a", res(1), app="app-x", created=2))) == ["v"]


def test_opted_out_scores_worse_than_an_originator_which_scores_worse_than_neither():
    w = Sim("- {name: a, resources: {guaranteed: {vcore: 3}}}\n- name: b", {f"n{i}": node_cap(1) for i in range(3)})
    w.run("out", "root.b", "n0", res(1), app="app-1", created=1, opted_out=True, originator=False)
    w.run("orig", "root.b", "n1", res(1), app="app-2", created=2)
    w.run("plain", "root.b", "n2", res(1), app="app-1", created=3, originator=False)
    d = w.preempt(w.ask("x", "root.a", res(1), app="app-x", created=5))
    assert (names(d), d.node) == (["plain"], "n2")
    w.pods["plain"].victim = True  # taken: the next ask sees the other two
    d = w.preempt(w.ask("y", "root.a", res(1), app="app-y", created=6))
    assert (names(d), d.node) == (["orig"], "n1")


def test_the_final_selection_takes_at_most_two_victims():
    # Upstream's quirk: with every pod counting pods: 1, the running total passes the ask in
    # pods after two victims, so the third a 3-CPU ask needs is never taken.
    w = Sim("- {name: a, resources: {guaranteed: {vcore: 3}}}\n- name: b", {"node-1": node_cap(3)})
    for i in range(3):
        w.run(f"v{i}", "root.b", "node-1", res(1), app="app-b", created=1 + i)
    assert names(w.preempt(w.ask("x", "root.a", res(3), app="app-x", created=10))) == ["v2", "v1"]


def test_victims_must_cover_the_whole_ask_whatever_the_free_room():
    w = Sim("- {name: a, resources: {guaranteed: {vcore: 3}}}\n- name: b", {"node-1": node_cap(2)})
    w.run("v", "root.b", "node-1", res(1), app="app-b", created=1)
    ask = w.ask("x", "root.a", res(2), app="app-x", created=10)
    assert w.preempt(ask) is None  # v and the free CPU would do, but v alone is less than the ask
    assert ask.log[-1] == "Preemption helped but short of resources"


def test_an_ask_with_preemption_policy_never_does_not_preempt():
    w = two_leaves()
    w.run("victim", "root.b", "node-1", res(1), app="app-b", created=1)
    ask = w.ask("x", "root.a", res(1), app="app-x", created=2, may_preempt=False)
    assert w.preempt(ask) is None and ask.log == ["Preemption preconditions failed"]
