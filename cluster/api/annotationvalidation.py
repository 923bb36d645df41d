"""Validation of the ``kubemu.io/`` annotations on a pod or pod template.

Owns the create-time rules for kubemu's own annotations: the key must be a known one
(optionally suffixed ``.<container>`` naming a container of the pod), usage annotations
must be a quantity or a ``ramp(``/``spike(`` profile, probe outcomes and hook times must
parse as ``probeoutcome`` reads them, and the emulation annotations must
parse as ``annotations.emulation`` reads them. ``validation`` calls
``check_kubemu_annotations`` after a pod spec passes; the kubelet owns the profile grammar.
"""

from __future__ import annotations

from typing import Any

from . import annotations as ann
from . import probeoutcome
from .quantity import QuantityError
from .quantity import parse as parse_quantity
from .validationfields import ValidationError, _at, _key

_USAGE_KEYS = (ann.MEMORY_USAGE, ann.CPU_USAGE)
_PROFILE_PREFIXES = ("ramp(", "spike(")


def _annotation_base(key: str) -> tuple[str | None, str]:
    """``(known key, container suffix)`` for a kubemu.io key, or ``(None, "")`` if unknown."""
    if key in ann.KNOWN:
        return key, ""
    for known in ann.KNOWN:
        if key.startswith(known + ".") and len(key) > len(known) + 1:
            return known, key[len(known) + 1 :]
    return None, ""


def _check_usage(value: str, path: str) -> None:
    if value.lstrip().startswith(_PROFILE_PREFIXES):
        return
    try:
        amount = parse_quantity(value)
    except QuantityError:
        raise ValidationError(path, value, "is not a quantity or a usage profile (ramp(...), spike(...))") from None
    if amount < 0:
        raise ValidationError(path, value, "must be greater than or equal to 0")


def check_kubemu_annotations(obj: dict[str, Any], path: str, container_names: set[str]) -> None:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if not annotations or not any(key.startswith(ann.PREFIX) for key in annotations):
        return  # nothing of kubemu's (what ``ann.emulation`` also finds first): nothing to check
    apath = _at(path, "metadata.annotations")
    for key, value in annotations.items():
        if not key.startswith(ann.PREFIX):
            continue
        base, container = _annotation_base(key)
        p = _key(apath, key)
        if base is None:
            raise ValidationError(p, key, f"is not a kubemu.io annotation (known: {', '.join(ann.KNOWN)})")
        if container and container not in container_names:
            names = ", ".join(sorted(container_names))
            raise ValidationError(p, key, f"names no container of this pod (containers: {names})")
        if base in _USAGE_KEYS:
            _check_usage(value, p)
        elif base in ann.PROBE_KEYS:
            try:
                probeoutcome.check(base, value)
            except ann.AnnotationError as e:
                raise ValidationError(p, value, e.message) from None
        elif base == ann.IMAGE_PULL:
            if value not in ann.IMAGE_PULL_VALUES:
                raise ValidationError(p, value, f"must be one of: {', '.join(ann.IMAGE_PULL_VALUES)}")
        elif container:
            # Per-container overrides follow the same rule as the pod-wide key.
            _check_emulation({"metadata": {"annotations": {base: value}}}, apath, key)
    _check_emulation(obj, apath, None)


def _check_emulation(pod: dict[str, Any], apath: str, shown_key: str | None) -> None:
    try:
        ann.emulation(pod)
    except ann.AnnotationError as e:
        raise ValidationError(_key(apath, shown_key or e.key), e.value, e.message) from None
