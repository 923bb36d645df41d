"""What a kubelet derives from a pod's containers alone, worked out once per shape of pod.

Owns ``shape_of``: a pod's QoS class, its requests (upstream's PodRequests) and its cgroup
values (``cgroups.without_parent`` of ``pod_cgroups``) depend only on its containers'
names, resources and init restart policies and on its overhead, which every pod of one
template shares. A host admitting a ReplicaSet's pods parsed the same quantities for each
of them: measured at about a third of a kubelet's work per new pod. The pod's shape is
encoded as the key; pods of one shape get the very same values (never change them).
Called by ``Kubelet._new_pod`` and ``Kubelet._take``.
"""

from __future__ import annotations

from typing import Any

from ..api.codec import clone, encode
from ..api.qos import pod_qos_class
from ..api.resources import pod_requests
from .cgroups import pod_cgroups, without_parent
from .pods import shared

SHAPES_MAX = 1024  # shapes kept; templates are few, so the oldest is dropped beyond it


class PodShape:
    """The QoS class and requests of one shape, and its cgroup values per QoS class asked
    (an adopted pod's class comes from its status, which may say otherwise)."""

    __slots__ = ("qos", "requests", "_pod", "_cgroups")

    def __init__(self, pod: dict[str, Any]):
        self.qos = pod_qos_class(pod)
        self.requests = pod_requests(pod)
        self._pod = pod  # a pod of this shape: what cgroups are worked out from
        self._cgroups: dict[str, dict] = {}

    def cgroup(self, qos: str) -> dict:
        values = self._cgroups.get(qos)
        if values is None:
            values = self._cgroups[qos] = shared(without_parent(pod_cgroups(self._pod, "", qos)))
        return values


_SHAPES: dict[bytes, PodShape] = {}


def shape_of(pod: dict[str, Any]) -> PodShape:
    spec = pod.get("spec") or {}
    try:
        key = encode(
            (
                [(c.get("name"), c.get("resources")) for c in spec.get("containers") or ()],
                [(c.get("name"), c.get("resources"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()],
                spec.get("overhead"),
            )
        )
    except (TypeError, ValueError, OverflowError):  # not plain msgpack data: worked out for this pod alone
        return PodShape(pod)
    shape = _SHAPES.get(key)
    if shape is None:
        if len(_SHAPES) >= SHAPES_MAX:
            del _SHAPES[next(iter(_SHAPES))]
        shape = _SHAPES[key] = PodShape({"spec": _containers_only(spec)})
    return shape


def _containers_only(spec: dict[str, Any]) -> dict[str, Any]:
    """What of the spec the shape's values are worked out from (the first pod's object
    is not kept alive by the memo)."""
    return clone({k: spec[k] for k in ("containers", "initContainers", "overhead") if k in spec})
