"""JSON Patch (RFC 6902, with RFC 6901 pointers) applied to an object.

Owns ``json_patch`` and the wording every PATCH error uses to describe a JSON value
(``json_type``, ``show_json``). ``cluster/api/clientpatch.py`` calls ``json_patch`` for an
``application/json-patch+json`` body; it and ``cluster/api/strategicpatch.py`` use the two
describers, kept here because this module imports neither of them.

Errors are upstream's: 400 BadRequest for a body that is not a list of objects, 422
Invalid for an op that cannot be applied (upstream answers every ``Patch.Apply`` error so,
with a generic message where kubemu names the op and why). Nothing here changes its
arguments.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, NamedTuple

from .errors import BadRequest, Invalid

Obj = dict[str, Any]

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
        raise BadRequest(f"json patch: the body must be a list of operations, not {json_type(ops)}")
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            raise BadRequest(f"json patch op {i}: must be an object, not {json_type(op)}")
    result: Any = copy.deepcopy(doc)
    for i, op in enumerate(ops):
        result = _json_op(result, op, i)
    if not isinstance(result, dict):
        raise Invalid(f"json patch: the patched document is {json_type(result)}, not an object")
    return result


def _json_op(root: Any, op: Obj, i: int) -> Any:
    if "op" not in op:
        raise _op_error(i, 'missing "op"')
    name = op["op"]
    if name not in _JSON_OPS:
        raise _op_error(i, f"unknown op {show_json(name)}")
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
            raise _op_error(i, f'test failed: the value at path "{path.raw}" is not {show_json(op["value"])}')
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
        raise _op_error(i, f'"{field}" must be a string, not {json_type(raw)}')
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


# --- describing JSON values in messages ------------------------------------------------------


def json_type(value: Any) -> str:
    """A JSON value's type with its article, as error messages name it ("a list")."""
    names = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    return names.get(type(value), "a list" if isinstance(value, list) else "an object")


def show_json(value: Any) -> str:
    """A value as compact JSON, for quoting a bad op or directive in a message."""
    return json.dumps(value, separators=(",", ":"), default=str)
