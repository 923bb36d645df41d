"""Required-node (DaemonSet) preemption: the last resort for a pod that must run on one node.

Owns ``preempt_required_node`` (section 8 of the YuniKorn reference): the YuniKorn pods on
the ask's node that may go (not DaemonSet pods, not of higher priority, not already victims,
sharing a resource type; the same application, opted-out pods and originators allowed), in
their order (opted-in non-originators, then opted-out, then originators; lower priority,
newer, smaller first), taken until they cover the ask whatever the node's free room. No
delay, guarantee or fence applies. It decides; the core (``core.py``) commits. Called by the
allocation cycle (``cycle.py``) for a DaemonSet ask holding its node's reservation.
"""

from __future__ import annotations

from .asks import Alloc
from .preemption import Decision, PreemptionHost
from .resources import Res, add, shares_type


def _class(a: Alloc) -> int:
    if a.originator:
        return 3
    return 2 if not a.allow_preempt_self else 1


def _size(a: Alloc) -> tuple[int, ...]:
    # Upstream keeps a before b unless a is larger in every type (and not equal); any total
    # order that puts a dominated pod first agrees with it, and this one is deterministic.
    r = a.res
    return (r.get("vcore", 0), r.get("memory", 0), sum(v for k, v in r.items() if k not in ("vcore", "memory")))


def victim_order(a: Alloc) -> tuple:
    """Section 7's DaemonSet order: class, lower priority, newer, smaller, then by name."""
    return (_class(a), a.priority, -a.create_time, _size(a), a.namespace, a.name)


def preempt_required_node(host: PreemptionHost, ask: Alloc, now: float) -> Decision | None:
    """Section 8 steps 1-3; None (noted on the ask) when no victim set makes room."""
    node = host.nodes.get(ask.required_node)
    if node is None or ask.triggered_preemption:
        return None
    candidates = sorted(
        (
            a
            for a in node.allocs.values()
            if not a.required_node and a.priority <= ask.priority and not a.victim and shares_type(a.res, ask.res)
        ),
        key=victim_order,
    )
    total: Res = {}
    victims = []
    for a in candidates:
        if at_least(total, ask.res):
            break
        victims.append(a)
        total = add(total, a.res)
    if not victims or not at_least(add(total, node.free()), ask.res):
        ask.note("No fit on required node, preemption does not help")
        return None
    cancel = [r for r in node.reserved if r is not ask and not r.required_node]
    return Decision(ask, node.name, victims, cancel, kind="daemonset")


def at_least(have: Res, need: Res) -> bool:
    """Upstream's StrictlyGreaterThanOrEquals: ``have`` >= ``need`` in every type either
    names (a missing type is zero), so a node overdrawn in any type never counts as room."""
    return all(have.get(k, 0) >= need.get(k, 0) for k in set(have) | set(need))
