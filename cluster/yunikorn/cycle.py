"""YuniKorn's scheduling cycles: which ask goes where, next.

Owns ``run`` (one batch: cycles until one yields nothing or the batch is full; each
cycle yields at most one result, tried in upstream's order: asks holding a reservation
first, then the queue tree in its fair order, applications in their queue's order, asks by
priority then age), the handling of one ask (section 6.1 of docs/yunikorn.md: queue
headroom, required node, the nodes in sort order, a reservation once the ask is 2 s old,
then preemption) and ``next_wakeup`` (when waiting asks next may act on their own: a
reservation, a preemption gate opening, a quota-preemption check). Called by
``component.py`` with a ``YuniKorn`` state (``core.py``).

Within a batch an ask that gave nothing is not tried again: what it waits for (room freed,
a node added, time passing) arrives as a watch event or a wakeup, which starts a new batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api.events import make_event
from .asks import Alloc
from .core import COMPONENT, RESERVATION_DELAY, YuniKorn
from .dspreempt import preempt_required_node
from .nodes import Node
from .preemption import next_gate_time, preempt
from .queues import Queue, sorted_apps, sorted_children
from .resources import fits_defined


@dataclass
class _Batch:
    now: float
    tried: dict[str, Alloc] = field(default_factory=dict)  # asks that gave nothing this batch
    order: dict[str, list[Alloc]] = field(default_factory=dict)  # leaf path -> asks in order
    cursor: dict[str, int] = field(default_factory=dict)
    exhausted: set[str] = field(default_factory=set)  # queue paths with nothing left to try


def run(yk: YuniKorn, now: float, limit: int) -> int:
    """Scheduling cycles until one gives nothing or ``limit`` gave something; returns how many did."""
    _settle(yk)
    b = _Batch(now)
    results = 0
    while results < limit:
        yk.gate.new_cycle()
        if _reserved_phase(yk, b) or _walk(yk, yk.tree.root, b):
            results += 1
            continue
        break
    _quota(yk, now)
    _show_logs(yk, b)
    b.tried.clear()
    return results


def _settle(yk: YuniKorn) -> None:
    if yk.nodes.settle():
        yk.index.rebuild()
    else:
        for name in yk.nodes.changed:
            node = yk.nodes.get(name)
            if node is not None:
                yk.index.refresh(node)
    yk.nodes.changed.clear()


# ---- reserved asks ----------------------------------------------------------------------


def _reserved_phase(yk: YuniKorn, b: _Batch) -> bool:
    for a in sorted(yk.reserved.values(), key=lambda x: x.seq):
        if a.uid in b.tried:
            continue
        if _try_reserved(yk, a, b.now):
            return True
        b.tried[a.uid] = a
    return False


def _try_reserved(yk: YuniKorn, a: Alloc, now: float) -> bool:
    node = yk.nodes.get(a.reserved_node)
    if node is None or a.queue is None:
        return False
    in_quota = fits_defined(a.res, yk.tree.headroom(a.queue))
    if in_quota and yk.passes(a, node, ()):
        yk.bind(a, node, now)
        return True
    if a.required_node:
        return in_quota and _daemonset_preemption(yk, a, now)
    if in_quota:
        other = _find_node(yk, a)
        if other is not None:
            yk.bind(a, other, now)
            return True
    return False


def _daemonset_preemption(yk: YuniKorn, a: Alloc, now: float) -> bool:
    if a.triggered_preemption:
        return False
    d = preempt_required_node(yk, a, now)
    if d is not None:
        return yk.commit(d, now)
    if not a.informed:  # once per ask
        msg = f"Unschedulable request '{a.uid}' with required node '{a.required_node}', no preemption victim found"
        yk.out.events.append(make_event(a.pod, "Informational", msg, now, component=COMPONENT))
        a.informed = True
    return False


# ---- the queue tree ---------------------------------------------------------------------


def _walk(yk: YuniKorn, q: Queue, b: _Batch) -> bool:
    if q.is_leaf:
        return _leaf(yk, q, b)
    for child in sorted_children(q, yk.tree):
        if child.path not in b.exhausted and _walk(yk, child, b):
            return True
    b.exhausted.add(q.path)
    return False


def _leaf(yk: YuniKorn, leaf: Queue, b: _Batch) -> bool:
    asks = b.order.get(leaf.path)
    if asks is None:
        asks = b.order[leaf.path] = [
            a
            for app in sorted_apps(leaf)
            for a in sorted(
                (x for x in app.allocs.values() if not x.node), key=lambda x: (-x.priority, x.create_time, x.seq)
            )
        ]
    i = b.cursor.get(leaf.path, 0)
    while i < len(asks):
        a = asks[i]
        i += 1
        if a.node or a.uid in b.tried or yk.allocs.get(a.uid) is not a:
            continue
        if _try_ask(yk, a, leaf, b.now):
            b.cursor[leaf.path] = i if a.node else i - 1
            return True
        b.tried[a.uid] = a
    b.cursor[leaf.path] = i
    b.exhausted.add(leaf.path)
    return False


def _try_ask(yk: YuniKorn, a: Alloc, leaf: Queue, now: float) -> bool:
    enabled = yk.partition.preemption_enabled
    if not fits_defined(a.res, yk.tree.headroom(leaf)):
        if enabled:
            d = preempt(yk, a, now, nodes_tried=False, gate=yk.gate)
            if d is not None and yk.commit(d, now):
                return True
            a.note("Preemption does not help")
        a.note("Not enough queue quota")
        return False
    if a.required_node:
        return _required_node(yk, a, now)
    node = _find_node(yk, a)
    if node is not None:
        yk.bind(a, node, now)
        return True
    if not a.reserved_node and now - a.create_time > RESERVATION_DELAY:
        target = _reservation_target(yk, a)
        if target is not None:
            yk.reserve(a, target, now)
            return True
    if enabled:
        d = preempt(yk, a, now, nodes_tried=True, gate=yk.gate)
        if d is not None and yk.commit(d, now):
            return True
        a.note("Preemption does not help")
    return False


def _required_node(yk: YuniKorn, a: Alloc, now: float) -> bool:
    """A DaemonSet ask goes to its node, or reserves it (cancelling normal reservations)."""
    node = yk.nodes.get(a.required_node)
    if node is None:
        return False
    if yk.passes(a, node, ()):
        yk.bind(a, node, now)
        return True
    if a.reserved_node == node.name:
        return False
    for other in list(node.reserved):
        if not other.required_node:
            yk.unreserve(other)
    yk.reserve(a, node, now)
    return True


def _find_node(yk: YuniKorn, a: Alloc) -> Node | None:
    """The best node with room for the ask that passes every predicate and holds no
    reservation of another ask."""
    epoch = yk.nodes.epoch
    if a.nofit_epoch == epoch:
        return None
    mask = yk.index.static_mask(a.pod) & yk.index.open
    own = yk.nodes.get(a.reserved_node) if a.reserved_node else None
    if own is not None:
        mask = mask.copy()
        mask[own.index] = True
    for n, i in enumerate(yk.index.fitting(a.res, mask)):
        node = yk.nodes.ordered[i]
        if yk.passes(a, node, ()):
            return node
        if n >= 16:
            break  # the rest fail for reasons the arrays do not show (host ports): try again later
    a.nofit_epoch = epoch
    return None


def _reservation_target(yk: YuniKorn, a: Alloc) -> Node | None:
    """The first node in sort order that could ever hold the ask and no one has reserved."""
    mask = yk.index.static_mask(a.pod) & yk.index.open
    for i in yk.index.order(mask):
        node = yk.nodes.ordered[int(i)]
        if all(node.capacity.get(k, 0) >= v for k, v in a.res.items()):
            return node
    return None


# ---- after the cycles -------------------------------------------------------------------


def _quota(yk: YuniKorn, now: float) -> None:
    if yk.partition.quota_preemption_enabled:
        yk.quota.on_change(yk.tree, now)  # an allocation may have pushed a queue over its max
    due = yk.quota.due(now)
    if due is None or due > now:
        return
    for result in yk.quota.run(yk.tree, now, yk.partition.quota_preemption_enabled):
        yk.commit_quota(result, now)


def _show_logs(yk: YuniKorn, b: _Batch) -> None:
    for a in b.tried.values():
        shown = "; ".join(a.log)
        if shown and shown != a.shown and not a.node and yk.allocs.get(a.uid) is a:
            a.shown = shown
            yk.pending_condition(a, b.now, shown)


def next_wakeup(yk: YuniKorn, now: float) -> float | None:
    """When a waiting ask may next act without any event: its reservation delay ends, or
    its preemption gate opens; or a quota-preemption check is due."""
    best = yk.quota.due(now)
    for a in yk.allocs.values():
        if a.node or a.queue is None:
            continue
        times = []
        if not a.reserved_node and a.create_time + RESERVATION_DELAY >= now:
            times.append(a.create_time + RESERVATION_DELAY + 0.001)
        if not a.triggered_preemption and a.allow_preempt_other and not a.required_node:
            times.append(next_gate_time(a))
        for t in times:
            if t > now and (best is None or t < best):
                best = t
    return best
