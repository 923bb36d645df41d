"""PATCH bodies: which patch content types a kind accepts, and what each does to an object.

Owns the dispatch from a PATCH request's Content-Type to its rules, which kinds are built in
(``is_builtin``: the only ones strategic merge serves), the parsing of bodies, merge
patch and server-side apply. The HTTP front end (``cluster/frontend/``) calls
``apply_patch`` for every PATCH request with the stored object, the Content-Type, the body
and the kind, and serves the new object or the ``StatusError``; a scenario's timeline
``patch`` step uses the same rules.
The single types are public too: ``json_patch`` (RFC 6902, its rules in
``cluster/api/jsonpatch.py``), ``merge_patch`` (RFC 7386) and ``strategic_merge_patch``
(built-in kinds only; its rules and merge keys in ``cluster/api/strategicpatch.py``).
Server-side apply is approximated: the applied object is strategic-merged over the stored
one (a custom resource's lists are atomic), or is the new object when none is stored; field
managers are not modelled. Nothing here changes its arguments.

Errors are upstream's (k8s.io/apiserver handlers/patch.go): 400 BadRequest for a body that
does not parse or a merge patch that is not an object (the two rule modules say theirs);
415 for an unknown Content-Type or a strategic merge of a custom resource.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from .errors import BadRequest, UnsupportedMediaType
from .jsonpatch import json_patch, json_type
from .kinds import RESOURCES
from .patches import merge_patch as _merge_patch_in_place
from .strategicpatch import strategic_merge

Obj = dict[str, Any]


def is_builtin(kind: str) -> bool:
    """Whether upstream compiles ``kind``'s type in, so strategic merge works: every built-in
    kind the registry serves (``kinds.RESOURCES``), and Scale (the scale subresource's body).
    Any other kind is a custom resource, for which upstream offers no strategic merge."""
    return kind in _BUILTIN


_BUILTIN = frozenset({r.kind for r in RESOURCES} | {"Scale"})


JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def accepted_patch_types(kind: str) -> tuple[str, ...]:
    """The PATCH content types a kind accepts, in upstream's order (the apiserver's
    installer for built-in kinds, the CRD handler for custom resources)."""
    if is_builtin(kind):
        return (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
    return (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)


def _unsupported(kind: str) -> UnsupportedMediaType:
    return UnsupportedMediaType(
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted_patch_types(kind))
    )


def apply_patch(doc: Obj | None, content_type: str, body: bytes, kind: str) -> Obj:
    """The object a PATCH request makes of ``doc``. ``doc`` is None only when the object
    does not exist, which only an apply patch may meet (it creates the object); for the
    other types the caller answers NotFound first. Content-Type parameters are ignored."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in accepted_patch_types(kind):
        raise _unsupported(kind)
    if media == APPLY_PATCH:
        applied = _parse_apply(body)
        if doc is None:
            return applied
        # Custom resources have no merge keys: their lists are atomic, as apply treats a
        # list without x-kubernetes-list-type.
        return strategic_merge(doc, applied, kind) if is_builtin(kind) else merge_patch(doc, applied)
    if doc is None:
        raise ValueError(f"a {media} patch needs an existing object; answer NotFound before patching")
    patch = _parse_json(body)
    if media == JSON_PATCH:
        return json_patch(doc, patch)
    if media == MERGE_PATCH:
        return merge_patch(doc, patch)
    return strategic_merge(doc, patch, kind)


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body, parse_constant=_reject_constant)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError both are
        raise BadRequest(f"the patch body is not valid JSON: {_one_line(e)}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


class _ApplyLoader(yaml.SafeLoader):
    """Safe YAML without timestamps: upstream's YAML-to-JSON conversion keeps an unquoted
    date a string, and a datetime would not serialise back to JSON."""


_ApplyLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _parse_apply(body: bytes) -> Obj:
    try:
        obj = json.loads(body, parse_constant=_reject_constant)  # kubectl sends JSON
    except ValueError:
        try:
            obj = yaml.load(body, Loader=_ApplyLoader)  # a SafeLoader: safe
        except yaml.YAMLError as e:
            raise BadRequest(f"error decoding YAML: {_one_line(e)}") from None
        # As upstream's YAML-to-JSON conversion: keys become strings (YAML 1.1 reads `on:`
        # as true, stored as "true"), and what JSON lacks (binary, sets) becomes text.
        obj = json.loads(json.dumps(obj, default=str))
    if not isinstance(obj, dict):
        raise BadRequest(f"error decoding YAML: the applied configuration is {json_type(obj)}, not an object")
    return obj


def merge_patch(doc: Obj, patch: Any) -> Obj:
    """RFC 7386 JSON merge patch: null deletes a field, an object merges into an object,
    anything else (lists included) replaces."""
    if not isinstance(patch, dict):
        raise BadRequest(f"merge patch: the body must be an object, not {json_type(patch)}")
    out = copy.deepcopy(doc)
    _merge_patch_in_place(out, copy.deepcopy(patch))  # the patch's lists go into the result
    return out


def strategic_merge_patch(doc: Obj, patch: Any, kind: str) -> Obj:
    """Kubernetes strategic merge patch of a built-in kind (415 for any other kind); the
    rules are ``strategicpatch.strategic_merge``'s."""
    if not is_builtin(kind):
        raise _unsupported(kind)
    return strategic_merge(doc, patch, kind)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
