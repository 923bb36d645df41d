"""Custom resources at their versions: which schema checks a write, which version stores it,
and how a stored object is handed out.

Owns what upstream's custom-resource handler does around storage:
every ``served`` version of a CustomResourceDefinition is reachable
at ``/apis/<group>/<version>/...``; objects are stored once, at the storage version. A write
is checked against the schema of the version the URL names (``schema``, for
``fieldvalidation``) and stored at the storage version; what storage hands back is pruned and
defaulted by the schema of the version it was stored at (``crdvalidation.for_read``: a default
added to a CRD shows on objects stored before it, without rewriting them) and converted to
the version the client asked for.

Conversion here is upstream's ``None`` strategy: only ``apiVersion`` is rewritten, every
field stays as it is. A request to a CRD whose ``spec.conversion.strategy`` is ``Webhook`` at
a version other than its storage version is served by ``views.CustomConverted``, which calls
the webhook (``crdconversion.py``) and hands the verbs a request at the storage version;
objects stored at an older version and read at the storage version are still converted as
``None`` converts them. Called by ``verbs.py``, ``watch.py`` and ``views.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..api import kindspec
from ..api.errors import NotFound
from ..api.kinds import CUSTOM, Resource
from . import crdvalidation
from .paths import NOT_FOUND

if TYPE_CHECKING:
    from .handler import Handler

Schema = Mapping[str, Any]
CRD_KIND = "CustomResourceDefinition"


@dataclass(frozen=True)
class CustomView:
    """One custom kind as a request at one served version sees it."""

    group: str
    version: str  # the version the URL names
    storage_version: str
    schemas: Mapping[str, Schema | None] = field(default_factory=dict)  # version -> openAPIV3Schema
    # The version's ``subresources.scale``: where its replicas, observed replicas and selector are.
    scale: Mapping[str, Any] = field(default_factory=dict)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def schema(self) -> Schema | None:
        """The schema a write at this version is checked against."""
        return self.schemas.get(self.version)

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` (at one of the kind's versions) as it is stored: at the storage version.
        An apiVersion of another group or an unknown version is left for validation to refuse."""
        if self._ours(obj.get("apiVersion")):
            obj["apiVersion"] = f"{self.group}/{self.storage_version}"
        return obj

    def to_client(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored object as the client gets it: pruned and defaulted by the schema of the
        version it is stored at, then at the version the URL names. ``obj`` is not changed."""
        stored = str(obj.get("apiVersion") or "").rpartition("/")[2] or self.storage_version
        schema = self.schemas.get(stored, self.schemas.get(self.storage_version))
        out = crdvalidation.for_read(obj, schema)
        if out is obj:
            out = dict(obj)
        out["apiVersion"] = self.api_version
        return out

    def answer(self, obj: Any) -> Any:
        """A verb's answer: an object of the kind at the client's version, anything else (a
        ``Status``) as it is."""
        if isinstance(obj, dict) and obj.get("kind") != "Status" and self._ours(obj.get("apiVersion")):
            return self.to_client(obj)
        return obj

    def _ours(self, api_version: Any) -> bool:
        group, _, version = str(api_version or "").rpartition("/")
        return group == self.group and version in self.schemas


def view_from(crd: Mapping[str, Any], r: Resource) -> CustomView | None:
    """The view of ``r`` (a custom kind at one version) that ``crd`` defines; None when the
    definition does not serve that version."""
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or () if isinstance(v, Mapping) and v.get("name")]
    schemas: dict[str, Schema | None] = {}
    for v in versions:
        found = (v.get("schema") or {}).get("openAPIV3Schema")
        schemas[str(v["name"])] = found if isinstance(found, Mapping) else None
    served = [str(v["name"]) for v in versions if v.get("served", True)]
    if r.version not in served:
        return None
    storage = next((str(v["name"]) for v in versions if v.get("storage")), r.version)
    this = next(v for v in versions if str(v["name"]) == r.version)
    scale = (this.get("subresources") or {}).get("scale")
    return CustomView(r.group, r.version, storage, schemas, scale if isinstance(scale, Mapping) else {})


async def view_of(h: Handler, r: Resource) -> CustomView | None:
    """The view of a request's resource; None for a built-in kind. NotFound (upstream's
    wording for a path nothing serves) when its definition went, or no longer serves the
    version, since the path was resolved."""
    if r.kind not in CUSTOM:
        return None
    try:
        crd = await h.backend.get(CRD_KIND, "", f"{r.plural}.{r.group}")
    except NotFound:
        crd = kindspec.definition(r.kind) or {}  # a kind registered in code has no stored definition
    view = view_from(crd, r)
    if view is None:
        raise NotFound(NOT_FOUND)
    return view
