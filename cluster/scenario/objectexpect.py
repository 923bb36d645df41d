"""The ``object`` expectation: any field of any object the runner watches.

Owns the field-path syntax and its lookup, and the comparison of what is found:

    status.updatedReplicas                                    dotted keys
    status.conditions[type=Progressing].reason                the first list item whose key has that value
    spec.template.spec.containers[0].image                    a list index
    metadata.annotations["deployment.kubernetes.io/revision"] a key with dots or slashes, quoted ("" or '')

A selector's value may be quoted too (``[name="a]b"]``); it matches an item whose key
holds that string, or a number or boolean written that way (``[ready=true]``, ``[index=0]``).
``parse_path`` is called when a scenario is loaded (a bad path is refused there, naming
it); ``check`` by ``expectations.check`` against the mirror's copy of the object.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<key>[A-Za-z_][A-Za-z0-9_-]*)                           # a plain key
    | \[(?P<index>[0-9]+)\]                                    # [3]
    | \[(?P<q>["'])(?P<quoted>(?:(?!(?P=q)).)+)(?P=q)\]        # ["a.b/c"] or ['a.b/c']
    | \[(?P<sel>[A-Za-z_][A-Za-z0-9_-]*)=
        (?:(?P<vq>["'])(?P<qval>(?:(?!(?P=vq)).)*)(?P=vq)|(?P<val>[^\]"']*))\]  # [type=Progressing]
    """,
    re.X,
)
HINT = '(use a.b, a[0], a[key=value] or a["x/y"])'
MISSING = object()

Step = tuple[str, Any]  # ("key", k), ("index", i) or ("select", (k, v))


class PathError(ValueError):
    pass


def parse_path(path: str) -> list[Step]:
    """``path`` as steps; raises PathError naming the path and where it stops making sense."""
    if not path:
        raise PathError("an empty path names no field")
    steps: list[Step] = []
    i = 0
    while i < len(path):
        dotted = bool(steps) and path[i] == "."
        m = _TOKEN.match(path, i + 1 if dotted else i)
        # A plain key comes first or after a dot; brackets follow anything but a dot.
        if m is None or bool(m.group("key")) != (dotted or not steps):
            raise PathError(f"cannot read {path!r} at position {i} {HINT}")
        steps.append(_step(m))
        i = m.end()
    return steps


def _step(m: re.Match[str]) -> Step:
    if m.group("key"):
        return ("key", m.group("key"))
    if m.group("index") is not None:
        return ("index", int(m.group("index")))
    if m.group("quoted") is not None:
        return ("key", m.group("quoted"))
    value = m.group("qval") if m.group("qval") is not None else m.group("val")
    return ("select", (m.group("sel"), value))


def lookup(obj: Any, steps: list[Step]) -> Any:
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
            cur = next((x for x in cur if isinstance(x, dict) and key in x and _written(x[key]) == value), MISSING)
            if cur is MISSING:
                return MISSING
    return cur


def _written(v: Any) -> str:
    """How a selector writes ``v``: a string as itself, anything else as JSON."""
    return v if isinstance(v, str) else json.dumps(v)


def same(found: Any, want: Any) -> bool:
    """JSON equality: 3 equals 3.0, but a boolean equals only a boolean and "3" is not 3."""
    if isinstance(found, bool) or isinstance(want, bool):
        return found is want
    if isinstance(found, dict) and isinstance(want, dict):
        return found.keys() == want.keys() and all(same(found[k], want[k]) for k in found)
    if isinstance(found, list) and isinstance(want, list):
        return len(found) == len(want) and all(same(a, b) for a, b in zip(found, want))
    return bool(found == want)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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
    ok = "equals" not in comparator or same(found, comparator["equals"])
    if "atLeast" in comparator:
        ok = ok and _number(found) and found >= comparator["atLeast"]
    if "atMost" in comparator:
        ok = ok and _number(found) and found <= comparator["atMost"]
    return ok, seen
