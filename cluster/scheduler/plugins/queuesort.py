"""PrioritySort: the QueueSort plugin ordering activeQ.

Owns the order in which pending pods are tried: higher ``spec.priority`` first, then the
earlier queue timestamp (when the pod entered or last failed back into the queue, not its
creationTimestamp). The queue adds its own insertion sequence number after this key, so
pods with equal keys leave in FIFO order. Built by the registry; used by SchedulingQueue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..framework import QueueSortPlugin

if TYPE_CHECKING:
    from ..queue import QueuedPodInfo


class PrioritySort(QueueSortPlugin):
    NAME = "PrioritySort"

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")

    def sort_key(self, qpinfo: QueuedPodInfo) -> tuple[Any, ...]:
        return (-qpinfo.priority, qpinfo.timestamp)
