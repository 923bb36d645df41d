"""InterPodAffinity: required and preferred pod (anti-)affinity, between the incoming pod
and the pods already placed.

Owns the PreFilter/Filter pair (the incoming pod's required affinity and anti-affinity,
and the placed pods' required anti-affinity against the incoming pod), the
PreScore/Score/NormalizeScore chain (preferred terms both ways, plus the placed pods'
required affinity weighted by ``hardPodAffinityWeight``) and ``assigned_pod_may_help``,
the queue's test for waking a pending pod when a pod is bound. The framework calls the
extension points; the scheduler's queue calls the helper. Args (upstream's
InterPodAffinityArgs):

    hardPodAffinityWeight: 0..100 (default 1)
    ignorePreferredTermsOfExistingPods: bool (default false)

How the work is kept per pod, not per placed pod: the pods a term of the incoming pod
selects come from the pod index's label lookup (``PodIndex.select_term``); placed pods'
terms come from ``PodIndex.groups``, one group per distinct term, and a small label index
over those groups (``_GroupMatcher``) finds the few whose selector can match the incoming
pod. Matching pods are turned into node rows, folded into per-domain totals with
``np.bincount`` over ``Topology.ids`` and read back per node by indexing. Upstream keys
its totals by (topology key, value) pairs; one array per topology key over its domains is
the same thing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from ..cache import PodInfo, Snapshot, Topology
from ..framework import (
    MAX_NODE_SCORE,
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterResult,
    PluginError,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from ..podindex import TermGroup
from ..podterms import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    NamespaceLabels,
)
from ..status import SKIP, SUCCESS, Code, Status

ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MAX_HARD_POD_AFFINITY_WEIGHT = 100

# Namespace labels by name: a lookup function or a mapping.
NamespaceLookup = NamespaceLabels | Mapping[str, dict[str, str]]


def _rows(pods: Collection[PodInfo]) -> np.ndarray:
    """Node rows of placed pods (the index only holds pods attached to a node)."""
    # ``node`` is set on every indexed pod; a check per pod would cost this hot loop.
    return np.fromiter((p.node.index for p in pods), dtype=np.intp, count=len(pods))  # type: ignore[union-attr]


class _DomainTotals:
    """Integer totals per topology domain, one array per topology key.

    Each array has a trailing slot that always stays 0: a node lacking the key has id -1,
    so indexing with ``Topology.ids`` reads that slot without a mask.
    """

    __slots__ = ("_snap", "by_key")

    def __init__(self, snap: Snapshot) -> None:
        self._snap = snap
        self.by_key: dict[str, tuple[Topology, np.ndarray]] = {}  # key -> (Topology, int64 totals)

    def add(self, key: str, rows: np.ndarray, weight: int = 1) -> None:
        """Add ``weight`` for each pod row to the domain of that row's node."""
        if not len(rows) or not weight:
            return
        topo = self._snap.topology(key)
        ids = topo.ids[rows]
        ids = ids[ids >= 0]  # pods on nodes without the key count nowhere, as upstream
        if not len(ids):
            return
        counts = np.bincount(ids, minlength=topo.num_domains + 1)
        if weight != 1:
            counts *= weight
        entry = self.by_key.get(key)
        if entry is None:
            self.by_key[key] = (topo, counts)
        else:
            totals = entry[1]
            totals += counts

    def any_nonzero(self) -> bool:
        return any(totals.any() for _, totals in self.by_key.values())

    def at(self, key: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Per node (all rows, or ``rows``), the total of the node's domain for ``key``."""
        entry = self.by_key.get(key)
        if entry is None:
            return np.zeros(self._snap.num_nodes if rows is None else len(rows), dtype=np.int64)
        topo, totals = entry
        return totals[topo.ids if rows is None else topo.ids[rows]]

    def sum(self, rows: np.ndarray | None = None) -> np.ndarray | None:
        """Per node, the totals of its domains summed over keys; None when there are none."""
        out = None
        for key in self.by_key:
            v = self.at(key, rows)
            out = v if out is None else out + v
        return out


class _GroupMatcher:
    """Finds, among placed pods' term groups of one kind, those whose term covers a pod.

    Rebuilt whenever the index's list of groups changes (a distinct term appears or goes);
    replicas joining an existing group leave the list unchanged. Groups are indexed by one
    ``=``/``in`` requirement of their selector, so a pod only tests the groups keyed by
    its own labels plus those whose selector has no such requirement.
    """

    __slots__ = ("kind", "_groups", "_by_label", "_always")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._groups: list[TermGroup] = []  # holds the groups, so identity comparison stays sound
        self._by_label: dict[tuple[str, str], list[TermGroup]] = {}
        self._always: list[TermGroup] = []

    def _rebuild(self, groups: list[TermGroup]) -> None:
        self._groups, self._by_label, self._always = groups, {}, []
        for g in groups:
            sel = g.term.selector
            if sel.matches_nothing:
                continue
            required = sel.required_values()
            if not required:
                self._always.append(g)
                continue
            key, values = min(required, key=lambda kv: len(kv[1]))
            for v in values:
                self._by_label.setdefault((key, v), []).append(g)

    def matching(self, snap: Snapshot, namespace: str, labels: dict[str, str]) -> list[TermGroup]:
        groups = snap.pods.groups(self.kind)
        if groups != self._groups:  # element identity: TermGroup has no __eq__
            self._rebuild(groups)
        if not groups:
            return []
        candidates = self._always
        by_label = self._by_label
        for kv in labels.items():
            hit = by_label.get(kv)
            if hit:
                candidates = candidates + hit
        nsl = snap.namespace_labels
        return [g for g in candidates if g.term.matches(namespace, labels, nsl)]


class _FilterState:
    __slots__ = ("affinity_keys", "affinity", "first_pod_ok", "anti", "existing")

    def __init__(
        self,
        affinity_keys: tuple[str, ...],
        affinity: _DomainTotals,
        first_pod_ok: bool,
        anti: _DomainTotals,
        existing: _DomainTotals,
    ) -> None:
        self.affinity_keys = affinity_keys  # distinct topology keys of required affinity terms
        self.affinity = affinity  # _DomainTotals of pods matching all required affinity terms
        self.first_pod_ok = first_pod_ok  # the first-pod exception applies
        self.anti = anti  # _DomainTotals of pods matching the pod's required anti-affinity
        self.existing = existing  # _DomainTotals of placed pods whose anti-affinity the pod breaks


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = "InterPodAffinity"
    EVENTS = frozenset(
        {
            ClusterEvent.ASSIGNED_POD_ADD,
            ClusterEvent.ASSIGNED_POD_UPDATE,
            ClusterEvent.ASSIGNED_POD_DELETE,
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_LABEL,
        }
    )
    PRE_FILTER_KEY = "PreFilter" + NAME
    PRE_SCORE_KEY = "PreScore" + NAME

    def assigned_pod_may_help(self, pending: PodInfo, assigned: PodInfo, namespace_labels: NamespaceLookup) -> bool:
        return assigned_pod_may_help(pending, assigned, namespace_labels)

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...] | None:
        # Skipped at PreFilter: no required term of the pod or of a placed pod concerns it,
        # and placing it (it adds no required term) keeps it so. Otherwise its verdict on a
        # node reads pods on other nodes of the domain.
        if self.NAME not in state.skip_filter:
            return None
        aff = (pod.pod.get("spec") or {}).get("affinity") or {}
        return (pod.namespace, pod.labels, aff.get("podAffinity"), aff.get("podAntiAffinity"))

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        args = dict(args or {})
        hard = args.pop("hardPodAffinityWeight", None)
        ignore = args.pop("ignorePreferredTermsOfExistingPods", None)
        if args:
            raise ValueError(f"{self.NAME}: unknown arguments {sorted(args)}")
        if hard is None:
            hard = DEFAULT_HARD_POD_AFFINITY_WEIGHT
        if isinstance(hard, bool) or not isinstance(hard, int) or not 0 <= hard <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(
                f"{self.NAME}: hardPodAffinityWeight {hard!r} is not in valid range [0, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )
        if ignore is not None and not isinstance(ignore, bool):
            raise ValueError(f"{self.NAME}: ignorePreferredTermsOfExistingPods must be a boolean, got {ignore!r}")
        self.hard_pod_affinity_weight = hard
        self.ignore_preferred_terms_of_existing_pods = bool(ignore)
        self._existing_anti = _GroupMatcher(REQUIRED_ANTI_AFFINITY)
        self._existing_required = _GroupMatcher(REQUIRED_AFFINITY)
        self._existing_preferred = _GroupMatcher(PREFERRED_AFFINITY)
        self._existing_preferred_anti = _GroupMatcher(PREFERRED_ANTI_AFFINITY)

    # ---- PreFilter / Filter --------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        terms = pod.terms
        affinity = terms.required_affinity if terms is not None else ()
        anti = terms.required_anti_affinity if terms is not None else ()
        if not (affinity or anti or snap.pods.any_groups(REQUIRED_ANTI_AFFINITY)):
            return SKIP, None
        violated = self._existing_anti.matching(snap, pod.namespace, pod.labels)
        if not (affinity or anti or violated):
            return SKIP, None
        existing = _DomainTotals(snap)
        for g in violated:
            existing.add(g.term.topology_key, _rows(g.pods.values()))
        # As upstream: skip when no placed pod's term counted anywhere and the pod has none.
        if not (affinity or anti or existing.by_key):
            return SKIP, None
        nsl = snap.namespace_labels
        aff_totals = _DomainTotals(snap)
        first_pod_ok = False
        if affinity:
            # A placed pod counts for the incoming pod's affinity only if it matches every term.
            pods = snap.pods.select_term(affinity[0], nsl)
            for t in affinity[1:]:
                pods = [p for p in pods if t.matches(p.namespace, p.labels, nsl)]
            rows = _rows(pods)
            for t in affinity:
                aff_totals.add(t.topology_key, rows)
            first_pod_ok = not aff_totals.by_key and all(t.matches(pod.namespace, pod.labels, nsl) for t in affinity)
        anti_totals = _DomainTotals(snap)
        for t in anti:
            anti_totals.add(t.topology_key, _rows(snap.pods.select_term(t, nsl)))
        keys = tuple(dict.fromkeys(t.topology_key for t in affinity))
        state.write(self.PRE_FILTER_KEY, _FilterState(keys, aff_totals, first_pod_ok, anti_totals, existing))
        return SUCCESS, None

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        s = state.read(self.PRE_FILTER_KEY)
        if s is None:
            raise PluginError(f'reading "{self.PRE_FILTER_KEY}" from cycleState: not found')
        aff_ok = self._affinity_ok(s, snap)
        anti_bad = _positive(s.anti.sum())
        existing_bad = _positive(s.existing.sum())
        failures = []
        feasible = np.ones(snap.num_nodes, dtype=bool) if aff_ok is None else aff_ok.copy()
        if aff_ok is not None and not aff_ok.all():
            failures.append((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY, ~aff_ok))
        # Each node is charged to the first check it fails, as upstream returns at the first.
        for bad, reason in ((anti_bad, ERR_ANTI_AFFINITY), (existing_bad, ERR_EXISTING_ANTI_AFFINITY)):
            if bad is None:
                continue
            charged = bad & feasible
            if charged.any():
                failures.append((Code.UNSCHEDULABLE, reason, charged))
                feasible &= ~bad
        return FilterResult(feasible, failures)

    @staticmethod
    def _affinity_ok(s: _FilterState, snap: Snapshot) -> np.ndarray | None:
        """Nodes passing the pod's required affinity; None when it has none."""
        if not s.affinity_keys:
            return None
        ok = None
        for key in s.affinity_keys:
            # Every topology key must be on the node, even under the first-pod exception.
            has_key = snap.topology(key).ids >= 0
            term_ok = has_key if s.first_pod_ok else has_key & (s.affinity.at(key) > 0)
            ok = term_ok if ok is None else ok & term_ok
        return ok

    # ---- PreScore / Score / NormalizeScore ---------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        terms = pod.terms
        preferred = terms.preferred_affinity if terms is not None else ()
        preferred_anti = terms.preferred_anti_affinity if terms is not None else ()
        if not len(candidates):
            return SKIP
        if self.ignore_preferred_terms_of_existing_pods and not (preferred or preferred_anti):
            return SKIP  # upstream then ignores the placed pods' required terms too
        kinds = (PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY) + (
            (REQUIRED_AFFINITY,) if self.hard_pod_affinity_weight else ()
        )
        if not (preferred or preferred_anti or snap.pods.any_groups(*kinds)):
            return SKIP  # nothing would add to any total: the all-zero case below
        totals = _DomainTotals(snap)
        nsl = snap.namespace_labels
        # Each placed pod a term selects adds (or takes) the term's weight in its domain.
        for t in preferred:
            totals.add(t.topology_key, _rows(snap.pods.select_term(t, nsl)), t.weight)
        for t in preferred_anti:
            totals.add(t.topology_key, _rows(snap.pods.select_term(t, nsl)), -t.weight)
        # Placed pods' terms that cover the incoming pod: each carrier counts once.
        ns, labels = pod.namespace, pod.labels
        if self.hard_pod_affinity_weight:
            for g in self._existing_required.matching(snap, ns, labels):
                totals.add(g.term.topology_key, _rows(g.pods.values()), self.hard_pod_affinity_weight)
        for g in self._existing_preferred.matching(snap, ns, labels):
            totals.add(g.term.topology_key, _rows(g.pods.values()), g.term.weight)
        for g in self._existing_preferred_anti.matching(snap, ns, labels):
            totals.add(g.term.topology_key, _rows(g.pods.values()), -g.term.weight)
        # All-zero totals score every node alike, which normalises to 0: same as skipping.
        if not totals.any_nonzero():
            return SKIP
        state.write(self.PRE_SCORE_KEY, totals)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        totals = state.read(self.PRE_SCORE_KEY)
        if totals is None:
            raise PluginError(f'reading "{self.PRE_SCORE_KEY}" from cycleState: not found')
        raw = totals.sum(candidates)  # a fresh array (fancy indexing): normalize may write it
        return np.zeros(len(candidates), dtype=np.int64) if raw is None else raw

    def normalize(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> None:
        """Min-max scaling over the scored nodes, in float64 then truncated, as upstream."""
        if not len(scores):
            return
        lo = int(scores.min())
        diff = int(scores.max()) - lo
        if diff <= 0:
            scores[:] = 0
            return
        # Same operation order as upstream, so float rounding truncates the same way.
        scores[:] = (float(MAX_NODE_SCORE) * ((scores - lo) / float(diff))).astype(np.int64)


def _positive(per_node: np.ndarray | None) -> np.ndarray | None:
    return None if per_node is None else per_node > 0


def assigned_pod_may_help(pending: PodInfo, assigned: PodInfo, namespace_labels: NamespaceLookup) -> bool:
    """Could binding ``assigned`` make ``pending`` schedulable? True when one of the
    pending pod's required affinity terms covers the assigned pod (upstream's
    AssignedPodAdded/Updated move rule). ``namespace_labels`` resolves namespace labels:
    a callable ``name -> dict | None`` or a mapping."""
    terms = pending.terms
    if terms is None or not terms.required_affinity:
        return False
    lookup: NamespaceLabels = namespace_labels if callable(namespace_labels) else namespace_labels.get
    return any(t.matches(assigned.namespace, assigned.labels, lookup) for t in terms.required_affinity)
