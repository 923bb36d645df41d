"""The PV controller: binds PersistentVolumeClaims to PersistentVolumes and provisions them.

Owns upstream's ``pkg/controller/volume/persistentvolume`` binder as a ``Reconciler``, with
an external provisioner emulated for every StorageClass. A claim's key is ``(namespace,
name)``, a volume's ``("", name)`` (claims always have a namespace), so one queue serves
both. The matching rules are ``cluster/api/volumes.py``'s, which the scheduler shares.

A claim (upstream syncClaim):

| claim                                   | what the reconcile does                                  |
|-----------------------------------------|----------------------------------------------------------|
| unbound, no ``volumeName``, a volume fits | bind both (claimRef, ``volumeName``, annotations, phases) |
| same, none fits, no class, a default one | gives it the default class (RetroactiveDefaultStorageClass) |
| same, WaitForFirstConsumer, no node yet  | ``WaitForFirstConsumer`` event, Pending                   |
| same, a class                            | provision: annotations, ``ExternalProvisioning``; a volume ``pvc-<uid>`` pre-bound to it after the class's delay |
| same, no class                           | ``FailedBinding`` event, Pending                          |
| unbound, ``volumeName`` set              | bind if the volume is free and fits (``VolumeMismatch`` / ``FailedBinding`` otherwise) |
| bound                                    | keep both sides bound; ``Lost`` when the volume is gone or bound to another claim |

A volume (upstream syncVolume): no claimRef (or one without uid) is ``Available``; bound
to the claim that names it, ``Bound``; its claim gone, ``Released`` and reclaimed
(``Delete`` deletes it, ``Recycle`` makes it Available again, ``Retain`` keeps it); the
claim bound elsewhere, unbound again.

Emulated provisioning: ``provision_seconds`` (default 1 s, a class annotation
``kubemu.io/provision-seconds`` overrides) after the claim asked, the volume appears with
the requested size, the claim's access and volume modes, the class's reclaim policy and,
for a claim with a selected node, node affinity to that node's hostname. Events are
recorded once per claim and reason (upstream repeats them every resync). Registered in
``manager.default_controllers`` as ``PersistentVolumeStep``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ..api import volumes as vol
from ..api.codec import clone
from ..api.events import make_event
from ..api.patches import merge_patch
from ..api.requests import Create, Delete, Patch, Request
from ..api.volumespatch import VolumeMerge
from .reconciler import Indexer, Key, Obj, ObjectCache, Outcome, ReconcilerStep, Watches

CLAIM, VOLUME, CLASS = "PersistentVolumeClaim", "PersistentVolume", "StorageClass"
COMPONENT = "persistentvolume-controller"
PROVISION_SECONDS = 1.0
UNBOUND = "unbound-class"  # the index of unbound claims by class


def _claim_keys(event_type: str, claim: Obj) -> Iterable[Key]:
    m = claim.get("metadata") or {}
    yield (m.get("namespace") or "", m.get("name") or "")
    volume = (claim.get("spec") or {}).get("volumeName")
    if volume:
        yield ("", volume)  # a claim gone or changed: its volume looks again


def _volume_keys(event_type: str, pv: Obj) -> Iterable[Key]:
    yield ("", (pv.get("metadata") or {}).get("name") or "")
    ref = vol.claim_ref(pv)
    if ref is not None and ref.get("namespace") and ref.get("name"):
        yield (ref["namespace"], ref["name"])


def _unbound_class(claim: Obj) -> Iterable[str]:
    if vol.BIND_COMPLETED in vol.annotations_of(claim):
        return ()
    return (vol.claim_class(claim),)


def _name(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


class _Out:
    """One reconcile's writes and events."""

    def __init__(self) -> None:
        self.writes: list[Request] = []
        self.events: list[Any] = []
        self.requeue_at: float | None = None


