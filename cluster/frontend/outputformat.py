"""What a resource request's Accept header asks the answer to be: the object (or list) as it
is, or a ``meta.k8s.io`` Table, v1 or v1beta1.

Owns the choice upstream's resource handlers make (``NegotiateOutputMediaType`` with the
endpoint's ``AllowsMediaTypeTransform``), clause by clause in the header's order of
preference (``discovery.parse_accept``):

- a plain clause (no ``as``, ``g`` or ``v``) naming a type upstream writes (JSON, YAML,
  protobuf, or a wildcard) takes the object; kubemu writes it as JSON, as it always has;
- ``as=Table;g=meta.k8s.io;v=v1`` (or ``v1beta1``, which kubectl before 1.20 reads) on JSON
  or YAML takes a Table of that version;
- ``as=PartialObjectMetadata`` or ``PartialObjectMetadataList`` in ``meta.k8s.io`` v1 or
  v1beta1 is accepted and answered with the object itself (kubemu has no metadata-only
  answer; client-go's metadata clients read the metadata they need from it);
- any other clause (``as=Foo``, ``v=v2``, a Table in protobuf, ``text/html``) is passed over.

No clause left: 406 NotAcceptable with upstream's message (upstream's conformance test asks
for a Table of a SelfSubjectAccessReview, which has no table convertor: ``convertible``).
No Accept header: the object.
``as_table_version`` writes a Table at the version chosen. Called by ``verbs.py`` and
``watch.py``.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import NotAcceptable
from .discovery import NOT_ACCEPTABLE, Clause, parse_accept

META_GROUP = "meta.k8s.io"
TABLE_VERSIONS = ("v1", "v1beta1")
_PARTIAL = ("PartialObjectMetadata", "PartialObjectMetadataList")
_WRITTEN = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_TABLE_TYPES = _WRITTEN[:2]  # upstream converts to Table only for JSON and YAML


def table_version(accept: str, convertible: bool = True) -> str:
    """The apiVersion of the Table ``accept`` asks for (``meta.k8s.io/v1`` or
    ``meta.k8s.io/v1beta1``), or "" for the object itself; NotAcceptable when nothing in
    ``accept`` can be answered. ``convertible``: the resource can be printed as a Table
    (upstream's reviews have no table convertor: a Table clause is passed over)."""
    if not accept.strip():
        return ""
    for clause in parse_accept(accept):
        answer = _answer(clause)
        if answer is not None and (convertible or not answer):
            return answer
    raise NotAcceptable(NOT_ACCEPTABLE)


def _answer(clause: Clause) -> str | None:
    """What ``clause`` is answered with ("" the object, else the Table's apiVersion), or
    None when kubemu cannot answer it."""
    target = clause.target()
    if target is None:
        return "" if _matches(clause, _WRITTEN) else None
    group, version, kind = target
    if group != META_GROUP or version not in TABLE_VERSIONS:
        return None
    if kind == "Table":
        return f"{META_GROUP}/{version}" if _matches(clause, _TABLE_TYPES) else None
    if kind in _PARTIAL:
        return "" if _matches(clause, _WRITTEN) else None
    return None


def _matches(clause: Clause, media_types: tuple[str, ...]) -> bool:
    return any(clause.matches(m) for m in media_types)


def as_table_version(table: dict[str, Any], version: str) -> dict[str, Any]:
    """``table`` (a ``tables.table``, meta.k8s.io/v1) and its rows' PartialObjectMetadata at
    the Table version asked for: v1beta1 differs from v1 in nothing but the apiVersion."""
    if version and version != table.get("apiVersion"):
        table["apiVersion"] = version
        for row in table.get("rows") or ():
            obj = row.get("object")
            if isinstance(obj, dict) and obj.get("kind") == "PartialObjectMetadata":
                obj["apiVersion"] = version
    return table
