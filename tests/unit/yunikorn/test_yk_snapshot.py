"""The remaining guarantee ``Rem`` on queue snapshots (``cluster/yunikorn/snapshot.py``):
upstream's table for a root/parent/child1/child2 tree seen from two asking leaves, the
sibling rule and its string-prefix quirk, and that snapshots leave the real queues alone."""

from __future__ import annotations

import pytest
from yk_builders import Sim, names, node_cap, res

from cluster.yunikorn.snapshot import Snapshot

TREE = """
- name: parent
  queues: [{name: child1}, {name: child2}]
- name: parent1
  queues: [{name: child3}]
"""
ORDER = ("root", "root.parent", "root.parent.child1", "root.parent.child2")


def amounts(first: int | None = None, second: int | None = None) -> dict[str, int]:
    out = {}
    if first is not None:
        out["first"] = first
    if second is not None:
        out["second"] = second
    return out


# guaranteed and allocated per queue, in ORDER; None: unset
G_SPARSE = (amounts(10), None, amounts(second=5), None)
G1 = (amounts(10), amounts(5), amounts(second=5), amounts(5))
G2 = (amounts(10), amounts(5, 5), amounts(second=5), amounts(5))
A_NONE = (None, None, None, None)
A2 = (amounts(10), amounts(10), None, amounts(5))
A3 = (amounts(10, 5), amounts(5, 5), amounts(second=5), amounts(5))
A4 = (amounts(10, 10), amounts(5, 10), amounts(second=10), amounts(5))
A5 = (amounts(10, 10), amounts(5, 10), amounts(second=10), amounts(2))

# upstream's TestGetRemainingGuaranteedResource: (guaranteed, allocated, Rem per queue)
FROM_CHILD3 = [  # the asking leaf root.parent1.child3 shares only root with these queues
    (G_SPARSE, A_NONE, (amounts(10), amounts(10), amounts(10, 5), amounts(10))),
    (G1, A_NONE, (amounts(10), amounts(5), amounts(5, 5), amounts(5))),
    (G1, A2, (amounts(0), amounts(-5), amounts(-5, 5), amounts(-5))),
    (G1, A3, (amounts(0), amounts(0), amounts(0, 0), amounts(0))),
    (G1, A4, (amounts(0), amounts(0), amounts(0, -5), amounts(0))),
    (G2, A5, (amounts(0), amounts(0, -5), amounts(0, -5), amounts(0, -5))),
]
FROM_CHILD2 = [  # the asking leaf is child2: its own guarantee hides parent's
    (G_SPARSE, A_NONE, (amounts(10), amounts(10), amounts(10, 5), amounts(10))),
    (G1, A_NONE, (amounts(10), None, amounts(second=5), amounts(5))),
    (G1, A2, (amounts(0), None, amounts(second=5), amounts(0))),
    (G1, A3, (amounts(0), None, amounts(second=0), amounts(0))),
    (G1, A4, (amounts(0), None, amounts(second=-5), amounts(0))),
    (G2, A5, (amounts(0), None, amounts(second=-5), amounts(3))),
]


@pytest.mark.parametrize(
    ("ask_leaf", "guaranteed", "allocated", "expected"),
    [("root.parent1.child3", *row) for row in FROM_CHILD3] + [("root.parent.child2", *row) for row in FROM_CHILD2],
)
def test_remaining_guarantee_table(ask_leaf, guaranteed, allocated, expected):
    s = Sim(TREE, {"n": node_cap(1)})
    for path, g, a in zip(ORDER, guaranteed, allocated):
        q = s.tree.by_path[path]
        q.guaranteed, q.allocated = dict(g or {}), dict(a or {})
    snap = Snapshot(s.tree.by_path[ask_leaf])
    assert tuple(snap.rem(s.tree.by_path[p]) for p in ORDER) == expected


def test_preempting_counts_as_gone():
    s = Sim(TREE, {"n": node_cap(1)})
    q = s.tree.by_path["root.parent.child1"]
    q.guaranteed, q.allocated, q.preempting = amounts(5), amounts(8), amounts(3)
    assert Snapshot(s.tree.by_path["root.parent1.child3"]).rem(q) == amounts(0)


PREFIX = """
- name: a
  resources: {guaranteed: {vcore: 4}}
  queues:
    - {name: x1, resources: {guaranteed: {vcore: 2}}}
    - {name: x10, resources: {guaranteed: {vcore: 1}}}
    - {name: y, resources: {guaranteed: {vcore: 1}}}
"""


