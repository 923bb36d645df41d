"""VolumeBinding: a pod's PersistentVolumeClaims decide which nodes it may go to.

Owns upstream's ``volumebinding`` plugin over the scheduler's copies of claims, volumes and
StorageClasses (``VolumeObjects``, fed by the scheduler component's watches through
``VolumeFeed``):

- PreFilter: Skip for a pod naming no claim (the usual pod pays nothing); a missing claim
  (``persistentvolumeclaim "<name>" not found``), one being deleted (``... is being
  deleted``) or an unbound claim of an Immediate class (``pod has unbound immediate
  PersistentVolumeClaims``) rejects every node, UnschedulableAndUnresolvable.
- Filter, per node: a bound claim's volume must exist (``node(s) unavailable due to one or
  more pvc(s) bound to non-existent pv(s)``) and its node affinity must match the node
  (``node(s) had volume node affinity conflict``); an unbound WaitForFirstConsumer claim
  needs an Available volume that fits there (the PV controller's matching rules, with
  the node) or a class that can provision there (a provisioner other than
  ``kubernetes.io/no-provisioner``, ``allowedTopologies`` admitting the node, and no
  other node already selected), else ``node(s) didn't find available persistent volumes
  to bind``.
- Reserve assumes the chosen volumes (another pod's Filter no longer offers them) until
  the watch shows them bound; Unreserve drops them.
- PreBind writes what upstream's binder writes: a statically matched volume's
  ``claimRef`` and ``pv.kubernetes.io/bound-by-controller``, and
  ``volume.kubernetes.io/selected-node`` on a claim to provision, so the PV controller
  binds and provisions for that node. The writes leave through ``VolumeFeed.writes``,
  ahead of the batch's binds. Upstream's PreBind then waits until the claims are bound;
  here the pod is bound at once and the volumes follow (the kubelet does not wait on
  volumes either).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...api import volumes as vol
from ...api.requests import Patch, Request
from ...api.volumespatch import VolumeMerge
from ..cache import PodInfo, Snapshot
from ..framework import (
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterResult,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
)
from ..status import SKIP, SUCCESS, Code, Status

Obj = dict[str, Any]
CLAIM, VOLUME, CLASS = "PersistentVolumeClaim", "PersistentVolume", "StorageClass"
KINDS = (CLAIM, VOLUME, CLASS)
ERR_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_NO_VOLUMES = "node(s) didn't find available persistent volumes to bind"
ERR_AFFINITY = "node(s) had volume node affinity conflict"
ERR_MISSING_PV = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
# The cluster events that can make a rejected pod fit (upstream's EventsToRegister).
CLAIM_CHANGE = "PersistentVolumeClaim/Change"
VOLUME_CHANGE = "PersistentVolume/Change"
CLASS_CHANGE = "StorageClass/Change"
_STATE = "VolumeBinding"


class VolumeObjects:
    """The scheduler's copies of claims, volumes and classes, and the volumes assumed by
    pods reserved but not yet seen bound (upstream's assume cache)."""

    def __init__(self) -> None:
        self.claims: dict[tuple[str, str], Obj] = {}
        self.volumes: dict[str, Obj] = {}
        self.classes: dict[str, Obj] = {}
        self.assumed: dict[str, str] = {}  # volume name -> uid of the pod it is reserved for

    def on_event(self, kind: str, event_type: str, obj: Obj) -> str:
        """Take a watch event; returns the cluster event it is for the queue."""
        m = obj.get("metadata") or {}
        name = m.get("name", "")
        table: dict[Any, Obj]
        key: Any
        if kind == CLAIM:
            table, key, event = self.claims, (m.get("namespace", ""), name), CLAIM_CHANGE
        elif kind == VOLUME:
            table, key, event = self.volumes, name, VOLUME_CHANGE
            if event_type == "DELETED" or vol.claim_ref(obj) is not None:
                self.assumed.pop(name, None)  # bound (or gone) as the watch says now
        else:
            table, key, event = self.classes, name, CLASS_CHANGE
        if event_type == "DELETED":
            table.pop(key, None)
        else:
            table[key] = obj
        return event

    def class_of(self, claim: Obj) -> Obj | None:
        return self.classes.get(vol.claim_class(claim))


class _PodVolumes:
    """What PreFilter found of one pod's claims."""

    __slots__ = ("bound", "delayed", "decisions")

    def __init__(self, bound: list[Obj], delayed: list[Obj]) -> None:
        self.bound = bound  # claims with a volumeName
        self.delayed = delayed  # unbound WaitForFirstConsumer claims
        # node name -> (static bindings [(claim, volume)], claims to provision there)
        self.decisions: dict[str, tuple[list[tuple[Obj, Obj]], list[Obj]]] = {}


class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin):
    NAME = "VolumeBinding"
    EVENTS = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL, CLAIM_CHANGE, VOLUME_CHANGE, CLASS_CHANGE})

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")
        self.objects = VolumeObjects()  # replaced by the feed's shared copies (``VolumeFeed``)
        self.outbox: list[Request] = []

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...] | None:
        # Skipped: the pod has no claims. A pod with claims is judged by volumes, not rows.
        return () if self.NAME in state.skip_filter else None

    # -- PreFilter ---------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        names = vol.pod_claim_names(pod.pod)
        if not names:
            return SKIP, None
        bound, delayed = [], []
        for name in names:
            claim = self.objects.claims.get((pod.namespace, name))
            if claim is None:
                return _unresolvable(f'persistentvolumeclaim "{name}" not found'), None
            if vol.deleting(claim):
                return _unresolvable(f'persistentvolumeclaim "{name}" is being deleted'), None
            if (claim.get("spec") or {}).get("volumeName"):
                bound.append(claim)
            elif vol.binding_mode(self.objects.class_of(claim)) == vol.WAIT_FOR_FIRST_CONSUMER:
                delayed.append(claim)
            else:
                return _unresolvable(ERR_IMMEDIATE), None
        state.write(_STATE, _PodVolumes(bound, delayed))
        return SUCCESS, None

    # -- Filter ------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        pv_state: _PodVolumes | None = state.read(_STATE)
        n = snap.num_nodes
        if pv_state is None:
            return FilterResult(np.ones(n, dtype=bool))
        reasons = {ERR_MISSING_PV: np.zeros(n, dtype=bool), ERR_AFFINITY: np.zeros(n, dtype=bool)}
        reasons[ERR_NO_VOLUMES] = np.zeros(n, dtype=bool)
        for i in range(n):
            ni = snap.node_infos[i]
            why = self._judge(pod, pv_state, ni.labels, ni.name)
            if why is not None:
                reasons[why][i] = True
        failures = [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, r, m) for r, m in reasons.items() if m.any()]
        rejected = np.zeros(n, dtype=bool)
        for _, _, m in failures:
            rejected |= m
        return FilterResult(~rejected, failures)

    def _judge(self, pod: PodInfo, pv_state: _PodVolumes, labels: dict[str, str], node: str) -> str | None:
        for claim in pv_state.bound:
            pv = self.objects.volumes.get((claim.get("spec") or {}).get("volumeName", ""))
            if pv is None:
                return ERR_MISSING_PV
            if not vol.node_affinity_matches(pv, labels, node):
                return ERR_AFFINITY
        static: list[tuple[Obj, Obj]] = []
        provision: list[Obj] = []
        taken = {name for name, uid in self.objects.assumed.items() if uid != pod.uid}
        for claim in pv_state.delayed:
            volumes = self.objects.volumes.values()
            pv = vol.best_match(claim, volumes, node=(labels, node), excluded=taken)
            if pv is not None:
                taken.add((pv.get("metadata") or {}).get("name", ""))
                static.append((claim, pv))
                continue
            selected = vol.annotations_of(claim).get(vol.SELECTED_NODE)
            sc = self.objects.class_of(claim)
            if (selected and selected != node) or not vol.can_provision(sc) or not vol.allowed_on(sc, labels, node):
                return ERR_NO_VOLUMES
            provision.append(claim)
        pv_state.decisions[node] = (static, provision)
        return None

    # -- Reserve / PreBind -------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        pv_state: _PodVolumes | None = state.read(_STATE)
        if pv_state is not None:
            for _, pv in pv_state.decisions.get(node_name, ([], []))[0]:
                self.objects.assumed[(pv.get("metadata") or {}).get("name", "")] = pod.uid
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for name in [n for n, uid in self.objects.assumed.items() if uid == pod.uid]:
            del self.objects.assumed[name]

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        pv_state: _PodVolumes | None = state.read(_STATE)
        if pv_state is None:
            return SUCCESS
        static, provision = pv_state.decisions.get(node_name, ([], []))
        for claim, pv in static:
            self.outbox.append(_bind_volume(pv, claim))
        for claim in provision:
            if vol.annotations_of(claim).get(vol.SELECTED_NODE) != node_name:
                m = claim["metadata"]
                patch = {"metadata": {"annotations": {vol.SELECTED_NODE: node_name}}}
                op = VolumeMerge(m.get("resourceVersion", ""), patch)
                self.outbox.append(Patch(CLAIM, m.get("namespace", ""), m.get("name", ""), m.get("uid", ""), op))
        return SUCCESS


