"""The ReplicaSet controller: keep ``spec.replicas`` active pods per ReplicaSet.

Owns what upstream's ``pkg/controller/replicaset`` decides: which pods a ReplicaSet counts,
how many it creates or deletes and which it deletes first (``deletion_order``), and the
status it reports (``replicaset_status``). The shared machinery (ownership index,
claiming, expectations, the sync loop) is ``workload.WorkloadController``.

Who calls it: the controller-manager actor feeds it ReplicaSet and Pod watch events
(``on_event``), calls ``sync(now)`` after each batch and sends the returned ``Writes``
(``workload.Writes`` says which call takes which list); it arms a timer for
``next_wakeup()`` (expectation timeouts, failure backoff, minReadySeconds).

A ReplicaSet moves through the states of the table in ``workload`` (expectations
satisfied, pending, expired; backing off; terminating; deleted). The rules, as upstream
applies them:

- A ReplicaSet's pods are those whose controller ownerReference names it (kind, uid);
  an orphan (no controller) in its namespace that matches ``spec.selector`` is adopted,
  an owned pod that no longer matches is released (both by updating the pod), and a pod
  controlled by anything else is ignored.
- Counted ("active") pods are neither Succeeded/Failed nor terminating: a pod stuck
  Terminating on a dead node is replaced at once.
- Too few: create ``replicas - active`` pods from ``spec.template`` (``generateName:
  <name>-``), in slow-start batches (see ``workload``), at most 500 per sync.
- Too many: delete the excess, at most 500 per sync, first by ``deletion_order``.
- While creates or deletes asked for are not yet observed (expectations), the
  ReplicaSet is not managed again; its status still is.
- Status: ``replicas`` (active), ``fullyLabeledReplicas`` (active pods carrying every
  template label), ``readyReplicas`` (Ready=True), ``availableReplicas`` (ready for
  ``minReadySeconds``), ``observedGeneration`` (when the object has a generation); other
  status fields are kept, and a status is written only when it changed.
- A deleted ReplicaSet's pods are the garbage collector's (``garbagecollector.py``),
  through their ownerReferences, as the delete's propagation policy says.

Deviations: no ``ReplicaFailure`` condition (failures show as ``FailedCreate`` /
``FailedDelete`` Events); ``SuccessfulDelete`` is recorded when the delete is asked for.
"""

from __future__ import annotations

import heapq
import math
import operator
from functools import cmp_to_key

from ..api.objects import labels_of, node_name_of, phase_of, uid_of
from ..clock import parse_timestamp
from .workload import (
    BURST_REPLICAS,
    SUCCESSFUL_DELETE,
    OwnerState,
    PodKey,
    WorkloadController,
    Writes,
    available_at,
    is_pod_active,
    is_pod_ready,
    ready_since,
)

__all__ = ["ReplicaSetController", "deletion_order", "pods_to_delete", "replicaset_status", "DELETION_COST"]

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# Upstream's podPhaseToOrdinal; a phase missing from it (none of an active pod's) is 0.
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_ZERO = (0, 0, 0)


# ---- which pods go first when scaling down -------------------------------------------


class _Ranked:
    """One pod with the facts upstream's ActivePodsWithRanks compares."""

    __slots__ = (
        "pod",
        "key",
        "node",
        "phase",
        "ready",
        "cost",
        "rank",
        "prefix",
        "ready_time",
        "restarts",
        "created",
        "uid",
        "at",
        "ready_bucket",
        "created_bucket",
    )

    def __init__(self, pod: dict, rank: int = 0):
        self.pod, self.rank, self.key = pod, rank, _pod_key(pod)
        self.prefix: tuple = ()  # criteria 1-5 as one tuple, set with the rank (``_ranked``)
        self.node = node_name_of(pod)
        self.phase = _PHASE_ORDINAL.get(phase_of(pod), 0)
        self.ready = is_pod_ready(pod)
        self.cost = _deletion_cost(pod)
        self.ready_time = ready_since(pod) if self.ready else None
        statuses = (pod.get("status") or {}).get("containerStatuses") or ()
        self.restarts = max((s.get("restartCount") or 0 for s in statuses), default=0)
        stamp = (pod.get("metadata") or {}).get("creationTimestamp")
        self.created = parse_timestamp(stamp) if stamp else None
        self.uid = uid_of(pod)
        self.at: float | None = None  # the time ``ready_bucket`` and ``created_bucket`` are for
        self.ready_bucket = self.created_bucket = -1

    def buckets(self, now: float) -> None:
        """The log2 ranks of the ready and creation times at ``now``, computed once per
        pod and ``now`` instead of at every comparison."""
        self.at, self.ready_bucket, self.created_bucket = now, _bucket(self.ready_time, now), _bucket(self.created, now)