def test_a_sibling_whose_path_is_a_prefix_of_the_asking_leaf_counts_as_its_ancestor():
    # root.a.x1 is no ancestor of root.a.x10, but upstream compares strings: x1's own
    # guarantee is hidden as an ancestor's would be, so x1 reads as unguaranteed.
    s = Sim(PREFIX, {"n": node_cap(3)})
    s.run("v", "root.a.x1", "n", res(1), created=1)
    s.run("w", "root.a.y", "n", res(1), created=2)
    tree = s.tree
    from_x10 = Snapshot(tree.by_path["root.a.x10"])
    assert from_x10.rem(tree.by_path["root.a.x1"]) is None
    assert from_x10.rem(tree.by_path["root.a.y"]) == {"vcore": 0}
    assert from_x10.rem(tree.by_path["root.a"]) is None  # a true ancestor
    from_y = Snapshot(tree.by_path["root.a.y"])
    assert from_y.rem(tree.by_path["root.a.x1"]) == {"vcore": 1000}


def test_the_prefix_quirk_makes_an_under_guarantee_sibling_a_victim():
    s = Sim(PREFIX, {"n": node_cap(2)})
    s.run("v", "root.a.x1", "n", res(1), created=1)  # x1 uses 1 of its 2
    s.run("w", "root.a.y", "n", res(1), created=2)  # y at its guarantee
    assert names(s.preempt(s.ask("p", "root.a.x10", res(1), created=3))) == ["v"]
    s2 = Sim(PREFIX.replace("x10", "z"), {"n": node_cap(2)})
    s2.run("v", "root.a.x1", "n", res(1), created=1)
    s2.run("w", "root.a.y", "n", res(1), created=2)
    assert s2.preempt(s2.ask("p", "root.a.z", res(1), created=3)) is None


def test_without_an_own_guarantee_the_parents_rem_flows_into_every_child():
    s = Sim("- name: p\n  resources: {guaranteed: {vcore: 4}}\n  queues: [{name: a}, {name: b}]", {"n": node_cap(4)})
    s.run("v", "root.p.b", "n", res(3), created=1)
    snap = Snapshot(s.tree.by_path["root.p.a"])
    assert snap.rem(s.tree.by_path["root.p.b"]) == {"vcore": 1000}
    assert snap.rem(s.tree.by_path["root.p.a"]) == {"vcore": 1000}


def test_a_queue_with_no_guarantee_on_its_path_has_none():
    s = Sim("- name: p\n  queues: [{name: a}]", {"n": node_cap(1)})
    assert Snapshot(s.tree.by_path["root.p.a"]).rem(s.tree.by_path["root.p.a"]) is None


def test_the_asking_leafs_own_guarantee_hides_its_ancestors_other_types_too():
    s = Sim(
        "- name: p\n  resources: {guaranteed: {vcore: 4, memory: 4Gi}}\n"
        "  queues: [{name: a, resources: {guaranteed: {vcore: 2}}}, {name: b}]",
        {"n": node_cap(4, mem=8 * 1024**3)},
    )
    s.run("v", "root.p.a", "n", res(1, mem=1024**3), created=1)
    a, b = s.tree.by_path["root.p.a"], s.tree.by_path["root.p.b"]
    assert Snapshot(a).rem(a) == {"vcore": 1000}
    # seen from b (no guarantee of its own) p's remaining guarantee flows down, both types
    assert Snapshot(b).rem(a) == {"vcore": 1000, "memory": 3 * 1024**3}


def test_moves_change_only_the_copies():
    s = Sim("- name: p\n  resources: {guaranteed: {vcore: 4}}\n  queues: [{name: a}, {name: b}]", {"n": node_cap(4)})
    v = s.run("v", "root.p.b", "n", res(3), created=1)
    a, b, p = (s.tree.by_path[x] for x in ("root.p.a", "root.p.b", "root.p"))
    before = [(dict(q.allocated), dict(q.preempting)) for q in s.tree.by_path.values()]
    snap = Snapshot(a)
    snap.remove(v)
    assert snap.rem(b) == {"vcore": 4000} and snap.of(p).allocated == {"vcore": 0, "pods": 0}
    snap.add_to_ask_leaf(v.res)
    assert snap.rem(a) == {"vcore": 1000} and snap.of(a).allocated == {"vcore": 3000, "pods": 1}
    snap.add_to_ask_leaf(v.res, -1)
    snap.add(v)
    assert snap.rem(a) == {"vcore": 1000}
    assert [(dict(q.allocated), dict(q.preempting)) for q in s.tree.by_path.values()] == before
    assert Snapshot(a).rem(b) == {"vcore": 1000}  # a fresh snapshot starts from the real queues
