"""TaintToleration: toleration matching, filter reasons per node, PreferNoSchedule scores."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import cache_with, make_node, make_pod

from cluster.api.taints import find_untolerated_taint, tolerates_taint, tolerations_tolerate_taint
from cluster.scheduler.framework import ClusterEvent, CycleState
from cluster.scheduler.plugins.tainttoleration import TaintToleration
from cluster.scheduler.status import Code, Diagnosis, Rejection, fit_error_message


def run_filter(nodes, pod, plugin=None):
    c = cache_with(nodes)
    plugin = plugin or TaintToleration()
    state, pinfo, snap = CycleState(), c.new_pod_info(pod), c.snapshot()
    status, result = plugin.pre_filter(state, pinfo, snap)
    assert result is None
    return status, plugin.filter(state, pinfo, snap)


def reasons_per_node(result, n):
    return [sorted(reason for _, reason, mask in result.failures if mask[i]) for i in range(n)]


def run_score(nodes, pod, candidates=None):
    c = cache_with(nodes)
    plugin, state, pinfo, snap = TaintToleration(), CycleState(), c.new_pod_info(pod), c.snapshot()
    cand = np.arange(snap.num_nodes) if candidates is None else np.asarray(candidates)
    status = plugin.pre_score(state, pinfo, snap, cand)
    if status.is_skip():
        return None
    raw = plugin.score(state, pinfo, snap, cand)
    normalized = raw.copy()
    plugin.normalize(state, pinfo, normalized)
    return raw.tolist(), normalized.tolist()


def tol(key="", operator="Equal", value="", effect=""):
    return {"key": key, "operator": operator, "value": value, "effect": effect}


def taint(key, value="", effect="NoSchedule"):
    return {"key": key, "value": value, "effect": effect}


# ---- ToleratesTaint ------------------------------------------------------------------

TOLERATES_CASES = [
    # (id, toleration, taint, tolerated)
    ("equal key and value", tol("k", "Equal", "v", "NoSchedule"), taint("k", "v"), True),
    ("equal with a different value", tol("k", "Equal", "v", "NoSchedule"), taint("k", "w"), False),
    ("empty operator means Equal", tol("k", "", "v", "NoSchedule"), taint("k", "v"), True),
    ("empty operator compares values", tol("k", "", "", "NoSchedule"), taint("k", "v"), False),
    ("exists ignores the value", tol("k", "Exists", "", "NoSchedule"), taint("k", "anything"), True),
    ("different key", tol("k", "Exists", "", "NoSchedule"), taint("other"), False),
    ("empty effect matches every effect", tol("k", "Exists"), taint("k", effect="NoExecute"), True),
    ("effect must match when set", tol("k", "Exists", "", "NoSchedule"), taint("k", effect="NoExecute"), False),
    (
        "PreferNoSchedule toleration does not cover NoSchedule",
        tol("k", "Exists", "", "PreferNoSchedule"),
        taint("k"),
        False,
    ),
    ("empty key with Exists matches every key", tol("", "Exists"), taint("whatever", "x", "NoExecute"), True),
    (
        "empty key with Exists still checks the effect",
        tol("", "Exists", "", "NoSchedule"),
        taint("whatever", "x", "NoExecute"),
        False,
    ),
    ("empty key with Equal compares only the value", tol("", "Equal", "x"), taint("whatever", "x"), True),
    ("unknown operator never tolerates", tol("k", "Gt", "1"), taint("k", "2"), False),
    ("missing fields read as empty", {"operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, True),
]


@pytest.mark.parametrize(
    "toleration,the_taint,expected", [c[1:] for c in TOLERATES_CASES], ids=[c[0] for c in TOLERATES_CASES]
)
def test_tolerates_taint(toleration, the_taint, expected):
    assert tolerates_taint(toleration, the_taint) is expected
    assert tolerations_tolerate_taint([tol("unrelated", "Exists"), toleration], the_taint) is expected


def test_no_tolerations_tolerate_nothing():
    assert not tolerations_tolerate_taint(None, taint("k"))
    assert not tolerations_tolerate_taint([], taint("k"))


def test_find_untolerated_taint_returns_the_first_in_node_order():
    taints = [taint("soft", effect="PreferNoSchedule"), taint("a", "1"), taint("b", "2", "NoExecute")]
    assert find_untolerated_taint(taints, []) == taint("a", "1")
    assert find_untolerated_taint(taints, [tol("a", "Exists")]) == taint("b", "2", "NoExecute")
    assert find_untolerated_taint(taints, [tol("a", "Exists"), tol("b", "Exists")]) is None
    assert find_untolerated_taint(taints, [], effects=None) == taint("soft", effect="PreferNoSchedule")
    assert find_untolerated_taint(taints, [], effects={"NoExecute"}) == taint("b", "2", "NoExecute")
    assert find_untolerated_taint(None, []) is None


# ---- Filter --------------------------------------------------------------------------

FILTER_CASES = [
    # (id, node taints as (key, value, effect), pod tolerations, expected reasons)
    ("no taints", [], [], []),
    (
        "untolerated NoSchedule",
        [("dedicated", "gpu", "NoSchedule")],
        [],
        ["node(s) had untolerated taint {dedicated: gpu}"],
    ),
    (
        "untolerated NoExecute",
        [("node.kubernetes.io/not-ready", "", "NoExecute")],
        [],
        ["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"],
    ),
    ("PreferNoSchedule never filters", [("spot", "", "PreferNoSchedule")], [], []),
    ("tolerated by Equal", [("dedicated", "gpu", "NoSchedule")], [tol("dedicated", "Equal", "gpu", "NoSchedule")], []),
    (
        "wrong value",
        [("dedicated", "gpu", "NoSchedule")],
        [tol("dedicated", "Equal", "cpu", "NoSchedule")],
        ["node(s) had untolerated taint {dedicated: gpu}"],
    ),
    ("tolerated by Exists without effect", [("dedicated", "gpu", "NoExecute")], [tol("dedicated", "Exists")], []),
    ("wildcard toleration", [("a", "1", "NoSchedule"), ("b", "2", "NoExecute")], [tol("", "Exists")], []),
    (
        "the first untolerated taint names the reason",
        [("a", "1", "NoSchedule"), ("b", "2", "NoSchedule")],
        [tol("a", "Exists")],
        ["node(s) had untolerated taint {b: 2}"],
    ),
    (
        "only one reason even with two untolerated",
        [("a", "1", "NoSchedule"), ("b", "2", "NoSchedule")],
        [],
        ["node(s) had untolerated taint {a: 1}"],
    ),
    (
        "soft taint before a hard one is skipped",
        [("s", "x", "PreferNoSchedule"), ("h", "y", "NoSchedule")],
        [],
        ["node(s) had untolerated taint {h: y}"],
    ),
    (
        "default not-ready toleration",
        [("node.kubernetes.io/not-ready", "", "NoExecute")],
        [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
        [],
    ),
]


@pytest.mark.parametrize("taints,tolerations,expected", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(taints, tolerations, expected):
    node = make_node("n1")
    for key, value, effect in taints:
        node.taint(key, effect, value)
    pod = make_pod("p")
    pod["spec"]["tolerations"] = tolerations
    status, result = run_filter([make_node("plain"), node], pod)
    assert reasons_per_node(result, 2) == [[], expected]
    assert result.feasible.tolist() == [True, not expected]
    assert all(code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for code, _, _ in result.failures)
    # PreFilter skips exactly when no node is rejected.
    assert status.is_skip() == (not expected)


def test_nodes_get_their_own_reasons():
    nodes = [
        make_node("a").taint("x", value="1"),
        make_node("b").taint("y", "NoExecute", "2"),
        make_node("c").taint("x", value="1"),
        make_node("d"),
        make_node("e").taint("z", value="3"),
    ]
    pod = make_pod("p").toleration("z", "Exists")
    status, result = run_filter(nodes, pod)
    assert status.is_success()
    assert result.feasible.tolist() == [False, False, False, True, True]
    by_reason = {reason: mask.tolist() for _, reason, mask in result.failures}
    assert by_reason == {
        "node(s) had untolerated taint {x: 1}": [True, False, True, False, False],
        "node(s) had untolerated taint {y: 2}": [False, True, False, False, False],
    }
    rej = [Rejection(TaintToleration.NAME, code, reason, mask) for code, reason, mask in result.failures]
    assert fit_error_message(Diagnosis(5, rejections=rej)) == (
        "0/5 nodes are available: 1 node(s) had untolerated taint {y: 2}, 2 node(s) had untolerated taint {x: 1}."
    )


def test_prefilter_skips_when_no_node_is_tainted():
    status, result = run_filter([make_node("a"), make_node("b").taint("soft", "PreferNoSchedule")], make_pod("p"))
    assert status.is_skip()
    assert result.feasible.tolist() == [True, True] and result.failures == []


def test_filter_without_prefilter_and_returned_mask_is_private():
    c = cache_with([make_node("a").taint("k"), make_node("b")])
    plugin, pinfo, snap = TaintToleration(), c.new_pod_info(make_pod("p")), c.snapshot()
    first = plugin.filter(CycleState(), pinfo, snap)
    assert first.feasible.tolist() == [False, True]
    first.feasible[:] = True  # a caller scribbling on its result must not change the memo
    assert plugin.filter(CycleState(), pinfo, snap).feasible.tolist() == [False, True]


def test_memo_follows_node_taint_updates():
    c = cache_with([make_node("a"), make_node("b")])
    plugin, pinfo = TaintToleration(), c.new_pod_info(make_pod("p"))
    assert plugin.pre_filter(CycleState(), pinfo, c.snapshot())[0].is_skip()
    c.update_node(make_node("b").taint("k", value="v"))
    state = CycleState()
    assert plugin.pre_filter(state, pinfo, c.snapshot())[0].is_success()
    result = plugin.filter(state, pinfo, c.snapshot())
    assert result.feasible.tolist() == [True, False]
    c.update_node(make_node("b"))
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [True, True]


def test_replicas_with_different_tolerations_do_not_share_a_verdict():
    c = cache_with([make_node("a").taint("k", value="v")])
    plugin, snap = TaintToleration(), c.snapshot()
    tolerant = c.new_pod_info(make_pod("t").toleration("k", "Equal", "v"))
    intolerant = c.new_pod_info(make_pod("i").toleration("k", "Equal", "w"))
    assert plugin.filter(CycleState(), tolerant, snap).feasible.tolist() == [True]
    assert plugin.filter(CycleState(), intolerant, snap).feasible.tolist() == [False]
    assert plugin.filter(CycleState(), tolerant, snap).feasible.tolist() == [True]


# ---- Score ---------------------------------------------------------------------------


def soft_nodes(*counts):
    nodes = []
    for i, n in enumerate(counts):
        node = make_node(f"n{i}")
        for j in range(n):
            node.taint(f"soft{j}", "PreferNoSchedule", "v")
        nodes.append(node)
    return nodes


SCORE_CASES = [
    # (id, PreferNoSchedule taints per node, pod tolerations, raw, normalized)
    ("upstream example", (0, 1, 2), [], [0, 1, 2], [100, 50, 0]),
    ("three levels truncate", (0, 1, 3), [], [0, 1, 3], [100, 67, 0]),
    (
        "tolerated by PreferNoSchedule toleration",
        (0, 1, 2),
        [tol("soft0", "Exists", "", "PreferNoSchedule")],
        [0, 0, 1],
        [100, 100, 0],
    ),
    ("tolerated by empty-effect toleration", (0, 1, 2), [tol("soft1", "Equal", "v")], [0, 1, 1], [100, 0, 0]),
    (
        "NoSchedule toleration does not count",
        (0, 1, 2),
        [tol("soft0", "Exists", "", "NoSchedule")],
        [0, 1, 2],
        [100, 50, 0],
    ),
    ("wildcard tolerates all", (0, 1, 2), [tol("", "Exists")], [0, 0, 0], [100, 100, 100]),
]


@pytest.mark.parametrize(
    "counts,tolerations,raw,normalized", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score(counts, tolerations, raw, normalized):
    pod = make_pod("p")
    pod["spec"]["tolerations"] = tolerations
    assert run_score(soft_nodes(*counts), pod) == (raw, normalized)


def test_hard_taints_do_not_score():
    nodes = soft_nodes(1, 0)
    nodes[1].taint("hard", "NoSchedule")
    assert run_score(nodes, make_pod("p")) == ([1, 0], [0, 100])


def test_score_normalizes_over_candidates_only():
    assert run_score(soft_nodes(4, 2, 1, 0), make_pod("p"), candidates=[1, 2, 3]) == ([2, 1, 0], [0, 50, 100])


def test_prescore_skips_without_prefer_no_schedule_taints():
    nodes = [make_node("a").taint("hard", "NoSchedule"), make_node("b")]
    assert run_score(nodes, make_pod("p")) is None


# ---- construction --------------------------------------------------------------------


def test_bad_args():
    with pytest.raises(ValueError, match="TaintToleration takes no arguments"):
        TaintToleration({"foo": 1})


def test_identity():
    p = TaintToleration()
    assert p.NAME == "TaintToleration"
    assert p.EVENTS == {ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT}
