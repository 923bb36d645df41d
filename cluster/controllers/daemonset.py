"""The DaemonSet controller: one pod per eligible node.

Owns what upstream's ``pkg/controller/daemon`` decides: which nodes a DaemonSet should
run on (``node_should_run``), the tolerations and node affinity it gives its pods
(``add_daemon_tolerations``, ``replace_node_affinity``), which pods it deletes (failed,
succeeded, duplicates, misscheduled) and its status. The shared machinery (ownership
index, claiming, expectations, refusals; a deleted DaemonSet's pods are the
garbage collector's, ``garbagecollector.py``) is
``workload.WorkloadReconciler``; the placement rules and daemon pod-spec edits below are
``daemonsetplacement``'s, re-exported here.

Who calls it: the controller-manager runs ``DaemonSetController``, a
``workloadstep.WorkloadStep`` over a ``DaemonSetReconciler``: DaemonSet, Node, Pod and
ControllerRevision events in, ``reconcile(key, now)`` per DaemonSet key, looked at again at
its expectation timeout, the end of its back-off, a failed pod's back-off or minReadySeconds.

A DaemonSet moves through the states of the table in ``workload``, per DaemonSet (a
terminating one is left alone, status included). The rules, as upstream applies them:

- A node is eligible (should run) when the template's ``spec.nodeName`` is empty or the
  node's, its nodeSelector and required node affinity match the node, and the pod, with
  the daemon tolerations added, tolerates every NoSchedule and NoExecute taint. A pod
  already there may continue when only NoSchedule taints are untolerated.
- Daemon tolerations (upstream AddOrUpdateDaemonPodTolerations), operator Exists with no
  tolerationSeconds: ``not-ready`` and ``unreachable`` NoExecute; ``disk-pressure``,
  ``memory-pressure``, ``pid-pressure``, ``unschedulable`` NoSchedule; and
  ``network-unavailable`` NoSchedule for hostNetwork pods (all ``node.kubernetes.io/``).
- A pod is created for its node with generateName ``<name>-`` and a required node
  affinity whose only term is ``matchFields: metadata.name In [<node>]`` (it replaces
  any required terms of the template), so the default scheduler binds it there.
- Per node: no pod and eligible -> create; a Failed pod -> delete it (Warning
  ``FailedDaemonPod``; per node, not again before a backoff of 1 s doubling to 15 min
  since the last one), and the next sync creates its replacement; a Succeeded pod ->
  delete; more than one running pod -> keep the oldest (scheduled first, then
  creationTimestamp, then name), delete the rest; not allowed to continue -> delete all.
  A terminating pod still occupies its node, so no replacement until it is gone.
- A deleted node: its bound pods are left to pod GC; its unscheduled pods are deleted.
- Status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled,
  numberReady, numberAvailable, numberUnavailable, updatedNumberScheduled (oldest pod
  per node carries the template's ``controller-revision-hash``), observedGeneration (only
  when the sync was allowed to manage, as upstream).

- Revisions: every distinct template is a ControllerRevision ``<name>-<hash>``
  (``statefulsetrevisions``' book, owned by the DaemonSet); pods carry the update
  revision's hash as ``controller-revision-hash`` and the template generation as
  ``pod-template-generation``; the history beyond ``revisionHistoryLimit`` that no pod
  runs is deleted, oldest first.
- Updates: with ``updateStrategy`` RollingUpdate, a sync whose per-node pass asked for
  nothing takes one rolling step (``daemonsetupdate``: maxUnavailable, maxSurge); a node
  surging keeps its oldest old and oldest new pod. OnDelete replaces only pods that go.

Deviations: the revision hash is computed as the StatefulSet's (FNV over the revision's
data), not upstream's hash of the template, so names differ from upstream's.
"""

from __future__ import annotations

from ..api.errors import StatusError
from ..api.objects import is_terminal, is_terminating, labels_of, name_of, namespace_of, node_name_of, phase_of
from ..api.requests import Create, Delete, Request, Update
from ..clock import parse_timestamp
from .daemonsetplacement import (
    DAEMON_TOLERATIONS,
    Placement,
    add_daemon_tolerations,
    daemon_spec,
    node_should_run,
    placement_node,
    placement_view,
    replace_node_affinity,
    target_node,
)
from .daemonsetupdate import GENERATION_LABEL, HASH_LABEL, fenceposts, history_to_prune, is_updated, rolling_step
from .reconciler import Obj, Watches
from .statefulsetrevisions import RevisionBook, RevisionIndex, revision_data, revision_hash, revision_name
from .workload import (
    BURST_REPLICAS,
    SUCCESSFUL_DELETE,
    OwnerState,
    PodKey,
    WorkloadReconciler,
    Writes,
    available_at,
    base_pod,
    is_pod_ready,
)
from .workloadstep import WorkloadStep

