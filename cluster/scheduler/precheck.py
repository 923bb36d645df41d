"""Could a pod fit one particular node? The cheap check behind node-event moves.

Owns upstream's ``preCheckForNode``: when a node is added or changes, an unschedulable
pod is moved back only if it passes the admission checks on that node (resources, node
name, nodeSelector and required node affinity, host ports) and tolerates its NoSchedule
taints. Pods that could not fit stay parked instead of paying a cycle, a
FailedScheduling event and a longer backoff. Called by ``Scheduler.on_node``.
"""

from __future__ import annotations

from ..api.nodeaffinity import pod_matches_node_selector_and_affinity
from ..api.placement import fits
from ..api.predicates import ports_conflict as conflicts
from ..api.taints import find_untolerated_taint
from .cache import Cache, NodeInfo, PodInfo

_NO_SCHEDULE = ("NoSchedule",)


def fits_node(pinfo: PodInfo, ni: NodeInfo, cache: Cache) -> bool:
    pod, node = pinfo.pod, ni.node
    spec = pod.get("spec") or {}
    if spec.get("nodeName") and spec["nodeName"] != ni.name:
        return False
    snap = cache.snapshot()
    i = ni.index
    free = snap.allocatable[i] - snap.requested[i]
    if not fits(pinfo.req_cols, free.__getitem__, snap.pod_count[i], snap.allowed_pods[i]):
        return False
    if not pod_matches_node_selector_and_affinity(pod, node):
        return False
    if pinfo.host_ports and conflicts(pinfo.host_ports, ni.ports):
        return False
    return find_untolerated_taint(ni.taints, spec.get("tolerations"), _NO_SCHEDULE) is None
