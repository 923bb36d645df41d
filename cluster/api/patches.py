"""Typed patches: what a ``Patch`` request changes in an object, and how.

Owns each patch kind's rules, applied by the apiserver to the stored object in place:

- ``PodConditions``: the scheduler's pod status patch: each condition replaces the pod's
  condition of the same type, and ``status.nominatedNodeName`` is set ("" clears it,
  None leaves it), in one write as upstream sends a failed pod's PodScheduled=False and
  its nomination;
- ``NodeConditions``: the node lifecycle controller's patch of some conditions, guarded by
  the heartbeat it saw (a kubelet that posted since wins: Conflict);
- ``NodeTaints``: taints added (or updated) and removed, matched by key and effect as
  upstream's taint helpers do;
- ``Apply``: server-side apply as kubemu needs it so far: the object is created when it
  does not exist (through admission), else the given fields are merged in (JSON merge
  patch, RFC 7386). Field managers and conflicts between managers are not modelled;
- ``RemoveOwnerReferences``: the garbage collector's patch that drops the ownerReferences
  naming some owner uids (orphaning dependents, or dropping owners that are gone), as
  upstream's ``$patch: delete`` by uid, and may unblock the rest (a foreground cycle);
- ``RemoveFinalizer``: one entry out of ``metadata.finalizers`` (the garbage collector's
  ``orphan`` and ``foregroundDeletion`` once their work is done);
- ``FinalizeNamespace``: one entry out of a Namespace's ``spec.finalizers`` (upstream's
  ``namespaces/finalize`` subresource; the namespace controller's ``kubernetes``).

The last three let an object marked for deletion go: the apiserver removes it when a patch
leaves it with no finalizers (upstream's "delete during update" rule).

``apply(obj)`` returns whether anything changed: a patch that changes nothing writes
nothing. A patch with a malformed body raises ``Invalid`` naming the field.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .errors import Conflict, Invalid
from .objects import condition, set_condition
from .quotapatch import QuotaStatus  # ResourceQuota status, resourceVersion-guarded (quota issue 40)
from .subresourcewrites import SetEphemeralContainers, SetNamespaceFinalizers
from .volumespatch import VolumeMerge  # claims and volumes, resourceVersion-guarded (volumes issue 40)

Obj = dict[str, Any]
CONDITION_STATUSES = ("True", "False", "Unknown")


class PodConditions(NamedTuple):
    conditions: tuple[Obj, ...] = ()
    nominated_node: str | None = None  # "" clears status.nominatedNodeName; None leaves it

    def apply(self, pod: Obj) -> bool:
        status = pod.setdefault("status", {})
        changed = bool(self.conditions)
        for cond in self.conditions:
            set_condition(status, dict(cond))
        nominated = self.nominated_node
        if nominated is not None and (status.get("nominatedNodeName") or "") != nominated:
            changed = True
            if nominated:
                status["nominatedNodeName"] = nominated
            else:
                status.pop("nominatedNodeName", None)
        return changed


class NodeConditions(NamedTuple):
    """Each condition replaces the node's condition of the same type, leaving the rest of the
    status alone, but only if the node's condition has the same ``lastHeartbeatTime`` (or is
    absent). The controller keeps the heartbeat it saw when it marks a condition Unknown, so
    if the kubelet has posted since, the kubelet's newer status stands and the whole patch
    is a Conflict."""

    conditions: tuple[Obj, ...]

    def apply(self, node: Obj) -> bool:
        _check_conditions(self.conditions)
        name = (node.get("metadata") or {}).get("name", "")
        for cond in self.conditions:
            current = condition(node, cond["type"])
            if current is not None and current.get("lastHeartbeatTime") != cond.get("lastHeartbeatTime"):
                raise Conflict(
                    f'Operation cannot be fulfilled on nodes "{name}": condition {cond["type"]} has a newer '
                    f"heartbeat ({current.get('lastHeartbeatTime')}) than the patch was based on "
                    f"({cond.get('lastHeartbeatTime')})"
                )
        status = node.setdefault("status", {})
        changed = False
        for cond in self.conditions:
            if condition(node, cond["type"]) != cond:
                set_condition(status, dict(cond))
                changed = True
        return changed


def _check_conditions(conditions: tuple[Obj, ...]) -> None:
    seen = set()
    for i, cond in enumerate(conditions):
        path = f"status.conditions[{i}]"
        if not isinstance(cond, dict):
            raise Invalid(f"{path}: {cond!r} is not a condition")
        if not isinstance(cond.get("type"), str) or not cond["type"]:
            raise Invalid(f"{path}.type: {cond.get('type')!r} is not a condition type")
        if cond.get("status") not in CONDITION_STATUSES:
            raise Invalid(f"{path}.status: {cond.get('status')!r} is not one of True, False, Unknown")
        if cond["type"] in seen:
            raise Invalid(f"{path}.type: {cond['type']!r} is given twice")
        seen.add(cond["type"])


class NodeTaints(NamedTuple):
    add: tuple[Obj, ...] = ()  # added, or replacing the taint with the same key and effect
    remove: tuple[Obj, ...] = ()  # matched by key and effect

    def apply(self, node: Obj) -> bool:
        spec = node.setdefault("spec", {})
        current = list(spec.get("taints") or ())
        gone = {(t.get("key"), t.get("effect")) for t in [*self.remove, *self.add]}
        taints = [t for t in current if (t.get("key"), t.get("effect")) not in gone] + [dict(t) for t in self.add]
        if taints == current:
            return False
        spec["taints"] = taints
        return True


class Apply(NamedTuple):
    """Create ``obj`` if absent, else merge its fields into the stored object."""

    obj: Obj

    def apply(self, current: Obj) -> bool:
        patch = {k: v for k, v in self.obj.items() if k not in ("apiVersion", "kind")}
        meta = dict(patch.get("metadata") or {})
        for field in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp"):
            meta.pop(field, None)
        if meta:
            patch["metadata"] = meta
        else:
            patch.pop("metadata", None)
        return merge_patch(current, patch)


def merge_patch(target: Obj, patch: Obj) -> bool:
    """RFC 7386 JSON merge patch of ``target`` in place (null deletes a field, a mapping
    merges, anything else replaces); returns whether ``target`` changed."""
    changed = False
    for key, value in patch.items():
        if value is None:
            if key in target:
                del target[key]
                changed = True
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            changed |= merge_patch(target[key], value)
        else:
            new = _without_nulls(value)
            if target.get(key, _ABSENT) != new:
                target[key] = new
                changed = True
    return changed


_ABSENT = object()


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


# The finalizers the garbage collector and the namespace controller own (upstream's
# metav1.FinalizerOrphanDependents, FinalizerDeleteDependents and FinalizerKubernetes).
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
NAMESPACE_FINALIZER = "kubernetes"


class RemoveOwnerReferences(NamedTuple):
    """Drop every ownerReference whose uid is one of ``uids``; the rest keep their order.
    ``unblock``: the ones kept stop blocking their owners (``blockOwnerDeletion: false``),
    the garbage collector's guard against a cycle of foreground deletions."""

    uids: tuple[str, ...]
    unblock: bool = False

    def apply(self, obj: Obj) -> bool:
        meta = obj.setdefault("metadata", {})
        refs = meta.get("ownerReferences") or []
        keep = [r for r in refs if not (isinstance(r, dict) and r.get("uid") in self.uids)]
        blocking = [r for r in keep if self.unblock and isinstance(r, dict) and r.get("blockOwnerDeletion")]
        for r in blocking:
            r["blockOwnerDeletion"] = False
        if len(keep) == len(refs):
            return bool(blocking)
        if keep:
            meta["ownerReferences"] = keep
        else:
            meta.pop("ownerReferences", None)
        return True


