"""Which Nodes created or deleted through the API kubemu takes over, as kwok does.

Owns ``NodeClaimer``: fed the events of a watch on Nodes, it decides which Nodes get a
kubelet (a Node that no kubelet of this cluster runs and that the policy takes) and whose
kubelet stops (a deleted Node that one runs). ``Cluster.claim_nodes``
(``cluster.py``) polls the watch, asks ``decide`` and carries the answer out on either
runtime: ``add_host`` with the spec the claimer's ``build`` made (the kubelet adopts the
existing Node: ``cluster/kubelet/adopt.py``), and ``kill_node`` for a deleted Node (its
pods are left to pod GC, as upstream's are). The callers that start clusters (the
scenario driver, ``kubemu serve``) hand it in with the policy; without one nothing is
taken over.

The policies (``kubemu serve --manage-nodes``, a scenario's ``spec.cluster.manageNodes``):

| policy      | a Node no kubelet runs is taken over when                      |
|-------------|-----------------------------------------------------------------|
| ``all``     | it is not annotated ``kubemu.io/managed: "false"`` (the default) |
| ``annotated`` | it is annotated ``kubemu.io/managed: "true"``                 |
| ``none``    | never (Nodes created through the API stay as stored)             |

A Node is judged on every ADDED or MODIFIED event until it is taken over, so annotating
one later takes it over then. One the kubelet cannot run as stored (a capacity that is not
a quantity) is left alone with one log line naming the node and the field, logged again
only when the reason changes. Events are read as far as the name and annotations unless
a Node is to be taken over: most Node events are the kubelets' own status writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from .component import ComponentSpec, WatchEvent

if TYPE_CHECKING:
    from .cluster import Fleet

MANAGED_ANNOTATION = "kubemu.io/managed"
POLICIES = ("all", "annotated", "none")

Build = Callable[[dict[str, Any], int], ComponentSpec]


class _Meta(msgspec.Struct):
    name: str = ""
    annotations: dict[str, str] | None = None


class _Head(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)


_read_head = msgspec.msgpack.Decoder(_Head).decode


def wanted(policy: str, annotations: dict[str, str] | None) -> bool:
    """Whether ``policy`` takes over a Node with these annotations."""
    value = (annotations or {}).get(MANAGED_ANNOTATION)
    if policy == "all":
        return value != "false"
    return policy == "annotated" and value == "true"


def _head(ev: WatchEvent) -> _Meta:
    if ev.raw is not None:
        try:
            return _read_head(ev.raw).metadata
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass  # not the usual shape: the object says what it is
    meta = ev.obj.get("metadata") or {}
    annotations = meta.get("annotations")
    return _Meta(str(meta.get("name") or ""), annotations if isinstance(annotations, dict) else None)


class NodeClaimer:
    def __init__(self, policy: str, build: Build):
        if policy not in POLICIES:
            raise ValueError(f"manageNodes: {policy!r} is not one of {', '.join(POLICIES)}")
        self.policy, self.build = policy, build
        self.refused: dict[str, str] = {}  # node -> why it is left alone (logged once per reason)

    def decide(
        self, events: Sequence[WatchEvent], fleet: Fleet, log: Callable[[str], None]
    ) -> tuple[list[ComponentSpec], list[str]]:
        """The hosts to start (one per Node taken over) and the nodes whose kubelet stops."""
        last: dict[str, tuple[WatchEvent, _Meta]] = {}
        for ev in events:  # only the latest event of a Node counts
            if ev.kind == "Node":
                meta = _head(ev)
                if meta.name:
                    last.pop(meta.name, None)
                    last[meta.name] = (ev, meta)
        adopt: list[ComponentSpec] = []
        release: list[str] = []
        index = sum(len(spec.nodes) for spec in fleet.hosts)  # addresses never reused
        for name, (ev, meta) in last.items():
            runs = name in fleet.host_index and name not in fleet.removed_nodes
            if ev.type == "DELETED":
                self.refused.pop(name, None)
                if runs:
                    release.append(name)
            elif not runs and wanted(self.policy, meta.annotations):
                spec = self._build(name, ev.obj, index + len(adopt), log)
                if spec is not None:
                    adopt.append(spec)
        return adopt, release

    def _build(self, name: str, node: dict[str, Any], index: int, log: Callable[[str], None]) -> ComponentSpec | None:
        try:
            spec = self.build(node, index)
        except ValueError as e:
            why = str(e)
            if self.refused.get(name) != why:
                self.refused[name] = why
                log(f"kubemu: node {name}: {why}; no kubelet runs it")
            return None
        self.refused.pop(name, None)
        return spec
