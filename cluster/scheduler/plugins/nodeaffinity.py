"""NodeAffinity: a pod's nodeSelector and node affinity, and the profile's addedAffinity.

Owns the evaluation of node selector terms (compiled by ``cluster/api/nodeaffinity.py``)
over every node at once (``NodeLabelColumns``, ``RequiredAffinityMasks``, which
PodTopologySpread reuses), and the plugin. The plugin is
built by the registry from upstream's NodeAffinityArgs:

    addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: NodeSelector,
                    preferredDuringSchedulingIgnoredDuringExecution: [PreferredSchedulingTerm]}

and run by the framework at PreFilter, Filter, PreScore, Score and NormalizeScore.

Why it is fast: labels are read as the cache's per-key domain ids (``snap.topology``), so
a requirement is a table lookup over all nodes; the mask of a pod's required terms and
the raw scores of its preferred terms are memoised per (term text, ``node_epoch``), so
replicas share them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ...api.nodeaffinity import (
    COMPILE_LIMIT,
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    OBJECT_NAME_FIELD,
    OP_DNE,
    OP_EXISTS,
    OP_GT,
    OP_IN,
    OP_LT,
    OP_NOT_IN,
    PREFERRED,
    REQUIRED,
    RequiredNodeAffinity,
    SelectorTerm,
    compile_node_selector,
    compile_preferred,
    int64,
    pod_required,
    required_node_affinity,
)
from ..cache import PodInfo, Snapshot, Topology
from ..framework import (
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
from ..status import SKIP, SUCCESS, Code, Status
from .helper import default_normalize_score
from .tainttoleration import EpochMemo, frozen

# ---- evaluating over every node -------------------------------------------------------------


class NodeLabelColumns:
    """Node labels of one snapshot epoch as lookup tables.

    For a label key, ``snap.topology(key).ids[i]`` is the index of node ``i``'s value (-1
    when absent); a requirement becomes a boolean table over those values, with one extra
    slot at the end for "absent", indexed by ``ids`` (-1 lands on that slot).
    """

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.n = snap.num_nodes
        self._index: dict[str, dict[str, int]] = {}
        self._ints: dict[str, list[int | None]] = {}

    def _column(self, key: str) -> tuple[Topology, dict[str, int]]:
        topo = self.snap.topology(key)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = {v: i for i, v in enumerate(topo.values)}
        return topo, index

    def _table(self, key: str, op: int, operand: Any) -> tuple[np.ndarray, np.ndarray]:
        topo, index = self._column(key)
        table = np.zeros(len(topo.values) + 1, dtype=bool)
        if op in (OP_IN, OP_NOT_IN):
            rows = [index[v] for v in operand if v in index]
            table[rows] = True
            if op == OP_NOT_IN:
                np.logical_not(table, out=table)  # the absent slot becomes True, as NotIn wants
        elif op in (OP_GT, OP_LT):
            ints = self._ints.get(key)
            if ints is None:
                ints = self._ints[key] = [int64(v) for v in topo.values]
            table[:-1] = [x is not None and (x > operand if op == OP_GT else x < operand) for x in ints]
        return table, topo.ids

    def requirement(self, op: int, key: str, operand: Any) -> np.ndarray:
        """Nodes meeting one label requirement; ``operand`` as in ``SelectorTerm.labels``."""
        if op in (OP_EXISTS, OP_DNE):
            ids = self.snap.topology(key).ids
            return ids >= 0 if op == OP_EXISTS else ids < 0
        table, ids = self._table(key, op, operand)
        return table[ids]

    def field(self, is_in: bool, key: str, value: str) -> np.ndarray:
        if key != OBJECT_NAME_FIELD:  # a node has no other field: it reads as ""
            return np.full(self.n, (value == "") == is_in, dtype=bool)
        mask = np.zeros(self.n, dtype=bool)
        i = self.snap.index_of(value)
        if i is not None:
            mask[i] = True
        return mask if is_in else ~mask

    def term(self, term: SelectorTerm) -> np.ndarray:
        out = np.ones(self.n, dtype=bool)
        for req in term.labels:
            out &= self.requirement(*req)
        for req in term.fields:
            out &= self.field(*req)
        return out

    def terms(self, terms: tuple[SelectorTerm, ...]) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        for t in terms:
            out |= self.term(t)
        return out

    def required(self, req: RequiredNodeAffinity) -> np.ndarray:
        out = np.ones(self.n, dtype=bool) if req.terms is None else self.terms(req.terms)
        for k, v in req.selector:
            out &= self.requirement(OP_IN, k, (v,))
        return out

    def preferred(self, prefs: tuple[tuple[int, SelectorTerm], ...]) -> np.ndarray:
        raw = np.zeros(self.n, dtype=np.int64)
        for weight, term in prefs:
            raw += self.term(term) * weight
        return raw


class RequiredAffinityMasks:
    """Per pod, the mask of nodes satisfying its nodeSelector and required node affinity,
    memoised per (affinity text, ``node_epoch``). One instance per plugin; PodTopologySpread
    keeps its own for nodeAffinityPolicy: Honor."""

    def __init__(self, limit: int = 256) -> None:
        self.memo = EpochMemo(NodeLabelColumns, limit)

    def mask(self, pod: dict[str, Any], snap: Snapshot) -> np.ndarray:
        """Read-only bool mask over the snapshot's nodes."""
        key, req = required_node_affinity(pod)
        return self.mask_for(key, req, snap)

    def mask_for(self, key: tuple[str, str], req: RequiredNodeAffinity, snap: Snapshot) -> np.ndarray:
        memo = self.memo.sync(snap)
        mask: np.ndarray | None = memo.get(("required", key))
        if mask is None:
            mask = memo.put(("required", key), frozen(memo.base.required(req)))
        return mask


