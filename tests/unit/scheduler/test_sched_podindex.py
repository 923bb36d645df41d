"""PodIndex: selector lookups over placed pods, term groups, and staying in step with the cache."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import bound, cache_with, make_node, make_pod

from cluster.api.selectors import LabelSelector
from cluster.scheduler.podindex import node_counts
from cluster.scheduler.podterms import REQUIRED_ANTI_AFFINITY


def placed():
    pods = [
        make_pod("w1").label("app", "web").label("tier", "front").node("n1"),
        make_pod("w2").label("app", "web").node("n2"),
        make_pod("d1").label("app", "db").node("n1"),
        make_pod("x1", namespace="other").label("app", "web").node("n2"),
        make_pod("bare").node("n2"),
    ]
    return cache_with([make_node("n1"), make_node("n2")], pods)


@pytest.mark.parametrize(
    "selector,namespaces,expected",
    [
        ("app=web", ["default"], ["w1", "w2"]),
        ("app in (web,db)", ["default"], ["d1", "w1", "w2"]),
        ("app=web,tier=front", ["default"], ["w1"]),
        ("app!=web", ["default"], ["bare", "d1"]),
        ("tier", ["default"], ["w1"]),
        ("!tier", ["default"], ["bare", "d1", "w2"]),
        ("", ["default"], ["bare", "d1", "w1", "w2"]),
        ("app=web", None, ["w1", "w2", "x1"]),
        ("app=web", ["other"], ["x1"]),
        ("app=none", ["default"], []),
        ("app=web", ["missing"], []),
    ],
)
def test_select(selector, namespaces, expected):
    index = placed().snapshot().pods
    assert sorted(p.name for p in index.select(namespaces, LabelSelector.parse(selector))) == expected


def test_nothing_selector_selects_nothing():
    assert placed().snapshot().pods.select(None, LabelSelector.nothing()) == []


def test_counts_follow_node_rows_after_a_swap_remove():
    c = cache_with(
        [make_node("n0"), make_node("n1"), make_node("n2")],
        [make_pod("a").label("app", "web").node("n2"), make_pod("b").label("app", "web").node("n2")],
    )
    c.remove_node("n0")  # n2 moves into row 0
    pods = c.snapshot().pods.select(["default"], LabelSelector.parse("app=web"))
    assert node_counts(pods, c.num_nodes).tolist() == [2, 0]
    assert c.snapshot().node_name(0) == "n2"


def test_pods_of_a_removed_node_leave_the_index_and_return_with_it():
    c = cache_with([make_node("n1")], [make_pod("a").label("app", "web").node("n1")])
    sel = LabelSelector.parse("app=web")
    c.remove_node("n1")
    assert c.snapshot().pods.select(None, sel) == []
    c.add_node(make_node("n1"))
    assert [p.name for p in c.snapshot().pods.select(None, sel)] == ["a"]


def test_relabel_and_delete_update_the_index():
    pod = make_pod("a").label("app", "web").node("n1")
    c = cache_with([make_node("n1")], [pod])
    c.add_pod(make_pod("a").label("app", "db").node("n1"))
    index = c.snapshot().pods
    assert index.select(None, LabelSelector.parse("app=web")) == []
    assert [p.name for p in index.select(None, LabelSelector.parse("app=db"))] == ["a"]
    c.remove_pod("uid-default-a")
    assert index.select(None, LabelSelector.parse("app=db")) == []


def test_identical_terms_share_one_group():
    anti = {"matchLabels": {"app": "web"}}
    pods = [
        make_pod(f"w{i}").label("app", "web").pod_anti_affinity("kubernetes.io/hostname", anti).node(f"n{i % 2}")
        for i in range(4)
    ]
    c = cache_with([make_node("n0"), make_node("n1")], pods)
    groups = c.snapshot().pods.groups(REQUIRED_ANTI_AFFINITY)
    assert len(groups) == 1 and len(groups[0].pods) == 4
    assert groups[0].node_counts(2).tolist() == [2, 2]
    for i in range(4):
        c.remove_pod(f"uid-default-w{i}")
    assert c.snapshot().pods.groups(REQUIRED_ANTI_AFFINITY) == []


def test_assumed_pod_is_indexed_until_forgotten():
    c = cache_with([make_node("n1")])
    pinfo = c.new_pod_info(make_pod("a").label("app", "web"))
    c.assume_pod(pinfo, "n1", 0.0)
    sel = LabelSelector.parse("app=web")
    assert [p.name for p in c.snapshot().pods.select(None, sel)] == ["a"]
    c.forget_pod("uid-default-a")
    assert c.snapshot().pods.select(None, sel) == []
    c.add_pod(bound(make_pod("a").label("app", "web"), "n1"))
    assert [p.name for p in c.snapshot().pods.select(None, sel)] == ["a"]


def rows_of(c, selector="app=web") -> list[str]:
    """The node names ``PodIndex.rows`` gives for ``selector``, sorted."""
    snap = c.snapshot()
    return sorted(snap.node_name(int(r)) for r in snap.pods.rows("default", LabelSelector.parse(selector)))


def test_tracked_rows_follow_pods_as_they_come_go_and_terminate():
    c = cache_with([make_node("n1"), make_node("n2")], [make_pod("a").label("app", "web").node("n1")])
    assert rows_of(c) == ["n1"]  # tracked from here on
    b = make_pod("b").label("app", "web").node("n2")
    c.add_pod(b)
    c.add_pod(make_pod("x").label("app", "db").node("n2"))
    assert rows_of(c) == ["n1", "n2"]
    c.add_pod(make_pod("a").label("app", "web").node("n1").terminating())
    assert rows_of(c) == ["n2"]  # a pod being deleted no longer counts
    c.remove_pod(b["metadata"]["uid"])
    assert rows_of(c) == []
    c.add_pod(make_pod("c").label("app", "db").node("n1"))
    c.add_pod(make_pod("c").label("app", "web").node("n1"))  # relabelled into the selection
    assert rows_of(c) == ["n1"]


def test_tracked_rows_are_rebuilt_after_node_rows_move():
    c = cache_with(
        [make_node("n0"), make_node("n1"), make_node("n2")],
        [make_pod("a").label("app", "web").node("n2"), make_pod("b").label("app", "web").node("n1")],
    )
    assert rows_of(c) == ["n1", "n2"]
    c.remove_node("n0")  # n2 takes row 0
    assert rows_of(c) == ["n1", "n2"]


def test_matching_gives_rows_while_pods_are_fewer_than_nodes_then_counts_per_node():
    c = cache_with([make_node("n0"), make_node("n1"), make_node("n2")], [make_pod("a").label("app", "web").node("n2")])
    sel = LabelSelector.parse("app=web")
    rows, per_node = c.snapshot().pods.matching("default", sel, c.num_nodes)
    assert (rows.tolist(), per_node) == ([2], False)
    for name, node in [("b", "n2"), ("c", "n0"), ("d", "n2"), ("e", "n1")]:
        c.add_pod(make_pod(name).label("app", "web").node(node))
    counts, per_node = c.snapshot().pods.matching("default", sel, c.num_nodes)
    assert (counts.tolist(), per_node) == ([1, 1, 3], True)
    c.add_pod(make_pod("b").label("app", "web").node("n2").terminating())  # no longer counts
    assert c.snapshot().pods.matching("default", sel, c.num_nodes)[0].tolist() == [1, 1, 2]
    c.remove_node("n0")  # n2 takes row 0; the counts are rebuilt for the new rows
    counts, per_node = c.snapshot().pods.matching("default", sel, c.num_nodes)
    assert (counts.tolist(), per_node) == ([2, 1], True)


def test_both_forms_count_the_same_domains():
    from cluster.scheduler.plugins.podtopologyspread_filter import Matched

    rng = np.random.default_rng(7)
    for _ in range(50):
        nodes, domains = int(rng.integers(1, 30)), int(rng.integers(1, 5))
        ids = rng.integers(-1, domains, nodes)
        eligible = (ids >= 0) & (rng.random(nodes) < 0.8)
        rows = rng.integers(0, nodes, int(rng.integers(0, 60)))
        by_rows, by_node = Matched(rows, False), Matched(np.bincount(rows, minlength=nodes), True)
        assert by_rows.on_nodes(nodes).tolist() == by_node.on_nodes(nodes).tolist()
        assert (
            by_rows.in_domains(ids, eligible, domains).tolist() == by_node.in_domains(ids, eligible, domains).tolist()
        )


def test_counts_per_node_cover_every_row_while_the_counted_rows_are_fewer():
    """Counts are kept for the rows pods sit on; the nodes past them read 0."""
    nodes = [make_node(f"n{i:03d}") for i in range(100)]
    pods = [make_pod(f"p{i}").label("app", "web").node(f"n{i % 10:03d}") for i in range(120)]
    c = cache_with(nodes, pods)
    counts, per_node = c.snapshot().pods.matching("default", LabelSelector.parse("app=web"), c.num_nodes)
    assert per_node and len(counts) == 100
    assert counts[:10].tolist() == [12] * 10 and not counts[10:].any()
