"""DefaultBinder: the Bind plugin that writes the pod's binding to the apiserver.

Owns accepting every placement for binding. The API call itself is the scheduler
actor's: it sends the binds of many cycles in one batch (``ScheduleOutput.binds``), so
this plugin only says "bound by the default path" (``BATCHED``). Built by the registry;
run by ``Framework.run_bind``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..framework import BindPlugin
from ..status import SUCCESS, Status

if TYPE_CHECKING:
    from ..framework import CycleState
    from ..podinfo import PodInfo


class DefaultBinder(BindPlugin):
    NAME = "DefaultBinder"
    BATCHED = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return SUCCESS
