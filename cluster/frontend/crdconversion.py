"""Conversion webhooks of CustomResourceDefinitions (``spec.conversion.strategy: Webhook``).

Owns what upstream's webhook converter does for one batch of custom resources: which objects
need converting (those not already at the desired apiVersion), the
``apiextensions.k8s.io/v1`` (or ``v1beta1``, by the definition's
``conversionReviewVersions``) ``ConversionReview`` sent for them, the checks on the answer
(the same uid, ``result.status`` Success, one converted object per object sent, each at the
desired apiVersion and of the same kind, name, namespace and uid), and the metadata of each
converted object (the original's, with only ``labels`` and ``annotations`` taken from the
webhook). Any failure is a ``ConversionFailed``: a 500 ``Status`` without a reason whose
message is upstream's (``conversion webhook for <group>/<version>, Kind=<Kind> failed: ...``).
The HTTP call is ``webhookclient.py``'s (a ``service`` cannot be reached); the requests
that need converting are ``views.py``'s (``CustomConverted``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from ..api.errors import StatusError
from ..api.validation import is_label_value, is_qualified_name
from . import webhookclient

GROUP = "apiextensions.k8s.io"
REVIEW_VERSIONS = ("v1", "v1beta1")  # the ConversionReview versions kubemu can send
# Upstream's conversion webhooks have no timeoutSeconds: its webhook client gives each call 30 s.
TIMEOUT = 30.0
Obj = dict[str, Any]


@dataclass(frozen=True)
class Webhook:
    """A definition's conversion webhook."""

    crd_name: str
    client_config: Mapping[str, Any]
    review_versions: tuple[str, ...]
    timeout: float = TIMEOUT


def webhook_of(crd: Mapping[str, Any]) -> Webhook | None:
    """The conversion webhook ``crd`` names; None unless its strategy is ``Webhook``."""
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    if not isinstance(conversion, Mapping) or conversion.get("strategy") != "Webhook":
        return None
    hook = conversion.get("webhook") or {}
    config = hook.get("clientConfig") if isinstance(hook, Mapping) else None
    versions = hook.get("conversionReviewVersions") if isinstance(hook, Mapping) else None
    return Webhook(
        str((crd.get("metadata") or {}).get("name") or ""),
        config if isinstance(config, Mapping) else {},
        tuple(str(v) for v in versions) if isinstance(versions, list) else (),
    )


class ConversionFailed(StatusError):
    """A conversion that did not happen: upstream answers 500 with no reason."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = ""

    def status(self) -> dict[str, Any]:
        out = super().status()
        del out["reason"]  # upstream's Status leaves an unknown reason out
        return out


class _Bad(Exception):
    """What is wrong with the webhook's answer (upstream's words)."""


def gvk(obj: Mapping[str, Any]) -> str:
    """An object's group, version and kind as Go prints a GroupVersionKind."""
    return f"{obj.get('apiVersion') or ''}, Kind={obj.get('kind') or ''}"


def to_convert(objects: list[Obj], desired: str) -> list[int]:
    """The indexes of the objects not already at ``desired``: only those are sent."""
    return [i for i, o in enumerate(objects) if o.get("apiVersion") != desired]


def review(hook: Webhook, objects: list[Obj], desired: str, uid: str) -> tuple[str, Obj]:
    """(the ConversionReview version, the review) asking ``hook`` to convert ``objects``."""
    version = next((v for v in hook.review_versions if v in REVIEW_VERSIONS), "")
    if not version:
        raise ConversionFailed("no supported conversion review versions", retryable=False)
    request = {"uid": uid, "desiredAPIVersion": desired, "objects": objects}
    return version, {"kind": "ConversionReview", "apiVersion": f"{GROUP}/{version}", "request": request}


