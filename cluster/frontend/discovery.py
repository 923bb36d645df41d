"""Discovery and OpenAPI documents, built from the kinds table (``cluster/api/kinds.py``).

Owns what kubectl and the client libraries read before they touch an object: ``/version``,
the aggregated discovery lists (``/api``, ``/apis`` with the apidiscovery Accept), the
legacy ones (``/api``, ``/apis``, ``/api/v1``, ``/apis/{group}/{version}``) and the small
OpenAPI v3 documents that let ``kubectl create -f`` and ``apply -f`` validate on the server
(reference k8s-http-api.md §2.1, §2.2). Called by ``server.py``; pure data, no I/O.
"""

from __future__ import annotations

from typing import Any

from ..api.kinds import VERBS, Resource, served
from . import metricsapi

# The dispatcher kubectl on our machines picks its bundled minor version from this.
VERSION = {
    "major": "1",
    "minor": "33",
    "gitVersion": "v1.33.0-kubemu",
    "gitCommit": "kubemu",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.24",
    "compiler": "gc",
    "platform": "linux/amd64",
}
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

# Subresources and the kind each answers with (group, version, kind); "" group = core.
_SUBRESOURCE_KINDS = {
    "binding": ("", "v1", "Binding", ["create"]),
    "eviction": ("policy", "v1", "Eviction", ["create"]),
    "scale": ("autoscaling", "v1", "Scale", ["get", "patch", "update"]),
    "log": ("", "v1", "Pod", ["get"]),
}


def group_versions() -> list[tuple[str, str]]:
    """Every (group, version) served, core first, then the named groups by name."""
    seen = sorted({(r.group, r.version) for r in served()})
    return seen


def _in(group: str, version: str) -> list[Resource]:
    return [r for r in served() if r.group == group and r.version == version]


def _sub(r: Resource, name: str) -> tuple[str, str, str, list[str]]:
    if name == "status":
        return r.group, r.version, r.kind, ["get", "patch", "update"]
    return _SUBRESOURCE_KINDS[name]


def _aggregated_resource(r: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": r.plural,
        "singularResource": r.singular,
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "verbs": list(VERBS),
        "subresources": [],
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    for name in r.subresources:
        g, v, kind, verbs = _sub(r, name)
        entry["subresources"].append(
            {"subresource": name, "responseKind": {"group": g, "version": v, "kind": kind}, "verbs": verbs}
        )
    return entry


def aggregated(core: bool) -> dict[str, Any]:
    """``/api`` (``core``) or ``/apis`` as an APIGroupDiscoveryList."""
    groups: dict[str, list[str]] = {}
    for g, v in group_versions():
        if (g == "") == core:
            groups.setdefault(g, []).append(v)
    items = []
    for g, versions in groups.items():
        items.append(
            {
                "metadata": {"name": g, "creationTimestamp": None},
                "versions": [
                    {
                        "version": v,
                        "freshness": "Current",
                        "resources": [_aggregated_resource(r) for r in _in(g, v)],
                    }
                    for v in versions
                ],
            }
        )
    if not core:
        items.append(metricsapi.aggregated_group())  # served by metricsapi, not stored
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def legacy_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def legacy_groups() -> dict[str, Any]:
    groups = []
    for g, v in group_versions():
        if g:
            gv = {"groupVersion": f"{g}/{v}", "version": v}
            groups.append({"name": g, "versions": [gv], "preferredVersion": gv})
    groups.append(metricsapi.legacy_group())
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/{group}/{version}`` as an APIResourceList; None if not served."""
    served = _in(group, version)
    if not served:
        return None
    resources: list[dict[str, Any]] = []
    for r in served:
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(VERBS),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        resources.append(entry)
        for name in r.subresources:
            g, v, kind, verbs = _sub(r, name)
            sub: dict[str, Any] = {
                "name": f"{r.plural}/{name}",
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": kind,
                "verbs": verbs,
            }
            if g != group or v != version:
                sub["group"], sub["version"] = g, v
            resources.append(sub)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def openapi_index() -> dict[str, Any]:
    paths = {}
    for g, v in group_versions():
        key = f"apis/{g}/{v}" if g else f"api/{v}"
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash=kubemu"}
    return {"paths": paths}


def openapi_document(group: str, version: str) -> dict[str, Any] | None:
    """Enough OpenAPI v3 for kubectl to hand validation to the server (fieldValidation)."""
    served = _in(group, version)
    if not served:
        return None
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    param = [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}]
    paths = {}
    for r in served:
        scope = "/namespaces/{namespace}" if r.namespaced else ""
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        paths[f"{prefix}{scope}/{r.plural}/{{name}}"] = {
            "patch": {"x-kubernetes-group-version-kind": gvk, "parameters": param}
        }
    return {"openapi": "3.0.0", "info": {"title": "kubemu", "version": version}, "paths": paths}