def _deletion_cost(pod: dict) -> int:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST)
    try:
        cost = int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0  # upstream ignores an unparsable cost
    return cost if -(2**31) <= cost < 2**31 else 0


def _sign(less: bool) -> int:
    return -1 if less else 1


def _bucket(t: float | None, now: float) -> int:
    """Upstream's LogarithmicScaleDown rank of a time: the integer log2 of its age in
    nanoseconds (-1 for none yet)."""
    return int(math.log2((now - t) * 1e9)) if t is not None and now > t else -1


def _by_time(t1: float | None, t2: float | None, r1: int, r2: int, a: _Ranked, b: _Ranked) -> int:
    """Newer first (a missing time first of all), on the log2 scale (``r1``, ``r2``: the
    buckets of ``t1`` and ``t2``): times in one bucket tie, and ties go by uid
    (pseudo-random, as upstream intends, yet stable for a seeded run)."""
    if t1 is None or t2 is None:
        return _sign(t1 is None)
    if r1 == r2:
        return 0 if a.uid == b.uid else _sign(a.uid < b.uid)
    return _sign(r1 < r2)


def _compare(a: _Ranked, b: _Ranked, now: float) -> int:
    """Negative when ``a`` should be deleted before ``b`` (upstream ActivePodsWithRanks.Less)."""
    if a.node != b.node and (not a.node or not b.node):
        return _sign(not a.node)  # 1. unassigned first
    if a.phase != b.phase:
        return _sign(a.phase < b.phase)  # 2. Pending, then Unknown, then Running
    if a.ready != b.ready:
        return _sign(not a.ready)  # 3. not ready first
    if a.cost != b.cost:
        return _sign(a.cost < b.cost)  # 4. lower pod-deletion-cost first
    if a.rank != b.rank:
        return _sign(a.rank > b.rank)  # 5. more siblings on the same node first
    if a.at != now:
        a.buckets(now)
    if b.at != now:
        b.buckets(now)
    return _compare_times(a, b)


def _compare_times(a: _Ranked, b: _Ranked) -> int:
    """Criteria 6-8 of ``_compare``, for pods tied on 1-5 with their buckets computed."""
    if a.ready and b.ready and a.ready_time != b.ready_time:
        return _by_time(
            a.ready_time, b.ready_time, a.ready_bucket, b.ready_bucket, a, b
        )  # 6. ready for less time first
    if a.restarts != b.restarts:
        return _sign(a.restarts > b.restarts)  # 7. more restarts first
    if a.created != b.created:
        return _by_time(a.created, b.created, a.created_bucket, b.created_bucket, a, b)  # 8. newer first
    return 0


def deletion_order(pods: list[dict], now: float) -> list[dict]:
    """``pods`` (one ReplicaSet's active pods), the ones to delete first first.

    The rank of a pod is how many of the given pods share its node (upstream ranks by
    the active pods of the ReplicaSet and its Deployment siblings; kubemu ranks by the
    ReplicaSet's own). Input is put in key order first, so the result is deterministic.
    """
    return [r.pod for r in _first(_ranked(pods, {}), len(pods), now)]


def pods_to_delete(pods: list[dict], count: int, now: float, facts: dict | None = None) -> list[dict]:
    """The ``count`` pods to delete; all of them, unsorted, when that is every pod (as upstream).

    The first ``count`` of ``deletion_order`` without ordering the rest (``_first``).
    ``facts`` (id of a pod -> ``_Ranked``, kept by the caller between bursts) spares re-reading
    the pods that did not change since; it is replaced by the facts of these pods. Where
    the order is no strict weak order (two different times in one log2 bucket tie by uid,
    equal times go on to the next fact, as upstream's Less does) the victims may differ
    from a full sort's, as they may between two sorting algorithms upstream; kubemu takes
    uid order there when that agrees with every verdict that is not a tie (``_time_keys``).
    """
    if count >= len(pods):
        return list(pods)
    ranked = _ranked(pods, {} if facts is None else facts)
    if facts is not None:
        facts.clear()
        facts.update((id(r.pod), r) for r in ranked)
    return [r.pod for r in _first(ranked, count, now)]


