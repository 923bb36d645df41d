"""General (guarantee-driven) preemption, as YuniKorn realises the seven laws.

Owns ``Gate`` (at most 10 attempts per leaf queue and cycle; an ask may try only once its
leaf's ``preemption.delay`` has passed since its creation, then every 15 s, and only until
it has preempted once) and ``preempt``: sections 6.2 to 6.10 of docs/yunikorn.md (fence
root, priority thresholds, candidate victims, the queue-guarantee feasibility check, the
two passes per node, the choice of node through the predicates, the queue-level victims and
the final selection). It decides; it changes nothing: the core commits a ``Decision``
(section 6.11). Called by the allocation cycle (``cycle.py``); the DaemonSet preemptor is
in ``dspreempt.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .asks import Alloc
from .nodes import Node, NodeSet
from .queues import Queue, QueueTree
from .resources import Res, add, any_negative, fits_in, missing, shares_type, strictly_greater
from .snapshot import Snapshot

MAX_ATTEMPTS = 10  # per leaf queue and cycle
RETRY = 15.0  # seconds between two tries of one ask
STALE_RESERVATION = 7202.0  # a lower-priority ask's reservation older than this may be cancelled
ORIGINATOR, OPTED_OUT = 2**33, 2**34
BATCH = 10  # node solutions checked per round


class PreemptionHost(Protocol):
    tree: QueueTree
    nodes: NodeSet

    def passes(self, ask: Alloc, node: Node, removed: Sequence[Alloc]) -> bool: ...


@dataclass
class Decision:
    ask: Alloc
    node: str
    victims: list[Alloc]
    cancel: list[Alloc] = field(default_factory=list)
    kind: str = "general"


class Gate:
    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}

    def new_cycle(self) -> None:
        self.attempts.clear()

    def allows(self, ask: Alloc, now: float) -> bool:
        leaf = ask.queue.path
        if self.attempts.get(leaf, 0) >= MAX_ATTEMPTS:
            ask.note("Preemption max attempts exhausted")
            return False
        self.attempts[leaf] = self.attempts.get(leaf, 0) + 1
        if (
            not ask.allow_preempt_other
            or ask.triggered_preemption
            or ask.required_node
            or now < ask.create_time + ask.queue.preemption_delay
            or (ask.gate_passed_at is not None and now < ask.gate_passed_at + RETRY)
        ):
            ask.note("Preemption preconditions failed")
            return False
        ask.gate_passed_at = now
        return True


def next_gate_time(ask: Alloc) -> float:
    """The earliest time the gate could let ``ask`` through."""
    t = ask.create_time + (ask.queue.preemption_delay if ask.queue is not None else 0.0)
    if ask.gate_passed_at is not None:
        t = max(t, ask.gate_passed_at + RETRY)
    return t


def preempt(
    host: PreemptionHost, ask: Alloc, now: float, *, nodes_tried: bool, gate: Gate, enabled: bool = True
) -> Decision | None:
    if not enabled or ask.queue is None or not gate.allows(ask, now):
        return None
    fence = fence_root(host.tree, ask)
    if fence is ask.queue:
        return None
    candidates = find_candidates(host.tree, ask, fence)
    if not feasible(ask, candidates):
        ask.note("Preemption queue guarantees check failed")
        return None
    usable, cancel = usable_nodes(host, ask)
    best = choose_node(host, ask, candidates, usable, nodes_tried)
    if best is None:
        return None
    node, node_victims = best
    # Victims beyond the node's matter only while the node's leave the ask uncovered
    # (section 6.10 takes none after that), and finding them walks every candidate.
    covered = not strictly_greater(ask.res, _total(node_victims))
    extra = [] if covered else queue_victims(ask, candidates, node_victims)
    if extra is None:
        ask.note("Preemption queue guarantees check failed")
        return None
    victims = final_selection(ask, node, node_victims + extra)
    if victims is None:
        ask.note("Preemption helped but short of resources")
        return None
    return Decision(ask, node.name, victims, cancel.get(node.name, []))


# ---- 6.2, 6.3, 6.4: fence, priorities, candidates ---------------------------------------


def fence_root(tree: QueueTree, ask: Alloc) -> Queue:
    for q in ask.queue.ancestors():
        if q.parent is None or q.preemption_policy == "fence":
            return q
        emax = tree.emax(q)
        after = add(q.allocated, ask.res)
        if any(v > emax[k] for k, v in after.items() if k in emax):
            return q
    return tree.root


def ask_priorities(ask: Alloc) -> dict[str, int]:
    """Pa(Q) for every queue on the ask's path (section 6.3)."""
    out, pa = {}, ask.priority
    for q in ask.queue.ancestors():
        pa = q.priority_offset if q.priority_policy == "fence" else pa + q.priority_offset
        out[q.path] = pa
    return out


