"""NodeAffinity: a pod's nodeSelector and node affinity, and the profile's addedAffinity.

Owns the compiled form of core/v1 NodeSelector terms with upstream's parsing rules
(``compile_term``), their evaluation on one node (``pod_matches_node_selector_and_affinity``,
used by the kubelet's admission) and over every node at once (``NodeLabelColumns``,
``RequiredAffinityMasks``, which PodTopologySpread reuses), and the plugin. The plugin is
built by the registry from upstream's NodeAffinityArgs:

    addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: NodeSelector,
                    preferredDuringSchedulingIgnoredDuringExecution: [PreferredSchedulingTerm]}

and run by the framework at PreFilter, Filter, PreScore, Score and NormalizeScore.

Matching follows upstream's component-helpers rather than ``api.selectors``: a term with a
requirement upstream cannot parse (unknown operator, bad key or value, In/NotIn without
values, Gt/Lt without exactly one integer, a field requirement without exactly one
value) never matches, while the pod's other terms still can.

Why it is fast: labels are read as the cache's per-key domain ids (``snap.topology``), so
a requirement is a table lookup over all nodes; the mask of a pod's required terms and
the raw scores of its preferred terms are memoised per (term text, ``node_epoch``), so
replicas share them.
"""

from __future__ import annotations

import re

import numpy as np

from ...api.selectors import is_label_value, is_qualified_name
from ..cache import PodInfo, Snapshot
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

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
OBJECT_NAME_FIELD = "metadata.name"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

_IN, _NOT_IN, _EXISTS, _DNE, _GT, _LT = range(6)
_LABEL_OPS = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DNE, "Gt": _GT, "Lt": _LT}
_FIELD_OPS = {"In": True, "NotIn": False}
_MISSING = object()
_COMPILE_LIMIT = 1024
_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits only, as Go's ParseInt


def _int64(s) -> int | None:
    """Go's strconv.ParseInt(s, 10, 64), or None where it fails."""
    if not isinstance(s, str) or not _INT.fullmatch(s):
        return None
    n = int(s)
    return n if -(2**63) <= n < 2**63 else None


# ---- compiling terms ----------------------------------------------------------------------


class SelectorTerm:
    """A parsed NodeSelectorTerm: label requirements and field requirements, all ANDed.

    ``labels``: (op, key, operand), the operand a frozenset (In/NotIn), an int (Gt/Lt) or
    None. ``fields``: (is_in, key, value).
    """

    __slots__ = ("labels", "fields")

    def __init__(self, labels: tuple, fields: tuple):
        self.labels = labels
        self.fields = fields

    def matches(self, labels: dict, name: str) -> bool:
        for op, key, operand in self.labels:
            v = labels.get(key, _MISSING)
            if op == _IN:
                ok = v is not _MISSING and v in operand
            elif op == _NOT_IN:
                ok = v is _MISSING or v not in operand
            elif op == _EXISTS:
                ok = v is not _MISSING
            elif op == _DNE:
                ok = v is _MISSING
            else:
                have = _int64(v)
                ok = have is not None and (have > operand if op == _GT else have < operand)
            if not ok:
                return False
        for is_in, key, value in self.fields:
            have = name if key == OBJECT_NAME_FIELD else ""
            if (have == value) != is_in:
                return False
        return True


def _label_requirement(req, path: str) -> tuple[tuple | None, str | None]:
    if not isinstance(req, dict):
        return None, f"{path}: must be a NodeSelectorRequirement"
    key, op = req.get("key"), _LABEL_OPS.get(req.get("operator"))
    values = req.get("values") or []
    if op is None:
        return None, f"{path}.operator: Unsupported value: {req.get('operator')!r}"
    if not is_qualified_name(key):
        return None, f"{path}.key: Invalid value: {key!r}"
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None, f"{path}.values: must be a list of strings"
    if op in (_IN, _NOT_IN) and not values:
        return None, f"{path}.values: for 'in', 'notin' operators, values set can't be empty"
    if op in (_EXISTS, _DNE) and values:
        return None, f"{path}.values: values set must be empty for exists and does not exist"
    if op in (_GT, _LT) and (len(values) != 1 or _int64(values[0]) is None):
        return None, f"{path}.values: for 'Gt', 'Lt' operators, exactly one integer value is required"
    bad = next((v for v in values if not is_label_value(v)), None)
    if bad is not None:
        return None, f"{path}.values: Invalid value: {bad!r}"
    operand = frozenset(values) if op in (_IN, _NOT_IN) else _int64(values[0]) if op in (_GT, _LT) else None
    return (op, key, operand), None


