"""The kubelet's own Node as the apiserver stores it: what admission reads of it.

Owns ``AdmittedNode`` (the labels and taints admission checks a pod against), how a Node
watch event is read into one (``read_node``) and the node a kubelet falls back to
(``configured_node``). Upstream's kubelet keeps a Node informer restricted to its own node
and admits against the cached object, so a label or taint set through the API is what the
next admission sees; until the Node is in that cache, or once it is deleted, it admits
against the node its local configuration describes (``getNodeAnyWay``, then
upstream's GeneralPredicates). Nothing is re-checked when the Node changes
later: a running pod stays whatever its node becomes (``IgnoredDuringExecution``).

``spec.unschedulable`` is not part of what admission reads: upstream's admission ignores it
(a pod bound by ``spec.nodeName`` to a cordoned node runs), as it ignores the NoSchedule
taints. The kubelet reads it only to record the NodeNotSchedulable and NodeSchedulable
Events of a cordon and an uncordon (``NodeRead.unschedulable``).

Most Node events are status writes (each kubelet's own posts, the node lifecycle
controller's conditions) that change nothing admission reads, and every node host sees
every Node's events. So ``read_node`` reads the name, the encoded labels and the encoded
spec without decoding the status; ``Kubelet.on_node`` takes a digest of the two encoded
parts and decodes them only when the digest moved. ``NodeHost.on_watch`` calls
``read_node`` per Node event and routes the result by name.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from ..api.codec import encode
from .node import NodeConfig, node_labels

_NIL = msgspec.Raw(b"\xc0")  # msgpack nil: what an absent field reads as


class _Meta(msgspec.Struct):
    name: str = ""
    labels: msgspec.Raw = _NIL


class _Node(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: msgspec.Raw = _NIL


class _Spec(msgspec.Struct):
    taints: list[dict[str, Any]] | None = None
    unschedulable: Any = None  # what the API's validation lets through: a bool, or absent


_read_node = msgspec.msgpack.Decoder(_Node).decode
_read_labels = msgspec.msgpack.Decoder(dict[str, str] | None).decode
_read_spec = msgspec.msgpack.Decoder(_Spec).decode


class AdmittedNode(NamedTuple):
    """The labels and taints of the node a kubelet admits pods against."""

    labels: dict[str, str]
    taints: tuple[dict[str, Any], ...]


def configured_node(config: NodeConfig) -> AdmittedNode:
    """The node as the kubelet's configuration describes it (the Node it registers)."""
    return AdmittedNode(node_labels(config), tuple(config.taints or ()))


class NodeRead(NamedTuple):
    """One Node event as far as ``read_node`` reads it: its name; the digest and the
    decoding of the labels and spec are left to the host that holds the node (``digest``)
    and to a kubelet that finds the digest moved (``node``)."""

    name: str
    labels_raw: msgspec.Raw
    spec_raw: msgspec.Raw

    def digest(self) -> int:
        """Equal for two versions of the Node with the same labels and spec (bar a hash
        collision, which would leave a change unseen until the next one)."""
        return hash((bytes(self.labels_raw), bytes(self.spec_raw)))

    def node(self) -> AdmittedNode | None:
        """The labels and taints; None for ones not shaped as the API's validation leaves them."""
        try:
            return AdmittedNode(_read_labels(self.labels_raw) or {}, tuple(_read_spec(self.spec_raw).taints or ()))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    def unschedulable(self) -> bool:
        """Whether the node is cordoned (``spec.unschedulable`` true)."""
        try:
            return _read_spec(self.spec_raw).unschedulable is True
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False


def read_node(raw: bytes | None, obj: dict[str, Any] | None) -> NodeRead | None:
    """A Node event's name, labels and spec from its bytes (or, for an event made up
    without bytes, from its object); None for an object not shaped like a Node, which
    the apiserver's validation never lets through."""
    try:
        head = _read_node(raw if raw is not None else encode(obj))
        meta = head.metadata
        return NodeRead(meta.name, meta.labels, head.spec)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
