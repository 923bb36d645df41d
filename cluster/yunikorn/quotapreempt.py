"""Quota preemption: when a queue's max drops below what it uses (YuniKorn's quota preemption;
off unless the partition sets ``quotapreemptionenabled``).

Owns ``QuotaWatch``, the per-queue start times of configured queues with a
``quota.preemption.delay``: set by a configuration change that lowers the max below the
usage, or by an allocation that pushes the usage over the max; shifted when the delay
changes; cleared when the max or the delay goes, or the usage is back within the max. Its
``run`` is upstream's one-second check from the top: a queue over its max whose time has
come fires, and its subtree is not looked at then. Owns ``quota_victims``, the choice for
one queue: the amount to free (usage above the max, capped by the usage above the guarantee
on the queue's path), split among a parent's children by their usage above guarantee, and,
per leaf, the victims in upstream's quota order taken greedily within the amount. It decides;
the core (``core.py``) commits each ``QuotaResult``. Called by the allocation cycle
(``cycle.py``) and by the core after a configuration reload.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .asks import Alloc
from .queues import Queue, QueueTree
from .resources import Res, add, add_into, component_min, fmt, is_zero

ORIGINATOR, OPTED_OUT = 2**33, 2**34
TICK = 1.0  # upstream checks the queues once a second


@dataclass
class QuotaResult:
    queue_path: str
    amount: Res  # {}: nothing to free
    claimed: Res  # every type of the victims taken, summed; {}: none taken
    candidates: int
    victims: list[Alloc] = field(default_factory=list)
    leaf: bool = True  # fired on a leaf (upstream prints an untouched total differently)

    def summary(self) -> str:
        """The queue event's message, as upstream prints it (an unset vector is "nil resource")."""
        amount = fmt(self.amount) if self.amount else "nil resource"
        claimed = fmt(self.claimed) if self.victims or not self.leaf else "nil resource"
        # upstream counts only the last application's victims here (its map order); kubemu all
        return (
            f"Quota Preemption results summary: preemptable resources: {amount}, claimed resources: {claimed}, "
            f"selected victims: {self.candidates}, preempted victims: {len(self.victims)}"
        )


# ---- resource comparisons as upstream writes them -------------------------------------------


def within(limit: Mapping[str, int], used: Mapping[str, int]) -> bool:
    """Upstream's ``limit.StrictlyGreaterThanOrEqualsOnlyExisting(used)``: no shared type
    above the limit; with nothing shared it holds when both are non-empty."""
    if not used:
        return bool(limit) and all(v > 0 for v in limit.values())
    shared = [k for k in limit if k in used]
    if shared:
        return all(used[k] <= limit[k] for k in shared)
    return bool(limit)


