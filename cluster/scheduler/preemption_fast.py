"""The preemption dry run as array operations, for pods only resources can place.

Owns a vectorised equivalent of ``preemption.dry_run`` followed by ``pick_one_node``
for the common case the scheduler host recognises (``SchedulerHost.resources_decide``:
no inter-pod terms, host ports or hard spread constraints, in-tree filters only) when no
PodDisruptionBudget exists. Then a node's verdict depends only on its resources, so:

1. "fits with every lower-priority pod removed" is one pass over all nodes, with the
   lower-priority requests per node summed from the cache's ``PodTable``;
2. the first ``wanted`` such nodes in walk order are the candidates (with no PDB every
   candidate is PDB-respecting, so upstream's walk stops exactly there);
3. the reprieve runs rank by rank over all candidates at once: the k-th most important
   lower-priority pod of every candidate is put back where the pod still fits;
4. the pickOneNodeForPreemption criteria are vector reductions over the candidates.

It returns the same node and the same victims as the per-node code (a test checks this
on random clusters), or None when it cannot decide, and the per-node code runs instead.
Called by ``SchedulerHost.fast_candidate``.
"""
from __future__ import annotations

import numpy as np

from .cache import PodInfo, Snapshot
from .podtable import PodTable

_PRIORITY_SHIFT = 2 ** 31


def _free_after_removal(snap: Snapshot, pod: PodInfo, nominated, lower):
    """Per node: free room in the pod's columns and pod count with every lower-priority
    pod removed (``lower``) and the nominated pods of equal or higher priority added
    (``nominated``); both are ``PriorityLoad.totals`` in the pod's columns, or None."""
    n = snap.num_nodes
    cols = [col for col, _ in pod.req_cols]
    free = snap.allocatable[:, cols] - snap.requested[:, cols]
    count = snap.pod_count.copy()
    low_count = np.zeros(n, dtype=np.int64)
    if lower is not None:
        free += lower[0]
        low_count = lower[1]
        count -= low_count
    if nominated is not None:
        free -= nominated[0]
        count += nominated[1]
    return low_count, free, count, cols


def fast_candidate(table: PodTable, snap: Snapshot, pod: PodInfo, nominated, lower,
                   potential: np.ndarray, offset: int, wanted: int, now: float):
    """(node index, victim PodInfos most important first), or None to defer."""
    low_count, free, count, cols = _free_after_removal(snap, pod, nominated, lower)
    need = np.array([amount for _, amount in pod.req_cols], dtype=np.int64)
    fits = (free >= need).all(axis=1) & (count + 1 <= snap.allowed_pods)
    walk = np.roll(potential, -offset)
    ok = (low_count[walk] > 0) & fits[walk]
    cand = walk[ok][:wanted]
    if len(cand) == 0:
        return None  # the per-node code explains the failure
    used = slice(0, table.size)
    low = (table.node_row[used] >= 0) & (table.priority[used] < pod.priority)
    slots, node_pos = _candidate_slots(table, low, cand, snap.num_nodes, now)
    victim = _reprieve(table, slots, node_pos, cand, free, count, cols, need, snap.allowed_pods)
    if not np.bincount(node_pos[victim], minlength=len(cand)).all():
        return None  # a candidate needing no victim: leave that oddity to the per-node code
    best = _pick(table, slots[victim], node_pos[victim], len(cand), now)
    chosen = slots[victim][node_pos[victim] == best]
    return int(cand[best]), [table.pods[s] for s in chosen]


def _candidate_slots(table: PodTable, low: np.ndarray, cand: np.ndarray, n: int, now: float):
    """Slots of the candidates' lower-priority pods, grouped by candidate in walk order,
    most important first within a group (priority, then start, then attach order)."""
    pos = np.full(n, -1, dtype=np.int64)
    pos[cand] = np.arange(len(cand))
    idx = np.flatnonzero(low)
    node_pos = pos[table.node_row[idx]]
    keep = node_pos >= 0
    idx, node_pos = idx[keep], node_pos[keep]
    start = np.where(np.isnan(table.start[idx]), now, table.start[idx])
    order = np.lexsort((table.seq[idx], start, -table.priority[idx], node_pos))
    return idx[order], node_pos[order]


def _reprieve(table, slots, node_pos, cand, free, count, cols, need, allowed) -> np.ndarray:
    """Victim flag per slot: each pod is put back, most important first, if the pod still fits."""
    first = np.searchsorted(node_pos, np.arange(len(cand)))
    rank = np.arange(len(slots)) - first[node_pos]
    room = free[cand].copy()
    pods = count[cand].copy()
    cap = allowed[cand]
    req = table.requests[slots][:, cols]
    victim = np.zeros(len(slots), dtype=bool)
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        at = np.flatnonzero(rank == r)
        k = node_pos[at]
        trial = room[k] - req[at]
        back = (trial >= need).all(axis=1) & (pods[k] + 2 <= cap[k])
        room[k[back]] = trial[back]
        pods[k[back]] += 1
        victim[at[~back]] = True
    return victim


def _pick(table: PodTable, slots: np.ndarray, node_pos: np.ndarray, k: int, now: float) -> int:
    """pickOneNodeForPreemption over the candidates' victims (no PDBs: criterion 1 ties)."""
    prio = table.priority[slots]
    start = np.where(np.isnan(table.start[slots]), now, table.start[slots])
    top = np.full(k, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(top, node_pos, prio)
    total = np.bincount(node_pos, weights=(prio + _PRIORITY_SHIFT).astype(np.float64), minlength=k)
    number = np.bincount(node_pos, minlength=k)
    earliest = np.full(k, np.inf)
    at_top = prio == top[node_pos]
    np.minimum.at(earliest, node_pos[at_top], start[at_top])
    remaining = np.arange(k)
    for score in (-top, -total, -number, earliest):
        if len(remaining) == 1:
            break
        s = score[remaining]
        remaining = remaining[s == s.max()]
    return int(remaining[0])
