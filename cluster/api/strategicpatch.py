"""Strategic merge patch: the rules, and the list merge keys they rest on.

Owns ``strategic_merge`` and its tables. ``cluster/api/clientpatch.py`` calls it for an
``application/strategic-merge-patch+json`` body and for server-side apply over a stored
built-in object; deciding which kinds may be strategic-merged (415 for the others) stays
there, so this module never sees a custom resource.

kubemu has no per-kind schemas: a list's merge key is found by its field name
(``MERGE_KEYS``, ``PRIMITIVE_SETS``) save for exact paths of some kinds (``PATH_OVERRIDES``),
all from k8s.io/api's patchStrategy/patchMergeKey tags. Other lists are replaced, as
upstream replaces lists without a strategy (``tolerations``, ``spec.taints``).

Errors are upstream's (k8s.io/apiserver handlers/patch.go): 400 BadRequest for a body that
is not an object or a malformed directive (upstream answers some of those 500; retrying
cannot help), 422 Invalid for a list of lists. Nothing here changes its arguments.
"""

from __future__ import annotations

import copy
from typing import Any

from .errors import BadRequest, Invalid
from .jsonpatch import json_type, show_json

Obj = dict[str, Any]

# Merge keys of lists of objects, by the list's field name (k8s.io/api patchMergeKey tags).
MERGE_KEYS: dict[str, str] = {
    # PodSpec, also in every pod template
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "volumes": "name",
    "imagePullSecrets": "name", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
    "schedulingGates": "name", "resourceClaims": "name",
    # Container
    "ports": "containerPort", "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    # status of pods, nodes (addresses), workloads, PVCs, namespaces, PDBs, HPAs, services
    "conditions": "type", "addresses": "type", "podIPs": "ip", "hostIPs": "ip", "resourceClaimStatuses": "name",
    # ObjectMeta, ServiceAccount
    "ownerReferences": "uid", "secrets": "name",
}  # fmt: skip

# Lists of scalars with patchStrategy merge: merged as sets, keeping order.
PRIMITIVE_SETS: frozenset[str] = frozenset({"finalizers", "podCIDRs"})

# Where a field name means something else: (kind, dotted path without list indices) ->
# merge key, or None for a replaced list.
PATH_OVERRIDES: dict[tuple[str, str], str | None] = {
    ("Service", "spec.ports"): "port",
    ("Service", "status.loadBalancer.ingress.ports"): None,
    ("ServiceAccount", "imagePullSecrets"): None,  # unlike PodSpec's, no patch strategy
    ("Namespace", "spec.finalizers"): None,  # NamespaceSpec's are atomic, ObjectMeta's merge
    ("Endpoints", "subsets.addresses"): None,
    ("Endpoints", "subsets.notReadyAddresses"): None,
    ("Endpoints", "subsets.ports"): None,
    ("EndpointSlice", "endpoints.addresses"): None,
    ("EndpointSlice", "ports"): None,
    # NetworkPolicyPort and PortStatus have no containerPort: upstream replaces these lists.
    ("NetworkPolicy", "spec.ingress.ports"): None,
    ("NetworkPolicy", "spec.egress.ports"): None,
    ("Ingress", "status.loadBalancer.ingress.ports"): None,
}

_PATCH = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_DROP = object()  # what _clean makes of a value that a directive removes
_ABSENT = object()


def strategic_merge(doc: Obj, patch: Any, kind: str) -> Obj:
    """Kubernetes strategic merge patch of ``doc``, a built-in kind's object.

    Maps merge and ``null`` deletes, as in a merge patch; a list with a merge key merges
    element by element, a list in ``PRIMITIVE_SETS`` as an ordered set, any other list is
    replaced. Directives: ``$patch: replace|delete`` on a map or a list element (and
    ``{"$patch": "replace"}`` as a list element), ``$setElementOrder/<list>``,
    ``$deleteFromPrimitiveList/<list>`` and ``$retainKeys``. Without ``$setElementOrder``
    the order is upstream's: elements named in the patch take the patch's order, the others
    keep their places, and new elements come before the stored ones that follow them."""
    if not isinstance(patch, dict):
        raise BadRequest(f"strategic merge patch: the body must be an object, not {json_type(patch)}")
    return _merge_map(copy.deepcopy(doc), patch, kind, ())


