"""The PodNominator: which pending pods are nominated to run on which node.

Owns the two maps of upstream's nominator (node -> nominated pods in insertion order,
pod uid -> node) and their rules (upstream's nominator): a pod's nomination comes from its
``status.nominatedNodeName`` (``MODE_NOOP``) or from a preemption decision
(``MODE_OVERRIDE``, where an empty node name clears it); an update keeps a nomination
the scheduler made that has not reached the API yet; a pod is never listed twice.
Lives inside ``SchedulingQueue``, which calls it on pod add, update, delete and after a
failed cycle; the scheduler removes a pod's nomination when it assumes the pod. Read by
the filter's nominated-pods pass and by preemption (the next issue).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .podinfo import PodInfo
    from .priorityload import PriorityLoad

MODE_NOOP = 0  # take the node from the pod's status.nominatedNodeName
MODE_OVERRIDE = 1  # take the node given here ("" clears the nomination)


@dataclass(frozen=True)
class NominatingInfo:
    nominated_node_name: str = ""
    mode: int = MODE_NOOP


def _status_nnn(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("nominatedNodeName") or ""


class PodNominator:
    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}  # node -> {uid: PodInfo}, insertion order
        self._node_of: dict[str, str] = {}  # uid -> node
        self.load: PriorityLoad | None = None  # a PriorityLoad the scheduler attaches, told of every change
        self.version = 0  # moves with every nomination recorded or removed

    def add(
        self, pinfo: PodInfo, nominating: NominatingInfo | None = None, status_nominated: str | None = None
    ) -> None:
        """Record ``pinfo``'s nomination, replacing any it had. Bound pods are never nominated.
        ``status_nominated``: the pod's ``status.nominatedNodeName`` when the caller has
        read it (a pod kept as bytes is then not decoded for it)."""
        self.delete(pinfo.uid)
        if nominating is not None and nominating.mode == MODE_OVERRIDE:
            node = nominating.nominated_node_name
        elif status_nominated is not None:
            node = status_nominated
        else:
            node = _status_nnn(pinfo.pod)
        if not node or (pinfo.pod.get("spec") or {}).get("nodeName"):
            return
        self._node_of[pinfo.uid] = node
        self._by_node.setdefault(node, {})[pinfo.uid] = pinfo
        self.version += 1
        if self.load is not None:
            self.load.add(pinfo, node)

    def update(self, old_pod: dict[str, Any], new_pinfo: PodInfo) -> None:
        """A pending pod's new object. When neither version carries a nomination but the
        nominator holds one, it is the scheduler's own, not yet written: keep it."""
        nominating = None
        if not _status_nnn(old_pod) and not _status_nnn(new_pinfo.pod):
            node = self._node_of.get(new_pinfo.uid)
            if node is not None:
                nominating = NominatingInfo(node, MODE_OVERRIDE)
        self.add(new_pinfo, nominating)

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        self.version += 1
        if self.load is not None:
            self.load.remove(uid)
        pods = self._by_node.get(node)
        if pods is not None:
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node]

    def entries(self) -> Iterator[tuple[PodInfo, str]]:
        """Every (PodInfo, node) nomination, in no particular order."""
        for node, pods in self._by_node.items():
            for pinfo in pods.values():
                yield pinfo, node

    def nodes(self) -> list[str]:
        """Nodes with at least one nominated pod."""
        return list(self._by_node)

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The PodInfos nominated to ``node_name``, in the order they were nominated."""
        return list((self._by_node.get(node_name) or {}).values())

    def __len__(self) -> int:
        return len(self._node_of)
