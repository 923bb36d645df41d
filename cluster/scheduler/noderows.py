"""The cache's per-node arrays and stable node ids (``NodeRows``, the base of ``cache.Cache``).

Owns the storage that filters and scores read as vectors over all nodes (allocatable,
requested, non-zero requested, pod count, allowed pods), how it grows (rows double, a
resource seen for the first time adds a column), and the node ids that outlive row moves,
with a version counter per id and a log of the ids whose version moved (``touched_since``:
what changed since a reader last looked, without comparing every node's version).
``Cache`` is its only subclass and writes what the rows
hold; ``Snapshot`` slices the arrays, and ``PriorityLoad`` and ``preemption_fast`` reach
the ids and versions through the cache. A base class rather than a member so the hot
paths keep reading ``self._req`` and friends directly.

Layout:
- rows are nodes; row indices are dense ``0..N-1``. Removing a node moves the last row
  into the freed slot (swap-remove), so the node that was last changes index. Indices are
  therefore valid only between two node removals; nothing outside a scheduling cycle holds
  one (assumed pods and ghosts refer to nodes by name), and the scheduler is
  single-threaded, so no cycle ever sees a removal.
- columns are resources: cpu (millicores), memory, ephemeral-storage, then every other
  resource (extended, hugepages) in order of first sight, on a node or in a pod's
  requests. Columns are never removed, so a pod's parsed column list stays valid.
- arrays are column-major: a filter reads one resource over all nodes, which is then a
  contiguous slice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .podtable import PodTable

if TYPE_CHECKING:
    from .snapshot import Snapshot

_INITIAL_ROWS = 64
TOUCH_LOG = 1 << 16  # touched ids kept before the log is cut (a few hundred KB)


class NodeRows:
    # Set by Cache.__init__ after ours (the column hook below widens the table, so it must
    # exist before the first column does); declared here for the type checker.
    _table: PodTable
    _snapshot: Snapshot | None

    def __init__(self) -> None:
        self._n = 0
        self._rows = _INITIAL_ROWS
        self._alloc = np.zeros((self._rows, 0), dtype=np.int64, order="F")
        self._req = np.zeros((self._rows, 0), dtype=np.int64, order="F")
        self._nonzero = np.zeros((self._rows, 2), dtype=np.int64, order="F")
        self._pod_count = np.zeros(self._rows, dtype=np.int64)
        self._allowed = np.zeros(self._rows, dtype=np.int64)
        # A stable id per node name (never reused) and the id of each row: arrays kept by
        # id (the nominated pods' load) survive rows moving on swap-remove.
        self._ids: dict[str, int] = {}
        self._id_name: list[str] = []  # the name of each id, by id
        self._row_id = np.zeros(self._rows, dtype=np.int64)
        # Per node id, bumped by anything that can change a preemption verdict there (see
        # preemption_fast): a pod placed or removed, a nomination, allocatable, a start time.
        self._versions = np.zeros(64, dtype=np.int64)
        # The ids ``touch`` moved, in order: ``_touched[k]`` is change number ``_touched_base + k``.
        # Cut whole past ``TOUCH_LOG``; a reader that fell behind the cut looks at every node.
        self._touched: list[int] = []
        self._touched_base = 0
        # Per row (moved with its row), bumped whenever what the row holds changes: its
        # allocatable, its pods' requests, count or host ports. Pod start times and
        # nominations, which move ``_versions``, leave it: the row memo keeps verdicts and
        # scores that read only the row.
        self._row_ver = np.zeros(self._rows, dtype=np.int64)

    def _add_column(self) -> None:
        pad = np.zeros((self._rows, 1), dtype=np.int64)
        self._alloc = np.asfortranarray(np.hstack((self._alloc, pad)))
        self._req = np.asfortranarray(np.hstack((self._req, pad)))
        self._table.add_column()
        self._snapshot = None

    def _grow_rows(self) -> None:
        rows = self._rows * 2

        def grow(a: np.ndarray) -> np.ndarray:
            out = np.zeros((rows,) + a.shape[1:], dtype=a.dtype, order="F")
            out[: self._rows] = a
            return out

        self._alloc, self._req, self._nonzero = grow(self._alloc), grow(self._req), grow(self._nonzero)
        self._pod_count, self._allowed = grow(self._pod_count), grow(self._allowed)
        self._row_id, self._row_ver = grow(self._row_id), grow(self._row_ver)
        self._rows = rows
        self._snapshot = None

    @property
    def num_nodes(self) -> int:
        return self._n

    def node_id(self, name: str) -> int:
        """The stable id of a node name (assigned on first use, known node or not)."""
        i = self._ids.get(name)
        if i is None:
            i = self._ids[name] = len(self._ids)
            self._id_name.append(name)
        return i

    def known_node_ids(self) -> int:
        """How many node ids exist (every id is below this)."""
        return len(self._ids)

    def row_ids(self) -> np.ndarray:
        """The stable id of each current row."""
        return self._row_id[: self._n]

    def touch(self, node_id: int) -> None:
        """Something on node ``node_id`` changed (see ``node_versions``)."""
        if node_id >= len(self._versions):
            self._cover_versions(node_id + 1)
        self._versions[node_id] += 1
        touched = self._touched
        touched.append(node_id)
        if len(touched) > TOUCH_LOG:
            self._touched_base += len(touched)
            touched.clear()

    def touch_position(self) -> int:
        """The number of ``touch`` calls so far: a reader's mark for ``touched_since``."""
        return self._touched_base + len(self._touched)

    def touched_since(self, mark: int) -> list[int] | None:
        """The ids touched since ``touch_position`` gave ``mark`` (repeats included), or None
        when the log no longer reaches back that far."""
        start = mark - self._touched_base
        if start < 0:
            return None
        return self._touched[start:]

    def id_name(self, node_id: int) -> str:
        """The node name of a stable id."""
        return self._id_name[node_id]

    def row_versions(self) -> np.ndarray:
        """A counter per current row that moves whenever what the row holds changes."""
        return self._row_ver[: self._n]

    def node_versions(self) -> np.ndarray:
        """A counter per node id that moves whenever the node's pods, nominations,
        allocatable or pod start times change; covers every known id."""
        self._cover_versions(len(self._ids))
        return self._versions

    def _cover_versions(self, size: int) -> None:
        if size > len(self._versions):
            grown = np.zeros(max(size, 2 * len(self._versions)), dtype=np.int64)
            grown[: len(self._versions)] = self._versions
            self._versions = grown