def _first(ranked: list[_Ranked], count: int, now: float) -> list[_Ranked]:
    """The first ``count`` in deletion order. Criteria 1-5 (assigned, phase, ready, cost,
    rank) are plain values compared in turn, so they make one tuple; only pods that tie
    on all five need the time rules; groups after the one where ``count`` falls are
    neither ordered nor sorted (a scale-down by a few hundred of a ReplicaSet of
    thousands orders few of its pods)."""
    groups: dict[tuple, list[_Ranked]] = {}
    for r in ranked:
        groups.setdefault(r.prefix, []).append(r)
    out: list[_Ranked] = []
    for prefix in sorted(groups):
        group, need = groups[prefix], count - len(out)
        if _alike(group):
            # Tied on every time fact too (pods started together, as a rollout's are): the
            # time rules all tie, so key order decides, and only ``need`` pods are ordered.
            group = heapq.nsmallest(need, group, key=_KEY_OF)
        else:
            group.sort(key=_KEY_OF)
            for r in group:
                if r.at != now:
                    r.buckets(now)
            keys = _time_keys(group)
            if keys is None:
                group = heapq.nsmallest(need, group, key=_BY_TIMES)
            else:  # the same pods, by plain tuples (stable, as nsmallest with a key is)
                group = [group[i] for _, i in heapq.nsmallest(need, zip(keys, range(len(group))))]
        out += group[:need]
        if len(out) >= count:
            break
    return out


def _alike(group: list[_Ranked]) -> bool:
    """Whether the pods of a group (tied on criteria 1-5) have one ready time, one restart
    count and one creation time, so that criteria 6-8 tie for every pair."""
    first = group[0]
    facts = (first.ready_time, first.restarts, first.created)
    return all((r.ready_time, r.restarts, r.created) == facts for r in group)


def _time_keys(group: list[_Ranked]) -> list[tuple] | None:
    """Sort keys for ``group`` (pods tied on criteria 1-5, their buckets computed) that agree
    with every verdict of ``_compare``, or None where no key can and the comparator decides.

    Pods are split into cells by a time's log2 bucket. Within a cell ``_compare`` goes by
    uid when the times all differ, and on to the next rules when they are all equal; both
    are plain keys, exactly the comparator's order. Where some times are equal and some
    not, the comparator is no strict weak order (upstream's Less is the same, so its result
    depends on the sorting algorithm); when the next rules only ever tie or go by uid there
    too, uid order agrees with every verdict that is not a tie, and kubemu takes it.
    """
    if group[0].ready:  # 6. ready time (criterion 3 put every pod of the group on one side)
        return _cells(group, lambda r: r.ready_time, lambda r: r.ready_bucket, _after_ready, _uid_agrees)
    return _after_ready(group)


def _uid_agrees(cell: list[_Ranked]) -> bool:
    """Whether pods of one ready-time cell that tie on the time go on to uid or a tie only:
    the same restarts, and creation times on one side of None and in one bucket."""
    first = cell[0]
    facts = (first.restarts, first.created is None, first.created_bucket)
    return all((r.restarts, r.created is None, r.created_bucket) == facts for r in cell)


def _after_ready(cell: list[_Ranked]) -> list[tuple] | None:
    """Keys for pods tied up to the ready time: 7. more restarts first, 8. newer first."""
    by_restarts: dict[int, list[int]] = {}
    for i, r in enumerate(cell):
        by_restarts.setdefault(r.restarts, []).append(i)
    keys: list[tuple] = [()] * len(cell)
    for restarts, idx in by_restarts.items():
        same = [cell[i] for i in idx]
        sub = _cells(same, lambda r: r.created, lambda r: r.created_bucket, lambda c: [()] * len(c), lambda c: True)
        if sub is None:
            return None
        for i, k in zip(idx, sub):
            keys[i] = (-restarts, k)
    return keys