__all__ = [
    "DaemonSetController",
    "DaemonSetReconciler",
    "DAEMON_TOLERATIONS",
    "REVISION_HASH_LABEL",
    "add_daemon_tolerations",
    "replace_node_affinity",
    "target_node",
    "template_hash",
    "node_should_run",
]

REVISION_HASH_LABEL = HASH_LABEL
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
FAILED_DAEMON_POD, SUCCEEDED_DAEMON_POD = "FailedDaemonPod", "SucceededDaemonPod"
# Upstream's failedPodsBackoff: flowcontrol.NewBackOff(1 s, 15 min).
FAILED_POD_BACKOFF_BASE, FAILED_POD_BACKOFF_MAX = 1.0, 900.0
_STATUS_FIELDS = (
    "desiredNumberScheduled",
    "currentNumberScheduled",
    "numberReady",
    "updatedNumberScheduled",
    "numberMisscheduled",
)
# One node's share of the status: the five counts above, then when its pod became available.
_Share = tuple[int, int, int, int, int, float | None]
_NO_COUNTS = (0, 0, 0, 0, 0)


# ---- the pod a DaemonSet runs (where it may run: ``daemonsetplacement``) ---------------


def template_hash(template: Obj, collisions: int = 0) -> str:
    """The revision hash of a pod template: the suffix of its ControllerRevision's name."""
    return revision_hash(revision_data(template), collisions)


def _oldest_first(pod: Obj) -> tuple[int, float, str]:
    stamp = (pod.get("metadata") or {}).get("creationTimestamp")
    created = parse_timestamp(stamp) if stamp else None
    return (0 if node_name_of(pod) else 1, float("-inf") if created is None else created, name_of(pod))


# ---- the controller ------------------------------------------------------------------


