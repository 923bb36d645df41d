"""Discovery and OpenAPI documents, built from the kinds table (``cluster/api/kinds.py``),
and the content negotiation that picks which discovery document a client gets.

Owns what kubectl and the client libraries read before they touch an object: ``/version``,
the aggregated discovery lists (``/api``, ``/apis`` as ``apidiscovery.k8s.io`` v2 or
v2beta1), the legacy ones (``/api``, ``/apis``, ``/api/v1``, ``/apis/{group}/{version}``), and the
``endpoints`` of every kind that the OpenAPI documents describe (v3 in ``openapi_v3.py``,
Swagger 2.0 in ``openapi_v2.py``). ``answer``
serves ``/api``, ``/apis`` and ``/openapi/...`` (through those two modules):
it reads the Accept header clause by clause as upstream's discovery wrapper does
and sets the ETag, Vary and Cache-Control headers of aggregated
answers (304 on a matching If-None-Match). Called by ``handler.py``; pure data, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import yaml

from ..api.errors import NotAcceptable, NotFound
from ..api.kinds import Resource, discoverable, version_order
from . import metricsapi
from .paths import NOT_FOUND, group_version
from .wire import JSON, Response, dumps

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
AGGREGATED_GROUP, AGGREGATED_KIND = "apidiscovery.k8s.io", "APIGroupDiscoveryList"
# A 1.33 server serves v2 only unless its gate AggregatedDiscoveryRemoveBetaType is turned
# off; kubemu runs as such a 1.33 (serving both, as 1.30 to 1.32 do by default) so that
# kubectl 1.27 to 1.29, which read only v2beta1, get aggregated discovery too.
AGGREGATED_VERSIONS = ("v2", "v2beta1")
# Upstream's serializers, in its order: the first answers an empty Accept, the 406 names
# them all. kubemu writes discovery as JSON or YAML; a protobuf clause is passed over like
# any type not served (client-go asks for discovery in JSON only).
_UPSTREAM_TYPES = (JSON, "application/yaml", "application/vnd.kubernetes.protobuf")
_WRITTEN = _UPSTREAM_TYPES[:2]
NOT_ACCEPTABLE = "only the following media types are accepted: " + ", ".join(_UPSTREAM_TYPES)

# Subresources and the kind each answers with (group, version, kind); "" group = core.
_SUBRESOURCE_KINDS = {
    "binding": ("", "v1", "Binding", ["create"]),
    "eviction": ("policy", "v1", "Eviction", ["create"]),
    "scale": ("autoscaling", "v1", "Scale", ["get", "patch", "update"]),
    "log": ("", "v1", "Pod", ["get"]),
    # Connect subresources answer with their options kind, as upstream's discovery lists them.
    "attach": ("", "v1", "PodAttachOptions", ["create", "get"]),
    "exec": ("", "v1", "PodExecOptions", ["create", "get"]),
    "portforward": ("", "v1", "PodPortForwardOptions", ["create", "get"]),
    "proxy": ("", "v1", "PodProxyOptions", ["create", "delete", "get", "patch", "update"]),
    "ephemeralcontainers": ("", "v1", "Pod", ["get", "patch", "update"]),
    "finalize": ("", "v1", "Namespace", ["update"]),
    "approval": ("certificates.k8s.io", "v1", "CertificateSigningRequest", ["get", "patch", "update"]),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", ["create"]),  # serviceaccounts/token
}


def group_versions() -> list[tuple[str, str]]:
    """Every (group, version) served, core first, then the named groups by name, each
    group's versions in upstream's priority (the first is the preferred one)."""
    return sorted({(r.group, r.version) for r in discoverable()}, key=lambda gv: (gv[0], version_order(gv[1])))


def _in(group: str, version: str) -> list[Resource]:
    return [r for r in discoverable() if r.group == group and r.version == version]


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
        "verbs": list(r.verbs),
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
    """``/api`` (``core``) or ``/apis`` as a v2 APIGroupDiscoveryList (v2beta1 differs only
    in ``apiVersion``)."""
    groups: dict[str, list[str]] = {}
    for g, v in group_versions():
        if (g == "") == core:
            groups.setdefault(g, []).append(v)
    items = []
    for g, versions in groups.items():
        items.append(
            {
                # The core group's name is "": omitted, as upstream's omitempty does.
                "metadata": {**({"name": g} if g else {}), "creationTimestamp": None},
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
    return {"kind": AGGREGATED_KIND, "apiVersion": f"{AGGREGATED_GROUP}/v2", "metadata": {}, "items": items}


def legacy_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def legacy_groups() -> dict[str, Any]:
    versions: dict[str, list[dict[str, str]]] = {}
    for g, v in group_versions():
        if g:
            versions.setdefault(g, []).append({"groupVersion": f"{g}/{v}", "version": v})
    groups = [{"name": g, "versions": vs, "preferredVersion": vs[0]} for g, vs in versions.items()]
    groups.append(metricsapi.legacy_group())
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group_document(name: str) -> dict[str, Any] | None:
    """``/apis/{group}``: one group's APIGroup (its versions, the preferred one first), as
    the group list names it; None if the group is not served."""
    for g in legacy_groups()["groups"]:
        if g["name"] == name:
            return {"kind": "APIGroup", "apiVersion": "v1", **g}
    return None


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
            "verbs": list(r.verbs),
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


def openapi_index(crds: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``/openapi/v3``: each group-version's document by its URL (``openapi_v3.index``)."""
    from . import openapi_v3  # it builds on this module's endpoints: imported when asked for

    return openapi_v3.index(crds)


