"""Placed pods as numpy columns: node row, priority, start time, requests.

Owns a column store of every pod the cache has attached to a node, kept in step by
``Cache`` (attach, detach, node rows moving on swap-remove, a pod's start time appearing,
a new resource column). Read by the vectorised preemption dry run
(``preemption_fast``), which needs "the lower-priority pods of every node" as arrays
rather than as Python objects.

A slot is reused after its pod leaves; ``seq`` records attach order, which is the order
of ``NodeInfo.pods``, so ties sort as the per-node code would sort them.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..clock import parse_timestamp

_INITIAL = 1024


def _start_seconds(s: str | None) -> float:
    t = parse_timestamp(s) if isinstance(s, str) and s else None
    return np.nan if t is None else t  # missing or unreadable: "now" at query time


class PodTable:
    def __init__(self, num_columns: int):
        self.size = 0  # slots in use or freed, from 0; beyond it everything is empty
        self.node_row = np.full(_INITIAL, -1, dtype=np.int64)  # -1: free slot
        self.priority = np.zeros(_INITIAL, dtype=np.int64)
        self.start = np.full(_INITIAL, np.nan)
        self.seq = np.zeros(_INITIAL, dtype=np.int64)
        self.requests = np.zeros((_INITIAL, num_columns), dtype=np.int64)
        self.pods: list = [None] * _INITIAL  # slot -> PodInfo
        self._start_raw: list = [None] * _INITIAL  # slot -> its start time as last parsed
        self._slot: dict[str, int] = {}
        self._free: list[int] = []
        self._seq = itertools.count()

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

    def add(self, pinfo, row: int) -> None:
        if self._free:
            slot = self._free.pop()
        else:
            if self.size == len(self.node_row):
                self._grow()
            slot, self.size = self.size, self.size + 1
        self._slot[pinfo.uid] = slot
        self.pods[slot] = pinfo
        self.node_row[slot] = row
        self.priority[slot] = pinfo.priority
        self.seq[slot] = next(self._seq)
        self.requests[slot] = 0
        for col, amount in pinfo.req_cols:
            self.requests[slot, col] = amount
        self._set_start(pinfo, slot)

    def remove(self, pinfo) -> None:
        slot = self._slot.pop(pinfo.uid, None)
        if slot is None:
            return
        self._start_raw[slot] = None
        self.pods[slot] = None
        self.node_row[slot] = -1
        self._free.append(slot)

    def move_node(self, pods, row: int) -> None:
        """A node's pods now live at ``row`` (the cache's swap-remove)."""
        for pinfo in pods:
            slot = self._slot.get(pinfo.uid)
            if slot is not None:
                self.node_row[slot] = row

    def refresh_start(self, pinfo) -> bool:
        """Called on every update of a placed pod; cheap unless ``startTime`` changed.
        True when it did."""
        slot = self._slot.get(pinfo.uid)
        if slot is not None and pinfo.start_time != self._start_raw[slot]:
            self._set_start(pinfo, slot)
            return True
        return False

    def slot_of(self, uid: str) -> int:
        return self._slot[uid]

    def _set_start(self, pinfo, slot: int) -> None:
        self._start_raw[slot] = pinfo.start_time
        self.start[slot] = _start_seconds(pinfo.start_time)

    def __len__(self) -> int:
        return len(self._slot)
