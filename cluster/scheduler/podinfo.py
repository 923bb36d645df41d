"""What the scheduler knows about one pod and one node, parsed once per object.

Owns ``PodInfo`` (a pod's requests, labels, inter-pod terms and host ports, and the node
it is attached to), ``NodeInfo`` (a node's object, allocatable, pods, used host ports and
images), ``ResourceColumns`` (resource name -> array column) and ``Topology`` (domain ids
per node row for one label key). Built and kept current by ``Cache``; read by the queue,
the cycle and every plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..api.objects import labels_of, name_of, namespace_of, priority_of, uid_of
from ..api.predicates import HostPort, host_ports
from ..api.resources import CPU, EPHEMERAL, MEMORY, PODS, pod_nonzero_requests, pod_requests
from .podterms import PodTerms

BASE_COLUMNS = (CPU, MEMORY, EPHEMERAL)
CPU_COL, MEMORY_COL, EPHEMERAL_COL = 0, 1, 2  # fixed positions of BASE_COLUMNS


def resources_signature(pod: dict) -> tuple:
    """What a pod's requests depend on, compared cheaply to skip re-parsing on updates."""
    spec = pod.get("spec") or {}
    return (
        tuple(c.get("resources") for c in spec.get("containers") or ()),
        tuple((c.get("resources"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()),
        spec.get("overhead"),
        tuple(c.get("ports") for c in spec.get("containers") or ()),
    )


def _terms_signature(pod: dict) -> tuple:
    aff = (pod.get("spec") or {}).get("affinity") or {}
    return labels_of(pod), aff.get("podAffinity"), aff.get("podAntiAffinity")


class PodInfo:
    """A pod with its requests parsed once; shared by the queue, the cycle and the cache.

    ``node`` is the NodeInfo the cache has attached the pod to (None while pending or a
    ghost); ``terms`` its inter-pod terms (None when it has none).
    """

    __slots__ = (
        "uid",
        "namespace",
        "name",
        "pod",
        "priority",
        "requests",
        "req_cols",
        "nonzero_cpu",
        "nonzero_mem",
        "_sig",
        "labels",
        "terms",
        "host_ports",
        "node",
        "_terms_sig",
        "passed_static",
    )

    # Set by refresh() (first called from __init__).
    pod: dict[str, Any]
    priority: int
    requests: dict[str, int]
    req_cols: tuple[tuple[int, int], ...]
    nonzero_cpu: int
    nonzero_mem: int
    labels: dict[str, str]
    terms: PodTerms | None
    host_ports: tuple[HostPort, ...]

    def __init__(self, pod: dict, columns: ResourceColumns):
        self.uid = uid_of(pod)
        self.namespace = namespace_of(pod)
        self.name = name_of(pod)
        self._sig: tuple[Any, ...] | None = None
        self._terms_sig: tuple[Any, ...] | None = None
        self.node: NodeInfo | None = None
        # (node name, Cache.node_epoch) where every filter but the resource fit passed,
        # as preemption found when it nominated the node; see SchedulerHost.nominated_node_fits.
        self.passed_static: tuple[str, int] | None = None
        self.refresh(pod, columns)

    def terms_changed(self, pod: dict) -> bool:
        """Would ``refresh(pod)`` change the labels or inter-pod terms (index keys)?"""
        return _terms_signature(pod) != self._terms_sig

    def same_spec(self, pod: dict) -> bool:
        """True when ``pod`` differs from the current object at most in status and
        bookkeeping metadata: nothing parsed from it can change. (A C-level dict
        comparison, far cheaper than building the signatures.)"""
        old = self.pod
        a, b = old.get("spec") or {}, pod.get("spec") or {}
        if a.get("nodeName") != b.get("nodeName"):
            # The bind: nodeName is not parsed into a PodInfo, so compare the rest.
            b = dict(b)
            b.pop("nodeName", None)
            if "nodeName" in a:
                b["nodeName"] = a["nodeName"]
        return a == b and labels_of(old) == labels_of(pod)

    def refresh(self, pod: dict, columns: ResourceColumns) -> bool:
        """Take the newer object; re-parse requests only if they changed. True if they did."""
        if self._sig is not None and self.same_spec(pod):
            self.pod = pod
            return False
        self.pod = pod
        self.passed_static = None  # the spec changed: filters may judge it differently
        self.priority = priority_of(pod)
        tsig = _terms_signature(pod)
        if tsig != self._terms_sig:
            self._terms_sig = tsig
            self.labels = tsig[0]
            terms = PodTerms(pod, self.namespace) if tsig[1] or tsig[2] else None
            self.terms = terms if terms else None
        sig = resources_signature(pod)
        if sig == self._sig:
            return False
        self._sig = sig
        self.requests = {k: v for k, v in pod_requests(pod).items() if k != PODS}
        nz = pod_nonzero_requests(pod)
        self.nonzero_cpu = nz.get(CPU, 0)
        self.nonzero_mem = nz.get(MEMORY, 0)
        # Only positive requests: a zero request can never fail a fit check.
        self.req_cols = tuple((columns.index(k), v) for k, v in self.requests.items() if v > 0)
        self.host_ports = host_ports(pod)
        return True

    @property
    def nominated_node_name(self) -> str:
        return (self.pod.get("status") or {}).get("nominatedNodeName") or ""

    def __repr__(self) -> str:
        return f"PodInfo({self.namespace}/{self.name})"


class ResourceColumns:
    """Resource name -> column index; grows on first sight and tells the cache to widen."""

    def __init__(self, on_new: Callable[[], object]):
        self.names: list[str] = []
        self._index: dict[str, int] = {}
        self._on_new = on_new
        for name in BASE_COLUMNS:
            self.index(name)

    def index(self, name: str) -> int:
        col = self._index.get(name)
        if col is None:
            col = self._index[name] = len(self.names)
            self.names.append(name)
            self._on_new()
        return col

    def get(self, name: str) -> int | None:
        return self._index.get(name)


class NodeInfo:
    __slots__ = ("name", "index", "node", "allocatable", "pods", "ports", "images")

    def __init__(self, node: dict, index: int):
        self.name = name_of(node)
        self.index = index
        self.node = node
        self.allocatable: dict[str, int] = {}
        self.pods: dict[str, PodInfo] = {}
        self.ports: dict[tuple[str, str, int], int] = {}  # (hostIP, protocol, port) -> pods using it
        self.images: dict[str, int] = node_images(node)  # image name -> size in bytes

    @property
    def labels(self) -> dict:
        return (self.node.get("metadata") or {}).get("labels") or {}

    @property
    def taints(self) -> list:
        return (self.node.get("spec") or {}).get("taints") or []


def node_images(node: dict) -> dict[str, int]:
    """Every name of every image in ``status.images``, with its size."""
    out: dict[str, int] = {}
    for img in (node.get("status") or {}).get("images") or ():
        for name in img.get("names") or ():
            out[name] = int(img.get("sizeBytes") or 0)
    return out


class Topology:
    """Domain ids per node row for one topology key: ``ids[i]`` indexes ``values``, -1 when
    node ``i`` lacks the label. Valid for one ``node_epoch``."""

    __slots__ = ("key", "ids", "values")

    def __init__(self, key: str, infos: list[NodeInfo]):
        self.key = key
        index: dict[str, int] = {}
        ids = np.empty(len(infos), dtype=np.int64)
        for i, ni in enumerate(infos):
            v = ni.labels.get(key)
            ids[i] = -1 if v is None else index.setdefault(v, len(index))
        self.ids = ids
        self.values = list(index)

    @property
    def num_domains(self) -> int:
        return len(self.values)
