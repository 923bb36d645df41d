"""PATCH bodies: what each patch content type does to an object.

Owns the patch types a Kubernetes client may send and their rules. The HTTP front end
(``cluster/frontend/``) calls ``apply_patch`` for every PATCH request with the stored object,
the Content-Type, the body and the kind, and serves the new object or the ``StatusError``;
a scenario's timeline ``patch`` step uses the same rules.
The single types are public too: ``json_patch`` (RFC 6902, RFC 6901 pointers),
``merge_patch`` (RFC 7386) and ``strategic_merge_patch`` (built-in kinds only). Server-side
apply is approximated: the applied object is strategic-merged over the stored one (a
custom resource's lists are atomic), or is the new object when none is stored; field
managers are not modelled. Nothing here changes its arguments.

kubemu has no per-kind schemas: strategic merge finds a list's merge key by its field name
(``MERGE_KEYS``, ``PRIMITIVE_SETS``) save for exact paths of some kinds (``PATH_OVERRIDES``),
all from k8s.io/api's patchStrategy/patchMergeKey tags. Other lists are replaced, as
upstream replaces lists without a strategy (``tolerations``, ``spec.taints``).

Errors are upstream's (k8s.io/apiserver handlers/patch.go): 400 BadRequest for a body that
does not parse, a JSON patch that is not a list of objects, a malformed strategic directive
(upstream answers some of those 500; retrying cannot help); 422 Invalid for a JSON patch op
that cannot be applied (failed ``test``, missing path, unknown or incomplete op: upstream
answers every ``Patch.Apply`` error so, though with a generic message where kubemu names the
op and why) and for a strategic list of lists; 415 for an unknown Content-Type or a
strategic merge of a custom resource.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, NamedTuple

import yaml

from .errors import BadRequest, Invalid, UnsupportedMediaType
from .patches import merge_patch as _merge_patch_in_place

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
}

# Kinds whose types upstream compiles in, so strategic merge works. Any other kind is a
# custom resource, for which upstream offers no strategic merge.
BUILTIN_KINDS: frozenset[str] = frozenset(
    {
        "Pod", "Node", "Namespace", "Event", "PriorityClass", "PodDisruptionBudget", "ReplicaSet",
        "DaemonSet", "Deployment", "StatefulSet", "Job", "CronJob", "Lease", "ConfigMap", "Secret",
        "Service", "ServiceAccount", "Endpoints", "PersistentVolume", "PersistentVolumeClaim",
        "ResourceQuota", "LimitRange", "HorizontalPodAutoscaler", "StorageClass", "Role",
        "RoleBinding", "ClusterRole", "ClusterRoleBinding", "EndpointSlice",
        # also built in upstream, and served by kubemu (cluster/api/kinds.py, the scale subresource)
        "PodTemplate", "ControllerRevision", "CustomResourceDefinition", "Scale",
    }
)  # fmt: skip

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def accepted_patch_types(kind: str) -> tuple[str, ...]:
    """The PATCH content types a kind accepts, in upstream's order (the apiserver's
    installer for built-in kinds, the CRD handler for custom resources)."""
    if kind in BUILTIN_KINDS:
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
        return _strategic(doc, applied, kind) if kind in BUILTIN_KINDS else merge_patch(doc, applied)
    if doc is None:
        raise ValueError(f"a {media} patch needs an existing object; answer NotFound before patching")
    patch = _parse_json(body)
    if media == JSON_PATCH:
        return json_patch(doc, patch)
    if media == MERGE_PATCH:
        return merge_patch(doc, patch)
    return _strategic(doc, patch, kind)


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
        raise BadRequest(f"error decoding YAML: the applied configuration is {_json_type(obj)}, not an object")
    return obj


def merge_patch(doc: Obj, patch: Any) -> Obj:
    """RFC 7386 JSON merge patch: null deletes a field, an object merges into an object,
    anything else (lists included) replaces."""
    if not isinstance(patch, dict):
        raise BadRequest(f"merge patch: the body must be an object, not {_json_type(patch)}")
    out = copy.deepcopy(doc)
    _merge_patch_in_place(out, copy.deepcopy(patch))  # the patch's lists go into the result
    return out


# --- JSON patch (RFC 6902) --------------------------------------------------------------

_JSON_OPS = ("add", "remove", "replace", "move", "copy", "test")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_ESCAPE = re.compile(r"~(?![01])")


class _Ptr(NamedTuple):
    field: str  # "path" or "from", for messages
    raw: str
    tokens: tuple[str, ...]


def json_patch(doc: Obj, ops: Any) -> Obj:
    """RFC 6902 JSON Patch. A body that is not a list of objects is a BadRequest; an op
    that cannot be applied is Invalid (``json patch op 2: path "/spec/x" does not exist``)."""
    if not isinstance(ops, list):
        raise BadRequest(f"json patch: the body must be a list of operations, not {_json_type(ops)}")
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            raise BadRequest(f"json patch op {i}: must be an object, not {_json_type(op)}")
    result: Any = copy.deepcopy(doc)
    for i, op in enumerate(ops):
        result = _json_op(result, op, i)
    if not isinstance(result, dict):
        raise Invalid(f"json patch: the patched document is {_json_type(result)}, not an object")
    return result


def _json_op(root: Any, op: Obj, i: int) -> Any:
    if "op" not in op:
        raise _op_error(i, 'missing "op"')
    name = op["op"]
    if name not in _JSON_OPS:
        raise _op_error(i, f"unknown op {_show(name)}")
    path = _pointer(op, "path", i)
    if name in ("add", "replace", "test") and "value" not in op:
        raise _op_error(i, 'missing "value"')
    if name == "add":
        return _add(root, path, copy.deepcopy(op["value"]), i)
    if name == "remove":
        if not path.tokens:
            raise _op_error(i, "cannot remove the whole document")
        parent, key = _slot(root, path, i)
        del parent[key]
        return root
    if name == "replace":
        if not path.tokens:
            return copy.deepcopy(op["value"])
        parent, key = _slot(root, path, i)
        parent[key] = copy.deepcopy(op["value"])
        return root
    if name == "test":
        if not _json_equal(_get(root, path, i), op["value"]):
            raise _op_error(i, f'test failed: the value at path "{path.raw}" is not {_show(op["value"])}')
        return root
    source = _pointer(op, "from", i)
    if name == "copy":
        return _add(root, path, copy.deepcopy(_get(root, source, i)), i)
    if path.tokens[: len(source.tokens)] == source.tokens and len(path.tokens) > len(source.tokens):
        raise _op_error(i, f'cannot move "{source.raw}" into its own child "{path.raw}"')
    if not source.tokens:  # moving the document onto itself
        return root
    parent, key = _slot(root, source, i)
    return _add(root, path, parent.pop(key), i)


def _pointer(op: Obj, field: str, i: int) -> _Ptr:
    if field not in op:
        raise _op_error(i, f'missing "{field}"')
    raw = op[field]
    if not isinstance(raw, str):
        raise _op_error(i, f'"{field}" must be a string, not {_json_type(raw)}')
    if raw and (not raw.startswith("/") or _BAD_ESCAPE.search(raw)):
        raise _op_error(i, f'{field} "{raw}" is not a JSON pointer')
    # RFC 6901: "~1" before "~0", so that "~01" reads as "~1" and not "/".
    tokens = tuple(t.replace("~1", "/").replace("~0", "~") for t in raw.split("/")[1:])
    return _Ptr(field, raw, tokens)


def _slot(root: Any, ptr: _Ptr, i: int) -> tuple[Any, Any]:
    """The container holding ``ptr``'s target and the target's key or index in it."""
    node = root
    for depth, tok in enumerate(ptr.tokens):
        if isinstance(node, dict) and tok in node:
            key: Any = tok
        elif isinstance(node, list) and _INDEX.fullmatch(tok) and int(tok) < len(node):
            key = int(tok)
        else:
            raise _op_error(i, f'{ptr.field} "{ptr.raw}" does not exist')
        if depth == len(ptr.tokens) - 1:
            return node, key
        node = node[key]
    raise AssertionError("the root has no slot")  # callers handle the empty pointer


def _get(root: Any, ptr: _Ptr, i: int) -> Any:
    if not ptr.tokens:
        return root
    parent, key = _slot(root, ptr, i)
    return parent[key]


def _add(root: Any, ptr: _Ptr, value: Any, i: int) -> Any:
    if not ptr.tokens:
        return value
    parent = _get(root, _Ptr(ptr.field, ptr.raw, ptr.tokens[:-1]), i)
    last = ptr.tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last != "-" and not _INDEX.fullmatch(last):
            raise _op_error(i, f'"{last}" in path "{ptr.raw}" is not an array index')
        index = len(parent) if last == "-" else int(last)
        if index > len(parent):
            raise _op_error(i, f'index {index} in path "{ptr.raw}" is out of range')
        parent.insert(index, value)
    else:
        raise _op_error(i, f'path "{ptr.raw}" does not exist')
    return root


def _op_error(i: int, why: str) -> Invalid:
    return Invalid(f"json patch op {i}: {why}")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1 (as it is in Python)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


# --- strategic merge patch ----------------------------------------------------------------

_PATCH = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_DROP = object()  # what _clean makes of a value that a directive removes
_ABSENT = object()


def strategic_merge_patch(doc: Obj, patch: Any, kind: str) -> Obj:
    """Kubernetes strategic merge patch of a built-in kind (415 for any other kind).

    Maps merge and ``null`` deletes, as in a merge patch; a list with a merge key merges
    element by element, a list in ``PRIMITIVE_SETS`` as an ordered set, any other list is
    replaced. Directives: ``$patch: replace|delete`` on a map or a list element (and
    ``{"$patch": "replace"}`` as a list element), ``$setElementOrder/<list>``,
    ``$deleteFromPrimitiveList/<list>`` and ``$retainKeys``. Without ``$setElementOrder``
    the order is upstream's: elements named in the patch take the patch's order, the others
    keep their places, and new elements come before the stored ones that follow them."""
    if kind not in BUILTIN_KINDS:
        raise _unsupported(kind)
    return _strategic(doc, patch, kind)


def _strategic(doc: Obj, patch: Any, kind: str) -> Obj:
    if not isinstance(patch, dict):
        raise BadRequest(f"strategic merge patch: the body must be an object, not {_json_type(patch)}")
    return _merge_map(copy.deepcopy(doc), patch, kind, ())


def _merge_map(original: Obj, patch: Obj, kind: str, path: tuple[str, ...]) -> Obj:
    """Merges ``patch`` into ``original`` (a copy this module owns); never changes ``patch``."""
    if _PATCH in patch:
        directive = patch[_PATCH]
        if directive == "replace":
            return _clean_map(patch)
        if directive == "delete":
            return {}  # upstream leaves an empty map, not an absent field
        raise _bad(path, f"unknown patch type: {_show(directive)}")
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
            raise _bad(path, f"unknown patch type: {_show(directive)}")
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


# --- shared --------------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    names = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    return names.get(type(value), "a list" if isinstance(value, list) else "an object")


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
