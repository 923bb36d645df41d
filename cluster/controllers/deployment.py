"""The Deployment controller: ReplicaSets per pod template, rolled as the strategy says.

Owns what upstream's ``pkg/controller/deployment`` decides:
which owned ReplicaSet is new (``deploymentutil.find_new``), creating it
(``<deployment>-<pod-template-hash>``, revision annotations), the RollingUpdate and
Recreate steps, proportional scaling of a rollout in flight, history cleanup beyond
``revisionHistoryLimit``, and the status with its conditions (``deploymentstatus``).
Rollback is client side, as with kubectl: the template goes back and the old
ReplicaSet is found as new again, with a new revision.

Who calls it: the controller-manager (``manager.ControllerManager``) feeds it Deployment,
ReplicaSet and Pod events and sends what ``sync(now)`` returns: ReplicaSets created
(``creates``), scaled or re-annotated (``updates``, each carrying the resourceVersion it
was read at), the Deployment's revision annotation (``updates``), surplus ReplicaSets
deleted (``deletes``), ``deployment_status`` and ``ScalingReplicaSet`` Events.

A Deployment, as a state table (one owner, no locks: a write in flight holds it):

| state    | how it is left                                   | sync does                          |
|----------|--------------------------------------------------|------------------------------------|
| idle     | an event about it, its ReplicaSets or (Recreate) | the upstream sync, in order:       |
|          | their pods; the progress deadline's timer        | paused / scaling / strategy        |
| writing  | the watch shows each ReplicaSet or Deployment    | nothing (its next sync waits)      |
|          | write landed (a new resourceVersion, or ADDED),  |                                    |
|          | or the write is refused (then: idle, dirty)      |                                    |
| deleting | DELETED                                          | status only; the garbage collector |
|          |                                                  | removes its ReplicaSets            |

Upstream runs each step's writes one after another inside one sync; here a sync asks
for the writes of one step and the next sync (after the watch shows them) goes on, so
a step never acts on what it has not seen. Adoption of orphan ReplicaSets is not
modelled (kubemu's Deployments own the ReplicaSets they create).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api.events import make_event
from ..api.objects import is_terminal, is_terminating, name_of, namespace_of, uid_of
from . import deploymentstatus as ds
from . import deploymentutil as du
from .ownedpods import controller_ref, owner_reference
from .writes import Writes

Key = tuple[str, str]
SCALING = "ScalingReplicaSet"
WRITE_TIMEOUT = 300.0  # a write whose echo never comes stops holding its Deployment


@dataclass
class _Deployment:
    obj: dict
    inflight: dict[str, str] = field(default_factory=dict)  # RS name ("" = itself) -> rv sent from
    awaiting: set[str] = field(default_factory=set)  # ReplicaSets created, not yet seen
    since: float = 0.0  # when the writes in flight were sent
    wake: float | None = None

    @property
    def uid(self) -> str:
        return uid_of(self.obj)

    @property
    def spec(self) -> dict:
        return self.obj.get("spec") or {}

    @property
    def generation(self) -> int:
        return int((self.obj.get("metadata") or {}).get("generation") or 0)


def _key(obj: dict) -> Key:
    return namespace_of(obj), name_of(obj)


class DeploymentController:
    """Deployments and their ReplicaSets; ``sync`` returns the writes that roll them."""

    NAME = "deployment"
    COMPONENT = "deployment-controller"
    kinds = ("Deployment", "ReplicaSet", "Pod")

    def __init__(self) -> None:
        self._deps: dict[Key, _Deployment] = {}
        self._by_uid: dict[str, Key] = {}
        self._rs: dict[Key, dict] = {}
        self._rs_owner: dict[Key, str] = {}  # ReplicaSet -> its Deployment's uid
        self._owned: dict[str, set[Key]] = {}  # Deployment uid -> its ReplicaSets
        self._rs_uid: dict[str, Key] = {}
        self._shadow: dict[Key, dict] = {}  # ReplicaSets updated, as last seen, until the echo
        self._pods: dict[str, set[Key]] = {}  # ReplicaSet uid -> its pods not yet terminal
        self._pod_rs: dict[Key, str] = {}
        self._dirty: set[Key] = set()
        self._out = Writes()

    # -- events --------------------------------------------------------------------------
    def on_event(self, kind: str, etype: str, obj: dict, now: float) -> None:
        if kind == "Deployment":
            self._on_deployment(etype, obj)
        elif kind == "ReplicaSet":
            self._on_replicaset(etype, obj)
        elif kind == "Pod":
            self._on_pod(etype, obj)

    def _on_deployment(self, etype: str, obj: dict) -> None:
        key = _key(obj)
        st = self._deps.get(key)
        if etype == "DELETED" or (st is not None and st.uid != uid_of(obj)):
            if st is not None:
                del self._deps[key]
                self._by_uid.pop(st.uid, None)
            self._dirty.discard(key)
            if etype == "DELETED":
                return
            st = None
        if st is None:
            st = self._deps[key] = _Deployment(obj)
            self._by_uid[st.uid] = key
        else:
            sent = st.inflight.get("")
            if sent is not None and sent != (obj.get("metadata") or {}).get("resourceVersion"):
                del st.inflight[""]
            st.obj = obj
        self._dirty.add(key)

    def _on_replicaset(self, etype: str, rs: dict) -> None:
        key = _key(rs)
        self._shadow.pop(key, None)
        old_owner = self._rs_owner.pop(key, None)
        if old_owner is not None:
            self._owned.get(old_owner, set()).discard(key)
            self._touch(old_owner)
        if etype == "DELETED":
            self._rs.pop(key, None)
            self._rs_uid.pop(uid_of(rs), None)
            return
        self._rs[key] = rs
        self._rs_uid[uid_of(rs)] = key
        ref = controller_ref(rs)
        if ref is None or ref.get("kind") != "Deployment":
            return
        owner = ref.get("uid", "")
        self._rs_owner[key] = owner
        self._owned.setdefault(owner, set()).add(key)
        st = self._deps.get(self._by_uid.get(owner, ("", "")))
        if st is not None:
            st.awaiting.discard(key[1])
            sent = st.inflight.get(key[1])
            if sent is not None and sent != (rs.get("metadata") or {}).get("resourceVersion"):
                del st.inflight[key[1]]
        self._touch(owner)

    def _on_pod(self, etype: str, pod: dict) -> None:
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
        self._dirty.add(key)

    # -- failures ------------------------------------------------------------------------
    def on_object_create_failed(self, obj: dict, error, now: float) -> None:
        st = self._owner_of(obj)
        if st is not None and name_of(obj) in st.awaiting:
            st.awaiting.discard(name_of(obj))
            if getattr(error, "reason", "") != "AlreadyExists":
                self._event(st, "FailedCreate", f"Error creating replica set: {error}", now, "Warning")
            self._dirty.add(_key(st.obj))

    def on_object_update_failed(self, obj: dict, error, now: float) -> None:
        st = self._deps.get(_key(obj)) if obj.get("kind") == "Deployment" else self._owner_of(obj)
        if st is None:
            return
        st.inflight.pop("" if obj.get("kind") == "Deployment" else name_of(obj), None)
        shadow = self._shadow.pop(_key(obj), None) if obj.get("kind") == "ReplicaSet" else None
        if shadow is not None:
            self._rs[_key(obj)] = shadow
        self._dirty.add(_key(st.obj))

    def on_status_failed(self, ns: str, name: str, uid: str, error, now: float) -> None:
        st = self._deps.get((ns, name))
        if st is not None and st.uid == uid:
            st.obj = {**st.obj, "status": {}}  # forces the next sync to write it again
            self._dirty.add((ns, name))

    def _owner_of(self, obj: dict) -> _Deployment | None:
        ref = controller_ref(obj)
        if ref is None:
            return None
        return self._deps.get(self._by_uid.get(ref.get("uid", ""), ("", "")))

    # -- sync ----------------------------------------------------------------------------
    def sync(self, now: float) -> Writes:
        w, self._out = self._out, Writes()
        for key, st in self._deps.items():
            if st.wake is not None and st.wake <= now:
                st.wake = None
                self._dirty.add(key)
        todo, self._dirty = sorted(self._dirty), set()
        for key in todo:
            found = self._deps.get(key)
            if found is None:
                continue
            st = found
            if (st.inflight or st.awaiting) and now - st.since < WRITE_TIMEOUT:
                continue  # its writes' echoes make it dirty again
            st.inflight, st.awaiting = {}, set()
            self._sync_one(st, now, w)
        w.events.extend(self._out.events)
        self._out = Writes()
        return w

    def next_wakeup(self) -> float | None:
        times = [st.wake for st in self._deps.values() if st.wake is not None]
        times += [st.since + WRITE_TIMEOUT for st in self._deps.values() if st.inflight or st.awaiting]
        return min(times, default=None)

    def _replicasets(self, st: _Deployment) -> list[dict]:
        keys = sorted(self._owned.get(st.uid, ()))
        return [self._rs[k] for k in keys if k in self._rs and not is_terminating(self._rs[k])]

    def _sync_one(self, st: _Deployment, now: float, w: Writes) -> None:
        spec = st.spec
        owned = self._replicasets(st)
        base = {**(st.obj.get("status") or {})}
        base["conditions"] = [dict(c) for c in base.get("conditions") or ()]
        if is_terminating(st.obj):
            self._write_status(st, owned, du.find_new(spec.get("template") or {}, owned), base, now, w, False)
            return
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

    def _busy(self, st: _Deployment) -> bool:
        return bool(st.inflight or st.awaiting)

    # -- the strategies ------------------------------------------------------------------
    def _rolling(self, st: _Deployment, new: dict | None, old: list[dict], base: dict, now: float, w: Writes):
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

    def _recreate(self, st: _Deployment, new: dict | None, old: list[dict], base: dict, now: float, w: Writes):
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

    def _old_pods_running(self, new: dict | None, old: list[dict]) -> bool:
        if sum(du.status_replicas(rs) for rs in old) > 0:
            return True
        return any(self._pods.get(uid_of(rs)) for rs in old if rs is not new)

    def _is_scaling_event(self, st: _Deployment, new: dict | None, old: list[dict]) -> bool:
        want = str(du.spec_replicas(st.spec))
        for rs in [*old, *([new] if new is not None else [])]:
            desired = ((rs.get("metadata") or {}).get("annotations") or {}).get(du.DESIRED)
            if du.is_active(rs) and desired is not None and desired != want:
                return True
        return False

    def _scale(self, st: _Deployment, new: dict | None, old: list[dict], now: float, w: Writes) -> None:
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
    def _scale_rs(self, st: _Deployment, rs: dict, size: int, now: float, w: Writes, op: str = "") -> bool:
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

    def _send_rs(self, st: _Deployment, rs: dict, copy: dict, now: float, w: Writes) -> None:
        """Send ``copy`` and read it locally from now on (the watch's objects are shared
        with other controllers: replaced, never changed in place)."""
        w.updates.append(copy)
        st.inflight[name_of(rs)] = (rs.get("metadata") or {}).get("resourceVersion", "")
        st.since = now
        self._shadow[_key(rs)] = rs  # what the apiserver still holds, if it refuses
        self._rs[_key(rs)] = copy

    def _create(self, st: _Deployment, old: list[dict], size: int, base: dict, now: float, w: Writes) -> dict:
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
        w.creates.append(rs)
        st.awaiting.add(name)
        st.since = now
        if size > 0:
            self._event(st, SCALING, f"Scaled up replica set {name} to {size}", now)
        if ds.has_deadline(spec):
            ds.set_condition(base, ds.PROGRESSING, "True", ds.NEW_RS_CREATED, f'Created new replica set "{name}"', now)
        self._set_revision(st, annotations[du.REVISION], w, now)
        return rs

    def _sync_revision(self, st: _Deployment, new: dict, old: list[dict], base: dict, now: float, w: Writes) -> bool:
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

    def _set_revision(self, st: _Deployment, rev: str, w: Writes, now: float) -> None:
        annotations = (st.obj.get("metadata") or {}).get("annotations") or {}
        if not rev or annotations.get(du.REVISION) == rev:
            return
        obj = {**st.obj, "metadata": {**st.obj["metadata"], "annotations": {**annotations, du.REVISION: rev}}}
        w.updates.append({k: v for k, v in obj.items() if k != "status"})
        st.inflight[""] = (st.obj.get("metadata") or {}).get("resourceVersion", "")
        st.since = now
        st.obj = obj

    def _cleanup(self, st: _Deployment, old: list[dict], now: float, w: Writes) -> None:
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
            w.deletes.append(("ReplicaSet", namespace_of(rs), name_of(rs), uid_of(rs), "Background"))

    def _write_status(
        self, st: _Deployment, owned: list[dict], new: dict | None, base: dict, now: float, w: Writes, rollout: bool
    ) -> None:
        spec = st.spec
        status = ds.counters(spec, st.generation, owned, new, base, now)
        if rollout:
            ds.rollout_conditions(spec, st.generation, new, st.obj.get("status") or {}, status, now)
        st.wake = ds.deadline_wakeup(spec, status) if rollout else None
        if st.wake is not None and st.wake <= now:
            st.wake = None
        if status == (st.obj.get("status") or {}):
            return
        st.obj = {**st.obj, "status": status}
        w.deployment_status.append((namespace_of(st.obj), name_of(st.obj), st.uid, status))

    def _event(self, st: _Deployment, reason: str, message: str, now: float, type: str = "Normal") -> None:
        self._out.events.append(make_event(st.obj, reason, message, now, type=type, component=self.COMPONENT))