def find_candidates(tree: QueueTree, ask: Alloc, fence: Queue) -> list[Alloc]:
    """Every allocation under the fence root that may be a victim (section 6.4)."""
    pa = ask_priorities(ask)
    snap = Snapshot(ask.queue)
    out: list[Alloc] = []

    def walk(q: Queue, threshold: int, all_ok: bool) -> None:
        if q.is_leaf:
            if q is ask.queue or q.preemption_policy == "disabled":
                return
            rem = snap.rem(q)
            if rem is not None and all(v >= 0 for v in rem.values()):
                return
            for app in q.apps.values():
                for a in app.allocs.values():
                    if a.node and not a.victim and not a.required_node and shares_type(a.res, ask.res):
                        if all_ok or a.priority <= threshold:
                            out.append(a)
            return
        for child in q.children.values():
            if child.path in pa:
                walk(child, pa[child.path], all_ok)
            elif child.priority_policy == "fence":
                if child.priority_offset <= threshold or all_ok:
                    walk(child, threshold, True)
            else:
                walk(child, threshold - child.priority_offset, all_ok)

    walk(fence, pa.get(fence.path, ask.priority), False)
    return out


def _shape(v: Alloc) -> tuple:
    return (v.queue.path, tuple(sorted(v.res.items())), v.allow_preempt_self, v.originator)


def _total(allocs: list[Alloc]) -> Res:
    total: Res = {}
    for a in allocs:
        total = add(total, a.res)
    return total


def victim_order(a: Alloc) -> tuple:
    """Opted-in before opted-out, non-originators first, newest first, then by name."""
    return (not a.allow_preempt_self, a.originator, -a.create_time, a.namespace, a.name)


def feasible(ask: Alloc, candidates: list[Alloc]) -> bool:
    """Section 6.5: could the ask's queue take it within its guarantee, victims removed?"""
    snap = Snapshot(ask.queue)
    rem = snap.rem(ask.queue)
    if rem is not None and all(ask.res.get(k, 0) <= v for k, v in rem.items() if k in ask.res):
        return True
    snap.add_to_ask_leaf(ask.res)
    for v in sorted(candidates, key=victim_order):
        snap.remove(v)
        rem = snap.rem(ask.queue)
        if rem is not None and not any_negative(rem, ask.res):
            return True
    return False


# ---- 6.6, 6.7: nodes and their victims ----------------------------------------------------


def usable_nodes(host: PreemptionHost, ask: Alloc) -> tuple[list[Node], dict[str, list[Alloc]]]:
    """The nodes a preemption may use, and per node the reservations it would cancel."""
    out, cancel = [], {}
    for node in host.nodes:
        others = [r for r in node.reserved if r is not ask]
        if others:
            stale = [r for r in others if _cancellable(r, ask)]
            if len(stale) != len(others):
                continue
            cancel[node.name] = stale
        if not node.schedulable or not all(node.capacity.get(k, 0) >= v for k, v in ask.res.items()):
            continue
        out.append(node)
    return out, cancel


def _cancellable(r: Alloc, ask: Alloc) -> bool:
    return (
        not r.required_node
        and not r.triggered_preemption
        and r.priority < ask.priority
        and ask.create_time - r.create_time > STALE_RESERVATION
    )


def node_victims(ask: Alloc, node: Node, candidates: list[Alloc]) -> tuple[int, list[Alloc]] | None:
    """Section 6.7: (index of the victim after which the ask fits, victims) or None."""
    mine = sorted((c for c in candidates if c.node == node.name), key=victim_order)
    ordered = _first_pass(ask, node, mine)
    snap, free = Snapshot(ask.queue), node.free()
    accepted: list[Alloc] = []
    index = -1
    for v in ordered:
        before = snap.rem(v.queue)
        snap.remove(v)
        if before is not None and not any_negative(before, ask.res):
            snap.add(v)
            continue
        accepted.append(v)
        free = add(free, v.res)
        if index < 0 and not missing(ask.res, free):
            index = len(accepted) - 1
    return (index, accepted) if index >= 0 else None


SKIP, STOP = "skip", "stop"


def _move(snap: Snapshot, ask: Alloc, v: Alloc) -> Res | str:
    """One victim tried by a pass: SKIP (its queue is not over its guarantee), STOP (it
    does not fit what the ask's queue may still take: the pass ends), or else v is moved
    from its queue to the ask's and the ask queue's remaining guarantee before the move
    comes back. Nothing changes on SKIP or STOP."""
    before = snap.rem(v.queue)
    snap.remove(v)
    if before is not None and not any_negative(before, ask.res):
        snap.add(v)
        return SKIP
    ask_rem = snap.rem(ask.queue)
    if ask_rem is None or not fits_in(v.res, ask_rem):
        snap.add(v)
        return STOP
    snap.add_to_ask_leaf(v.res)
    return ask_rem


