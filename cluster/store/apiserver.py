"""The apiserver's logic: every write the emulated control plane makes goes through here.

Owns validation-then-admission on create, optimistic concurrency on update, the pod
status, binding and eviction subresources (eviction charges PodDisruptionBudgets with the
rules in ``cluster/controllers/disruption.py``), Lease renewals, and graceful deletion
exactly as reference §8 describes. It holds the ``Store``; the apiserver actor is a thin shell that
decodes batches, calls these methods with the emulated ``now`` and wakes watchers.

Writes come in batches (DESIGN §2.4): each batch method returns one result per item,
``None`` for success or an ``(code, reason, message)`` tuple, so one bad item never fails
its neighbours.

Graceful deletion of a pod (reference §8.1-8.3), as a state table:

| pod state                         | DELETE with grace g                | result                   |
|-----------------------------------|------------------------------------|--------------------------|
| unbound, or Succeeded/Failed      | any                                | removed now              |
| bound, not terminating            | g (default spec grace, 30) == 0    | removed now              |
| bound, not terminating            | g > 0                              | deletionTimestamp=now+g  |
| terminating with grace c > 0      | g < c                              | deadline shortened to g  |
| terminating with grace c > 0      | g >= c or no g                     | unchanged (pending)      |
| terminating, then g == 0          | (the kubelet's confirm)            | removed now              |
"""

from __future__ import annotations

from ..api import codec
from ..api.objects import KINDS, NODE_LEASE_NAMESPACE, condition, is_terminal, is_terminating, phase_of, set_condition
from ..api.pdb import (
    ALWAYS_ALLOW,
    MAX_DISRUPTED_PODS,
    generation_of,
    pdbs_for_pod,
    pod_is_healthy,
    set_disruption_condition,
)
from ..api.validation import SYSTEM_PRIORITY_CLASSES, ValidationError, validate
from ..clock import from_rfc3339, rfc3339
from .admission import BUILTIN_NAMESPACES, Admission
from .errors import AlreadyExists, APIError, Conflict, Forbidden, Invalid, NotFound, TooManyRequests
from .store import DEFAULT_WINDOW, Store

Result = tuple[int, str, str] | None
LEASE_DURATION_SECONDS = 40