class _DaemonSet(OwnerState):
    __slots__ = (
        "placement",
        "hash",
        "generation_label",
        "strategy",
        "min_ready",
        "by_node",
        "pod_node",
        "elig",
        "contrib",
        "totals",
        "manage",
        "touched",
        "failed",
        "wake",
        "next_available",
    )

    def configure(self) -> None:
        spec = self.obj.get("spec") or {}
        self.placement = Placement(daemon_spec(self.obj))
        self.hash = template_hash(
            spec.get("template") or {}, int((self.obj.get("status") or {}).get("collisionCount") or 0)
        )
        self.generation_label = ((self.obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION)
        self.strategy = spec.get("updateStrategy") or {}
        self.min_ready = spec.get("minReadySeconds") or 0
        self.by_node: dict[str, dict[PodKey, Obj]] = {}  # target node -> this DaemonSet's pods
        self.pod_node: dict[PodKey, str] = {}
        self.elig: dict[str, tuple[bool, bool]] = {}  # node -> (should run, may continue)
        self.contrib: dict[str, _Share] = {}  # node -> its share of the status
        self.totals = [0] * len(_STATUS_FIELDS)
        self.manage: set[str] = set()  # nodes to look at when next allowed to manage
        self.touched: set[str] = set()  # nodes whose status share is stale
        self.failed: dict[str, tuple[float, float]] = {}  # node -> (backoff, last failed-pod delete)
        self.wake: float | None = None
        self.next_available: float | None = None


class DaemonSetReconciler(WorkloadReconciler[_DaemonSet]):
    """A DaemonSet's key in; the writes that converge its pods over the nodes out.

    Incremental: a pod or node event marks only the nodes it touches, per DaemonSet; a
    reconcile manages only marked nodes and updates only their share of the status.
    """

    name = "daemonset"
    KIND = "DaemonSet"
    COMPONENT = "daemonset-controller"
    watches = tuple(Watches(k, observed=True) for k in ("DaemonSet", "Node", "Pod", "ControllerRevision"))

    def __init__(self) -> None:
        super().__init__()
        self._nodes: dict[str, Obj] = {}
        self._book = RevisionBook(self.KIND)

    def _new_state(self, obj: Obj) -> _DaemonSet:
        return _DaemonSet(obj)

    def _claimable(self, pod: Obj) -> bool:
        return not is_terminating(pod)

    def _base_pod(self, ds: _DaemonSet) -> Obj:
        pod = base_pod(ds.obj, self.KIND)
        pod["metadata"]["labels"][REVISION_HASH_LABEL] = ds.hash
        if ds.generation_label is not None:
            pod["metadata"]["labels"][GENERATION_LABEL] = ds.generation_label
        add_daemon_tolerations(pod["spec"])
        return pod

    # -- events ----------------------------------------------------------------------------
    def _on_other(self, kind: str, etype: str, node: Obj, now: float) -> None:
        if kind == "ControllerRevision":
            for rev in self._book.observe(etype, node):
                self._revision_touched(rev)
            return
        if kind != "Node":
            return
        name = name_of(node)
        old = self._nodes.get(name)
        if etype == "DELETED":
            if old is None:
                return
            del self._nodes[name]
        else:
            node = self._nodes[name] = placement_node(node)
            if old is not None and placement_view(old) == placement_view(node):
                return  # a status change (heartbeat, conditions) moves no daemon pod
        for ds in self._owners.values():
            ds.elig.pop(name, None)
            self._touch(ds, name)

    def _revision_touched(self, rev: Obj) -> None:
        owner = RevisionIndex.owner_of(rev)
        if owner:
            if owner in self._owners:
                self._mark(self._owners[owner])
            return
        for ds in self._by_ns.get(namespace_of(rev), {}).values():
            if ds.selector.matches(labels_of(rev)):
                self._mark(ds)  # an orphan to adopt

    def _other_refused(self, ds: _DaemonSet | None, req: Request, error: StatusError, now: float) -> None:
        """A revision create or adoption refused is forgotten (``workload.backs_off`` backs
        the DaemonSet off); a revision delete refused is asked again."""
        if isinstance(req, (Create, Update)) and req.obj.get("kind") == "ControllerRevision":
            self._book.refused(req.obj)
        elif isinstance(req, Delete) and req.kind == "ControllerRevision":
            self._book.delete_failed((req.namespace, req.name))

    def revisions(self, namespace: str, name: str) -> list[Obj]:
        """The ControllerRevisions of a DaemonSet as this controller knows them, oldest first."""
        st = self._owners.get(self._by_key.get((namespace, name), ""))
        return self._book.of(st.uid) if st is not None else []

    def _touch(self, ds: _DaemonSet, node: str) -> None:
        ds.manage.add(node)
        ds.touched.add(node)
        self._mark(ds)

    def _rebuild(self, ds: _DaemonSet) -> None:
        ds.configure()
        ds.release = set()
        for key, pod in self._index.owned(ds.uid).items():
            self._pod_changed(ds, key, None, pod)
        ds.manage |= set(self._nodes)
        ds.touched |= set(self._nodes)

    def _pod_changed(self, ds: _DaemonSet, key: PodKey, old: Obj | None, new: Obj | None) -> None:
        if old is not None:
            node = ds.pod_node.pop(key, None)
            if node is not None:
                bucket = ds.by_node[node]
                del bucket[key]
                if not bucket:
                    del ds.by_node[node]
                self._touch(ds, node)
        ds.release.discard(key)
        if new is None:
            return
        if not ds.selector.matches(labels_of(new)):
            if self._claimable(new):
                ds.release.add(key)
            return
        if is_terminal(new) and is_terminating(new):
            return  # done and being removed: upstream no longer tracks it
        node = target_node(new)
        if node is not None:
            ds.pod_node[key] = node
            ds.by_node.setdefault(node, {})[key] = new
            self._touch(ds, node)

    def _create_failed(self, ds: _DaemonSet, pod: Obj) -> None:
        node = target_node(pod)
        if node is not None:
            self._touch(ds, node)

    def _delete_failed(self, ds: _DaemonSet, key: PodKey) -> None:
        node = ds.pod_node.get(key)
        if node is not None:
            self._touch(ds, node)

    def _expired(self, ds: _DaemonSet) -> None:
        # What was asked for was never seen: look at every node again.
        ds.manage |= set(self._nodes) | set(ds.by_node)

    # -- sync ------------------------------------------------------------------------------
    def _sync_owner(self, ds: _DaemonSet, now: float, w: Writes) -> None:
        if is_terminating(ds.obj):
            return  # upstream neither manages nor reports on a DaemonSet being deleted
        self._claim(ds, now, w)
        plan = None
        if not ds.selector.matches_nothing:
            plan = self._book.plan(ds.obj, lambda rev: ds.selector.matches(labels_of(rev)), True, w.creates, w.updates)
            self._follow(ds, name_of(plan.update))
        managed = self._may_manage(ds, now)
        if managed:
            self._manage(ds, now, w)
        self._refresh(ds)
        status = self._status(ds, now, managed)
        if plan is not None and plan.collisions:
            status["collisionCount"] = plan.collisions
        self._write_status(ds, status, w)
        if managed and plan is not None:
            live = {
                revision_name(ds.name, labels_of(p).get(HASH_LABEL, ""))
                for b in ds.by_node.values()
                for p in b.values()
            }
            current = name_of(plan.update)
            pick = lambda revs, live, limit: history_to_prune(revs, current, live, limit)  # noqa: E731
            self._book.truncate(ds.obj, plan, live, now, w.deletes, pick)

    def _follow(self, ds: _DaemonSet, revision: str) -> None:
        """Pods are labelled with the update revision's hash: after a hash collision, or a
        rollback to an equal older revision, that is not the one computed from the template."""
        hash_ = revision[len(revision_name(ds.name, "")) :]
        if hash_ != ds.hash:
            ds.hash = hash_
            ds.touched |= set(self._nodes)

    def _eligibility(self, ds: _DaemonSet, node: Obj) -> tuple[bool, bool]:
        name = name_of(node)
        got = ds.elig.get(name)
        if got is None:
            got = ds.elig[name] = ds.placement.check(node)
        return got

    def _manage(self, ds: _DaemonSet, now: float, w: Writes) -> None:
        creates, deletes, waiting = [], [], set()
        ds.wake = None
        self._refresh(ds)
        fences = fenceposts(ds.strategy, ds.totals[0])
        for name in sorted(ds.manage):
            node = self._nodes.get(name)
            if node is None:  # gone: only its unscheduled pods are ours to delete
                deletes += [
                    p
                    for _, p in sorted(ds.by_node.get(name, {}).items())
                    if not node_name_of(p) and not is_terminating(p)
                ]
                continue
            create, dels, wait = self._plan_node(ds, node, now, fences[0])
            if create:
                creates.append(name)
            deletes += dels
            if wait:
                waiting.add(name)
        if not creates and not deletes and not waiting and fences != (0, 0) and ds.totals[3] < ds.totals[1]:
            creates, deletes = self._roll(ds, fences, now)
        n = min(len(creates), BURST_REPLICAS)
        deletes, later = deletes[:BURST_REPLICAS], deletes[BURST_REPLICAS:]
        ds.manage = waiting | set(creates[n:]) | {ds.pod_node.get(_pkey(p), "") for p in later} - {""}
        if n or deletes:
            ds.exp.expect(n, [_pkey(p) for p in deletes], now)
        for name in creates[:n]:
            pod = self._new_pod(ds)
            replace_node_affinity(pod["spec"], name)
            w.pod_creates.append(pod)
        for p in deletes:
            m = p["metadata"]
            w.pod_deletes.append((m["namespace"], m["name"], m.get("uid", ""), None))
            self._event(ds, SUCCESSFUL_DELETE, f"Deleted pod: {m['name']}", now)

    def _roll(self, ds: _DaemonSet, fences: tuple[int, int], now: float) -> tuple[list[str], list[Obj]]:
        """One rolling-update step, when the per-node pass had nothing to do (upstream rolls
        only with expectations satisfied after it)."""
        by_node = {name: list(pods.values()) for name, pods in ds.by_node.items()}
        should_run = {n: n in self._nodes and self._eligibility(ds, self._nodes[n])[0] for n in by_node}
        step = rolling_step(by_node, should_run, ds.hash, ds.generation_label, fences, ds.totals[0], ds.min_ready, now)
        if step.wake is not None:
            ds.wake = min(ds.wake or float("inf"), step.wake)
        return step.creates, step.deletes

    def _plan_node(self, ds: _DaemonSet, node: Obj, now: float, surge: int = 0) -> tuple[bool, list[Obj], bool]:
        """(create a pod, pods to delete, waiting on a failed-pod backoff) for one node."""
        name = name_of(node)
        should_run, may_continue = self._eligibility(ds, node)
        pods = ds.by_node.get(name)
        if should_run and not pods:
            return True, [], False
        if not pods:
            return False, [], False
        if not may_continue:
            return False, [p for _, p in sorted(pods.items()) if not is_terminating(p)], False
        running, deletes, wait = [], [], False
        for key, p in sorted(pods.items()):
            if is_terminating(p):
                continue
            if phase_of(p) == "Failed":
                if self._in_failed_backoff(ds, name, now):
                    wait = True
                    continue
                msg = f"Found failed daemon pod {key[0]}/{key[1]} on node {name}, will try to kill it"
                self._event(ds, FAILED_DAEMON_POD, msg, now, "Warning")
                deletes.append(p)
            elif phase_of(p) == "Succeeded":
                msg = f"Found succeeded daemon pod {key[0]}/{key[1]} on node {name}, will try to delete it"
                self._event(ds, SUCCEEDED_DAEMON_POD, msg, now)
                deletes.append(p)
            else:
                running.append(p)
        if len(running) > 1 and not surge:
            deletes += sorted(running, key=_oldest_first)[1:]  # keep the oldest
        elif len(running) > 1:  # surging: keep the oldest old pod and the oldest new one
            kept: set[bool] = set()
            for p in sorted(running, key=_oldest_first):
                new = is_updated(p, ds.hash, ds.generation_label)
                if new in kept:
                    deletes.append(p)
                kept.add(new)
        return False, deletes, wait

    def _in_failed_backoff(self, ds: _DaemonSet, node: str, now: float) -> bool:
        """True while a failed pod on ``node`` must wait; otherwise take the next step."""
        delay, last = ds.failed.get(node, (0.0, None))
        fresh = last is None or now - last > 2 * FAILED_POD_BACKOFF_MAX  # upstream forgets old entries
        if not fresh and last is not None and now - last < delay:
            ds.wake = min(ds.wake or float("inf"), last + delay)
            return True
        delay = FAILED_POD_BACKOFF_BASE if fresh else min(2 * delay, FAILED_POD_BACKOFF_MAX)
        ds.failed[node] = (delay, now)
        return False

    # -- status ----------------------------------------------------------------------------
    def _refresh(self, ds: _DaemonSet) -> None:
        """Bring the touched nodes' shares of the status up to date."""
        for name in ds.touched:
            old = ds.contrib.pop(name, None)
            new = self._share(ds, name)
            added, removed = new[:5] if new else _NO_COUNTS, old[:5] if old else _NO_COUNTS
            for i in range(len(_STATUS_FIELDS)):
                ds.totals[i] += added[i] - removed[i]
            if new is not None:
                ds.contrib[name] = new
        ds.touched = set()

    def _share(self, ds: _DaemonSet, name: str) -> _Share | None:
        """(desired, current, ready, updated, misscheduled, available from) for one node."""
        node = self._nodes.get(name)
        if node is None:
            return None
        should_run, _ = self._eligibility(ds, node)
        pods = ds.by_node.get(name)
        if not should_run:
            return (0, 0, 0, 0, 1 if pods else 0, None)
        if not pods:
            return (1, 0, 0, 0, 0, None)
        oldest = min(pods.values(), key=_oldest_first)
        ready = is_pod_ready(oldest)
        updated = is_updated(oldest, ds.hash, ds.generation_label)
        return (1, 1, int(ready), int(updated), 0, available_at(oldest, ds.min_ready) if ready else None)

    def _status(self, ds: _DaemonSet, now: float, managed: bool) -> Obj:
        desired, current, ready, updated, misscheduled = ds.totals
        available, ds.next_available = ready, None
        if ds.min_ready > 0 and ready:
            times = [c[5] for c in ds.contrib.values() if c[5] is not None]
            available = sum(1 for t in times if t <= now)
            ds.next_available = min((t for t in times if t > now), default=None)
        status = {
            **(ds.obj.get("status") or {}),
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "numberReady": ready,
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        if managed and ds.generation is not None:
            status["observedGeneration"] = ds.generation
        return status

    def _wakeups(self, ds: _DaemonSet, now: float) -> tuple[float | None, ...]:
        return ds.wake, ds.next_available


def _pkey(pod: Obj) -> PodKey:
    m = pod["metadata"]
    return m["namespace"], m["name"]


class DaemonSetController(WorkloadStep):
    """The DaemonSet controller as the manager runs it."""

    reconciler: DaemonSetReconciler

    def __init__(self) -> None:
        super().__init__(DaemonSetReconciler())

    @property
    def _nodes(self) -> dict[str, Obj]:
        return self.reconciler._nodes  # what a test reads of the nodes it kept

    def revisions(self, namespace: str, name: str) -> list[Obj]:
        return self.reconciler.revisions(namespace, name)
