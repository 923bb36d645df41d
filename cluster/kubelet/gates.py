"""Pod readiness gates (``spec.readinessGates``): Ready waits for conditions others set.

Owns ``Gates`` (kept in ``PodRecord.gates``; None for a pod without gates, whose MODIFIED
events stay unread) and ``GateMixin``, a part of ``Kubelet``. The kubelet owns the
conditions Initialized, Ready, ContainersReady, PodScheduled and DisruptionTarget and
writes a pod's status whole; of a gated pod it keeps every other condition as it last
read it (a controller's, or one a client patched through the status subresource) and
writes it back unchanged, as upstream's kubelet keeps the conditions it does not own.

Ready is True only when the containers are ready and every gate's condition is True;
else, with the containers ready, Ready is False with reason ``ReadinessGatesNotReady`` and
upstream's message, one clause per unready gate joined by ", ":
``corresponding condition of pod readiness gate "x" does not exist.`` or
``the status of pod readiness gate "x" is not "True", but False``. ContainersReady
follows the containers only. A MODIFIED event that changes a condition the kubelet does
not own is news: the kubelet writes the status again, with Ready's transition at that
time when it flips. A client write landing between a kubelet write and the kubelet
reading it can be overwritten by that write (upstream merges against the stored pod).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..clock import rfc3339
from .pods import DELETED, REJECTED

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf
    from .pods import PodRecord

REASON = "ReadinessGatesNotReady"
KUBELET_OWNED = frozenset(("Initialized", "Ready", "ContainersReady", "PodScheduled", "DisruptionTarget"))


class Gates:
    __slots__ = ("types", "others", "since")

    def __init__(self, types: tuple[str, ...], others: list[dict]):
        self.types = types
        self.others = others  # the conditions the kubelet does not own, as last read
        self.since: str | None = None  # when the gates last flipped Ready (None: not yet)

    def unready(self) -> list[str]:
        """Upstream's clause for each gate that does not hold."""
        status = {c.get("type"): c.get("status") for c in self.others}
        out = []
        for t in self.types:
            s = status.get(t)
            if s is None:
                out.append(f'corresponding condition of pod readiness gate "{t}" does not exist.')
            elif s != "True":
                out.append(f'the status of pod readiness gate "{t}" is not "True", but {s}')
        return out

    def ready_condition(self, containers_ready_ts: str) -> dict:
        """The Ready condition once the containers are ready."""
        ts = max(containers_ready_ts, self.since or "")
        cond: dict[str, Any] = {"type": "Ready", "lastProbeTime": None, "lastTransitionTime": ts}
        unready = self.unready()
        if not unready:
            return {**cond, "status": "True"}
        return {**cond, "status": "False", "reason": REASON, "message": ", ".join(unready)}


def gates_of(pod: dict[str, Any]) -> Gates | None:
    """The pod's gates and its foreign conditions, or None when it has no gates."""
    gates = (pod.get("spec") or {}).get("readinessGates")
    if not gates:
        return None
    types = tuple(str(g.get("conditionType", "")) for g in gates if isinstance(g, dict))
    return Gates(types, _others(pod)) if types else None


def _others(pod: dict[str, Any]) -> list[dict]:
    conds = (pod.get("status") or {}).get("conditions") or ()
    return [dict(c) for c in conds if isinstance(c, dict) and c.get("type") not in KUBELET_OWNED]


class GateMixin:
    """The readiness-gate part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    def _gates_seen(self: KubeletSelf, rec: PodRecord, pod: dict[str, Any], now: float) -> None:
        """A MODIFIED event of a gated pod: write again when a foreign condition changed."""
        gates = rec.gates
        assert gates is not None
        others = _others(pod)
        if others == gates.others:
            return  # most often the echo of the kubelet's own write
        before = gates.unready()
        gates.others = others
        if bool(before) != bool(gates.unready()):
            gates.since = rfc3339(now)
        if rec.state not in (REJECTED, DELETED):
            self._write(rec)