def _merge_map(original: Obj, patch: Obj, kind: str, path: tuple[str, ...]) -> Obj:
    """Merges ``patch`` into ``original`` (a copy this module owns); never changes ``patch``."""
    if _PATCH in patch:
        directive = patch[_PATCH]
        if directive == "replace":
            return _clean_map(patch)
        if directive == "delete":
            return {}  # upstream leaves an empty map, not an absent field
        raise _bad(path, f"unknown patch type: {show_json(directive)}")
    _retain_keys(original, patch, path)
    ordered = _set_element_orders(original, patch, kind, path)
    for key, value in patch.items():
        if _is_directive(key) or key in ordered:
            continue
        current = original.get(key)
        if value is None:
            original.pop(key, None)
        elif isinstance(current, dict) and isinstance(value, dict):
            original[key] = _merge_map(current, value, kind, (*path, key))
        elif isinstance(current, list) and isinstance(value, list):
            original[key] = _merge_list(current, value, kind, (*path, key))
        elif (cleaned := _clean(value)) is _DROP:
            original.pop(key, None)
        else:
            original[key] = cleaned
    # Deletions last: kubectl sends them beside the list's additions and its order.
    for key, values in patch.items():
        if key.startswith(_DELETE_FROM):
            name = key[len(_DELETE_FROM) :]
            if not name or not isinstance(values, list):
                raise _bad((*path, key), "invalid patch format of primitive list")
            if isinstance(original.get(name), list):
                original[name] = [v for v in original[name] if v not in values]
    return original


def _retain_keys(original: Obj, patch: Obj, path: tuple[str, ...]) -> None:
    if _RETAIN not in patch:
        return
    keep = patch[_RETAIN]
    where = (*path, _RETAIN)
    if not isinstance(keep, list):
        raise _bad(where, "invalid patch format of retainKeys")
    for key, value in patch.items():
        if value is not None and not _is_directive(key) and key not in keep:
            raise _bad(where, f'invalid patch format of retainKeys: "{key}" is set but not retained')
    for key in [k for k in original if k not in keep]:
        del original[key]


def _set_element_orders(original: Obj, patch: Obj, kind: str, path: tuple[str, ...]) -> set[str]:
    """Merges each list that has a ``$setElementOrder`` and orders it; returns their names.
    The order list ranks the patch's elements; stored elements it does not name keep their
    relative order around them."""
    done: set[str] = set()
    for key, order in patch.items():
        if not key.startswith(_ORDER):
            continue
        name = key[len(_ORDER) :]
        if not name or not isinstance(order, list):
            raise _bad((*path, key), "invalid patch format of setElementOrder list")
        current, given = original.get(name, []), patch.get(name, [])
        merge_key = _list_strategy(kind, (*path, name))
        # A deleted or non-list field follows the ordinary rules; so does a replaced list.
        if not isinstance(current, list) or not isinstance(given, list) or merge_key is None:
            continue
        _check_order(given, order, merge_key, (*path, key))
        stored = list(current)  # merging appends to current; the order wants it as it was
        merged = _merge_list(current, given, kind, (*path, name)) if name in patch else current
        if name in original or name in patch:
            original[name] = _order(merged, order, stored, merge_key)
            done.add(name)
    return done


def _check_order(given: list[Any], order: list[Any], merge_key: str, where: tuple[str, ...]) -> None:
    """The patch's elements must appear in the order list, in the same order."""
    wanted = [_ident(o, merge_key) for o in order]
    at = 0
    for item in given:
        if isinstance(item, dict) and _PATCH in item:
            continue
        ident = _ident(item, merge_key)
        while at < len(wanted) and (ident is _ABSENT or wanted[at] != ident):
            at += 1
        if at == len(wanted):
            raise _bad(where, "the order in the patch list doesn't match the $setElementOrder list")
        at += 1


def _merge_list(original: list[Any], patch: list[Any], kind: str, path: tuple[str, ...]) -> list[Any]:
    merge_key = _list_strategy(kind, path)
    if merge_key is None:
        return _clean_list(patch)
    if any(isinstance(v, list) for v in (*original, *patch)):
        raise Invalid(f"strategic merge patch: {'.'.join(path)}: lists of lists are not supported")
    if merge_key == "":
        merged: list[Any] = []
        for value in (*original, *patch):
            if value not in merged:
                merged.append(copy.deepcopy(value))
        return _order(merged, patch, original, "")
    return _merge_keyed_list(original, patch, merge_key, kind, path)