def prefilter_node_names(terms: Iterable[Any]) -> set[str] | None:
    """Nodes the required terms confine the pod to by ``metadata.name In`` field
    requirements: the union over terms of each term's intersection, or None when some term
    has no such requirement (or there are no terms)."""
    names: set[str] | None = None
    for term in terms:
        term_names: set[str] | None = None
        for r in (term.get("matchFields") if isinstance(term, dict) else None) or ():
            if r.get("key") == OBJECT_NAME_FIELD and r.get("operator") == "In":
                values = set(r.get("values") or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names = term_names if names is None else names | term_names
    return names


# ---- the plugin -----------------------------------------------------------------------------

_PRESCORE_KEY = "PreScoreNodeAffinity"
# Compiled preferred scheduling terms: (weight, term) each.
_Preferred = tuple[tuple[int, SelectorTerm], ...]
# The Filter's (feasible, failures) for one required affinity.
_Verdict = tuple[np.ndarray, list[tuple[Code, str, np.ndarray]]]


def _parse_added_affinity(added: object) -> tuple[tuple[SelectorTerm, ...] | None, _Preferred | None]:
    """(required terms or None, preferred (weight, term)s or None) of NodeAffinityArgs.addedAffinity."""
    if added is None:
        return None, None
    if not isinstance(added, dict):
        raise ValueError(f"NodeAffinity: addedAffinity must be a NodeAffinity map, got {added!r}")
    unknown = sorted(set(added) - {REQUIRED, PREFERRED})
    if unknown:
        raise ValueError(f"NodeAffinity: addedAffinity: unknown fields {unknown}")
    required = preferred = None
    if added.get(REQUIRED) is not None:
        required, errors = compile_node_selector(added[REQUIRED], f"addedAffinity.{REQUIRED}")
        if errors:
            raise ValueError(f"NodeAffinity: {'; '.join(errors)}")
    if added.get(PREFERRED):
        preferred, errors = compile_preferred(added[PREFERRED], f"addedAffinity.{PREFERRED}")
        if errors:
            raise ValueError(f"NodeAffinity: {'; '.join(errors)}")
    return required, preferred or None


def _pod_preferred(pod: PodInfo) -> object:
    affinity = (pod.pod.get("spec") or {}).get("affinity")
    return ((affinity.get("nodeAffinity") or {}).get(PREFERRED)) if affinity else None


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = "NodeAffinity"
    EVENTS = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL})

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        args = dict(args or {})
        added = args.pop("addedAffinity", None)
        if args:
            raise ValueError(f"{self.NAME}: unknown arguments {sorted(args)}")
        self._added_required, self._added_preferred = _parse_added_affinity(added)
        self._masks = RequiredAffinityMasks(limit=512)
        self._preferred: dict[str, tuple[_Preferred, list[str]]] = {}  # pod's preferred terms text -> (terms, errors)

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...]:
        spec = pod.pod.get("spec") or {}
        return (spec.get("nodeSelector"), (spec.get("affinity") or {}).get("nodeAffinity"))

    # ---- PreFilter / Filter -------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        node_selector, required = pod_required(pod.pod)
        if node_selector is None and required is None and self._added_required is None:
            return SKIP, None
        if not isinstance(required, dict):
            return SUCCESS, None
        names = prefilter_node_names(required.get("nodeSelectorTerms") or ())
        if names is None:
            return SUCCESS, None
        if not names:  # every term names nodes, and within each term the names exclude each other
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,)), None
        return SUCCESS, PreFilterResult(frozenset(names))

    def _added_mask(self, memo: EpochMemo) -> np.ndarray:
        mask: np.ndarray | None = memo.get(("added-required",))
        if mask is None:
            mask = memo.put(("added-required",), frozen(memo.base.terms(self._added_required)))
        return mask

    def _verdict(self, snap: Snapshot, pod: dict[str, Any]) -> _Verdict:
        key, req = required_node_affinity(pod)
        memo = self._masks.memo.sync(snap)
        verdict: _Verdict | None = memo.get(("filter", key))
        if verdict is not None:
            return verdict
        pod_ok = self._masks.mask_for(key, req, snap)
        failures: list[tuple[Code, str, np.ndarray]] = []
        if self._added_required is None:
            feasible, pod_fail = pod_ok, ~pod_ok
        else:
            # Upstream checks the enforced affinity first: a node failing both is reported once, as enforced.
            added_ok = self._added_mask(memo)
            feasible, pod_fail = frozen(added_ok & pod_ok), added_ok & ~pod_ok
            if not added_ok.all():
                failures.append((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED, frozen(~added_ok)))
        if pod_fail.any():
            failures.append((Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD, frozen(pod_fail)))
        return memo.put(("filter", key), (feasible, failures))

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        feasible, failures = self._verdict(snap, pod.pod)
        return FilterResult(feasible.copy(), list(failures))

    # ---- PreScore / Score ---------------------------------------------------------------

    def _compiled_preferred(self, prefs: object) -> tuple[str, _Preferred]:
        key = repr(prefs)
        entry = self._preferred.get(key)
        if entry is None:
            if len(self._preferred) >= COMPILE_LIMIT:
                del self._preferred[next(iter(self._preferred))]
            entry = self._preferred[key] = compile_preferred(prefs, PREFERRED)
        terms, errors = entry
        if errors:
            raise PluginError(f"parsing {'; '.join(errors)}")
        return key, terms

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        prefs = _pod_preferred(pod)
        if prefs is None and self._added_preferred is None:
            return SKIP
        key, terms = self._compiled_preferred(prefs) if prefs is not None else (None, ())
        if not terms and self._added_preferred is None:
            return SKIP  # upstream scores every node 0 here, which changes no ranking
        state.write(_PRESCORE_KEY, (key, terms))
        return SUCCESS

    def _raw_scores(self, snap: Snapshot, key: str | None, terms: _Preferred) -> np.ndarray:
        memo = self._masks.memo.sync(snap)
        raw: np.ndarray | None = memo.get(("score", key))
        if raw is None:
            raw = memo.base.preferred(terms)
            if self._added_preferred is not None:
                added: np.ndarray | None = memo.get(("added-preferred",))
                if added is None:
                    added = memo.put(("added-preferred",), frozen(memo.base.preferred(self._added_preferred)))
                raw += added
            raw = memo.put(("score", key), frozen(raw))
        return raw

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        cached = state.read(_PRESCORE_KEY)
        if cached is None:  # PreScore did not run (a caller scoring directly)
            prefs = _pod_preferred(pod)
            cached = self._compiled_preferred(prefs) if prefs is not None else (None, ())
        scores: np.ndarray = self._raw_scores(snap, *cached)[candidates]
        return scores

    def normalize(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> None:
        default_normalize_score(scores, reverse=False)
