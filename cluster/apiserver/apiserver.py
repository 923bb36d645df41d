"""The apiserver's logic: every write the emulated control plane makes goes through here.

Owns validation-then-admission on create (``generateName`` included), optimistic
concurrency on update, the status, binding and eviction subresources (``eviction.py``),
typed patches (``cluster/api/patches.py``), and deletion (its ``deletion.Deletion`` half,
graceful as upstream's is). It holds the ``Store``. Both runtimes call it: the apiserver Ray actor
(``actors/apiserver.py``) and the in-process local runtime (``cluster/runtime/local.py``).

Writes come in batches of typed requests (``cluster/api/requests.py``, docs/architecture.md §5):
``write`` applies them in order and answers each with ``None`` (done) or the
``StatusError`` it raised, so one bad item never fails its neighbours (except a slow
start's later batches, answered ``NotAttempted``: ``Create.slow_start``). The single-object
methods (``create``, ``update``, ``delete``, ...) raise instead. Each batch first removes
the Events whose ``--event-ttl`` ran out (``eventttl.py``: an hour after their last write,
and the oldest past kubemu's cap); watchers see those go as DELETED events.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..api import codec, kinds, kindspec
from ..api.canonical import canonicalize
from ..api.errors import (
    AlreadyAssigned,
    AlreadyExists,
    Conflict,
    Expired,
    Invalid,
    NotAttempted,
    NotFound,
    StatusError,
)
from ..api.events import event_time
from ..api.objects import KINDS, set_condition
from ..api.patches import Apply, PatchOp
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
from ..api.updatevalidation import validate_update
from ..api.validation import SYSTEM_PRIORITY_CLASSES, ValidationError, validate, validate_create
from ..api.workloadvalidation import FieldError
from ..clock import rfc3339
from .admission import BUILTIN_NAMESPACES, Admission
from .bootstrap_services import MasterServices
from .deletion import CRD, Deletion, check_uid, finalized
from .dryrun import DryRunStore
from .eventsink import record_event
from .eventttl import EVENT_TTL_SECONDS, MAX_EVENTS, EventExpiry
from .eviction import charge_budget, mark_disruption_target
from .pages import OpenLists
from .quotaadmission import admit_limits_and_quota
from .serviceips import ServiceIPs
from .storage import DEFAULT_WINDOW, Journal, Storage, Window
from .store import Store
from .workloaddefaults import default_object, has_generation, next_generation

GENERATE_NAME_ATTEMPTS = 8  # as upstream's RetryGenerateName: a clash draws a new suffix


class APIServer(Deletion):
    def __init__(
        self,
        seed: int = 0,
        window: Window = DEFAULT_WINDOW,
        store: Storage | None = None,
        event_ttl: float = EVENT_TTL_SECONDS,
        max_events: int = MAX_EVENTS,
        start: float = 0.0,
    ):
        """``start``: the emulated time the cluster starts at, when the built-in objects
        are created (``kubemu serve`` starts at the wall time, so their AGE reads right)."""
        self.store: Storage = store or Store(window=window)  # the apiserver alone calls it (storage.py)
        self.admission = Admission(self.store, seed)
        self.event_expiry = EventExpiry(event_ttl, max_events)
        self.pages = OpenLists()  # paginated lists in progress
        self.services, self.masters = ServiceIPs(), MasterServices()  # ClusterIPs, NodePorts; `kubernetes` Service
        if store is None:
            self._bootstrap(start)
        self._sync_custom_kinds()  # a recovered store may hold CustomResourceDefinitions
        for ev in self.store.objects("Event"):  # a recovered store's Events: leases from their last write
            self._noted(ev, event_time(ev))

    def _sync_custom_kinds(self) -> None:
        """Serve exactly the kinds the stored CustomResourceDefinitions define, stored at
        their storage version and served at each served one; the objects of a kind whose
        definition went are deleted with it, as upstream."""
        defined: dict[str, tuple[kinds.Resource, tuple[kinds.Resource, ...]]] = {}
        for data in self.store.list(CRD)[1]:
            crd = codec.decode(data)
            r = kinds.custom_from(crd)
            if r is not None:
                defined[r.kind] = (r, kinds.custom_versions(crd))
        # A kind registered in code (kindspec.register) is served like a custom one, with no definition stored.
        for kind in [k for k in kinds.CUSTOM if k not in defined and kindspec.get(k) is None]:
            for data in self.store.list(kind)[1]:
                m = codec.decode(data)["metadata"]
                self.store.remove(kind, m.get("namespace", ""), m["name"])
            kinds.unregister(kind)
        for kind, (r, versions) in defined.items():
            if (kinds.CUSTOM.get(kind), kinds.CUSTOM_VERSIONS.get(kind)) != (r, versions):
                kinds.register(r, versions)

    def _bootstrap(self, now: float) -> None:
        for ns in BUILTIN_NAMESPACES:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, now)
        for name, value in SYSTEM_PRIORITY_CLASSES.items():
            pc: dict[str, Any] = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
            }
            pc.update(value=value, globalDefault=False, description=_SYSTEM_DESCRIPTIONS[name])
            self.create(pc, now)
        self.masters.ensure(self, now)

    @contextmanager
    def dry_run(self) -> Iterator[None]:
        """Within it, requests are carried out in full (admission, defaults, validation) and
        answered, but nothing is stored, logged or watched (``dryrun.py``)."""
        real, expiry, draws = self.store, self.event_expiry, self.admission.draws()
        self.store = DryRunStore(real)  # type: ignore[assignment]  # a Store to every reader
        self.admission.use_store(self.store)
        self.event_expiry = EventExpiry(expiry.ttl, expiry.max_events)  # its notes are dropped too
        try:
            yield
        finally:
            self.store, self.event_expiry = real, expiry
            self.admission.use_store(real)
            self.admission.restore_draws(draws)

    # -- the batch interface ---------------------------------------------------------------
    def write(self, requests: Sequence[Request], now: float, owned: bool = False) -> list[Outcome]:
        """Apply ``requests`` in order; one outcome each. ``owned``: the caller hands the
        objects in them over (deserialized for this call), so creates store them as they are."""
        self.store.at(now)
        self.expire_events(now)
        self.masters.ensure(self, now)  # the `kubernetes` Service back if deleted
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
        elif isinstance(req, Create):
            self.create(req.obj, now, owned)
        elif isinstance(req, RecordEvent):
            record_event(self, req.event, now, owned)  # a new Event or a count on one (eventsink.py)
        elif isinstance(req, Patch):
            self.patch(req.kind, req.namespace, req.name, req.uid, req.patch, now)
        elif isinstance(req, UpdateStatus):
            status = req.status if owned else codec.clone(req.status)
            self.update_status(req.kind, req.namespace, req.name, req.uid, status, req.meta)
        elif isinstance(req, Delete):
            self.delete(req.kind, req.namespace, req.name, req.uid, req.grace, now, req.propagation)
        elif isinstance(req, Update):
            self.update(req.obj, now)
        elif isinstance(req, Evict):
            self.evict(req.namespace, req.name, req.uid, req.grace, now)
        else:
            raise Invalid(f"request: {type(req).__name__} is not a request the apiserver serves")

    # -- create / update ------------------------------------------------------------------
    def create(self, obj: dict, now: float, owned: bool = False, trusted: bool = False) -> dict:
        """Validate, admit and store one object; returns the stored object. ``owned``: the
        caller hands ``obj`` over, so it is stored as is instead of copied. ``trusted``: the
        apiserver's own object, whose field rules are skipped (see ``bootstrap_services``)."""
        self.store.at(now)
        try:
            if not trusted:
                validate(obj)
            validate_create(obj)
        except ValidationError as e:
            raise Invalid(str(e), e.causes) from None
        if not owned:
            obj = codec.clone(obj)
        kind = obj["kind"]
        self.admission.admit_create(kind, obj, now)
        default_object(kind, obj, creating=True)
        canonicalize(kind, obj)  # quantities as upstream stores them ("500m" for 0.5)
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
        admit_limits_and_quota(self.store, kind, obj, None, now)  # last, as upstream (quotaadmission.py)
        if kind == "Service":
            self.services.assign(obj, self.store)  # ClusterIPs and NodePorts (serviceips.py)
        self.store.put(kind, obj, "ADDED")
        if kind == "Service":
            self.services.committed(self.store)
        elif kind == CRD:
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

    def update(self, obj: dict, now: float, trusted: bool = False) -> dict:
        self.store.at(now)
        new = self._update(obj, now, trusted)
        if obj.get("kind") == CRD:
            self._sync_custom_kinds()
        return new

    def _update(self, obj: dict, now: float, trusted: bool = False) -> dict:
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
            if not trusted:
                validate(obj)
        except ValidationError as e:
            raise Invalid(str(e), e.causes) from None
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
        canonicalize(kind, new)
        self.admission.admit_update(kind, new, current)
        try:
            validate_update(kind, current, new)
        except FieldError as e:
            raise Invalid(str(e)) from None
        next_generation(kind, current, new)
        if finalized(new):
            self._remove(new)
            return new
        admit_limits_and_quota(self.store, kind, new, current, now)  # LimitRanger, ResourceQuota
        if kind == "Service":
            self.services.assign(new, self.store, current)
        self.store.put(kind, new, "MODIFIED")
        if kind == "Service":
            self.services.committed(self.store)
        if kind == "Event":
            self._noted(new, now)
        return new

    # -- subresources and patches ---------------------------------------------------------
    def update_status(self, kind: str, ns: str, name: str, uid: str, status: dict, meta: dict | None = None) -> None:
        """Replace ``status`` (stored as given: ``write`` copies what it is not handed) and the
        labels and annotations ``meta`` gives; a uid that is not the object's is a Conflict."""
        obj = self._get(kind, ns, name)
        check_uid(obj, uid)
        obj["status"] = status
        for field, value in (meta or {}).items():
            if field in ("labels", "annotations"):
                if value:
                    obj["metadata"][field] = dict(value)
                else:
                    obj["metadata"].pop(field, None)
        self.store.put(kind, obj, "MODIFIED")

    def patch(self, kind: str, ns: str, name: str, uid: str, op: PatchOp, now: float) -> None:
        """Apply a typed patch; one that changes nothing writes nothing. ``Apply`` creates
        the object when it does not exist."""
        self.store.at(now)
        if kind == "Lease" and not uid and isinstance(op, Apply) and self.store.renew(ns, name, op.obj):
            return  # a kubelet's renewal, made in the stored bytes (apiserver/leaserenew.py)
        try:
            obj = self._get(kind, ns, name)
        except NotFound:
            if not isinstance(op, Apply):
                raise
            self.create(dict(op.obj, kind=kind), now)
            return
        check_uid(obj, uid)
        before = _generation_base(obj) if has_generation(kind) else None
        if not op.apply(obj):
            return
        if before is not None:
            next_generation(kind, before, obj)
        if finalized(obj):  # the patch took the last finalizer of an object marked for deletion
            self._remove(obj)
            return
        self.store.put(kind, obj, "MODIFIED")
        if kind == "Event":
            self._noted(obj, now)

    def bind(self, ns: str, name: str, uid: str, node: str, now: float) -> None:
        """The binding subresource: set spec.nodeName once; a second bind is a Conflict."""
        self.store.at(now)
        pod = self._get("Pod", ns, name)
        check_uid(pod, uid)
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
        self.store.at(now)
        pod = self._get("Pod", ns, name)
        if uid:
            check_uid(pod, uid, deleting=True)
        charge_budget(self.store, pod, now)
        changed = mark_disruption_target(pod, now)
        rv = self.store.rv
        gone = self._delete_pod(pod, grace, "", now)  # this copy, condition and all
        if changed and not gone and self.store.rv == rv:
            # The delete changed nothing (a longer grace on a terminating pod): store the condition.
            self.store.put("Pod", pod, "MODIFIED")

    # -- what callers outside the apiserver read of its storage ------------------------------
    def resource_version(self) -> int:
        """The resourceVersion of the latest write."""
        return self.store.rv

    def count(self, kind: str) -> int:
        """How many objects of ``kind`` are stored."""
        return self.store.count(kind)

    def exists(self, kind: str, ns: str, name: str) -> bool:
        """Whether the object is stored (``ns`` "" for a cluster-scoped kind)."""
        return self.store.has(kind, ns, name)

    def set_journal(self, journal: Journal | None) -> None:
        """Tell ``journal`` of every write from now on (a durable log, a trace); None: nobody."""
        self.store.journal = journal

    # -- reads ----------------------------------------------------------------------------
    def get(self, kind: str, ns: str, name: str) -> dict:
        return self._get(kind, ns, name)

    def list(self, kind: str, node_names: set[str] | frozenset[str] | None = None) -> ListResult:
        """Every object of ``kind`` (when ``node_names`` is given: the pods bound to, and the Nodes named, one of them), encoded."""
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
                events, resume = self.store.events_since(kind, rv, node_names if kind in ("Pod", "Node") else None)
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
            r = kinds.BY_KIND.get(kind) or kinds.CUSTOM.get(kind)
            raise NotFound.of(r.plural, r.group, name) if r else NotFound(f'{kind.lower()} "{name}" not found')
        return obj


def _generation_base(obj: dict) -> dict:
    """What ``next_generation`` compares a patched object with: its spec before the patch."""
    return codec.clone({k: v for k, v in obj.items() if k != "status"})


def _has_status(kind: str) -> bool:
    r = kinds.BY_KIND.get(kind) or kinds.CUSTOM.get(kind)
    return r is not None and "status" in r.subresources


def _resource(kind: str) -> str:
    """The resource as upstream's messages name it: the registry's plural, qualified by
    its group outside the core group (``pods``, ``storageclasses.storage.k8s.io``)."""
    r = kinds.BY_KIND.get(kind) or kinds.CUSTOM.get(kind)
    if r is None:
        return kind.lower()
    return f"{r.plural}.{r.group}" if r.group else r.plural


_SYSTEM_DESCRIPTIONS = {
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, "
    "but can be moved to another node if necessary.",
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
}