class APIServer:
    def __init__(self, seed: int = 0, window: int = DEFAULT_WINDOW, store: Store | None = None):
        self.store = store or Store(window=window)
        self.admission = Admission(self.store, seed)
        if store is None:
            self._bootstrap()

    def _bootstrap(self) -> None:
        for ns in BUILTIN_NAMESPACES:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, 0.0)
        for name, value in SYSTEM_PRIORITY_CLASSES.items():
            pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
            pc.update(value=value, globalDefault=False, description=_SYSTEM_DESCRIPTIONS[name])
            self.create(pc, 0.0)

    # -- create / update ------------------------------------------------------------------
    def create(self, obj: dict, now: float, owned: bool = False) -> dict:
        """Validate, admit and store one object; returns the stored object. ``owned``: the
        caller hands ``obj`` over (it was just deserialized from a remote call), so it is
        stored as is instead of copied."""
        try:
            validate(obj)
        except ValidationError as e:
            raise Invalid(str(e)) from None
        if not owned:
            obj = codec.clone(obj)
        kind = obj["kind"]
        self.admission.admit_create(kind, obj, now)
        m = obj["metadata"]
        if "name" not in m:
            m["name"] = m.pop("generateName", "obj-") + m["uid"][:5]
        if self.store.get(kind, m.get("namespace", ""), m["name"]) is not None:
            raise AlreadyExists(f'{_resource(kind)} "{m["name"]}" already exists')
        self.store.put(kind, obj, "ADDED")
        return obj

    def create_many(self, objs: list[dict], now: float, owned: bool = False) -> list[Result]:
        return [self._try(self.create, o, now, owned) for o in objs]

    def update(self, obj: dict, now: float) -> dict:
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
            new["status"] = current.get("status", {})
            if (current["spec"].get("nodeName") or "") != (new["spec"].get("nodeName") or ""):
                raise Invalid("spec.nodeName: Forbidden: may not be changed by an update; use the binding subresource")
        if _finalized(new):
            self.store.remove(kind, new["metadata"].get("namespace", ""), new["metadata"]["name"])
            return new
        self.store.put(kind, new, "MODIFIED")
        return new

    # -- subresources ---------------------------------------------------------------------
    def update_status(self, kind: str, items: list[tuple[str, str, str, dict]], now: float) -> list[Result]:
        """Replace ``status`` of each (namespace, name, uid, status); a uid mismatch is a Conflict."""
        return [self._try(self._set_status, kind, *item) for item in items]

    def _set_status(self, kind: str, ns: str, name: str, uid: str, status: dict) -> None:
        obj = self._get(kind, ns, name)
        _check_uid(obj, uid)
        obj["status"] = status
        self.store.put(kind, obj, "MODIFIED")

    def patch_pod_status(self, items: list[tuple[str, str, str, list[dict], str | None]], now: float) -> list[Result]:
        """The scheduler's status patches, one write per pod: merge each condition of
        (namespace, name, uid, conditions, nominated) and set ``status.nominatedNodeName``
        to ``nominated`` ("" clears it, None leaves it). Upstream sends a failed pod's
        PodScheduled=False and its nomination in one patch; a victim gets its
        DisruptionTarget condition; lower-priority pods get their nomination cleared.
        A patch that changes nothing writes nothing."""
        return [self._try(self._patch_pod_status, *item) for item in items]

    def _patch_pod_status(self, ns: str, name: str, uid: str, conditions: list[dict], nominated: str | None) -> None:
        pod = self._get("Pod", ns, name)
        _check_uid(pod, uid)
        status = pod.setdefault("status", {})
        changed = bool(conditions)
        for cond in conditions:
            set_condition(status, cond)
        if nominated is not None and (status.get("nominatedNodeName") or "") != nominated:
            changed = True
            if nominated:
                status["nominatedNodeName"] = nominated
            else:
                status.pop("nominatedNodeName", None)
        if changed:
            self.store.put("Pod", pod, "MODIFIED")

    def patch_node_taints(self, items: list[tuple[str, list[dict], list[dict]]], now: float) -> list[Result]:
        """The node controllers' taint patches: for each (node name, taints to add or update,
        taints to remove), matched by key and effect as upstream's taint helpers do. A patch
        that changes nothing writes nothing."""
        return [self._try(self._patch_node_taints, *item) for item in items]

    def _patch_node_taints(self, name: str, add: list[dict], remove: list[dict]) -> None:
        node = self._get("Node", "", name)
        spec = node.setdefault("spec", {})
        current = list(spec.get("taints") or ())
        gone = {(t.get("key"), t.get("effect")) for t in [*remove, *add]}
        taints = [t for t in current if (t.get("key"), t.get("effect")) not in gone] + [dict(t) for t in add]
        if taints != current:
            spec["taints"] = taints
            self.store.put("Node", node, "MODIFIED")

    def patch_node_conditions(self, items: list[tuple[str, list[dict]]], now: float) -> list[Result]:
        """The node lifecycle controller's condition patches: for each (node name, conditions),
        each condition replaces the node's condition of the same type, leaving the rest of
        the status alone. Guarded by the heartbeat: a condition may only replace one whose
        ``lastHeartbeatTime`` equals its own (or one that is absent). The controller keeps
        the heartbeat it saw when it marks a condition Unknown, so if the kubelet has posted
        since, the kubelet's newer status stands and the item is a Conflict (nothing of it is
        written). A patch that changes nothing writes nothing."""
        return [self._try(self._patch_node_conditions, item) for item in items]

    def _patch_node_conditions(self, item) -> None:
        name, conditions = _condition_patch(item)
        node = self._get("Node", "", name)
        status = node.setdefault("status", {})
        for cond in conditions:
            current = condition(node, cond["type"])
            if current is not None and current.get("lastHeartbeatTime") != cond.get("lastHeartbeatTime"):
                raise Conflict(
                    f'Operation cannot be fulfilled on nodes "{name}": condition {cond["type"]} has a newer '
                    f"heartbeat ({current.get('lastHeartbeatTime')}) than the patch was based on "
                    f"({cond.get('lastHeartbeatTime')})"
                )
        changed = False
        for cond in conditions:
            if condition(node, cond["type"]) != cond:
                set_condition(status, dict(cond))
                changed = True
        if changed:
            self.store.put("Node", node, "MODIFIED")

    def bind(self, items: list[tuple[str, str, str, str]], now: float) -> list[Result]:
        """The binding subresource: set spec.nodeName once; a second bind is a Conflict."""
        return [self._try(self._bind_one, *item, now) for item in items]

    def _bind_one(self, ns: str, name: str, uid: str, node: str, now: float) -> None:
        pod = self._get("Pod", ns, name)
        _check_uid(pod, uid)
        if pod["metadata"].get("deletionTimestamp"):
            raise Conflict(f"pod {name} is being deleted, cannot be assigned to a host")
        current = pod["spec"].get("nodeName")
        if current:
            raise Conflict(f'pod {name} is already assigned to node "{current}"')
        pod["spec"]["nodeName"] = node
        status = pod.setdefault("status", {})
        set_condition(status, {"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339(now)})
        self.store.put("Pod", pod, "MODIFIED")

    def renew_leases(self, items: list[tuple[str, float]], now: float) -> None:
        """Each (node name, renew time): create or renew the node's Lease."""
        for node, renew in items:
            lease = self.store.get("Lease", NODE_LEASE_NAMESPACE, node)
            micro = rfc3339(renew)[:-1] + f".{int((renew % 1) * 1e6):06d}Z"
            if lease is None:
                lease = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": node, "namespace": NODE_LEASE_NAMESPACE},
                    "spec": {"holderIdentity": node, "leaseDurationSeconds": LEASE_DURATION_SECONDS},
                }
                self.admission.admit_create("Lease", lease, now)
                lease["spec"]["renewTime"] = micro
                self.store.put("Lease", lease, "ADDED")
            else:
                lease["spec"]["renewTime"] = micro
                self.store.put("Lease", lease, "MODIFIED")

    # -- delete ---------------------------------------------------------------------------
    def delete_many(self, kind: str, items: list[tuple[str, str, str | None, int | None]], now: float) -> list[Result]:
        return [self._try(self.delete, kind, *item, now) for item in items]

    def delete(self, kind: str, ns: str, name: str, uid: str | None, grace: int | None, now: float) -> bool:
        """Delete per reference §8; True when the object is gone, False when it is terminating."""
        obj = self._get(kind, ns, name)
        if uid:
            _check_uid(obj, uid, deleting=True)
        if kind == "PriorityClass" and name in SYSTEM_PRIORITY_CLASSES:
            raise Forbidden("this is a system priority class and cannot be deleted")
        if kind != "Pod":
            self.store.remove(kind, ns, name)
            return True
        if grace is not None and grace < 0:
            grace = 1
        m = obj["metadata"]
        if m.get("deletionTimestamp"):
            current = m.get("deletionGracePeriodSeconds") or 0
            if current == 0 or grace == 0:
                return self._remove_or_finalize(obj, now)
            if grace is None or grace >= current:
                return False  # pending: only a shorter grace changes anything
            deadline = from_rfc3339(m["deletionTimestamp"]) - current + grace
            m["deletionTimestamp"] = rfc3339(max(deadline, now))
            m["deletionGracePeriodSeconds"] = grace
            self.store.put(kind, obj, "MODIFIED")
            return False
        period = grace if grace is not None else obj["spec"].get("terminationGracePeriodSeconds", 0)
        if not obj["spec"].get("nodeName") or obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            period = 0
        if period == 0:
            return self._remove_or_finalize(obj, now)
        m["deletionTimestamp"] = rfc3339(now + period)
        m["deletionGracePeriodSeconds"] = period
        self.store.put(kind, obj, "MODIFIED")
        return False

    def _remove_or_finalize(self, obj: dict, now: float) -> bool:
        m = obj["metadata"]
        if m.get("finalizers"):
            # Finalizers pending: mark as deleting with grace 0 and keep the object.
            if not m.get("deletionTimestamp"):
                m["deletionTimestamp"] = rfc3339(now)
            m["deletionGracePeriodSeconds"] = 0
            self.store.put(obj["kind"], obj, "MODIFIED")
            return False
        self.store.remove(obj["kind"], m.get("namespace", ""), m["name"])
        return True

    # -- eviction (the pods/eviction subresource) -----------------------------------------
    def evict(self, items: list[tuple[str, str, str | None, int | None]], now: float) -> list[Result]:
        """Each (namespace, name, uid, grace): a graceful delete its PodDisruptionBudget may refuse.

        As upstream's eviction handler: a Pending, Succeeded, Failed or already terminating
        pod is deleted without looking at PDBs; a pod covered by more than one PDB is refused
        (500); an unhealthy pod is let go without charging its PDB when the PDB's
        unhealthyPodEvictionPolicy is AlwaysAllow, or when the budget is currently met
        (currentHealthy >= desiredHealthy > 0); otherwise the PDB must allow a disruption
        (else 429), which is taken from status.disruptionsAllowed and recorded in
        status.disruptedPods before the pod is deleted. The pod gets the DisruptionTarget
        condition (reason EvictionByEvictionAPI) in the same write as its deletion.
        """
        return [self._try(self._evict_one, *item, now) for item in items]

    def _evict_one(self, ns: str, name: str, uid: str | None, grace: int | None, now: float) -> None:
        pod = self._get("Pod", ns, name)
        if uid:
            _check_uid(pod, uid, deleting=True)
        # A pod that is not running, or already going, disrupts nothing more by leaving.
        if not (is_terminal(pod) or phase_of(pod) == "Pending" or is_terminating(pod)):
            self._charge_budget(pod, now)
        changed = _mark_disruption_target(pod, now)
        rv = self.store.rv
        gone = self.delete("Pod", ns, name, None, grace, now)
        if changed and not gone and self.store.rv == rv:
            # The delete changed nothing (a longer grace on a terminating pod): store the condition.
            self.store.put("Pod", pod, "MODIFIED")

    def _charge_budget(self, pod: dict, now: float) -> None:
        """Take one disruption from the pod's PDB, or raise why the PDB forbids it."""
        pdbs = pdbs_for_pod(pod, self.store.objects("PodDisruptionBudget"))
        if len(pdbs) > 1:
            err = APIError(_MULTIPLE_PDBS)
            err.retryable = False  # only removing a PDB can change the answer
            raise err
        if not pdbs:
            return
        pdb = pdbs[0]
        status = pdb.get("status") or {}
        if not pod_is_healthy(pod):
            if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW:
                return
            desired = status.get("desiredHealthy") or 0
            if desired > 0 and (status.get("currentHealthy") or 0) >= desired:
                return  # the application is not disrupted now; an unready pod does not count
        _check_budget(pdb, status)
        new = {
            **status,
            "disruptionsAllowed": status["disruptionsAllowed"] - 1,
            "disruptedPods": {**(status.get("disruptedPods") or {}), pod["metadata"]["name"]: rfc3339(now)},
            "conditions": [dict(c) for c in status.get("conditions") or ()],
        }
        if new["disruptionsAllowed"] == 0:
            set_disruption_condition(new, now)
        pdb["status"] = new
        self.store.put("PodDisruptionBudget", pdb, "MODIFIED")

    # -- reads ----------------------------------------------------------------------------
    def get(self, kind: str, ns: str, name: str) -> dict:
        return self._get(kind, ns, name)

    def _get(self, kind: str, ns: str, name: str) -> dict:
        if kind not in KINDS:
            raise NotFound(f'the server doesn\'t have a resource type "{kind}"')
        obj = self.store.get(kind, ns if KINDS[kind][1] else "", name)
        if obj is None:
            raise NotFound(f'{_resource(kind)} "{name}" not found')
        return obj

    @staticmethod
    def _try(fn, *args) -> Result:
        try:
            fn(*args)
            return None
        except APIError as e:
            return e.as_tuple()


def _check_uid(obj: dict, uid: str, deleting: bool = False) -> None:
    if uid and obj["metadata"].get("uid") != uid:
        if deleting:
            raise Conflict(
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {obj['metadata'].get('uid')}"
            )
        raise Conflict(f'the object "{obj["metadata"]["name"]}" has been replaced (uid {uid} is gone)')


_PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
_MULTIPLE_PDBS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _check_budget(pdb: dict, status: dict) -> None:
    """Raise unless the PDB's status allows one more disruption (upstream's checks, in order)."""
    name = pdb["metadata"]["name"]
    if (status.get("observedGeneration") or 0) < generation_of(pdb):
        raise TooManyRequests(_PDB_VIOLATION)  # the controller has not caught up with the spec
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed is negative')
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise Forbidden(
            f'poddisruptionbudget.policy "{name}" is forbidden: '
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller"
        )
    if allowed == 0:
        raise TooManyRequests(_PDB_VIOLATION)


def _mark_disruption_target(pod: dict, now: float) -> bool:
    """Set DisruptionTarget=True (EvictionByEvictionAPI) in place; True when it changed."""
    cond = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
    }
    current = condition(pod, "DisruptionTarget")
    if current and all(current.get(k) == v for k, v in cond.items()):
        return False
    keep = current and current.get("status") == "True" and current.get("lastTransitionTime")
    cond["lastTransitionTime"] = current["lastTransitionTime"] if keep else rfc3339(now)
    set_condition(pod.setdefault("status", {}), cond)
    return True


