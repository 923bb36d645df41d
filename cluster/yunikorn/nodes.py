"""The nodes as YuniKorn sees them: capacity, what every pod on them takes, and who holds a
reservation.

Owns ``Node`` (allocatable as a YuniKorn vector, the sum of the requests of every pod bound
to it, whichever scheduler placed it, the YuniKorn allocations on it, and its
reservations) and ``NodeSet`` (the nodes in name order, the cluster total that is root's
max, and the capacity epoch: a counter that moves whenever room appears anywhere, so an ask
that fitted nowhere need not be tried again before it moves). Called by the core; read by
the preemptors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api.placement import fits
from .asks import Alloc
from .resources import Res, add_into


@dataclass(eq=False)
class Node:
    name: str
    obj: dict[str, Any]
    capacity: Res
    index: int = 0  # position in name order: the tie-breaker of every node choice
    allocated: Res = field(default_factory=dict)  # every bound pod's requests
    allocs: dict[str, Alloc] = field(default_factory=dict)  # YuniKorn's placed pods, by uid
    reserved: list[Alloc] = field(default_factory=list)  # asks holding a reservation here
    schedulable: bool = True

    def free(self) -> Res:
        out = {k: v - self.allocated.get(k, 0) for k, v in self.capacity.items()}
        for k, v in self.allocated.items():
            if k not in out:
                out[k] = -v
        return out

    def fits(self, res: Res, removed: Res | None = None) -> bool:
        """``res`` fits the free room, with ``removed`` given back first."""
        back = removed or {}
        return fits(res.items(), lambda k: self.capacity.get(k, 0) - self.allocated.get(k, 0) + back.get(k, 0))


class NodeSet:
    def __init__(self) -> None:
        self.by_name: dict[str, Node] = {}
        self.ordered: list[Node] = []  # by name
        self.total: Res = {}  # the cluster: root's max
        self.epoch = 0  # moves whenever room appears (a pod gone, a node added or grown)
        self.reshaped = False  # nodes came or went since the last ``settle``
        self.changed: set[str] = set()  # nodes whose numbers moved since the last ``settle``

    def __iter__(self):
        return iter(self.ordered)

    def __len__(self) -> int:
        return len(self.ordered)

    def get(self, name: str) -> Node | None:
        return self.by_name.get(name)

    def upsert(self, name: str, obj: dict[str, Any], capacity: Res) -> Node:
        node = self.by_name.get(name)
        if node is None:
            node = Node(name, obj, capacity)
            self.by_name[name] = node
            self.reshaped = True
            add_into(self.total, capacity)
            self.epoch += 1
        elif capacity != node.capacity:  # a heartbeat mostly changes nothing YuniKorn counts
            add_into(self.total, node.capacity, -1)
            add_into(self.total, capacity)
            if any(capacity.get(k, 0) > v for k, v in node.capacity.items()) or set(capacity) - set(node.capacity):
                self.epoch += 1
            node.obj, node.capacity = obj, capacity
            self.changed.add(name)
        else:
            node.obj = obj
        unschedulable = bool((obj.get("spec") or {}).get("unschedulable"))
        if node.schedulable == unschedulable:
            node.schedulable = not unschedulable
            self.epoch += 1
        return node

    def remove(self, name: str) -> Node | None:
        node = self.by_name.pop(name, None)
        if node is not None:
            add_into(self.total, node.capacity, -1)
            self.reshaped = True
        return node

    def settle(self) -> bool:
        """Put the nodes back in name order after nodes came or went (once per batch, not per
        node: a cluster of thousands arrives node by node). True when the order changed."""
        if not self.reshaped:
            return False
        self.ordered = sorted(self.by_name.values(), key=lambda n: n.name)
        for i, n in enumerate(self.ordered):
            n.index = i
        self.reshaped = False
        return True

    def bind(self, node: Node, res: Res, sign: int = 1) -> None:
        add_into(node.allocated, res, sign)
        self.changed.add(node.name)
        if sign < 0:
            self.epoch += 1