def _merge_keyed_list(
    original: list[Any], patch: list[Any], merge_key: str, kind: str, path: tuple[str, ...]
) -> list[Any]:
    items: list[Obj] = []
    replace = False
    for i, elem in enumerate(patch):
        if not isinstance(elem, dict):
            raise _bad(path, f"element {i} is not an object")
        directive = elem.get(_PATCH, _ABSENT)
        if directive in (_ABSENT, "delete") and merge_key not in elem:
            raise _bad(path, f"element {i} does not contain declared merge key: {merge_key}")
        if directive is _ABSENT:
            items.append(elem)
        elif directive == "delete":
            original = [o for o in original if _ident(o, merge_key) != elem[merge_key]]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _bad(path, "merging lists cannot yet be specified in the patch")
        else:
            raise _bad(path, f"unknown patch type: {show_json(directive)}")
    if replace:
        return [_clean_map(e) for e in items]
    stored = list(original)
    for elem in items:
        at = _position(original, elem, merge_key)
        if at is None:
            original.append(_clean_map(elem))
        else:
            original[at] = _merge_map(original[at], elem, kind, path)
    return _order(original, items, stored, merge_key)


def _order(merged: list[Any], patch_order: list[Any], stored: list[Any], merge_key: str) -> list[Any]:
    """Upstream's ordering: elements named in ``patch_order`` follow it, the others follow
    ``stored``; the two runs are interleaved, a stored element going first only when both
    were stored and it came first."""
    named = [v for v in merged if _position(patch_order, v, merge_key) is not None]
    others = [v for v in merged if _position(patch_order, v, merge_key) is None]
    named.sort(key=lambda v: _position(patch_order, v, merge_key) or 0)
    others.sort(key=lambda v: _position(stored, v, merge_key) or 0)  # all stored
    out: list[Any] = []
    while named or others:
        if others and named:
            left, right = _position(stored, others[0], merge_key), _position(stored, named[0], merge_key)
            take_left = left is not None and right is not None and left < right
        else:
            take_left = bool(others)
        out.append(others.pop(0) if take_left else named.pop(0))
    return out


def _ident(value: Any, merge_key: str) -> Any:
    """What identifies a list element: its merge key's value, or itself in a set."""
    if not merge_key:
        return value
    return value.get(merge_key, _ABSENT) if isinstance(value, dict) else _ABSENT


def _position(seq: list[Any], value: Any, merge_key: str) -> int | None:
    ident = _ident(value, merge_key)
    if ident is _ABSENT:
        return None
    return next((i for i, v in enumerate(seq) if _ident(v, merge_key) == ident), None)


def _list_strategy(kind: str, path: tuple[str, ...]) -> str | None:
    """A list's merge key; "" for a set of scalars; None for a replaced list."""
    dotted = ".".join(path)
    if (kind, dotted) in PATH_OVERRIDES:
        return PATH_OVERRIDES[(kind, dotted)]
    if path[-1] in PRIMITIVE_SETS:
        return ""
    return MERGE_KEYS.get(path[-1])


def _is_directive(key: str) -> bool:
    return key in (_PATCH, _RETAIN) or key.startswith((_ORDER, _DELETE_FROM))


def _clean(value: Any) -> Any:
    """A patch value that lands where nothing merges with it, as upstream stores it: nulls
    in maps dropped, directives removed, a map or element that is a deletion dropped."""
    if isinstance(value, dict):
        return _clean_map(value) if value.get(_PATCH, "replace") == "replace" else _DROP
    if isinstance(value, list):
        return _clean_list(value)
    return value


def _clean_map(value: Obj) -> Obj:
    out: Obj = {}
    for key, item in value.items():
        if item is not None and not _is_directive(key) and (cleaned := _clean(item)) is not _DROP:
            out[key] = cleaned
    return out


def _clean_list(value: list[Any]) -> list[Any]:
    # An element carrying $patch is a directive (the list's replace marker, a deletion).
    return [_clean(v) for v in value if not (isinstance(v, dict) and _PATCH in v)]


def _bad(path: tuple[str, ...], why: str) -> BadRequest:
    where = f"{'.'.join(path)}: " if path else ""
    return BadRequest(f"strategic merge patch: {where}{why}")