def _field_requirement(req, path: str) -> tuple[tuple | None, str | None]:
    if not isinstance(req, dict):
        return None, f"{path}: must be a NodeSelectorRequirement"
    is_in, values = _FIELD_OPS.get(req.get("operator")), req.get("values") or []
    if is_in is None:
        return None, f"{path}.operator: Unsupported value: {req.get('operator')!r}"
    if not isinstance(values, list) or len(values) != 1:
        return None, f"{path}.values: must have one element"
    return (is_in, req.get("key"), values[0]), None


def compile_term(term, path: str = "") -> tuple[SelectorTerm | None, list[str]]:
    """Parse a NodeSelectorTerm. None for a term that matches nothing: an empty one (no
    error) or one with parse errors (listed)."""
    if not isinstance(term, dict):
        return None, [f"{path}: must be a NodeSelectorTerm"]
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return None, []
    labels, field_reqs, errors = [], [], []
    for out, items, parse, part in (
        (labels, exprs, _label_requirement, "matchExpressions"),
        (field_reqs, fields, _field_requirement, "matchFields"),
    ):
        for j, req in enumerate(items):
            parsed, err = parse(req, f"{path}.{part}[{j}]")
            if err:
                errors.append(err)
            else:
                out.append(parsed)
    if errors:
        return None, errors
    return SelectorTerm(tuple(labels), tuple(field_reqs)), []


def compile_node_selector(selector, path: str = "") -> tuple[tuple[SelectorTerm, ...], list[str]]:
    """A NodeSelector's usable terms (ORed; none matches nothing) and its parse errors."""
    if not isinstance(selector, dict):
        return (), [f"{path}: must be a NodeSelector"]
    raw = selector.get("nodeSelectorTerms") or []
    terms, errors = [], []
    for i, term in enumerate(raw):
        parsed, errs = compile_term(term, f"{path}.nodeSelectorTerms[{i}]")
        errors.extend(errs)
        if parsed is not None:
            terms.append(parsed)
    return tuple(terms), errors


def compile_preferred(prefs, path: str = "") -> tuple[tuple[tuple[int, SelectorTerm], ...], list[str]]:
    """(weight, term) for each PreferredSchedulingTerm; weight-0 and empty terms are
    dropped before parsing, as upstream does."""
    if not isinstance(prefs, list):
        return (), [f"{path}: must be a list of PreferredSchedulingTerm"]
    out, errors = [], []
    for i, pref in enumerate(prefs):
        weight = pref.get("weight") if isinstance(pref, dict) else None
        if not isinstance(weight, int) or isinstance(weight, bool):
            errors.append(f"{path}[{i}].weight: must be an integer")
            continue
        term, errs = compile_term(pref.get("preference") or {}, f"{path}[{i}].preference")
        if weight == 0 or (term is None and not errs):
            continue
        if errs:
            errors.extend(errs)
        else:
            out.append((weight, term))
    return tuple(out), errors


class RequiredNodeAffinity:
    """A pod's nodeSelector AND its required node affinity (upstream's
    GetRequiredNodeAffinity). ``terms`` is None when the pod has no required affinity."""

    __slots__ = ("selector", "terms")

    def __init__(self, node_selector: dict | None, required: dict | None):
        self.selector = tuple(sorted((node_selector or {}).items()))
        # Parse errors are ignored: such a term matches nothing (upstream's lazy errors).
        self.terms = None if required is None else compile_node_selector(required)[0]

    def matches(self, node: dict) -> bool:
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        for k, v in self.selector:
            if labels.get(k, _MISSING) != v:
                return False
        if self.terms is None:
            return True
        name = meta.get("name") or ""
        return any(t.matches(labels, name) for t in self.terms)


def _pod_required(pod: dict) -> tuple[dict | None, dict | None]:
    spec = pod.get("spec") or {}
    return spec.get("nodeSelector") or None, ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED)


_compiled_required: dict[tuple[str, str], RequiredNodeAffinity] = {}


def required_node_affinity(pod: dict) -> tuple[tuple[str, str], RequiredNodeAffinity]:
    """The pod's compiled required affinity and the text it is memoised under."""
    node_selector, required = _pod_required(pod)
    key = (repr(node_selector), repr(required))
    out = _compiled_required.get(key)
    if out is None:
        if len(_compiled_required) >= _COMPILE_LIMIT:
            # pop, not del: the kubelet may share this module-level memo from another thread.
            _compiled_required.pop(next(iter(_compiled_required), None), None)
        out = _compiled_required[key] = RequiredNodeAffinity(node_selector, required)
    return key, out


def pod_matches_node_selector_and_affinity(pod: dict, node: dict) -> bool:
    """Does ``node`` satisfy the pod's nodeSelector and required node affinity?"""
    return required_node_affinity(pod)[1].matches(node)


# ---- evaluating over every node -------------------------------------------------------------


