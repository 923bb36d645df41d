"""The typed writes behind two subresources clients call: a pod's ``ephemeralcontainers``
and a namespace's ``finalize``.

Owns the rules upstream's strategies apply to them, checked against the stored object at
the moment of the write (so they hold on either runtime):

- ``SetEphemeralContainers``: the list replaces ``spec.ephemeralContainers`` and nothing
  else changes (upstream's ``dropNonEphemeralContainerUpdates``). Existing ephemeral
  containers may not be removed or changed; each one needs a name (a DNS label unique
  among all the pod's containers) and an image, may target only a regular or init
  container, and may not set the fields an ephemeral container cannot have (ports,
  resources, probes, lifecycle, resizePolicy, restartPolicy; volume subPaths). Static
  pods take none.
- ``SetNamespaceFinalizers``: the list replaces ``spec.finalizers``; each name is a
  standard one (``kubernetes``, ``orphan``, ``foregroundDeletion``) or qualified. Once a
  terminating namespace has none left the apiserver removes it (its patch path does so).

A broken rule raises ``Invalid`` with upstream's field path and words and one cause; the
HTTP front end names the object in the message. Both are ``Patch`` operations
(``patches.PatchOp``); the front end's ``subresources.py`` sends them.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .errors import Cause, Invalid
from .selectors import ENDS_RULE, KEY_RULE, is_dns_label, is_qualified_name

Obj = dict[str, Any]
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
# EphemeralContainerCommon fields upstream's allow-list leaves out.
NOT_FOR_EPHEMERAL = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
CANNOT = "cannot be set for an Ephemeral Container"
_LABEL_RULE = f"must be a lowercase RFC 1123 label (at most 63 of a-z, 0-9, '-'; {ENDS_RULE})"


def _invalid(field: str, kind: str, detail: str) -> Invalid:
    """One field error as upstream prints it: ``<field>: <Kind of error>: <detail>``."""
    body = f"{kind}: {detail}" if detail else kind
    reason = {"Forbidden": "FieldValueForbidden", "Required value": "FieldValueRequired"}.get(kind, "FieldValueInvalid")
    if kind == "Duplicate value":
        reason = "FieldValueDuplicate"
    elif kind == "Not found":
        reason = "FieldValueNotFound"
    return Invalid(f"{field}: {body}" if field else body, (Cause(reason, body, field),))


def _set(value: Any) -> bool:
    """Set as Go's zero-value comparison sees a decoded field: absent and null are not."""
    return value is not None and value != {}


class SetEphemeralContainers(NamedTuple):
    containers: tuple[Obj, ...]

    def apply(self, pod: Obj) -> bool:
        check_ephemeral(pod, list(self.containers))
        spec = pod.setdefault("spec", {})
        new = [dict(c) for c in self.containers]
        if (spec.get("ephemeralContainers") or []) == new:
            return False
        if new:
            spec["ephemeralContainers"] = new
        else:
            spec.pop("ephemeralContainers", None)
        return True


def check_ephemeral(pod: Obj, new: list[Any]) -> None:
    """Upstream's ValidatePodEphemeralContainersUpdate, first error first."""
    if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
        raise _invalid("", "Forbidden", "static pods do not support ephemeral containers")
    spec = pod.get("spec") or {}
    others = [c.get("name") for f in ("containers", "initContainers") for c in spec.get(f) or () if isinstance(c, dict)]
    names = set(others)
    for i, c in enumerate(new):
        _check_one(c, f"spec.ephemeralContainers[{i}]", names, set(others))
    by_name = {c.get("name"): c for c in new}
    for old in spec.get("ephemeralContainers") or ():
        name = old.get("name")
        if name not in by_name:
            raise _invalid(
                "spec.ephemeralContainers",
                "Forbidden",
                f"existing ephemeral containers {json.dumps(name)} may not be removed",
            )
        if by_name[name] != old:
            raise _invalid(
                "spec.ephemeralContainers",
                "Forbidden",
                f"existing ephemeral containers {json.dumps(name)} may not be changed",
            )


def _check_one(c: Any, path: str, names: set[Any], targets: set[Any]) -> None:
    if not isinstance(c, dict):
        raise _invalid(path, "Invalid value", f"{json.dumps(c, default=str)}: must be a map")
    name = c.get("name")
    if name in (None, ""):
        raise _invalid(f"{path}.name", "Required value", "")
    if not is_dns_label(name):
        raise _invalid(f"{path}.name", "Invalid value", f"{json.dumps(name, default=str)}: {_LABEL_RULE}")
    if name in names:
        raise _invalid(f"{path}.name", "Duplicate value", json.dumps(name))
    names.add(name)
    if not isinstance(c.get("image"), str) or not c["image"].strip():
        raise _invalid(f"{path}.image", "Required value", "")
    target = c.get("targetContainerName")
    if target not in (None, "") and target not in targets:
        raise _invalid(f"{path}.targetContainerName", "Not found", json.dumps(target, default=str))
    for field in NOT_FOR_EPHEMERAL:
        if _set(c.get(field)):
            raise _invalid(f"{path}.{field}", "Forbidden", CANNOT)
    for j, mount in enumerate(c.get("volumeMounts") or ()):
        for field in ("subPath", "subPathExpr"):
            if isinstance(mount, dict) and mount.get(field):
                raise _invalid(f"{path}.volumeMounts[{j}].{field}", "Forbidden", CANNOT)


class SetNamespaceFinalizers(NamedTuple):
    finalizers: tuple[str, ...]

    def apply(self, ns: Obj) -> bool:
        for i, name in enumerate(self.finalizers):
            _check_finalizer(name, f"spec.finalizers[{i}]")
        spec = ns.setdefault("spec", {})
        new = list(self.finalizers)
        if (spec.get("finalizers") or []) == new:
            return False
        if new:
            spec["finalizers"] = new
        else:
            spec.pop("finalizers", None)
        return True


def _check_finalizer(name: Any, path: str) -> None:
    shown = json.dumps(name, default=str)
    if not is_qualified_name(name):
        raise _invalid(path, "Invalid value", f"{shown}: {KEY_RULE.removeprefix('is ')}")
    if "/" not in name and name not in STANDARD_FINALIZERS:
        raise _invalid(
            path, "Invalid value", f"{shown}: name is neither a standard finalizer name nor is it fully qualified"
        )
