"""One scheduling cycle's view of the cache (``Snapshot``).

Owns nothing of its own: the cache's arrays cut to the node count at the cycle's start, and
the lookups plugins need (topology domains, image spread, namespace labels, columns, node
rows). Built by ``cache.Cache.snapshot`` and read by the framework and every plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .podindex import PodIndex
from .podinfo import NodeInfo, Topology

if TYPE_CHECKING:
    from .cache import Cache


class Snapshot:
    """One cycle's view of the cache.

    The scheduler is single-threaded and the cache only changes between cycles, so the
    cache's arrays are the snapshot (no copy); this object just fixes ``N`` and hands out
    ``[:N]`` views. It is rebuilt whenever the cache changes shape (node added/removed,
    a new resource column, growth), see ``Cache.snapshot``.
    """

    __slots__ = (
        "num_nodes",
        "allocatable",
        "requested",
        "nonzero_requested",
        "pod_count",
        "allowed_pods",
        "node_infos",
        "column_names",
        "_columns",
        "_by_name",
        "pods",
        "_cache",
    )

    def __init__(self, cache: Cache):
        n = cache._n
        self.num_nodes = n
        self.allocatable = cache._alloc[:n]
        self.requested = cache._req[:n]
        self.nonzero_requested = cache._nonzero[:n]  # columns: cpu, memory
        self.pod_count = cache._pod_count[:n]
        self.allowed_pods = cache._allowed[:n]
        self.node_infos = cache._infos
        self.column_names = cache.columns.names
        self._columns = cache.columns
        self._by_name = cache._nodes
        self.pods: PodIndex = cache.pods
        self._cache = cache

    @property
    def node_epoch(self) -> int:
        """Changes whenever node rows, labels, taints or schedulability change; plugins
        memoise per-node masks on it."""
        return self._cache.node_epoch

    def topology(self, key: str) -> Topology:
        return self._cache.topology(key)

    def image_num_nodes(self, image: str) -> int:
        """On how many nodes ``image`` is present (ImageLocality's spread factor)."""
        return self._cache.image_nodes.get(image, 0)

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        return self._cache.namespace_labels.get(namespace)

    def column(self, name: str) -> int | None:
        return self._columns.get(name)

    def index_of(self, node_name: str) -> int | None:
        ni = self._by_name.get(node_name)
        return None if ni is None else ni.index

    def node_info(self, index: int) -> NodeInfo:
        return self.node_infos[index]

    def node_name(self, index: int) -> str:
        return self.node_infos[index].name
