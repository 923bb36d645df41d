"""Kubernetes API paths: which resource, namespace, object and subresource a URL names.

Owns the parsing of ``/api/v1/...`` and ``/apis/{group}/{version}/...`` into a ``Target``
(the kind from ``cluster/api/kinds.py``, or NotFound with upstream's wording). Called by
``handler.py``.
"""

from __future__ import annotations

from typing import NamedTuple

from ..api.errors import NotFound
from ..api.kinds import BY_PLURAL, Resource, at_version

NOT_FOUND = "the server could not find the requested resource"


class Target(NamedTuple):
    resource: Resource
    namespace: str  # "" for cluster-scoped kinds and for lists across namespaces
    name: str  # "" for a collection
    subresource: str  # "" for the object itself


def group_version(path: str) -> tuple[str, str, list[str]] | None:
    """(group, version, the segments after them) of an API path, or None for another path."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


def target(group: str, version: str, rest: list[str]) -> Target:
    """The object or collection ``rest`` names under ``group``/``version``."""
    namespace = ""
    # namespaces/NAME/status and /finalize are a Namespace's subresources, not a collection.
    ns_subresource = len(rest) == 3 and (group, rest[2]) not in BY_PLURAL
    if len(rest) >= 3 and rest[0] == "namespaces" and not ns_subresource:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3 and rest[2] == "proxy":
        rest = rest[:3]  # <resource>/NAME/proxy/<path>: the rest is the proxied request's own path
    if not rest or len(rest) > 3:
        raise NotFound(NOT_FOUND)
    resource = at_version(group, version, rest[0])  # a custom kind at any version it serves
    if resource is None:
        raise NotFound(NOT_FOUND)
    if namespace and not resource.namespaced:
        raise NotFound(NOT_FOUND)
    name = rest[1] if len(rest) >= 2 else ""
    sub = rest[2] if len(rest) == 3 else ""
    if sub and sub not in resource.subresources:
        raise NotFound(NOT_FOUND)
    return Target(resource, namespace, name, sub)
