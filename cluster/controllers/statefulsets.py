"""The StatefulSet controller: pods with stable names, created, replaced and rolled in order.

Owns what upstream's ``pkg/controller/statefulset`` decides (reference k8s-workloads.md §2):
pod ``i`` is ``<set>-<i>`` (from ``ordinals.start``) with ``hostname`` = its name,
``subdomain`` = ``serviceName`` and the labels ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index`` and ``controller-revision-hash``; every distinct template
is a ControllerRevision ``<set>-<hash>``; OrderedReady creates one pod at a time, each once
its predecessors are Running and Ready, and removes the highest ordinal first, one at a
time; Parallel creates and removes at once; a Failed pod is deleted and created again
(``RecreatingFailedPod``); RollingUpdate replaces, from the highest ordinal down to
``partition``, one pod at a time, the next only once the replacement is Running and Ready,
and a replaced pod keeps its name; OnDelete never replaces a pod for an update. Scaling
goes before updating. Status: replicas, ready, available, current and updated replicas,
currentRevision and updateRevision (the update becomes current once every pod has it).

Who calls it: the controller-manager, with StatefulSet, Pod and ControllerRevision events;
it sends pods to create (by name) and delete, ControllerRevisions, ``statefulset_status``
and Events. Not modelled: volumeClaimTemplates (no PVCs), ``maxUnavailable`` above 1, and
adoption of orphan pods.

A pod slot (one ordinal), as a state table:

| state     | how it is left                               | sync does                               |
|-----------|----------------------------------------------|-----------------------------------------|
| missing   | a create is sent (OrderedReady: predecessors | create at the revision its side of the  |
|           | healthy)                                     | partition wants                         |
| creating  | ADDED, or the create is refused              | wait                                    |
| unhealthy | Running and Ready (+ minReadySeconds)        | OrderedReady: successors wait           |
| failed    | deleted                                      | delete, RecreatingFailedPod             |
| healthy   | out of date and its turn (RollingUpdate)     | delete; it comes back as missing        |
"""

from __future__ import annotations

import re

from ..api.objects import is_terminal, is_terminating, phase_of
from .deploymentutil import template_hash
from .ownedpods import OwnerState, PodKey, available_at, is_pod_ready
from .workload import WorkloadController, Writes

POD_NAME, POD_INDEX, REVISION_LABEL = (
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "controller-revision-hash",
)


class _Set(OwnerState):
    __slots__ = ("awaiting", "wake")

    def configure(self) -> None:
        self.awaiting: set[str] = set()  # pod names created, not yet seen
        self.wake: float | None = None


