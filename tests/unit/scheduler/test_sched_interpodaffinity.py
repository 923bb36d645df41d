"""InterPodAffinity: filter reasons and their order, first-pod exception, missing topology
keys, namespaces, scores with min-max normalisation, args, the queue's move helper."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.scheduler import PluginSpec, ProfileConfig, Registry
from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import ClusterEvent, CycleState, PluginError
from cluster.scheduler.plugins import DEFAULT_PLUGINS, default_registry
from cluster.scheduler.plugins.interpodaffinity import (
    ERR_AFFINITY,
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
    assigned_pod_may_help,
)
from cluster.scheduler.status import Code

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
AFF, ANTI, EXIST = ERR_AFFINITY, ERR_ANTI_AFFINITY, ERR_EXISTING_ANTI_AFFINITY
CODES = {AFF: Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ANTI: Code.UNSCHEDULABLE, EXIST: Code.UNSCHEDULABLE}


def app(v: str) -> dict:
    return {"matchLabels": {"app": v}}


def four_nodes():
    """n1, n2 in zone a; n3 in zone b; n4 has a hostname but no zone."""
    return [
        make_node("n1").label(ZONE, "a").label(HOST, "n1"),
        make_node("n2").label(ZONE, "a").label(HOST, "n2"),
        make_node("n3").label(ZONE, "b").label(HOST, "n3"),
        make_node("n4").label(HOST, "n4"),
    ]


def cache_with(bound_pods=(), nodes=None, ns_labels=None):
    c = Cache()
    for n in nodes if nodes is not None else four_nodes():
        c.add_node(n)
    for p in bound_pods:
        c.add_pod(p)
    c.namespace_labels.update(ns_labels or {})
    return c


def run_filter(pod, bound_pods=(), ns_labels=None, plugin=None, cache=None):
    """(PreFilter status, one reason per node ("" when feasible)). Skip means every node passes."""
    c = cache or cache_with(bound_pods, ns_labels=ns_labels)
    pl = plugin or InterPodAffinity()
    snap, state = c.snapshot(), CycleState()
    status, result = pl.pre_filter(state, c.new_pod_info(pod), snap)
    assert result is None
    if status.is_skip():
        return status, [""] * snap.num_nodes
    res = pl.filter(state, c.new_pod_info(pod), snap)
    out = []
    for i in range(snap.num_nodes):
        hits = [reason for _, reason, mask in res.failures if mask[i]]
        assert len(hits) <= 1, "a node is charged to one check only"
        assert bool(res.feasible[i]) == (not hits)
        out.append(hits[0] if hits else "")
    for code, reason, _ in res.failures:
        assert code == CODES[reason]
    return status, out


# ---- Filter ----------------------------------------------------------------------------


def pod_on(name, node, ns="default", **labels):
    p = make_pod(name, ns).node(node)
    for k, v in labels.items():
        p.label(k, v)
    return p


FILTER_CASES = [
    # (id, incoming pod, bound pods, namespace labels, reason per node n1..n4)
    (
        "affinity by zone; node without the key fails",
        make_pod("p").pod_affinity(ZONE, app("db")),
        [pod_on("db", "n1", app="db")],
        None,
        ["", "", AFF, AFF],
    ),
    (
        "affinity by hostname",
        make_pod("p").pod_affinity(HOST, app("db")),
        [pod_on("db", "n3", app="db")],
        None,
        [AFF, AFF, "", AFF],
    ),
    (
        "first pod: no match anywhere, matches its own term, needs the key",
        make_pod("p").label("app", "web").pod_affinity(ZONE, app("web")),
        [],
        None,
        ["", "", "", AFF],
    ),
    (
        "first pod exception needs the pod to match its own term",
        make_pod("p").label("app", "other").pod_affinity(ZONE, app("web")),
        [],
        None,
        [AFF, AFF, AFF, AFF],
    ),
    (
        "a match on a node lacking the key does not end the first-pod exception",
        make_pod("p").label("app", "web").pod_affinity(ZONE, app("web")),
        [pod_on("w", "n4", app="web")],
        None,
        ["", "", "", AFF],
    ),
    (
        "a match with the key ends the first-pod exception",
        make_pod("p").label("app", "web").pod_affinity(ZONE, app("web")),
        [pod_on("w", "n3", app="web")],
        None,
        [AFF, AFF, "", AFF],
    ),
    (
        "every affinity term must be matched by one same pod",
        make_pod("p").pod_affinity(ZONE, app("db")).pod_affinity(ZONE, {"matchLabels": {"tier": "cache"}}),
        [pod_on("a", "n1", app="db"), pod_on("b", "n2", tier="cache")],
        None,
        [AFF, AFF, AFF, AFF],
    ),
    (
        "a pod matching all terms satisfies each in its domain",
        make_pod("p").pod_affinity(ZONE, app("db")).pod_affinity(HOST, {"matchLabels": {"tier": "cache"}}),
        [pod_on("a", "n1", app="db"), pod_on("c", "n3", app="db", tier="cache")],
        None,
        [AFF, AFF, "", AFF],
    ),
    (
        "affinity ignores pods of other namespaces by default",
        make_pod("p").pod_affinity(ZONE, app("db")),
        [pod_on("db", "n1", "other", app="db")],
        None,
        [AFF, AFF, AFF, AFF],
    ),
    (
        "affinity with explicit namespaces",
        make_pod("p").pod_affinity(ZONE, app("db"), namespaces=["other"]),
        [pod_on("db", "n1", "other", app="db")],
        None,
        ["", "", AFF, AFF],
    ),
    (
        "affinity namespaceSelector uses namespace labels",
        make_pod("p").pod_affinity(ZONE, app("db"), namespaceSelector={"matchLabels": {"team": "x"}}),
        [pod_on("db1", "n1", "other", app="db"), pod_on("db2", "n3", "third", app="db")],
        {"other": {"team": "x"}, "third": {"team": "y"}},
        ["", "", AFF, AFF],
    ),
    (
        "empty namespaceSelector covers every namespace",
        make_pod("p").pod_affinity(HOST, app("db"), namespaceSelector={}),
        [pod_on("db", "n2", "third", app="db")],
        None,
        [AFF, "", AFF, AFF],
    ),
    (
        "anti-affinity by hostname",
        make_pod("p").pod_anti_affinity(HOST, app("web")),
        [pod_on("w", "n1", app="web")],
        None,
        [ANTI, "", "", ""],
    ),
    (
        "anti-affinity by zone; node without the key passes",
        make_pod("p").pod_anti_affinity(ZONE, app("web")),
        [pod_on("w", "n1", app="web")],
        None,
        [ANTI, ANTI, "", ""],
    ),
    (
        "anti-affinity ignores pods of other namespaces",
        make_pod("p").pod_anti_affinity(ZONE, app("web")),
        [pod_on("w", "n1", "other", app="web")],
        None,
        ["", "", "", ""],
    ),
    (
        "existing pod's anti-affinity by zone",
        make_pod("p").label("app", "web"),
        [pod_on("x", "n1").pod_anti_affinity(ZONE, app("web"))],
        None,
        [EXIST, EXIST, "", ""],
    ),
    (
        "existing anti-affinity counts each carrier's domain",
        make_pod("p").label("app", "web"),
        [pod_on("x", "n3").pod_anti_affinity(HOST, app("web")), pod_on("y", "n4").pod_anti_affinity(HOST, app("web"))],
        None,
        ["", "", EXIST, EXIST],
    ),
    (
        "existing anti-affinity in another namespace covers only its own namespace",
        make_pod("p").label("app", "web"),
        [pod_on("x", "n1", "other").pod_anti_affinity(ZONE, app("web"))],
        None,
        ["", "", "", ""],
    ),
    (
        "existing anti-affinity with a namespaceSelector matching the pod's namespace",
        make_pod("p").label("app", "web"),
        [
            pod_on("x", "n1", "other").pod_anti_affinity(
                ZONE, app("web"), namespaceSelector={"matchLabels": {"env": "prod"}}
            )
        ],
        {"default": {"env": "prod"}},
        [EXIST, EXIST, "", ""],
    ),
    (
        "existing anti-affinity with a selector without =/in requirements",
        make_pod("p").label("app", "web"),
        [pod_on("x", "n3").pod_anti_affinity(HOST, {"matchExpressions": [{"key": "app", "operator": "Exists"}]})],
        None,
        ["", "", EXIST, ""],
    ),
    (
        "existing anti-affinity with an In selector",
        make_pod("p").label("app", "web"),
        [
            pod_on("x", "n2").pod_anti_affinity(
                HOST, {"matchExpressions": [{"key": "app", "operator": "In", "values": ["api", "web"]}]}
            )
        ],
        None,
        ["", EXIST, "", ""],
    ),
    (
        "each node is charged to the first failing check",
        make_pod("p").label("app", "me").pod_affinity(ZONE, app("db")).pod_anti_affinity(HOST, app("web")),
        [
            pod_on("db1", "n1", app="db"),
            pod_on("db3", "n3", app="db"),
            pod_on("w", "n1", app="web"),
            pod_on("x", "n1").pod_anti_affinity(HOST, app("me")),
            pod_on("y", "n2").pod_anti_affinity(HOST, app("me")),
            pod_on("z", "n4").pod_anti_affinity(HOST, app("me")),
        ],
        None,
        [ANTI, EXIST, "", AFF],
    ),
]


@pytest.mark.parametrize(
    "pod,bound_pods,ns_labels,expected", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filter(pod, bound_pods, ns_labels, expected):
    status, reasons = run_filter(pod, bound_pods, ns_labels)
    assert reasons == expected


SKIP_CASES = [
    # (id, incoming pod, bound pods, skipped)
    ("no terms, no placed anti-affinity", make_pod("p").label("app", "web"), [pod_on("w", "n1", app="web")], True),
    (
        "no terms, placed anti-affinity does not cover the pod",
        make_pod("p").label("app", "api"),
        [pod_on("x", "n1").pod_anti_affinity(ZONE, app("web"))],
        True,
    ),
    (
        "no terms, placed anti-affinity only on a node lacking its key",
        make_pod("p").label("app", "web"),
        [pod_on("x", "n4").pod_anti_affinity(ZONE, app("web"))],
        True,
    ),
    ("preferred terms only", make_pod("p").pod_affinity(ZONE, app("db"), weight=5), [], True),
    (
        "no terms, placed anti-affinity covers the pod",
        make_pod("p").label("app", "web"),
        [pod_on("x", "n1").pod_anti_affinity(ZONE, app("web"))],
        False,
    ),
    ("required anti-affinity matching nothing", make_pod("p").pod_anti_affinity(ZONE, app("web")), [], False),
]


@pytest.mark.parametrize("pod,bound_pods,skipped", [c[1:] for c in SKIP_CASES], ids=[c[0] for c in SKIP_CASES])
def test_pre_filter_skip(pod, bound_pods, skipped):
    status, reasons = run_filter(pod, bound_pods)
    assert status.is_skip() == skipped
    assert status.is_skip() or status.is_success()


def test_filter_without_pre_filter_state_is_a_plugin_error():
    c = cache_with()
    with pytest.raises(PluginError, match="PreFilterInterPodAffinity"):
        InterPodAffinity().filter(CycleState(), c.new_pod_info(make_pod("p")), c.snapshot())


def test_placed_terms_are_seen_as_they_come_and_go():
    """One plugin instance across cycles: its per-term lookup must follow the pod index."""
    c, pl = cache_with(), InterPodAffinity()
    incoming = make_pod("p").label("app", "web")
    assert run_filter(incoming, plugin=pl, cache=c)[1] == ["", "", "", ""]
    c.add_pod(pod_on("x", "n1").pod_anti_affinity(ZONE, app("web")))
    assert run_filter(incoming, plugin=pl, cache=c)[1] == [EXIST, EXIST, "", ""]
    c.add_pod(pod_on("y", "n3").pod_anti_affinity(HOST, app("web")))
    assert run_filter(incoming, plugin=pl, cache=c)[1] == [EXIST, EXIST, EXIST, ""]
    c.remove_pod("uid-default-x")
    assert run_filter(incoming, plugin=pl, cache=c)[1] == ["", "", EXIST, ""]
    c.remove_pod("uid-default-y")
    status, reasons = run_filter(incoming, plugin=pl, cache=c)
    assert status.is_skip() and reasons == ["", "", "", ""]


def test_node_relabel_moves_domains():
    c = cache_with([pod_on("x", "n1").pod_anti_affinity(ZONE, app("web"))])
    incoming = make_pod("p").label("app", "web")
    assert run_filter(incoming, cache=c)[1] == [EXIST, EXIST, "", ""]
    c.update_node(make_node("n2").label(ZONE, "b").label(HOST, "n2"))
    assert run_filter(incoming, cache=c)[1] == [EXIST, "", "", ""]


# ---- Score -----------------------------------------------------------------------------


def run_score(pod, bound_pods=(), candidates=None, ns_labels=None, **args):
    """(raw scores, normalised scores), or None when PreScore skipped."""
    c = cache_with(bound_pods, ns_labels=ns_labels)
    pl, snap, state = InterPodAffinity(args), c.snapshot(), CycleState()
    pinfo = c.new_pod_info(pod)
    cand = np.arange(snap.num_nodes) if candidates is None else np.array(candidates)
    if pl.pre_score(state, pinfo, snap, cand).is_skip():
        return None
    raw = pl.score(state, pinfo, snap, cand)
    assert raw.dtype == np.int64
    scores = raw.copy()
    pl.normalize(state, pinfo, scores)
    return raw.tolist(), scores.tolist()


def db(name, node, ns="default"):
    return pod_on(name, node, ns, app="db")


SCORE_CASES = [
    # (id, incoming pod, bound pods, args, (raw, normalised) per node n1..n4, or None for Skip)
    (
        "preferred affinity: weight per matching pod in the domain",
        make_pod("p").pod_affinity(ZONE, app("db"), weight=10),
        [db("a", "n1"), db("b", "n1"), db("c", "n3")],
        {},
        ([20, 20, 10, 0], [100, 100, 50, 0]),
    ),
    (
        "preferred anti-affinity is negative",
        make_pod("p").pod_anti_affinity(ZONE, app("db"), weight=10),
        [db("a", "n1")],
        {},
        ([-10, -10, 0, 0], [0, 0, 100, 100]),
    ),
    (
        "affinity and anti-affinity add up per node over topology keys",
        make_pod("p").pod_affinity(HOST, app("db"), weight=5).pod_anti_affinity(ZONE, app("web"), weight=3),
        [db("a", "n1"), pod_on("w", "n2", app="web")],
        {},
        ([2, -3, 0, 0], [100, 0, 60, 60]),
    ),
    (
        "preferred terms ignore other namespaces",
        make_pod("p").pod_affinity(ZONE, app("db"), weight=10),
        [db("a", "n1", "other")],
        {},
        None,
    ),
    (
        "existing required affinity adds hardPodAffinityWeight per carrier",
        make_pod("p").label("app", "me"),
        [
            pod_on("x", "n3").pod_affinity(ZONE, app("me")),
            pod_on("y", "n3").pod_affinity(ZONE, app("me")),
            pod_on("z", "n1").pod_affinity(ZONE, app("me")),
        ],
        {"hardPodAffinityWeight": 3},
        ([3, 3, 6, 0], [50, 50, 100, 0]),
    ),
    (
        "hardPodAffinityWeight 0 disables existing required affinity",
        make_pod("p").label("app", "me"),
        [pod_on("x", "n3").pod_affinity(ZONE, app("me"))],
        {"hardPodAffinityWeight": 0},
        None,
    ),
    (
        "existing required affinity not covering the pod",
        make_pod("p").label("app", "other"),
        [pod_on("x", "n3").pod_affinity(ZONE, app("me"))],
        {},
        None,
    ),
    (
        "existing preferred affinity: term weight per carrier",
        make_pod("p").label("app", "me"),
        [
            pod_on("x", "n1").pod_affinity(ZONE, app("me"), weight=7),
            pod_on("y", "n1").pod_affinity(ZONE, app("me"), weight=7),
            pod_on("z", "n3").pod_affinity(ZONE, app("me"), weight=7),
        ],
        {},
        ([14, 14, 7, 0], [100, 100, 50, 0]),
    ),
    (
        "existing preferred anti-affinity",
        make_pod("p").label("app", "me"),
        [pod_on("x", "n1").pod_anti_affinity(HOST, app("me"), weight=4)],
        {},
        ([-4, 0, 0, 0], [0, 100, 100, 100]),
    ),
    (
        "existing preferred term in another namespace does not cover the pod",
        make_pod("p").label("app", "me"),
        [pod_on("x", "n1", "other").pod_affinity(ZONE, app("me"), weight=7)],
        {},
        None,
    ),
    (
        "ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
        make_pod("p").label("app", "me"),
        [pod_on("x", "n3").pod_affinity(ZONE, app("me")), pod_on("y", "n1").pod_affinity(ZONE, app("me"), weight=7)],
        {"ignorePreferredTermsOfExistingPods": True},
        None,
    ),
    (
        "ignorePreferredTermsOfExistingPods still counts placed terms for a pod with preferred terms",
        make_pod("p").label("app", "me").pod_affinity(HOST, app("db"), weight=2),
        [
            db("a", "n2"),
            pod_on("x", "n3").pod_affinity(ZONE, app("me")),
            pod_on("y", "n1").pod_affinity(ZONE, app("me"), weight=7),
        ],
        {"ignorePreferredTermsOfExistingPods": True},
        ([7, 9, 1, 0], [77, 100, 11, 0]),
    ),
    (
        "terms cancelling out score every node 0",
        make_pod("p").pod_affinity(ZONE, app("db"), weight=5).pod_anti_affinity(ZONE, app("db"), weight=5),
        [db("a", "n1")],
        {},
        None,
    ),
]


@pytest.mark.parametrize("pod,bound_pods,args,expected", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score(pod, bound_pods, args, expected):
    assert run_score(pod, bound_pods, **args) == expected


def test_min_max_is_taken_over_the_candidates_only():
    pod = make_pod("p").pod_affinity(ZONE, app("db"), weight=10)
    bound_pods = [db("a", "n1"), db("b", "n1"), db("c", "n3")]
    assert run_score(pod, bound_pods, candidates=[0, 2]) == ([20, 10], [100, 0])
    assert run_score(pod, bound_pods, candidates=[2, 3]) == ([10, 0], [100, 0])


def test_pre_score_skips_without_candidates():
    assert run_score(make_pod("p").pod_affinity(ZONE, app("db"), weight=10), [db("a", "n1")], candidates=[]) is None


def test_score_namespace_selector_of_placed_terms():
    bound_pods = [
        pod_on("x", "n1", "other").pod_affinity(
            ZONE, app("me"), weight=7, namespaceSelector={"matchLabels": {"env": "prod"}}
        )
    ]
    pod = make_pod("p").label("app", "me")
    assert run_score(pod, bound_pods, ns_labels={"default": {"env": "prod"}}) == ([7, 7, 0, 0], [100, 100, 0, 0])
    assert run_score(pod, bound_pods, ns_labels={"default": {"env": "dev"}}) is None


NORMALIZE_CASES = [
    # (raw, normalised): 100 * (raw - min) / (max - min) in float64, truncated
    ([0, 1, 3], [0, 33, 100]),
    ([-5, 0, 5], [0, 50, 100]),
    ([0, 29, 100], [0, 28, 100]),  # 100 * 0.29 is 28.999... in float64, as upstream
    ([7, 7, 7], [0, 0, 0]),
    ([-3], [0]),
    ([], []),
]


@pytest.mark.parametrize("raw,expected", NORMALIZE_CASES)
def test_normalize(raw, expected):
    scores = np.array(raw, dtype=np.int64)
    InterPodAffinity().normalize(CycleState(), None, scores)
    assert scores.dtype == np.int64 and scores.tolist() == expected


# ---- args, events, queue helper ------------------------------------------------------------


@pytest.mark.parametrize(
    "args,field",
    [
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": "1"}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": True}, "hardPodAffinityWeight"),
        ({"hardPodAffinityWeight": 1.5}, "hardPodAffinityWeight"),
        ({"ignorePreferredTermsOfExistingPods": "yes"}, "ignorePreferredTermsOfExistingPods"),
        ({"hardPodAffinityWeigth": 1}, "hardPodAffinityWeigth"),
    ],
)
def test_bad_args(args, field):
    with pytest.raises(ValueError, match=field):
        InterPodAffinity(args)


@pytest.mark.parametrize(
    "args,weight,ignore",
    [
        (None, 1, False),
        ({}, 1, False),
        ({"hardPodAffinityWeight": 0}, 0, False),
        ({"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True}, 100, True),
    ],
)
def test_good_args(args, weight, ignore):
    pl = InterPodAffinity(args)
    assert (pl.hard_pod_affinity_weight, pl.ignore_preferred_terms_of_existing_pods) == (weight, ignore)


def test_name_and_events():
    assert InterPodAffinity.NAME == "InterPodAffinity"
    assert InterPodAffinity.EVENTS == {
        ClusterEvent.ASSIGNED_POD_ADD,
        ClusterEvent.ASSIGNED_POD_UPDATE,
        ClusterEvent.ASSIGNED_POD_DELETE,
        ClusterEvent.NODE_ADD,
        ClusterEvent.NODE_LABEL,
    }


MAY_HELP_CASES = [
    # (id, pending pod, assigned pod, namespace labels, may help)
    ("required affinity matches", make_pod("p").pod_affinity(ZONE, app("db")), pod_on("a", "n1", app="db"), {}, True),
    ("labels do not match", make_pod("p").pod_affinity(ZONE, app("db")), pod_on("a", "n1", app="web"), {}, False),
    ("other namespace", make_pod("p").pod_affinity(ZONE, app("db")), pod_on("a", "n1", "other", app="db"), {}, False),
    (
        "any one term suffices",
        make_pod("p").pod_affinity(ZONE, app("web")).pod_affinity(ZONE, app("db")),
        pod_on("a", "n1", app="db"),
        {},
        True,
    ),
    (
        "namespaceSelector matches",
        make_pod("p").pod_affinity(ZONE, app("db"), namespaceSelector={"matchLabels": {"t": "x"}}),
        pod_on("a", "n1", "other", app="db"),
        {"other": {"t": "x"}},
        True,
    ),
    (
        "namespaceSelector does not match",
        make_pod("p").pod_affinity(ZONE, app("db"), namespaceSelector={"matchLabels": {"t": "x"}}),
        pod_on("a", "n1", "other", app="db"),
        {"other": {"t": "y"}},
        False,
    ),
    (
        "anti-affinity never helps",
        make_pod("p").pod_anti_affinity(ZONE, app("db")),
        pod_on("a", "n1", app="db"),
        {},
        False,
    ),
    (
        "preferred affinity never helps",
        make_pod("p").pod_affinity(ZONE, app("db"), weight=3),
        pod_on("a", "n1", app="db"),
        {},
        False,
    ),
    ("no terms", make_pod("p"), pod_on("a", "n1", app="db"), {}, False),
]


@pytest.mark.parametrize(
    "pending,assigned,ns_labels,expected", [c[1:] for c in MAY_HELP_CASES], ids=[c[0] for c in MAY_HELP_CASES]
)
def test_assigned_pod_may_help(pending, assigned, ns_labels, expected):
    c = Cache()
    p, a = c.new_pod_info(pending), c.new_pod_info(assigned)
    assert assigned_pod_may_help(p, a, ns_labels) is expected  # a mapping
    assert assigned_pod_may_help(p, a, ns_labels.get) is expected  # or a callable


# ---- through the scheduler ---------------------------------------------------------------


def test_scheduler_spreads_anti_affine_replicas_and_explains_the_failure():
    registered = InterPodAffinity.NAME in default_registry()
    registry = None if registered else Registry({InterPodAffinity.NAME: InterPodAffinity})
    # The default set, with InterPodAffinity added if it is not there yet.
    specs = tuple(p for p in DEFAULT_PLUGINS if p.name != InterPodAffinity.NAME)
    profile = ProfileConfig(plugins=specs + (PluginSpec(InterPodAffinity.NAME, weight=2),))
    nodes = [make_node(f"n{i}").label(HOST, f"n{i}") for i in range(3)]
    pods = [make_pod(f"r{i}").label("app", "web").req(cpu="100m").pod_anti_affinity(HOST, app("web")) for i in range(4)]
    s = make_scheduler(nodes, pods, profiles=(profile,), registry=registry)
    out = s.schedule(1.0)
    assert sorted(node for *_, node in out.binds) == ["n0", "n1", "n2"]
    assert len(out.pod_conditions) == 1
    cond = out.pod_conditions[0][3]
    assert cond["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
        " preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