class PersistentVolumeReconciler:
    name: ClassVar[str] = "persistentvolume-binder"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches(CLAIM, _claim_keys),
        Watches(VOLUME, _volume_keys),
        Watches(CLASS, lambda event_type, obj: ()),  # the step names the claims of the class
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ((CLAIM, UNBOUND, _unbound_class),)

    def __init__(self, cache: ObjectCache, provision_seconds: float = PROVISION_SECONDS) -> None:
        self.cache = cache
        self.provision_seconds = provision_seconds
        self._asked: dict[str, float] = {}  # claim uid -> when its provisioning began
        self._said: dict[Key, set[tuple[str, str]]] = {}  # events recorded per claim

    def reconcile(self, key: Key, now: float) -> Outcome:
        out = _Out()
        if key[0]:
            claim = self.cache.get(CLAIM, *key)
            if claim is None:
                self._said.pop(key, None)
            elif not vol.deleting(claim):
                self._sync_claim(claim, now, out)
        else:
            pv = self.cache.get(VOLUME, "", key[1])
            if pv is not None:
                self._sync_volume(pv, now, out)
        return Outcome(out.writes, events=out.events, requeue_at=out.requeue_at)

    # -- writes ------------------------------------------------------------------------------
    def _patch(self, kind: str, obj: Obj, patch: Obj, out: _Out) -> Obj:
        """Merge ``patch`` into ``obj`` (guarded by its resourceVersion) and read it back so
        until the watch shows it (read-your-writes); returns the patched copy. The copy
        has no resourceVersion: a later patch of it in this sync follows our own write,
        which the apiserver applies first, so it goes unguarded."""
        m = obj.get("metadata") or {}
        new: Obj = clone(obj)
        if not merge_patch(new, patch):
            return obj
        op = VolumeMerge(m.get("resourceVersion", ""), patch)
        out.writes.append(Patch(kind, m.get("namespace", ""), m.get("name", ""), m.get("uid", ""), op))
        new["metadata"]["resourceVersion"] = ""
        self.cache.put(kind, new)
        return new

    def _event(self, claim: Obj, reason: str, message: str, now: float, out: _Out, type: str = "Normal") -> None:
        m = claim.get("metadata") or {}
        said = self._said.setdefault((m.get("namespace", ""), m.get("name", "")), set())
        if (reason, message) not in said:
            said.add((reason, message))
            out.events.append(make_event(claim, reason, message, now, type=type, component=COMPONENT))

    def _claim_phase(self, claim: Obj, phase: str, out: _Out) -> Obj:
        return self._patch(CLAIM, claim, {"status": {"phase": phase}}, out)

    def _volume_phase(self, pv: Obj, phase: str, out: _Out) -> Obj:
        return self._patch(VOLUME, pv, {"status": {"phase": phase}}, out)

    def _bind(self, pv: Obj, claim: Obj, out: _Out) -> None:
        """upstream bind(): the volume's claimRef and phase, then the claim's volumeName,
        annotations and status (capacity and access modes copied from the volume)."""
        ref = vol.reference_to(claim)
        current = vol.claim_ref(pv) or {}
        pv_patch: Obj = {}
        if any(current.get(k) != ref[k] for k in ("namespace", "name", "uid")):
            pv_patch["spec"] = {"claimRef": ref}
            if not vol.bound_to(pv, claim):
                pv_patch["metadata"] = {"annotations": {vol.BOUND_BY_CONTROLLER: "yes"}}
        if vol.phase(pv) != "Bound":
            pv_patch["status"] = {"phase": "Bound"}
        if pv_patch:
            pv = self._patch(VOLUME, pv, pv_patch, out)
        annotations = {vol.BIND_COMPLETED: "yes"}
        claim_patch: Obj = {}
        if (claim.get("spec") or {}).get("volumeName") != _name(pv):
            claim_patch["spec"] = {"volumeName": _name(pv)}
            annotations[vol.BOUND_BY_CONTROLLER] = "yes"
        claim_patch["metadata"] = {"annotations": annotations}
        spec = pv.get("spec") or {}
        storage = (spec.get("capacity") or {}).get("storage")
        status: Obj = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or [])}
        if storage is not None:
            status["capacity"] = {"storage": storage}
        claim_patch["status"] = status
        self._patch(CLAIM, claim, claim_patch, out)

    # -- claims ------------------------------------------------------------------------------
    def _sync_claim(self, claim: Obj, now: float, out: _Out) -> None:
        if vol.BIND_COMPLETED not in vol.annotations_of(claim):
            self._sync_unbound(claim, now, out)
            return
        name = (claim.get("spec") or {}).get("volumeName") or ""
        pv = self.cache.get(VOLUME, "", name) if name else None
        if not name:
            message = "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"
            self._lost(claim, "ClaimLost", message, now, out)
        elif pv is None:
            self._lost(
                claim, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!", now, out
            )
        elif vol.claim_ref(pv) is None or (vol.claim_ref(pv) or {}).get("uid") == (claim.get("metadata") or {}).get(
            "uid"
        ):
            self._bind(pv, claim, out)
        else:
            message = "Two claims are bound to the same volume, this one is bound incorrectly"
            self._lost(claim, "ClaimMisbound", message, now, out)

    def _lost(self, claim: Obj, reason: str, message: str, now: float, out: _Out) -> None:
        if vol.phase(claim) != "Lost":
            self._claim_phase(claim, "Lost", out)
            self._event(claim, reason, message, now, out, "Warning")

    def _sync_unbound(self, claim: Obj, now: float, out: _Out) -> None:
        wanted = (claim.get("spec") or {}).get("volumeName") or ""
        if wanted:
            self._sync_named(claim, wanted, now, out)
            return
        cls = vol.claim_class(claim)
        sc = self.cache.get(CLASS, "", cls) if cls else None
        delayed = vol.binding_mode(sc) == vol.WAIT_FOR_FIRST_CONSUMER
        pv = vol.best_match(claim, self.cache.list(VOLUME), delayed=delayed)
        if pv is not None:
            self._bind(pv, claim, out)
            return
        default = vol.default_class(self.cache.list(CLASS)) if vol.claim_has_no_class(claim) else None
        if default is not None:
            self._patch(CLAIM, claim, {"spec": {"storageClassName": _name(default)}}, out)
            return
        if delayed and vol.SELECTED_NODE not in vol.annotations_of(claim):
            self._event(
                claim, "WaitForFirstConsumer", "waiting for first consumer to be created before binding", now, out
            )
        elif cls:
            self._provision(claim, cls, sc, now, out)
            return
        else:
            message = "no persistent volumes available for this claim and no storage class is set"
            self._event(claim, "FailedBinding", message, now, out)
        if vol.phase(claim) != "Pending":
            self._claim_phase(claim, "Pending", out)

    def _sync_named(self, claim: Obj, wanted: str, now: float, out: _Out) -> None:
        pv = self.cache.get(VOLUME, "", wanted)
        if pv is None:
            if vol.phase(claim) != "Pending":
                self._claim_phase(claim, "Pending", out)
            return
        if vol.claim_ref(pv) is None:
            why = vol.mismatch(pv, claim)
            if why is None:
                self._bind(pv, claim, out)
                return
            self._event(
                claim, "VolumeMismatch", f'Cannot bind to requested volume "{wanted}": {why}', now, out, "Warning"
            )
        elif vol.bound_to(pv, claim):
            self._bind(pv, claim, out)
            return
        else:
            message = f'volume "{wanted}" already bound to a different claim.'
            self._event(claim, "FailedBinding", message, now, out, "Warning")
        if vol.phase(claim) != "Pending":
            self._claim_phase(claim, "Pending", out)

    # -- provisioning --------------------------------------------------------------------------
    def _provision(self, claim: Obj, cls: str, sc: Obj | None, now: float, out: _Out) -> None:
        """upstream provisionClaim for an external provisioner, and that provisioner."""
        if sc is None:
            self._event(
                claim, "ProvisioningFailed", f'storageclass.storage.k8s.io "{cls}" not found', now, out, "Warning"
            )
            return
        name = vol.provisioner(sc)
        if not vol.can_provision(sc):  # no in-tree plugin has the name
            self._event(claim, "ProvisioningFailed", f"no volume plugin matched name: {name}", now, out, "Warning")
            return
        if vol.annotations_of(claim).get(vol.STORAGE_PROVISIONER) != name:
            ann = {vol.STORAGE_PROVISIONER: name, vol.BETA_STORAGE_PROVISIONER: name}
            claim = self._patch(CLAIM, claim, {"metadata": {"annotations": ann}}, out)
        message = (
            f"Waiting for a volume to be created either by the external provisioner '{name}' or manually by the "
            "system administrator. If volume creation is delayed, please verify that the provisioner is running "
            "and correctly registered."
        )
        self._event(claim, "ExternalProvisioning", message, now, out)
        m = claim.get("metadata") or {}
        message = f'External provisioner is provisioning volume for claim "{m.get("namespace")}/{m.get("name")}"'
        self._event(claim, "Provisioning", message, now, out)
        uid = m.get("uid", "")
        due = self._asked.setdefault(uid, now) + self._delay(sc)
        if now < due:
            out.requeue_at = due
            return
        pv_name = f"pvc-{uid}"
        if self.cache.get(VOLUME, "", pv_name) is None:  # else made already: its claimRef brings the claim back
            out.writes.append(Create(provisioned_volume(claim, sc, pv_name)))
            self._event(claim, "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}", now, out)
        del self._asked[uid]

    def _delay(self, sc: Obj) -> float:
        given = vol.annotations_of(sc).get(vol.PROVISION_SECONDS)
        try:
            return max(0.0, float(given)) if given is not None else self.provision_seconds
        except ValueError:
            return self.provision_seconds  # validated at admission; an old object keeps the default

    # -- volumes -----------------------------------------------------------------------------
    def _sync_volume(self, pv: Obj, now: float, out: _Out) -> None:
        ref = vol.claim_ref(pv)
        if ref is None or not ref.get("uid"):
            if vol.phase(pv) != "Available":
                self._volume_phase(pv, "Available", out)
            return
        claim = self.cache.get(CLAIM, ref.get("namespace") or "", ref.get("name") or "")
        if claim is not None and (claim.get("metadata") or {}).get("uid") != ref.get("uid"):
            claim = None
        if claim is None:
            self._release(pv, out)
            return
        bound_name = (claim.get("spec") or {}).get("volumeName") or ""
        if not bound_name:
            return  # the claim's own reconcile (its key came with this event) binds it
        if bound_name == _name(pv):
            if vol.phase(pv) != "Bound":
                self._volume_phase(pv, "Bound", out)
            return
        if vol.PROVISIONED_BY in vol.annotations_of(pv) and _policy(pv) == "Delete":
            self._release(pv, out)
            return
        self._unbind(pv, out)

    def _release(self, pv: Obj, out: _Out) -> None:
        """Its claim is gone: Released, then reclaimed as its policy says."""
        if vol.phase(pv) not in ("Released", "Failed"):
            pv = self._volume_phase(pv, "Released", out)
        policy = _policy(pv)
        m = pv.get("metadata") or {}
        if policy == "Delete" and not vol.deleting(pv):
            out.writes.append(Delete(VOLUME, "", m.get("name", ""), m.get("uid", "")))
        elif policy == "Recycle":
            self._patch(VOLUME, pv, {"spec": {"claimRef": None}, "status": {"phase": "Available"}}, out)

    def _unbind(self, pv: Obj, out: _Out) -> None:
        """upstream unbindVolume: a binding the controller made goes whole; a user's
        pre-binding keeps the claim's name and loses only its uid."""
        if vol.BOUND_BY_CONTROLLER in vol.annotations_of(pv):
            patch: Obj = {"metadata": {"annotations": {vol.BOUND_BY_CONTROLLER: None}}, "spec": {"claimRef": None}}
        else:
            patch = {"spec": {"claimRef": {"uid": None, "resourceVersion": None}}}
        patch["status"] = {"phase": "Available"}
        self._patch(VOLUME, pv, patch, out)


