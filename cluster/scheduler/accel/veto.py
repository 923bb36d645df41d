"""The nominated pods' veto of one kind of pod, kept across cycles.

Owns ``VetoMemo``: the lazy pass 1 by arithmetic (``fastfilter.py``: which
nodes the load of the nominated pods of equal or higher priority leaves too small for
the pod) per kind of pod, keyed by the pod's signature (``signature.py``) and priority.
Owned by ``Scheduler``; read by ``fastfilter.FastFilters``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..cache import Cache

VetoKey = tuple[bytes, int]  # a kind of pod: its signature and priority


class VetoMemo:
    """The lazy pass 1 (``FastFilters._veto_by_load``) of the kinds of pods met lately (signature and
    priority), kept while the nominations (``PodNominator.version``), the node
    set (``Cache.node_epoch``) and the rows it judged (their row versions) stay as they
    were. A preemptor stays nominated for the many cycles of the pods queued behind it,
    each of which would otherwise sum the same load and run the same fit. The veto array
    is shared: readers never write to it. Owned by the scheduler; read by ``FastFilters``."""

    LIMIT = 16  # kinds remembered at once; the oldest is dropped beyond it

    def __init__(self) -> None:
        self._entries: dict[VetoKey, tuple[tuple[int, int], np.ndarray, bytes, np.ndarray | None]] = {}
        self.hits = 0  # cycles served from a kept entry

    def get(self, key: VetoKey, version: int, cache: Cache) -> tuple[np.ndarray | None] | None:
        """(veto,) when the entry of ``key`` still holds (veto None: nothing to veto)."""
        entry = self._entries.get(key)
        if entry is None or entry[0] != (version, cache.node_epoch):
            return None
        _, rows, seen, veto = entry
        if len(rows) and cache.row_versions()[rows].tobytes() != seen:
            return None
        self.hits += 1
        return (veto,)

    def put(self, key: VetoKey, version: int, cache: Cache, rows: np.ndarray, veto: np.ndarray | None) -> None:
        if key not in self._entries and len(self._entries) >= self.LIMIT:
            del self._entries[next(iter(self._entries))]
        seen = cache.row_versions()[rows].tobytes() if len(rows) else b""
        self._entries[key] = ((version, cache.node_epoch), rows, seen, veto)
