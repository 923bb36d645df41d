"""What server-side apply's typed conversion says about an apply body, as upstream words it.

Owns the check ``structured-merge-diff`` makes when the apiserver turns an apply patch into a typed
value (``typeConverter.ObjectToTyped``): a field the schema does not declare fails whatever
``fieldValidation`` says (``.spec.replcas: field not declared in schema``; only the first unknown
field of each object is named, as the walk stops there), and so does a value of the wrong shape
(``.spec.replicas: expected numeric (int or float), got string``). Paths name list items by their
map keys (``.spec.containers[name="web"].imagePullPolcy``). Called by ``fieldvalidation.py``.

Upstream v1.33 answers with HTTP 500 and no reason, which upstream itself counts a bug (a
400 is proposed); kubemu answers the proposed 400 ``BadRequest`` with v1.33's text, so that a
500 from kubemu always means a fault of kubemu's own.
"""

from __future__ import annotations

import json
from typing import Any

from ..api import schema as sch
from ..api.errors import BadRequest
from . import gotext

_NUMERIC = (sch.INT32, sch.INT64, sch.FLOAT64)
_STRINGS = (sch.STRING, sch.BYTES, sch.TIME, sch.MICRO_TIME)
_UNTYPED = (sch.QUANTITY, sch.INT_OR_STRING)


def check(obj: dict[str, Any], t: sch.Type) -> None:
    """Raise ``BadRequest`` when the typed conversion of an apply body would fail."""
    errs: list[str] = []
    _walk(obj, t, "", errs)
    if errs:
        raise failure(obj, errs)


def failure(obj: dict[str, Any], errs: list[str]) -> BadRequest:
    """The 400 for an apply body: ``(<namespace>/<name>; <group>/<version>, Kind=<Kind>)`` and the errors."""
    meta = obj.get("metadata")
    ns, name = (meta.get("namespace") or "", meta.get("name") or "") if isinstance(meta, dict) else ("", "")
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    detail = errs[0] if len(errs) == 1 else "\n".join(["errors:", *(f"  {e}" for e in errs)])
    return BadRequest(
        f"failed to create typed patch object ({ns}/{name}; {group}/{version}, Kind={obj.get('kind')}): {detail}"
    )


def _walk(v: Any, t: sch.Type, path: str, errs: list[str]) -> None:
    if v is None:
        return
    code = t.code
    if code in (sch.STRUCT, sch.MAP):
        _walk_map(v, t, path, errs)
    elif code == sch.LIST:
        if not isinstance(v, list):
            errs.append(f"{path}: expected list, got {_shown(v)}")
            return
        assert t.elem is not None
        for i, x in enumerate(v):
            _walk(x, t.elem, f"{path}{_item(x, i, t.keys)}", errs)
    else:
        problem = _scalar_problem(v, code)
        if problem:
            errs.append(f"{path}: {problem}")


def _walk_map(v: Any, t: sch.Type, path: str, errs: list[str]) -> None:
    if not isinstance(v, dict):
        errs.append(f"{path}: expected map, got {_shown(v)}")
        return
    for k, x in v.items():
        ft = t.elem if t.struct is None else t.struct.fields.get(k)
        if ft is None:
            errs.append(f"{path}.{k}: field not declared in schema")
            return  # the walk over this object stops at its first unknown field
        _walk(x, ft, f"{path}.{k}", errs)


def _scalar_problem(v: Any, code: Any) -> str | None:
    """What is wrong with ``v`` where the schema wants the scalar ``code``, as smd says it."""
    if code in _NUMERIC:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"expected numeric (int or float), got {_go_type(v)}"
    elif code in _STRINGS:
        if not isinstance(v, str):
            return f"expected string, got &value.valueUnstructured{{Value:{_sharp(v)}}}"
    elif code == sch.BOOL:
        if not isinstance(v, bool):
            return f"expected boolean, got {_shown(v)}"
    elif code in _UNTYPED and isinstance(v, (dict, list)):
        return f"expected any scalar, got {_shown(v)}"
    return None


def _item(x: Any, i: int, keys: tuple[str, ...]) -> str:
    """A list item's path element: its map keys (sorted, values as JSON) or its index."""
    if keys and isinstance(x, dict) and all(k in x for k in keys):
        return "[" + ",".join(f"{k}={json.dumps(x[k], separators=(',', ':'))}" for k in sorted(keys)) + "]"
    return f"[{i}]"


def _shown(v: Any) -> str:
    return "&{" + gotext.value(v) + "}"  # %v of the pointer to smd's value wrapper


def _go_type(v: Any) -> str:
    if isinstance(v, dict):
        return "map[string]interface {}"
    if isinstance(v, list):
        return "[]interface {}"
    return {bool: "bool", str: "string"}.get(type(v), "string")


def _sharp(v: Any) -> str:
    """%#v of a decoded value."""
    if isinstance(v, dict):
        return "map[string]interface {}{" + ", ".join(f"{gotext.quote(k)}:{_sharp(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, list):
        return "[]interface {}{" + ", ".join(_sharp(x) for x in v) + "}"
    if isinstance(v, str):
        return gotext.quote(v)
    return gotext.value(v)
