"""Equal values kept once (``SharedValues``).

Decoded objects carry many values equal to other objects' (the same tolerations on every
pod, the same node conditions on nodes that posted in one second); a controller that keeps
them keeps one of each. A value is kept under a hashable frozen form of it; past ``limit``
forms the table starts again, since sharing is an economy, not a rule: an unshared copy
compares equal all the same. Kept values are read-only for everyone who holds them.

Who calls it: the controller-manager's ``podrecord.PodRecords`` (pods' tolerations lists)
and ``nodelifecycle.Shared`` (node conditions and taint lists), the scheduler's
``podinfo.ResourceColumns`` (pods' labels) and the kubelet's ``pods.shared`` (requests,
cgroup values, container names and images).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any


class SharedValues:
    __slots__ = ("_table", "limit")

    def __init__(self, limit: int) -> None:
        self._table: dict[Hashable, Any] = {}
        self.limit = limit

    def keep(self, key: Hashable, value: Any) -> Any:
        """The value kept under ``key`` (``value`` itself, when it is the first); raises
        TypeError when ``key`` cannot be hashed."""
        got = self._table.get(key)
        if got is None:
            if len(self._table) >= self.limit:
                self._table.clear()
            got = self._table[key] = value
        return got

    def __len__(self) -> int:
        return len(self._table)