class NodeLabelColumns:
    """Node labels of one snapshot epoch as lookup tables.

    For a label key, ``snap.topology(key).ids[i]`` is the index of node ``i``'s value (-1
    when absent); a requirement becomes a boolean table over those values, with one extra
    slot at the end for "absent", indexed by ``ids`` (-1 lands on that slot).
    """

    def __init__(self, snap: Snapshot):
        self.snap = snap
        self.n = snap.num_nodes
        self._index: dict[str, dict[str, int]] = {}
        self._ints: dict[str, list] = {}

    def _column(self, key: str):
        topo = self.snap.topology(key)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = {v: i for i, v in enumerate(topo.values)}
        return topo, index

    def _table(self, key: str, op: int, operand) -> tuple[np.ndarray, np.ndarray]:
        topo, index = self._column(key)
        table = np.zeros(len(topo.values) + 1, dtype=bool)
        if op in (_IN, _NOT_IN):
            rows = [index[v] for v in operand if v in index]
            table[rows] = True
            if op == _NOT_IN:
                np.logical_not(table, out=table)  # the absent slot becomes True, as NotIn wants
        elif op in (_GT, _LT):
            ints = self._ints.get(key)
            if ints is None:
                ints = self._ints[key] = [_int64(v) for v in topo.values]
            table[:-1] = [x is not None and (x > operand if op == _GT else x < operand) for x in ints]
        return table, topo.ids

    def requirement(self, op: int, key: str, operand) -> np.ndarray:
        if op in (_EXISTS, _DNE):
            ids = self.snap.topology(key).ids
            return ids >= 0 if op == _EXISTS else ids < 0
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
            out &= self.requirement(_IN, k, (v,))
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

    def __init__(self, limit: int = 256):
        self.memo = EpochMemo(NodeLabelColumns, limit)

    def mask(self, pod: dict, snap: Snapshot) -> np.ndarray:
        """Read-only bool mask over the snapshot's nodes."""
        key, req = required_node_affinity(pod)
        return self.mask_for(key, req, snap)

    def mask_for(self, key, req: RequiredNodeAffinity, snap: Snapshot) -> np.ndarray:
        memo = self.memo.sync(snap)
        mask = memo.get(("required", key))
        if mask is None:
            mask = memo.put(("required", key), frozen(memo.base.required(req)))
        return mask


def prefilter_node_names(terms) -> set | None:
    """Nodes the required terms confine the pod to by ``metadata.name In`` field
    requirements: the union over terms of each term's intersection, or None when some term
    has no such requirement (or there are no terms)."""
    names = None
    for term in terms:
        term_names = None
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


def _parse_added_affinity(added) -> tuple[tuple | None, tuple | None]:
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


def _pod_preferred(pod: PodInfo):
    affinity = (pod.pod.get("spec") or {}).get("affinity")
    return ((affinity.get("nodeAffinity") or {}).get(PREFERRED)) if affinity else None


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = "NodeAffinity"
    EVENTS = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL})

    def __init__(self, args: dict | None = None, handle=None):
        args = dict(args or {})
        added = args.pop("addedAffinity", None)
        if args:
            raise ValueError(f"{self.NAME}: unknown arguments {sorted(args)}")
        self._added_required, self._added_preferred = _parse_added_affinity(added)
        self._masks = RequiredAffinityMasks(limit=512)
        self._preferred: dict[str, tuple] = {}  # pod's preferred terms text -> (terms, errors)

    # ---- PreFilter / Filter -------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        node_selector, required = _pod_required(pod.pod)
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
        mask = memo.get(("added-required",))
        if mask is None:
            mask = memo.put(("added-required",), frozen(memo.base.terms(self._added_required)))
        return mask

    def _verdict(self, snap: Snapshot, pod: dict) -> tuple[np.ndarray, list]:
        key, req = required_node_affinity(pod)
        memo = self._masks.memo.sync(snap)
        verdict = memo.get(("filter", key))
        if verdict is not None:
            return verdict
        pod_ok = self._masks.mask_for(key, req, snap)
        failures = []
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

    def _compiled_preferred(self, prefs) -> tuple[str, tuple]:
        key = repr(prefs)
        entry = self._preferred.get(key)
        if entry is None:
            if len(self._preferred) >= _COMPILE_LIMIT:
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

    def _raw_scores(self, snap: Snapshot, key, terms: tuple) -> np.ndarray:
        memo = self._masks.memo.sync(snap)
        raw = memo.get(("score", key))
        if raw is None:
            raw = memo.base.preferred(terms)
            if self._added_preferred is not None:
                added = memo.get(("added-preferred",))
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
        return self._raw_scores(snap, *cached)[candidates]

    def normalize(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> None:
        default_normalize_score(scores, reverse=False)
