"""A Node created through the API, read as the configuration of the kubelet that takes it over.

Owns ``node_config`` (a stored Node object to a ``NodeConfig``) and ``adopting_host`` (the
node host that runs it: one kubelet that adopts the existing Node instead of creating
one). The runtime's node claimer (``cluster/runtime/nodeclaim.py``) calls ``adopting_host``
for each Node it takes over, through the factory the caller hands it, as kwok takes over
the Nodes it manages.

The mapping, kubemu's choice where upstream has nothing to say (kwok keeps a managed
Node's status as given):

| Node field           | kubelet configuration                                                |
|----------------------|----------------------------------------------------------------------|
| ``status.capacity``  | capacity; a resource it does not name gets the default below         |
| ``status.allocatable`` | reserved = capacity - allocatable, so the kubelet posts the same allocatable; of a memory gap, the memory.available hard eviction threshold takes 100Mi first (the whole gap when smaller; none, "0%", when there is no gap) |
| ``metadata.labels``, ``spec.taints`` | the node's labels and taints (admission reads the stored Node anyway) |

Defaults for a resource the capacity leaves out: ``cpu: "4"``, ``memory: 16Gi`` (what
``kubemu serve`` gives its nodes), ``pods: "110"``, ``ephemeral-storage: 100Gi`` (a node
pool's). A resource only the allocatable names counts as capacity too. A value that is
not a quantity, an allocatable above its capacity, or a configuration a kubelet could not
run raises ``NotAdoptable`` with one line naming the field and value.
"""

from __future__ import annotations

import json
from typing import Any

from ..api.quantity import QuantityError, format_resource, parse, resource_int
from ..api.resources import MEMORY, is_extended
from ..runtime.component import ComponentSpec
from .component import NodeHostComponent
from .kubeletconfig import check_kubelet
from .node import DEFAULT_CAPACITY, DEFAULT_EVICTION_HARD, NodeConfig

API_NODE_CAPACITY = {"cpu": "4", "memory": "16Gi", **DEFAULT_CAPACITY}
_HARD_MEMORY = resource_int(MEMORY, DEFAULT_EVICTION_HARD["memory.available"])


class NotAdoptable(ValueError):
    """A Node a kubelet cannot run as stored; the message is one line naming the field."""


def _amounts(status: dict[str, Any], field: str) -> dict[str, int]:
    raw = status.get(field) or {}
    if not isinstance(raw, dict):
        raise NotAdoptable(f"status.{field}: {json.dumps(raw, default=str)} is not a map of resources")
    out = {}
    for name, value in raw.items():
        try:
            amount = resource_int(str(name), value)
        except (QuantityError, TypeError, ValueError):
            raise NotAdoptable(f"status.{field}.{name}: {json.dumps(value, default=str)} is not a quantity") from None
        if amount < 0:
            raise NotAdoptable(f"status.{field}.{name}: {json.dumps(value)} must be greater than or equal to 0")
        if is_extended(str(name)) and parse(value).denominator != 1:  # devices come in whole units
            raise NotAdoptable(f"status.{field}.{name}: {json.dumps(value)} must be an integer")
        out[str(name)] = amount
    return out


def node_config(node: dict[str, Any]) -> NodeConfig:
    """The configuration of a kubelet that posts ``node``'s capacity and allocatable."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    given = _amounts(status, "capacity")
    allocatable = _amounts(status, "allocatable")
    capacity = {name: resource_int(name, v) for name, v in API_NODE_CAPACITY.items() if name not in given}
    capacity.update(given)
    for name, amount in allocatable.items():
        capacity.setdefault(name, amount)
    reserved: dict[str, str] = {}
    kubelet: dict[str, Any] = {}
    for name, amount in allocatable.items():
        gap = capacity[name] - amount
        if gap < 0:
            raw = (status.get("allocatable") or {})[name]
            cap = format_resource(name, capacity[name])
            raise NotAdoptable(
                f"status.allocatable.{name}: {json.dumps(raw)} is more than the capacity {json.dumps(cap)}"
            )
        if name == MEMORY:
            threshold = min(gap, _HARD_MEMORY)
            # "0%" is upstream's way to set no threshold (a plain 0 is refused).
            kubelet["evictionHard"] = {"memory.available": str(threshold) if threshold else "0%"}
            gap -= threshold
        if gap:
            reserved[name] = format_resource(name, gap)
    config = NodeConfig(
        name=str(meta.get("name") or ""),
        capacity={name: format_resource(name, amount) for name, amount in capacity.items()},
        reserved=reserved,
        labels=dict(meta.get("labels") or {}),
        taints=[dict(t) for t in (node.get("spec") or {}).get("taints") or ()],
        kubelet=kubelet,
    )
    problem = check_kubelet(config)
    if problem:
        raise NotAdoptable(f"status.{problem}" if problem.startswith(("capacity.", "reserved.")) else problem)
    return config


def adopting_host(node: dict[str, Any], first_index: int) -> ComponentSpec:
    """A node host whose one kubelet takes over ``node`` (numbered ``first_index`` for its
    addresses); raises ``NotAdoptable``."""
    config = node_config(node)
    return ComponentSpec(
        f"host-{config.name}",
        NodeHostComponent,
        {"configs": [config], "first_index": first_index, "adopt": True},
        nodes=(config.name,),
    )
