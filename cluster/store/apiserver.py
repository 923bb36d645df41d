"""The apiserver's logic: every write the emulated control plane makes goes through here.

Owns validation-then-admission on create (``generateName`` included), optimistic
concurrency on update, the status, binding and eviction subresources (``eviction.py``),
typed patches (``cluster/api/patches.py``), and graceful deletion exactly as reference §8
describes. It holds the ``Store``. Both runtimes call it: the apiserver Ray actor
(``actors/apiserver.py``) and the in-process local runtime (``cluster/runtime/local.py``).

Writes come in batches of typed requests (``cluster/api/requests.py``, docs/architecture.md §5):
``write`` applies them in order and answers each with ``None`` (done) or the
``StatusError`` it raised, so one bad item never fails its neighbours (except a slow
start's later batches, answered ``NotAttempted``: ``Create.slow_start``). The single-object
methods (``create``, ``update``, ``delete``, ...) raise instead. Each batch first removes
the Events whose ``--event-ttl`` ran out (``eventttl.py``: an hour after their last write,
and the oldest past kubemu's cap); watchers see those go as DELETED events.

Graceful deletion of a pod (reference §8.1-8.3), as a state table:

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

from collections.abc import Sequence
from typing import Any

from ..api import codec, kinds
from ..api.errors import (
    AlreadyAssigned,
    AlreadyExists,
    Cause,
    Conflict,
    Expired,
    Forbidden,
    Invalid,
    NotAttempted,
    NotFound,
    StatusError,
)
from ..api.events import event_time
from ..api.objects import KINDS, set_condition
from ..api.patches import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Apply, PatchOp
from ..api.requests import (
    Bind,
    Create,
    Delete,
    Evict,
    ListPage,
    ListResult,
    Outcome,
    Patch,
    RecordEvent,
    Request,
    Update,
    UpdateStatus,
    WatchChunk,
    target,
)
from ..api.validation import SYSTEM_PRIORITY_CLASSES, ValidationError, validate
from ..clock import from_rfc3339, rfc3339
from .admission import BUILTIN_NAMESPACES, Admission
from .eventttl import EVENT_TTL_SECONDS, MAX_EVENTS, EventExpiry
from .eviction import charge_budget, mark_disruption_target
from .pages import OpenLists
from .plaindelete import delete_plain_pod
from .store import DEFAULT_WINDOW, Store
from .workloaddefaults import default_object, has_generation, next_generation

GENERATE_NAME_ATTEMPTS = 8  # as upstream's RetryGenerateName: a clash draws a new suffix
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")  # DeleteOptions.propagationPolicy
# Upstream's immortal namespaces are default, kube-system and kube-public; kube-node-lease may
# be deleted there because the apiserver recreates it within a minute. kubemu does not
# recreate it, and every kubelet's Lease lives in it, so it is protected too.
IMMORTAL_NAMESPACES = BUILTIN_NAMESPACES
_ORPHAN_BY_DEFAULT = frozenset({"Job"})  # batch/v1 Job's DefaultGarbageCollectionPolicy
CRD = "CustomResourceDefinition"
_GC_FINALIZERS = (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)
_POLICY_OF = {ORPHAN_FINALIZER: "Orphan", FOREGROUND_FINALIZER: "Foreground"}


class APIServer:
    def __init__(
        self,
        seed: int = 0,
        window: int = DEFAULT_WINDOW,
        store: Store | None = None,
        event_ttl: float = EVENT_TTL_SECONDS,
        max_events: int = MAX_EVENTS,
    ):
        self.store = store or Store(window=window)
        self.admission = Admission(self.store, seed)
        self.event_expiry = EventExpiry(event_ttl, max_events)
        self.pages = OpenLists()  # paginated lists in progress
        if store is None:
            self._bootstrap()
        self._sync_custom_kinds()  # a recovered store may hold CustomResourceDefinitions
        for ev in self.store.objects("Event"):  # a recovered store's Events: leases from their last write
            self._noted(ev, event_time(ev))

    def _sync_custom_kinds(self) -> None:
        """Serve exactly the kinds the stored CustomResourceDefinitions define; the objects
        of a kind whose definition went are deleted with it, as upstream."""
        defined = {}
        for data in self.store.list(CRD)[1]:
            r = kinds.custom_from(codec.decode(data))
            if r is not None:
                defined[r.kind] = r
        for kind in [k for k in kinds.CUSTOM if k not in defined]:
            for data in self.store.list(kind)[1]:
                m = codec.decode(data)["metadata"]
                self.store.remove(kind, m.get("namespace", ""), m["name"])
            kinds.unregister(kind)
        for r in defined.values():
            if kinds.CUSTOM.get(r.kind) != r:
                kinds.register(r)

    def _bootstrap(self) -> None:
        for ns in BUILTIN_NAMESPACES:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, 0.0)
        for name, value in SYSTEM_PRIORITY_CLASSES.items():
            pc: dict[str, Any] = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
            }
            pc.update(value=value, globalDefault=False, description=_SYSTEM_DESCRIPTIONS[name])
            self.create(pc, 0.0)

    # -- the batch interface ---------------------------------------------------------------
    def write(self, requests: Sequence[Request], now: float, owned: bool = False) -> list[Outcome]:
        """Apply ``requests`` in order; one outcome each. ``owned``: the caller hands the
        objects in them over (deserialized for this call), so creates store them as they are."""
        self.expire_events(now)
        out: list[Outcome] = []
        stopped: dict[str, int] = {}  # slow-start group -> the batch that failed
        for req in requests:
            batch = req.slow_start if type(req) is Create else None
            if batch is not None and stopped.get(batch[0], batch[1]) < batch[1]:
                out.append(NotAttempted(f"not attempted: an earlier batch of {target(req)[2]!r} failed"))
                continue
            try:
                self._apply(req, now, owned)
                out.append(None)
            except StatusError as e:
                out.append(e)
                if batch is not None:
                    stopped.setdefault(batch[0], batch[1])
        return out

    def _apply(self, req: Request, now: float, owned: bool) -> None:
        if isinstance(req, Bind):
            self.bind(req.namespace, req.name, req.uid, req.node, now)
        elif isinstance(req, (Create, RecordEvent)):
            self.create(req.obj if isinstance(req, Create) else req.event, now, owned)
        elif isinstance(req, Patch):
            self.patch(req.kind, req.namespace, req.name, req.uid, req.patch, now)
        elif isinstance(req, UpdateStatus):
            self.update_status(
                req.kind, req.namespace, req.name, req.uid, req.status if owned else codec.clone(req.status)
            )
        elif isinstance(req, Delete):
            self.delete(req.kind, req.namespace, req.name, req.uid, req.grace, now, req.propagation)
        elif isinstance(req, Update):
            self.update(req.obj, now)
        elif isinstance(req, Evict):
            self.evict(req.namespace, req.name, req.uid, req.grace, now)
        else:
            raise Invalid(f"request: {type(req).__name__} is not a request the apiserver serves")

    # -- create / update ------------------------------------------------------------------
    def create(self, obj: dict, now: float, owned: bool = False) -> dict:
        """Validate, admit and store one object; returns the stored object. ``owned``: the
        caller hands ``obj`` over, so it is stored as is instead of copied."""
        try:
            validate(obj)
        except ValidationError as e:
            raise Invalid(str(e)) from None
        if not owned:
            obj = codec.clone(obj)
        kind = obj["kind"]
        self.admission.admit_create(kind, obj, now)
        default_object(kind, obj, creating=True)
        m = obj["metadata"]
        ns = m.get("namespace", "")
        if "name" not in m:
            prefix = m.pop("generateName", "")
            for _ in range(GENERATE_NAME_ATTEMPTS):
                m["name"] = prefix + self.admission.name_suffix()
                if not self.store.has(kind, ns, m["name"]):
                    break
        if self.store.has(kind, ns, m["name"]):
            raise AlreadyExists(f'{_resource(kind)} "{m["name"]}" already exists')
        self.store.put(kind, obj, "ADDED")
        if kind == CRD:
            self._sync_custom_kinds()
        elif kind == "Event":
            self._noted(obj, now)
        return obj

    def _noted(self, ev: dict, now: float) -> None:
        m = ev["metadata"]
        self.event_expiry.note(m.get("namespace", ""), m["name"], now)

    def expire_events(self, now: float) -> int:
        """Remove the Events whose ``--event-ttl`` ran out (or past the cap); how many."""
        gone = 0
        for ns, name in self.event_expiry.due(now, self.store.count("Event")):
            if self.store.has("Event", ns, name):
                self.store.remove("Event", ns, name)
                gone += 1
        return gone

    def update(self, obj: dict, now: float) -> dict:
        new = self._update(obj, now)
        if obj.get("kind") == CRD:
            self._sync_custom_kinds()
        return new

    def _update(self, obj: dict, now: float) -> dict:
        """Replace an object's spec and metadata; a stale resourceVersion is a Conflict."""
        kind, m = obj.get("kind", ""), obj.get("metadata") or {}
        current = self._get(kind, m.get("namespace", ""), m.get("name", ""))
        rv = m.get("resourceVersion")
        if rv and rv != current["metadata"]["resourceVersion"]:
            raise Conflict(
                f'Operation cannot be fulfilled on {_resource(kind)} "{m["name"]}": the object has been '
                "modified; please apply your changes to the latest version and try again"
            )
        try:
            validate(obj)
        except ValidationError as e:
            raise Invalid(str(e)) from None
        new = codec.clone(obj)
        for field in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "namespace"):
            if field in current["metadata"]:
                new["metadata"][field] = current["metadata"][field]
        if kind == "Pod":
            if (current["spec"].get("nodeName") or "") != (new["spec"].get("nodeName") or ""):
                raise Invalid("spec.nodeName: Forbidden: may not be changed by an update; use the binding subresource")
        if _has_status(kind):  # the status subresource alone writes it
            new["status"] = current.get("status", {})
        default_object(kind, new, creating=False)
        next_generation(kind, current, new)
        if _finalized(new):
            self._remove(new)
            return new
        self.store.put(kind, new, "MODIFIED")
        if kind == "Event":
            self._noted(new, now)
        return new

    # -- subresources and patches ---------------------------------------------------------
    def update_status(self, kind: str, ns: str, name: str, uid: str, status: dict) -> None:
        """Replace ``status`` (stored as given: ``write`` copies what it is not handed); a uid
        that is not the object's is a Conflict."""
        obj = self._get(kind, ns, name)
        _check_uid(obj, uid)
        obj["status"] = status
        self.store.put(kind, obj, "MODIFIED")

    def patch(self, kind: str, ns: str, name: str, uid: str, op: PatchOp, now: float) -> None:
        """Apply a typed patch; one that changes nothing writes nothing. ``Apply`` creates
        the object when it does not exist."""
        try:
            obj = self._get(kind, ns, name)
        except NotFound:
            if not isinstance(op, Apply):
                raise
            self.create(dict(op.obj, kind=kind), now)
            return
        _check_uid(obj, uid)
        before = _generation_base(obj) if has_generation(kind) else None
        if not op.apply(obj):
            return
        if before is not None:
            next_generation(kind, before, obj)
        if _finalized(obj):  # the patch took the last finalizer of an object marked for deletion
            self._remove(obj)
            return
        self.store.put(kind, obj, "MODIFIED")
        if kind == "Event":
            self._noted(obj, now)

    def bind(self, ns: str, name: str, uid: str, node: str, now: float) -> None:
        """The binding subresource: set spec.nodeName once; a second bind is a Conflict."""
        pod = self._get("Pod", ns, name)
        _check_uid(pod, uid)
        if pod["metadata"].get("deletionTimestamp"):
            raise Conflict(f"pod {name} is being deleted, cannot be assigned to a host")
        current = pod["spec"].get("nodeName")
        if current:
            raise AlreadyAssigned(f'pod {name} is already assigned to node "{current}"', node=current)
        pod["spec"]["nodeName"] = node
        status = pod.setdefault("status", {})
        set_condition(status, {"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339(now)})
        self.store.put("Pod", pod, "MODIFIED")

    def evict(self, ns: str, name: str, uid: str | None, grace: int | None, now: float) -> None:
        """The eviction subresource (``eviction.py``): charge the pod's PodDisruptionBudget,
        mark the pod as a disruption target and delete it gracefully."""
        pod = self._get("Pod", ns, name)
        if uid:
            _check_uid(pod, uid, deleting=True)
        charge_budget(self.store, pod, now)
        changed = mark_disruption_target(pod, now)
        rv = self.store.rv
        gone = self._delete_pod(pod, grace, "", now)  # this copy, condition and all
        if changed and not gone and self.store.rv == rv:
            # The delete changed nothing (a longer grace on a terminating pod): store the condition.
            self.store.put("Pod", pod, "MODIFIED")

    # -- delete ---------------------------------------------------------------------------
    def delete(
        self, kind: str, ns: str, name: str, uid: str | None, grace: int | None, now: float, propagation: str = ""
    ) -> bool:
        """Delete (see ``_delete``); a CustomResourceDefinition takes its kind with it."""
        gone = self._delete(kind, ns, name, uid, grace, now, propagation)
        if kind == CRD:
            self._sync_custom_kinds()
        return gone

    def _delete(
        self, kind: str, ns: str, name: str, uid: str | None, grace: int | None, now: float, propagation: str = ""
    ) -> bool:
        """Delete per reference §8 and the tables above; ``propagation`` is DeleteOptions'
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
            _check_uid(obj, uid, deleting=True)
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

    # -- reads ----------------------------------------------------------------------------
    def get(self, kind: str, ns: str, name: str) -> dict:
        return self._get(kind, ns, name)

    def list(self, kind: str, node_names: set[str] | frozenset[str] | None = None) -> ListResult:
        """Every object of ``kind`` (pods only on ``node_names`` when given), encoded."""
        rv, items = self.store.list(kind, node_names)
        return ListResult(rv, items)

    def list_page(
        self, kind: str, node_names: set[str] | frozenset[str] | None, limit: int, continue_token: str = ""
    ) -> ListPage:
        """One page of ``list`` (``pages.py``): every page of a list is current at the rv of
        its first; a token no longer held is Expired."""
        if continue_token:
            return self.pages.next(continue_token, limit)
        rv, items = self.store.list(kind, node_names)
        return self.pages.first(rv, items, limit)

    def watch(
        self, since: dict[str, int], node_names: set[str] | frozenset[str] | None = None
    ) -> dict[str, WatchChunk | Expired]:
        """For each kind, the events after ``since[kind]`` (``node_names`` selects pods on
        those nodes), or ``Expired`` when the window no longer reaches back that far."""
        out: dict[str, WatchChunk | Expired] = {}
        for kind, rv in since.items():
            try:
                events, resume = self.store.events_since(kind, rv, node_names if kind == "Pod" else None)
            except Expired as e:
                out[kind] = e
                continue
            out[kind] = WatchChunk(events, resume)
        return out

    def _get(self, kind: str, ns: str, name: str) -> dict:
        if kind not in KINDS:
            raise NotFound(f'the server doesn\'t have a resource type "{kind}"')
        obj = self.store.get(kind, ns if KINDS[kind][1] else "", name)
        if obj is None:
            raise NotFound(f'{_resource(kind)} "{name}" not found')
        return obj


def _check_uid(obj: dict, uid: str | None, deleting: bool = False) -> None:
    if uid and obj["metadata"].get("uid") != uid:
        if deleting:
            raise Conflict(
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {obj['metadata'].get('uid')}"
            )
        raise Conflict(f'the object "{obj["metadata"]["name"]}" has been replaced (uid {uid} is gone)')


def _finalized(obj: dict) -> bool:
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


def _generation_base(obj: dict) -> dict:
    """What ``next_generation`` compares a patched object with: its spec before the patch."""
    return codec.clone({k: v for k, v in obj.items() if k != "status"})


def _has_status(kind: str) -> bool:
    r = kinds.BY_KIND.get(kind) or kinds.CUSTOM.get(kind)
    return r is not None and "status" in r.subresources


def _resource(kind: str) -> str:
    plural = {"PriorityClass": "priorityclasses", "PodDisruptionBudget": "poddisruptionbudgets"}
    return plural.get(kind, kind.lower() + "s")


_SYSTEM_DESCRIPTIONS = {
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, "
    "but can be moved to another node if necessary.",
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
}
