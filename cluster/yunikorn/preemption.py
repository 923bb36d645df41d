"""General (guarantee-driven) preemption, as YuniKorn realises the seven laws.

Owns ``Gate`` (per leaf queue and cycle at most 10 asks get through; an ask gets through
once its leaf's ``preemption.delay`` has passed since its creation, then at most every 15 s,
and only until it has preempted once) and ``preempt``: sections 6.2 to 6.10 of the YuniKorn
reference (fence root, priority thresholds, candidate victims, the queue-guarantee check,
the two passes per node, the node chosen through the predicates, the queue-level victims and
the final selection). It decides and changes nothing: every count it moves lives on a
``Snapshot``; the core (``core.py``) commits the ``Decision`` (section 6.11). Called by the
allocation cycle (``cycle.py``); the DaemonSet preemptor is ``dspreempt.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .asks import Alloc
from .nodes import Node, NodeSet
from .queues import Queue, QueueTree
from .resources import Res, add, add_into, any_negative, fits_defined, missing, shares_type, strictly_greater, total
from .snapshot import Snapshot

MAX_ATTEMPTS = 10  # asks per leaf queue and cycle that may get through the gate
RETRY = 15.0  # seconds between two tries of one ask
STALE_RESERVATION = 7202.0  # upstream: age > wait timeout (1 h) once the 1 h + 2 s head start is gone
FIT_MAX, ORIGINATOR, OPTED_OUT, UNFIT = 2**32, 2**33, 2**34, 2**35
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
    """Section 6.2's preconditions. Only asks that get through count against the leaf's 10."""

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}

    def new_cycle(self) -> None:
        self.attempts.clear()

    def allows(self, ask: Alloc, now: float) -> bool:
        leaf = ask.queue.path
        if self.attempts.get(leaf, 0) >= MAX_ATTEMPTS:
            ask.note("Preemption max attempts exhausted")
            return False
        if (
            not ask.allow_preempt_other
            or ask.triggered_preemption
            or ask.required_node
            or now < ask.create_time + ask.queue.preemption_delay
            or (ask.gate_passed_at is not None and now < ask.gate_passed_at + RETRY)
        ):
            ask.note("Preemption preconditions failed")
            return False
        self.attempts[leaf] = self.attempts.get(leaf, 0) + 1
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
    """Sections 6.2-6.10 for one ask; None (with the reason noted on the ask where upstream
    logs one) when it gives nothing. The ``Decision``'s ``cancel`` lists every reservation
    this attempt found stale (section 6.6), on whichever node: upstream drops them all."""
    if not enabled or ask.queue is None or not gate.allows(ask, now):
        return None
    candidates = find_candidates(host.tree, ask, fence_root(host.tree, ask))
    if not feasible(ask, candidates):
        ask.note("Preemption queue guarantees check failed")
        return None
    usable, cancel = usable_nodes(host, ask, now)
    best = choose_node(host, ask, candidates, usable, nodes_tried)
    if best is None:
        return None
    node, node_victims = best
    covered = bool(node_victims) and not strictly_greater(ask.res, total(a.res for a in node_victims))
    extra = queue_victims(ask, candidates, node_victims, only_check=covered)
    if extra is None or not node_victims + extra:
        return None  # upstream gives up here without a log line of its own
    victims = final_selection(ask, node, node_victims + extra)
    if victims is None:
        ask.note("Preemption helped but short of resources")
        return None
    return Decision(ask, node.name, victims, cancel)


# ---- 6.2, 6.3, 6.4: fence, priorities, candidates ---------------------------------------


def fence_root(tree: QueueTree, ask: Alloc) -> Queue:
    """Section 6.2: from the ask's leaf up, the first queue that is root, has
    ``preemption.policy: fence``, or would pass its effective max with the ask added."""
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
        if q is ask.queue:
            return  # law 3, made stronger: the ask's own leaf is never searched
        if q.is_leaf:
            if q.preemption_policy != "disabled" and _over_somewhere(snap.rem(q)):
                out.extend(a for a in _placed(q) if _eligible(a, ask) and (all_ok or a.priority <= threshold))
            return
        for child in q.children.values():
            if child.path in pa:
                walk(child, pa[child.path], all_ok)
            elif child.priority_policy == "fence":
                # even inside a fenced subtree a deeper fence above the threshold is skipped
                if child.priority_offset <= threshold:
                    walk(child, threshold, True)
            else:
                walk(child, threshold - child.priority_offset, all_ok)

    walk(fence, pa.get(fence.path, ask.priority), False)
    return out


def _over_somewhere(rem: Res | None) -> bool:
    return rem is None or any(v < 0 for v in rem.values())


def _placed(q: Queue) -> list[Alloc]:
    return [a for app in q.apps.values() for a in app.allocs.values() if a.node]


def _eligible(a: Alloc, ask: Alloc) -> bool:
    return not a.victim and not a.required_node and shares_type(a.res, ask.res)


def victim_order(a: Alloc) -> tuple:
    """Opted-in before opted-out, non-originators first, newest first, then by name."""
    return (not a.allow_preempt_self, a.originator, -a.create_time, a.namespace, a.name)


def feasible(ask: Alloc, candidates: list[Alloc]) -> bool:
    """Section 6.5: could the ask's queue take it within its guarantee, victims removed?
    Upstream removes the candidates one by one and stops once it holds; removing only ever
    raises the remaining guarantee, so checking once with all of them gone is the same."""
    snap = Snapshot(ask.queue)
    rem = snap.rem(ask.queue)
    if rem is not None and fits_defined(ask.res, rem):
        return True
    snap.add_to_ask_leaf(ask.res)
    per_queue: dict[str, tuple[Queue, Res]] = {}
    for v in candidates:
        q, summed = per_queue.setdefault(v.queue.path, (v.queue, {}))
        add_into(summed, v.res)
    for q, summed in per_queue.values():
        snap.change(q, summed, -1)
    rem = snap.rem(ask.queue)
    return rem is not None and not any_negative(rem, ask.res)


# ---- 6.6, 6.7: nodes and their victims ----------------------------------------------------


def usable_nodes(host: PreemptionHost, ask: Alloc, now: float) -> tuple[list[Node], list[Alloc]]:
    """The nodes a preemption may use, and the reservations it cancels to get them. A node
    another ask reserved is freed when at least one of its reservations is stale."""
    out: list[Node] = []
    cancel: list[Alloc] = []
    for node in host.nodes:
        blocked = False
        if node.reserved and ask not in node.reserved:
            blocked = True
            for r in node.reserved:
                if _stale(r, ask, now):
                    cancel.append(r)
                    blocked = False
        if node.schedulable and not blocked and not missing(ask.res, node.capacity):
            out.append(node)
    return out, cancel


def _stale(r: Alloc, ask: Alloc, now: float) -> bool:
    return (
        not r.required_node
        and not r.triggered_preemption
        and r.priority < ask.priority
        and now - r.create_time > STALE_RESERVATION
    )


def node_victims(ask: Alloc, node: Node, mine: list[Alloc]) -> tuple[int, list[Alloc]] | None:
    """Section 6.7 for the node's candidates in victim order: (index of the victim after
    which the ask fits, victims), or None when the node cannot be freed."""
    ordered = _first_pass(ask, node, mine)
    if not ordered:
        return None
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
    if ask_rem is None or not fits_defined(v.res, ask_rem):
        snap.add(v)
        return STOP
    snap.add_to_ask_leaf(v.res)
    return ask_rem


def _move_back(snap: Snapshot, v: Alloc) -> None:
    snap.add_to_ask_leaf(v.res, -1)
    snap.add(v)


def _shortfall(ask: Mapping[str, int], free: Mapping[str, int]) -> Res:
    """What the node still lacks, upstream's way: a type the node is overdrawn in counts
    even when the ask does not need it."""
    out = {}
    for k in set(ask) | set(free):
        short = ask.get(k, 0) - free.get(k, 0)
        if short > 0:
            out[k] = short
    return out


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
        if _shortfall(ask.res, grown) == _shortfall(ask.res, free):
            _move_back(snap, v)
            tail.append(v)
        else:
            free = grown
            head.append(v)
    return head + tail


# ---- 6.8: choosing the node ---------------------------------------------------------------


@dataclass
class _Option:
    index: int  # -1: fits without victims
    node: Node
    mine: list[Alloc]  # the node's candidates in victim order (the score reads these)
    victims: list[Alloc]


def choose_node(
    host: PreemptionHost, ask: Alloc, candidates: list[Alloc], usable: list[Node], nodes_tried: bool
) -> tuple[Node, list[Alloc]] | None:
    """Section 6.8: the best node solution that passes the predicates, or None."""
    options = sorted(_options(ask, candidates, usable, nodes_tried), key=lambda o: (o.index, o.node.name))
    best: tuple[int, _Option, list[Alloc]] | None = None
    for start in range(0, len(options), BATCH):
        for opt in options[start : start + BATCH]:
            checked = _check(host, ask, opt)
            if checked is not None and (best is None or checked[0] < best[0]):
                best = (checked[0], opt, checked[1])
        if best is not None and best[0] < FIT_MAX:
            break
    return None if best is None else (best[1].node, best[2])


def _options(ask: Alloc, candidates: list[Alloc], usable: list[Node], nodes_tried: bool) -> list[_Option]:
    by_node: dict[str, list[Alloc]] = {}
    for c in candidates:
        by_node.setdefault(c.node, []).append(c)
    out: list[_Option] = []
    # The passes of one attempt depend only on a node's free room and its candidates'
    # queues, sizes and order: nodes alike (a filled cluster) share one computation.
    seen: dict[tuple, tuple[int, list[int]] | None] = {}
    for node in usable:
        mine = sorted(by_node.get(node.name, []), key=victim_order)
        if node.fits(ask.res):
            if not nodes_tried:
                out.append(_Option(-1, node, mine, []))
            continue
        shape = (tuple(sorted(node.free().items())), tuple(_shape(v) for v in mine))
        if shape not in seen:
            found = node_victims(ask, node, mine)
            seen[shape] = None if found is None else (found[0], [mine.index(v) for v in found[1]])
        hit = seen[shape]
        if hit is not None:
            out.append(_Option(hit[0], node, mine, [mine[i] for i in hit[1]]))
    return out


def _shape(v: Alloc) -> tuple:
    return (v.queue.path, tuple(sorted(v.res.items())))


def _check(host: PreemptionHost, ask: Alloc, opt: _Option) -> tuple[int, list[Alloc]] | None:
    """The predicates on one option: (score, victims used) or None when the pod never fits."""
    if opt.index < 0:
        return (_score(opt.mine, -1), []) if host.passes(ask, opt.node, ()) else None
    for pos in range(opt.index, len(opt.victims)):
        used = opt.victims[: pos + 1]
        if host.passes(ask, opt.node, used):
            return _score(opt.mine, pos), used
    return None


def _score(mine: list[Alloc], pos: int) -> int:
    """Upstream's solution score. It reads the node's first pos+1 *candidates*, which need
    not be the victims, and a node with no candidate at all scores as unfit (quirks)."""
    if not mine or pos >= len(mine):
        return UNFIT
    if pos < 0:
        return 0
    score = pos + 1
    if any(a.originator for a in mine[: pos + 1]):
        score += ORIGINATOR
    if any(not a.allow_preempt_self for a in mine[: pos + 1]):
        score += OPTED_OUT
    return score


# ---- 6.9, 6.10: queue-level victims, final selection --------------------------------------


def queue_victims(
    ask: Alloc, candidates: list[Alloc], chosen: list[Alloc], only_check: bool = False
) -> list[Alloc] | None:
    """Section 6.9: victims beyond the node's that the ask queue's guarantee still calls
    for; None when, some taken, the ask's queue is still over its guarantee.

    ``only_check``: the node's victims already cover the ask, so the final selection takes
    none of these and only the failure matters. A victim is kept only if it fits the
    remaining guarantee, which then stays non-negative in its types: the pass can only fail
    on an ask type already negative before it, so without one it need not run (it walks
    every candidate)."""
    snap = Snapshot(ask.queue)
    for v in chosen:
        snap.remove(v)
    if only_check:
        rem = snap.rem(ask.queue)
        if rem is None or not any_negative(rem, ask.res):
            return []
    taken = {id(v) for v in chosen}
    kept: list[Alloc] = []
    for v in sorted((c for c in candidates if id(c) not in taken), key=victim_order):
        moved = _move(snap, ask, v)
        if moved == SKIP:
            continue
        if moved == STOP:
            break
        assert not isinstance(moved, str)
        if _same(snap.rem(ask.queue), moved):
            _move_back(snap, v)
        else:
            kept.append(v)
    if kept:
        rem = snap.rem(ask.queue)
        if rem is None or any_negative(rem, ask.res):
            return None
    return kept


def _same(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> bool:
    """Upstream's EqualsOrEmpty: a missing type reads as zero."""
    a, b = a or {}, b or {}
    return all(a.get(k, 0) == b.get(k, 0) for k in set(a) | set(b))


def final_selection(ask: Alloc, node: Node, ordered: list[Alloc]) -> list[Alloc] | None:
    """Section 6.10: walk the victims with a running total; None when they fall short."""
    fits_free = node.fits(ask.res)
    running: Res = {}
    out = []
    for v in ordered:
        if not fits_free and v.node != node.name:
            continue
        if strictly_greater(ask.res, running):
            out.append(v)
        running = add(running, v.res)
    if strictly_greater(ask.res, running):
        return None
    return out
