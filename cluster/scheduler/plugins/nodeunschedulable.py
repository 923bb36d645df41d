"""NodeUnschedulable: keep pods off cordoned nodes (``spec.unschedulable``).

Owns the Filter that rejects a node marked unschedulable unless the pod tolerates the
taint ``node.kubernetes.io/unschedulable:NoSchedule`` (the node lifecycle controller adds
that taint on cordon; a pod tolerating it tolerates the flag too, as upstream). Built by
the registry (no args) and run by the framework.

Which nodes are cordoned is worked out once per ``node_epoch``. A PreFilter (upstream has
none, the outcome is the same) returns Skip when no node is cordoned or the pod tolerates
the taint, so the usual pod never runs the Filter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...api.taints import NO_SCHEDULE, tolerations_tolerate_taint
from ..cache import PodInfo, Snapshot
from ..framework import ClusterEvent, CycleState, FilterPlugin, FilterResult, PreFilterPlugin, PreFilterResult
from ..status import SKIP, SUCCESS, Code, Status
from .tainttoleration import EpochMemo, frozen

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE}


def tolerates_unschedulable(pod: dict[str, Any]) -> bool:
    return tolerations_tolerate_taint((pod.get("spec") or {}).get("tolerations"), _UNSCHEDULABLE_TAINT)


def _tolerations(pod: PodInfo) -> Any:
    return (pod.pod.get("spec") or {}).get("tolerations")


def _cordoned(snap: Snapshot) -> np.ndarray | None:
    """Mask of the nodes with ``spec.unschedulable``, or None when there are none."""
    rows = []
    for i, ni in enumerate(snap.node_infos):
        if ni.unschedulable:
            rows.append(i)
    if not rows:
        return None
    mask = np.zeros(snap.num_nodes, dtype=bool)
    mask[rows] = True
    return frozen(mask)


class NodeUnschedulable(PreFilterPlugin, FilterPlugin):
    NAME = "NodeUnschedulable"
    EVENTS = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT})

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")
        self._memo = EpochMemo(_cordoned, limit=1)

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...]:
        return (_tolerations(pod),)  # the verdict reads whether they tolerate the cordon

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        if self._memo.sync(snap).base is None or tolerates_unschedulable(pod.pod):
            return SKIP, None
        return SUCCESS, None

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        cordoned = self._memo.sync(snap).base
        if cordoned is None or tolerates_unschedulable(pod.pod):
            return FilterResult(np.ones(snap.num_nodes, dtype=bool))
        return FilterResult(~cordoned, [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE, cordoned)])
