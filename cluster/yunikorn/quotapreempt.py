"""Quota preemption: when a queue's max drops below what it uses.

Owns ``QuotaWatch`` (per configured queue with ``quota.preemption.delay``, the time its
preemption may start: set when its usage is over its max, kept at the earliest while it
stays over, cleared when it is no longer over or the delay is off) and ``quota_victims``
(section 9 of docs/yunikorn.md: the amount to free is the usage above the max, capped by
the usage above the guarantee; victims in upstream's order, each taken while the total
stays within the amount). It decides; the core commits. Runs only with the partition's
``quotapreemptionenabled``. Called by the allocation cycle (``cycle.py``) and by the core
after a configuration reload.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .asks import Alloc
from .queues import Queue, QueueTree
from .resources import Res, add, shares_type

ORIGINATOR, OPTED_OUT = 2**33, 2**34


@dataclass
class QuotaResult:
    queue_path: str
    amount: Res
    claimed: Res
    candidates: int
    victims: list[Alloc] = field(default_factory=list)


def _over(q: Queue) -> bool:
    return any(q.used().get(k, 0) > v for k, v in q.max.items())


class QuotaWatch:
    def __init__(self) -> None:
        self.start: dict[str, float] = {}

    def on_change(self, tree: QueueTree, now: float) -> None:
        for q in tree.by_path.values():
            if q.dynamic or q.parent is None or q.quota_preemption_delay <= 0 or not q.max or not _over(q):
                self.start.pop(q.path, None)
            elif q.path not in self.start:
                self.start[q.path] = now + q.quota_preemption_delay
        for path in list(self.start):
            if path not in tree.by_path:
                del self.start[path]

    def due(self, now: float) -> float | None:
        return min(self.start.values(), default=None)

    def run(self, tree: QueueTree, now: float, enabled: bool) -> list[QuotaResult]:
        self.on_change(tree, now)
        if not enabled:
            return []
        out: list[QuotaResult] = []

        def walk(q: Queue) -> None:
            t = self.start.get(q.path)
            if t is not None and t <= now:
                del self.start[q.path]
                out.append(quota_victims(tree, q))
                return  # its descendants are not checked this time
            for c in q.children.values():
                walk(c)

        walk(tree.root)
        return out


def amount_to_free(tree: QueueTree, q: Queue) -> Res:
    used = q.used()
    amount = {k: used.get(k, 0) - v for k, v in q.max.items() if used.get(k, 0) > v}
    for a in q.ancestors():
        if a.guaranteed:
            au = a.used()
            for k in list(amount):
                if k in a.guaranteed:
                    amount[k] = min(amount[k], max(au.get(k, 0) - a.guaranteed[k], 0))
    return {k: v for k, v in amount.items() if v > 0}


def _score(a: Alloc, amount: Res) -> float:
    score = (ORIGINATOR if a.originator else 0) + (OPTED_OUT if not a.allow_preempt_self else 0)
    types = [k for k in a.res if k in amount]
    return score + 100.0 * len(types) / max(len(amount), 1)


def order(victims: list[Alloc], amount: Res, q: Queue) -> list[Alloc]:
    """Highest score first, then lower priority, then newer by the hour, then the smaller
    share of the queue's max."""

    def share(a: Alloc) -> float:
        return max((a.res.get(k, 0) / v for k, v in q.max.items() if v > 0), default=0.0)

    return sorted(
        victims, key=lambda a: (-_score(a, amount), a.priority, -(a.create_time // 3600), share(a), a.namespace, a.name)
    )


def quota_victims(tree: QueueTree, q: Queue) -> QuotaResult:
    amount = amount_to_free(tree, q)
    leaves = [x for x in tree.by_path.values() if x.is_leaf and (x is q or x.path.startswith(q.path + "."))]
    candidates = [
        a
        for leaf in leaves
        for app in leaf.apps.values()
        for a in app.allocs.values()
        if a.node and not a.victim and not a.required_node and shares_type(a.res, amount)
    ]
    claimed: Res = {}
    victims = []
    for a in order(candidates, amount, q):
        if any(a.res.get(k, 0) > v for k, v in amount.items()):
            continue
        total = add(claimed, {k: v for k, v in a.res.items() if k in amount})
        if all(total.get(k, 0) <= v for k, v in amount.items()):
            victims.append(a)
            claimed = total
    return QuotaResult(q.path, amount, claimed, len(candidates), victims)
