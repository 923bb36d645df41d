"""The preemption evaluator: which lower-priority pods to evict, and on which node.

Owns upstream's preemption algorithm (DefaultPreemption) for a pod that fitted no node:
eligibility (``pod_eligible``), the nodes worth a dry run and how many candidates to
collect (``potential_nodes``, ``num_candidates``), the victims on one node with their
reprieve order (``select_victims_on_node``, ``more_important_key``,
``filter_pods_with_pdb_violation``), the walk over nodes (``dry_run``), the choice among
candidates (``pick_one_node``) and the FitError text of a failed attempt. ``preempt``
strings them together. Called by the DefaultPreemption PostFilter
(``plugins/defaultpreemption.py``), which owns the args and the "preemption: " prefix.

Every what-if goes through a ``PreemptionHost`` (framework.py) that the scheduler
implements: ``filter_on_node`` judges one node with some pods taken off it (nominated
pods of equal or higher priority considered), so this module never copies a node or
re-runs plugins itself. Work per dry-run node is proportional to that node's pods; the
only all-node step is one vector pass over the Diagnosis masks.

Deviations from upstream: nodes are walked sequentially in snapshot order from the
random offset (upstream walks them in parallel, in map order), so the candidate set is
reproducible for a given seed; and a PreFilter rejection counts as UnschedulableAndUnresolvable
on every node, because ``Diagnosis`` keeps only its message (every in-tree PreFilter
rejection is unresolvable anyway).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api.objects import namespace_of
from ..api.selectors import LabelSelector, SelectorError
from ..clock import parse_timestamp
from .cache import NodeInfo, PodInfo, Snapshot
from .framework import CycleState, PostFilterResult, PreemptionHost
from .status import SUCCESS, Code, Diagnosis, Status

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
# Added to every victim's priority in the sum criterion (upstream's MaxInt32 + 1), so an
# extra victim always raises the sum even when priorities are negative.
_PRIORITY_SHIFT = 2**31


@dataclass(frozen=True)
class Candidate:
    """A node where evicting ``victims`` (most important first) lets the pod fit."""

    name: str
    index: int
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int


# ---- pod ordering ----------------------------------------------------------------------


_parse_time = parse_timestamp


def start_time(pinfo: PodInfo, now: float) -> float:
    """``status.startTime``; a pod that has not started yet (or an unreadable time) counts
    as starting ``now``, as upstream's GetPodStartTime."""
    s = pinfo.start_time
    t = _parse_time(s) if isinstance(s, str) and s else None
    return now if t is None else t


def more_important_key(pinfo: PodInfo, now: float) -> tuple[int, float]:
    """Sort key putting the more important pod first (upstream's MoreImportantPod):
    higher priority, then the one running longer (earlier start)."""
    return -pinfo.priority, start_time(pinfo, now)


def more_important_pod(a: PodInfo, b: PodInfo, now: float) -> bool:
    return more_important_key(a, now) < more_important_key(b, now)


# ---- PodDisruptionBudgets --------------------------------------------------------------


class PdbBudgets:
    """The PDBs of one preemption attempt, selectors compiled once and grouped by namespace."""

    __slots__ = ("allowed", "by_namespace")

    def __init__(self, pdbs: Iterable[dict[str, Any]]) -> None:
        self.allowed: list[int] = []
        self.by_namespace: dict[str, list[tuple[int, LabelSelector, frozenset[str]]]] = {}
        for pdb in pdbs:
            status = pdb.get("status") or {}
            i = len(self.allowed)
            self.allowed.append(int(status.get("disruptionsAllowed") or 0))
            try:
                sel = LabelSelector.from_dict((pdb.get("spec") or {}).get("selector"))
            except SelectorError:
                continue  # an invalid selector matches no pod, as upstream
            if sel.empty or sel.matches_nothing:
                continue  # a null or empty selector matches nothing for PDBs
            disrupted = frozenset(status.get("disruptedPods") or ())
            self.by_namespace.setdefault(namespace_of(pdb), []).append((i, sel, disrupted))