def _policy(pv: Obj) -> str:
    return (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"


def provisioned_volume(claim: Obj, sc: Obj, name: str) -> Obj:
    """The volume an emulated provisioner makes for ``claim``: pre-bound to it."""
    m, spec = claim.get("metadata") or {}, claim.get("spec") or {}
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
    pv_spec: Obj = {
        "capacity": {"storage": storage},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
        "storageClassName": _name(sc),
        "volumeMode": spec.get("volumeMode") or "Filesystem",
        "claimRef": {
            "kind": CLAIM,
            "namespace": m.get("namespace", ""),
            "name": m.get("name", ""),
            "uid": m.get("uid", ""),
            "apiVersion": "v1",
            "resourceVersion": m.get("resourceVersion", ""),
        },
        "csi": {"driver": vol.provisioner(sc), "volumeHandle": name},
    }
    if sc.get("mountOptions"):
        pv_spec["mountOptions"] = list(sc["mountOptions"])
    node = vol.annotations_of(claim).get(vol.SELECTED_NODE)
    if node:
        term = {"matchExpressions": [{"key": vol.HOSTNAME_LABEL, "operator": "In", "values": [node]}]}
        pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return {
        "apiVersion": "v1",
        "kind": VOLUME,
        "metadata": {"name": name, "annotations": {vol.PROVISIONED_BY: vol.provisioner(sc)}},
        "spec": pv_spec,
    }


class PersistentVolumeStep(ReconcilerStep):
    """The reconciler in the manager; a volume that may serve claims and a class that
    changed name the unbound claims of their class (upstream resyncs every claim instead)."""

    def __init__(self, provision_seconds: float = PROVISION_SECONDS) -> None:
        super().__init__(lambda cache: PersistentVolumeReconciler(cache, provision_seconds), sort_keys=True)

    def on_event(self, kind: str, event_type: str, obj: Obj, now: float) -> None:
        super().on_event(kind, event_type, obj, now)
        if event_type == "DELETED":
            return
        if kind == VOLUME and vol.claim_ref(obj) is None:
            self._wake_unbound(vol.volume_class(obj))
        elif kind == CLASS:
            self._wake_unbound(_name(obj))
            if vol.is_default(obj):
                self._wake_unbound("")  # RetroactiveDefaultStorageClass

    def _wake_unbound(self, cls: str) -> None:
        for claim in self.cache.by_index(CLAIM, UNBOUND, cls):
            m = claim.get("metadata") or {}
            self.queue.add((m.get("namespace", ""), m.get("name", "")))