def converted_objects(uid: str, version: str, body: bytes) -> list[Any]:
    """The ``convertedObjects`` of an answer; ``_Bad`` when the answer is not a successful one."""
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise _Bad(str(e)) from None
    if not isinstance(answer, dict):
        raise _Bad("the answer is not a ConversionReview object")
    got = f"{answer.get('apiVersion') or ''}, Kind={answer.get('kind') or ''}"
    if version == "v1" and got != f"{GROUP}/v1, Kind=ConversionReview":
        raise _Bad(f"expected webhook response of {GROUP}/v1, Kind=ConversionReview, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise _Bad("no response provided")
    if version == "v1" and response.get("uid") != uid:
        raise _Bad(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    found = response.get("result")
    result: dict[str, Any] = found if isinstance(found, dict) else {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise _Bad(str(result["message"]))
        raise _Bad(f"response.result.status was '{result.get('status') or ''}', not 'Success'")
    objects = response.get("convertedObjects")
    return objects if isinstance(objects, list) else []


def _go_type(value: Any) -> str:
    names = {str: "string", bool: "bool", int: "int64", float: "float64", list: "[]interface {}"}
    return names.get(type(value), "map[string]interface {}" if isinstance(value, dict) else "<nil>")


def _same(original: Obj, converted: Obj) -> str:
    """upstream's validateConvertedObject: empty when kind, name, namespace and uid stayed."""
    om, cm = original.get("metadata") or {}, converted.get("metadata") or {}
    pairs = (
        ("kind", original.get("kind"), converted.get("kind")),
        ("name", om.get("name"), cm.get("name") if isinstance(cm, dict) else None),
        ("namespace", om.get("namespace"), cm.get("namespace") if isinstance(cm, dict) else None),
        ("UID", om.get("uid"), cm.get("uid") if isinstance(cm, dict) else None),
    )
    for what, want, got in pairs:
        if (want or "") != (got or ""):
            return f"must have the same {what}: {want or ''} != {got or ''}"
    return ""


def _restored(original: Obj, converted: Obj) -> Obj:
    """The converted object with the original's metadata, but the webhook's labels and
    annotations (checked when they changed); ``_Bad`` otherwise."""
    if "metadata" not in converted:
        raise _Bad("missing metadata in converted object")
    said = converted["metadata"]
    if not isinstance(said, dict):
        raise _Bad(f"invalid metadata of type {_go_type(said)} in converted object")
    meta = orjson.loads(orjson.dumps(original.get("metadata") or {}))
    for field in ("labels", "annotations"):
        value = said.get(field)
        if value is None:
            meta.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise _Bad(f"invalid metadata.{field} of type {_go_type(value)} in converted object")
        for k, v in value.items():
            if not isinstance(v, str):
                raise _Bad(f"metadata.{field}[{k}] must be a string, but is {_go_type(v)} in converted object")
        if value != (meta.get(field) or {}):
            for k, v in value.items():
                if not is_qualified_name(k) or (field == "labels" and not is_label_value(v)):
                    shown = k if not is_qualified_name(k) else v
                    raise _Bad(f'metadata.{field}: Invalid value: "{shown}": not a valid {field[:-1]}')
        meta[field] = value
    return {**converted, "metadata": meta}


def checked(original: Obj, converted: Any, desired: str, about: str, index: int | None) -> Obj:
    """One converted object, checked and with its metadata restored; ``index`` is its
    place among the objects sent for a list, None for a single object (upstream words
    the two cases differently)."""
    where = f"invalid converted object at index {index}" if index is not None else "invalid object at index 0"
    if not isinstance(converted, dict) or not converted.get("kind"):
        shown = orjson.dumps(converted).decode()
        raise _failure(f"{about} returned {where}: Object 'Kind' is missing in '{shown}'")
    if converted.get("apiVersion") != desired:
        received = converted.get("apiVersion") or ""
        raise _failure(f"{about} returned {where}: invalid groupVersion (expected {desired}, received {received})")
    if converted.get("kind") != original.get("kind"):
        raise _failure(
            f"{about} returned {where}: invalid kind (expected {original.get('kind')}, received {converted['kind']})"
        )
    problem = _same(original, converted)
    if problem:
        where = f"invalid converted object at index {index}" if index is not None else "invalid object"
        raise _failure(f"{about} returned {where}: {problem}")
    try:
        return _restored(original, converted)
    except _Bad as e:
        where = f"invalid metadata in object at index {index}" if index is not None else "invalid metadata"
        raise _failure(f"{about} returned {where}: {e}") from None


def _failure(text: str) -> ConversionFailed:
    return ConversionFailed(f"conversion webhook for {text}", retryable=False)


async def convert(hook: Webhook, objects: list[Obj], desired: str, *, single: bool = False) -> list[Obj]:
    """``objects`` at ``desired``, those at another version converted by ``hook`` in one
    review; ``single`` for one object read or written (not a list). Raises ConversionFailed."""
    todo = to_convert(objects, desired)
    if not todo:
        return objects
    about = gvk(objects[todo[0]])
    uid = str(uuid.uuid4())
    version, body = review(hook, [objects[i] for i in todo], desired, uid)
    try:
        answer = await webhookclient.post(hook.client_config, orjson.dumps(body), hook.timeout)
        got = converted_objects(uid, version, answer)
    except (webhookclient.Unreachable, _Bad) as e:
        raise _failure(f"{about} failed: {e}") from None
    if len(got) != len(todo):
        raise _failure(f"{about} returned {len(got)} objects, expected {len(todo)}")
    out = list(objects)
    for n, (i, c) in enumerate(zip(todo, got)):
        out[i] = checked(objects[i], c, desired, about, None if single else n)
    return out
