"""Which of a ReplicaSet's pods go first when it scales down (upstream's ActivePodsWithRanks).

Owns the ranking of ``pods_to_delete`` (a burst's victims) and ``deletion_order`` (the
whole order, for tests and one-off use), with upstream's criteria in turn: unassigned
first; Pending, then Unknown, then Running; not ready first; lower
``controller.kubernetes.io/pod-deletion-cost`` first; more siblings on the same node
first; then ready for less time, more restarts, newer, with LogarithmicScaleDown's log2
buckets of age, where two different times in one bucket go by uid. Called by
``replicaset.ReplicaSetController`` (each burst) and ``batchjob`` (a Job's excess pods).

The rank of a pod is how many of the given pods share its node (upstream ranks by the
active pods of the ReplicaSet and its Deployment siblings; kubemu ranks by the
ReplicaSet's own). A burst of a few hundred out of thousands orders only the groups and
time cells it takes from (``_first``); a caller may keep the pods' facts between bursts.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Callable
from functools import cmp_to_key

from ..api.objects import node_name_of, phase_of, uid_of
from ..clock import parse_timestamp
from .ownedpods import is_pod_ready, ready_since
from .reconciler import Obj

__all__ = ["DELETION_COST", "Ranked", "deletion_order", "pods_to_delete"]

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# A sort key by the time rules 6-8: nested tuples of plain values (cell, restarts, uid).
TimeKey = tuple["bool | int | str | TimeKey", ...]
# Upstream's podPhaseToOrdinal; a phase missing from it (none of an active pod's) is 0.
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


class Ranked:
    """One pod with the facts upstream's ActivePodsWithRanks compares (what a caller keeping
    facts between bursts holds, ``pods_to_delete``)."""

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

    def __init__(self, pod: Obj, rank: int = 0):
        self.pod, self.rank, self.key = pod, rank, _pod_key(pod)
        self.prefix: tuple[int, ...] = ()  # criteria 1-5 as one tuple, set with the rank (``_ranked``)
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


def _deletion_cost(pod: Obj) -> int:
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


def _by_time(t1: float | None, t2: float | None, r1: int, r2: int, a: Ranked, b: Ranked) -> int:
    """Newer first (a missing time first of all), on the log2 scale (``r1``, ``r2``: the
    buckets of ``t1`` and ``t2``): times in one bucket tie, and ties go by uid
    (pseudo-random, as upstream intends, yet stable for a seeded run)."""
    if t1 is None or t2 is None:
        return _sign(t1 is None)
    if r1 == r2:
        return 0 if a.uid == b.uid else _sign(a.uid < b.uid)
    return _sign(r1 < r2)


def _compare(a: Ranked, b: Ranked, now: float) -> int:
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


def _compare_times(a: Ranked, b: Ranked) -> int:
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


def deletion_order(pods: list[Obj], now: float) -> list[Obj]:
    """``pods`` (one ReplicaSet's active pods), the ones to delete first first.

    The rank of a pod is how many of the given pods share its node (upstream ranks by
    the active pods of the ReplicaSet and its Deployment siblings; kubemu ranks by the
    ReplicaSet's own). Input is put in key order first, so the result is deterministic.
    """
    return [r.pod for r in _first(_ranked(pods, {}), len(pods), now)]


def pods_to_delete(pods: list[Obj], count: int, now: float, facts: dict[int, Ranked] | None = None) -> list[Obj]:
    """The ``count`` pods to delete; all of them, unsorted, when that is every pod (as upstream).

    The first ``count`` of ``deletion_order`` without ordering the rest (``_first``).
    ``facts`` (id of a pod -> ``Ranked``, kept by the caller between bursts) spares re-reading
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


def _first(ranked: list[Ranked], count: int, now: float) -> list[Ranked]:
    """The first ``count`` in deletion order. Criteria 1-5 (assigned, phase, ready, cost,
    rank) are plain values compared in turn, so they make one tuple; only pods that tie
    on all five need the time rules; groups after the one where ``count`` falls are
    neither ordered nor sorted (a scale-down by a few hundred of a ReplicaSet of
    thousands orders few of its pods)."""
    groups: dict[tuple[int, ...], list[Ranked]] = {}
    for r in ranked:
        groups.setdefault(r.prefix, []).append(r)
    out: list[Ranked] = []
    for prefix in sorted(groups):
        group, need = groups[prefix], count - len(out)
        if _alike(group):
            # Tied on every time fact too (pods started together, as a rollout's are): the
            # time rules all tie, so key order decides, and only ``need`` pods are ordered.
            group = heapq.nsmallest(need, group, key=_KEY_OF)
        else:
            group = _first_by_times(group, need, now)
        out += group[:need]
        if len(out) >= count:
            break
    return out


def _first_by_times(group: list[Ranked], need: int, now: float) -> list[Ranked]:
    """The first ``need`` of a group tied on criteria 1-5, by the time rules 6-8.

    Two ready pods in different cells of ready time (no time first, then the log2 bucket,
    newest first) always go by the cell: never a tie, never uid. So the cells come whole, in
    their order, and only those up to the one where ``need`` falls are ordered: a burst of a
    few hundred out of thousands of pods ready over some minutes orders the newest cells.
    Where every cell has keys (``_time_keys``) this is exactly the order of keys over the
    whole group; a cell without keys goes by the comparator within itself."""
    for r in group:
        if r.at != now:
            r.buckets(now)
    if not group[0].ready:  # criterion 3 put every pod of the group on one side
        return _ordered(group, need)
    cells: dict[tuple[bool, int], list[Ranked]] = {}
    for r in group:
        timed = r.ready_time is not None
        cells.setdefault((timed, r.ready_bucket if timed else -1), []).append(r)
    out: list[Ranked] = []
    for cell in sorted(cells):
        out += _ordered(cells[cell], need - len(out))
        if len(out) >= need:
            break
    return out


def _ordered(pods: list[Ranked], need: int) -> list[Ranked]:
    """The first ``need`` of ``pods`` (tied on criteria 1-5, buckets computed): by their time
    keys where they have them (stable, as nsmallest with a key is), else by the comparator,
    both from key order."""
    pods.sort(key=_KEY_OF)
    keys = _time_keys(pods)
    if keys is None:
        return heapq.nsmallest(need, pods, key=_BY_TIMES)
    return [pods[i] for _, i in heapq.nsmallest(need, zip(keys, range(len(pods))))]


def _alike(group: list[Ranked]) -> bool:
    """Whether the pods of a group (tied on criteria 1-5) have one ready time, one restart
    count and one creation time, so that criteria 6-8 tie for every pair."""
    first = group[0]
    facts = (first.ready_time, first.restarts, first.created)
    return all((r.ready_time, r.restarts, r.created) == facts for r in group)


def _time_keys(group: list[Ranked]) -> list[TimeKey] | None:
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


def _uid_agrees(cell: list[Ranked]) -> bool:
    """Whether pods of one ready-time cell that tie on the time go on to uid or a tie only:
    the same restarts, and creation times on one side of None and in one bucket."""
    first = cell[0]
    facts = (first.restarts, first.created is None, first.created_bucket)
    return all((r.restarts, r.created is None, r.created_bucket) == facts for r in cell)


def _after_ready(cell: list[Ranked]) -> list[TimeKey] | None:
    """Keys for pods tied up to the ready time: 7. more restarts first, 8. newer first."""
    by_restarts: dict[int, list[int]] = {}
    for i, r in enumerate(cell):
        by_restarts.setdefault(r.restarts, []).append(i)
    keys: list[TimeKey] = [()] * len(cell)
    for restarts, idx in by_restarts.items():
        same = [cell[i] for i in idx]
        sub = _cells(same, lambda r: r.created, lambda r: r.created_bucket, lambda c: [()] * len(c), lambda c: True)
        if sub is None:
            return None
        for i, k in zip(idx, sub):
            keys[i] = (-restarts, k)
    return keys


def _cells(
    group: list[Ranked],
    time: Callable[[Ranked], float | None],
    bucket: Callable[[Ranked], int],
    equal_times: Callable[[list[Ranked]], list[TimeKey] | None],
    uid_agrees: Callable[[list[Ranked]], bool],
) -> list[TimeKey] | None:
    """Keys by ``time`` on ``_by_time``'s log2 scale (a missing time first); ``equal_times``
    gives the keys within a cell whose times are all equal, ``uid_agrees`` says whether
    uid order may serve a cell whose times are partly equal."""
    cells: dict[tuple[bool, int], list[int]] = {}
    for i, r in enumerate(group):
        t = time(r)
        cells.setdefault((t is not None, bucket(r) if t is not None else -1), []).append(i)
    keys: list[TimeKey] = [()] * len(group)
    for cell, idx in cells.items():
        distinct = len({time(group[i]) for i in idx})
        if distinct == len(idx):
            sub: list[TimeKey] | None = [(group[i].uid,) for i in idx]
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


def _pod_key(pod: Obj) -> tuple[str, str]:
    m = pod.get("metadata") or {}
    return m.get("namespace", ""), m.get("name", "")


def _ranked(pods: list[Obj], facts: dict[int, Ranked]) -> list[Ranked]:
    """``pods`` as ``Ranked`` with their ranks, reusing ``facts`` of the very same pod
    objects (an update replaces the object, so identity means unchanged; ``facts`` is keyed
    by ``id``, which no other live object can share while its ``Ranked`` holds the pod).
    A reused pod whose rank did not change keeps its prefix tuple."""
    on_node: dict[str, int] = {}
    ranked = []
    for p in pods:
        r = facts.get(id(p))
        if r is None:
            r = Ranked(p)
        node = r.node
        on_node[node] = on_node.get(node, 0) + 1
        ranked.append(r)
    for r in ranked:
        rank = on_node[r.node]
        if rank != r.rank or not r.prefix:
            r.rank = rank
            r.prefix = (1 if r.node else 0, r.phase, 1 if r.ready else 0, r.cost, -rank)
    return ranked
