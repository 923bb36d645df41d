"""Queue snapshots for preemption: the accounting a preemptor changes as it tries victims.

Owns ``Snapshot``: copies, made on first use, of the queues on a path (allocated and
preempting per queue, with guaranteed), on which victims are removed and asks added as the
algorithm goes, and ``rem``: the hierarchical remaining guarantee of section 4 of the
YuniKorn reference, with the sibling rule (when the asking leaf has its own guarantee, its
ancestors' guarantees are hidden; "ancestor" is a plain string-prefix test, as upstream) and
root exempt from both rules (upstream's root snapshot never learns the asking queue). The
real queues are never changed. Called by the preemptors (``preemption.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .asks import Alloc
from .queues import Queue
from .resources import Res, add_into, component_min


@dataclass(eq=False, slots=True)
class QSnap:
    queue: Queue
    parent: QSnap | None
    allocated: Res
    preempting: Res
    guaranteed: Res = field(default_factory=dict)

    def used(self) -> Res:
        return {k: v - self.preempting.get(k, 0) for k, v in self.allocated.items()}


class Snapshot:
    def __init__(self, ask_leaf: Queue):
        self.ask_leaf = ask_leaf
        self._own_guarantee = bool(ask_leaf.guaranteed)
        self._q: dict[str, QSnap] = {}

    def of(self, q: Queue) -> QSnap:
        s = self._q.get(q.path)
        if s is None:
            parent = self.of(q.parent) if q.parent is not None else None
            s = QSnap(q, parent, dict(q.allocated), dict(q.preempting), dict(q.guaranteed))
            self._q[q.path] = s
        return s

    def change(self, q: Queue, res: Res, sign: int = 1) -> None:
        """``res`` more (sign 1) or less (-1) allocated in ``q`` and the sums of its ancestors."""
        s: QSnap | None = self.of(q)
        while s is not None:
            add_into(s.allocated, res, sign)
            s = s.parent

    def remove(self, a: Alloc) -> None:
        """``a`` leaves its queue."""
        self.change(a.queue, a.res, -1)

    def add(self, a: Alloc) -> None:
        """``a`` is back in its queue."""
        self.change(a.queue, a.res)

    def add_to_ask_leaf(self, res: Res, sign: int = 1) -> None:
        self.change(self.ask_leaf, res, sign)

    def rem(self, q: Queue) -> Res | None:
        """The remaining guarantee of ``q`` as the asking leaf sees it (None: none)."""
        return self._rem(self.of(q))

    def _rem(self, s: QSnap) -> Res | None:
        parent = self._rem(s.parent) if s.parent is not None else None
        if not parent and not s.guaranteed:
            return None
        used = s.used()
        r = {k: v - used.get(k, 0) for k, v in s.guaranteed.items()}
        if s.parent is None:
            return component_min(r or None, parent)  # upstream never tells root who is asking
        leaf_path = self.ask_leaf.path
        if s.queue.path == leaf_path and r:
            return {**(parent or {}), **r}
        if self._own_guarantee and r and leaf_path.startswith(s.queue.path):
            return None  # the sibling rule: the asking leaf's own guarantee hides its ancestors'
        return component_min(r or None, parent)
