"""DefaultPreemption and its evaluator: args, eligibility, the candidate walk, victim
selection with PDB-first reprieve, pickOneNodeForPreemption's criteria, messages and the
nominations a preemption clears.

The PreemptionHost here is a fake whose ``filter_on_node`` does cpu arithmetic: the node's
allocatable minus the pods on it that are not ``removed``, minus nominated pods of equal or
higher priority (§7.3), must hold the incoming pod.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from sched_builders import cache_with, make_node, make_pod

from cluster.clock import rfc3339
from cluster.scheduler.framework import (
    CycleState,
    Framework,
    PluginError,
    PluginSpec,
    PostFilterResult,
    PreemptionHost,
    ProfileConfig,
    Registry,
)
from cluster.scheduler.plugins.defaultbinder import DefaultBinder
from cluster.scheduler.plugins.defaultpreemption import DefaultPreemption, parse_args
from cluster.scheduler.plugins.queuesort import PrioritySort
from cluster.scheduler.preemption import (
    Candidate,
    PdbBudgets,
    dry_run,
    filter_pods_with_pdb_violation,
    fit_error_text,
    more_important_key,
    num_candidates,
    pick_one_node,
    pod_eligible,
    potential_nodes,
    select_victims_on_node,
)
from cluster.scheduler.status import SUCCESS, Code, Diagnosis, Rejection, Status

NOW = 10_000.0
TAINTED = "node(s) had untolerated taint {dedicated: x}"


def pod(name, prio=0, cpu="1", node=None, start=None, labels=None, ns="default"):
    p = make_pod(name, ns).req(cpu=cpu).prio(prio)
    if node:
        p.node(node)
    if start is not None:
        p["status"]["startTime"] = rfc3339(start)
    for k, v in (labels or {}).items():
        p.label(k, v)
    return p


def preempted_by_scheduler(p, status="True", reason="PreemptionByScheduler", deleted=True):
    if deleted:
        p.terminating()
    p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": status, "reason": reason}]
    return p


def pdb(name, allowed, match=None, ns="default", disrupted=(), selector="__match__"):
    sel = {"matchLabels": match} if selector == "__match__" else selector
    return {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": sel},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": {n: "2026-01-01T00:00:00Z" for n in disrupted}},
    }


class FixedRng:
    def __init__(self, offset):
        self.offset, self.asked = offset, []

    def randrange(self, n):
        self.asked.append(n)
        return self.offset % n


class FakeHost(PreemptionHost):
    def __init__(self, cache, nominated=None, pdbs=(), offset=0):
        self.cache, self.snap = cache, cache.snapshot()
        self.nominated = nominated or {}  # node name -> [PodInfo]
        self._pdbs, self._rng = list(pdbs), FixedRng(offset)
        self.calls: list[tuple[str, list[str]]] = []  # (node, names removed)
        self.errors: dict[str, str] = {}  # node -> Error message filter_on_node returns
        self.always_fit: set[str] = set()

    def now(self):
        return NOW

    def rng(self):
        return self._rng

    def nominated_pods(self, node_name):
        return list(self.nominated.get(node_name, ()))

    def pdbs(self):
        return list(self._pdbs)

    def filter_on_node(self, state, pod, node_index, removed):
        ni = self.snap.node_info(node_index)
        self.calls.append((ni.name, [p.name for p in removed]))
        if ni.name in self.errors:
            return Status.error(self.errors[ni.name])
        return self.fits(pod, ni, {p.uid for p in removed})

    def fits(self, pod, ni, removed_uids=frozenset()):
        if ni.name in self.always_fit:
            return SUCCESS
        used = sum(p.requests.get("cpu", 0) for p in ni.pods.values() if p.uid not in removed_uids)
        used += sum(
            p.requests.get("cpu", 0)
            for p in self.nominated.get(ni.name, ())
            if p.priority >= pod.priority and p.uid != pod.uid
        )
        if used + pod.requests.get("cpu", 0) > ni.allocatable.get("cpu", 0):
            return Status.unschedulable("Insufficient cpu")
        return SUCCESS

    def visited(self):
        return list(dict.fromkeys(name for name, _ in self.calls))


def diagnose(host, pinfo, tainted=()):
    """What the filters said: tainted nodes are unresolvable, others fail on cpu if full."""
    n = host.snap.num_nodes
    full = np.array([not host.fits(pinfo, host.snap.node_info(i)).is_success() for i in range(n)])
    taint = np.array([host.snap.node_name(i) in tainted for i in range(n)])
    rejections = [
        Rejection("TaintToleration", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, TAINTED, taint),
        Rejection("NodeResourcesFit", Code.UNSCHEDULABLE, "Insufficient cpu", full & ~taint),
    ]
    return Diagnosis(n, rejections=[r for r in rejections if r.mask.any()])


class Setup:
    """Nodes (name -> cpu), bound pods, the preemptor and pods nominated per node."""

    def __init__(self, nodes, bound=(), preemptor=None, nominated=None, pdbs=(), offset=0, tainted=(), **args):
        self.cache = cache_with([make_node(name, cpu=cpu) for name, cpu in nodes.items()], bound)
        self.pinfo = self.cache.new_pod_info(preemptor if preemptor is not None else pod("p", prio=100, cpu="2"))
        noms = {node: [self.cache.new_pod_info(p) for p in pods] for node, pods in (nominated or {}).items()}
        self.host = FakeHost(self.cache, noms, pdbs, offset)
        self.plugin = DefaultPreemption(args, SimpleNamespace(host=self.host))
        self.diag = diagnose(self.host, self.pinfo, tainted)

    def run(self, diag=None):
        return self.plugin.post_filter(CycleState(), self.pinfo, self.host.snap, diag or self.diag)


def names(pods):
    return [p.name for p in pods]


# ---- args ------------------------------------------------------------------------------


def test_args_defaults_and_valid_values():
    assert parse_args(None) == (10, 100)
    assert parse_args({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}) == (0, 5)
    assert parse_args({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}) == (100, 0)
    plugin = DefaultPreemption({"minCandidateNodesAbsolute": 3})
    assert (plugin.NAME, plugin.EVENTS, plugin.percentage, plugin.absolute) == ("DefaultPreemption", frozenset(), 10, 3)


@pytest.mark.parametrize(
    "args,field",
    [
        ({"minCandidateNodesPercentage": -1}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute"),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, "cannot both be zero"),
        ({"minCandidateNodesPercentage": "10"}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesPercentage": 1.5}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesAbsolute": True}, "minCandidateNodesAbsolute"),
        ({"minCandidateNodes": 3}, "minCandidateNodes'"),
    ],
    ids=["pct<0", "pct>100", "abs<0", "both zero", "pct string", "pct float", "abs bool", "unknown"],
)
def test_args_rejected(args, field):
    with pytest.raises(ValueError, match=field):
        DefaultPreemption(args)


@pytest.mark.parametrize(
    "nodes,pct,absolute,want",
    [
        (10, 10, 100, 10),  # the absolute floor is capped by the node count
        (1000, 10, 100, 100),
        (5000, 10, 100, 500),
        (50, 40, 3, 20),
        (50, 0, 3, 3),
        (7, 50, 0, 3),  # integer division: 3.5 -> 3
        (1, 0, 100, 1),
    ],
)
def test_num_candidates(nodes, pct, absolute, want):
    assert num_candidates(nodes, pct, absolute) == want


# ---- ordering and PDBs -----------------------------------------------------------------


def test_more_important_key_orders_by_priority_then_start_time():
    c = cache_with([])
    pods = [
        c.new_pod_info(p)
        for p in (
            pod("low-early", prio=1, start=10),
            pod("high-late", prio=5, start=500),
            pod("high-unstarted", prio=5),
            pod("high-early", prio=5, start=100),
            pod("mid", prio=3, start=0),
        )
    ]
    ordered = sorted(pods, key=lambda p: more_important_key(p, NOW))
    # A pod without startTime counts as starting now, so after every started one.
    assert names(ordered) == ["high-early", "high-late", "high-unstarted", "mid", "low-early"]
    assert more_important_key(pods[2], NOW) == (-5, NOW)


X, Y = {"app": "x"}, {"app": "y"}
PDB_CASES = [
    # (id, pods as (name, labels), all in "default", pdbs, violating names)
    ("no pdbs", [("a", X)], [], []),
    ("budget of one: first fits, second violates", [("a", X), ("b", X)], [pdb("x", 1, X)], ["b"]),
    ("zero budget", [("a", X)], [pdb("x", 0, X)], ["a"]),
    ("other namespace ignored", [("a", X)], [pdb("x", 0, X, ns="other")], []),
    ("empty selector matches nothing", [("a", X)], [pdb("x", 0, selector={})], []),
    ("null selector matches nothing", [("a", X)], [pdb("x", 0, selector=None)], []),
    (
        "invalid selector matches nothing",
        [("a", X)],
        [pdb("x", 0, selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]})],
        [],
    ),
    (
        "unlabelled pod never matches",
        [("a", {})],
        [pdb("x", 0, selector={"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]})],
        [],
    ),
    ("already disrupted pod costs nothing", [("a", X), ("b", X)], [pdb("x", 1, X, disrupted=("a",))], []),
    (
        "one of two matching pdbs exhausted",
        [("a", {"app": "x", "tier": "web"})],
        [pdb("x", 1, X), pdb("w", 0, {"tier": "web"})],
        ["a"],
    ),
    ("budgets are per pdb", [("a", X), ("b", Y), ("c", X)], [pdb("x", 1, X), pdb("y", 1, Y)], ["c"]),
]


@pytest.mark.parametrize("pods,pdbs,violating", [c[1:] for c in PDB_CASES], ids=[c[0] for c in PDB_CASES])
def test_filter_pods_with_pdb_violation(pods, pdbs, violating):
    c = cache_with([])
    infos = [c.new_pod_info(pod(n, labels=labels)) for n, labels in pods]
    bad, ok = filter_pods_with_pdb_violation(infos, pdbs)
    assert names(bad) == violating
    assert names(ok) == [n for n, _ in pods if n not in violating]  # order kept
    # A compiled PdbBudgets gives the same split, and is not used up by a call.
    budgets = PdbBudgets(pdbs)
    for _ in range(2):
        assert names(filter_pods_with_pdb_violation(infos, budgets)[0]) == violating


# ---- eligibility -----------------------------------------------------------------------


def going(prio=1, **kw):
    """A pod on the nominated node, built late (each case needs its own object)."""
    return lambda: preempted_by_scheduler(pod("v", prio=prio), **kw)


UNSCH, UNRES = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NEVER = "not eligible due to preemptionPolicy=Never."
WAIT = "not eligible due to a terminating pod on the nominated node."
ELIGIBLE_CASES = [
    # (id, preemptionPolicy, nominated to n1, n1's code in the diagnosis, pod on n1, eligible, message)
    ("plain pod", None, False, None, None, True, ""),
    ("policy Never", "Never", False, None, None, False, NEVER),
    ("policy Never wins over unresolvable", "Never", True, UNRES, None, False, NEVER),
    ("explicit PreemptLowerPriority", "PreemptLowerPriority", False, None, None, True, ""),
    ("victim still terminating", None, True, UNSCH, going(), False, WAIT),
    ("nominated node unresolvable: look elsewhere", None, True, UNRES, going(), True, ""),
    ("terminating for another reason", None, True, UNSCH, going(reason="TerminationByKubelet"), True, ""),
    ("condition False", None, True, UNSCH, going(status="False"), True, ""),
    ("condition but not deleted", None, True, UNSCH, going(deleted=False), True, ""),
    ("deleted without the condition", None, True, UNSCH, lambda: pod("v", prio=1).terminating(), True, ""),
    ("terminating pod of equal priority", None, True, UNSCH, going(prio=100), True, ""),
    ("no nomination ignores terminating pods", None, False, None, going(), True, ""),
]


@pytest.mark.parametrize(
    "policy,nominated,code,victim,ok,msg", [c[1:] for c in ELIGIBLE_CASES], ids=[c[0] for c in ELIGIBLE_CASES]
)
def test_pod_eligible(policy, nominated, code, victim, ok, msg):
    c = cache_with([make_node("n1")], [] if victim is None else [victim().node("n1")])
    p = pod("p", prio=100)
    if policy:
        p["spec"]["preemptionPolicy"] = policy
    if nominated:
        p.nominated("n1")
    assert pod_eligible(c.new_pod_info(p), code, c.snapshot().node_info(0)) == (ok, msg)


def test_pod_eligible_with_missing_nominated_node():
    c = cache_with([])
    assert pod_eligible(c.new_pod_info(pod("p", prio=100).nominated("gone")), Code.UNSCHEDULABLE, None) == (True, "")


def test_post_filter_not_eligible_returns_no_result_and_tries_nothing():
    p = pod("p", prio=100, cpu="2")
    p["spec"]["preemptionPolicy"] = "Never"
    s = Setup({"n1": "2"}, [pod("low", prio=1, cpu="2", node="n1")], preemptor=p)
    result, status = s.run()
    assert result is None
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, (f"preemption: {NEVER}",))
    assert s.host.calls == []


def test_post_filter_waits_for_terminating_victims_on_nominated_node():
    victim = preempted_by_scheduler(pod("going", prio=1, cpu="2", node="n1"))
    s = Setup(
        {"n1": "2", "n2": "2"},
        [victim, pod("low", prio=1, cpu="2", node="n2")],
        preemptor=pod("p", prio=100, cpu="2").nominated("n1"),
    )
    result, status = s.run()
    assert result is None and status.message() == f"preemption: {WAIT}"
    # Were n1 tainted since (unresolvable), the pod preempts elsewhere.
    s2 = Setup(
        {"n1": "2", "n2": "2"},
        [victim, pod("low", prio=1, cpu="2", node="n2")],
        preemptor=pod("p", prio=100, cpu="2").nominated("n1"),
        tainted=("n1",),
    )
    result, status = s2.run()
    assert status.is_success() and result.nominated_node_name == "n2"


# ---- victims on one node ---------------------------------------------------------------


def _victims(bound, preemptor, pdbs=(), cpu="4"):
    s = Setup({"n1": cpu}, bound, preemptor=preemptor)
    ni = s.host.snap.node_info(0)
    victims, violating, status = select_victims_on_node(s.host, CycleState(), s.pinfo, ni, PdbBudgets(pdbs), NOW)
    return names(victims), violating, status, s.host.calls


THREE = [
    pod("a", prio=1, cpu="1", start=30, labels={"app": "a"}),
    pod("b", prio=2, cpu="1", start=20),
    pod("c", prio=3, cpu="2", start=10),
]


def test_reprieve_goes_from_most_important_down():
    victims, violating, status, calls = _victims([p.copy_().node("n1") for p in THREE], pod("p", prio=10, cpu="2"))
    assert status.is_success() and (victims, violating) == (["b", "a"], 0)
    # All off first; then c, b, a put back in turn, with the victims so far and the
    # untried pods still off.
    assert [sorted(r) for _, r in calls] == [["a", "b", "c"], ["a", "b"], ["a"], ["b"]]


def test_pdb_violating_pods_are_reprieved_first():
    # a is protected (budget 0): it is tried before the more important c and b, and the
    # outcome changes: a stays, c goes, b stays.
    victims, violating, status, calls = _victims(
        [p.copy_().node("n1") for p in THREE], pod("p", prio=10, cpu="2"), pdbs=[pdb("a", 0, {"app": "a"})]
    )
    assert status.is_success() and (victims, violating) == (["c"], 0)
    assert [sorted(r) for _, r in calls] == [["a", "b", "c"], ["b", "c"], ["b"], ["c"]]


def test_violating_victims_counted_and_victims_resorted():
    bound = [pod("a", prio=1, cpu="1", labels={"app": "a"}, node="n1"), pod("b", prio=5, cpu="1", node="n1")]
    victims, violating, status, _ = _victims(
        bound, pod("p", prio=10, cpu="2"), pdbs=[pdb("a", 0, {"app": "a"})], cpu="2"
    )
    # a (violating) became a victim before b, but the result is by importance.
    assert status.is_success() and (victims, violating) == (["b", "a"], 1)


def test_only_lower_priority_pods_are_potential_victims():
    bound = [pod("same", prio=10, cpu="1", node="n1"), pod("low", prio=9, cpu="1", node="n1")]
    victims, _, status, calls = _victims(bound, pod("p", prio=10, cpu="3"), cpu="4")
    assert victims == ["low"] and calls[0][1] == ["low"]


@pytest.mark.parametrize(
    "bound,code,reason,tries",
    [
        ([pod("high", prio=50, node="n1")], UNRES, "No preemption victims found for incoming pod", 0),
        # Even with every lower-priority pod gone the higher-priority one leaves too little room.
        (
            [pod("high", prio=50, cpu="3", node="n1"), pod("low", prio=1, cpu="1", node="n1")],
            UNSCH,
            "Insufficient cpu",
            1,
        ),
    ],
    ids=["no lower-priority pods", "no fit even when emptied"],
)
def test_node_without_victims(bound, code, reason, tries):
    victims, _, status, calls = _victims(bound, pod("p", prio=10, cpu="2"))
    assert victims == [] and len(calls) == tries
    assert (status.code, status.reasons) == (code, (reason,))


# ---- pickOneNodeForPreemption ----------------------------------------------------------


def _cand(name, victims, violations=0):
    c = cache_with([])
    infos = [c.new_pod_info(pod(f"{name}-{i}", prio=prio, start=start)) for i, (prio, start) in enumerate(victims)]
    infos.sort(key=lambda p: more_important_key(p, NOW))
    return Candidate(name, 0, tuple(infos), violations)


PICK_CASES = [
    # (id, candidates as (name, [(priority, start)], pdb violations), winner)
    ("fewest pdb violations beats everything", [("a", [(1, 0)], 1), ("b", [(100, 0), (100, 0), (100, 0)], 0)], "b"),
    ("lowest highest-priority victim", [("a", [(5, 0)], 0), ("b", [(3, 0), (3, 0), (3, 0)], 0)], "b"),
    ("smallest priority sum", [("a", [(5, 0), (4, 0)], 0), ("b", [(5, 0), (2, 0)], 0)], "b"),
    # Without the +2^31 shift, a's sum (5 + 1 - 6 = 0) would beat b's (5). Shifted, one
    # victim less always sums lower.
    ("extra negative victim still costs", [("a", [(5, 0), (1, 0), (-6, 0)], 0), ("b", [(5, 0), (1, 0)], 0)], "b"),
    # Equal shifted sums: 5 + 2^31 == (5 + 2^31) + (-2^31 + 2^31); then fewer victims wins.
    ("fewest victims", [("a", [(5, 0), (-(2**31), 0)], 0), ("b", [(5, 0)], 0)], "b"),
    ("latest start among top-priority victims", [("a", [(5, 100), (5, 300)], 0), ("b", [(5, 200), (5, 250)], 0)], "b"),
    # Only the top-priority victims count for the start time: b's old low-priority victim
    # does not matter.
    ("start time ignores lower-priority victims", [("a", [(5, 100), (1, 9000)], 0), ("b", [(5, 200), (1, 1)], 0)], "b"),
    ("unstarted victim counts as now", [("a", [(5, 5000)], 0), ("b", [(5, None)], 0)], "b"),
    ("full tie: the first in search order", [("a", [(5, 7)], 0), ("b", [(5, 7)], 0), ("c", [(5, 7)], 0)], "a"),
    (
        "tie after criterion 1 goes to criterion 2 among the tied only",
        [("a", [(1, 0)], 2), ("b", [(9, 0)], 0), ("c", [(8, 0)], 0)],
        "c",
    ),
]


@pytest.mark.parametrize("cands,winner", [c[1:] for c in PICK_CASES], ids=[c[0] for c in PICK_CASES])
def test_pick_one_node(cands, winner):
    candidates = [_cand(*c) for c in cands]
    assert pick_one_node(candidates, NOW).name == winner
    if winner != "a" or len(cands) == 1:
        # The winner does not depend on the order it is offered in, except for a full tie.
        assert pick_one_node(candidates[::-1], NOW).name == winner


def test_pick_one_node_edge_cases():
    assert pick_one_node([], NOW) is None
    only = _cand("only", [(99, 0)], 3)
    assert pick_one_node([only], NOW) is only


# ---- the candidate walk ----------------------------------------------------------------


def _row(n, protected=()):
    """n nodes of 2 cpu, each full with one low-priority pod (labelled when protected)."""
    nodes = {f"n{i}": "2" for i in range(n)}
    bound = [
        pod(f"v{i}", prio=1, cpu="2", node=f"n{i}", labels={"app": "guarded"} if f"n{i}" in protected else None)
        for i in range(n)
    ]
    return nodes, bound


def test_walk_starts_at_random_offset_and_stops_at_enough_candidates():
    nodes, bound = _row(5)
    s = Setup(nodes, bound, offset=3, minCandidateNodesPercentage=0, minCandidateNodesAbsolute=2)
    result, status = s.run()
    assert s.host._rng.asked == [5]  # the offset is drawn over the potential nodes
    assert s.host.visited() == ["n3", "n4"]
    # Equal candidates: the first in search order wins.
    assert status.is_success() and result.nominated_node_name == "n3" and names(result.victims) == ["v3"]


def test_walk_continues_until_a_candidate_breaks_no_pdb():
    nodes, bound = _row(5, protected=("n3", "n4"))
    s = Setup(
        nodes,
        bound,
        offset=3,
        pdbs=[pdb("g", 0, {"app": "guarded"})],
        minCandidateNodesPercentage=0,
        minCandidateNodesAbsolute=1,
    )
    result, status = s.run()
    assert s.host.visited() == ["n3", "n4", "n0"]
    assert result.nominated_node_name == "n0"


def test_dry_run_keeps_at_most_wanted_candidates_per_group():
    nodes, bound = _row(5, protected=("n3", "n4"))
    s = Setup(nodes, bound)
    budgets = PdbBudgets([pdb("g", 0, {"app": "guarded"})])
    cands, statuses, errors = dry_run(s.host, CycleState(), s.pinfo, s.host.snap, np.arange(5), 3, 1, budgets, NOW)
    # n4 (violating) is dropped: the violating list is full with n3. Non-violating first.
    assert [c.name for c in cands] == ["n0", "n3"] and statuses == {} and errors == []
    assert [c.num_pdb_violations for c in cands] == [0, 1]


def test_only_unschedulable_nodes_are_dry_run():
    nodes, bound = _row(4)
    s = Setup(nodes, bound, tainted=("n0", "n2"))
    result, status = s.run()
    assert s.host.visited() == ["n1", "n3"] and s.host._rng.asked == [2]
    assert status.is_success()


def test_potential_nodes_exclude_unresolvable_and_prefilter_absent():
    n = 4
    diag = Diagnosis(
        n,
        rejections=[
            Rejection("NodeResourcesFit", Code.UNSCHEDULABLE, "Insufficient cpu", np.array([1, 1, 1, 0], bool)),
            Rejection("TaintToleration", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, TAINTED, np.array([0, 1, 0, 1], bool)),
        ],
        absent=np.array([0, 0, 1, 0], bool),
    )
    assert potential_nodes(diag, n).tolist() == [0]
    assert potential_nodes(Diagnosis(n, pre_filter_msg="node(s) didn't satisfy plugin NodeAffinity"), n).tolist() == []


# ---- results and messages --------------------------------------------------------------


def test_preemption_picks_the_cheaper_node_and_returns_victims():
    bound = [
        pod("mid", prio=50, cpu="2", node="n1"),
        pod("low1", prio=1, cpu="1", node="n2", start=5),
        pod("low2", prio=2, cpu="1", node="n2", start=1),
    ]
    s = Setup({"n1": "2", "n2": "2"}, bound)
    result, status = s.run()
    assert status == SUCCESS
    assert result.nominated_node_name == "n2"
    assert names(result.victims) == ["low2", "low1"]  # most important first
    assert result.clear_nominations == ()


def test_lower_priority_nominations_on_the_chosen_node_are_cleared():
    preemptor = pod("p", prio=100, cpu="2").nominated("n1")
    s = Setup(
        {"n1": "4"},
        [pod("low", prio=1, cpu="3", node="n1")],
        preemptor=preemptor,
        nominated={
            "n1": [
                pod("nom-low", prio=50, cpu="1"),
                preemptor,
                pod("nom-eq", prio=100, cpu="0"),
                pod("nom-high", prio=200, cpu="0"),
            ],
            "n2": [pod("elsewhere", prio=1)],
        },
    )
    result, status = s.run()
    assert status.is_success() and result.nominated_node_name == "n1" and names(result.victims) == ["low"]
    assert names(result.clear_nominations) == ["nom-low"]


def test_nominated_higher_priority_pods_keep_their_room():
    # A higher-priority pod nominated to n1 needs 2 of its 4 cpu: evicting the 1-cpu pod
    # would not be enough, so n1 is no candidate and n2 is chosen.
    bound = [pod("low-a", prio=1, cpu="2", node="n1"), pod("low-b", prio=1, cpu="4", node="n2")]
    s = Setup(
        {"n1": "4", "n2": "4"},
        bound,
        preemptor=pod("p", prio=100, cpu="3"),
        nominated={"n1": [pod("vip", prio=500, cpu="2")]},
    )
    result, status = s.run()
    assert result.nominated_node_name == "n2" and names(result.victims) == ["low-b"]


NOT_HELPFUL = "Preemption is not helpful for scheduling"
MESSAGE_CASES = [
    # (id, nodes, bound pods, tainted nodes, message after "preemption: 0/N nodes are available: ")
    (
        "no victims and not helpful",
        {"n1": "2", "n2": "2", "n3": "2"},
        [pod("high", prio=500, cpu="2", node="n1"), pod("low", prio=1, cpu="2", node="n2")],
        ("n2", "n3"),
        f"1 No preemption victims found for incoming pod, 2 {NOT_HELPFUL}.",
    ),
    (
        "a failed node's reasons",
        {"n1": "4", "n2": "4"},
        [pod("high", prio=500, cpu="3", node="n1"), pod("low", prio=1, cpu="1", node="n1")],
        ("n2",),
        f"1 Insufficient cpu, 1 {NOT_HELPFUL}.",
    ),
    (
        "nothing resolvable",
        {"n1": "2", "n2": "2"},
        [pod("low", prio=1, cpu="2", node="n1")],
        ("n1", "n2"),
        f"2 {NOT_HELPFUL}.",
    ),
]


@pytest.mark.parametrize("nodes,bound,tainted,tail", [c[1:] for c in MESSAGE_CASES], ids=[c[0] for c in MESSAGE_CASES])
def test_message_when_no_candidate(nodes, bound, tainted, tail):
    s = Setup(nodes, bound, tainted=tainted)
    result, status = s.run()
    assert result == PostFilterResult("")  # clears a nomination the pod may hold
    assert (status.code, status.reasons) == (UNSCH, (f"preemption: 0/{len(nodes)} nodes are available: {tail}",))


def test_prefilter_rejection_is_not_helpful_anywhere():
    s = Setup({"n1": "2", "n2": "2"}, [pod("low", prio=1, cpu="2", node="n1")])
    result, status = s.run(Diagnosis(2, pre_filter_msg="node(s) didn't match Pod's node affinity/selector"))
    assert result == PostFilterResult("") and s.host.calls == []
    assert status.message() == f"preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}."


def test_fit_error_text_sorts_count_strings():
    statuses = {
        0: Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
        1: Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
    }
    assert fit_error_text(12, statuses) == (
        "0/12 nodes are available: 1 Insufficient memory, "
        "10 Preemption is not helpful for scheduling, 2 Insufficient cpu."
    )


def test_filter_errors_surface_only_without_candidates():
    nodes, bound = _row(3)
    s = Setup(nodes, bound)
    s.host.errors = {"n0": "boom", "n1": "boom", "n2": "bang"}
    result, status = s.run()
    assert result is None and status.code == Code.ERROR
    assert status.message() == "preemption: [boom, bang]"
    s.host.errors = {"n0": "boom", "n2": "boom"}
    result, status = s.run()
    assert status.is_success() and result.nominated_node_name == "n1"


def test_node_that_fits_without_evictions_is_an_error():
    s = Setup({"n1": "2"}, [pod("low", prio=1, cpu="2", node="n1")])
    s.host.always_fit = {"n1"}  # the diagnosis said Unschedulable, the what-if says it fits
    result, status = s.run()
    assert result is None and status.code == Code.ERROR
    assert status.message() == 'preemption: expected at least one victim pod on node "n1"'


def test_post_filter_without_host_is_a_plugin_error():
    s = Setup({"n1": "2"}, [pod("low", prio=1, cpu="2", node="n1")])
    with pytest.raises(PluginError, match="PreemptionHost"):
        DefaultPreemption({}, SimpleNamespace(host=None)).post_filter(CycleState(), s.pinfo, s.host.snap, s.diag)


def test_runs_inside_a_framework_profile():
    reg = Registry({c.NAME: c for c in (PrioritySort, DefaultBinder, DefaultPreemption)})
    specs = (
        PluginSpec("PrioritySort"),
        PluginSpec("DefaultPreemption", args={"minCandidateNodesAbsolute": 5}),
        PluginSpec("DefaultBinder"),
    )
    fwk = Framework(ProfileConfig(plugins=specs), specs, reg)
    assert fwk.has_post_filter_plugins() and fwk.plugins["DefaultPreemption"].absolute == 5
    s = Setup({"n1": "2"}, [pod("low", prio=1, cpu="2", node="n1")])
    fwk.host = s.host
    result, status = fwk.run_post_filter(CycleState(), s.pinfo, s.host.snap, s.diag)
    assert status.is_success() and status.plugin == "DefaultPreemption"
    assert result.nominated_node_name == "n1" and names(result.victims) == ["low"]
