"""Label selectors and node selectors with upstream Kubernetes matching semantics.

Owns ``LabelSelector`` (metav1.LabelSelector and the ``a=b,c in (x)`` string form) and the
core/v1 NodeSelector helpers that decide whether a pod's ``nodeSelector`` and required node
affinity accept a node. Callers: validation (selector shape), the controllers and the
PDB/preemption code (which pods a selector covers), the scheduler's NodeAffinity plugin
and the kubelet's admission check, the scenario expectations (``labelSelector``).

It also owns label syntax (label keys and values, RFC 1123 names) because a selector,
like upstream's, refuses requirements whose keys or values could never be labels;
validation reuses the same predicates for metadata.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TypeGuard, cast

__all__ = [
    "SelectorError",
    "LabelSelector",
    "node_selector_requirement_matches",
    "node_selector_term_matches",
    "node_selector_matches",
    "required_node_affinity_matches",
    "is_dns_label",
    "is_dns_subdomain",
    "is_qualified_name",
    "is_label_value",
    "KEY_RULE",
    "VALUE_RULE",
]

# ---- label syntax (upstream's RFC 1123 and qualified-name patterns, used with fullmatch) --

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL = re.compile(_LABEL)
_DNS_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")

ENDS_RULE = "starting and ending with a letter or digit"
_NAME_RULE = f"at most 63 of letters, digits, '-', '_', '.'; {ENDS_RULE}"
KEY_RULE = f"is not a valid key (an optional DNS-subdomain prefix and '/', then a name of {_NAME_RULE})"
VALUE_RULE = f"is not a valid label value (empty, or {_NAME_RULE})"


def is_dns_label(s: object) -> TypeGuard[str]:
    return isinstance(s, str) and len(s) <= 63 and bool(_DNS_LABEL.fullmatch(s))


def is_dns_subdomain(s: object) -> TypeGuard[str]:
    return isinstance(s, str) and len(s) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(s))


def is_qualified_name(s: object) -> TypeGuard[str]:
    """A label or annotation key: ``[prefix/]name``."""
    return isinstance(s, str) and _qualified(s)


def is_label_value(s: object) -> TypeGuard[str]:
    return isinstance(s, str) and _label_value(s)


# Keys and values repeat across every object of a template (every write is validated): the
# answers are kept for the strings last seen.
@functools.lru_cache(maxsize=8192)
def _qualified(s: str) -> bool:
    prefix, slash, name = s.rpartition("/")
    if slash and not is_dns_subdomain(prefix):
        return False
    return len(name) <= 63 and bool(_NAME_PART.fullmatch(name))


@functools.lru_cache(maxsize=8192)
def _label_value(s: str) -> bool:
    return s == "" or (len(s) <= 63 and bool(_NAME_PART.fullmatch(s)))


_UNSET = object()


class SelectorError(ValueError):
    """A selector that cannot be evaluated.

    ``field`` is the path of the offending part relative to the selector (for example
    ``matchExpressions[0].values``; ``""`` for the string form) so validation can report it
    under the object's own field path; ``value`` is the offending value when
    ``has_value``.
    """

    def __init__(self, detail: str, field: str = "", value: Any = _UNSET) -> None:
        self.detail, self.field = detail, field
        self.has_value = value is not _UNSET
        self.value = value if self.has_value else None
        super().__init__(f"{field}: {detail}" if field else detail)


# Opcodes for the compiled requirements; small ints keep the match loop cheap.
_EQ, _NE, _IN, _NOTIN, _EXISTS, _DNE = range(6)
_MISSING = object()

_EXPR_OPS = {"In": _IN, "NotIn": _NOTIN, "Exists": _EXISTS, "DoesNotExist": _DNE}

# A requirement as parsed: (opcode, key, values).
_Requirement = tuple[int, str, tuple[str, ...]]


def _requirement_str(op: int, key: str, values: tuple[str, ...]) -> str:
    if op == _EQ:
        return f"{key}={values[0]}"
    if op == _NE:
        return f"{key}!={values[0]}"
    if op == _EXISTS:
        return key
    if op == _DNE:
        return f"!{key}"
    word = "in" if op == _IN else "notin"
    return f"{key} {word} ({','.join(values)})"


class LabelSelector:
    """A compiled label selector: requirements ANDed, sorted by key like upstream.

    Each requirement is ``(opcode, key, operand)`` where the operand is the single value
    for ``=``/``!=`` and a frozenset for ``in``/``notin``.
    """

    __slots__ = ("_reqs", "_display", "_nothing", "_hash")

    def __init__(self, requirements: Iterable[_Requirement] = (), *, nothing: bool = False) -> None:
        # requirements: iterable of (opcode, key, values tuple)
        reqs = sorted(requirements, key=lambda r: r[1])
        self._display = tuple((op, key, tuple(sorted(set(vals)))) for op, key, vals in reqs)
        self._reqs = tuple((op, key, vals[0] if op in (_EQ, _NE) else frozenset(vals)) for op, key, vals in reqs)
        self._nothing = nothing
        # Selectors key the scheduler's per-cycle tables: hashed many times, built once.
        self._hash = hash((self._display, nothing))

    @classmethod
    def nothing(cls) -> LabelSelector:
        """The selector a null ``selector`` field means: it matches no object."""
        return cls(nothing=True)

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls()

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> LabelSelector:
        """Compile a metav1.LabelSelector; ``None`` matches nothing, ``{}`` everything."""
        if d is None:
            return cls.nothing()
        if not isinstance(d, dict):
            raise SelectorError("must be a map with matchLabels and/or matchExpressions", "", d)
        return cls(_from_match_labels(d.get("matchLabels")) + _from_expressions(d.get("matchExpressions")))

    @classmethod
    def parse(cls, s: str) -> LabelSelector:
        """Compile the string form (``a=b,c!=d,e in (x,y),f notin (z),g,!h``)."""
        if not isinstance(s, str):
            raise SelectorError("a label selector string is required", "", s)
        return _parse_cached(s)

    @property
    def empty(self) -> bool:
        """True when the selector has no requirements and so matches every object."""
        return not self._reqs and not self._nothing

    @property
    def matches_nothing(self) -> bool:
        return self._nothing

    def required_values(self) -> list[tuple[str, frozenset[str]]]:
        """(key, allowed values) for each ``=``/``in`` requirement: an index can narrow a
        search to objects carrying one of those labels before ``matches`` checks the rest."""
        # The operand is a str for ``=`` and a frozenset for ``in`` (see __init__).
        return [
            (key, frozenset((cast(str, operand),)) if op == _EQ else cast("frozenset[str]", operand))
            for op, key, operand in self._reqs
            if op in (_EQ, _IN)
        ]

    @property
    def requirement_count(self) -> int:
        return len(self._reqs)

    def matches(self, labels: dict[str, Any] | None) -> bool:
        if self._nothing:
            return False
        get = (labels or {}).get
        for op, key, operand in self._reqs:
            v = get(key, _MISSING)
            if op == _EQ:
                if v != operand:  # _MISSING never equals a string
                    return False
            elif op == _IN:
                if v is _MISSING or v not in operand:
                    return False
            elif op == _NE:
                if v == operand:
                    return False
            elif op == _NOTIN:
                if v is not _MISSING and v in operand:
                    return False
            elif op == _EXISTS:
                if v is _MISSING:
                    return False
            elif v is not _MISSING:  # _DNE
                return False
        return True

    def __str__(self) -> str:
        # Like upstream, the nothing-selector prints as "" too; check matches_nothing to tell.
        return ",".join(_requirement_str(*r) for r in self._display)

    def __repr__(self) -> str:
        return "LabelSelector.nothing()" if self._nothing else f"LabelSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return self._display == other._display and self._nothing == other._nothing

    def __hash__(self) -> int:
        return self._hash


def _from_match_labels(ml: Any) -> list[_Requirement]:
    if ml is None:
        return []
    if not isinstance(ml, dict):
        raise SelectorError("must be a map of label keys to values", "matchLabels", ml)
    out: list[_Requirement] = []
    for k, v in ml.items():
        if not is_qualified_name(k):
            raise SelectorError(KEY_RULE, f"matchLabels[{k}]", k)
        if not isinstance(v, str):
            raise SelectorError("must be a string", f"matchLabels[{k}]", v)
        if not is_label_value(v):
            raise SelectorError(VALUE_RULE, f"matchLabels[{k}]", v)
        out.append((_EQ, k, (v,)))
    return out


def _from_expressions(exprs: Any) -> list[_Requirement]:
    if exprs is None:
        return []
    if not isinstance(exprs, list):
        raise SelectorError("must be a list", "matchExpressions", exprs)
    return [_from_expression(e, f"matchExpressions[{i}]") for i, e in enumerate(exprs)]


def _from_expression(e: Any, path: str) -> _Requirement:
    if not isinstance(e, dict):
        raise SelectorError("must be a map with key, operator and values", path, e)
    key, values = e.get("key"), e.get("values") or []
    opname: Any = e.get("operator")  # any JSON value; one that names no operator is refused below
    if key in (None, ""):
        raise SelectorError("Required value", f"{path}.key")
    if not is_qualified_name(key):
        raise SelectorError(KEY_RULE, f"{path}.key", key)
    op = _EXPR_OPS.get(opname) if isinstance(opname, str) else None
    if op is None:
        raise SelectorError(
            'is not a valid selector operator (supported: "In", "NotIn", "Exists", "DoesNotExist")',
            f"{path}.operator",
            opname,
        )
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError("must be a list of strings", f"{path}.values", values)
    if op in (_IN, _NOTIN) and not values:
        raise SelectorError(f"must be non-empty when operator is {opname}", f"{path}.values")
    if op in (_EXISTS, _DNE) and values:
        raise SelectorError(f"must be empty when operator is {opname}", f"{path}.values", values)
    for j, v in enumerate(values):
        if not is_label_value(v):
            raise SelectorError(VALUE_RULE, f"{path}.values[{j}]", v)
    return (op, key, tuple(values))


# ---- the string form ---------------------------------------------------------------

# Identifiers are runs of anything that is not whitespace or an operator character, as in
# upstream's lexer; '<' and '>' are lexed so that "a>1" is refused rather than misread.
_TOKEN = re.compile(r"\s*(?:(!=|==|=|!|\(|\)|,|<|>)|([^\s!=,()<>]+))")


def _tokens(s: str) -> list[str]:
    out, pos, n = [], 0, len(s)
    while pos < n:
        m = _TOKEN.match(s, pos)
        if not m:
            if s[pos:].strip():
                raise SelectorError(f"cannot parse {s!r} at position {pos}")
            break
        out.append(m.group(1) or m.group(2))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, s: str) -> None:
        self.s, self.toks, self.i = s, _tokens(s), 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str | None:
        tok = self.peek()
        self.i += 1
        return tok

    def fail(self, what: str) -> NoReturn:
        raise SelectorError(f"cannot parse label selector {self.s!r}: {what}")

    def selector(self) -> list[_Requirement]:
        reqs: list[_Requirement] = []
        if self.peek() is None:
            return reqs
        while True:
            reqs.append(self.checked(self.requirement()))
            tok = self.take()
            if tok is None:
                return reqs
            if tok != ",":
                self.fail(f"expected ',' but found {tok!r}")

    def checked(self, req: _Requirement) -> _Requirement:
        _, key, values = req
        if not is_qualified_name(key):
            self.fail(f"{json.dumps(key)} {KEY_RULE}")
        for v in values:
            if not is_label_value(v):
                self.fail(f"{json.dumps(v)} {VALUE_RULE}")
        return req

    def identifier(self, what: str) -> str:
        tok = self.take()
        if tok is not None:
            m = _TOKEN.fullmatch(tok)
            assert m is not None  # every token came from a _TOKEN match
            if not m.group(1):
                return tok
        self.fail(f"expected {what} but found {tok or 'end of string'!r}")

    def requirement(self) -> _Requirement:
        if self.peek() == "!":
            self.take()
            return (_DNE, self.identifier("a key after '!'"), ())
        key = self.identifier("a key")
        tok = self.peek()
        if tok in (None, ","):
            return (_EXISTS, key, ())
        self.take()
        if tok in ("=", "==", "!="):
            nxt = self.peek()
            value = "" if nxt in (None, ",") else self.identifier("a value")
            return (_NE if tok == "!=" else _EQ, key, (value,))
        if tok in ("in", "notin"):
            values = self.value_list()
            if not values:
                self.fail(f"'{tok}' needs at least one value")
            return (_IN if tok == "in" else _NOTIN, key, tuple(values))
        self.fail(f"unsupported operator {tok!r} after key {key!r}")

    def value_list(self) -> list[str]:
        if self.take() != "(":
            self.fail("expected '(' after in/notin")
        values: list[str] = []
        if self.peek() == ")":
            self.take()
            return values
        while True:
            tok = self.peek()
            # An empty slot ("(a,)") is the empty value, as upstream reads it.
            values.append("" if tok in (",", ")") else self.identifier("a value"))
            tok = self.take()
            if tok == ")":
                return values
            if tok != ",":
                self.fail(f"expected ',' or ')' but found {tok or 'end of string'!r}")


@functools.lru_cache(maxsize=4096)
def _parse_cached(s: str) -> LabelSelector:
    return LabelSelector(_Parser(s).selector())


# ---- node selectors (core/v1 NodeSelector, NodeSelectorTerm, NodeSelectorRequirement) --

_INT64 = re.compile(r"[+-]?[0-9]+")


def _int64(s: object) -> int | None:
    """Go's strconv.ParseInt(s, 10, 64), or None where it would fail."""
    if not isinstance(s, str) or not _INT64.fullmatch(s):
        return None
    n = int(s)
    return n if -(2**63) <= n < 2**63 else None