def _move_back(snap: Snapshot, v: Alloc) -> None:
    snap.add_to_ask_leaf(v.res, -1)
    snap.add(v)


def _first_pass(ask: Alloc, node: Node, mine: list[Alloc]) -> list[Alloc]:
    snap, free = Snapshot(ask.queue), node.free()
    head, tail = [], []
    for v in mine:
        moved = _move(snap, ask, v)
        if moved == SKIP:
            continue
        if moved == STOP:
            break
        grown = add(free, v.res)
        if missing(ask.res, grown) == missing(ask.res, free):
            _move_back(snap, v)
            tail.append(v)
        else:
            free = grown
            head.append(v)
    return head + tail


# ---- 6.8, 6.9, 6.10: node choice, queue-level victims, final selection --------------------


def choose_node(
    host: PreemptionHost, ask: Alloc, candidates: list[Alloc], usable: list[Node], nodes_tried: bool
) -> tuple[Node, list[Alloc]] | None:
    options: list[tuple[int, str, Node, list[Alloc]]] = []
    by_node: dict[str, list[Alloc]] = {}
    for c in candidates:
        by_node.setdefault(c.node, []).append(c)
    # Within one attempt a node's answer depends only on its free room and its candidates'
    # queues, sizes and order: nodes alike (a filled cluster) share one computation.
    seen: dict[tuple, tuple[int, list[int]] | None] = {}
    for node in usable:
        if node.fits(ask.res):
            if not nodes_tried:
                options.append((-1, node.name, node, []))
            continue
        mine = sorted(by_node.get(node.name, []), key=victim_order)
        shape = (tuple(sorted(node.free().items())), tuple(_shape(v) for v in mine))
        if shape not in seen:
            found = node_victims(ask, node, mine)
            seen[shape] = None if found is None else (found[0], [mine.index(v) for v in found[1]])
        hit = seen[shape]
        if hit is not None:
            options.append((hit[0], node.name, node, [mine[i] for i in hit[1]]))
    options.sort(key=lambda o: (o[0], o[1]))
    best: tuple[int, Node, list[Alloc]] | None = None
    for start in range(0, len(options), BATCH):
        for index, _, node, victims in options[start : start + BATCH]:
            scored = _score(host, ask, node, index, victims)
            if scored is not None and (best is None or scored[0] < best[0]):
                best = (scored[0], node, scored[1])
        if best is not None and best[0] < 2**32:
            break
    return None if best is None else (best[1], best[2])


def _score(host: PreemptionHost, ask: Alloc, node: Node, index: int, victims: list[Alloc]):
    """The first victim count at which the pod passes every predicate, and its score."""
    if index < 0:
        return (0, []) if host.passes(ask, node, ()) else None
    for pos in range(index, len(victims)):
        used = victims[: pos + 1]
        if host.passes(ask, node, used):
            score = len(used)
            if any(v.originator for v in used):
                score += ORIGINATOR
            if any(not v.allow_preempt_self for v in used):
                score += OPTED_OUT
            return score, used
    return None


def queue_victims(ask: Alloc, candidates: list[Alloc], chosen: list[Alloc]) -> list[Alloc] | None:
    """Section 6.9: victims beyond the node's that the ask's queue guarantee still needs."""
    snap = Snapshot(ask.queue)
    for v in chosen:
        snap.remove(v)
    taken = {id(v) for v in chosen}
    kept: list[Alloc] = []
    for v in sorted((c for c in candidates if id(c) not in taken), key=victim_order):
        moved = _move(snap, ask, v)
        if moved == SKIP:
            continue
        if moved == STOP:
            break
        if snap.rem(ask.queue) != moved:
            kept.append(v)
        else:
            _move_back(snap, v)
    if kept:
        rem = snap.rem(ask.queue)
        if rem is None or any_negative(rem, ask.res):
            return None
    return kept


def final_selection(ask: Alloc, node: Node, ordered: list[Alloc]) -> list[Alloc] | None:
    """Section 6.10: walk the victims with a running total; None when they fall short."""
    fits_free = node.fits(ask.res)
    total: Res = {}
    out = []
    for v in ordered:
        if not fits_free and v.node != node.name:
            continue
        if strictly_greater(ask.res, total):
            out.append(v)
        total = add(total, v.res)
    if strictly_greater(ask.res, total):
        return None
    return out
