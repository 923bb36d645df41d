"""The ``object`` expectation: any field of any object the runner watches.

Owns the field-path syntax and its lookup, and the comparison of what is found:

    status.updatedReplicas                                   dotted keys
    status.conditions[type=Progressing].reason               the first list item whose key has that value
    spec.template.spec.containers[0].image                   a list index
    metadata.annotations["deployment.kubernetes.io/revision"] a key with dots or slashes, quoted

``parse_path`` is called when a scenario is loaded (a bad path is refused there, naming
it); ``check`` by ``expectations.check`` against the mirror's copy of the object.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<key>[A-Za-z_][A-Za-z0-9_-]*)            # a plain key
    | \[(?P<index>[0-9]+)\]                     # [3]
    | \["(?P<quoted>[^"]+)"\]                   # ["a.b/c"]
    | \[(?P<sel>[A-Za-z0-9_.-]+)=(?P<val>[^\]]*)\]  # [type=Progressing]
    """,
    re.X,
)
MISSING = object()


class PathError(ValueError):
    pass


def parse_path(path: str) -> list[tuple[str, Any]]:
    """``path`` as steps: ("key", k), ("index", i), ("select", (k, v)); raises PathError."""
    steps: list[tuple[str, Any]] = []
    i = 0
    while i < len(path):
        dotted = bool(steps) and path[i] == "."
        m = _TOKEN.match(path, i + 1 if dotted else i)
        # A plain key comes first or after a dot; brackets follow anything.
        if m is None or bool(m.group("key")) != (dotted or not steps):
            raise PathError(f'cannot read {path!r} at position {i} (use a.b, a[0], a[key=value] or a["x/y"])')
        if m.group("key"):
            steps.append(("key", m.group("key")))
        elif m.group("index") is not None:
            steps.append(("index", int(m.group("index"))))
        elif m.group("quoted") is not None:
            steps.append(("key", m.group("quoted")))
        else:
            steps.append(("select", (m.group("sel"), m.group("val"))))
        i = m.end()
    if not steps:
        raise PathError("an empty path names no field")
    return steps


def lookup(obj: Any, steps: list[tuple[str, Any]]) -> Any:
    """The value at ``steps`` in ``obj``, or ``MISSING``."""
    cur = obj
    for kind, arg in steps:
        if kind == "key":
            if not isinstance(cur, dict) or arg not in cur:
                return MISSING
            cur = cur[arg]
        elif kind == "index":
            if not isinstance(cur, list) or arg >= len(cur):
                return MISSING
            cur = cur[arg]
        else:
            key, value = arg
            if not isinstance(cur, list):
                return MISSING
            cur = next((x for x in cur if isinstance(x, dict) and str(x.get(key)) == value), MISSING)
            if cur is MISSING:
                return MISSING
    return cur


def _same(found: Any, want: Any) -> bool:
    if isinstance(found, bool) or isinstance(want, bool):
        return found is want
    if isinstance(found, (int, float)) and isinstance(want, (int, float)):
        return found == want
    return found == want


def check(obj: dict | None, what: str, path: str, comparator: dict[str, Any]) -> tuple[bool, str]:
    """Whether ``comparator`` (equals / atLeast / atMost / exists) holds for ``path`` in
    ``obj``, and a one-line description of what was seen."""
    if obj is None:
        return comparator.get("exists") is False, f"{what}: absent"
    found = lookup(obj, parse_path(path))
    shown = "missing" if found is MISSING else json.dumps(found, default=str)
    seen = f"{what} {path} = {shown}"
    if "exists" in comparator:
        return (found is not MISSING) == comparator["exists"], seen
    if found is MISSING:
        return False, seen
    ok = True
    if "equals" in comparator:
        ok = _same(found, comparator["equals"])
    for name, holds in (("atLeast", lambda a, b: a >= b), ("atMost", lambda a, b: a <= b)):
        if name in comparator:
            ok = (
                ok
                and isinstance(found, (int, float))
                and not isinstance(found, bool)
                and holds(found, comparator[name])
            )
    return ok, seen