def node_selector_requirement_matches(req: dict[str, Any], labels: dict[str, Any] | None) -> bool:
    """Does one NodeSelectorRequirement accept these node labels?

    A malformed requirement (wrong number of values, unknown operator) matches nothing,
    which is how upstream treats a term it cannot parse.
    """
    op = req.get("operator")
    key: Any = req.get("key")  # unchecked JSON; None (absent) is a key no label has
    values: Sequence[Any] = req.get("values") or ()
    v = (labels or {}).get(key, _MISSING)
    if op == "In":
        return bool(values) and v is not _MISSING and v in values
    if op == "NotIn":
        return bool(values) and (v is _MISSING or v not in values)
    if op == "Exists":
        return not values and v is not _MISSING
    if op == "DoesNotExist":
        return not values and v is _MISSING
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            return False
        bound, have = _int64(values[0]), _int64(v)
        if bound is None or have is None:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def _field_requirement_matches(req: dict[str, Any], fields: dict[str, Any]) -> bool:
    # Upstream's field selectors for node affinity take In/NotIn with exactly one value.
    op = req.get("operator")
    values: Sequence[Any] = req.get("values") or ()
    if op not in ("In", "NotIn") or len(values) != 1:
        return False
    key: Any = req.get("key")  # unchecked JSON; None (absent) names no field
    equal = fields.get(key, "") == values[0]
    return equal if op == "In" else not equal


def node_selector_term_matches(term: dict[str, Any], labels: dict[str, Any] | None, node_name: str = "") -> bool:
    """All matchExpressions and matchFields of the term hold; an empty term matches nothing."""
    exprs = term.get("matchExpressions") or ()
    field_reqs = term.get("matchFields") or ()
    if not exprs and not field_reqs:
        return False
    for req in exprs:
        if not node_selector_requirement_matches(req, labels):
            return False
    if field_reqs:
        fields = {"metadata.name": node_name}
        for req in field_reqs:
            if not _field_requirement_matches(req, fields):
                return False
    return True


def node_selector_matches(selector: dict[str, Any], labels: dict[str, Any] | None, node_name: str = "") -> bool:
    """A core/v1 NodeSelector: its terms are ORed, so no terms match nothing."""
    for term in selector.get("nodeSelectorTerms") or ():
        if node_selector_term_matches(term, labels, node_name):
            return True
    return False


def required_node_affinity_matches(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """Upstream GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required affinity."""
    spec = pod.get("spec") or {}
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k, _MISSING) != v:
            return False
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return node_selector_matches(required, labels, meta.get("name", ""))
