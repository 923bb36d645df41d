"""Scenario expectations: what each kind of expectation checks against the mirror.

Owns the meaning of every expectation field of docs/architecture.md §9 (pod, node, event, eventOrder,
count, invariant) and of the four timings: ``within`` holds at some observation up to its
deadline, ``always`` holds at every observation, ``until`` holds at every observation up
to its time, ``at: end`` holds when the run ends.
``Tracker`` keeps one verdict per expectation; the runner feeds it observations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..api.events import involved_ref
from ..api.objects import condition, is_terminating, labels_of, node_name_of, phase_of, ref
from ..api.quantity import resource_int
from ..api.resources import node_allocatable, resource_list
from ..api.selectors import LabelSelector
from ..kubelet.cpumanager import parse_cpuset
from . import objectexpect
from .mirror import Mirror
from .schema import Expectation


def check(e: Expectation, m: Mirror) -> tuple[bool, str]:
    """Whether ``e`` holds now, and a one-line description of what was seen."""
    if e.pod is not None:
        return _pod(e, m)
    if e.node is not None:
        return _node(e, m)
    if e.event is not None:
        # Occurrences: a repeated event is one Event whose count rises.
        n = sum(ev.get("count") or 1 for ev in m.events if _event_matches(e.event, ev))
        return _compare(e, n, "matching events")
    if e.eventOrder is not None:
        seen = [involved_ref(ev) for ev in m.events if ev.get("reason") == e.eventOrder.reason]
        return seen == e.eventOrder.objects, f"{e.eventOrder.reason} events for {', '.join(seen) or 'nothing'}"
    if e.count is not None:
        return _compare(e, _count(e, m), f"{e.count.kind}s")
    if e.object is not None:
        return _object(e, m)
    assert e.invariant is not None  # a checked expectation has exactly one subject: this one
    violations = m.violations[e.invariant]
    return (not violations, violations[0] if violations else f"{e.invariant} holds")


def _object(e: Expectation, m: Mirror) -> tuple[bool, str]:
    o = e.object
    assert o is not None and e.field is not None  # a checked object expectation has both
    comparator = {k: getattr(e, k) for k in ("equals", "atLeast", "atMost", "exists") if getattr(e, k) is not None}
    what = f"{o.kind} {o.namespace}/{o.name}" if o.namespace else f"{o.kind} {o.name}"
    return objectexpect.check(m.get(o.kind, o.namespace, o.name), what, e.field, comparator)


def _compare(e: Expectation, n: int, what: str) -> tuple[bool, str]:
    ok = (
        (e.equals is None or n == e.equals)
        and (e.atLeast is None or n >= e.atLeast)
        and (e.atMost is None or n <= e.atMost)
    )
    want = " and ".join(
        f"{label} {v}" for label, v in (("=", e.equals), (">=", e.atLeast), ("<=", e.atMost)) if v is not None
    )
    return ok, f"{n} {what} (want {want})"


def _pod(e: Expectation, m: Mirror) -> tuple[bool, str]:
    p = e.pod
    assert p is not None  # check() calls this only for a pod expectation
    if p.name is not None:
        pod = m.pods.get((p.namespace, p.name))
        pods = [pod] if pod else []
        what = f"pod {p.namespace}/{p.name}"
    else:
        assert p.labelSelector is not None  # a checked pod ref has exactly one of name, labelSelector
        sel = LabelSelector.parse(p.labelSelector)
        pods = [x for (ns, _), x in m.pods.items() if ns == p.namespace and sel.matches(labels_of(x))]
        what = f"pods {p.labelSelector!r} in {p.namespace}"
    if e.absent:
        return (not pods, f"{what}: {'absent' if not pods else f'{len(pods)} present'}")
    if not pods:
        return False, f"{what}: absent"
    for pod in pods:
        ok, detail = _pod_fields(e, pod, m)
        if not ok:
            return False, f"{ref(pod)}: {detail}"
    return True, f"{what}: {_pod_fields(e, pods[0], m)[1]}"


def _container_statuses(status: dict) -> list[dict]:
    return list(status.get("initContainerStatuses") or ()) + list(status.get("containerStatuses") or ())


def _termination_reasons(status: dict) -> list[str]:
    out = []
    for cs in _container_statuses(status):
        for part in ("state", "lastState"):
            reason = ((cs.get(part) or {}).get("terminated") or {}).get("reason")
            if reason:
                out.append(reason)
    return out


def _pod_fields(e: Expectation, pod: dict, m: Mirror) -> tuple[bool, str]:
    status = pod.get("status") or {}
    held = m.resources.get((pod.get("metadata") or {}).get("uid", "")) or {}
    seen = {
        "phase": phase_of(pod),
        "nodeName": node_name_of(pod),
        "nominatedNodeName": status.get("nominatedNodeName") or "",
        "reason": status.get("reason") or "",
        "message": status.get("message") or "",
        "qosClass": status.get("qosClass") or "",
        "terminating": is_terminating(pod),
        "restartCount": sum(cs.get("restartCount", 0) for cs in status.get("containerStatuses") or ()),
        "terminationReason": _termination_reasons(status),
        "waitingReason": [
            ((cs.get("state") or {}).get("waiting") or {}).get("reason") for cs in _container_statuses(status)
        ],
        "cpuset": held.get("cpuset"),
        "devices": {r: len(ids) for r, ids in (held.get("devices") or {}).items()},
        "env": {k: v for env in (held.get("env") or {}).values() for k, v in env.items()},
        "cpuThrottled": bool((held.get("usage") or {}).get("cpuThrottled")),
    }
    wanted = {k: getattr(e, k) for k in seen if getattr(e, k) is not None}
    bad = [k for k, v in wanted.items() if not _pod_field_ok(k, seen[k], v)]
    shown = ", ".join(f"{k}={seen[k]}" for k in (wanted or {"phase": 0}))
    return (not bad, shown)


def _pod_field_ok(field: str, seen, want) -> bool:
    if field == "cpuset":  # the same CPUs, however the list is written
        return seen is not None and parse_cpuset(seen) == parse_cpuset(want)
    if field == "message":
        return want in seen
    if field == "restartCount":
        return _compare(want, seen, "")[0]
    if field in ("terminationReason", "waitingReason"):
        return want in seen
    if field == "devices":
        return all(seen.get(r, 0) == n for r, n in want.items())
    if field == "env":
        return all(k in seen and (v == "*" or seen[k] == v) for k, v in want.items())
    return seen == want


def _node(e: Expectation, m: Mirror) -> tuple[bool, str]:
    assert e.node is not None  # check() calls this only for a node expectation
    node = m.nodes.get(e.node)
    if e.absent:
        return node is None, f"node {e.node}: {'absent' if node is None else 'present'}"
    if node is None:
        return False, f"node {e.node}: absent"
    ready = _node_ready(node)
    parts, ok = [f"ready={ready}"], True
    if e.ready is not None and ready != e.ready:
        ok = False
    if e.condition is not None:
        c = condition(node, e.condition.get("type", "")) or {}
        parts.append(f"{e.condition.get('type')}={c.get('status', 'absent')}")
        ok &= c.get("status") == e.condition.get("status", "True")
    taints = (node.get("spec") or {}).get("taints") or []
    for want, present in ((e.taint, True), (e.noTaint, False)):
        if want is not None:
            has = any(all(t.get(k) == v for k, v in want.items()) for t in taints)
            parts.append(f"taint {want} {'present' if has else 'absent'}")
            ok &= has == present
    for field, values in (
        ("allocatable", node_allocatable(node)),
        ("capacity", resource_list((node.get("status") or {}).get("capacity"))),
    ):
        want = getattr(e, field)
        if want is not None:
            for name, q in want.items():
                have = values.get(name, 0)
                parts.append(f"{field} {name}={have}")
                ok &= have == resource_int(name, str(q))
    return ok, f"node {e.node}: {', '.join(parts)}"


def _event_matches(want: dict, ev: dict) -> bool:
    if "reason" in want and ev.get("reason") != want["reason"]:
        return False
    if "type" in want and ev.get("type") != want["type"]:
        return False
    if "message" in want and want["message"] not in (ev.get("message") or ""):
        return False
    if "object" in want and involved_ref(ev) != want["object"]:
        return False
    return True


def _count(e: Expectation, m: Mirror) -> int:
    c = e.count
    assert c is not None  # check() calls this only for a count expectation
    sel = LabelSelector.parse(c.labelSelector) if c.labelSelector else None
    if c.kind == "Node":
        return sum(
            1
            for n in m.nodes.values()
            if (sel is None or sel.matches(labels_of(n))) and (c.ready is None or _node_ready(n) == c.ready)
        )
    if c.kind == "Event":
        return sum(1 for ev in m.events if sel is None or sel.matches(labels_of(ev)))
    n = 0
    for (ns, _), pod in m.pods.items():
        if c.namespace is not None and ns != c.namespace:
            continue
        if c.phase is not None and phase_of(pod) != c.phase:
            continue
        if c.nodeName is not None and node_name_of(pod) != c.nodeName:
            continue
        if c.terminating is not None and is_terminating(pod) != c.terminating:
            continue
        if sel is not None and not sel.matches(labels_of(pod)):
            continue
        n += 1
    return n


@dataclass
class Verdict:
    ok: bool | None = None  # None: not decided yet
    detail: str = ""
    decided_at: float | None = None


class Tracker:
    """One verdict per expectation, updated at each observation."""

    def __init__(self, expectations: list[Expectation]):
        self.expectations = expectations
        self.verdicts = [Verdict() for _ in expectations]

    def observe(self, m: Mirror, now: float) -> None:
        for e, v in zip(self.expectations, self.verdicts):
            if v.ok is not None:
                continue
            mode = e.mode()
            if mode == "within":
                assert e.within is not None  # what mode() says
                ok, detail = check(e, m)
                if ok:
                    self._decide(v, True, detail, now)
                elif now > e.within:
                    self._decide(v, False, f"not within {e.within:g}s: {detail}", now)
                else:
                    v.detail = detail
            elif mode == "always" or (mode == "until" and e.until is not None and now <= e.until):
                ok, detail = check(e, m)
                if not ok:
                    self._decide(v, False, detail, now)
                else:
                    v.detail = detail
            elif mode == "until":
                self._decide(v, True, f"held until {e.until:g}s: {v.detail}", now)

    def next_deadline(self, now: float) -> float | None:
        """Just after the earliest deadline (``within``, ``until``) still undecided at ``now``:
        the first time its verdict can be decided without anything else happening."""
        times = []
        for e, v in zip(self.expectations, self.verdicts):
            deadline = e.within if e.mode() == "within" else e.until if e.mode() == "until" else None
            if v.ok is None and deadline is not None and deadline >= now:
                times.append(math.nextafter(deadline, math.inf))
        return min(times, default=None)

    def settled(self, m: Mirror) -> bool:
        """Every ``within`` is decided and every ``at: end`` holds now: nothing left to wait for."""
        for e, v in zip(self.expectations, self.verdicts):
            mode = e.mode()
            if mode in ("within", "until") and v.ok is None:
                return False
            if mode == "end" and not check(e, m)[0]:
                return False
        return True

    def finish(self, m: Mirror, now: float) -> None:
        for e, v in zip(self.expectations, self.verdicts):
            if v.ok is not None:
                continue
            mode = e.mode()
            if mode == "within":
                self._decide(v, False, f"not within {e.within:g}s (run ended at {now:.1f}s): {v.detail}", now)
            else:
                ok, detail = check(e, m)
                self._decide(v, ok, detail, now)

    @staticmethod
    def _decide(v: Verdict, ok: bool, detail: str, now: float) -> None:
        v.ok, v.detail, v.decided_at = ok, detail, round(now, 3)

    @property
    def passed(self) -> bool:
        return all(v.ok for v in self.verdicts)


def _node_ready(node: dict) -> bool:
    return (condition(node, "Ready") or {}).get("status") == "True"
