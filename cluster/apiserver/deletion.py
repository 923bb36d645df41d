"""Deletion, as the apiserver does it: graceful for pods, the garbage collector's
finalizers for everything, and namespaces as their REST strategy deletes them.

Owns ``Deletion``, the delete half of ``apiserver.APIServer`` (a mixin: the apiserver holds
the store and the reads it uses), the uid precondition every write checks
(``check_uid``), and when a finalized object goes (``finalized``). A stopped pod's final
delete is settled from its stored bytes first (``plaindelete.py``).

Graceful deletion of a pod (upstream's BeforeDelete), as a state table:

| pod state                         | DELETE with grace g                | result                   |
|-----------------------------------|------------------------------------|--------------------------|
| unbound, or Succeeded/Failed      | any                                | removed now              |
| bound, not terminating            | g (default spec grace, 30) == 0    | removed now              |
| bound, not terminating            | g > 0                              | deletionTimestamp=now+g  |
| terminating with grace c > 0      | g < c                              | deadline shortened to g  |
| terminating with grace c > 0      | g >= c or no g                     | unchanged (pending)      |
| terminating, then g == 0          | (the kubelet's confirm)            | removed now              |

Every delete also sets the garbage collector's finalizers from DeleteOptions'
``propagationPolicy`` (upstream's ``deletionFinalizersForGarbageCollection``): the policy
given wins, else an ``orphan`` or ``foregroundDeletion`` finalizer the object already
carries, else the kind's default (``default_propagation``). An object left with
finalizers stays, marked for deletion, until a write removes the last one (``_finalized``):

| policy     | finalizers set  | the owner                   | who finishes it                           |
|------------|-----------------|-----------------------------|-------------------------------------------|
| Background | neither         | goes now (pods: gracefully) | the GC then deletes its dependents        |
| Foreground | foregroundDeletion | stays, deletionTimestamp | the GC deletes its dependents, then drops the finalizer |
| Orphan     | orphan          | stays, deletionTimestamp    | the GC strips its ownerReferences from the dependents, then drops the finalizer |

Default policies (upstream's ``DefaultGarbageCollectionPolicy`` for the group versions
``cluster/api/kinds.py`` serves): Orphan for batch/v1 Jobs (kept for backward
compatibility upstream; ReplicationControllers, which kubemu does not serve, are the other
v1 kind that orphans), Background for everything else, the apps/v1 workloads included
(their Orphan default belongs to extensions/v1beta1 and apps/v1beta1/v1beta2 only).

A Namespace is deleted as upstream's namespace REST does it (the namespace controller,
``cluster/controllers/namespace.py``, does the rest):

| namespace state                      | DELETE                         | result                    |
|--------------------------------------|--------------------------------|---------------------------|
| default, kube-system, kube-public,   | any                            | 403 Forbidden             |
| kube-node-lease                      |                                |                           |
| Active                               | any                            | deletionTimestamp=now,    |
|                                      |                                | phase Terminating, stays  |
| Terminating, spec.finalizers left    | any                            | unchanged (pending)       |
| Terminating, spec.finalizers empty   | any                            | removed (or waits for     |
|                                      |                                | metadata.finalizers)      |

Creating anything in a Terminating namespace is Forbidden (``admission.py``). A namespace
that goes takes its Events with it: the controller manager does not watch Events (the most
numerous kind; upstream's garbage collector ignores them too), so the apiserver drops
them here instead of the namespace controller deleting them one by one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.errors import Cause, Conflict, Forbidden, Invalid
from ..api.patches import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from ..api.validation import SYSTEM_PRIORITY_CLASSES
from ..clock import from_rfc3339, rfc3339
from .admission import BUILTIN_NAMESPACES
from .plaindelete import delete_plain_pod

if TYPE_CHECKING:
    from .storage import Storage

PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")  # DeleteOptions.propagationPolicy
# Upstream's immortal namespaces are default, kube-system and kube-public; kube-node-lease may
# be deleted there because the apiserver recreates it within a minute. kubemu does not
# recreate it, and every kubelet's Lease lives in it, so it is protected too.
IMMORTAL_NAMESPACES = BUILTIN_NAMESPACES
CRD = "CustomResourceDefinition"
_ORPHAN_BY_DEFAULT = frozenset({"Job", "ReplicationController"})  # their v1 DefaultGarbageCollectionPolicy
_GC_FINALIZERS = (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)
_POLICY_OF = {ORPHAN_FINALIZER: "Orphan", FOREGROUND_FINALIZER: "Foreground"}


class Deletion:
    """The delete half of ``APIServer`` (see the module docstring)."""

    store: Storage

    def _get(self, kind: str, ns: str, name: str) -> dict:
        raise NotImplementedError  # the apiserver's read

    def _sync_custom_kinds(self) -> None:
        raise NotImplementedError  # the apiserver's kinds follow its CustomResourceDefinitions

    def delete(
        self, kind: str, ns: str, name: str, uid: str | None, grace: int | None, now: float, propagation: str = ""
    ) -> bool:
        """Delete (see ``_delete``); a CustomResourceDefinition takes its kind with it."""
        self.store.at(now)
        gone = self._delete(kind, ns, name, uid, grace, now, propagation)
        if kind == CRD:
            self._sync_custom_kinds()
        return gone

    def _delete(
        self, kind: str, ns: str, name: str, uid: str | None, grace: int | None, now: float, propagation: str = ""
    ) -> bool:
        """Delete per the tables above; ``propagation`` is DeleteOptions'
        propagationPolicy ("" for the kind's default). True when the object is gone, False
        when it stays (terminating, or finalizers pending)."""
        if kind == "Namespace" and name in IMMORTAL_NAMESPACES:  # NamespaceLifecycle admission
            raise Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
        if propagation and propagation not in PROPAGATION_POLICIES:
            supported = ", ".join(f'"{p}"' for p in (*PROPAGATION_POLICIES, "nil"))
            detail = f'Unsupported value: "{propagation}": supported values: {supported}'
            raise Invalid(
                f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: {detail}',
                (Cause("FieldValueNotSupported", detail, "propagationPolicy"),),
            )
        if kind == "Pod" and grace == 0 and not propagation and delete_plain_pod(self.store, ns, name, uid):
            return True  # a stopped pod's final delete, without decoding it (``plaindelete``)
        obj = self._get(kind, ns, name)
        if uid:
            check_uid(obj, uid, deleting=True)
        if kind == "PriorityClass" and name in SYSTEM_PRIORITY_CLASSES:
            raise Forbidden("this is a system priority class and cannot be deleted")
        if kind == "Namespace":
            return self._delete_namespace(obj, propagation, now)
        if kind != "Pod":  # no graceful strategy: gone now unless finalizers hold it
            return self._remove_or_finalize(obj, now, _gc_finalizers(obj, propagation))
        return self._delete_pod(obj, grace, propagation, now)

    def _delete_pod(self, obj: dict, grace: int | None, propagation: str, now: float) -> bool:
        """The pod state table above; the finalizers follow ``propagation`` on every path
        but the pending one (upstream: a pending deletion's options change nothing)."""
        if grace is not None and grace < 0:
            grace = 1
        m = obj["metadata"]
        if m.get("deletionTimestamp"):
            current = m.get("deletionGracePeriodSeconds") or 0
            if current == 0 or grace == 0:
                return self._remove_or_finalize(obj, now, _gc_finalizers(obj, propagation))
            if grace is None or grace >= current:
                return False  # pending: only a shorter grace changes anything
            deadline = from_rfc3339(m["deletionTimestamp"]) - current + grace
            m["deletionTimestamp"] = rfc3339(max(deadline, now))
            m["deletionGracePeriodSeconds"] = grace
            _gc_finalizers(obj, propagation)
            self.store.put("Pod", obj, "MODIFIED")
            return False
        period = grace if grace is not None else obj["spec"].get("terminationGracePeriodSeconds", 0)
        if not obj["spec"].get("nodeName") or obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            period = 0
        changed = _gc_finalizers(obj, propagation)
        if period == 0:
            return self._remove_or_finalize(obj, now, changed)
        m["deletionTimestamp"] = rfc3339(now + period)
        m["deletionGracePeriodSeconds"] = period
        self.store.put("Pod", obj, "MODIFIED")
        return False

    def _delete_namespace(self, obj: dict, propagation: str, now: float) -> bool:
        """Upstream's namespace REST delete: the first marks the namespace Terminating and
        leaves its content to the namespace controller; once that controller has emptied
        ``spec.finalizers`` a delete removes it like any object."""
        m = obj["metadata"]
        if not m.get("deletionTimestamp"):
            m["deletionTimestamp"] = rfc3339(now)
            obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
            _gc_finalizers(obj, propagation)
            self.store.put("Namespace", obj, "MODIFIED")
            return False
        if (obj.get("spec") or {}).get("finalizers"):
            return False  # pending: content left to delete
        return self._remove_or_finalize(obj, now, _gc_finalizers(obj, propagation))

    def _remove_or_finalize(self, obj: dict, now: float, changed: bool = False) -> bool:
        """Remove ``obj``, or, with finalizers pending, mark it deleting with grace 0 (upstream
        markAsDeleting) and keep it; ``changed``: the caller already changed it."""
        m = obj["metadata"]
        if not m.get("finalizers"):
            self._remove(obj)
            return True
        stamp = m.get("deletionTimestamp")
        if not stamp or from_rfc3339(stamp) > now:
            m["deletionTimestamp"], changed = rfc3339(now), True
        if m.get("deletionGracePeriodSeconds") != 0:
            m["deletionGracePeriodSeconds"], changed = 0, True
        if changed:
            self.store.put(obj["kind"], obj, "MODIFIED")
        return False

    def _remove(self, obj: dict) -> None:
        kind, m = obj["kind"], obj["metadata"]
        self.store.remove(kind, m.get("namespace", ""), m["name"], obj)
        if kind == "Namespace":
            for ns, name in [k for k in self.store.keys("Event") if k[0] == m["name"]]:
                self.store.remove("Event", ns, name)


def check_uid(obj: dict, uid: str | None, deleting: bool = False) -> None:
    if uid and obj["metadata"].get("uid") != uid:
        if deleting:
            raise Conflict(
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {obj['metadata'].get('uid')}"
            )
        raise Conflict(f'the object "{obj["metadata"]["name"]}" has been replaced (uid {uid} is gone)')


def finalized(obj: dict) -> bool:
    """Delete during update: the last finalizer left an object already marked with grace 0
    (a Namespace also needs its ``spec.finalizers`` empty: upstream's
    ShouldDeleteNamespaceDuringUpdate)."""
    m = obj["metadata"]
    if not m.get("deletionTimestamp") or m.get("finalizers") or m.get("deletionGracePeriodSeconds"):
        return False
    return obj.get("kind") != "Namespace" or not (obj.get("spec") or {}).get("finalizers")


def default_propagation(kind: str) -> str:
    """The policy a delete without one gets (the module docstring says why)."""
    return "Orphan" if kind in _ORPHAN_BY_DEFAULT else "Background"


def _gc_finalizers(obj: dict, propagation: str) -> bool:
    """Set the ``orphan``/``foregroundDeletion`` finalizers as ``propagation`` asks (upstream
    deletionFinalizersForGarbageCollection); returns whether they changed."""
    m = obj["metadata"]
    current = list(m.get("finalizers") or ())
    policy = propagation
    if not policy:  # the first GC finalizer the object carries, else the kind's default
        held = next((f for f in current if f in _GC_FINALIZERS), "")
        policy = _POLICY_OF.get(held) or default_propagation(obj["kind"])
    keep = [f for f in current if f not in _GC_FINALIZERS]
    if policy == "Orphan":
        keep.append(ORPHAN_FINALIZER)
    elif policy == "Foreground":
        keep.append(FOREGROUND_FINALIZER)
    if set(keep) == set(current):
        return False
    if keep:
        m["finalizers"] = keep
    else:
        m.pop("finalizers", None)
    return True
