"""Node selectors and required node affinity: what a pod asks of a node's labels and name.

Owns the compiled form of core/v1 NodeSelector terms with upstream's parsing rules
(``compile_term``) and their evaluation on one node (``RequiredNodeAffinity``,
``pod_matches_node_selector_and_affinity``). Shared by the scheduler's NodeAffinity plugin
(which evaluates the same terms over every node at once), the kubelet's admission and the
DaemonSet controller, so the three cannot disagree about a pod.

Matching follows upstream's component-helpers rather than ``selectors``: a term with a
requirement upstream cannot parse (unknown operator, bad key or value, In/NotIn without
values, Gt/Lt without exactly one integer, a field requirement without exactly one
value) never matches, while the pod's other terms still can.
"""

from __future__ import annotations

import re
from typing import Any

from .selectors import is_label_value, is_qualified_name

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
OBJECT_NAME_FIELD = "metadata.name"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

OP_IN, OP_NOT_IN, OP_EXISTS, OP_DNE, OP_GT, OP_LT = range(6)
_LABEL_OPS = {"In": OP_IN, "NotIn": OP_NOT_IN, "Exists": OP_EXISTS, "DoesNotExist": OP_DNE, "Gt": OP_GT, "Lt": OP_LT}
_FIELD_OPS = {"In": True, "NotIn": False}
MISSING = object()
COMPILE_LIMIT = 1024
# (op, key, operand): the operand a frozenset[str] (In/NotIn), an int (Gt/Lt) or None, by op.
LabelRequirement = tuple[int, str, Any]
# (is_in, key, value), both as the manifest gave them.
FieldRequirement = tuple[bool, Any, Any]
_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits only, as Go's ParseInt


def int64(s: object) -> int | None:
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

    def __init__(self, labels: tuple[LabelRequirement, ...], fields: tuple[FieldRequirement, ...]) -> None:
        self.labels = labels
        self.fields = fields

    def matches(self, labels: dict[str, Any], name: str) -> bool:
        for op, key, operand in self.labels:
            v = labels.get(key, MISSING)
            if op == OP_IN:
                ok = v is not MISSING and v in operand
            elif op == OP_NOT_IN:
                ok = v is MISSING or v not in operand
            elif op == OP_EXISTS:
                ok = v is not MISSING
            elif op == OP_DNE:
                ok = v is MISSING
            else:
                have = int64(v)
                ok = have is not None and (have > operand if op == OP_GT else have < operand)
            if not ok:
                return False
        for is_in, key, value in self.fields:
            field = name if key == OBJECT_NAME_FIELD else ""
            if (field == value) != is_in:
                return False
        return True


def _label_requirement(req: Any, path: str) -> tuple[LabelRequirement | None, str | None]:
    if not isinstance(req, dict):
        return None, f"{path}: must be a NodeSelectorRequirement"
    opname: Any = req.get("operator")  # any JSON value; one that names no operator is refused below
    key, op = req.get("key"), (_LABEL_OPS.get(opname) if isinstance(opname, str) else None)
    values = req.get("values") or []
    if op is None:
        return None, f"{path}.operator: Unsupported value: {req.get('operator')!r}"
    if not is_qualified_name(key):
        return None, f"{path}.key: Invalid value: {key!r}"
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None, f"{path}.values: must be a list of strings"
    if op in (OP_IN, OP_NOT_IN) and not values:
        return None, f"{path}.values: for 'in', 'notin' operators, values set can't be empty"
    if op in (OP_EXISTS, OP_DNE) and values:
        return None, f"{path}.values: values set must be empty for exists and does not exist"
    if op in (OP_GT, OP_LT) and (len(values) != 1 or int64(values[0]) is None):
        return None, f"{path}.values: for 'Gt', 'Lt' operators, exactly one integer value is required"
    bad = next((v for v in values if not is_label_value(v)), None)
    if bad is not None:
        return None, f"{path}.values: Invalid value: {bad!r}"
    operand = frozenset(values) if op in (OP_IN, OP_NOT_IN) else int64(values[0]) if op in (OP_GT, OP_LT) else None
    return (op, key, operand), None