class Endpoint(NamedTuple):
    """One URL of a served resource as the OpenAPI documents (v3 here, v2 in
    ``openapi_v2.py``) describe it: the Kubernetes verbs it answers and the kind they carry."""

    path: str  # e.g. /api/v1/namespaces/{namespace}/pods/{name}/status
    part: str  # "collection", "object", or the subresource's name
    gvk: dict[str, str]  # the x-kubernetes-group-version-kind of its operations
    verbs: tuple[str, ...]


_COLLECTION_VERBS = ("list", "create", "deletecollection")
_OBJECT_VERBS = ("get", "update", "patch", "delete")


def endpoints(r: Resource) -> list[Endpoint]:
    """The URLs of ``r``: its collection, one object, then each subresource."""
    prefix = f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"
    scope = "/namespaces/{namespace}" if r.namespaced else ""
    collection = f"{prefix}{scope}/{r.plural}"
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    found = [Endpoint(collection, "collection", gvk, tuple(v for v in _COLLECTION_VERBS if v in r.verbs))]
    object_verbs = tuple(v for v in _OBJECT_VERBS if v in r.verbs)
    if object_verbs:  # a review kind is only created: it has no object URL
        found.append(Endpoint(collection + "/{name}", "object", gvk, object_verbs))
    for name in r.subresources:
        g, v, kind, verbs = _sub(r, name)
        found.append(
            Endpoint(f"{collection}/{{name}}/{name}", name, {"group": g, "version": v, "kind": kind}, tuple(verbs))
        )
    return found


def openapi_document(group: str, version: str, crds: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any] | None:
    """A group-version's OpenAPI v3 document (``openapi_v3.build``), None if it is not served."""
    from . import openapi_v3

    resources = openapi_v3.resources_in(group, version)
    return openapi_v3.build(resources, crds) if resources else None


# -- serving: which document for which Accept header --------------------------------------


class Clause(NamedTuple):
    """One media range of an Accept header: ``type/subtype;param=value...``."""

    type: str
    subtype: str
    q: float
    params: Mapping[str, str]  # every parameter but q

    def target(self) -> tuple[str, str, str] | None:
        """The (group, version, kind) the clause asks the answer converted to; None for a
        plain clause. Any one of g, v, as makes a target, as upstream."""
        if not {"g", "v", "as"} & self.params.keys():
            return None
        return self.params.get("g", ""), self.params.get("v", ""), self.params.get("as", "")

    def matches(self, media_type: str) -> bool:
        kind, sub = media_type.split("/")
        return (self.type, self.subtype) in ((kind, sub), (kind, "*"), ("*", "*"))


class Choice(NamedTuple):
    media_type: str  # one of _WRITTEN
    version: str  # the aggregated version (v2, v2beta1); "" for the legacy document