class StatefulSetController(WorkloadController[_Set]):
    NAME = "statefulset"
    KIND = "StatefulSet"
    COMPONENT = "statefulset-controller"
    STATUS_FIELD = "statefulset_status"
    kinds = ("StatefulSet", "Pod", "ControllerRevision")

    def __init__(self) -> None:
        super().__init__()
        self._revisions: dict[tuple[str, str], dict] = {}  # (ns, name) -> ControllerRevision

    # -- hooks -----------------------------------------------------------------------------
    def _new_state(self, obj: dict) -> _Set:
        st = _Set(obj)
        st.configure()
        return st

    def _claimable(self, pod: dict) -> bool:
        return False

    def _rebuild(self, st: _Set) -> None:
        st.release = set()

    def _pod_changed(self, st: _Set, key: PodKey, old: dict | None, new: dict | None) -> None:
        if new is not None:
            st.awaiting.discard(key[1])

    def _on_other(self, kind: str, etype: str, obj: dict, now: float) -> None:
        m = obj.get("metadata") or {}
        key = (m.get("namespace", ""), m.get("name", ""))
        if etype == "DELETED":
            self._revisions.pop(key, None)
        else:
            self._revisions[key] = obj

    def on_create_failed(self, pod: dict, error, now: float) -> None:
        ref: dict = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), {})
        st = self._owners.get(ref.get("uid", ""))
        if st is not None:
            st.awaiting.discard(pod["metadata"].get("name", ""))
            self._dirty.add(st.uid)

    def _wakeups(self, st: _Set, now: float) -> tuple[float | None, ...]:
        return (st.wake,)

    # -- sync ------------------------------------------------------------------------------
    def _sync_owner(self, st: _Set, now: float, w: Writes) -> None:
        st.wake = None
        spec = st.obj.get("spec") or {}
        update_rev = self._revision(st, w)
        current_rev = (st.obj.get("status") or {}).get("currentRevision") or update_rev
        pods = self._by_ordinal(st)
        if not is_terminating(st.obj):
            self._step(st, spec, pods, update_rev, current_rev, now, w)
        self._write_status(st, self._status(st, spec, pods, update_rev, current_rev, now), w)

    def _step(self, st: _Set, spec: dict, pods: dict, update_rev: str, current_rev: str, now: float, w: Writes) -> None:
        ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        start, want = _start(spec), int(spec.get("replicas", 1))
        wanted = range(start, start + want)
        blocked = False
        for i in wanted:
            pod = pods.get(i)
            name = f"{st.name}-{i}"
            if pod is None:
                if name not in st.awaiting:
                    self._create(st, spec, i, update_rev, current_rev, now, w)
                blocked = True
            elif phase_of(pod) == "Failed" and not is_terminating(pod):
                # Upstream's workqueue rate-limits a pod that keeps failing: so does the backoff.
                if st.backoff.ready(now):
                    message = f"StatefulSet {st.ns}/{st.name} is recreating failed Pod {name}"
                    self._event(st, "RecreatingFailedPod", message, now, "Warning")
                    self._delete_pod(st, pod, now, w)
                    st.backoff.fail(now)
                blocked = True
            elif not self._healthy(st, spec, pod, now):
                blocked = True
            if blocked and ordered:
                return
        condemned = sorted((i for i in pods if i not in wanted), reverse=True)
        for i in condemned:
            if not is_terminating(pods[i]):
                self._delete_pod(st, pods[i], now, w)
            if ordered:
                return
        if condemned or blocked:
            return
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for i in sorted(wanted, reverse=True):
            if i < partition:
                break
            pod = pods[i]
            if _revision_of(pod) != update_rev:
                if not is_terminating(pod):
                    self._delete_pod(st, pod, now, w)
                return
            if not self._healthy(st, spec, pod, now):
                return

    def _healthy(self, st: _Set, spec: dict, pod: dict, now: float) -> bool:
        if is_terminating(pod) or phase_of(pod) != "Running" or not is_pod_ready(pod):
            return False
        at = available_at(pod, float(spec.get("minReadySeconds") or 0))
        if at is not None and at > now:
            st.wake = at if st.wake is None else min(st.wake, at)
            return False
        return at is not None

    def _by_ordinal(self, st: _Set) -> dict[int, dict]:
        out = {}
        for (_, name), pod in self._index.owned(st.uid).items():
            m = re.fullmatch(re.escape(st.name) + r"-([0-9]+)", name)
            if m is not None and not (is_terminal(pod) and phase_of(pod) == "Succeeded"):
                out[int(m.group(1))] = pod
        return out

    # -- writes ----------------------------------------------------------------------------
    def _revision(self, st: _Set, w: Writes) -> str:
        template = (st.obj.get("spec") or {}).get("template") or {}
        name = f"{st.name}-{template_hash(template)}"
        if (st.ns, name) not in self._revisions:
            ours = [r for r in self._revisions.values() if _owned_by(r, st.uid)]
            revision = max((int(r.get("revision") or 0) for r in ours), default=0) + 1
            obj = {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": name,
                    "namespace": st.ns,
                    "labels": dict(((st.obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}),
                    "ownerReferences": [self._owner_ref(st)],
                },
                "data": {"spec": {"template": template}},
                "revision": revision,
            }
            self._revisions[(st.ns, name)] = obj  # ours until the watch says otherwise
            w.creates.append(obj)
        return name

    def _owner_ref(self, st: _Set) -> dict:
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": st.name,
            "uid": st.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def _create(self, st: _Set, spec: dict, i: int, update_rev: str, current_rev: str, now: float, w: Writes) -> None:
        strategy = spec.get("updateStrategy") or {}
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        rev = current_rev if strategy.get("type", "RollingUpdate") == "RollingUpdate" and i < partition else update_rev
        stored = self._revisions.get((st.ns, rev))
        template = ((stored or {}).get("data") or {}).get("spec", {}).get("template") or spec.get("template") or {}
        pod = self._new_pod(st)
        name = f"{st.name}-{i}"
        m = pod["metadata"]
        m.pop("generateName", None)
        m["name"] = name
        m["labels"] = {**((template.get("metadata") or {}).get("labels") or {}), POD_NAME: name, POD_INDEX: str(i)}
        m["labels"][REVISION_LABEL] = rev
        pod["spec"] = dict(template.get("spec") or pod["spec"])
        pod["spec"]["hostname"] = name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        st.awaiting.add(name)
        w.pod_creates.append(pod)
        self._event(st, "SuccessfulCreate", f"create Pod {name} in StatefulSet {st.name} successful", now)

    def _delete_pod(self, st: _Set, pod: dict, now: float, w: Writes) -> None:
        m = pod["metadata"]
        w.pod_deletes.append((m["namespace"], m["name"], m.get("uid", ""), None))
        self._event(st, "SuccessfulDelete", f"delete Pod {m['name']} in StatefulSet {st.name} successful", now)

    def _status(self, st: _Set, spec: dict, pods: dict, update_rev: str, current_rev: str, now: float) -> dict:
        live = [p for p in pods.values() if not is_terminating(p)]
        min_ready = float(spec.get("minReadySeconds") or 0)
        ready = [p for p in live if phase_of(p) == "Running" and is_pod_ready(p)]
        available = [p for p in ready if (available_at(p, min_ready) or 0.0) <= now]
        updated = sum(1 for p in live if _revision_of(p) == update_rev)
        current = sum(1 for p in live if _revision_of(p) == current_rev)
        want = int(spec.get("replicas", 1))
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and updated == want == len(ready) and len(pods) == want:
            current_rev, current = update_rev, updated
        status = {
            **(st.obj.get("status") or {}),
            "replicas": len(pods),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_rev,
            "updateRevision": update_rev,
            "collisionCount": 0,
        }
        if st.generation is not None:
            status["observedGeneration"] = st.generation
        return status


def _start(spec: dict) -> int:
    return int((spec.get("ordinals") or {}).get("start") or 0)


def _revision_of(pod: dict) -> str:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL, "")


def _owned_by(obj: dict, uid: str) -> bool:
    return any(
        r.get("controller") and r.get("uid") == uid for r in (obj.get("metadata") or {}).get("ownerReferences") or ()
    )