def _unresolvable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


def _bind_volume(pv: Obj, claim: Obj) -> Request:
    """upstream's binder: the volume's claimRef, marked bound by the controller."""
    pm = pv.get("metadata") or {}
    patch = {
        "metadata": {"annotations": {vol.BOUND_BY_CONTROLLER: "yes"}},
        "spec": {"claimRef": vol.reference_to(claim)},
    }
    return Patch(VOLUME, "", pm.get("name", ""), pm.get("uid", ""), VolumeMerge(pm.get("resourceVersion", ""), patch))


class VolumeFeed:
    """What the scheduler component needs for VolumeBinding: the kinds to watch, one shared
    ``VolumeObjects`` for every profile's plugin, the queue moves a change brings, and the
    plugins' PreBind writes."""

    def __init__(self, scheduler: Any) -> None:
        self.objects = VolumeObjects()
        self._scheduler = scheduler
        self._plugins = [
            f.plugins[VolumeBinding.NAME] for f in scheduler.frameworks.values() if VolumeBinding.NAME in f.plugins
        ]
        for p in self._plugins:
            p.objects = self.objects

    def on_event(self, kind: str, event_type: str, obj: Obj, now: float) -> None:
        event = self.objects.on_event(kind, event_type, obj)
        if self._plugins:
            self._scheduler.queue.move_all_to_active(event, now)

    def writes(self) -> list[Request]:
        out: list[Request] = []
        for p in self._plugins:
            out += p.outbox
            p.outbox = []
        return out
