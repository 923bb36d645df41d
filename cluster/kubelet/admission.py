"""Kubelet pod admission (upstream's admit handler chain and GeneralPredicates).

Owns the ordered admission checks and the Reason/Message a rejected pod gets. ``Kubelet``
calls ``admit`` once per new pod with a ``NodeView``: the node's name, labels, taints,
allocatable, the summed requests and count of the pods it has admitted that are not
terminal, and the host ports those pods hold. Every GeneralPredicates check returns a list
of failures so that, like upstream's includeAllFailures, all of them are known
(critical-pod preemption will need that); only the first failure becomes the rejection.

The chain, in upstream's order (the first rejection wins; the eviction manager's own
admit handler runs before all of these, in ``Kubelet``):
1. upstream's resource-allocation handler, which runs before the predicate handler: the
   CPU manager, then the device manager, when ``admit`` is given them; a pod that now
   holds devices sees allocatable raised to the devices allocated (upstream's
   UpdatePluginResources) in the fit check;
2. the OS label and OS field checks;
3. GeneralPredicates: resources, node affinity/selector, node name, host ports, NoExecute
   taints (``GENERAL_PREDICATES``; insert a new check at its upstream place).

The matching rules are the ones the scheduler uses (``cluster/api``: node affinity, host-port conflicts,
toleration matching), so the scheduler and the kubelet cannot disagree about a pod.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..api.nodeaffinity import ERR_REASON_POD as NODE_AFFINITY_DESC
from ..api.nodeaffinity import pod_matches_node_selector_and_affinity
from ..api.objects import labels_of, node_name_of, uid_of
from ..api.placement import resource_fit
from ..api.predicates import ERR_REASON_NODE_NAME as NODE_NAME_DESC
from ..api.predicates import ERR_REASON_NODE_PORTS as NODE_PORTS_DESC
from ..api.predicates import host_ports
from ..api.predicates import ports_conflict as conflicts
from ..api.resources import CPU, EPHEMERAL, MEMORY, PODS, is_extended
from ..api.taints import NO_EXECUTE, find_untolerated_taint

if TYPE_CHECKING:
    from .cpumanager import CpuManager
    from .devices import DeviceManager

NODE_OS = "linux"
# The kubelet's own wording (ErrReasonNotMatch), not the scheduler's per-taint message.
TAINT_DESC = "node(s) had taints that the pod didn't tolerate"
CONFIG_SOURCE = "kubernetes.io/config.source"  # "api" for pods from the apiserver


@dataclass(frozen=True)
class NodeView:
    name: str
    allocatable: dict[str, int]
    used: dict[str, int]  # summed requests of the admitted, non-terminal pods
    pod_count: int  # how many such pods
    labels: dict = field(default_factory=dict)
    taints: tuple = ()
    # (hostIP, protocol, hostPort) held by the admitted pods, as predicates.host_ports gives them
    used_ports: Collection[tuple[str, str, int]] = frozenset()

    def as_node(self) -> dict:
        """The little of a Node object that node affinity reads."""
        return {"metadata": {"name": self.name, "labels": self.labels}}


@dataclass(frozen=True)
class Rejection:
    reason: str
    message: str


@dataclass(frozen=True)
class PredicateFailure:
    """A check that preemption cannot fix by freeing resources."""

    name: str
    desc: str

    def rejection(self) -> Rejection:
        return Rejection(self.name, f"Predicate {self.name} failed: {self.desc}")


@dataclass(frozen=True)
class InsufficientResource:
    resource: str
    requested: int  # millicores for cpu, units (bytes, pods, devices) otherwise
    used: int
    capacity: int

    def rejection(self) -> Rejection:
        return Rejection(
            f"OutOf{self.resource}",
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}",
        )


Failure = PredicateFailure | InsufficientResource
Check = Callable[[dict, dict, NodeView], list]


def effective_requests(requests: dict[str, int], allocatable: dict[str, int]) -> dict[str, int]:
    """Drop extended resources the node does not advertise (removeMissingExtendedResources).

    Such a request is for the device manager to refuse, not the fit check.
    """
    return {n: q for n, q in requests.items() if not is_extended(n) or n in allocatable}


def fits_resources(pod: dict, requests: dict, node: NodeView) -> list:
    """NodeResourcesFit: pod count first, then cpu, memory, ephemeral-storage, the rest."""
    out = []
    allowed = node.allocatable.get(PODS, 0)
    # Upstream iterates the scalar resources in map order; kubemu sorts them by name.
    scalars = sorted(n for n in requests if n not in (CPU, MEMORY, EPHEMERAL, PODS))
    wanted = [(name, requests.get(name, 0)) for name in (CPU, MEMORY, EPHEMERAL, *scalars)]
    too_many, shortages = resource_fit(
        [(name, want) for name, want in wanted if want > 0],
        lambda name: node.allocatable.get(name, 0) - node.used.get(name, 0),
        node.pod_count,
        allowed,
    )
    if too_many:
        out.append(InsufficientResource(PODS, 1, node.pod_count, allowed))
    for name, _ in shortages:
        out.append(InsufficientResource(name, requests[name], node.used.get(name, 0), node.allocatable.get(name, 0)))
    return out


def node_affinity(pod: dict, requests: dict, node: NodeView) -> list:
    spec = pod.get("spec") or {}
    if not spec.get("nodeSelector") and not (spec.get("affinity") or {}).get("nodeAffinity"):
        return []  # the common case, without building the node or compiling terms
    if pod_matches_node_selector_and_affinity(pod, node.as_node()):
        return []
    return [PredicateFailure("NodeAffinity", NODE_AFFINITY_DESC)]


def node_name(pod: dict, requests: dict, node: NodeView) -> list:
    wanted = node_name_of(pod)
    if wanted and wanted != node.name:
        return [PredicateFailure("NodeName", NODE_NAME_DESC)]
    return []


def node_ports(pod: dict, requests: dict, node: NodeView) -> list:
    wanted = host_ports(pod)
    if wanted and node.used_ports and conflicts(wanted, node.used_ports):
        return [PredicateFailure("NodePorts", NODE_PORTS_DESC)]
    return []


def _is_static(pod: dict) -> bool:
    """A pod from a manifest file or URL rather than the apiserver (upstream IsStaticPod)."""
    source = ((pod.get("metadata") or {}).get("annotations") or {}).get(CONFIG_SOURCE)
    return source is not None and source != "api"


def no_execute_taints(pod: dict, requests: dict, node: NodeView) -> list:
    """Only NoExecute: a NoSchedule taint is the scheduler's business, not the kubelet's."""
    if not node.taints or _is_static(pod):
        return []
    tolerations = (pod.get("spec") or {}).get("tolerations")
    if find_untolerated_taint(node.taints, tolerations, (NO_EXECUTE,)) is None:
        return []
    return [PredicateFailure("TaintToleration", TAINT_DESC)]


GENERAL_PREDICATES: tuple[Check, ...] = (fits_resources, node_affinity, node_name, node_ports, no_execute_taints)


def general_filter(pod: dict, requests: dict, node: NodeView) -> list:
    failures: list = []
    for check in GENERAL_PREDICATES:
        failures.extend(check(pod, requests, node))
    return failures


def _os_mismatch(pod: dict, node: NodeView) -> Rejection | None:
    """The checks upstream runs before GeneralPredicates (no preemption can help them)."""
    want = labels_of(pod).get("kubernetes.io/os")
    if want is not None and want != node.labels.get("kubernetes.io/os", NODE_OS):
        return Rejection(
            "PodOSSelectorNodeLabelDoesNotMatch",
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
        )
    os_name = ((pod.get("spec") or {}).get("os") or {}).get("name")
    if os_name is not None and os_name != NODE_OS:
        return Rejection("PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS")
    return None


def admit(
    pod: dict,
    requests: dict[str, int],
    node: NodeView,
    cpus: CpuManager | None = None,
    devices: DeviceManager | None = None,
) -> Rejection | None:
    """None when the pod may run; otherwise the rejection for its first failure.

    ``requests`` are the pod's effective requests (``effective_requests`` applied). With
    ``cpus`` and ``devices``, the pod's exclusive CPUs and then its devices are allocated
    first, as upstream's chain does, and handed back if a later check refuses the pod;
    the caller releases them when the admitted pod ends.
    """
    uid = uid_of(pod)
    rejection = cpus.admit(uid, pod) if cpus is not None else None
    if rejection is None and devices is not None:
        rejection = devices.allocate(pod)
        if rejection is None:
            # Upstream's UpdatePluginResources (sanitizeNodeAllocatable): once the pod holds
            # devices, allocatable is at least the number of devices allocated, so devices
            # that turned Unhealthy while held do not make the fit check refuse a pod the
            # device manager could serve.
            sanitized = devices.update_plugin_resources(uid, node.allocatable)
            if sanitized is not node.allocatable:
                node = replace(node, allocatable=sanitized)
    if rejection is None:
        rejection = _os_mismatch(pod, node)
    if rejection is None:
        failures = general_filter(pod, requests, node)
        rejection = failures[0].rejection() if failures else None
    if rejection is not None:
        if cpus is not None:
            cpus.release(uid)
        if devices is not None:
            devices.release(uid)
    return rejection
