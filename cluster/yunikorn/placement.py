"""Placement rules: which leaf queue an application goes to.

Owns ``place``: the partition's rules tried in order (``provided``: the queue the pod
names; ``tag`` with value ``namespace``: ``root.<namespace>``; ``fixed``: the rule's value;
``user``: ``root.<user>``; ``group`` has nothing kubemu models), each optionally under a
``parent`` rule's queue. A rule's answer counts when it names an existing leaf, or a
queue that does not exist yet and the rule may ``create`` it (no leaf on the way). Called
by the core (``core.py``) when it first sees an application, and again after a reload for
applications whose queue became a parent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .config import Rule

Lookup = Callable[[str], "str | None"]  # path -> "leaf" | "parent" | None


@dataclass(frozen=True)
class Placed:
    path: str
    create: bool  # the queue does not exist yet; the rule creates it


def qualify(name: str) -> str:
    """A queue name as a full path: names without the ``root.`` prefix live under root."""
    return name if name.lower() == "root" or name.lower().startswith("root.") else f"root.{name}"


def _clean(name: str) -> str:
    # A dot in a namespace or user name would read as a level of the tree.
    return name.replace(".", "_dot_")


def _name(rule: Rule, queue: str | None, namespace: str, user: str) -> str | None:
    if rule.name == "provided":
        return queue or None
    if rule.name == "tag":
        return _clean(namespace) if rule.value.lower() == "namespace" and namespace else None
    if rule.name == "fixed":
        return rule.value or None
    if rule.name == "user":
        return _clean(user) if user else None
    return None


def _resolve(rule: Rule, queue: str | None, namespace: str, user: str, lookup: Lookup) -> str | None:
    name = _name(rule, queue, namespace, user)
    if name is None:
        return None
    dotted = "." in name
    if rule.parent is None or (rule.name == "fixed" and dotted) or name.lower().startswith("root."):
        return qualify(name)
    parent = _resolve(rule.parent, queue, namespace, user, lookup)
    if parent is None:
        return None
    if lookup(parent) == "leaf":
        return None  # nothing can live under a leaf
    return f"{parent}.{name}"


def _creatable(path: str, lookup: Lookup) -> bool:
    parts = path.split(".")
    return all(lookup(".".join(parts[:i])) != "leaf" for i in range(1, len(parts)))


def place(rules: Sequence[Rule], *, queue: str | None, namespace: str, user: str = "", lookup: Lookup) -> Placed | None:
    """The leaf queue for an application, or None when no rule places it."""
    for rule in rules:
        path = _resolve(rule, queue, namespace, user, lookup)
        if path is None:
            continue
        kind = lookup(path)
        if kind == "leaf":
            return Placed(path, False)
        if kind is None and rule.create and _creatable(path, lookup):
            return Placed(path, True)
    return None
