"""What a workload controller knows about the pods it owns, as upstream's controller_utils.

Owns the pod-side helpers the ReplicaSet and DaemonSet controllers share: which pod a
controller reference names and whether it is active, ready or available; the
``PodIndex`` (pods by controller uid, orphans by namespace, so an event costs O(1));
``Expectations`` (upstream's ControlleeExpectations with uid-tracked deletes) and
``Backoff`` (the workqueue's per-item failure backoff); ``OwnerState`` and the pod built
from an owner's template; ``ParkedPods``, the pods a controller is told of before it has
anything to control. ``workload.WorkloadReconciler`` runs on these; ``ParkedPods`` is also
used by the disruption and HPA controllers and shared by ``manager.ControllerManager``
between every parked controller.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..api.codec import decode, encode
from ..api.errors import NotFound, StatusError
from ..api.kinds import BY_KIND
from ..api.objects import condition, is_terminal, is_terminating, name_of, namespace_of, uid_of
from ..api.selectors import LabelSelector, SelectorError
from ..clock import parse_timestamp
from .podrecord import PodRecord
from .reconciler import Obj

# Upstream's ExpectationsTimeout: an expectation not fulfilled by then counts as satisfied.
EXPECTATIONS_TIMEOUT = 300.0
# The controller workqueue's per-item exponential failure backoff (5 ms doubling to 1000 s).
FAILURE_BACKOFF_BASE, FAILURE_BACKOFF_MAX = 0.005, 1000.0


PodKey = tuple[str, str]  # (namespace, name)


# ---- pods: ownership, activity, readiness --------------------------------------------


def controller_ref(obj: Obj) -> Obj | None:
    """The ownerReference with ``controller: true``, or None (upstream GetControllerOf)."""
    refs: Iterable[Obj] = (obj.get("metadata") or {}).get("ownerReferences") or ()
    for ref in refs:
        if ref.get("controller"):
            return ref
    return None


def owner_reference(owner: Obj, kind: str) -> Obj:
    """The controller reference a workload puts on its pods (upstream NewControllerRef)."""
    m = owner.get("metadata") or {}
    return {
        "apiVersion": BY_KIND[kind].api_version,  # apps/v1, batch/v1, ...
        "kind": kind,
        "name": m.get("name", ""),
        "uid": m.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_pod_active(pod: Obj) -> bool:
    """Neither Succeeded/Failed nor terminating (upstream IsPodActive)."""
    return not is_terminal(pod) and not is_terminating(pod)


def is_pod_ready(pod: Obj) -> bool:
    ready = condition(pod, "Ready")
    return ready is not None and ready.get("status") == "True"


def ready_since(pod: Obj) -> float | None:
    """When the Ready condition last turned True, or None (not ready, or no time recorded)."""
    ready = condition(pod, "Ready")
    if ready is None or ready.get("status") != "True" or not ready.get("lastTransitionTime"):
        return None
    return parse_timestamp(ready["lastTransitionTime"])


def available_at(pod: Obj, min_ready: float) -> float | None:
    """From when the pod counts as available (upstream IsPodAvailable), or None for never.

    Ready with minReadySeconds 0 is available at once (-inf). Upstream requires
    ``lastTransitionTime + minReadySeconds`` to be strictly before now; here the instant
    itself counts, so a timer set for it finds the pod available.
    """
    if not is_pod_ready(pod):
        return None
    if min_ready <= 0:
        return float("-inf")
    since = ready_since(pod)
    return None if since is None else since + min_ready


def selector_of(obj: Obj) -> LabelSelector:
    """The owner's ``spec.selector``; a missing, empty or invalid one selects nothing
    (upstream refuses to manage a workload that selects everything)."""
    try:
        sel = LabelSelector.from_dict((obj.get("spec") or {}).get("selector"))
    except SelectorError:
        return LabelSelector.nothing()
    return LabelSelector.nothing() if sel.empty else sel


def error_text(error: object) -> str:
    """The message of an apiserver error (or of any value)."""
    return error.message if isinstance(error, StatusError) else str(error)


def _not_found(error: object) -> bool:
    return isinstance(error, NotFound)


def pod_key(obj: Obj) -> PodKey:
    return namespace_of(obj), name_of(obj)


_key = pod_key


# ---- parking: pods before there is anything to control --------------------------------


class ParkedPods:
    """Until a controller has anything to control (no owner, no budget yet), the latest copy
    of each pod it was told of, by key: a dict write per pod event instead of indexing.
    ``release`` hands them over once, in key order, and ends parking for good.

    A parked pod is its dict or, in the dict the controller-manager shares, its
    ``podrecord.PodRecord`` (whose bytes are a fifth of the decoded dict): ``release``
    decodes those and puts the dicts back, so that the next controller released from the
    same shared dict gets the same objects instead of copies of its own."""

    __slots__ = ("_pods",)

    def __init__(self) -> None:
        self._pods: dict[PodKey, Obj | PodRecord] | None = {}

    @property
    def on(self) -> bool:
        return self._pods is not None

    def share(self, pods: dict[PodKey, Obj | PodRecord]) -> None:
        """Read the parked pods from ``pods``, which the caller keeps current (the
        controller-manager keeps one such dict for every parked controller and stops
        telling them of pod events), instead of keeping a copy here."""
        if self._pods is not None:
            self._pods = pods

    def park(self, etype: str, pod: Obj) -> bool:
        """Keep the event if parking is still on; returns whether it did."""
        if self._pods is None:
            return False
        if etype == "DELETED":
            self._pods.pop(_key(pod), None)
        else:
            self._pods[_key(pod)] = pod
        return True

    def release(self) -> list[Obj]:
        if self._pods is None:
            return []
        pods, self._pods = self._pods, None
        out = []
        for key in sorted(pods):
            pod = pods[key]
            if isinstance(pod, PodRecord):
                pod = pods[key] = pod.pod()
            out.append(pod)
        return out


# ---- the pod index -------------------------------------------------------------------


@dataclass(slots=True)
class Change:
    """One pod event as the index saw it. Owners: a uid, "" for an orphan, None for a pod
    this controller does not track (controlled by another kind, or absent)."""

    key: PodKey
    old: Obj | None
    old_owner: str | None
    new: Obj | None
    new_owner: str | None
    created: bool  # a pod uid not seen before under this key


class PodIndex:
    """Pods controlled by ``kind`` (by controller uid) and orphans (by namespace)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._where: dict[PodKey, tuple[str, Obj]] = {}
        self._owned: dict[str, dict[PodKey, Obj]] = {}
        self._orphans: dict[str, dict[PodKey, Obj]] = {}

    def owner_of(self, pod: Obj) -> str | None:
        ref = controller_ref(pod)
        if ref is None:
            return ""
        return ref.get("uid", "") if ref.get("kind") == self.kind else None

    def get(self, key: PodKey) -> tuple[str, Obj] | None:
        return self._where.get(key)

    def owned(self, uid: str) -> dict[PodKey, Obj]:
        return self._owned.get(uid, {})

    def orphans(self, ns: str) -> dict[PodKey, Obj]:
        return self._orphans.get(ns, {})

    def apply(self, etype: str, pod: Obj) -> Change | None:
        key = _key(pod)
        prev = self._where.get(key)
        old_owner, old = prev if prev is not None else (None, None)
        if prev is not None:
            self._drop(key, prev[0])
        if etype == "DELETED":
            return Change(key, old, old_owner, None, None, False) if prev is not None else None
        owner = self.owner_of(pod)
        if owner is not None:
            self._where[key] = (owner, pod)
            bucket = self._owned.setdefault(owner, {}) if owner else self._orphans.setdefault(key[0], {})
            bucket[key] = pod
        if prev is None and owner is None:
            return None
        created = old is None or uid_of(old) != uid_of(pod)
        return Change(key, old, old_owner, pod, owner, created)

    def _drop(self, key: PodKey, owner: str) -> None:
        del self._where[key]
        table, slot = (self._owned, owner) if owner else (self._orphans, key[0])
        bucket = table[slot]
        del bucket[key]
        if not bucket:
            del table[slot]