def _equal(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    if not a or not b:
        return not a and not b  # an unset max equals only another unset one
    return all(a.get(k, 0) == b.get(k, 0) for k in set(a) | set(b))


def _greater(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """Upstream's StrictlyGreaterThan: nowhere below, somewhere above (missing = 0)."""
    keys = set(a) | set(b)
    return all(a.get(k, 0) >= b.get(k, 0) for k in keys) and any(a.get(k, 0) != b.get(k, 0) for k in keys)


def _grew(before: Mapping[str, int], after: Mapping[str, int]) -> bool:
    return any(v > before.get(k, 0) for k, v in after.items())


# ---- the start times ------------------------------------------------------------------------


@dataclass
class _Seen:
    max: Res
    delay: float
    allocated: Res


class QuotaWatch:
    def __init__(self) -> None:
        self.start: dict[str, float] = {}
        self.seen: dict[str, _Seen] = {}
        self.enabled: bool | None = None  # None: not looked yet
        self.last_run: float | None = None

    def on_change(self, tree: QueueTree, now: float) -> None:
        """Compare every configured queue with how it was last seen: a changed max or delay
        is a reconfiguration, a grown usage an added allocation (counted only while the
        switch was already on, as upstream passes it along with each allocation)."""
        enabled = tree.partition.quota_preemption_enabled
        was_enabled = enabled if self.enabled is None else self.enabled
        self.enabled = enabled
        live = set()
        for q in tree.by_path.values():
            if q.parent is None or q.dynamic:
                continue  # placement-made queues have no quota preemption; root's max is the cluster
            live.add(q.path)
            cur = _Seen(dict(q.max), q.quota_preemption_delay, dict(q.allocated))
            # a queue seen for the first time starts empty: its pods arrive as allocations
            prev = self.seen.get(q.path) or _Seen(cur.max, cur.delay, {})
            if prev.max != cur.max or prev.delay != cur.delay:
                self._reconfigured(q, prev, now)
            if was_enabled and _grew(prev.allocated, cur.allocated):
                self._allocated(q, now)
            if q.path in self.start and within(q.max, q.allocated):
                del self.start[q.path]  # the next tick would find it back within its max
            self.seen[q.path] = cur
        for path in set(self.seen) - live:
            del self.seen[path]
            self.start.pop(path, None)

    def _reconfigured(self, q: Queue, prev: _Seen, now: float) -> None:
        """Upstream's setPreemptionTime after a reload."""
        path, delay = q.path, q.quota_preemption_delay
        if delay <= 0 or is_zero(q.max) or within(q.max, q.allocated):
            self.start.pop(path, None)
            return
        start = self.start.get(path)
        shift = delay - prev.delay
        if _equal(prev.max, q.max):
            if start is None and prev.delay <= 0:
                self.start[path] = now + delay
            elif start is not None:
                self.start[path] = start + shift
        elif not prev.max or _greater(prev.max, q.max):
            # A max set where there was none counts as lowered here (the reference's V19);
            # upstream's comparison sees it as raised and waits for the next allocation.
            self.start[path] = now + delay if start is None else start + shift
        elif _greater(q.max, prev.max) and start is not None:
            self.start[path] = start + shift  # raised but still over: the earlier time stands

    def _allocated(self, q: Queue, now: float) -> None:
        """Upstream's check when an allocation is added: arm a queue that it took over its max."""
        delay = q.quota_preemption_delay
        if q.path in self.start or delay <= 0 or is_zero(q.max) or within(q.max, q.allocated):
            return
        self.start[q.path] = now + delay

    def due(self, now: float) -> float | None:
        """When ``run`` next has something to do (None: nothing armed or switched off)."""
        if not self.enabled or not self.start:
            return None
        t = min(self.start.values())
        if self.last_run is not None:
            t = max(t, self.last_run + TICK)
        return t

    def run(self, tree: QueueTree, now: float, enabled: bool) -> list[QuotaResult]:
        """The check from the top; one result per queue that fired and had candidates."""
        self.on_change(tree, now)
        self.enabled = enabled
        if not enabled:
            return []
        self.last_run = now
        out: list[QuotaResult] = []
        self._visit(tree, tree.root, now, out)
        return out

    def _visit(self, tree: QueueTree, q: Queue, now: float, out: list[QuotaResult]) -> None:
        t = self.start.get(q.path)
        if t is not None and within(q.max, q.allocated):
            del self.start[q.path]
        elif t is not None and t <= now:
            del self.start[q.path]
            result = quota_victims(tree, q)
            if result.candidates:  # upstream sends no summary when nothing was even selected
                out.append(result)
            return  # its subtree is not checked this time
        for child in q.children.values():
            self._visit(tree, child, now, out)


# ---- the amount and its split ---------------------------------------------------------------


def guarantee_room(q: Queue) -> Res:
    """Upstream's Queue.GetPreemptableResource: per type the minimum, over the queue and its
    ancestors, of guaranteed − allocated (a queue without a guarantee counts its whole
    allocation). A negative entry is usage above a guarantee."""
    out: Res = {}
    for a in reversed(list(q.ancestors())):
        if a.guaranteed:
            own = {k: g - a.allocated.get(k, 0) for k, g in a.guaranteed.items()}
        else:
            own = dict(a.allocated)
        out = component_min(own, out) or {}
    return out


def amount_to_free(q: Queue) -> Res:
    """Usage above the max, per type, capped where the path is above a guarantee."""
    used = q.used()
    if not q.max or not used:
        return {}
    over = {k: used.get(k, 0) - m for k, m in q.max.items() if used.get(k, 0) > m}
    caps = {k: -v for k, v in guarantee_room(q).items() if v < 0}
    return {k: min(v, caps[k]) if k in caps else v for k, v in over.items()}


def _share(v: float, total: float) -> float:
    return v if total == 0 else v / total


def split(parent: Queue, amount: Res, out: dict[str, tuple[Queue, Res]]) -> None:
    """Upstream's division of a parent's amount down to its leaves: each child above its
    guarantee (or, without one, using anything) gets the floor of its share. The share of a
    guaranteed child is |guaranteed − allocated| per guaranteed type, so a type it is *under*
    its guarantee in counts too (quirk)."""
    parts: list[tuple[Queue, Res]] = []
    total: Res = {}
    for child in parent.children.values():
        alloc = child.allocated
        if not alloc or (child.guaranteed and within(child.guaranteed, alloc)):
            continue
        if child.guaranteed:
            part = {k: abs(g - alloc.get(k, 0)) for k, g in child.guaranteed.items()}
        else:
            part = {k: abs(v) for k, v in alloc.items()}
        parts.append((child, part))
        add_into(total, part)
    for child, part in parts:
        mine = {
            k: math.floor((_share(v, total.get(k, 0)) if v else 0.0) * amount[k])
            for k, v in part.items()
            if k in amount
        }
        if child.is_leaf:
            out[child.path] = (child, mine)
        else:
            split(child, mine, out)


# ---- victims --------------------------------------------------------------------------------


def candidates_in(leaf: Queue, amount: Res) -> list[Alloc]:
    if is_zero(amount):
        return []
    return [a for a in _placed(leaf) if any(k in a.res for k in amount) and not a.required_node and not a.victim]


def _placed(q: Queue) -> list[Alloc]:
    return [a for app in q.apps.values() for a in app.allocs.values() if a.node]


def quota_order(victims: list[Alloc], amount: Res, total: Res) -> list[Alloc]:
    """Section 7's quota order: highest score first (originator and opted-out bits, then the
    percentage of the victim's types that are to be freed: originators and opted-out pods
    come first, a quirk), lower priority, newer by the hour, then the smaller usage share of
    ``total`` (the queue's own max) in the types to free, largest share compared first."""

    def key(a: Alloc) -> tuple:
        score = (ORIGINATOR if a.originator else 0) + (OPTED_OUT if not a.allow_preempt_self else 0)
        if a.res:
            score += sum(1 for k in amount if k in a.res) * 100 // len(a.res)
        shares = sorted(
            (_share(a.res[k], total.get(k, 0)) for k in amount if a.res.get(k, 0) != 0),
            reverse=True,
        )
        return (-score, a.priority, -math.floor(a.create_time / 3600), tuple(shares), a.namespace, a.name)

    return sorted(victims, key=key)


def take_within(ordered: list[Alloc], amount: Res) -> tuple[list[Alloc], Res]:
    """Greedy: skip a victim larger than the amount in a type it names; take one while the
    running total stays within the amount."""
    taken: list[Alloc] = []
    total: Res = {}
    for a in ordered:
        if any(v > max(amount[k], 0) for k, v in a.res.items() if k in amount):
            continue
        grown = add(total, a.res)
        if within(amount, grown):
            taken.append(a)
            total = grown
    return taken, total


def quota_victims(tree: QueueTree, q: Queue) -> QuotaResult:
    """The choice for one queue whose time has come (nothing is changed)."""
    amount = amount_to_free(q)
    leaves: dict[str, tuple[Queue, Res]] = {}
    if q.is_leaf:
        leaves[q.path] = (q, amount)
    elif amount:
        split(q, amount, leaves)
    victims: list[Alloc] = []
    claimed: Res = {}
    count = 0
    for path in sorted(leaves):
        leaf, part = leaves[path]
        found = candidates_in(leaf, part)
        count += len(found)
        taken, total = take_within(quota_order(found, part, leaf.max), part)
        victims += taken
        add_into(claimed, total)
    return QuotaResult(q.path, amount, claimed, count, victims, leaf=q.is_leaf)
