"""PodTopologySpread: skew filter, minDomains, missing keys, inclusion policies, scoring,
normalisation, default constraints, arguments, queueing hint, and a scheduler run."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import ClusterEvent, CycleState, PluginError, PluginSpec, ProfileConfig, Registry
from cluster.scheduler.plugins import DEFAULT_PLUGINS, default_registry
from cluster.scheduler.plugins.podtopologyspread import PodTopologySpread, assigned_pod_may_help
from cluster.scheduler.status import Code

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SKEW = "node(s) didn't match pod topology spread constraints"
MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
WEB = {"matchLabels": {"app": "web"}}
_seq = itertools.count()


def node(name, zone=None, host=True, taint=None, **labels):
    n = make_node(name)
    if host:
        n.label(HOST, name)
    if zone is not None:
        n.label(ZONE, zone)
    for k, v in labels.items():
        n.label(k, v)
    if taint:
        n.taint("dedicated", taint, "x")
    return n


def placed(node_name, count=1, ns="default", terminating=False, **labels):
    labels = labels or {"app": "web"}
    out = []
    for _ in range(count):
        p = make_pod(f"placed{next(_seq)}", ns).node(node_name)
        for k, v in labels.items():
            p.label(k, v)
        out.append(p.terminating() if terminating else p)
    return out


def web(name="p", **labels):
    p = make_pod(name).label("app", "web")
    for k, v in labels.items():
        p.label(k, v)
    return p


def rs_owned(pod, kind="ReplicaSet", controller=True):
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": kind, "name": "o", "uid": "o-uid", "controller": controller}
    ]
    return pod


def setup(nodes, pods, pod):
    c = Cache()
    for n in nodes:
        c.add_node(n)
    for group in pods:
        for p in group:
            c.add_pod(p)
    return c, c.new_pod_info(pod), c.snapshot()


def run_filter(nodes, pods, pod, args=None, plugin=None):
    c, pinfo, snap = setup(nodes, pods, pod)
    pl = plugin or PodTopologySpread(args)
    state = CycleState()
    status, result = pl.pre_filter(state, pinfo, snap)
    assert result is None
    if status.is_skip():
        return status, None, snap
    assert status.is_success()
    return status, pl.filter(state, pinfo, snap), snap


def verdicts(result, snap) -> dict:
    """Node name -> "ok" or its one reason; checks the codes and the feasible mask agree."""
    out = {}
    for i in range(snap.num_nodes):
        hits = [(code, reason) for code, reason, mask in result.failures if mask[i]]
        assert len(hits) <= 1, hits
        assert bool(result.feasible[i]) == (not hits)
        for code, reason in hits:
            assert code == {SKEW: Code.UNSCHEDULABLE, MISSING: Code.UNSCHEDULABLE_AND_UNRESOLVABLE}[reason]
        out[snap.node_name(i)] = hits[0][1] if hits else "ok"
    return out


def zones_ab():
    return [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")]


def pooled():
    return [node("a1", "a", pool="x"), node("b1", "b", pool="x"), node("c1", "c")]


def affinity(*terms):
    return web().node_affinity(*terms).spread(ZONE, selector=WEB)


A_SKEWED = {"a1": SKEW, "a2": SKEW, "b1": "ok", "b2": "ok"}
ALL_OK4 = {"a1": "ok", "a2": "ok", "b1": "ok", "b2": "ok"}
ALL_OK3 = {"a1": "ok", "b1": "ok", "c1": "ok"}
AB_SKEWED3 = {"a1": SKEW, "b1": SKEW, "c1": "ok"}

FILTER_CASES = [
    # (id, nodes, placed pods, incoming pod, expected verdict per node)
    ("no matching pods: 0+1-0 fits everywhere", zones_ab(), [], web().spread(ZONE), ALL_OK4),
    ("zone a 2, b 0: 2+1-0 > 1", zones_ab(), [placed("a1", 2)], web().spread(ZONE), A_SKEWED),
    ("zone a 2, b 1, maxSkew 1: 2+1-1 > 1", zones_ab(), [placed("a1", 2), placed("b2")], web().spread(ZONE), A_SKEWED),
    (
        "zone a 2, b 1, maxSkew 2: 2+1-1 <= 2",
        zones_ab(),
        [placed("a1", 2), placed("b2")],
        web().spread(ZONE, max_skew=2),
        ALL_OK4,
    ),
    (
        "a pod not matching its own selector adds 0",
        zones_ab(),
        [placed("a1")],
        make_pod("p").label("app", "other").spread(ZONE, selector=WEB),
        ALL_OK4,
    ),
    ("the same count with self-match fails", zones_ab(), [placed("a1")], web().spread(ZONE), A_SKEWED),
    (
        "pods of another namespace are not counted",
        zones_ab(),
        [placed("a1", 3, ns="other")],
        web().spread(ZONE),
        ALL_OK4,
    ),
    ("terminating pods are not counted", zones_ab(), [placed("a1", 3, terminating=True)], web().spread(ZONE), ALL_OK4),
    (
        "pods not matching the selector are not counted",
        zones_ab(),
        [placed("a1", 3, app="db")],
        web().spread(ZONE),
        ALL_OK4,
    ),
    (
        "a node without the key: missing required label",
        zones_ab() + [node("x1")],
        [placed("a1", 2)],
        web().spread(ZONE),
        {**A_SKEWED, "x1": MISSING},
    ),
    (
        "pods on a node without the key are not counted",
        zones_ab() + [node("x1")],
        [placed("x1", 3)],
        web().spread(ZONE),
        {**ALL_OK4, "x1": MISSING},
    ),
    (
        "minDomains 3 > 2 domains: minimum taken as 0",
        zones_ab(),
        [placed("a1"), placed("b1")],
        web().spread(ZONE, minDomains=3),
        {"a1": SKEW, "a2": SKEW, "b1": SKEW, "b2": SKEW},
    ),
    (
        "minDomains 2 met: minimum 1",
        zones_ab(),
        [placed("a1"), placed("b1")],
        web().spread(ZONE, minDomains=2),
        ALL_OK4,
    ),
    (
        "hostname: every node is a domain",
        [node("h1"), node("h2"), node("h3")],
        [placed("h1")],
        web().spread(HOST),
        {"h1": SKEW, "h2": "ok", "h3": "ok"},
    ),
    (
        "hostname with minDomains above the node count",
        [node("h1"), node("h2")],
        [placed("h1"), placed("h2")],
        web().spread(HOST, minDomains=3),
        {"h1": SKEW, "h2": SKEW},
    ),
    (
        "the first failing constraint gives the reason",
        [node("a1", "a"), node("a3", "a", host=False), node("b1", "b"), node("x1")],
        [placed("a1", 2)],
        web().spread(ZONE).spread(HOST),
        {"a1": SKEW, "a3": SKEW, "b1": "ok", "x1": MISSING},
    ),
    (
        "a key only a later constraint needs",
        [node("a1", "a"), node("a3", "a", host=False), node("b1", "b")],
        [],
        web().spread(ZONE, max_skew=5).spread(HOST),
        {"a1": "ok", "a3": MISSING, "b1": "ok"},
    ),
    (
        "nodes lacking another constraint's key do not count",
        [node("a1", "a"), node("a3", "a", host=False), node("b1", "b")],
        [placed("a3", 3)],
        web().spread(ZONE).spread(HOST, max_skew=5),
        {"a1": "ok", "a3": MISSING, "b1": "ok"},
    ),
    (
        "nodeAffinityPolicy Honor (default): zone c is not eligible",
        pooled(),
        [placed("a1"), placed("b1")],
        web().node_selector(pool="x").spread(ZONE),
        ALL_OK3,
    ),
    (
        "nodeAffinityPolicy Ignore: zone c sets the minimum to 0",
        pooled(),
        [placed("a1"), placed("b1")],
        web().node_selector(pool="x").spread(ZONE, nodeAffinityPolicy="Ignore"),
        AB_SKEWED3,
    ),
    (
        "required node affinity In is honoured",
        pooled(),
        [placed("a1"), placed("b1")],
        affinity({"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a", "b"]}]}),
        ALL_OK3,
    ),
    # Eligible a1 and c1: minimum 0 (zone c); zone b's pod is not counted.
    (
        "required node affinity NotIn b",
        pooled(),
        [placed("a1"), placed("b1")],
        affinity({"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["b"]}]}),
        {"a1": SKEW, "b1": "ok", "c1": "ok"},
    ),
    (
        "required node affinity by matchFields is honoured",
        pooled(),
        [placed("a1"), placed("b1")],
        affinity(
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a1"]}], "matchExpressions": []},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b1"]}]},
        ),
        ALL_OK3,
    ),
    (
        "nodeTaintsPolicy Ignore (default): a tainted zone counts",
        [*pooled()[:2], node("c1", "c", taint="NoSchedule")],
        [placed("a1"), placed("b1")],
        web().spread(ZONE),
        AB_SKEWED3,
    ),
    (
        "nodeTaintsPolicy Honor: an untolerated NoSchedule zone does not count",
        [*pooled()[:2], node("c1", "c", taint="NoSchedule")],
        [placed("a1"), placed("b1")],
        web().spread(ZONE, nodeTaintsPolicy="Honor"),
        ALL_OK3,
    ),
    (
        "nodeTaintsPolicy Honor: NoExecute is honoured too",
        [*pooled()[:2], node("c1", "c", taint="NoExecute")],
        [placed("a1"), placed("b1")],
        web().spread(ZONE, nodeTaintsPolicy="Honor"),
        ALL_OK3,
    ),
    (
        "nodeTaintsPolicy Honor: a tolerated taint counts",
        [*pooled()[:2], node("c1", "c", taint="NoSchedule")],
        [placed("a1"), placed("b1")],
        web().toleration("dedicated", "Equal", "x", "NoSchedule").spread(ZONE, nodeTaintsPolicy="Honor"),
        AB_SKEWED3,
    ),
    (
        "nodeTaintsPolicy Honor: PreferNoSchedule does not exclude",
        [*pooled()[:2], node("c1", "c", taint="PreferNoSchedule")],
        [placed("a1"), placed("b1")],
        web().spread(ZONE, nodeTaintsPolicy="Honor"),
        AB_SKEWED3,
    ),
    (
        "matchLabelKeys: another revision is not counted",
        zones_ab(),
        [placed("a1", 2, app="web", rev="1")],
        web(rev="2").spread(ZONE, selector=WEB, matchLabelKeys=["rev"]),
        ALL_OK4,
    ),
    (
        "matchLabelKeys: the same revision is counted",
        zones_ab(),
        [placed("a1", 2, app="web", rev="2")],
        web(rev="2").spread(ZONE, selector=WEB, matchLabelKeys=["rev"]),
        A_SKEWED,
    ),
    (
        "without matchLabelKeys every revision is counted",
        zones_ab(),
        [placed("a1", 2, app="web", rev="1")],
        web(rev="2").spread(ZONE, selector=WEB),
        A_SKEWED,
    ),
    ("an empty selector counts nothing", zones_ab(), [placed("a1", 3)], web().spread(ZONE, selector={}), ALL_OK4),
]


@pytest.mark.parametrize("nodes,pods,pod,expected", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(nodes, pods, pod, expected):
    _, result, snap = run_filter(nodes, pods, pod)
    assert verdicts(result, snap) == expected


def test_null_selector_matches_nothing_not_even_the_pod():
    pod = web().spread(ZONE)
    pod["spec"]["topologySpreadConstraints"][0]["labelSelector"] = None
    _, result, snap = run_filter(zones_ab(), [placed("a1", 3)], pod)
    assert verdicts(result, snap) == ALL_OK4
    pod2 = web().spread(ZONE, matchLabelKeys=["app"])  # matchLabelKeys cannot revive a null selector
    pod2["spec"]["topologySpreadConstraints"][0]["labelSelector"] = None
    _, result, snap = run_filter(zones_ab(), [placed("a1", 3)], pod2)
    assert verdicts(result, snap) == ALL_OK4


def test_reason_strings_and_codes_exactly():
    _, result, _ = run_filter([node("a1", "a"), node("b1", "b"), node("x1")], [placed("a1", 2)], web().spread(ZONE))
    assert [(code, reason, mask.tolist()) for code, reason, mask in result.failures] == [
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISSING, [False, False, True]),
        (Code.UNSCHEDULABLE, SKEW, [True, False, False]),
    ]
    assert result.feasible.tolist() == [False, True, False]


@pytest.mark.parametrize(
    "pod",
    [
        make_pod("plain"),
        web().spread(ZONE, when="ScheduleAnyway"),
        rs_owned(web()),  # system defaults are ScheduleAnyway only
    ],
    ids=["no constraints", "only ScheduleAnyway", "system defaults"],
)
def test_pre_filter_skips_without_hard_constraints(pod):
    status, result, _ = run_filter(zones_ab(), [], pod)
    assert status.code == Code.SKIP and result is None


def test_filter_without_pre_filter_is_an_error():
    _, pinfo, snap = setup(zones_ab(), [], web().spread(ZONE))
    with pytest.raises(PluginError):
        PodTopologySpread().filter(CycleState(), pinfo, snap)


def test_malformed_selector_is_a_plugin_error():
    pod = web().spread(ZONE, selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]})
    _, pinfo, snap = setup(zones_ab(), [], pod)
    with pytest.raises(PluginError, match="topology spread constraints"):
        PodTopologySpread().pre_filter(CycleState(), pinfo, snap)


# ---- memoised eligibility -------------------------------------------------------------


def test_eligibility_follows_node_label_changes():
    pl = PodTopologySpread()
    c, pinfo, _ = setup(pooled(), [placed("a1"), placed("b1")], web().node_selector(pool="x").spread(ZONE))
    state = CycleState()
    pl.pre_filter(state, pinfo, c.snapshot())
    assert verdicts(pl.filter(state, pinfo, c.snapshot()), c.snapshot()) == ALL_OK3
    c.update_node(node("c1", "c", pool="x"))  # zone c becomes eligible, with 0 pods
    state = CycleState()
    pl.pre_filter(state, pinfo, c.snapshot())
    assert verdicts(pl.filter(state, pinfo, c.snapshot()), c.snapshot()) == AB_SKEWED3


def test_eligibility_follows_taint_changes():
    pl = PodTopologySpread()
    pod = web().spread(ZONE, nodeTaintsPolicy="Honor")
    c, pinfo, snap = setup(pooled(), [placed("a1"), placed("b1")], pod)
    state = CycleState()
    pl.pre_filter(state, pinfo, snap)
    assert verdicts(pl.filter(state, pinfo, snap), snap) == AB_SKEWED3
    c.update_node(node("c1", "c", taint="NoSchedule"))
    state = CycleState()
    pl.pre_filter(state, pinfo, c.snapshot())
    assert verdicts(pl.filter(state, pinfo, c.snapshot()), c.snapshot()) == ALL_OK3


def test_one_plugin_over_two_caches_does_not_mix_them():
    pl = PodTopologySpread()
    pod = web().node_selector(pool="x").spread(ZONE)
    _, result, snap = run_filter(pooled(), [placed("a1"), placed("b1")], pod, plugin=pl)
    assert verdicts(result, snap) == ALL_OK3
    # Same node names and node epoch, but here zone c carries the pool label.
    nodes = [node("a1", "a", pool="x"), node("b1", "b", pool="x"), node("c1", "c", pool="x")]
    _, result, snap = run_filter(nodes, [placed("a1"), placed("b1")], pod, plugin=pl)
    assert verdicts(result, snap) == AB_SKEWED3


# ---- Score ----------------------------------------------------------------------------


def run_score(nodes, pods, pod, candidates=None, args=None):
    _, pinfo, snap = setup(nodes, pods, pod)
    names = [snap.node_name(i) for i in range(snap.num_nodes)]
    cand = np.arange(snap.num_nodes) if candidates is None else np.array([names.index(n) for n in candidates])
    pl = PodTopologySpread(args)
    state = CycleState()
    status = pl.pre_score(state, pinfo, snap, cand)
    if status.is_skip():
        return None, None
    assert status.is_success()
    raw = pl.score(state, pinfo, snap, cand)
    scores = raw.copy()
    pl.normalize(state, pinfo, scores)
    return raw.tolist(), scores.tolist()


def soft(key, max_skew=1, **fields):
    return web().spread(key, max_skew=max_skew, when="ScheduleAnyway", selector=WEB, **fields)


SCORE_CASES = [
    # (id, nodes, placed, pod, candidates (None: all), raw scores, normalized scores)
    # 2 zones: weight log(4); a: 2*1.386 = 2.77 -> 3, b: 1.386 -> 1; 100*(3+1-s)/3.
    (
        "zone",
        [node("a1", "a"), node("a2", "a"), node("b1", "b")],
        [placed("a1", 2), placed("b1")],
        soft(ZONE),
        None,
        [3, 3, 1],
        [33, 33, 100],
    ),
    # Hostname: weight log(3 candidates + 2); counts 2, 0, 1.
    (
        "hostname",
        [node("h1"), node("h2"), node("h3")],
        [placed("h1", 2), placed("h3")],
        soft(HOST),
        None,
        [3, 0, 2],
        [0, 100, 33],
    ),
    (
        "maxSkew 3 adds 2 to every raw score",
        [node("h1"), node("h2"), node("h3")],
        [placed("h1", 2), placed("h3")],
        soft(HOST, max_skew=3),
        None,
        [5, 2, 4],
        [40, 100, 60],
    ),
    # Hostname weight from the candidates: log(2+2), 3*1.386 = 4.16 -> 4 (log(4+2) would give 5).
    (
        "hostname domains counted among candidates",
        [node("h1"), node("h2"), node("h3"), node("h4")],
        [placed("h1", 3)],
        soft(HOST),
        ["h1", "h2"],
        [4, 0],
        [0, 100],
    ),
    (
        "a node without the key is ignored: 0",
        [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("x1")],
        [placed("a1", 2), placed("b1"), placed("x1", 5)],
        soft(ZONE),
        None,
        [3, 3, 1, 0],
        [33, 33, 100, 0],
    ),
    (
        "no matching pods: every kept node 100",
        [node("a1", "a"), node("b1", "b"), node("x1")],
        [],
        soft(ZONE),
        None,
        [0, 0, 0],
        [100, 100, 0],
    ),
    # Domain count from the candidates only: log(2+2): 3*1.386 = 4.16 -> 4 (log(5) would give 5).
    (
        "domains counted among candidates",
        [node("a1", "a"), node("b1", "b"), node("c1", "c")],
        [placed("a1", 3), placed("c1", 3)],
        soft(ZONE),
        ["a1", "b1"],
        [4, 0],
        [0, 100],
    ),
    (
        "pods counted on every node of the domain",
        [node("a1", "a"), node("a2", "a"), node("b1", "b")],
        [placed("a2", 2)],
        soft(ZONE),
        ["a1", "b1"],
        [3, 0],
        [0, 100],
    ),
    (
        "nodeTaintsPolicy Honor: pods on a tainted node do not count",
        [node("a1", "a"), node("a2", "a", taint="NoSchedule"), node("b1", "b")],
        [placed("a2", 2)],
        soft(ZONE, nodeTaintsPolicy="Honor"),
        ["a1", "b1"],
        [0, 0],
        [100, 100],
    ),
    (
        "nodeTaintsPolicy Ignore: they do",
        [node("a1", "a"), node("a2", "a", taint="NoSchedule"), node("b1", "b")],
        [placed("a2", 2)],
        soft(ZONE),
        ["a1", "b1"],
        [3, 0],
        [0, 100],
    ),
    (
        "nodeAffinityPolicy Honor: pods outside the pod's node selector do not count",
        [node("a1", "a", pool="x"), node("a2", "a"), node("b1", "b", pool="x")],
        [placed("a2", 2)],
        web().node_selector(pool="x").spread(ZONE, when="ScheduleAnyway", selector=WEB),
        ["a1", "b1"],
        [0, 0],
        [100, 100],
    ),
    # Two constraints: zone (log 4) + hostname (log 5): a1 2*1.386+2*1.609 = 5.99 -> 6,
    # a2 2.77 -> 3, b1 0.
    (
        "zone and hostname add up",
        [node("a1", "a"), node("a2", "a"), node("b1", "b")],
        [placed("a1", 2)],
        soft(ZONE).spread(HOST, when="ScheduleAnyway", selector=WEB),
        None,
        [6, 3, 0],
        [0, 50, 100],
    ),
]


@pytest.mark.parametrize(
    "nodes,pods,pod,candidates,raw,normalized", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score(nodes, pods, pod, candidates, raw, normalized):
    assert run_score(nodes, pods, pod, candidates) == (raw, normalized)


def default_nodes():
    return [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("x1")]


def test_system_defaults_spread_replicaset_pods_and_keep_zoneless_nodes():
    # hostname: weight log(4+2), maxSkew 3; zone: a, b and the empty value of x1 make 3
    # domains, weight log(5), maxSkew 5. a1: 2*1.792+2 + 2*1.609+4 = 12.80 -> 13;
    # a2: 2 + 7.22 -> 9; b1: 2 + 4 = 6, its pod being of the other revision (the
    # ReplicaSet's selector holds pod-template-hash); x1 (no zone): 2. 100*(13+2-s)/13.
    pods = [
        placed("a1", 2, app="web", **{"pod-template-hash": "new"}),
        placed("b1", app="web", **{"pod-template-hash": "old"}),
    ]
    pod = rs_owned(web(**{"pod-template-hash": "new"}))
    assert run_score(default_nodes(), pods, pod) == ([13, 9, 6, 2], [15, 46, 69, 100])


def test_own_constraints_replace_defaults_and_ignore_zoneless_nodes():
    pods = [placed("a1", 2), placed("b1")]
    pod = rs_owned(soft(ZONE, max_skew=5).spread(HOST, max_skew=3, when="ScheduleAnyway", selector=WEB))
    raw, normalized = run_score(default_nodes(), pods, pod)
    # a1: 2*log(4)+4 + 2*log(5)+2 = 11.99; a2: 6.77 + 2; b1: 5.39 + 3.61. 100*(12+9-s)/12.
    assert (raw, normalized) == ([12, 9, 9, 0], [75, 100, 100, 0])


@pytest.mark.parametrize(
    "pod",
    [
        web(),
        rs_owned(web(), controller=False),
        rs_owned(web(), kind="Job"),
        rs_owned(make_pod("p").label("controller-revision-hash", "h")),
        web().spread(ZONE),  # only DoNotSchedule
    ],
    ids=["no owner", "owner not controller", "Job controller", "only controller-added labels", "only hard"],
)
def test_pre_score_skips(pod):
    assert run_score(default_nodes(), [placed("a1")], pod) == (None, None)


@pytest.mark.parametrize("kind", ["ReplicaSet", "StatefulSet", "ReplicationController"])
def test_default_selector_drops_controller_added_labels(kind):
    pod = rs_owned(web(**{"controller-revision-hash": "r2", "statefulset.kubernetes.io/pod-name": "web-3"}), kind)
    pods = [
        placed("a1", 2, app="web", **{"controller-revision-hash": "r1", "statefulset.kubernetes.io/pod-name": "web-0"})
    ]
    # Both pods count (selector app=web): a1 2*log(4)+2 + 2*log(4)+4 = 11.5, b1 2 + 4.
    # Were the hash or pod-name labels kept, nothing would match: [6, 6], [100, 100].
    assert run_score([node("a1", "a"), node("b1", "b")], pods, pod) == ([12, 6], [50, 100])


def test_list_defaulting_with_hard_default():
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
    }
    _, result, snap = run_filter(zones_ab(), [placed("a1", 2)], rs_owned(web()), args)
    assert verdicts(result, snap) == A_SKEWED
    status, result, _ = run_filter(zones_ab(), [placed("a1", 2)], web(), args)  # no controller
    assert status.is_skip()
    assert run_score(zones_ab(), [placed("a1", 2)], rs_owned(web()), args=args) == (None, None)


def test_list_defaulting_without_constraints_spreads_nothing():
    assert run_score(default_nodes(), [placed("a1")], rs_owned(web()), args={"defaultingType": "List"}) == (None, None)


def test_pre_score_skips_on_an_empty_cluster():
    pl = PodTopologySpread()
    c = Cache()
    pinfo = c.new_pod_info(soft(ZONE))
    assert pl.pre_score(CycleState(), pinfo, c.snapshot(), np.arange(0)).is_skip()


def test_score_without_pre_score_is_an_error():
    _, pinfo, snap = setup(zones_ab(), [], soft(ZONE))
    with pytest.raises(PluginError):
        PodTopologySpread().score(CycleState(), pinfo, snap, np.arange(4))


# ---- arguments ------------------------------------------------------------------------

GOOD = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}

BAD_ARGS = [
    ({"bogus": 1}, r"unknown arguments \['bogus'\]"),
    ({"defaultingType": "Sometimes"}, "defaultingType: Unsupported value"),
    ({"defaultConstraints": [GOOD]}, "defaultingType: Invalid value: 'System'"),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "maxSkew": 0}]},
        r"defaultConstraints\[0\].maxSkew: Invalid value: 0",
    ),
    ({"defaultingType": "List", "defaultConstraints": [{**GOOD, "maxSkew": "1"}]}, r"defaultConstraints\[0\].maxSkew"),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "topologyKey": ""}]},
        r"defaultConstraints\[0\].topologyKey: Required value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "topologyKey": "bad key!"}]},
        r"defaultConstraints\[0\].topologyKey: Invalid value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "whenUnsatisfiable": "Sometimes"}]},
        r"defaultConstraints\[0\].whenUnsatisfiable: Unsupported value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{k: v for k, v in GOOD.items() if k != "whenUnsatisfiable"}]},
        r"defaultConstraints\[0\].whenUnsatisfiable: Required value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "labelSelector": {}}]},
        r"defaultConstraints\[0\].labelSelector: Forbidden",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [GOOD, {**GOOD, "maxSkew": 2}]},
        r"defaultConstraints\[1\]: Duplicate value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "minDomains": 0}]},
        r"defaultConstraints\[0\].minDomains: Invalid value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "nodeTaintsPolicy": "Maybe"}]},
        r"defaultConstraints\[0\].nodeTaintsPolicy: Unsupported value",
    ),
    (
        {"defaultingType": "List", "defaultConstraints": [{**GOOD, "colour": "red"}]},
        r"defaultConstraints\[0\]: unknown fields \['colour'\]",
    ),
    ({"defaultingType": "List", "defaultConstraints": ["zone"]}, r"defaultConstraints\[0\]: must be a map"),
]


@pytest.mark.parametrize("args,match", BAD_ARGS, ids=[m for _, m in BAD_ARGS])
def test_bad_args(args, match):
    with pytest.raises(ValueError, match=match):
        PodTopologySpread(args)


def test_good_args():
    assert PodTopologySpread().system_defaulted
    assert [(c.topology_key, c.max_skew, c.hard) for c in PodTopologySpread().default_constraints] == [
        (HOST, 3, False),
        (ZONE, 5, False),
    ]
    pl = PodTopologySpread(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                GOOD,
                {**GOOD, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2, "nodeTaintsPolicy": "Honor"},
            ],
        }
    )
    assert not pl.system_defaulted
    assert [(c.hard, c.min_domains, c.honor_taints) for c in pl.default_constraints] == [
        (True, 1, False),
        (False, 2, True),
    ]


def test_events():
    assert PodTopologySpread.EVENTS == {
        ClusterEvent.ASSIGNED_POD_ADD,
        ClusterEvent.ASSIGNED_POD_UPDATE,
        ClusterEvent.ASSIGNED_POD_DELETE,
        ClusterEvent.NODE_ADD,
        ClusterEvent.NODE_DELETE,
        ClusterEvent.NODE_LABEL,
        ClusterEvent.NODE_TAINT,
    }


# ---- queueing hint --------------------------------------------------------------------

HINT_CASES = [
    ("matching pod in the namespace", web().spread(ZONE), make_pod("a").label("app", "web"), True),
    ("another namespace", web().spread(ZONE), make_pod("a", "other").label("app", "web"), False),
    ("not matching", web().spread(ZONE), make_pod("a").label("app", "db"), False),
    (
        "only ScheduleAnyway constraints",
        web().spread(ZONE, when="ScheduleAnyway"),
        make_pod("a").label("app", "web"),
        False,
    ),
    ("no constraints", web(), make_pod("a").label("app", "web"), False),
    (
        "matchLabelKeys: other revision",
        web(rev="2").spread(ZONE, selector=WEB, matchLabelKeys=["rev"]),
        make_pod("a").label("app", "web").label("rev", "1"),
        False,
    ),
    (
        "matchLabelKeys: same revision",
        web(rev="2").spread(ZONE, selector=WEB, matchLabelKeys=["rev"]),
        make_pod("a").label("app", "web").label("rev", "2"),
        True,
    ),
    (
        "second constraint matches",
        web().spread(ZONE, selector={"matchLabels": {"x": "y"}}).spread(HOST, selector=WEB),
        make_pod("a").label("app", "web"),
        True,
    ),
]


@pytest.mark.parametrize("pending,assigned,expected", [c[1:] for c in HINT_CASES], ids=[c[0] for c in HINT_CASES])
def test_assigned_pod_may_help(pending, assigned, expected):
    c = Cache()
    assert assigned_pod_may_help(c.new_pod_info(pending), c.new_pod_info(assigned.node("n1"))) is expected


def test_assigned_pod_may_help_through_hard_default_constraints():
    c = Cache()
    pending = c.new_pod_info(rs_owned(web()))
    match, other = c.new_pod_info(make_pod("a").label("app", "web")), c.new_pod_info(make_pod("b").label("app", "db"))
    pl = PodTopologySpread({"defaultingType": "List", "defaultConstraints": [GOOD]})
    assert pl.assigned_pod_may_help(pending, match) and not pl.assigned_pod_may_help(pending, other)
    assert not assigned_pod_may_help(pending, match)  # the module function sees only the pod's own
    assert not PodTopologySpread().assigned_pod_may_help(pending, match)  # system defaults never reject


# ---- through the scheduler ------------------------------------------------------------


def spread_scheduler(nodes):
    registry = (
        None if PodTopologySpread.NAME in default_registry() else Registry({PodTopologySpread.NAME: PodTopologySpread})
    )
    plugins = tuple(p for p in DEFAULT_PLUGINS if p.name != PodTopologySpread.NAME) + (
        PluginSpec(PodTopologySpread.NAME, weight=2),
    )
    return make_scheduler(nodes, registry=registry, profiles=(ProfileConfig(plugins=plugins),))


def test_scheduler_spreads_evenly_over_zones():
    nodes = [node(f"{z}{i}", z) for z in "abc" for i in range(2)]
    s = spread_scheduler(nodes)
    for i in range(6):
        s.on_pod("ADDED", web(f"w{i}").spread(ZONE), 0.0)
    out = s.schedule(1.0)
    zones = sorted(b[3][0] for b in out.binds)
    assert zones == ["a", "a", "b", "b", "c", "c"]


def test_scheduler_failure_message():
    s = spread_scheduler([node("a1", "a"), node("x1")])
    s.on_pod("ADDED", web().spread(ZONE, minDomains=2), 0.0)
    s.on_pod("ADDED", placed("a1")[0], 0.0)
    out = s.schedule(1.0)
    assert out.binds == []
    assert out.events[0]["message"] == (
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) didn't match pod topology spread constraints (missing required label)."
        " preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod,"
        " 1 Preemption is not helpful for scheduling."
    )


@pytest.mark.parametrize("seed", range(12))
def test_where_every_node_has_every_key_the_unmasked_scores_are_the_masked_ones(seed):
    """The PreScore shortcut for clusters whose nodes all carry every key gives exactly
    the general computation's raw and normalized scores (random clusters and pods)."""
    from cluster.scheduler.plugins import podtopologyspread_score as score

    rng = np.random.default_rng(seed)
    nodes = [node(f"n{i}", f"z{rng.integers(4)}") for i in range(int(rng.integers(3, 30)))]
    pods = [placed(f"n{rng.integers(len(nodes))}", int(rng.integers(1, 4))) for _ in range(int(rng.integers(0, 40)))]
    pods += [placed(f"n{rng.integers(len(nodes))}", terminating=True)]
    pod = [rs_owned(web()), soft(ZONE, max_skew=2).spread(HOST, max_skew=3, when="ScheduleAnyway", selector=WEB)][
        seed % 2
    ]
    _, pinfo, snap = setup(nodes, pods, pod)
    cand = np.sort(rng.choice(snap.num_nodes, int(rng.integers(1, snap.num_nodes + 1)), replace=False))
    pl = PodTopologySpread(None)
    constraints, explicit = pl.constraints(pinfo)
    soft_ones = [c for c in constraints if not c.hard]
    require_all = explicit or not pl.system_defaulted
    fast, _ = score._scores(snap, pinfo, soft_ones, cand, require_all, pl.eligibility, {}, everywhere=True)
    masked, ignored = score._scores(snap, pinfo, soft_ones, cand, require_all, pl.eligibility, {}, everywhere=False)
    assert fast.tolist() == masked.tolist() and not ignored.any()
    a, b = fast.copy(), masked.copy()
    score.normalize_spread(a, None)
    score.normalize_spread(b, ignored)
    assert a.tolist() == b.tolist()
    assert score.soft_scores(snap, pinfo, soft_ones, cand, require_all, pl.eligibility, {})[1] is None


@pytest.mark.parametrize("seed", range(8))
def test_counting_over_every_node_without_a_mask_gives_the_masked_counts(seed):
    """Where a constraint's eligible nodes are every node, the domain counts skip the mask:
    the same counts, for a workload counted per node and one counted by its pods' rows."""
    from cluster.scheduler.plugins.podtopologyspread_filter import Matched

    rng = np.random.default_rng(seed)
    n, domains = int(rng.integers(1, 50)), int(rng.integers(1, 6))
    ids = rng.integers(0, domains, n)
    every = np.ones(n, dtype=bool)
    per_node = Matched(rng.integers(0, 5, n).astype(np.int64), True)
    rows = Matched(rng.integers(0, n, int(rng.integers(0, 30))).astype(np.intp), False)
    for m in (per_node, rows):
        masked, unmasked = m.in_domains(ids, every, domains), m.in_domains(ids, None, domains)
        assert masked.dtype == unmasked.dtype and masked.tolist() == unmasked.tolist()