# ---- expectations and backoff --------------------------------------------------------


class Expectations:
    """Creates still to be observed (a count) and deletes still to be observed (pod keys)."""

    __slots__ = ("adds", "dels", "stamp")

    def __init__(self) -> None:
        self.adds = 0
        self.dels: set[PodKey] = set()
        self.stamp: float | None = None

    def expect(self, adds: int, dels: Iterable[PodKey], now: float) -> None:
        self.adds, self.dels, self.stamp = adds, set(dels), now

    def creation_observed(self) -> None:
        if self.adds > 0:
            self.adds -= 1

    def deletion_observed(self, key: PodKey) -> None:
        self.dels.discard(key)

    def fulfilled(self) -> bool:
        return self.adds <= 0 and not self.dels

    def satisfied(self, now: float) -> bool:
        return self.fulfilled() or self.stamp is None or now >= self.stamp + EXPECTATIONS_TIMEOUT

    def deadline(self) -> float | None:
        return None if self.fulfilled() or self.stamp is None else self.stamp + EXPECTATIONS_TIMEOUT


class Backoff:
    """Per-owner retry delay after failed writes: 5 ms doubling to 1000 s, reset on success."""

    __slots__ = ("failures", "retry_at", "_last")

    def __init__(self) -> None:
        self.failures, self.retry_at = 0, 0.0
        self._last: float | None = None

    def fail(self, now: float) -> None:
        if self._last == now:
            return  # the items of one batch fail together: one step, as one requeue upstream
        self._last = now
        self.failures += 1
        self.retry_at = now + min(FAILURE_BACKOFF_BASE * 2 ** (self.failures - 1), FAILURE_BACKOFF_MAX)

    def reset(self) -> None:
        self.failures, self.retry_at, self._last = 0, 0.0, None

    def ready(self, now: float) -> bool:
        return now >= self.retry_at


