"""PodTopologySpread's constraint model, node inclusion policies, and its Filter half.

Owns the parsed spread constraint (``Constraint``), the per-node eligibility masks that
the node inclusion policies ask for (``NodeEligibility``), the matching pods
(``match``), and the DoNotSchedule skew check: ``build_hard_state`` (the
PreFilter work: matching pods per topology domain, the global minimum) and
``spread_filter`` (every node judged at once). Called by
``podtopologyspread.PodTopologySpread``; ``podtopologyspread_score`` reuses the model,
the eligibility masks and the counts.

Counting follows upstream: a placed pod counts when it is in the incoming pod's
namespace, matches the constraint's selector and is not terminating (upstream skips pods
with a deletionTimestamp); an empty selector counts nothing. A node contributes to the
domain counts only if it carries every topology key of the pod's hard constraints and
passes the constraint's inclusion policies (nodeAffinityPolicy Honor: the pod's
nodeSelector and required node affinity; nodeTaintsPolicy Honor: no untolerated
NoSchedule/NoExecute taint).

Why the masks are memoised: judging node affinity or taints node by node costs
milliseconds over thousands of nodes in Python, yet the answer depends only on the pod's
nodeSelector/affinity (or tolerations) and on the nodes, which replicas share; so it is
kept per signature until ``node_epoch`` changes. Per cycle, only the matching pods are
visited (through the pod index), and domain counts are numpy bincounts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...api.selectors import LabelSelector, node_selector_requirement_matches, node_selector_term_matches
from ..cache import PodInfo, Snapshot
from ..framework import FilterResult
from ..status import Code

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
WHEN_UNSATISFIABLE = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
HONOR, IGNORE = "Honor", "Ignore"
INCLUSION_POLICIES = (HONOR, IGNORE)
ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"
_HARD_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
_MEMO_LIMIT = 4096


class Constraint:
    """One topologySpreadConstraint with its selector compiled and defaults applied."""

    __slots__ = ("max_skew", "topology_key", "hard", "selector", "min_domains", "honor_affinity", "honor_taints")

    def __init__(
        self,
        max_skew: int,
        topology_key: str,
        hard: bool,
        selector: LabelSelector | None,
        min_domains: int = 1,
        honor_affinity: bool = True,
        honor_taints: bool = False,
    ):
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.hard = hard
        self.selector = selector
        self.min_domains = min_domains
        self.honor_affinity = honor_affinity
        self.honor_taints = honor_taints

    def with_selector(self, selector: LabelSelector) -> Constraint:
        return Constraint(
            self.max_skew,
            self.topology_key,
            self.hard,
            selector,
            self.min_domains,
            self.honor_affinity,
            self.honor_taints,
        )

    def __repr__(self) -> str:
        return (
            f"Constraint({self.topology_key!r}, maxSkew={self.max_skew}, hard={self.hard}, "
            f"selector={self.selector!r}, minDomains={self.min_domains})"
        )


def parse_constraint(raw: dict[str, Any], labels: dict[str, str] | None) -> Constraint:
    """Compile a constraint; ``labels`` (the owning pod's) feed matchLabelKeys.

    matchLabelKeys adds ``key in (pod's value)`` for each listed key the pod carries,
    ANDed with the selector; a null selector (which matches nothing) stays null.
    Raises ``SelectorError``/``ValueError`` on a malformed constraint.
    """
    sel_raw = raw.get("labelSelector")
    keys = raw.get("matchLabelKeys") or ()
    if sel_raw is not None and keys and labels:
        extra = [{"key": k, "operator": "In", "values": [labels[k]]} for k in keys if k in labels]
        if extra:
            sel_raw = {
                "matchLabels": sel_raw.get("matchLabels"),
                "matchExpressions": list(sel_raw.get("matchExpressions") or ()) + extra,
            }
    return constraint_template(raw).with_selector(LabelSelector.from_dict(sel_raw))


def constraint_template(raw: dict[str, Any]) -> Constraint:
    """Everything but the selector (which default constraints get per pod)."""
    min_domains = raw.get("minDomains")
    return Constraint(
        max_skew=int(raw.get("maxSkew") or 0),
        topology_key=raw.get("topologyKey") or "",
        hard=raw.get("whenUnsatisfiable", DO_NOT_SCHEDULE) == DO_NOT_SCHEDULE,
        selector=None,
        min_domains=1 if min_domains is None else int(min_domains),
        honor_affinity=(raw.get("nodeAffinityPolicy") or HONOR) == HONOR,
        honor_taints=(raw.get("nodeTaintsPolicy") or IGNORE) == HONOR,
    )


_POD_MEMO: dict[tuple[Any, ...], tuple[Constraint, ...]] = {}


def pod_constraints(pod: dict[str, Any], labels: dict[str, str]) -> tuple[Constraint, ...]:
    """The pod's own constraints, compiled; memoised because replicas repeat them."""
    raw = (pod.get("spec") or {}).get("topologySpreadConstraints")
    if not raw:
        return ()
    # matchLabelKeys makes the result depend on the pod's labels for those keys.
    key = (repr(raw), tuple(labels.get(k) for c in raw for k in c.get("matchLabelKeys") or ()))
    hit = _POD_MEMO.get(key)
    if hit is None:
        hit = tuple(parse_constraint(c, labels) for c in raw)
        if len(_POD_MEMO) >= _MEMO_LIMIT:
            _POD_MEMO.clear()
        _POD_MEMO[key] = hit
    return hit


class Matched:
    """The matching, non-terminating placed pods of one (namespace, selector) for one
    cycle: their node rows, or (``per_node``) how many sit on each node row.

    Rows while a workload has fewer pods than the cluster has nodes, so domain counts are
    a bincount over those pods; per-node counts once it has more, so a large workload's
    cycle reads each node once instead of each of its pods.
    """

    __slots__ = ("data", "per_node")

    def __init__(self, data: np.ndarray, per_node: bool):
        self.data = data
        self.per_node = per_node

    def on_nodes(self, num_nodes: int) -> np.ndarray:
        """Matching pods on each node row."""
        return self.data if self.per_node else np.bincount(self.data, minlength=num_nodes)[:num_nodes]

    def in_domains(self, ids: np.ndarray, eligible: np.ndarray | None, num_domains: int) -> np.ndarray:
        """Matching pods per domain over eligible nodes (None: every node is), plus a
        trailing 0 (for id -1). Eligible nodes all carry the key, so no id read here is -1."""
        if self.per_node:
            if eligible is None:
                counts = np.bincount(ids, weights=self.data, minlength=num_domains + 1)
            else:
                counts = np.bincount(ids[eligible], weights=self.data[eligible], minlength=num_domains + 1)
            return counts.astype(np.int64)
        rows = self.data if eligible is None else self.data[eligible[self.data]]
        return np.bincount(ids[rows], minlength=num_domains + 1)


# Matching pods per (namespace, selector), for one scheduling cycle.
RowsMemo = dict[tuple[str, LabelSelector], Matched]


def match(snap: Snapshot, namespace: str, selector: LabelSelector, memo: RowsMemo) -> Matched:
    """The matching pods of ``namespace`` (an empty selector counts nothing, as
    upstream). ``memo`` lives for one cycle, so constraints sharing a selector, and
    PreFilter and PreScore, count once."""
    key = (namespace, selector)
    m = memo.get(key)
    if m is None:
        if selector.empty or selector.matches_nothing:
            m = Matched(np.empty(0, dtype=np.intp), False)
        else:
            m = Matched(*snap.pods.matching(namespace, selector, snap.num_nodes))
        memo[key] = m
    return m


# ---- node inclusion policies -------------------------------------------------------------


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """core/v1 Toleration.ToleratesTaint."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def _lut_mask(snap: Snapshot, key: object, accepts: Callable[[dict[str, str]], object]) -> np.ndarray:
    """Per-node mask of ``accepts(labels_restricted_to_key)``, evaluated once per value."""
    if not isinstance(key, str) or not key:
        return np.full(snap.num_nodes, bool(accepts({})))
    topo = snap.topology(key)
    lut = [bool(accepts({key: v})) for v in topo.values]
    lut.append(bool(accepts({})))  # position -1: nodes without the label
    return np.array(lut, dtype=bool)[topo.ids]


def _term_mask(snap: Snapshot, term: dict[str, Any]) -> np.ndarray:
    exprs, fields = term.get("matchExpressions") or (), term.get("matchFields") or ()
    if not exprs and not fields:
        return np.zeros(snap.num_nodes, dtype=bool)  # an empty term matches nothing
    if fields:  # metadata.name fields: rare, so judged node by node
        return np.fromiter(
            (node_selector_term_matches(term, ni.labels, ni.name) for ni in snap.node_infos),
            dtype=bool,
            count=snap.num_nodes,
        )
    mask = np.ones(snap.num_nodes, dtype=bool)
    for req in exprs:
        mask &= _lut_mask(snap, req.get("key"), partial(node_selector_requirement_matches, req))
    return mask


def _label_is(key: str, value: object, labels: dict[str, str]) -> bool:
    return labels.get(key) == value


def _affinity_mask(snap: Snapshot, node_selector: dict[str, Any] | None, required: dict[str, Any] | None) -> np.ndarray:
    mask = np.ones(snap.num_nodes, dtype=bool)
    for k, v in (node_selector or {}).items():
        mask &= _lut_mask(snap, k, partial(_label_is, k, v))
    if required is not None:
        terms = required.get("nodeSelectorTerms") or ()
        any_term = np.zeros(snap.num_nodes, dtype=bool)
        for term in terms:
            any_term |= _term_mask(snap, term)
        mask &= any_term
    return mask


class NodeEligibility:
    """Which nodes count for a constraint, memoised per pod signature until ``node_epoch`` changes.

    Also memoises what derives from those masks alone: which domains hold an eligible
    node (for the skew's global minimum and minDomains), and which nodes lack a key.
    """

    def __init__(self) -> None:
        self._owner: object = None  # the cache's node list: a new cache must not reuse old masks
        self._epoch = -1
        self._memo: dict[tuple[Any, ...], Any] = {}  # masks, and tuples derived from them, by kind
        self._tainted: list[tuple[int, list[dict[str, Any]]]] | None = None

    def _sync(self, snap: Snapshot) -> None:
        if self._owner is not snap.node_infos or self._epoch != snap.node_epoch or len(self._memo) > _MEMO_LIMIT:
            self._owner, self._epoch = snap.node_infos, snap.node_epoch
            self._memo.clear()
            self._tainted = None

    def _affinity(self, snap: Snapshot, spec: dict[str, Any], sig: tuple[Any, ...]) -> np.ndarray:
        key = ("affinity", sig)
        mask = self._memo.get(key)
        if mask is None:
            required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            mask = self._memo[key] = _affinity_mask(snap, spec.get("nodeSelector"), required)
        return mask

    def _taints(self, snap: Snapshot, tolerations: Sequence[dict[str, Any]], sig: str) -> np.ndarray | None:
        if self._tainted is None:
            self._tainted = [
                (ni.index, hard)
                for ni in snap.node_infos
                if ni.taints and (hard := [t for t in ni.taints if t.get("effect") in _HARD_TAINT_EFFECTS])
            ]
        if not self._tainted:
            return None
        key = ("taints", sig)
        mask = self._memo.get(key)
        if mask is None:
            mask = self._memo[key] = np.ones(snap.num_nodes, dtype=bool)
            for i, hard in self._tainted:
                if not all(any(tolerates(tol, t) for tol in tolerations) for t in hard):
                    mask[i] = False
        return mask

    def with_keys(self, snap: Snapshot, keys: tuple[str, ...]) -> tuple[np.ndarray, bool]:
        """(nodes carrying every key in ``keys``, whether that is all nodes)."""
        self._sync(snap)
        hit = self._memo.get(("keys", keys))
        if hit is None:
            mask = np.ones(snap.num_nodes, dtype=bool)
            for k in keys:
                mask &= snap.topology(k).ids >= 0
            hit = self._memo[("keys", keys)] = (mask, bool(mask.all()))
        return hit

    def eligible(
        self, snap: Snapshot, pod: dict[str, Any], c: Constraint, keys: tuple[str, ...]
    ) -> tuple[np.ndarray, tuple[Any, ...]]:
        """(nodes counting for ``c``: carrying every key of ``keys`` and admitted by its
        inclusion policies, a hashable signature of that mask for this epoch)."""
        spec = pod.get("spec") or {}
        aff_sig = tnt_sig = None
        if c.honor_affinity:
            node_selector = spec.get("nodeSelector")
            required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            if node_selector or required is not None:
                aff_sig = (repr(node_selector), repr(required))
        if c.honor_taints:
            tnt_sig = repr(spec.get("tolerations") or ())
        sig = (keys, aff_sig, tnt_sig)
        mask, every = self.with_keys(snap, keys)
        hit = self._memo.get(("eligible", sig))
        if hit is None:
            if aff_sig is not None:
                mask = mask & self._affinity(snap, spec, aff_sig)
                every = bool(mask.all())
            if tnt_sig is not None:
                taints = self._taints(snap, spec.get("tolerations") or (), tnt_sig)
                if taints is not None:
                    mask = mask & taints
                    every = bool(mask.all())
            hit = self._memo[("eligible", sig)] = (mask, every)
        return hit[0], sig

    def covers_all(self, sig: tuple[Any, ...]) -> bool:
        """Whether the mask ``eligible`` gave for ``sig`` (this epoch) admits every node."""
        return bool(self._memo[("eligible", sig)][1])

    def domains(self, snap: Snapshot, key: str, sig: tuple[Any, ...], eligible: np.ndarray) -> tuple[np.ndarray, int]:
        """(domains of ``key`` holding an eligible node, how many), for mask ``sig``."""
        self._sync(snap)
        memo_key = ("domains", key, sig)
        hit = self._memo.get(memo_key)
        if hit is None:
            topo = snap.topology(key)
            present = np.bincount(topo.ids[eligible & (topo.ids >= 0)], minlength=topo.num_domains) > 0
            hit = self._memo[memo_key] = (present, int(np.count_nonzero(present)))
        return hit


# ---- PreFilter and Filter ----------------------------------------------------------------


class HardState:
    """One DoNotSchedule constraint, ready for Filter: ``domain_pods`` has one trailing 0
    so that ``domain_pods[ids]`` reads 0 for nodes without the label (id -1)."""

    __slots__ = ("constraint", "ids", "domain_pods", "num_domains", "min_match", "self_match", "missing")

    def __init__(
        self,
        constraint: Constraint,
        ids: np.ndarray,
        domain_pods: np.ndarray,
        num_domains: int,
        min_match: int,
        self_match: int,
        missing: bool,
    ) -> None:
        self.constraint = constraint
        self.ids = ids
        self.domain_pods = domain_pods
        self.num_domains = num_domains
        self.min_match = min_match
        self.self_match = self_match
        self.missing = missing  # any node lacks the key


def build_hard_state(
    snap: Snapshot, pod: PodInfo, hard: Sequence[Constraint], eligibility: NodeEligibility, memo: RowsMemo
) -> list[HardState]:
    """PreFilter: per constraint, matching pods per domain and the global minimum."""
    keys = tuple(dict.fromkeys(c.topology_key for c in hard))
    out = []
    for c in hard:
        topo = snap.topology(c.topology_key)
        eligible, sig = eligibility.eligible(snap, pod.pod, c, keys)
        present, num_domains = eligibility.domains(snap, c.topology_key, sig, eligible)
        selector = c.selector
        assert selector is not None  # compiled: only templates lack a selector
        pods = match(snap, pod.namespace, selector, memo).in_domains(topo.ids, eligible, topo.num_domains)
        # Fewer eligible domains than minDomains: the global minimum is taken as 0.
        if num_domains < c.min_domains or num_domains == 0:
            min_match = 0
        elif num_domains == topo.num_domains:
            min_match = int(pods[:-1].min())
        else:
            min_match = int(pods[:-1][present].min())
        self_match = 1 if selector.matches(pod.labels) else 0
        _, all_have = eligibility.with_keys(snap, (c.topology_key,))
        out.append(HardState(c, topo.ids, pods, num_domains, min_match, self_match, not all_have))
    return out


def spread_filter(num_nodes: int, states: list[HardState]) -> FilterResult:
    """Filter: a node fails at its first failing constraint, as upstream's loop returns."""
    undecided = np.ones(num_nodes, dtype=bool)
    missing_all = np.zeros(num_nodes, dtype=bool)
    skewed_all = np.zeros(num_nodes, dtype=bool)
    for st in states:
        # matchNum + selfMatch - minMatch > maxSkew, judged once per domain.
        bad_domain = st.domain_pods > st.constraint.max_skew + st.min_match - st.self_match
        bad_domain[-1] = False  # the slot nodes without the label read
        if not st.missing and not bad_domain.any():
            continue
        skewed = bad_domain[st.ids] & undecided
        if st.missing:
            missing = (st.ids < 0) & undecided
            missing_all |= missing
            undecided &= ~missing
        skewed_all |= skewed
        undecided &= ~skewed
    failures = []
    if missing_all.any():
        failures.append((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NODE_LABEL_NOT_MATCH, missing_all))
    if skewed_all.any():
        failures.append((Code.UNSCHEDULABLE, ERR_CONSTRAINTS_NOT_MATCH, skewed_all))
    return FilterResult(undecided, failures)