def _field_requirement(req: Any, path: str) -> tuple[FieldRequirement | None, str | None]:
    if not isinstance(req, dict):
        return None, f"{path}: must be a NodeSelectorRequirement"
    opname: Any = req.get("operator")  # any JSON value; one that names no operator is refused below
    is_in, values = (_FIELD_OPS.get(opname) if isinstance(opname, str) else None), req.get("values") or []
    if is_in is None:
        return None, f"{path}.operator: Unsupported value: {req.get('operator')!r}"
    if not isinstance(values, list) or len(values) != 1:
        return None, f"{path}.values: must have one element"
    return (is_in, req.get("key"), values[0]), None


def compile_term(term: Any, path: str = "") -> tuple[SelectorTerm | None, list[str]]:
    """Parse a NodeSelectorTerm. None for a term that matches nothing: an empty one (no
    error) or one with parse errors (listed)."""
    if not isinstance(term, dict):
        return None, [f"{path}: must be a NodeSelectorTerm"]
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return None, []
    labels: list[LabelRequirement] = []
    field_reqs: list[FieldRequirement] = []
    errors: list[str] = []
    # Each parser gives (requirement, None) or (None, error).
    for j, req in enumerate(exprs):
        label_req, err = _label_requirement(req, f"{path}.matchExpressions[{j}]")
        if err:
            errors.append(err)
        else:
            assert label_req is not None
            labels.append(label_req)
    for j, req in enumerate(fields):
        field_req, err = _field_requirement(req, f"{path}.matchFields[{j}]")
        if err:
            errors.append(err)
        else:
            assert field_req is not None
            field_reqs.append(field_req)
    if errors:
        return None, errors
    return SelectorTerm(tuple(labels), tuple(field_reqs)), []


def compile_node_selector(selector: Any, path: str = "") -> tuple[tuple[SelectorTerm, ...], list[str]]:
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


def compile_preferred(prefs: Any, path: str = "") -> tuple[tuple[tuple[int, SelectorTerm], ...], list[str]]:
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
            assert term is not None  # compile_term gives None only for an empty term or with errors
            out.append((weight, term))
    return tuple(out), errors


class RequiredNodeAffinity:
    """A pod's nodeSelector AND its required node affinity (upstream's
    GetRequiredNodeAffinity). ``terms`` is None when the pod has no required affinity."""

    __slots__ = ("selector", "terms")

    def __init__(self, node_selector: dict[str, Any] | None, required: dict[str, Any] | None) -> None:
        self.selector = tuple(sorted((node_selector or {}).items()))
        # Parse errors are ignored: such a term matches nothing (upstream's lazy errors).
        self.terms = None if required is None else compile_node_selector(required)[0]

    def matches(self, node: dict[str, Any]) -> bool:
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        for k, v in self.selector:
            if labels.get(k, MISSING) != v:
                return False
        if self.terms is None:
            return True
        name = meta.get("name") or ""
        return any(t.matches(labels, name) for t in self.terms)


def pod_required(pod: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    spec = pod.get("spec") or {}
    return spec.get("nodeSelector") or None, ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED)


_compiled_required: dict[tuple[str, str], RequiredNodeAffinity] = {}


def required_node_affinity(pod: dict[str, Any]) -> tuple[tuple[str, str], RequiredNodeAffinity]:
    """The pod's compiled required affinity and the text it is memoised under."""
    node_selector, required = pod_required(pod)
    key = (repr(node_selector), repr(required))
    out = _compiled_required.get(key)
    if out is None:
        if len(_compiled_required) >= COMPILE_LIMIT:
            # pop, not del: the kubelet may share this module-level memo from another thread.
            oldest = next(iter(_compiled_required), None)
            if oldest is not None:
                _compiled_required.pop(oldest, None)
        out = _compiled_required[key] = RequiredNodeAffinity(node_selector, required)
    return key, out


def pod_matches_node_selector_and_affinity(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """Does ``node`` satisfy the pod's nodeSelector and required node affinity?"""
    return required_node_affinity(pod)[1].matches(node)