class OwnerState:
    """What every workload controller keeps per owner; subclasses add their own slots."""

    __slots__ = ("obj", "uid", "ns", "name", "selector", "exp", "backoff", "candidates", "release", "template")

    def __init__(self, obj: Obj):
        self.obj = obj
        self.uid, self.ns, self.name = uid_of(obj), namespace_of(obj), name_of(obj)
        self.selector = selector_of(obj)
        self.exp = Expectations()
        self.backoff = Backoff()
        self.candidates: set[PodKey] = set()  # orphans that may be adoptable
        self.release: set[PodKey] = set()  # owned pods whose labels no longer match
        self.template: bytes | None = None  # the encoded base pod, built on first create

    @property
    def key(self) -> PodKey:
        return self.ns, self.name

    @property
    def generation(self) -> int | None:
        return (self.obj.get("metadata") or {}).get("generation")


def base_pod(owner: Obj, kind: str) -> Obj:
    """The pod an owner's ``spec.template`` describes (upstream GetPodFromTemplate): the
    template's labels, annotations, finalizers and spec, ``generateName: <owner>-``, the
    owner's namespace and its controller reference."""
    template = (owner.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    meta = {
        "generateName": f"{name_of(owner)}-",
        "namespace": namespace_of(owner),
        "labels": dict(tmeta.get("labels") or {}),
        "ownerReferences": [owner_reference(owner, kind)],
    }
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": decode(encode(template.get("spec") or {}))}


def _with_refs(pod: Obj, refs: list[Obj]) -> Obj:
    # A copy with new ownerReferences; the rest is shared with the cached pod, never mutated.
    return {**pod, "metadata": {**(pod.get("metadata") or {}), "ownerReferences": refs}}
