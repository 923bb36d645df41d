"""Kubelet pod admission (upstream predicateAdmitHandler, reference §4.3-4.4).

Owns the ordered admission checks and the Reason/Message a rejected pod gets. ``Kubelet``
calls ``admit`` once per new pod with a ``NodeView``: the node's name, labels, taints,
allocatable, and the summed requests and count of the pods it has admitted that are not
terminal. Every check returns a list of failures so that, like upstream's
includeAllFailures, all of them are known (critical-pod preemption will need that);
only the first failure becomes the rejection.

To add a GeneralPredicates check, insert it into ``GENERAL_PREDICATES`` at its upstream
place: resources, node affinity/selector, node name, host ports, NoExecute taints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..api.objects import labels_of, node_name_of
from ..api.resources import CPU, EPHEMERAL, MEMORY, PODS, is_extended

NODE_OS = "linux"


@dataclass(frozen=True)
class NodeView:
    name: str
    allocatable: dict[str, int]
    used: dict[str, int]  # summed requests of the admitted, non-terminal pods
    pod_count: int  # how many such pods
    labels: dict = field(default_factory=dict)
    taints: tuple = ()


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
    if node.pod_count + 1 > allowed:
        out.append(InsufficientResource(PODS, 1, node.pod_count, allowed))
    # Upstream iterates the scalar resources in map order; kubemu sorts them by name.
    scalars = sorted(n for n in requests if n not in (CPU, MEMORY, EPHEMERAL, PODS))
    for name in (CPU, MEMORY, EPHEMERAL, *scalars):
        want = requests.get(name, 0)
        if want <= 0:
            continue
        used, cap = node.used.get(name, 0), node.allocatable.get(name, 0)
        if want > cap - used:
            out.append(InsufficientResource(name, want, used, cap))
    return out


def node_name(pod: dict, requests: dict, node: NodeView) -> list:
    wanted = node_name_of(pod)
    if wanted and wanted != node.name:
        return [PredicateFailure("NodeName", "node(s) didn't match the requested node name")]
    return []


# The order is upstream's; node affinity, host ports and NoExecute taints slot in here.
GENERAL_PREDICATES: tuple[Check, ...] = (fits_resources, node_name)


def general_filter(pod: dict, requests: dict, node: NodeView) -> list:
    failures: list = []
    for check in GENERAL_PREDICATES:
        failures.extend(check(pod, requests, node))
    return failures


def _os_mismatch(pod: dict, node: NodeView) -> Rejection | None:
    """The checks upstream runs before GeneralPredicates (no preemption can help them)."""
    want = labels_of(pod).get("kubernetes.io/os")
    if want is not None and want != node.labels.get("kubernetes.io/os", NODE_OS):
        return Rejection("PodOSSelectorNodeLabelDoesNotMatch",
                         "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label")
    os_name = ((pod.get("spec") or {}).get("os") or {}).get("name")
    if os_name is not None and os_name != NODE_OS:
        return Rejection("PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS")
    return None


def admit(pod: dict, requests: dict[str, int], node: NodeView) -> Rejection | None:
    """None when the pod may run; otherwise the rejection for its first failure.

    ``requests`` are the pod's effective requests (``effective_requests`` applied).
    """
    early = _os_mismatch(pod, node)
    if early is not None:
        return early
    failures = general_filter(pod, requests, node)
    return failures[0].rejection() if failures else None