def filter_pods_with_pdb_violation(
    pods: Iterable[PodInfo], pdbs: PdbBudgets | Iterable[dict[str, Any]]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``pods`` (order kept) into (violating, non-violating): evicting them in this
    order, does a pod take a budget below zero? ``pdbs`` is a PdbBudgets or PDB dicts.
    A pod already in a budget's ``disruptedPods`` is being evicted and costs nothing."""
    budgets = pdbs if isinstance(pdbs, PdbBudgets) else PdbBudgets(pdbs)
    taken: dict[int, int] = {}  # only the budgets this node touches, not a copy of all
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:  # a pod without labels matches no (non-empty) selector
            for i, sel, disrupted in budgets.by_namespace.get(p.namespace, ()):
                if not sel.matches(p.labels) or p.name in disrupted:
                    continue
                n = taken[i] = taken.get(i, 0) + 1
                if budgets.allowed[i] - n < 0:
                    violated = True
        (violating if violated else non_violating).append(p)
    return violating, non_violating


# ---- eligibility and the node search ---------------------------------------------------


def terminating_by_preemption(pod: dict[str, Any]) -> bool:
    """Being deleted, and the first DisruptionTarget condition says the scheduler did it."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == DISRUPTION_TARGET:
            return bool(c.get("status") == "True" and c.get("reason") == PREEMPTION_BY_SCHEDULER)
    return False


def pod_eligible(pod: PodInfo, nominated_code: Code | None, nominated_node: NodeInfo | None) -> tuple[bool, str]:
    """May ``pod`` preempt now? ``nominated_code`` is its nominated node's filter code in
    this cycle, ``nominated_node`` that node (None when it does not exist)."""
    if (pod.pod.get("spec") or {}).get("preemptionPolicy") == "Never":
        return False, NOT_ELIGIBLE_NEVER
    if not pod.nominated_node_name:
        return True, ""
    # Preemption cannot help on the nominated node any more: look elsewhere.
    if nominated_code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return True, ""
    if nominated_node is not None:
        # Victims of an earlier preemption are still leaving: wait for them rather than
        # evicting more pods.
        for p in nominated_node.pods.values():
            if p.priority < pod.priority and p.deleting and terminating_by_preemption(p.pod):
                return False, NOT_ELIGIBLE_TERMINATING
    return True, ""


def node_code(diagnosis: Diagnosis, index: int | None) -> Code:
    """A node's code in upstream's NodeToStatus: nodes with no recorded rejection, and
    nodes that do not exist, read as the absent status, UnschedulableAndUnresolvable."""
    if index is None or diagnosis.pre_filter_msg:
        return Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    status = diagnosis.node_status(index)
    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE if status.is_success() else status.code


def potential_nodes(diagnosis: Diagnosis, num_nodes: int) -> np.ndarray:
    """Indices of the nodes whose rejection is Unschedulable (evicting pods might help)."""
    if diagnosis.pre_filter_msg:
        return np.empty(0, dtype=np.intp)
    resolvable = np.zeros(num_nodes, dtype=bool)
    for r in diagnosis.rejections:
        if r.code == Code.UNSCHEDULABLE:
            resolvable |= r.mask[:num_nodes]
    if not resolvable.any():
        return np.empty(0, dtype=np.intp)
    # One unresolvable reason (or absence from a PreFilterResult) rules the node out.
    resolvable &= ~diagnosis.unresolvable_mask(num_nodes)
    return np.flatnonzero(resolvable)


def num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """How many candidates a dry run collects: a percentage of the potential nodes, at
    least ``absolute``, at most all of them (upstream's calculateNumCandidates)."""
    n = num_nodes * percentage // 100
    return min(max(n, absolute), num_nodes)


# ---- victims on one node ---------------------------------------------------------------


def select_victims_on_node(
    host: PreemptionHost, state: CycleState, pod: PodInfo, ni: NodeInfo, budgets: PdbBudgets, now: float
) -> tuple[list[PodInfo], int, Status]:
    """The fewest pods to evict from ``ni`` for ``pod`` to fit: (victims most important
    first, how many of them break a PDB, status). Every lower-priority pod is taken off;
    if the pod then fits, pods are put back one by one (PDB-protected ones first, each
    group most important first) and kept when the pod still fits."""
    potential = [p for p in ni.pods.values() if p.priority < pod.priority]
    if not potential:
        return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
    status = host.filter_on_node(state, pod, ni.index, potential)
    if not status.is_success():
        return [], 0, status

    def key(p: PodInfo) -> tuple[int, float]:
        return more_important_key(p, now)

    potential.sort(key=key)
    violating, non_violating = filter_pods_with_pdb_violation(potential, budgets)
    order = violating + non_violating
    victims: list[PodInfo] = []
    num_violating = 0
    for j, p in enumerate(order):
        # p is back on the node; the victims so far and the pods not yet tried stay off.
        if host.filter_on_node(state, pod, ni.index, victims + order[j + 1 :]).is_success():
            continue  # reprieved
        victims.append(p)
        if j < len(violating):
            num_violating += 1
    if violating and non_violating:
        victims.sort(key=key)  # the two groups were appended one after the other
    return victims, num_violating, SUCCESS


# ---- the walk over nodes ---------------------------------------------------------------


def dry_run(
    host: PreemptionHost,
    state: CycleState,
    pod: PodInfo,
    snap: Snapshot,
    potential: np.ndarray,
    offset: int,
    wanted: int,
    budgets: PdbBudgets,
    now: float,
) -> tuple[list[Candidate], dict[int, Status], list[str]]:
    """Try the potential nodes from ``offset`` on until ``wanted`` candidates, one of them
    breaking no PDB, are found. Returns (candidates, PDB-respecting ones first; node index
    -> status of each node that is not a candidate; error messages)."""
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[int, Status] = {}
    errors: list[str] = []
    m = len(potential)
    for k in range(m):
        i = int(potential[(offset + k) % m])
        ni = snap.node_info(i)
        victims, n_violating, status = select_victims_on_node(host, state, pod, ni, budgets, now)
        if status.is_success() and victims:
            group = non_violating if n_violating == 0 else violating
            # Upstream's candidate lists hold at most ``wanted`` each; later ones are dropped.
            if len(group) < wanted:
                group.append(Candidate(ni.name, i, tuple(victims), n_violating))
            if non_violating and len(non_violating) + len(violating) >= wanted:
                break
            continue
        if status.is_success():
            status = Status.error(f'expected at least one victim pod on node "{ni.name}"')
        if status.is_error():
            errors.append(status.message())
        statuses[i] = status
    return non_violating + violating, statuses, errors


def _earliest_top_start(c: Candidate, now: float) -> float:
    """The earliest start among the victims of the highest priority on the node."""
    top = max(v.priority for v in c.victims)
    return min(start_time(v, now) for v in c.victims if v.priority == top)


def pick_one_node(candidates: list[Candidate], now: float) -> Candidate | None:
    """The best candidate (upstream's pickOneNodeForPreemption): each criterion keeps the
    best-scoring candidates and the next breaks their tie; the first one left wins."""
    if not candidates:
        return None
    criteria = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,  # victims are sorted: [0] has the highest priority
        lambda c: -sum(v.priority + _PRIORITY_SHIFT for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_top_start(c, now),  # disturb the most recently started pods
    )
    remaining = list(candidates)
    for score in criteria:
        if len(remaining) == 1:
            break
        scores = [score(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores) if s == best]
    return remaining[0]


# ---- messages and the whole attempt ----------------------------------------------------


def fit_error_text(num_all_nodes: int, statuses: dict[int, Status]) -> str:
    """Upstream's FitError text over the dry run's node statuses; every node without one
    (not a potential node) counts as "Preemption is not helpful for scheduling"."""
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + absent
    msg = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg


def aggregate_errors(messages: list[str]) -> str:
    """Upstream's utilerrors aggregate text: one message as is, several deduplicated in []."""
    if len(messages) == 1:
        return messages[0]
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


def lower_priority_nominated(host: PreemptionHost, pod: PodInfo, node_name: str) -> tuple[PodInfo, ...]:
    """Pods nominated to ``node_name`` with lower priority than ``pod``: they lose the
    nomination so they look for room elsewhere rather than wait on a node now taken."""
    return tuple(p for p in host.nominated_pods(node_name) if p.priority < pod.priority and p.uid != pod.uid)


def preempt(
    host: PreemptionHost,
    state: CycleState,
    pod: PodInfo,
    snap: Snapshot,
    diagnosis: Diagnosis,
    percentage: int,
    absolute: int,
) -> tuple[PostFilterResult | None, Status]:
    """One preemption attempt (upstream's Evaluator.Preempt), before the message prefix."""
    nominated = pod.nominated_node_name
    if nominated:
        i = snap.index_of(nominated)
        ok, msg = pod_eligible(pod, node_code(diagnosis, i), None if i is None else snap.node_info(i))
    else:
        ok, msg = pod_eligible(pod, None, None)
    if not ok:
        return None, Status(Code.UNSCHEDULABLE, (msg,))
    n = snap.num_nodes
    if n == 0:
        return None, Status.error("no nodes available")
    potential = potential_nodes(diagnosis, n)
    candidates: list[Candidate] = []
    statuses: dict[int, Status] = {}
    errors: list[str] = []
    now = host.now()
    if len(potential):
        budgets = PdbBudgets(host.pdbs())
        offset = host.rng().randrange(len(potential))
        wanted = num_candidates(len(potential), percentage, absolute)
        found = host.fast_candidate(pod, potential, offset, wanted, now)
        if found is not None:
            i, victims = found
            name = snap.node_name(i)
            return PostFilterResult(name, tuple(victims), lower_priority_nominated(host, pod, name)), SUCCESS
        candidates, statuses, errors = dry_run(host, state, pod, snap, potential, offset, wanted, budgets, now)
    if not candidates:
        if errors:
            return None, Status.error(aggregate_errors(errors))
        # An empty nomination: the pod's current one (if any) is cleared.
        return PostFilterResult(""), Status(Code.UNSCHEDULABLE, (fit_error_text(n, statuses),))
    best = candidates[0] if len(candidates) == 1 else pick_one_node(candidates, now)
    assert best is not None  # candidates is not empty
    return PostFilterResult(best.name, best.victims, lower_priority_nominated(host, pod, best.name)), SUCCESS
