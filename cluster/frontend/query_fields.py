"""Field selectors (``?fieldSelector=``), read as apimachinery's ``fields`` package reads them.

Owns the parsing of a selector string into terms, the field labels each kind accepts (with
the message upstream refuses an unknown one with), how a label's value is read off an
object, and ``FieldSelector``, the compiled selector. ``query.py`` calls it when it parses
ListOptions; ``watch.py`` and ``verbs.py`` reach the selector through those options.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..api.errors import BadRequest

_Getter = Callable[[Mapping[str, Any]], str]


def _dig(obj: Mapping[str, Any], path: Sequence[str]) -> Any:
    cur: Any = obj
    for part in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return str(int(v))
    return ""


def _field(path: str, absent: str = "") -> _Getter:
    """Read a dotted path. ``absent`` is what upstream's ToSelectableFields reports for an
    unset field: it formats the Go zero value, so an unset bool is "false", a count "0"."""
    parts = tuple(path.split("."))

    def get(obj: Mapping[str, Any]) -> str:
        v = _dig(obj, parts)
        return absent if v is None else _text(v)

    return get


def _pod_ip(obj: Mapping[str, Any]) -> str:
    # Upstream reads status.podIPs[0].ip; a v1 object also carries it as status.podIP.
    ips = _dig(obj, ("status", "podIPs"))
    if isinstance(ips, list) and ips and isinstance(ips[0], Mapping):
        return _text(ips[0].get("ip"))
    return _text(_dig(obj, ("status", "podIP")))


def _event_source(obj: Mapping[str, Any]) -> str:
    # Upstream: source.component, or reportingComponent when that is empty.
    return _text(_dig(obj, ("source", "component"))) or _text(obj.get("reportingComponent"))


def _labels(*paths: str) -> dict[str, _Getter]:
    return {p: _field(p) for p in paths}


_NAME = _labels("metadata.name")
_NAME_NS = _labels("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class _Kind:
    labels: dict[str, _Getter]
    refuse: Callable[[str], str] = "field label not supported: {}".format
    aliases: tuple[tuple[str, str], ...] = ()


_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")

# The kinds that register a field-label conversion upstream (pkg/apis/*/v1/conversion.go),
# read as their registry strategies' ToSelectableFields. apps/v1 registers none, so a
# ReplicaSet, like every kind not listed, gets the default: metadata.name and .namespace.
_KINDS: dict[str, _Kind] = {
    "Pod": _Kind(
        {
            **_NAME_NS,
            **_labels("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName"),
            "spec.hostNetwork": _field("spec.hostNetwork", "false"),
            "status.phase": _field("status.phase"),
            "status.podIP": _pod_ip,
            "status.podIPs": lambda obj: "",  # accepted upstream, never in the field set
            "status.nominatedNodeName": _field("status.nominatedNodeName"),
        },
        aliases=(("spec.host", "spec.nodeName"),),  # old v1 clients
    ),
    "Node": _Kind({**_NAME, "spec.unschedulable": _field("spec.unschedulable", "false")}),
    "Event": _Kind(
        {
            **_NAME_NS,
            **_labels(*(f"involvedObject.{f}" for f in _INVOLVED), "reason", "reportingComponent", "type"),
            "source": _event_source,
        }
    ),
    "Namespace": _Kind({**_NAME, "status.phase": _field("status.phase")}),
    "Secret": _Kind({**_NAME_NS, "type": _field("type")}),
    "Service": _Kind({**_NAME_NS, **_labels("spec.clusterIP", "spec.type")}),
    "ReplicationController": _Kind({**_NAME_NS, "status.replicas": _field("status.replicas", "0")}),
    "Job": _Kind(
        {**_NAME_NS, "status.successful": _field("status.succeeded", "0")},
        refuse=lambda label: f"field label {json.dumps(label)} not supported for Job",
    ),
}
_DEFAULT_KIND = _Kind(
    _NAME_NS,
    refuse=lambda label: (
        f'{json.dumps(label)} is not a known field selector: only "metadata.name", "metadata.namespace"'
    ),
)

# A requirement as parsed: (field label, "=" or "!=", value).
Term = tuple[str, str, str]


# A term runs to the next comma that no backslash escapes (a lone final backslash included).
_TERMS = re.compile(r"(?:\\.?|[^\\,])+", re.S)
# In a value: an escape (its character, "" at the end), a bare ',' or '=', or plain text.
_PIECE = re.compile(r"\\(.?)|([,=])|[^\\,=]+", re.S)


def _unescape(value: str) -> str:
    out = []
    for m in _PIECE.finditer(value):
        esc, bare = m.group(1), m.group(2)
        if bare:  # upstream prints the rune with %v, i.e. its code point
            raise BadRequest(f"invalid field selector: unescaped character in value: {ord(bare)}")
        if esc is not None and esc not in ("\\", ",", "="):
            raise BadRequest(f"invalid field selector: invalid escape sequence: \\{esc}")
        out.append(m.group() if esc is None else esc)
    return "".join(out)


def parse_terms(s: str) -> list[Term]:
    """apimachinery's fields.ParseSelector: terms sorted as upstream sorts them, so the
    first bad label reported is the one upstream reports."""
    terms: list[Term] = []
    for part in sorted(_TERMS.findall(s)):  # upstream skips empty terms too
        m = re.search("!=|==|=", part)  # the first operator splits; the field has no escapes
        if m is None:
            raise BadRequest(f"invalid selector: '{s}'; can't understand '{part}'")
        op = "!=" if m.group() == "!=" else "="
        terms.append((part[: m.start()], op, _unescape(part[m.end() :])))
    return terms


class FieldSelector:
    """A compiled field selector: requirements ANDed, each ``field=value`` or ``field!=value``."""

    __slots__ = ("kind", "_terms", "_getters")

    def __init__(self, terms: Iterable[Term], kind: str) -> None:
        spec = _KINDS.get(kind, _DEFAULT_KIND)
        aliases = dict(spec.aliases)
        canonical: list[Term] = []
        for field, op, value in terms:
            field = aliases.get(field, field)
            if field not in spec.labels:
                raise BadRequest(spec.refuse(field))
            canonical.append((field, op, value))
        self.kind = kind
        self._terms = tuple(canonical)
        self._getters = tuple(spec.labels[f] for f, _, _ in canonical)

    @classmethod
    def parse(cls, s: str, kind: str) -> FieldSelector:
        """Parse ``a=b,c!=d,e==f`` for ``kind``; BadRequest on bad syntax or an unsupported label."""
        return cls(parse_terms(s), kind)

    @property
    def requirements(self) -> tuple[Term, ...]:
        return self._terms

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for (_, op, value), get in zip(self._terms, self._getters):
            if (get(obj) == value) != (op == "="):
                return False
        return True

    def node_name(self) -> str | None:
        """The node of a lone ``spec.nodeName=X`` requirement, so a list or watch can start
        from the apiserver's node index (the other requirements still apply); else None."""
        nodes = [v for f, op, v in self._terms if f == "spec.nodeName" and op == "="]
        return nodes[0] if len(nodes) == 1 else None

    def __str__(self) -> str:
        esc = str.maketrans({"\\": "\\\\", ",": "\\,", "=": "\\="})
        return ",".join(f"{f}{op}{v.translate(esc)}" for f, op, v in self._terms)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return (self.kind, self._terms) == (other.kind, other._terms)

    def __hash__(self) -> int:
        return hash((self.kind, self._terms))
