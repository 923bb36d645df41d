"""SchedulingGates: keeps a pod out of activeQ while ``spec.schedulingGates`` is non-empty.

Owns the PreEnqueue verdict for gated pods. A gated pod waits among the unschedulable
pods, is skipped by cluster-event moves, and is looked at again only when the pod itself
is updated (the gates are removed). Built by the registry; run by the queue through
``Framework.run_pre_enqueue``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..framework import PreEnqueuePlugin
from ..status import SUCCESS, Code, Status

if TYPE_CHECKING:
    from ..podinfo import PodInfo


class SchedulingGates(PreEnqueuePlugin):
    NAME = "SchedulingGates"

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")

    def pre_enqueue(self, pod: PodInfo) -> Status:
        if not pod.gates:  # parsed with the spec (PodInfo.gates): a pod kept as bytes stays so
            return SUCCESS
        names = " ".join(pod.gates)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"waiting for scheduling gates: [{names}]",))