class RemoveFinalizer(NamedTuple):
    """Drop ``finalizer`` from ``metadata.finalizers`` (absent: nothing to write)."""

    finalizer: str

    def apply(self, obj: Obj) -> bool:
        return _drop(obj.setdefault("metadata", {}), "finalizers", self.finalizer)


class FinalizeNamespace(NamedTuple):
    """Drop ``finalizer`` from a Namespace's ``spec.finalizers``: what upstream's
    ``namespaces/finalize`` subresource does once the namespace controller emptied it."""

    finalizer: str = NAMESPACE_FINALIZER

    def apply(self, ns: Obj) -> bool:
        return _drop(ns.setdefault("spec", {}), "finalizers", self.finalizer)


def _drop(holder: Obj, field: str, value: str) -> bool:
    current = holder.get(field) or []
    if value not in current:
        return False
    keep = [v for v in current if v != value]
    if keep:
        holder[field] = keep
    else:
        holder.pop(field, None)
    return True


PatchOp = (
    PodConditions
    | NodeConditions
    | NodeTaints
    | Apply
    | RemoveOwnerReferences
    | RemoveFinalizer
    | FinalizeNamespace
    | SetEphemeralContainers  # the pods/ephemeralcontainers and namespaces/finalize
    | SetNamespaceFinalizers  # subresources (``subresourcewrites.py``)
    | QuotaStatus
    | VolumeMerge
)
