"""What groups of pods hold, per node and priority, kept up to date as arrays.

Owns running totals for the resource shortcuts: for every priority value, the requests
and the pod count of a group of pods on each node, indexed by the cache's stable node
ids (so rows moving on node removal do not matter), plus how many of them carry
inter-pod terms or host ports. Two groups use it: the nominated pods (fed by
``PodNominator``; the two-pass filter and the preemption dry run ask for those of equal
or higher priority) and the pods placed on nodes (fed by ``Cache``; the dry run asks for
those of lower priority). Without it both would walk every pod on every cycle.

The arrays take changes in batches: a pod coming or going is noted at once in the
per-pod records and the node's version, and added into the arrays with every other
noted change when ``totals`` next reads them (or once ``FLUSH_AT`` are noted). Every
placed pod passes through here and the arrays are read only for nominations and
preemption, so scalar writes per pod were most of the cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .cache import Cache
    from .podinfo import PodInfo

# A pod's load as kept: (priority, node id, its requests by column, whether it has terms or ports)
Held = tuple[int, int, tuple[tuple[int, int], ...], bool]

FLUSH_AT = 4096  # noted changes added into the arrays without waiting for a reader
FEW = 16  # noted changes a flush adds one by one
FEW_ROWS = 4  # rows a ``totals`` call sums from the held pods, not the arrays


class PriorityLoad:
    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        self._req: dict[int, np.ndarray] = {}  # priority -> (ids, columns)
        self._count: dict[int, np.ndarray] = {}  # priority -> (ids,)
        self._special: dict[int, int] = {}  # priority -> pods with terms or host ports
        self._held: dict[str, Held] = {}  # uid -> (priority, node id, req_cols, special)
        self._on_node: dict[int, set[str]] = {}  # node id -> uids held there
        self._noted: list[tuple[Held, int]] = []  # (held, +1 or -1) not yet in the arrays

    def _arrays(self, prio: int, node_id: int) -> tuple[np.ndarray, np.ndarray]:
        ids = max(node_id + 1, self._cache.known_node_ids(), 64)
        cols = len(self._cache.columns.names)
        req = self._req.get(prio)
        if req is None or req.shape[0] < ids or req.shape[1] < cols:
            rows = max(ids, 0 if req is None else req.shape[0] * 2)
            grown = np.zeros((rows, cols), dtype=np.int64)
            count = np.zeros(rows, dtype=np.int64)
            if req is not None:
                grown[: req.shape[0], : req.shape[1]] = req
                count[: len(self._count[prio])] = self._count[prio]
            self._req[prio], self._count[prio] = grown, count
        return self._req[prio], self._count[prio]

    def add(self, pinfo: PodInfo, node_name: str) -> None:
        self.remove(pinfo.uid)
        node_id = self._cache.node_id(node_name)
        special = pinfo.terms is not None or bool(pinfo.host_ports)
        held: Held = (pinfo.priority, node_id, pinfo.req_cols, special)
        self._held[pinfo.uid] = held
        self._on_node.setdefault(node_id, set()).add(pinfo.uid)
        self._apply(held, 1)

    def remove(self, uid: str) -> None:
        held = self._held.pop(uid, None)
        if held is not None:
            here = self._on_node[held[1]]
            here.discard(uid)
            if not here:
                del self._on_node[held[1]]
            self._apply(held, -1)

    def _apply(self, held: Held, sign: int) -> None:
        prio, node_id, _, special = held
        self._cache.touch(node_id)
        if special:
            self._special[prio] = self._special.get(prio, 0) + sign
        self._noted.append((held, sign))
        if len(self._noted) >= FLUSH_AT:
            self._flush()

    def _flush(self) -> None:
        """Add every noted change into the arrays: a few one by one, more with one
        ``np.add.at`` per priority (whose fixed cost a nomination or two, read every
        cycle while pods are nominated, would not repay)."""
        noted, self._noted = self._noted, []
        if len(noted) <= FEW:
            for (prio, node_id, req_cols, _), sign in noted:
                req, count = self._arrays(prio, node_id)
                count[node_id] += sign
                for col, amount in req_cols:
                    req[node_id, col] += sign * amount
            return
        by_prio: dict[int, tuple[list[int], list[int], list[int], list[int], list[int]]] = {}
        for (prio, node_id, req_cols, _), sign in noted:
            ids, signs, req_ids, req_cols_at, amounts = by_prio.setdefault(prio, ([], [], [], [], []))
            ids.append(node_id)
            signs.append(sign)
            for col, amount in req_cols:
                req_ids.append(node_id)
                req_cols_at.append(col)
                amounts.append(sign * amount)
        for prio, (ids, signs, req_ids, req_cols_at, amounts) in by_prio.items():
            req, count = self._arrays(prio, max(ids))
            np.add.at(count, ids, signs)
            if amounts:
                np.add.at(req, (req_ids, req_cols_at), amounts)

    def held_on(self, node_id: int, at_least: int, exclude_uid: str = "") -> list[tuple[Any, ...]]:
        """(priority, req_cols) of the pods held on one node with priority >= ``at_least``,
        without ``exclude_uid``: ``totals`` for a single node, without arrays."""
        held = self._held
        return [
            held[uid][0::2] for uid in self._on_node.get(node_id, ()) if uid != exclude_uid and held[uid][0] >= at_least
        ]

    def special_at_or_above(self, priority: int) -> bool:
        return any(n > 0 for p, n in self._special.items() if p >= priority)

    def totals(
        self,
        cols: list[int],
        at_least: int | None = None,
        below: int | None = None,
        exclude_uid: str = "",
        rows: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """(requests per row in ``cols``, pods per row) of the pods whose priority is
        ``>= at_least`` or ``< below``, without ``exclude_uid``; None when there are none.
        With ``rows``, only those snapshot rows, in that order."""
        if rows is not None and len(rows) <= FEW_ROWS:
            return self._totals_of_few(cols, at_least, below, exclude_uid, rows)
        return self._totals_of_arrays(cols, at_least, below, exclude_uid, rows)

    def _totals_of_arrays(
        self, cols: list[int], at_least: int | None, below: int | None, exclude_uid: str, rows: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if self._noted:
            self._flush()
        if at_least is not None:
            prios = [p for p in self._req if p >= at_least]
        else:
            assert below is not None  # callers pass exactly one of at_least / below
            prios = [p for p in self._req if p < below]
        if not prios:
            return None
        ids = self._cache.row_ids()
        if rows is not None:
            ids = ids[rows]
        req = np.zeros((len(ids), len(cols)), dtype=np.int64)
        count = np.zeros(len(ids), dtype=np.int64)
        known = self._cache.known_node_ids()
        for p in prios:
            r, c = self._req[p], self._count[p]
            if len(c) >= known:  # the usual case: every row's id is inside the arrays
                count += c[ids]
                for j, col in enumerate(cols):
                    if col < r.shape[1]:
                        req[:, j] += r[ids, col]
                continue
            valid = ids < len(c)
            at = ids[valid]
            count[valid] += c[at]
            for j, col in enumerate(cols):
                if col < r.shape[1]:
                    req[valid, j] += r[at, col]
        own = self._held.get(exclude_uid)
        if own is not None and own[0] in prios:
            for row in np.flatnonzero(ids == own[1]):
                count[row] -= 1
                held = dict(own[2])
                for j, col in enumerate(cols):
                    req[row, j] -= held.get(col, 0)
        if not count.any():
            return None
        return req, count

    def _totals_of_few(
        self, cols: list[int], at_least: int | None, below: int | None, exclude_uid: str, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``totals`` for a few rows, summed from the pods held on their nodes (what the
        arrays sum, noted changes included) rather than flushing and gathering: a veto or
        a dry run after one preemption asks for the one or two nodes it touched."""
        held, on_node = self._held, self._on_node
        index = {col: j for j, col in enumerate(cols)}
        req = [[0] * len(cols) for _ in range(len(rows))]
        count = [0] * len(rows)
        for k, node_id in enumerate(self._cache.row_ids()[rows].tolist()):
            for uid in on_node.get(node_id, ()):
                prio, _, req_cols, _ = held[uid]
                if uid == exclude_uid or (prio < at_least if at_least is not None else prio >= below):  # type: ignore[operator]
                    continue
                count[k] += 1
                for col, amount in req_cols:
                    j = index.get(col)
                    if j is not None:
                        req[k][j] += amount
        if not any(count):
            return None
        return np.array(req, dtype=np.int64).reshape(len(rows), len(cols)), np.array(count, dtype=np.int64)