def _quality(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return 0.0  # as upstream: an unreadable q ranks the clause last, it is still tried


def parse_accept(header: str) -> list[Clause]:
    """The clauses of an Accept header in the order the server tries them: by q (default 1)
    descending, then specific types before wildcards, ties in written order. A clause that
    is not a media range is dropped (upstream's goautoneg reading; a bare ``*`` is ``*/*``)."""
    clauses = []
    for part in header.split(","):
        media_range, *params = part.strip().split(";")
        kind = [p.strip() for p in media_range.split("/")]
        if kind == ["*"]:
            kind = ["*", "*"]
        if len(kind) != 2:
            continue
        q, named = 1.0, {}
        for param in params:
            key, eq, value = param.partition("=")
            if not eq:
                continue
            if key.strip() == "q":
                q = _quality(value)
            else:
                named[key.strip()] = value.strip()
        clauses.append(Clause(kind[0], kind[1], q, named))
    return sorted(clauses, key=lambda c: (-c.q, c.type == "*", c.subtype == "*"))  # stable


def _aggregated_version(clause: Clause) -> str:
    """The aggregated version ``clause`` asks for if this server serves it, else ""."""
    target = clause.target()
    if target is None:
        return ""
    group, version, kind = target
    return version if (group, kind) == (AGGREGATED_GROUP, AGGREGATED_KIND) and version in AGGREGATED_VERSIONS else ""


def _written(clause: Clause) -> str:
    """The first media type kubemu writes that ``clause`` accepts, else ""."""
    return next((media_type for media_type in _WRITTEN if clause.matches(media_type)), "")


def negotiate(accept: str) -> Choice:
    """What ``/api`` and ``/apis`` answer an Accept header with;
    NotAcceptable when no clause can be served."""
    if not accept:
        return Choice(_WRITTEN[0], "")
    clauses = parse_accept(accept)
    # Upstream's discovery wrapper: the first clause naming a served aggregated list wins,
    # wherever plain clauses stand; one naming an unserved version is skipped, not refused.
    for clause in clauses:
        version, media_type = _aggregated_version(clause), _written(clause)
        if version and media_type:
            return Choice(media_type, version)
    # Then the legacy handler: it converts to nothing, so it takes the first plain clause.
    for clause in clauses:
        media_type = _written(clause)
        if clause.target() is None and media_type:
            return Choice(media_type, "")
    raise NotAcceptable(NOT_ACCEPTABLE)


def _encode(doc: dict[str, Any], media_type: str) -> bytes:
    return dumps(doc) if media_type == JSON else yaml.safe_dump(doc).encode()


def etag(doc: dict[str, Any]) -> str:
    """Upstream's ETag: quoted upper-case hex SHA-512 of the document's JSON."""
    return '"' + hashlib.sha512(dumps(doc)).hexdigest().upper() + '"'


def _aggregated_answer(core: bool, choice: Choice, if_none_match: str) -> Response:
    # One ETag per document whichever version or media type is written, as upstream:
    # ``Vary: Accept`` is what keeps a client cache's entries apart.
    doc = aggregated(core)
    tag = etag(doc)
    content_type = f"{choice.media_type};g={AGGREGATED_GROUP};v={choice.version};as={AGGREGATED_KIND}"
    headers = (("ETag", tag), ("Vary", "Accept"), ("Cache-Control", "public"))
    if if_none_match == tag:  # upstream compares the header as a whole, no list, no W/
        return Response(304, b"", content_type, headers)
    doc["apiVersion"] = f"{AGGREGATED_GROUP}/{choice.version}"
    return Response(200, _encode(doc, choice.media_type), content_type, headers)


def answer(
    path: str,
    headers: Mapping[str, str],
    address: str,
    crds: Sequence[Mapping[str, Any]] = (),
    query: Mapping[str, str] | None = None,
) -> Response | None:
    """The answer to ``/api``, ``/apis`` or an ``/openapi/`` path (``headers`` with lower-case
    names, ``address`` the host:port legacy ``/api`` advertises); None for any other path.
    ``crds``: the stored custom resource definitions, whose schemas the OpenAPI documents
    carry; ``query``: the request's (an OpenAPI v3 document's ``hash``). Failures are raised
    as StatusErrors (NotAcceptable, NotFound)."""
    if path in ("/api", "/apis"):
        core = path == "/api"
        choice = negotiate(headers.get("accept", ""))
        if choice.version:
            return _aggregated_answer(core, choice, headers.get("if-none-match", ""))
        legacy = legacy_versions(address) if core else legacy_groups()
        return Response(200, _encode(legacy, choice.media_type), choice.media_type)  # no ETag, as upstream
    if path.startswith("/apis/") and path.count("/") == 2:
        doc = group_document(path.removeprefix("/apis/"))
        if doc is None:
            raise NotFound(NOT_FOUND)
        return Response(200, _encode(doc, JSON), JSON)
    if path.startswith("/openapi/"):
        # Imported here: both build on this module's endpoints and negotiation.
        from . import openapi_v2, openapi_v3

        if path == "/openapi/v3":
            return openapi_v3.answer_index(headers, crds)
        gv = group_version(path.removeprefix("/openapi/v3")) if path.startswith("/openapi/v3/") else None
        if gv and not gv[2]:
            return openapi_v3.answer_document(gv[0], gv[1], headers, query or {}, crds)
        if path == "/openapi/v2":
            return openapi_v2.answer(headers, crds)
        raise NotFound(NOT_FOUND)
    return None