def _cells(group: list[_Ranked], time, bucket, equal_times, uid_agrees) -> list[tuple] | None:
    """Keys by ``time`` on ``_by_time``'s log2 scale (a missing time first); ``equal_times``
    gives the keys within a cell whose times are all equal, ``uid_agrees`` says whether
    uid order may serve a cell whose times are partly equal."""
    cells: dict[tuple, list[int]] = {}
    for i, r in enumerate(group):
        t = time(r)
        cells.setdefault((t is not None, bucket(r) if t is not None else -1), []).append(i)
    keys: list[tuple] = [()] * len(group)
    for cell, idx in cells.items():
        distinct = len({time(group[i]) for i in idx})
        if distinct == len(idx):
            sub: list[tuple] | None = [(group[i].uid,) for i in idx]
        elif distinct == 1:
            sub = equal_times([group[i] for i in idx])
        elif uid_agrees([group[i] for i in idx]):
            sub = [(group[i].uid,) for i in idx]
        else:
            return None
        if sub is None:
            return None
        for i, k in zip(idx, sub):
            keys[i] = (cell, k)
    return keys


_BY_TIMES = cmp_to_key(_compare_times)  # within a group tied on criteria 1-5
_KEY_OF = operator.attrgetter("key")


def _pod_key(pod: dict) -> tuple[str, str]:
    m = pod.get("metadata") or {}
    return m.get("namespace", ""), m.get("name", "")


def _ranked(pods: list[dict], facts: dict) -> list[_Ranked]:
    """``pods`` as ``_Ranked`` with their ranks, reusing ``facts`` of the very same pod
    objects (an update replaces the object, so identity means unchanged; ``facts`` is keyed
    by ``id``, which no other live object can share while its ``_Ranked`` holds the pod).
    A reused pod whose rank did not change keeps its prefix tuple."""
    on_node: dict[str, int] = {}
    ranked = []
    for p in pods:
        r = facts.get(id(p))
        if r is None:
            r = _Ranked(p)
        node = r.node
        on_node[node] = on_node.get(node, 0) + 1
        ranked.append(r)
    for r in ranked:
        rank = on_node[r.node]
        if rank != r.rank or not r.prefix:
            r.rank = rank
            r.prefix = (1 if r.node else 0, r.phase, 1 if r.ready else 0, r.cost, -rank)
    return ranked


# ---- the status ----------------------------------------------------------------------


def replicaset_status(rs: dict, pods: list[dict], now: float) -> dict:
    """The status for ``rs`` given its counted pods (active, owned, matching); for tests
    and one-off use, the controller keeps the same numbers incrementally."""
    spec = rs.get("spec") or {}
    tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = spec.get("minReadySeconds") or 0
    status = {
        **(rs.get("status") or {}),
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(1 for p in pods if _fully_labeled(tlabels.items(), p)),
        "readyReplicas": sum(1 for p in pods if is_pod_ready(p)),
        "availableReplicas": sum(1 for p in pods if _available(p, min_ready, now)),
    }
    generation = (rs.get("metadata") or {}).get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    return status


def _fully_labeled(template_labels, pod: dict) -> bool:
    labels = labels_of(pod)
    return all(labels.get(k) == v for k, v in template_labels)


def _available(pod: dict, min_ready: float, now: float) -> bool:
    at = available_at(pod, min_ready)
    return at is not None and at <= now


# ---- the controller ------------------------------------------------------------------


class _ReplicaSet(OwnerState):
    __slots__ = (
        "template_labels",
        "replicas",
        "min_ready",
        "active",
        "labeled",
        "ready",
        "next_available",
        "facts",
        "seen",
    )

    def configure(self) -> None:
        spec = self.obj.get("spec") or {}
        tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        self.template_labels = tuple(sorted(tlabels.items()))
        replicas = spec.get("replicas")
        self.replicas = 1 if replicas is None else replicas  # apps/v1 defaults to 1
        self.min_ready = spec.get("minReadySeconds") or 0
        self.active = self.labeled = self.ready = 0
        self.next_available: float | None = None
        self.facts: dict[int, _Ranked] = {}  # their deletion-ranking facts by id(pod) (pods_to_delete)
        self.seen: dict[PodKey, tuple[dict, tuple[int, int, int]]] = {}  # each owned pod and its counts


