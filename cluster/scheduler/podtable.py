"""Placed pods as numpy columns: node row, priority, start time, requests.

Owns a column store of every pod the cache has attached to a node, kept in step by
``Cache`` (attach, detach, node rows moving on swap-remove, a pod's start time appearing,
a new resource column). Read by the vectorised preemption dry run
(``preemption_fast``), which needs "the lower-priority pods of every node" as arrays
rather than as Python objects.

A slot is reused after its pod leaves; ``seq`` records attach order, which is the order
of ``NodeInfo.pods``, so ties sort as the per-node code would sort them.

Attaches are written in batches: ``add`` only notes the pod, and the columns take every
noted pod at once before anything reads them (``flushed``, the other methods) or once
``FLUSH_AT`` are noted. The scheduler attaches one pod per cycle and reads the table
only when it preempts, so column writes one scalar at a time were most of an attach.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..clock import parse_timestamp

if TYPE_CHECKING:
    from .podinfo import PodInfo

_INITIAL = 1024
FLUSH_AT = 4096  # noted attaches that are written without waiting for a reader
FEW = 16  # noted attaches a flush writes one by one


def _start_seconds(s: str | None) -> float:
    t = parse_timestamp(s) if isinstance(s, str) and s else None
    return np.nan if t is None else t  # missing or unreadable: "now" at query time


class PodTable:
    def __init__(self, num_columns: int) -> None:
        self.size = 0  # slots in use or freed, from 0; beyond it everything is empty
        self.node_row = np.full(_INITIAL, -1, dtype=np.int64)  # -1: free slot
        self.priority = np.zeros(_INITIAL, dtype=np.int64)
        self.start = np.full(_INITIAL, np.nan)
        self.seq = np.zeros(_INITIAL, dtype=np.int64)
        self.requests = np.zeros((_INITIAL, num_columns), dtype=np.int64)
        self.pods: list[PodInfo | None] = [None] * _INITIAL  # slot -> PodInfo
        self._start_raw: list[str | None] = [None] * _INITIAL  # slot -> its start time as last parsed
        self._slot: dict[str, int] = {}
        self._free: list[int] = []
        self._next_seq = 0
        # uid -> [pod, node row, start time as noted]: attached, not yet in the columns.
        self._pending: dict[str, list[Any]] = {}

    def _grow(self) -> None:
        cap = len(self.node_row) * 2
        self.node_row = np.concatenate((self.node_row, np.full(cap - len(self.node_row), -1, dtype=np.int64)))
        pad = cap - len(self.priority)
        self.priority = np.concatenate((self.priority, np.zeros(pad, dtype=np.int64)))
        self.start = np.concatenate((self.start, np.full(pad, np.nan)))
        self.seq = np.concatenate((self.seq, np.zeros(pad, dtype=np.int64)))
        self.requests = np.vstack((self.requests, np.zeros((pad, self.requests.shape[1]), dtype=np.int64)))
        self.pods += [None] * pad
        self._start_raw += [None] * pad

    def add_column(self) -> None:
        self.requests = np.hstack((self.requests, np.zeros((len(self.requests), 1), dtype=np.int64)))

    def add(self, pinfo: PodInfo, row: int) -> None:
        self._pending[pinfo.uid] = [pinfo, row, pinfo.start_time]
        if len(self._pending) >= FLUSH_AT:
            self._flush()

    def flushed(self) -> PodTable:
        """The table with every attach written: what a reader of the columns asks for."""
        self._flush()
        return self

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        self._pending = {}
        if len(pending) <= FEW:  # numpy's fixed costs would outweigh a few scalar writes
            for pinfo, row, start_raw in pending.values():
                self._write(pinfo, row, start_raw)
            return
        n, free = len(pending), self._free
        slots = [free.pop() for _ in range(min(n, len(free)))]
        extra = n - len(slots)
        while self.size + extra > len(self.node_row):
            self._grow()
        slots += range(self.size, self.size + extra)
        self.size += extra
        entries = list(pending.values())
        at = np.array(slots, dtype=np.int64)
        self.node_row[at] = [e[1] for e in entries]
        self.priority[at] = [e[0].priority for e in entries]
        self.seq[at] = np.arange(self._next_seq, self._next_seq + n)
        self._next_seq += n
        self.start[at] = [_start_seconds(e[2]) for e in entries]
        self.requests[at] = 0
        rows, cols, amounts = [], [], []
        for slot, (pinfo, _, start_raw) in zip(slots, entries):
            self._slot[pinfo.uid] = slot
            self.pods[slot] = pinfo
            self._start_raw[slot] = start_raw
            for col, amount in pinfo.req_cols:
                rows.append(slot)
                cols.append(col)
                amounts.append(amount)
        self.requests[rows, cols] = amounts

    def _write(self, pinfo: PodInfo, row: int, start_raw: str | None) -> None:
        if self._free:
            slot = self._free.pop()
        else:
            if self.size == len(self.node_row):
                self._grow()
            slot, self.size = self.size, self.size + 1
        self._slot[pinfo.uid] = slot
        self.pods[slot] = pinfo
        self._start_raw[slot] = start_raw
        self.node_row[slot] = row
        self.priority[slot] = pinfo.priority
        self.seq[slot] = self._next_seq
        self._next_seq += 1
        self.start[slot] = _start_seconds(start_raw)
        self.requests[slot] = 0
        for col, amount in pinfo.req_cols:
            self.requests[slot, col] = amount

    def remove(self, pinfo: PodInfo) -> None:
        if self._pending.pop(pinfo.uid, None) is not None:
            return
        slot = self._slot.pop(pinfo.uid, None)
        if slot is None:
            return
        self._start_raw[slot] = None
        self.pods[slot] = None
        self.node_row[slot] = -1
        self._free.append(slot)

    def move_node(self, pods: Iterable[PodInfo], row: int) -> None:
        """A node's pods now live at ``row`` (the cache's swap-remove)."""
        pending = self._pending
        for pinfo in pods:
            slot = self._slot.get(pinfo.uid)
            if slot is not None:
                self.node_row[slot] = row
            elif pinfo.uid in pending:
                pending[pinfo.uid][1] = row

    def refresh_start(self, pinfo: PodInfo) -> bool:
        """Called on every update of a placed pod; cheap unless ``startTime`` changed.
        True when it did."""
        noted = self._pending.get(pinfo.uid)
        if noted is not None:
            changed: bool = pinfo.start_time != noted[2]
            noted[2] = pinfo.start_time
            return changed
        slot = self._slot.get(pinfo.uid)
        if slot is not None and pinfo.start_time != self._start_raw[slot]:
            self._set_start(pinfo, slot)
            return True
        return False

    def slot_of(self, uid: str) -> int:
        self._flush()
        return self._slot[uid]

    def _set_start(self, pinfo: PodInfo, slot: int) -> None:
        self._start_raw[slot] = pinfo.start_time
        self.start[slot] = _start_seconds(pinfo.start_time)

    def __len__(self) -> int:
        return len(self._slot) + len(self._pending)