_CONDITION_STATUSES = ("True", "False", "Unknown")


def _condition_patch(item) -> tuple[str, list[dict]]:
    """Check one ``patch_node_conditions`` item's shape; Invalid names what is wrong."""
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise Invalid(f"patch: {item!r} is not a (node name, conditions) pair")
    name, conditions = item
    if not isinstance(name, str) or not name:
        raise Invalid(f"metadata.name: {name!r} is not a node name")
    if not isinstance(conditions, (list, tuple)):
        raise Invalid(f"status.conditions: {conditions!r} is not a list")
    seen = set()
    for i, cond in enumerate(conditions):
        path = f"status.conditions[{i}]"
        if not isinstance(cond, dict):
            raise Invalid(f"{path}: {cond!r} is not a condition")
        if not isinstance(cond.get("type"), str) or not cond["type"]:
            raise Invalid(f"{path}.type: {cond.get('type')!r} is not a condition type")
        if cond.get("status") not in _CONDITION_STATUSES:
            raise Invalid(f"{path}.status: {cond.get('status')!r} is not one of True, False, Unknown")
        if cond["type"] in seen:
            raise Invalid(f"{path}.type: {cond['type']!r} is given twice")
        seen.add(cond["type"])
    return name, list(conditions)


def _finalized(obj: dict) -> bool:
    """Delete during update: the last finalizer left an object already marked with grace 0."""
    m = obj["metadata"]
    return bool(m.get("deletionTimestamp")) and not m.get("finalizers") and not m.get("deletionGracePeriodSeconds")


def _resource(kind: str) -> str:
    plural = {"PriorityClass": "priorityclasses", "PodDisruptionBudget": "poddisruptionbudgets"}
    return plural.get(kind, kind.lower() + "s")


_SYSTEM_DESCRIPTIONS = {
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, "
    "but can be moved to another node if necessary.",
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
}
