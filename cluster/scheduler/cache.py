"""The scheduler's cache: every node with the pods placed on it, as numpy arrays.

Owns what the scheduler believes is on each node: pods seen bound by the watch, and pods
it has assumed onto a node but whose bind is not yet confirmed. Requests are summed
incrementally into per-node arrays so that filters and scores are vector operations over
all nodes at once. Called by ``Scheduler`` (node and pod events, assume/forget, expiry)
and read by plugins through ``Snapshot``. The arrays themselves, their layout and growth,
and the stable node ids are ``noderows.NodeRows``, which ``Cache`` extends.

Pods bound to a node the cache does not know (the node is not yet seen, or already
deleted) are kept as "ghosts" under the node name and counted when the node appears.

Beside the arrays the cache keeps what the label-reasoning plugins need: the pod index
(``podindex.PodIndex``: placed pods by labels and by affinity term), host ports and
images per node, and per-topology-key domain ids over the node rows (``topology``),
recomputed after ``node_epoch`` changes (a node added, removed, relabelled or retainted).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..api.objects import name_of, node_name_of, uid_of
from ..api.podhead import PodHead
from ..api.resources import PODS, node_allocatable
from .noderows import NodeRows
from .podindex import PodIndex
from .podinfo import (
    BASE_COLUMNS,
    CPU_COL,
    EPHEMERAL_COL,
    MEMORY_COL,
    NodeInfo,
    PodInfo,
    ResourceColumns,
    Topology,
    node_images,
)
from .podtable import PodTable
from .priorityload import PriorityLoad
from .snapshot import Snapshot as Snapshot  # plugins import it from here

DEFAULT_ASSUME_TTL = 30.0  # emulated seconds an assumed pod waits for the watch to confirm its bind


class Cache(NodeRows):
    def __init__(self, assume_ttl: float = DEFAULT_ASSUME_TTL):
        self.assume_ttl = assume_ttl
        super().__init__()
        self._infos: list[NodeInfo] = []
        self._nodes: dict[str, NodeInfo] = {}
        self._snapshot = None
        self._table = PodTable(0)  # attached pods as columns, for the preemption dry run
        self.placed_load = PriorityLoad(self)  # attached pods' requests by priority and node
        self.columns = ResourceColumns(self._add_column)
        # uid -> (PodInfo, node name) for every pod counted or ghosted; assumed ones also in _assumed.
        self._placed: dict[str, tuple[PodInfo, str]] = {}
        self._assumed: dict[str, float] = {}  # uid -> expiry, in assume order (= expiry order)
        self._ghosts: dict[str, dict[str, PodInfo]] = {}
        self.pods = PodIndex()
        self.node_epoch = 0
        self._topologies: dict[str, Topology] = {}
        self._topology_epoch = -1
        self.image_nodes: dict[str, int] = {}
        self.namespace_labels: dict[str, dict[str, str]] = {}  # fed by the scheduler's namespace watch

    # ---- views -------------------------------------------------------------------------

    @property
    def table(self) -> PodTable:
        """The placed pods as columns, every attach written (``PodTable.flushed``)."""
        return self._table.flushed()

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = Snapshot(self)
        return self._snapshot

    def topology(self, key: str) -> Topology:
        if self._topology_epoch != self.node_epoch:
            self._topologies.clear()
            self._topology_epoch = self.node_epoch
        topo = self._topologies.get(key)
        if topo is None:
            topo = self._topologies[key] = Topology(key, self._infos)
        return topo

    def _count_images(self, images: dict[str, int], sign: int) -> None:
        for name in images:
            n = self.image_nodes.get(name, 0) + sign
            if n:
                self.image_nodes[name] = n
            else:
                self.image_nodes.pop(name, None)

    # ---- nodes -------------------------------------------------------------------------

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    def rows_of_ids(self, ids: Iterable[int]) -> np.ndarray:
        """The rows of the nodes of stable ``ids`` (each given once), ascending; ids of nodes
        not in the cache are left out. Rows hold while ``node_epoch`` stands."""
        nodes, name = self._nodes, self._id_name
        rows = sorted(ni.index for ni in (nodes.get(name[i]) for i in ids) if ni is not None)
        return np.fromiter(rows, dtype=np.intp, count=len(rows))

    def add_node(self, node: dict[str, Any], raw: bytes | None = None) -> set[str]:
        """Add (or, for a known name, update) a node. Returns the changed aspects. ``raw``,
        the object's encoding when the watch gave it, is what the cache keeps of it."""
        name = name_of(node)
        if name in self._nodes:
            return self.update_node(node, raw)
        if self._n == self._rows:
            self._grow_rows()
        self._row_id[self._n] = self.node_id(name)
        ni = NodeInfo(node, self._n, raw)
        self._n += 1
        self._infos.append(ni)
        self._nodes[name] = ni
        self._set_allocatable(ni, node_allocatable(node))
        self._count_images(ni.images, 1)
        for pinfo in self._ghosts.pop(name, {}).values():
            self._attach(ni, pinfo)
        self._snapshot = None
        self.node_epoch += 1
        return {"added"}

    def update_node(self, node: dict[str, Any], raw: bytes | None = None) -> set[str]:
        """Replace a node's object; report which scheduling-relevant aspects changed.

        Aspects: ``allocatable``, ``labels``, ``taints``, ``unschedulable``. A status-only
        heartbeat changes none, so it must not wake unschedulable pods.
        """
        ni = self._nodes.get(name_of(node))
        if ni is None:
            return self.add_node(node, raw)
        old_labels, old_taints, old_cordon, old_images = ni.labels, ni.taints, ni.unschedulable, ni.images
        ni.set_node(node, raw)
        changed: set[str] = set()
        alloc = node_allocatable(node)
        if alloc != ni.allocatable:
            changed.add("allocatable")
            self._set_allocatable(ni, alloc)
        if old_labels != ni.labels:
            changed.add("labels")
        if old_taints != ni.taints:
            changed.add("taints")
        if old_cordon != ni.unschedulable:
            changed.add("unschedulable")
        if old_images != ni.images:
            self._count_images(old_images, -1)
            self._count_images(ni.images, 1)
        if changed - {"allocatable"}:
            self.node_epoch += 1
        return changed

    def _set_allocatable(self, ni: NodeInfo, alloc: dict[str, int]) -> None:
        ni.allocatable = alloc
        self.touch(self._ids[ni.name])
        i = ni.index
        cols = [(self.columns.index(k), v) for k, v in alloc.items() if k != PODS]
        self._alloc[i, :] = 0  # after index(): a new column may have widened the array
        self._row_ver[i] += 1
        for col, v in cols:
            self._alloc[i, col] = v
        # Upstream: a node without allocatable pods admits none.
        self._allowed[i] = alloc.get(PODS, 0)

    def remove_node(self, name: str) -> bool:
        ni = self._nodes.pop(name, None)
        if ni is None:
            return False
        if ni.pods:
            self._ghosts[name] = dict(ni.pods)
            for pinfo in ni.pods.values():
                self.pods.remove(pinfo)
                self._table.remove(pinfo)
                self.placed_load.remove(pinfo.uid)
                pinfo.node = None
        self._count_images(ni.images, -1)
        self.node_epoch += 1
        i, last = ni.index, self._n - 1
        if i != last:  # swap-remove: keep rows dense; the last node takes the freed index
            moved = self._infos[last]
            for a in (
                self._alloc,
                self._req,
                self._nonzero,
                self._pod_count,
                self._allowed,
                self._row_id,
                self._row_ver,
            ):
                a[i] = a[last]
            moved.index = i
            self._infos[i] = moved
            self._table.move_node(moved.pods.values(), i)
            self.pods.nodes_moved()
        for a in (self._alloc, self._req, self._nonzero, self._pod_count, self._allowed, self._row_ver):
            a[last] = 0
        self._infos.pop()
        self._n -= 1
        self._snapshot = None
        return True

    # ---- pods --------------------------------------------------------------------------

    def new_pod_info(self, pod: dict[str, Any]) -> PodInfo:
        return PodInfo(pod, self.columns)

    def pod_info(self, uid: str) -> PodInfo | None:
        entry = self._placed.get(uid)
        return None if entry is None else entry[0]

    def pod_node(self, uid: str) -> str | None:
        entry = self._placed.get(uid)
        return None if entry is None else entry[1]

    def placed_pods(self) -> Iterator[PodInfo]:
        """Every placed pod, assumed or confirmed."""
        return (pinfo for pinfo, _ in self._placed.values())

    def is_assumed(self, uid: str) -> bool:
        return uid in self._assumed

    def _account(self, i: int, pinfo: PodInfo, sign: int) -> None:
        self._row_ver[i] += 1
        for col, amount in pinfo.req_cols:
            self._req[i, col] += sign * amount
        self._nonzero[i, 0] += sign * pinfo.nonzero_cpu
        self._nonzero[i, 1] += sign * pinfo.nonzero_mem
        self._pod_count[i] += sign

    def _attach(self, ni: NodeInfo, pinfo: PodInfo) -> None:
        ni.pods[pinfo.uid] = pinfo
        pinfo.node = ni
        self._account(ni.index, pinfo, 1)
        for hp in pinfo.host_ports:
            ni.ports[hp] = ni.ports.get(hp, 0) + 1
        self.pods.add(pinfo)
        self._table.add(pinfo, ni.index)
        self.placed_load.add(pinfo, ni.name)

    def _detach(self, ni: NodeInfo, pinfo: PodInfo) -> None:
        del ni.pods[pinfo.uid]
        pinfo.node = None
        self._account(ni.index, pinfo, -1)
        for hp in pinfo.host_ports:
            n = ni.ports.get(hp, 0) - 1
            if n > 0:
                ni.ports[hp] = n
            else:
                ni.ports.pop(hp, None)
        self.pods.remove(pinfo)
        self._table.remove(pinfo)
        self.placed_load.remove(pinfo.uid)

    def _place(self, pinfo: PodInfo, node_name: str) -> None:
        node_name = sys.intern(node_name)  # each pod's copy decoded afresh: keep the one
        self._placed[pinfo.uid] = (pinfo, node_name)
        ni = self._nodes.get(node_name)
        if ni is None:
            self._ghosts.setdefault(node_name, {})[pinfo.uid] = pinfo
        else:
            self._attach(ni, pinfo)

    def _unplace(self, uid: str) -> PodInfo | None:
        entry = self._placed.pop(uid, None)
        if entry is None:
            return None
        pinfo, node_name = entry
        ni = self._nodes.get(node_name)
        if ni is not None and uid in ni.pods:
            self._detach(ni, pinfo)
        else:
            ghosts = self._ghosts.get(node_name)
            if ghosts is not None:
                ghosts.pop(uid, None)
                if not ghosts:
                    del self._ghosts[node_name]
        return pinfo

    def assume_pod(self, pinfo: PodInfo, node_name: str, now: float) -> None:
        """Count ``pinfo`` on ``node_name`` before the bind is confirmed by the watch."""
        if pinfo.uid in self._placed:
            raise ValueError(f"pod {pinfo.namespace}/{pinfo.name} is already in the cache")
        self._place(pinfo, node_name)
        self._assumed[pinfo.uid] = now + self.assume_ttl

    def forget_pod(self, uid: str) -> PodInfo | None:
        """Undo an assumption (bind failed). Confirmed pods are left alone."""
        if self._assumed.pop(uid, None) is None:
            return None
        return self._unplace(uid)

    def add_pod(self, pod: dict[str, Any], raw: bytes | None = None, same_spec: bool | None = None) -> PodInfo:
        """A pod seen bound by the watch: confirm an assumption, move it, or count it anew.
        ``raw``, the object's encoding, lets the placed pod drop its dict (``PodInfo.compact``);
        ``same_spec``, when the caller knows it, is the known pod's ``same_spec(pod)``."""
        pinfo = self._add_pod(pod, same_spec)
        pinfo.compact(raw, placed=True)
        return pinfo

    def _add_pod(self, pod: dict[str, Any], same_spec: bool | None) -> PodInfo:
        uid, node_name = uid_of(pod), node_name_of(pod)
        self._assumed.pop(uid, None)
        entry = self._placed.get(uid)
        if entry is None:
            pinfo = self.new_pod_info(pod)
            self._place(pinfo, node_name)
            return pinfo
        pinfo, old_node = entry
        if old_node != node_name:  # assumed on one node, bound to another
            self._unplace(uid)
            pinfo.refresh(pod, self.columns)
            self._place(pinfo, node_name)
            return pinfo
        self._refresh_in_place(pinfo, pod, same_spec)
        return pinfo

    def update_assumed(self, pod: dict[str, Any]) -> PodInfo | None:
        """A newer object of an assumed pod (its bind still in flight): it stays assumed on
        its node, but what it holds and how it is indexed follow the new object."""
        entry = self._placed.get(uid_of(pod))
        if entry is None or entry[0].uid not in self._assumed:
            return None
        self._refresh_in_place(entry[0], pod)
        return entry[0]

    def _refresh_in_place(self, pinfo: PodInfo, pod: dict[str, Any], same_spec: bool | None = None) -> None:
        ni = pinfo.node
        if pinfo.same_spec(pod) if same_spec is None else same_spec:
            if ni is not None and pinfo.deleting != _deleting(pod):
                # PodTopologySpread counts only pods not being deleted: re-index it.
                self.pods.remove(pinfo)
                pinfo.pod = pod
                self.pods.add(pinfo)
            pinfo.pod = pod
            if ni is not None and self._table.refresh_start(pinfo):
                self.touch(self._ids[ni.name])
        elif ni is not None and (pinfo.terms_changed(pod) or pinfo.requests_changed(pod)):
            # Labels, terms, requests or ports changed: take it off and put it back.
            self._detach(ni, pinfo)
            pinfo.refresh(pod, self.columns)
            self._attach(ni, pinfo)
        else:
            pinfo.refresh(pod, self.columns)

    def head_refreshable(self, head: PodHead, raw: bytes | None) -> PodInfo | None:
        """The confirmed, compacted pod of which ``head`` (with its encoding ``raw``) is a
        version on the same node with the same spec and labels, so that ``refresh_by_head``
        does all ``add_pod`` would; else None."""
        entry = self._placed.get(head.uid)
        if raw is None or entry is None or head.uid in self._assumed:
            return None
        pinfo, node_name = entry
        if node_name != head.node_name or not pinfo.compacted or not pinfo.same_head(head):
            return None
        return pinfo

    def confirm_by_head(self, head: PodHead, raw: bytes | None) -> PodInfo | None:
        """``add_pod`` of the version an assumed pod's bind made (``PodInfo.bound_as``),
        from its head alone: the assumption becomes a placement. None when ``head`` is
        not that version (the caller decodes the object and takes the general path)."""
        entry = self._placed.get(head.uid)
        if raw is None or entry is None or head.uid not in self._assumed:
            return None
        pinfo, node_name = entry
        if node_name != head.node_name or not pinfo.bound_as(head):
            return None
        del self._assumed[head.uid]
        self._take_head(pinfo, head, lambda: pinfo.confirm_bound(raw, head))
        return pinfo

    def refresh_by_head(self, pinfo: PodInfo, raw: bytes, head: PodHead) -> None:
        """``add_pod`` of a version ``head_refreshable`` accepted, without its dict."""
        self._take_head(pinfo, head, lambda: pinfo.take_head(raw, head))

    def _take_head(self, pinfo: PodInfo, head: PodHead, take: Callable[[], object]) -> None:
        ni = pinfo.node
        if ni is not None and pinfo.deleting != head.deleting:
            # PodTopologySpread counts only pods not being deleted: re-index it.
            self.pods.remove(pinfo)
            take()
            self.pods.add(pinfo)
        else:
            take()
        if ni is not None and self._table.refresh_start(pinfo):
            self.touch(self._ids[ni.name])

    def remove_pod(self, uid: str) -> PodInfo | None:
        """A pod deleted or terminal: release what it held. Returns it if it was counted."""
        self._assumed.pop(uid, None)
        return self._unplace(uid)

    def cleanup(self, now: float) -> list[PodInfo]:
        """Forget assumed pods whose bind was never confirmed within ``assume_ttl``.

        Expiries are in insertion order, so the scan stops at the first live one.
        Relies on ``now`` never going backwards, which emulated time guarantees.
        """
        expired = []
        for uid, deadline in self._assumed.items():
            if deadline > now:
                break
            expired.append(uid)
        out = []
        for uid in expired:
            pinfo = self.forget_pod(uid)
            if pinfo is not None:
                out.append(pinfo)
        return out

    @contextmanager
    def holding(self, placements: Iterable[tuple[PodInfo, str]]) -> Iterator[None]:
        """Count pending pods on nodes for a while: (PodInfo, node name) pairs; the
        nominated-pods pass of the filter. Unknown nodes and placed pods are skipped."""
        done = []
        try:
            for pinfo, node_name in placements:
                ni = self._nodes.get(node_name)
                if ni is not None and pinfo.node is None:
                    self._attach(ni, pinfo)
                    done.append((ni, pinfo))
            yield
        finally:
            for ni, pinfo in reversed(done):
                self._detach(ni, pinfo)

    @contextmanager
    def without(self, pods: Iterable[PodInfo]) -> Iterator[None]:
        """Leave placed pods out for a while (preemption's what-if on a node). Afterwards
        each node lists its pods in the same order and each pod keeps its attach order
        (``PodTable.seq``): victims tied on priority and start are ordered by them, so a
        what-if must leave no trace in the next one's choice."""
        done = []
        orders: dict[int, tuple[NodeInfo, list[str]]] = {}
        table = self._table
        try:
            for pinfo in pods:
                ni = pinfo.node
                if ni is not None:
                    if ni.index not in orders:
                        orders[ni.index] = (ni, list(ni.pods))
                    slot = table.slot_of(pinfo.uid)  # first: it may grow the arrays
                    seq = int(table.seq[slot])
                    self._detach(ni, pinfo)
                    done.append((ni, pinfo, seq))
            yield
        finally:
            for ni, pinfo, seq in reversed(done):
                self._attach(ni, pinfo)
                slot = table.slot_of(pinfo.uid)
                table.seq[slot] = seq
            for ni, order in orders.values():
                placed = ni.pods
                kept = [(uid, placed.pop(uid)) for uid in order if uid in placed]
                placed.update(kept)

    def next_expiry(self) -> float | None:
        """When the oldest assumed pod's TTL ends (assume order is expiry order)."""
        for deadline in self._assumed.values():
            return deadline
        return None

    def assumed_count(self) -> int:
        return len(self._assumed)


# Plugins and tests import the per-object types from here, beside the cache that builds them.
__all__ = [
    "BASE_COLUMNS",
    "CPU_COL",
    "EPHEMERAL_COL",
    "MEMORY_COL",
    "DEFAULT_ASSUME_TTL",
    "Cache",
    "NodeInfo",
    "PodInfo",
    "ResourceColumns",
    "Snapshot",
    "Topology",
    "node_images",
]


def _deleting(pod: dict[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))
