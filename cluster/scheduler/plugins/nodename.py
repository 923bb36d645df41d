"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

Owns that Filter. Built by the registry (no args) and run by the framework. The scheduler
only sees pods without a node, so in practice this never rejects; it is here so a
profile naming it behaves as upstream's does.

A PreFilter (upstream has none, the outcome is the same) returns Skip for a pod without
``spec.nodeName``, so the usual pod never runs the Filter. It deliberately does not narrow
the node set: the other nodes must be reported with this plugin's reason, not as
"filtered out by the prefilter result".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...api.predicates import ERR_REASON_NODE_NAME as ERR_REASON
from ..cache import PodInfo, Snapshot
from ..framework import ClusterEvent, CycleState, FilterPlugin, FilterResult, PreFilterPlugin, PreFilterResult
from ..status import SKIP, SUCCESS, Code, Status


def _node_name(pod: PodInfo) -> str:
    return (pod.pod.get("spec") or {}).get("nodeName") or ""


class NodeName(PreFilterPlugin, FilterPlugin):
    NAME = "NodeName"
    EVENTS = frozenset({ClusterEvent.NODE_ADD})

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...]:
        return ((pod.pod.get("spec") or {}).get("nodeName") or "",)

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        return (SUCCESS if _node_name(pod) else SKIP), None

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        name = _node_name(pod)
        if not name:
            return FilterResult(np.ones(snap.num_nodes, dtype=bool))
        feasible = np.zeros(snap.num_nodes, dtype=bool)
        i = snap.index_of(name)
        if i is not None:
            feasible[i] = True
        return FilterResult(feasible, [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON, ~feasible)])