class ReplicaSetController(WorkloadController[_ReplicaSet]):
    """ReplicaSets and their pods; ``sync`` returns the writes that converge them.

    Incremental: a pod event updates its ReplicaSet's counters (active, fully labeled,
    ready) in O(1) and marks it dirty; a sync looks only at dirty ReplicaSets, and at a
    ReplicaSet's pods only to pick victims or, with minReadySeconds, to count available.
    """

    NAME = "replicaset"
    KIND = "ReplicaSet"
    COMPONENT = "replicaset-controller"
    STATUS_FIELD = "replicaset_status"
    kinds = ("ReplicaSet", "Pod")

    def _new_state(self, obj: dict) -> _ReplicaSet:
        return _ReplicaSet(obj)

    def _claimable(self, pod: dict) -> bool:
        return is_pod_active(pod)  # upstream claims among active pods only

    def _rebuild(self, rs: _ReplicaSet) -> None:
        rs.configure()
        rs.release = set()
        for key, pod in self._index.owned(rs.uid).items():
            self._pod_changed(rs, key, None, pod)

    def _counts(self, rs: _ReplicaSet, pod: dict) -> tuple[int, int, int]:
        if not is_pod_active(pod) or not rs.selector.matches(labels_of(pod)):
            return _ZERO
        return 1, int(_fully_labeled(rs.template_labels, pod)), int(is_pod_ready(pod))

    def _rescaled(self, rs: _ReplicaSet) -> bool:
        replicas = (rs.obj.get("spec") or {}).get("replicas")
        rs.replicas = 1 if replicas is None else replicas
        return True

    def _pod_changed(self, rs: _ReplicaSet, key: PodKey, old: dict | None, new: dict | None) -> None:
        held = rs.seen.pop(key, None)
        if old is not None:
            # What ``old`` added when it came, unless the pod changed under another owner since.
            a, b, c = held[1] if held is not None and held[0] is old else self._counts(rs, old)
            rs.active, rs.labeled, rs.ready = rs.active - a, rs.labeled - b, rs.ready - c
        if new is not None:
            counts = a, b, c = self._counts(rs, new)
            rs.seen[key] = (new, counts)
            rs.active, rs.labeled, rs.ready = rs.active + a, rs.labeled + b, rs.ready + c
            if is_pod_active(new) and not a:
                rs.release.add(key)  # owned and active but no longer selected
                return
        rs.release.discard(key)

    def _counted(self, rs: _ReplicaSet) -> list[dict]:
        return [pod for pod, counts in rs.seen.values() if counts[0]]

    def _sync_owner(self, rs: _ReplicaSet, now: float, w: Writes) -> None:
        self._claim(rs, now, w)
        if self._may_manage(rs, now):
            self._manage(rs, now, w)
        self._write_status(rs, self._status(rs, now), w)

    def _manage(self, rs: _ReplicaSet, now: float, w: Writes) -> None:
        diff = rs.active - rs.replicas
        if diff < 0:
            n = min(-diff, BURST_REPLICAS)
            rs.exp.expect(n, (), now)
            w.pod_creates.extend(self._new_pod(rs) for _ in range(n))
            return
        if diff == 0:
            return
        victims = pods_to_delete(self._counted(rs), min(diff, BURST_REPLICAS), now, rs.facts)
        victims.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
        rs.exp.expect(0, [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in victims], now)
        for p in victims:
            m = p["metadata"]
            w.pod_deletes.append((m["namespace"], m["name"], m.get("uid", ""), None))
            self._event(rs, SUCCESSFUL_DELETE, f"Deleted pod: {m['name']}", now)

    def _status(self, rs: _ReplicaSet, now: float) -> dict:
        available, rs.next_available = rs.ready, None
        if rs.min_ready > 0 and rs.ready:
            available, times = 0, []
            for p in self._counted(rs):
                at = available_at(p, rs.min_ready)
                if at is not None and at <= now:
                    available += 1
                elif at is not None:
                    times.append(at)
            rs.next_available = min(times, default=None)
        status = {
            **(rs.obj.get("status") or {}),
            "replicas": rs.active,
            "fullyLabeledReplicas": rs.labeled,
            "readyReplicas": rs.ready,
            "availableReplicas": available,
        }
        if rs.generation is not None:
            status["observedGeneration"] = rs.generation
        return status

    def _wakeups(self, rs: _ReplicaSet, now: float) -> tuple[float | None, ...]:
        return (rs.next_available,)
