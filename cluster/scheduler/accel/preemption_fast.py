"""The preemption dry run as array operations, for pods only resources can place.

Owns a vectorised equivalent of ``preemption.dry_run`` followed by ``pick_one_node``
for the common case the scheduler host recognises (``SchedulerHost.resources_decide``:
no inter-pod terms, host ports or hard spread constraints, in-tree filters only) when no
PodDisruptionBudget exists. Then a node's verdict depends only on its resources and on
the preemptor's priority and requests (its *kind*), so:

1. per node: "fits with every lower-priority pod removed" (with the nominated pods of
   equal or higher priority added), and if so the victims after the reprieve and the
   four numbers pickOneNodeForPreemption compares (highest victim priority, their sum,
   their count, the earliest start among the highest-priority ones);
2. those verdicts are memoised per kind and per node, and recomputed only for nodes
   whose version (``Cache.node_versions``: bumped by any pod placed or removed, any
   nomination, an allocatable change, a start time appearing) moved since. A wave of
   preemptors of one kind thus pays for the one or two nodes the previous preemption
   changed, not for thousands;
3. the walk from the offset takes the first ``wanted`` nodes whose verdict is "fits"
   (with no PDB every candidate is PDB-respecting, so upstream's walk stops exactly there),
   computing stale verdicts chunk by chunk as it goes;
4. the pick is a few vector reductions over the candidates' memoised numbers.

It returns the same node and the same victims as the per-node code (a test checks this
on random clusters, also across a sequence of changes with one memo), or None when it
cannot decide, and the per-node code runs instead. One departure: a pod without a start
time sorts as starting after every other pod (upstream uses "now", which only differs
for a start time in the scheduler's future). Called by ``SchedulerHost.fast_candidate``.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...api.placement import fits as placement_fits
from ...api.placement import fits_rows
from ..cache import Cache, PodInfo, Snapshot
from ..podtable import PodTable
from ..priorityload import PriorityLoad

_PRIORITY_SHIFT = 2**31
_SMALL = 64  # below this many nodes to recompute, gather their pods from the NodeInfos
_ONE_BY_ONE = 4  # up to this many, recompute them in plain Python (``_compute_one``)
_MAX_KINDS = 16


class _Verdicts:
    """The memoised verdicts of one preemptor kind, indexed by stable node id."""

    def __init__(self, size: int):
        self.seen = np.full(size, -1, dtype=np.int64)  # node version they were computed at
        self.fits = np.zeros(size, dtype=bool)  # a candidate: lower pods exist and removing them fits
        self.none_needed = np.zeros(size, dtype=bool)  # a candidate whose reprieve kept every pod
        self.top = np.zeros(size, dtype=np.int64)
        self.total = np.zeros(size, dtype=np.float64)
        self.number = np.zeros(size, dtype=np.int64)
        self.earliest = np.full(size, np.nan)  # over the top-priority victims with a start time
        self.undated = np.zeros(size, dtype=bool)  # a top-priority victim has no start time
        self.victims: dict[int, list[PodInfo]] = {}

    def grow(self, size: int) -> None:
        if size <= len(self.seen):
            return
        size = max(size, 2 * len(self.seen))
        for name, fill in (
            ("seen", -1),
            ("fits", False),
            ("none_needed", False),
            ("top", 0),
            ("total", 0.0),
            ("number", 0),
            ("earliest", np.nan),
            ("undated", False),
        ):
            old = getattr(self, name)
            new = np.full(size, fill, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)


class DryRunMemo:
    """Verdicts per preemptor kind (its signature and priority: ``signature.py``), the
    least recently used dropped."""

    def __init__(self, max_kinds: int = _MAX_KINDS) -> None:
        self._kinds: OrderedDict[tuple[bytes, int], _Verdicts] = OrderedDict()
        self._max = max_kinds

    def verdicts(self, pod: PodInfo, signature: bytes, size: int) -> _Verdicts:
        key = (signature, pod.priority)
        v = self._kinds.get(key)
        if v is None:
            v = self._kinds[key] = _Verdicts(max(size, 64))
            if len(self._kinds) > self._max:
                self._kinds.popitem(last=False)
        else:
            self._kinds.move_to_end(key)
        v.grow(size)
        return v


def fast_candidate(
    cache: Cache,
    memo: DryRunMemo,
    pod: PodInfo,
    nominated_load: PriorityLoad | None,
    own_node: str | None,
    potential: np.ndarray,
    offset: int,
    wanted: int,
    now: float,
    signature: bytes,
    chunk: int = 0,
) -> tuple[int, list[PodInfo]] | None:
    """(node index, victim PodInfos most important first), or None to defer.

    ``nominated_load`` is the nominated pods' ``PriorityLoad``; ``own_node`` the node the
    preemptor itself is nominated to (its own load must not count against it there, so
    that node's verdict is computed afresh and not memoised); ``chunk`` is how many nodes
    the walk looks at per step (0: enough for ``wanted`` with room to spare)."""
    snap = cache.snapshot()
    ids = cache.row_ids()
    versions = cache.node_versions()
    memo_v = memo.verdicts(pod, signature, len(versions))
    own_row = own_info.index if own_node and (own_info := cache.node_info(own_node)) else -1
    chunk = chunk or max(2 * wanted, 1024)
    found: list[np.ndarray] = []
    taken = 0
    own: _Verdicts | None = None
    for start in range(0, len(potential), chunk):
        rows = _window(potential, offset, start, chunk)
        keys = ids[rows]
        moved = memo_v.seen[keys] != versions[keys]
        stale = rows[moved & (rows != own_row)] if own_row >= 0 else rows[moved]
        if len(stale):
            _compute(cache, snap, memo_v, pod, nominated_load, stale, versions, "")
        fits = memo_v.fits[keys]
        if own_row >= 0 and own is None and (at := np.flatnonzero(rows == own_row)).size:
            own = _Verdicts(1)
            _compute(cache, snap, own, pod, nominated_load, np.array([own_row]), None, pod.uid)
            fits[at[0]] = own.fits[0]
        found.append(rows[np.flatnonzero(fits)[: wanted - taken]])
        taken += len(found[-1])
        if taken >= wanted:
            break
    cand = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    if len(cand) == 0:
        return None  # the per-node code explains the failure
    return _pick(memo_v, own, ids, cand, own_row, now)


def _window(potential: np.ndarray, offset: int, start: int, chunk: int) -> np.ndarray:
    """Positions ``start`` to ``start + chunk`` of ``potential`` walked from ``offset`` (as
    ``np.roll(potential, -offset)`` reads), without copying the whole walk: the first
    chunk usually holds every candidate wanted."""
    n = len(potential)
    lo, hi = offset + start, offset + min(start + chunk, n)
    if hi <= n:
        return potential[lo:hi]
    if lo >= n:
        return potential[lo - n : hi - n]
    return np.concatenate((potential[lo:], potential[: hi - n]))


def _pick(
    memo_v: _Verdicts, own: _Verdicts | None, ids: np.ndarray, cand: np.ndarray, own_row: int, now: float
) -> tuple[int, list[PodInfo]] | None:
    """pickOneNodeForPreemption over the candidates (no PDBs: criterion 1 ties)."""
    keys = ids[cand]
    cols = [getattr(memo_v, name)[keys] for name in ("none_needed", "top", "total", "number", "earliest", "undated")]
    if own is not None and (at := np.flatnonzero(cand == own_row)).size:
        for col, name in zip(cols, ("none_needed", "top", "total", "number", "earliest", "undated")):
            col[at[0]] = getattr(own, name)[0]
    none_needed, top, total, number, earliest, undated = cols
    if none_needed.any():
        return None  # a candidate needing no victim: leave that oddity to the per-node code
    # A victim without a start time counts as starting now, as upstream.
    earliest = np.where(undated, np.fmin(earliest, now), earliest)
    # The fewest top priority, then the least sum, then the fewest victims, then the
    # latest start; the first in walk order among ties. A criterion all candidates tie on
    # (a wave's nodes all alike) costs two reductions.
    remaining: np.ndarray | None = None  # None: every candidate
    for score, least in ((top, True), (total, True), (number, True), (earliest, False)):
        s = score if remaining is None else score[remaining]
        lo, hi = s.min(), s.max()
        if lo == hi:
            continue
        keep = np.flatnonzero(s == (lo if least else hi))
        remaining = keep if remaining is None else remaining[keep]
        if len(remaining) == 1:
            break
    best = int(cand[0 if remaining is None else remaining[0]])
    victims = own.victims[0] if own is not None and best == own_row else memo_v.victims[int(ids[best])]
    return best, list(victims)


def _compute(
    cache: Cache,
    snap: Snapshot,
    out: _Verdicts,
    pod: PodInfo,
    nominated_load: PriorityLoad | None,
    rows: np.ndarray,
    versions: np.ndarray | None,
    exclude_uid: str,
) -> None:
    """Fill ``out`` for ``rows``: at their stable ids (``versions`` given), or at 0, 1, ...
    (``versions`` None: a one-off computation)."""
    if len(rows) <= _ONE_BY_ONE:
        keys = cache.row_ids()[rows] if versions is not None else range(len(rows))
        for row, key in zip(rows.tolist(), keys):
            _compute_one(cache, snap, out, pod, nominated_load, row, int(key), exclude_uid)
            if versions is not None:
                out.seen[key] = versions[key]
        return
    cols = [col for col, _ in pod.req_cols]
    need = np.array([amount for _, amount in pod.req_cols], dtype=np.int64)
    keys = cache.row_ids()[rows] if versions is not None else np.arange(len(rows))
    lower = cache.placed_load.totals(cols, below=pod.priority, rows=rows)
    low_req, low_count = lower if lower is not None else (0, np.zeros(len(rows), dtype=np.int64))
    free = snap.allocatable[rows][:, cols] - snap.requested[rows][:, cols] + low_req
    count = snap.pod_count[rows] - low_count
    nominated = (
        None
        if nominated_load is None
        else nominated_load.totals(cols, at_least=pod.priority, exclude_uid=exclude_uid, rows=rows)
    )
    if nominated is not None:
        free -= nominated[0]
        count += nominated[1]
    fits = (low_count > 0) & fits_rows(free, need, count, snap.allowed_pods[rows])
    out.fits[keys] = fits
    out.none_needed[keys] = False
    for key in keys:
        out.victims.pop(int(key), None)
    if versions is not None:
        out.seen[keys] = versions[keys]
    at = np.flatnonzero(fits)
    if len(at):
        _victims(cache, snap, out, pod, rows[at], keys[at], free[at], count[at], cols, need)


def _compute_one(
    cache: Cache,
    snap: Snapshot,
    out: _Verdicts,
    pod: PodInfo,
    nominated_load: PriorityLoad | None,
    row: int,
    key: int,
    exclude_uid: str,
) -> None:
    """``_compute`` for one node in plain Python: after a preemption only a node or two
    changed, and array set-up would cost more than the arithmetic."""
    cols = [col for col, _ in pod.req_cols]
    need = [amount for _, amount in pod.req_cols]
    alloc, used = snap.allocatable[row], snap.requested[row]
    free = {col: int(alloc[col]) - int(used[col]) for col in cols}
    count = int(snap.pod_count[row])
    table, prio = cache.table, pod.priority
    lower = [p for p in snap.node_info(row).pods.values() if p.priority < prio]
    for p in lower:
        count -= 1
        for col, amount in p.req_cols:
            if col in free:
                free[col] += amount
    if nominated_load is not None:
        for _, req_cols in nominated_load.held_on(cache.row_ids()[row], prio, exclude_uid):
            count += 1
            for col, amount in req_cols:
                if col in free:
                    free[col] -= amount
    allowed = int(snap.allowed_pods[row])
    fits = bool(lower) and placement_fits(zip(cols, need), free.__getitem__, count, allowed)
    out.fits[key], out.none_needed[key] = fits, False
    out.victims.pop(key, None)
    if not fits:
        return
    victims = []
    for p in sorted(lower, key=lambda p: _importance(table, p)):
        trial = dict(free)
        for col, amount in p.req_cols:
            if col in trial:
                trial[col] -= amount
        if placement_fits(zip(cols, need), trial.__getitem__, count + 1, allowed):  # it and the preemptor
            free, count = trial, count + 1
        else:
            victims.append(p)
    _summarise(table, out, key, victims)


def _importance(table: PodTable, p: PodInfo) -> tuple[int, float, int]:
    slot = table.slot_of(p.uid)
    start = float(table.start[slot])
    return -p.priority, np.inf if start != start else start, int(table.seq[slot])


def _summarise(table: PodTable, out: _Verdicts, key: int, victims: list[PodInfo]) -> None:
    out.victims[key] = victims
    out.number[key] = len(victims)
    out.none_needed[key] = not victims
    if not victims:
        return
    top = max(p.priority for p in victims)
    out.top[key] = top
    out.total[key] = float(sum(p.priority + _PRIORITY_SHIFT for p in victims))
    starts = [float(table.start[table.slot_of(p.uid)]) for p in victims if p.priority == top]
    dated = [t for t in starts if t == t]
    out.earliest[key] = min(dated) if dated else np.nan
    out.undated[key] = len(dated) < len(starts)


def _victims(
    cache: Cache,
    snap: Snapshot,
    out: _Verdicts,
    pod: PodInfo,
    rows: np.ndarray,
    keys: np.ndarray,
    free: np.ndarray,
    count: np.ndarray,
    cols: list[int],
    need: np.ndarray,
) -> None:
    """The reprieve on the fitting ``rows`` and the pick numbers of each."""
    table = cache.table
    slots, node_pos = _slots(cache, snap, pod, rows)
    victim = _reprieve(table.requests[slots][:, cols], node_pos, len(rows), free, count, need, snap.allowed_pods[rows])
    slots, node_pos = slots[victim], node_pos[victim]
    k = len(rows)
    prio = table.priority[slots]
    start = table.start[slots]
    top = np.full(k, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(top, node_pos, prio)
    number = np.bincount(node_pos, minlength=k)
    at_top = prio == top[node_pos]
    earliest = np.full(k, np.nan)
    np.fmin.at(earliest, node_pos[at_top], start[at_top])
    undated = np.zeros(k, dtype=bool)
    undated[node_pos[at_top & np.isnan(start)]] = True
    out.none_needed[keys] = number == 0
    out.top[keys] = top
    out.total[keys] = np.bincount(node_pos, weights=(prio + _PRIORITY_SHIFT).astype(np.float64), minlength=k)
    out.number[keys] = number
    out.earliest[keys] = earliest
    out.undated[keys] = undated
    bounds = np.searchsorted(node_pos, np.arange(k + 1)).tolist()
    pods, at = table.pods, slots.tolist()  # Python ints: indexing a list by numpy ints is slow
    for j, key in enumerate(keys.tolist()):
        out.victims[key] = [pods[s] for s in at[bounds[j] : bounds[j + 1]]]


def _slots(cache: Cache, snap: Snapshot, pod: PodInfo, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slots of the lower-priority pods on ``rows``, grouped by row in the given order,
    most important first within a group (priority, then start, then attach order)."""
    table = cache.table
    if len(rows) < _SMALL:
        slots: list[int] = []
        pos: list[int] = []
        for j, row in enumerate(rows):
            for p in snap.node_info(int(row)).pods.values():
                if p.priority < pod.priority:
                    slots.append(table.slot_of(p.uid))
                    pos.append(j)
        idx, node_pos = np.array(slots, dtype=np.int64), np.array(pos, dtype=np.int64)
    else:
        where = np.full(snap.num_nodes, -1, dtype=np.int64)
        where[rows] = np.arange(len(rows))
        used = slice(0, table.size)
        idx = np.flatnonzero((table.node_row[used] >= 0) & (table.priority[used] < pod.priority))
        node_pos = where[table.node_row[idx]]
        keep = node_pos >= 0
        idx, node_pos = idx[keep], node_pos[keep]
    start = np.where(np.isnan(table.start[idx]), np.inf, table.start[idx])
    order = np.lexsort((table.seq[idx], start, -table.priority[idx], node_pos))
    return idx[order], node_pos[order]


def _reprieve(
    req: np.ndarray,
    node_pos: np.ndarray,
    k: int,
    free: np.ndarray,
    count: np.ndarray,
    need: np.ndarray,
    allowed: np.ndarray,
) -> np.ndarray:
    """Victim flag per slot: each pod is put back, most important first, if the pod still
    fits. The slots are laid out as a (node, rank) grid so that one step handles the r-th
    pod of every node at once."""
    first = np.searchsorted(node_pos, np.arange(k))
    rank = np.arange(len(node_pos)) - first[node_pos]
    depth = int(rank.max()) + 1 if len(rank) else 0
    grid = np.zeros((k, depth, req.shape[1]), dtype=np.int64)
    grid[node_pos, rank] = req
    present = np.zeros((k, depth), dtype=bool)
    present[node_pos, rank] = True
    back = np.zeros((k, depth), dtype=bool)
    room, pods = free.copy(), count.copy()
    for r in range(depth):
        trial = room - grid[:, r]
        ok = present[:, r] & fits_rows(trial, need, pods + 1, allowed)  # the pod put back and the preemptor
        room[ok] = trial[ok]
        pods += ok
        back[:, r] = ok
    kept: np.ndarray = back[node_pos, rank]
    return ~kept
