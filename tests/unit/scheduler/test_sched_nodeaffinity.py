"""NodeAffinity: selector semantics (vectorised and per node), PreFilter node names,
addedAffinity, preferred-term scores."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import cache_with, make_node, make_pod

from cluster.api.nodeaffinity import pod_matches_node_selector_and_affinity
from cluster.scheduler.framework import (
    BindPlugin,
    ClusterEvent,
    CycleState,
    Framework,
    PluginError,
    PluginSpec,
    ProfileConfig,
    Registry,
)
from cluster.scheduler.plugins.nodeaffinity import NodeAffinity, RequiredAffinityMasks
from cluster.scheduler.plugins.nodename import NodeName
from cluster.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from cluster.scheduler.plugins.queuesort import PrioritySort
from cluster.scheduler.plugins.tainttoleration import TaintToleration
from cluster.scheduler.status import SUCCESS, Code, Diagnosis, Rejection, fit_error_message

POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def two_nodes():
    labelled = make_node("node-1")
    for k, v in {"zone": "z1", "gen": "5", "env": "prod", "weird": "abc"}.items():
        labelled.label(k, v)
    return [labelled, make_node("node-2")]


def run_filter(nodes, pod, **args):
    c = cache_with(nodes)
    plugin, state, pinfo, snap = NodeAffinity(args), CycleState(), c.new_pod_info(pod), c.snapshot()
    status, narrowed = plugin.pre_filter(state, pinfo, snap)
    if status.is_skip():
        return status, narrowed, None
    return status, narrowed, plugin.filter(state, pinfo, snap)


def failures(result):
    return [(code, reason, mask.tolist()) for code, reason, mask in result.failures]


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def field(op, *values, key="metadata.name"):
    return {"key": key, "operator": op, "values": list(values)}


def term(*exprs, fields=()):
    t = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = list(fields)
    return t


# ---- one term against a labelled and an unlabelled node -------------------------------

TERM_CASES = [
    # (id, term, matches [node-1 (labelled), node-2 (no labels)])
    ("In", term(expr("zone", "In", "z1", "z2")), [True, False]),
    ("In without a match", term(expr("zone", "In", "z3")), [False, False]),
    ("NotIn keeps nodes without the label", term(expr("zone", "NotIn", "z2")), [True, True]),
    ("NotIn excludes", term(expr("zone", "NotIn", "z1")), [False, True]),
    ("Exists", term(expr("zone", "Exists")), [True, False]),
    ("DoesNotExist", term(expr("zone", "DoesNotExist")), [False, True]),
    ("Gt", term(expr("gen", "Gt", "4")), [True, False]),
    ("Gt is strict", term(expr("gen", "Gt", "5")), [False, False]),
    ("Lt", term(expr("gen", "Lt", "6")), [True, False]),
    ("Lt is strict", term(expr("gen", "Lt", "5")), [False, False]),
    ("Gt on a non-integer label", term(expr("weird", "Gt", "1")), [False, False]),
    ("expressions are ANDed", term(expr("zone", "In", "z1"), expr("env", "In", "dev")), [False, False]),
    ("expressions are ANDed (match)", term(expr("zone", "In", "z1"), expr("env", "NotIn", "dev")), [True, False]),
    ("metadata.name In", term(fields=[field("In", "node-2")]), [False, True]),
    ("metadata.name NotIn", term(fields=[field("NotIn", "node-1")]), [False, True]),
    ("other field reads as empty (In)", term(fields=[field("In", "x", key="metadata.uid")]), [False, False]),
    ("other field reads as empty (NotIn)", term(fields=[field("NotIn", "x", key="metadata.uid")]), [True, True]),
    ("other field is not the name", term(fields=[field("In", "node-1", key="metadata.uid")]), [False, False]),
    ("labels and fields are ANDed", term(expr("zone", "Exists"), fields=[field("In", "node-2")]), [False, False]),
    ("empty term matches nothing", {}, [False, False]),
    # Terms upstream cannot parse never match, even where the operator alone would.
    ("Gt with two values", term(expr("gen", "Gt", "1", "2")), [False, False]),
    ("Gt with a non-integer", term(expr("gen", "Gt", "x")), [False, False]),
    ("Gt with a negative bound (not a label value)", term(expr("gen", "Gt", "-1")), [False, False]),
    ("Lt with a plus sign (not a label value)", term(expr("gen", "Lt", "+9")), [False, False]),
    ("In without values", term(expr("zone", "In")), [False, False]),
    ("NotIn without values", term(expr("zone", "NotIn")), [False, False]),
    ("Exists with values", term(expr("zone", "Exists", "z1")), [False, False]),
    ("invalid key", term(expr("bad key", "DoesNotExist")), [False, False]),
    ("invalid value", term(expr("zone", "NotIn", "not a value")), [False, False]),
    ("unknown operator", term(expr("zone", "Foo", "z1")), [False, False]),
    ("field with two values", term(fields=[field("NotIn", "a", "b")]), [False, False]),
    ("field with Exists", term(fields=[{"key": "metadata.name", "operator": "Exists"}]), [False, False]),
    ("one bad requirement spoils its term", term(expr("zone", "Exists"), expr("gen", "Gt")), [False, False]),
]


@pytest.mark.parametrize("the_term,expected", [c[1:] for c in TERM_CASES], ids=[c[0] for c in TERM_CASES])
def test_required_term(the_term, expected):
    nodes = two_nodes()
    pod = make_pod("p").node_affinity(the_term)
    status, _, result = run_filter(nodes, pod)
    assert status.is_success()
    assert result.feasible.tolist() == expected
    rejected = [not m for m in expected]
    assert failures(result) == ([(UAU, POD_REASON, rejected)] if any(rejected) else [])
    assert [pod_matches_node_selector_and_affinity(pod, n) for n in nodes] == expected


SELECTOR_CASES = [
    # (id, nodeSelector, required terms (None: no required affinity), matches [node-1, node-2])
    ("terms are ORed", None, [term(expr("zone", "In", "z9")), term(expr("zone", "DoesNotExist"))], [False, True]),
    ("a bad term leaves the others", None, [term(expr("zone", "Foo")), term(expr("zone", "Exists"))], [True, False]),
    ("no terms match nothing", None, [], [False, False]),
    ("nodeSelector", {"zone": "z1"}, None, [True, False]),
    ("nodeSelector needs every label", {"zone": "z1", "env": "dev"}, None, [False, False]),
    ("nodeSelector with an empty value needs the label", {"zone": ""}, None, [False, False]),
    ("nodeSelector AND affinity", {"zone": "z1"}, [term(expr("gen", "Lt", "3"))], [False, False]),
    ("nodeSelector AND affinity (match)", {"zone": "z1"}, [term(expr("gen", "Gt", "3"))], [True, False]),
]


@pytest.mark.parametrize(
    "node_selector,terms,expected", [c[1:] for c in SELECTOR_CASES], ids=[c[0] for c in SELECTOR_CASES]
)
def test_selector_and_terms(node_selector, terms, expected):
    nodes = two_nodes()
    pod = make_pod("p")
    if node_selector:
        pod.node_selector(**node_selector)
    if terms is not None:
        pod["spec"]["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    _, _, result = run_filter(nodes, pod)
    assert result.feasible.tolist() == expected
    assert [pod_matches_node_selector_and_affinity(pod, n) for n in nodes] == expected


def test_vectorised_matches_per_node_on_many_nodes():
    rng = np.random.default_rng(3)
    nodes = []
    for i in range(200):
        n = make_node(f"n{i}")
        for key, choices in (("zone", ["a", "b", "c"]), ("gen", ["1", "5", "12", "x"]), ("tier", ["gold"])):
            if rng.random() < 0.7:
                n.label(key, str(rng.choice(choices)))
        nodes.append(n)
    pod = make_pod("p").node_affinity(
        term(expr("zone", "NotIn", "b"), expr("gen", "Gt", "2")),
        term(expr("tier", "DoesNotExist"), expr("zone", "In", "b", "c")),
        term(fields=[field("In", "n7")]),
    )
    _, _, result = run_filter(nodes, pod)
    expected = [pod_matches_node_selector_and_affinity(pod, n) for n in nodes]
    assert result.feasible.tolist() == expected
    assert 20 < sum(expected) < 180  # the case is not trivially all or nothing


# ---- PreFilter -----------------------------------------------------------------------


def required(*terms):
    return make_pod("p").node_affinity(*terms)


PREFILTER_CASES = [
    # (id, pod, expected: "skip", None (no narrowing), a set of names, or "conflict")
    ("nothing to check", make_pod("p"), "skip"),
    ("empty nodeSelector", make_pod("p").node_selector(), "skip"),
    ("preferred only", make_pod("p").preferred_node_affinity(1, term(expr("zone", "Exists"))), "skip"),
    ("nodeSelector only", make_pod("p").node_selector(zone="z1"), None),
    ("labels only", required(term(expr("zone", "Exists"))), None),
    ("no terms", required(), None),
    ("one term names nodes", required(term(fields=[field("In", "a", "b")])), {"a", "b"}),
    ("terms are unioned", required(term(fields=[field("In", "a")]), term(fields=[field("In", "b")])), {"a", "b"}),
    (
        "a term without names widens to all",
        required(term(fields=[field("In", "a")]), term(expr("zone", "Exists"))),
        None,
    ),
    ("requirements in a term intersect", required(term(fields=[field("In", "a", "b"), field("In", "b", "c")])), {"b"}),
    ("NotIn does not narrow", required(term(fields=[field("NotIn", "a")])), None),
    ("labels beside names still narrow", required(term(expr("zone", "Exists"), fields=[field("In", "a")])), {"a"}),
    ("a conflicting term", required(term(fields=[field("In", "a"), field("In", "b")])), "conflict"),
    (
        "every term conflicting",
        required(term(fields=[field("In", "a"), field("In", "b")]), term(fields=[field("In", "c"), field("In", "d")])),
        "conflict",
    ),
    (
        "one conflicting term among others",
        required(term(fields=[field("In", "a"), field("In", "b")]), term(fields=[field("In", "c")])),
        {"c"},
    ),
]


@pytest.mark.parametrize("pod,expected", [c[1:] for c in PREFILTER_CASES], ids=[c[0] for c in PREFILTER_CASES])
def test_prefilter(pod, expected):
    c = cache_with([make_node("a"), make_node("b")])
    status, narrowed = NodeAffinity().pre_filter(CycleState(), c.new_pod_info(pod), c.snapshot())
    if expected == "skip":
        assert status.is_skip() and narrowed is None
    elif expected == "conflict":
        assert (status.code, status.reasons, narrowed) == (UAU, ("pod affinity terms conflict",), None)
    else:
        assert status.is_success()
        assert (narrowed.node_names if narrowed is not None else None) == expected


# ---- addedAffinity -------------------------------------------------------------------

ADDED = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "In", "z1"))]}}


def test_added_affinity_applies_to_pods_without_affinity():
    nodes = [make_node("a").label("zone", "z1"), make_node("b").label("zone", "z2"), make_node("c")]
    status, narrowed, result = run_filter(nodes, make_pod("p"), addedAffinity=ADDED)
    assert status.is_success() and narrowed is None
    assert result.feasible.tolist() == [True, False, False]
    assert failures(result) == [(UAU, ENFORCED_REASON, [False, True, True])]


def test_added_affinity_is_reported_before_the_pods_own():
    nodes = [
        make_node("a").label("zone", "z1").label("disk", "ssd"),
        make_node("b").label("zone", "z1"),
        make_node("c").label("disk", "ssd"),
        make_node("d"),
    ]
    _, _, result = run_filter(nodes, make_pod("p").node_selector(disk="ssd"), addedAffinity=ADDED)
    assert result.feasible.tolist() == [True, False, False, False]
    assert failures(result) == [
        (UAU, ENFORCED_REASON, [False, False, True, True]),
        (UAU, POD_REASON, [False, True, False, False]),
    ]
    rej = [Rejection(NodeAffinity.NAME, code, reason, mask) for code, reason, mask in result.failures]
    assert fit_error_message(Diagnosis(4, rejections=rej)) == (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) didn't match scheduler-enforced node affinity."
    )


# ---- Score ---------------------------------------------------------------------------


def run_score(nodes, pod, candidates=None, **args):
    c = cache_with(nodes)
    plugin, state, pinfo, snap = NodeAffinity(args), CycleState(), c.new_pod_info(pod), c.snapshot()
    cand = np.arange(snap.num_nodes) if candidates is None else np.asarray(candidates)
    if plugin.pre_score(state, pinfo, snap, cand).is_skip():
        return None
    raw = plugin.score(state, pinfo, snap, cand)
    normalized = raw.copy()
    plugin.normalize(state, pinfo, normalized)
    return raw.tolist(), normalized.tolist()


def score_nodes():
    return [
        make_node("a").label("zone", "z1").label("gen", "5"),
        make_node("b").label("zone", "z1"),
        make_node("c").label("gen", "9"),
        make_node("d"),
    ]


SCORE_CASES = [
    # (id, preferred (weight, term) list, raw, normalized)
    (
        "weights of matching terms add up",
        [(2, term(expr("zone", "Exists"))), (5, term(expr("gen", "Gt", "4")))],
        [7, 2, 5, 0],
        [100, 28, 71, 0],
    ),
    (
        "weight 0 is ignored",
        [(0, term(expr("zone", "Exists"))), (3, term(expr("gen", "Exists")))],
        [3, 0, 3, 0],
        [100, 0, 100, 0],
    ),
    ("an empty preference is ignored", [(9, {}), (3, term(expr("gen", "Exists")))], [3, 0, 3, 0], [100, 0, 100, 0]),
    ("matching no node stays zero", [(4, term(expr("zone", "In", "z9")))], [0, 0, 0, 0], [0, 0, 0, 0]),
    ("fields are honoured", [(10, term(fields=[field("In", "c")]))], [0, 0, 10, 0], [0, 0, 100, 0]),
]


@pytest.mark.parametrize("prefs,raw,normalized", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score(prefs, raw, normalized):
    pod = make_pod("p")
    for weight, t in prefs:
        pod.preferred_node_affinity(weight, t)
    assert run_score(score_nodes(), pod) == (raw, normalized)


def test_score_with_added_preferred_terms():
    added = {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": term(expr("gen", "Exists"))}]
    }
    pod = make_pod("p").preferred_node_affinity(1, term(expr("zone", "Exists")))
    assert run_score(score_nodes(), pod, addedAffinity=added) == ([4, 1, 3, 0], [100, 25, 75, 0])
    # A pod without preferences is still scored by the added ones.
    assert run_score(score_nodes(), make_pod("q"), addedAffinity=added) == ([3, 0, 3, 0], [100, 0, 100, 0])


def test_score_normalizes_over_candidates_only():
    pod = (
        make_pod("p")
        .preferred_node_affinity(2, term(expr("zone", "Exists")))
        .preferred_node_affinity(5, term(expr("gen", "Gt", "4")))
    )
    assert run_score(score_nodes(), pod, candidates=[1, 3]) == ([2, 0], [100, 0])


def test_prescore_skips_without_preferred_terms():
    assert run_score(score_nodes(), make_pod("p").node_selector(zone="z1")) is None
    assert run_score(score_nodes(), make_pod("p").preferred_node_affinity(0, term(expr("zone", "Exists")))) is None


def test_malformed_preferred_term_is_an_error():
    c = cache_with(score_nodes())
    pod = make_pod("p").preferred_node_affinity(1, term(expr("zone", "Foo", "x")))
    with pytest.raises(PluginError, match="operator"):
        NodeAffinity().pre_score(CycleState(), c.new_pod_info(pod), c.snapshot(), np.arange(4))


# ---- memoisation ---------------------------------------------------------------------


def test_follows_node_label_updates():
    c = cache_with([make_node("a").label("zone", "z1"), make_node("b")])
    plugin, pinfo = NodeAffinity(), c.new_pod_info(make_pod("p").node_selector(zone="z1"))
    first = plugin.filter(CycleState(), pinfo, c.snapshot())
    assert first.feasible.tolist() == [True, False]
    first.feasible[:] = False  # the caller's copy; the memo must not change
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [True, False]
    c.update_node(make_node("b").label("zone", "z1"))
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [True, True]
    c.update_node(make_node("a").label("zone", "z2"))
    assert plugin.filter(CycleState(), pinfo, c.snapshot()).feasible.tolist() == [False, True]


def test_required_affinity_masks_are_shared_and_read_only():
    c = cache_with(two_nodes())
    masks = RequiredAffinityMasks()
    pod = make_pod("p").node_affinity(term(expr("zone", "Exists")))
    m = masks.mask(pod, c.snapshot())
    assert m.tolist() == [True, False]
    assert masks.mask(pod.copy_(), c.snapshot()) is m  # replicas share one mask
    with pytest.raises(ValueError):
        m[0] = False


# ---- through the framework, with the other node-label plugins -----------------------


class _Binder(BindPlugin):
    NAME = "TestBinder"

    def __init__(self, args=None, handle=None):
        pass

    def bind(self, state, pod, node_name):
        return SUCCESS


def label_framework():
    plugins = (PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, _Binder)
    return Framework(
        ProfileConfig(), tuple(PluginSpec(p.NAME) for p in plugins), Registry({p.NAME: p for p in plugins})
    )


def diagnose(nodes, pod):
    c = cache_with(nodes)
    fwk, state, pinfo, snap = label_framework(), CycleState(), c.new_pod_info(pod), c.snapshot()
    status, allowed = fwk.run_pre_filter(state, pinfo, snap)
    if not status.is_success():
        return status, None, state
    outcome = fwk.run_filter(state, pinfo, snap, allowed)
    return outcome.feasible.tolist(), fit_error_message(Diagnosis(snap.num_nodes, outcome.rejections())), state


def test_framework_attributes_each_node_to_its_first_rejecting_plugin():
    nodes = [
        make_node("cordoned").unschedulable().label("zone", "z2"),
        make_node("tainted").taint("k", value="v"),
        make_node("wrong-zone").label("zone", "z2"),
        make_node("ok").label("zone", "z1"),
        make_node("tainted-wrong-zone").taint("k", value="v").label("zone", "z2"),
    ]
    feasible, message, state = diagnose(nodes, make_pod("p").node_selector(zone="z1"))
    assert feasible == [False, False, False, True, False]
    assert message == (
        "0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) were unschedulable, 2 node(s) had untolerated taint {k: v}."
    )
    assert state.skip_filter == {"NodeName"}


def test_framework_skips_every_filter_for_a_plain_pod_on_plain_nodes():
    feasible, message, state = diagnose([make_node("a"), make_node("b")], make_pod("p"))
    assert feasible == [True, True]
    assert state.skip_filter == {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"}


def test_framework_reports_a_prefilter_conflict():
    pod = required(term(fields=[field("In", "a"), field("In", "b")]))
    status, _, _ = diagnose([make_node("a"), make_node("b")], pod)
    assert (status.code, status.reasons, status.plugin) == (UAU, ("pod affinity terms conflict",), "NodeAffinity")
    assert (
        fit_error_message(Diagnosis(2, pre_filter_msg=status.message()))
        == "0/2 nodes are available: pod affinity terms conflict."
    )


def test_framework_narrows_to_named_nodes():
    pod = required(term(fields=[field("In", "b", "c")]))
    c = cache_with([make_node("a"), make_node("b"), make_node("c")])
    status, allowed = label_framework().run_pre_filter(CycleState(), c.new_pod_info(pod), c.snapshot())
    assert status.is_success() and allowed.tolist() == [False, True, True]


# ---- construction --------------------------------------------------------------------

BAD_ARGS = [
    ({"foo": 1}, "unknown arguments"),
    ({"addedAffinity": "zone=z1"}, "addedAffinity must be"),
    ({"addedAffinity": {"requiredDuringSchedulingRequiredDuringExecution": {}}}, "unknown fields"),
    (
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "Foo"))]}
            }
        },
        "operator",
    ),
    (
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("gen", "Gt", "x"))]}
            }
        },
        "values",
    ),
    (
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": term(fields=[field("In", "a", "b")])}
                ]
            }
        },
        "matchFields",
    ),
    (
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": "heavy", "preference": term(expr("zone", "Exists"))}
                ]
            }
        },
        "weight",
    ),
]


@pytest.mark.parametrize("args,message", BAD_ARGS, ids=[m for _, m in BAD_ARGS])
def test_bad_args(args, message):
    with pytest.raises(ValueError, match=message):
        NodeAffinity(args)


def test_identity():
    p = NodeAffinity({"addedAffinity": None})
    assert p.NAME == "NodeAffinity"
    assert p.EVENTS == {ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL}
