"""The Deployment controller: ReplicaSets per pod template, rolled as the strategy says.

Owns what upstream's ``pkg/controller/deployment`` decides:
which owned ReplicaSet is new (``deploymentutil.find_new``), creating it
(``<deployment>-<pod-template-hash>``, revision annotations), the RollingUpdate and
Recreate steps, proportional scaling of a rollout in flight, history cleanup beyond
``revisionHistoryLimit``, and the status with its conditions (``deploymentstatus``).
Rollback is client side, as with kubectl: the template goes back and the old
ReplicaSet is found as new again, with a new revision.

Who calls it: the controller-manager (``manager.default_controllers``) runs
``DeploymentController()``, a ``reconciler.ReconcilerStep`` over a ``DeploymentReconciler``
(one rate-limited work queue, Deployment keys in key order). The reconciler observes
Deployment, ReplicaSet and Pod events itself (``Watches.observed``: which ReplicaSets a
Deployment owns and which writes are in flight are informer-side state) and names the
Deployment an event touches; ``reconcile(key, now)`` returns typed requests: ReplicaSets
created, scaled or re-annotated (``Update``, each carrying the resourceVersion it was read
at), the Deployment's revision annotation (``Update``), surplus ReplicaSets deleted
(``Delete``, Background), the status (``UpdateStatus``) and ``ScalingReplicaSet`` Events.
A refused write comes back as the Deployment's next reconcile after the work queue's
back-off (5 ms doubling, as upstream's ``handleErr``); that reconcile reads it
(``ObjectCache.refused``): the ReplicaSet's last seen copy stands again, a refused create
records ``FailedCreate``, a refused status is written again.

A Deployment, as a state table (one owner, no locks: a write in flight holds it):

| state    | how it is left                                   | reconcile does                     |
|----------|--------------------------------------------------|------------------------------------|
| idle     | an event about it, its ReplicaSets or (Recreate) | the upstream sync, in order:       |
|          | their pods; the progress deadline's timer        | paused / scaling / strategy        |
| writing  | the watch shows each ReplicaSet or Deployment    | nothing (its next reconcile waits; |
|          | write landed (a new resourceVersion, or ADDED),  | looked at again at WRITE_TIMEOUT)  |
|          | the write is refused (then: idle, after the      |                                    |
|          | back-off) or WRITE_TIMEOUT passes                |                                    |
| deleting | DELETED                                          | status only; the garbage collector |
|          |                                                  | removes its ReplicaSets            |

Upstream runs each step's writes one after another inside one sync; here a sync asks
for the writes of one step and the next sync (after the watch shows them) goes on, so
a step never acts on what it has not seen. Claiming is such a step, as upstream's
ClaimReplicaSets: a Deployment not being deleted adopts each orphan ReplicaSet (no
controller reference, not being deleted) whose labels its selector matches, and releases
each of its own whose labels it no longer matches; the next sync counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..api.errors import StatusError
from ..api.events import make_event
from ..api.objects import is_terminal, is_terminating, name_of, namespace_of, uid_of
from ..api.requests import Create, Delete, Request, Update, UpdateStatus
from . import deploymentstatus as ds
from . import deploymentutil as du
from .ownedpods import controller_ref, owner_reference, selector_of
from .reconciler import Indexer, Obj, ObjectCache, Outcome, ReconcilerStep, Watches

Key = tuple[str, str]
SCALING = "ScalingReplicaSet"
WRITE_TIMEOUT = 300.0  # a write whose echo never comes stops holding its Deployment


@dataclass
class _Deployment:
    obj: Obj  # as last seen, with this controller's writes since
    seen: Obj  # as the watch last showed it
    inflight: dict[str, str] = field(default_factory=dict)  # RS name ("" = itself) -> rv sent from
    awaiting: set[str] = field(default_factory=set)  # ReplicaSets created, not yet seen
    since: float = 0.0  # when the writes in flight were sent
    wake: float | None = None
    restatus: bool = False  # the status changed here (a collision): written even if it looks equal

    @property
    def uid(self) -> str:
        return uid_of(self.obj)

    @property
    def spec(self) -> Obj:
        return self.obj.get("spec") or {}

    @property
    def generation(self) -> int:
        return int((self.obj.get("metadata") or {}).get("generation") or 0)


def _key(obj: Obj) -> Key:
    return namespace_of(obj), name_of(obj)


def DeploymentController() -> ReconcilerStep:  # noqa: N802 (the controller's name, as the others')
    """The Deployment controller as the manager runs it: its reconciler in a work queue."""
    return ReconcilerStep(DeploymentReconciler, sort_keys=True)


class DeploymentReconciler:
    """Deployments and their ReplicaSets; ``reconcile`` returns the writes that roll one."""

    name: ClassVar[str] = "deployment"
    COMPONENT = "deployment-controller"
    watches: ClassVar[tuple[Watches, ...]] = tuple(
        Watches(kind, observed=True) for kind in ("Deployment", "ReplicaSet", "Pod")
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache  # read for the refused writes of a Deployment
        self._deps: dict[Key, _Deployment] = {}
        self._by_uid: dict[str, Key] = {}
        self._rs: dict[Key, Obj] = {}
        self._rs_owner: dict[Key, str] = {}  # ReplicaSet -> its Deployment's uid
        self._owned: dict[str, set[Key]] = {}  # Deployment uid -> its ReplicaSets
        self._rs_uid: dict[str, Key] = {}
        self._orphans: dict[str, set[Key]] = {}  # namespace -> ReplicaSets with no controller
        self._shadow: dict[Key, Obj] = {}  # ReplicaSets updated, as last seen, until the echo
        self._pods: dict[str, set[Key]] = {}  # ReplicaSet uid -> its pods not yet terminal
        self._pod_rs: dict[Key, str] = {}
        self._named: list[Key] = []  # the Deployments the event at hand touches
        self._events: list[Any] = []  # the reconcile's Events

    # -- events (``Observer.observe``) ----------------------------------------------------
    def observe(self, kind: str, etype: str, obj: Obj, now: float) -> list[Key]:
        if kind == "Deployment":
            self._on_deployment(etype, obj)
        elif kind == "ReplicaSet":
            self._on_replicaset(etype, obj)
        elif kind == "Pod":
            self._on_pod(etype, obj)
        named, self._named = self._named, []
        return named

    def observed_events(self) -> list[Any]:
        return []  # its Events are all raised while reconciling

    def _on_deployment(self, etype: str, obj: Obj) -> None:
        key = _key(obj)
        st = self._deps.get(key)
        if etype == "DELETED" or (st is not None and st.uid != uid_of(obj)):
            if st is not None:
                del self._deps[key]
                self._by_uid.pop(st.uid, None)
                self._named.append(key)  # its reconcile finds it gone and drops any hold
            if etype == "DELETED":
                return
            st = None
        if st is None:
            st = self._deps[key] = _Deployment(obj, obj)
            self._by_uid[st.uid] = key
        else:
            sent = st.inflight.get("")
            if sent is not None and sent != (obj.get("metadata") or {}).get("resourceVersion"):
                del st.inflight[""]
            st.obj = st.seen = obj
        self._named.append(key)

    def _on_replicaset(self, etype: str, rs: Obj) -> None:
        key = _key(rs)
        self._shadow.pop(key, None)
        old_owner = self._rs_owner.pop(key, None)
        if old_owner is not None:
            self._owned.get(old_owner, set()).discard(key)
            self._landed(old_owner, key, rs)  # a release's echo: it no longer holds its owner
            self._touch(old_owner)
        self._orphans.get(key[0], set()).discard(key)
        if etype == "DELETED":
            self._rs.pop(key, None)
            self._rs_uid.pop(uid_of(rs), None)
            return
        self._rs[key] = rs
        self._rs_uid[uid_of(rs)] = key
        ref = controller_ref(rs)
        if ref is None:
            self._orphans.setdefault(key[0], set()).add(key)
            self._named.extend(k for k, d in self._deps.items() if k[0] == key[0] and _selects(d.obj, rs))
            return
        if ref.get("kind") != "Deployment":
            return
        owner = ref.get("uid", "")
        self._rs_owner[key] = owner
        self._owned.setdefault(owner, set()).add(key)
        self._landed(owner, key, rs)
        self._touch(owner)

    def _landed(self, owner: str, key: Key, rs: Obj) -> None:
        """The watch shows ``rs``: a create or update of it by ``owner`` in flight landed."""
        st = self._deps.get(self._by_uid.get(owner, ("", "")))
        if st is not None:
            st.awaiting.discard(key[1])
            sent = st.inflight.get(key[1])
            if sent is not None and sent != (rs.get("metadata") or {}).get("resourceVersion"):
                del st.inflight[key[1]]

    def _on_pod(self, etype: str, pod: Obj) -> None:
        """Only Recreate reads pods: it waits until the old ones are gone."""
        key = _key(pod)
        ref = controller_ref(pod)
        rs_uid = ref.get("uid", "") if ref is not None and ref.get("kind") == "ReplicaSet" else ""
        before = self._pod_rs.pop(key, None)
        if before is not None:
            self._pods.get(before, set()).discard(key)
        if etype != "DELETED" and rs_uid and not is_terminal(pod):
            self._pod_rs[key] = rs_uid
            self._pods.setdefault(rs_uid, set()).add(key)
        if before is not None and before != self._pod_rs.get(key):
            rs_key = self._rs_uid.get(before)
            owner = self._rs_owner.get(rs_key) if rs_key is not None else None
            if owner is not None:
                self._touch(owner, recreate_only=True)

    def _touch(self, owner_uid: str, recreate_only: bool = False) -> None:
        key = self._by_uid.get(owner_uid)
        if key is None:
            return
        if recreate_only and ((self._deps[key].spec.get("strategy") or {}).get("type") != "Recreate"):
            return
        self._named.append(key)

    # -- the reconcile ---------------------------------------------------------------------
    def reconcile(self, key: Key, now: float) -> Outcome:
        """The Deployment's refused writes first, then (unless writes of its are still in
        flight) the upstream sync; looked at again at its progress deadline or when its
        writes in flight stop holding it."""
        self._events = []
        st = self._deps.get(key)
        for req, err in self.cache.refused(key):
            if st is not None:
                self._refused(st, req, err, now)
        if st is None:
            return Outcome(events=self._take_events())
        if self._busy(st) and now - st.since < WRITE_TIMEOUT:
            # Its writes' echoes name it again; the timeout, if they never come.
            return Outcome(events=self._take_events(), requeue_at=_earliest(st.wake, st.since + WRITE_TIMEOUT))
        st.inflight, st.awaiting = {}, set()
        w: list[Request] = []
        self._sync_one(st, now, w)
        requeue = _earliest(st.wake, st.since + WRITE_TIMEOUT if self._busy(st) else None)
        return Outcome(writes=w, events=self._take_events(), requeue_at=requeue)

    def _take_events(self) -> list[Any]:
        events, self._events = self._events, []
        return events

    def _refused(self, st: _Deployment, req: Request, error: StatusError, now: float) -> None:
        """One refused write of ``st``: what upstream's failed call leaves behind."""
        if isinstance(req, Create) and req.obj.get("kind") == "ReplicaSet":
            name = name_of(req.obj)
            if name in st.awaiting:
                st.awaiting.discard(name)
                if error.reason != "AlreadyExists":
                    self._event(st, "FailedCreate", f"Error creating replica set: {error}", now, "Warning")
                elif self._rs_owner.get(_key(req.obj)) != st.uid:
                    self._collided(st)
        elif isinstance(req, Update) and req.obj.get("kind") == "ReplicaSet":
            st.inflight.pop(name_of(req.obj), None)
            shadow = self._shadow.pop(_key(req.obj), None)
            if shadow is not None:
                self._rs[_key(req.obj)] = shadow  # the apiserver's copy stands
        elif isinstance(req, (Update, UpdateStatus)):  # the Deployment's annotation or status
            st.inflight.pop("", None)
            st.obj = st.seen  # the apiserver's copy stands: the reconcile writes it again

    def _collided(self, st: _Deployment) -> None:
        """Another object holds the new ReplicaSet's name: count a collision, so the next
        hash (and name) differs (upstream's status.collisionCount)."""
        status = dict(st.obj.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        st.obj, st.restatus = {**st.obj, "status": status}, True

    def _replicasets(self, st: _Deployment) -> list[Obj]:
        keys = sorted(self._owned.get(st.uid, ()))
        return [self._rs[k] for k in keys if k in self._rs and not is_terminating(self._rs[k])]

    def _sync_one(self, st: _Deployment, now: float, w: list[Request]) -> None:
        spec = st.spec
        owned = self._replicasets(st)
        base = {**(st.obj.get("status") or {})}
        base["conditions"] = [dict(c) for c in base.get("conditions") or ()]
        if is_terminating(st.obj):
            self._write_status(st, owned, du.find_new(spec.get("template") or {}, owned), base, now, w, False)
            return
        if self._claim(st, owned, now, w):
            return  # the next sync, once the watch shows the claims, counts them
        ds.paused_conditions(spec, base, now)
        new = du.find_new(spec.get("template") or {}, owned)
        old = [rs for rs in owned if rs is not new]
        if new is not None and self._sync_revision(st, new, old, base, now, w):
            self._write_status(st, owned, new, base, now, w, False)
            return
        if spec.get("paused") or self._is_scaling_event(st, new, old):
            self._scale(st, new, old, now, w)
            if spec.get("paused") and not self._busy(st):
                self._cleanup(st, old, now, w)
            self._write_status(st, owned, new, base, now, w, False)
            return
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            new = self._recreate(st, new, old, base, now, w)
        else:
            new = self._rolling(st, new, old, base, now, w)
        everything = [*old, new] if new is not None else old
        current = [self._rs.get(_key(rs), rs) for rs in everything]  # with this sync's writes
        new = self._rs.get(_key(new), new) if new is not None else None
        self._write_status(st, current, new, base, now, w, True)

    def _claim(self, st: _Deployment, owned: list[Obj], now: float, w: list[Request]) -> bool:
        """Adopt matching orphan ReplicaSets, release owned ones that no longer match
        (upstream ClaimReplicaSets); True when that sent writes."""
        if selector_of(st.obj).matches_nothing:
            return False
        sent = False
        for rs in owned:
            if not _selects(st.obj, rs):
                refs = [r for r in rs["metadata"].get("ownerReferences") or () if r.get("uid") != st.uid]
                self._send_rs(st, rs, {**rs, "metadata": {**rs["metadata"], "ownerReferences": refs}}, now, w)
                sent = True
        for key in sorted(self._orphans.get(namespace_of(st.obj), ())):
            rs = self._rs[key]  # a claim in flight already shows its controller here
            if controller_ref(rs) is None and not is_terminating(rs) and _selects(st.obj, rs):
                refs = [*(rs["metadata"].get("ownerReferences") or ()), owner_reference(st.obj, "Deployment")]
                self._send_rs(st, rs, {**rs, "metadata": {**rs["metadata"], "ownerReferences": refs}}, now, w)
                sent = True
        return sent

    def _busy(self, st: _Deployment) -> bool:
        return bool(st.inflight or st.awaiting)

    # -- the strategies ------------------------------------------------------------------
    def _rolling(
        self, st: _Deployment, new: Obj | None, old: list[Obj], base: Obj, now: float, w: list[Request]
    ) -> Obj:
        spec, want = st.spec, du.spec_replicas(st.spec)
        created = new is None
        if new is None:
            zero = {"spec": {"replicas": 0}, "metadata": {"name": ""}}
            new = self._create(st, old, du.new_rs_replicas(spec, [*old, zero], 0), base, now, w)
        everything = [*old, new]
        if not created and du.replicas(new) != want:
            size = want if du.replicas(new) > want else du.new_rs_replicas(spec, everything, du.replicas(new))
            if self._scale_rs(st, new, size, now, w):
                return new
        plan = du.old_scale_down(spec, old, new)
        for rs in old:
            if rs["metadata"]["name"] in plan:
                self._scale_rs(st, rs, plan[rs["metadata"]["name"]], now, w)
        if not plan and ds.is_complete(spec, st.generation, st.obj.get("status") or {}):
            self._cleanup(st, old, now, w)
        return new

    def _recreate(
        self, st: _Deployment, new: Obj | None, old: list[Obj], base: Obj, now: float, w: list[Request]
    ) -> Obj | None:
        scaled = False
        for rs in old:
            if du.is_active(rs):
                scaled |= self._scale_rs(st, rs, 0, now, w)
        if scaled or self._old_pods_running(new, old):
            return new
        want = du.spec_replicas(st.spec)
        if new is None:
            new = self._create(st, old, want, base, now, w)
        else:
            self._scale_rs(st, new, want, now, w)
        if ds.is_complete(st.spec, st.generation, st.obj.get("status") or {}):
            self._cleanup(st, old, now, w)
        return new

    def _old_pods_running(self, new: Obj | None, old: list[Obj]) -> bool:
        if sum(du.status_replicas(rs) for rs in old) > 0:
            return True
        return any(self._pods.get(uid_of(rs)) for rs in old if rs is not new)

    def _is_scaling_event(self, st: _Deployment, new: Obj | None, old: list[Obj]) -> bool:
        want = str(du.spec_replicas(st.spec))
        for rs in [*old, *([new] if new is not None else [])]:
            desired = ((rs.get("metadata") or {}).get("annotations") or {}).get(du.DESIRED)
            if du.is_active(rs) and desired is not None and desired != want:
                return True
        return False

    def _scale(self, st: _Deployment, new: Obj | None, old: list[Obj], now: float, w: list[Request]) -> None:
        """Upstream ``scale``: one active ReplicaSet takes the size; a saturated new one
        retires the old ones; otherwise the sizes go proportionally."""
        spec, want = st.spec, du.spec_replicas(st.spec)
        single = du.active_or_latest(new, old)
        if single is not None:
            if du.replicas(single) != want:
                self._scale_rs(st, single, want, now, w)
            return
        if du.is_saturated(spec, new):
            for rs in old:
                if du.is_active(rs):
                    self._scale_rs(st, rs, 0, now, w)
            return
        if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") != "RollingUpdate":
            return
        active = [rs for rs in [*old, *([new] if new is not None else [])] if du.is_active(rs)]
        total = int((st.obj.get("status") or {}).get("replicas") or 0)
        sizes, direction = du.proportional_sizes(spec, active, total)
        for rs in active:
            self._scale_rs(st, rs, sizes[rs["metadata"]["name"]], now, w, direction)

    # -- writes --------------------------------------------------------------------------
    def _scale_rs(self, st: _Deployment, rs: Obj, size: int, now: float, w: list[Request], op: str = "") -> bool:
        """Set ``rs``'s size and replica annotations; True when the size changed."""
        spec = st.spec
        want = du.spec_replicas(spec)
        annotations = dict((rs.get("metadata") or {}).get("annotations") or {})
        wanted = {du.DESIRED: str(want), du.MAX_REPLICAS: str(want + du.max_surge(spec))}
        before = du.replicas(rs)
        if before == size and all(annotations.get(k) == v for k, v in wanted.items()):
            return False
        copy = {**rs, "metadata": {**rs["metadata"], "annotations": {**annotations, **wanted}}}
        copy["spec"] = {**rs.get("spec", {}), "replicas": size}
        self._send_rs(st, rs, copy, now, w)
        if before != size:
            op = op or ("up" if size > before else "down")
            message = f"Scaled {op} replica set {name_of(rs)} to {size} from {before}"
            self._event(st, SCALING, message, now)
        return before != size

    def _send_rs(self, st: _Deployment, rs: Obj, copy: Obj, now: float, w: list[Request]) -> None:
        """Send ``copy`` and read it locally from now on (the watch's objects are shared
        with other controllers: replaced, never changed in place)."""
        w.append(Update(copy))
        st.inflight[name_of(rs)] = (rs.get("metadata") or {}).get("resourceVersion", "")
        st.since = now
        self._shadow[_key(rs)] = rs  # what the apiserver still holds, if it refuses
        self._rs[_key(rs)] = copy

    def _create(self, st: _Deployment, old: list[Obj], size: int, base: Obj, now: float, w: list[Request]) -> Obj:
        spec = st.spec
        template = spec.get("template") or {}
        collisions = int((st.obj.get("status") or {}).get("collisionCount") or 0)
        digest = du.template_hash(template, collisions)
        name = f"{name_of(st.obj)}-{digest}"
        labels = {**((template.get("metadata") or {}).get("labels") or {}), du.HASH_LABEL: digest}
        selector = dict(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), du.HASH_LABEL: digest}
        want = du.spec_replicas(spec)
        annotations = {
            k: v for k, v in ((st.obj.get("metadata") or {}).get("annotations") or {}).items() if k not in du.NOT_COPIED
        }
        annotations.update(
            {
                du.REVISION: str(max((du.revision(rs) for rs in old), default=0) + 1),
                du.DESIRED: str(want),
                du.MAX_REPLICAS: str(want + du.max_surge(spec)),
            }
        )
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": namespace_of(st.obj),
                "labels": labels,
                "annotations": annotations,
                "ownerReferences": [owner_reference(st.obj, "Deployment")],
            },
            "spec": {
                "replicas": size,
                "minReadySeconds": spec.get("minReadySeconds") or 0,
                "selector": selector,
                "template": {**template, "metadata": {**(template.get("metadata") or {}), "labels": labels}},
            },
        }
        w.append(Create(rs))
        st.awaiting.add(name)
        st.since = now
        if size > 0:
            self._event(st, SCALING, f"Scaled up replica set {name} to {size}", now)
        if ds.has_deadline(spec):
            ds.set_condition(base, ds.PROGRESSING, "True", ds.NEW_RS_CREATED, f'Created new replica set "{name}"', now)
        self._set_revision(st, annotations[du.REVISION], w, now)
        return rs

    def _sync_revision(
        self, st: _Deployment, new: Obj, old: list[Obj], base: Obj, now: float, w: list[Request]
    ) -> bool:
        """The existing new ReplicaSet's revision (max old + 1, the previous one kept in
        revision-history) and annotations; True when that needs a write first."""
        meta = new.get("metadata") or {}
        annotations = dict(meta.get("annotations") or {})
        wanted = {
            k: v for k, v in ((st.obj.get("metadata") or {}).get("annotations") or {}).items() if k not in du.NOT_COPIED
        }
        top = max((du.revision(rs) for rs in old), default=0) + 1
        current = du.revision(new)
        if current < top:
            wanted[du.REVISION] = str(top)
            if current:
                history = [h for h in (annotations.get(du.REVISION_HISTORY) or "").split(",") if h]
                wanted[du.REVISION_HISTORY] = ",".join([*history, str(current)])
        min_ready = st.spec.get("minReadySeconds") or 0
        stale = any(annotations.get(k) != v for k, v in wanted.items())
        if ds.has_deadline(st.spec) and ds.condition(base, ds.PROGRESSING) is None:
            ds.set_condition(
                base, ds.PROGRESSING, "True", ds.FOUND_NEW_RS, f'Found new replica set "{name_of(new)}"', now
            )
        self._set_revision(st, str(wanted.get(du.REVISION, annotations.get(du.REVISION, ""))), w, now)
        if not stale and (new.get("spec") or {}).get("minReadySeconds", 0) == min_ready:
            return False
        copy = {**new, "metadata": {**meta, "annotations": {**annotations, **wanted}}}
        copy["spec"] = {**new.get("spec", {}), "minReadySeconds": min_ready}
        self._send_rs(st, new, copy, now, w)
        return True

    def _set_revision(self, st: _Deployment, rev: str, w: list[Request], now: float) -> None:
        annotations = (st.obj.get("metadata") or {}).get("annotations") or {}
        if not rev or annotations.get(du.REVISION) == rev:
            return
        obj = {**st.obj, "metadata": {**st.obj["metadata"], "annotations": {**annotations, du.REVISION: rev}}}
        w.append(Update({k: v for k, v in obj.items() if k != "status"}))
        st.inflight[""] = (st.obj.get("metadata") or {}).get("resourceVersion", "")
        st.since = now
        st.obj = obj

    def _cleanup(self, st: _Deployment, old: list[Obj], now: float, w: list[Request]) -> None:
        """Delete the lowest revisions beyond revisionHistoryLimit that hold nothing."""
        limit = st.spec.get("revisionHistoryLimit")
        if limit is None or len(old) <= limit:
            return
        surplus = len(old) - limit
        for rs in sorted(old, key=lambda r: (du.revision(r), du.created_key(r)))[:surplus]:
            status = rs.get("status") or {}
            generation = (rs.get("metadata") or {}).get("generation") or 0
            if du.replicas(rs) or status.get("replicas") or (status.get("observedGeneration") or 0) < generation:
                continue
            w.append(Delete("ReplicaSet", namespace_of(rs), name_of(rs), uid_of(rs), None, "Background"))

    def _write_status(
        self,
        st: _Deployment,
        owned: list[Obj],
        new: Obj | None,
        base: Obj,
        now: float,
        w: list[Request],
        rollout: bool,
    ) -> None:
        spec = st.spec
        status = ds.counters(spec, st.generation, owned, new, base, now)
        if rollout:
            ds.rollout_conditions(spec, st.generation, new, st.obj.get("status") or {}, status, now)
        st.wake = ds.deadline_wakeup(spec, status) if rollout else None
        if st.wake is not None and st.wake <= now:
            st.wake = None
        if status == (st.obj.get("status") or {}) and not st.restatus:
            return
        st.obj, st.restatus = {**st.obj, "status": status}, False
        w.append(UpdateStatus("Deployment", namespace_of(st.obj), name_of(st.obj), st.uid, status))

    def _event(self, st: _Deployment, reason: str, message: str, now: float, type: str = "Normal") -> None:
        self._events.append(make_event(st.obj, reason, message, now, type=type, component=self.COMPONENT))


def _selects(deployment: Obj, rs: Obj) -> bool:
    return selector_of(deployment).matches((rs.get("metadata") or {}).get("labels") or {})


def _earliest(*times: float | None) -> float | None:
    return min((t for t in times if t is not None), default=None)
