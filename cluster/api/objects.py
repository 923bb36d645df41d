"""Kinds, keys and small accessors for API objects.

API objects are plain dicts in Kubernetes JSON shape (camelCase, unknown fields kept), so a
user's manifests load unchanged and the codec is trivial. This module owns the list of kinds
kubemu serves, which of them are namespaced, and the key every component uses to name an
object: ``(kind, namespace, name)`` with ``""`` as the namespace of cluster-scoped kinds.
"""

from __future__ import annotations

from typing import Any

from .kinds import LISTENERS, RESOURCES, Resource

# kind -> (apiVersion, namespaced), for every kind kubemu serves (``kinds.py``).
KINDS: dict[str, tuple[str, bool]] = {r.kind: (r.api_version, r.namespaced) for r in RESOURCES}


def _follow_custom_kinds(kind: str, r: Resource | None) -> None:
    if r is None:
        KINDS.pop(kind, None)
    else:
        KINDS[kind] = (r.api_version, r.namespaced)


LISTENERS.append(_follow_custom_kinds)

NODE_LEASE_NAMESPACE = "kube-node-lease"
DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER = "default-scheduler"

Key = tuple[str, str, str]


def namespaced(kind: str) -> bool:
    return KINDS[kind][1]


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    m: dict[str, Any] = obj.setdefault("metadata", {})
    return m


def name_of(obj: dict[str, Any]) -> str:
    name: str = (obj.get("metadata") or {}).get("name", "")
    return name


def namespace_of(obj: dict[str, Any]) -> str:
    ns: str = (obj.get("metadata") or {}).get("namespace", "")
    return ns


def uid_of(obj: dict[str, Any]) -> str:
    uid: str = (obj.get("metadata") or {}).get("uid", "")
    return uid


def key_of(obj: dict[str, Any]) -> Key:
    kind = obj.get("kind", "")
    ns = namespace_of(obj) if kind in KINDS and namespaced(kind) else ""
    return (kind, ns, name_of(obj))


def labels_of(obj: dict[str, Any]) -> dict[str, Any]:
    return (obj.get("metadata") or {}).get("labels") or {}


def node_name_of(pod: dict[str, Any]) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def phase_of(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_terminal(pod: dict[str, Any]) -> bool:
    return phase_of(pod) in ("Succeeded", "Failed")


def is_terminating(obj: dict[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def priority_of(pod: dict[str, Any]) -> int:
    return (pod.get("spec") or {}).get("priority") or 0


def ref(obj: dict[str, Any]) -> str:
    """``Kind/namespace/name`` (or ``Kind/name`` for cluster-scoped kinds), as reports print."""
    kind, ns, name = key_of(obj)
    return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


def condition(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            found: dict[str, Any] = c
            return found
    return None


def set_condition(status: dict[str, Any], cond: dict[str, Any]) -> None:
    """Replace the condition of the same type in ``status`` (or append it)."""
    conds = status.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == cond["type"]:
            conds[i] = cond
            return
    conds.append(cond)
