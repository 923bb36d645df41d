"""What one ``Scheduler.schedule`` call asks the actor shell to write to the apiserver.

Owns ``ScheduleOutput``: binds, pod conditions, nominations, victims' deletes and events,
in the order the cycles produced them, and their merge into one status patch per pod.
Filled by ``Scheduler`` (its PodScheduled conditions through ``record_condition``) and
``host.apply_post_filter``; read by ``actors/scheduler.py``
and the in-process benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..clock import rfc3339


@dataclass
class ScheduleOutput:
    binds: list[tuple[str, str, str, str]] = field(default_factory=list)  # (ns, name, uid, node)
    pod_conditions: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)  # (ns, name, uid, cond)
    events: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[tuple[str, str, str]] = field(default_factory=list)  # preemption victims (ns, name, uid)
    nominations: list[tuple[str, str, str, str]] = field(default_factory=list)  # (ns, name, uid, node or "")

    def status_patches(self) -> list[tuple[str, str, str, list[dict[str, Any]], str | None]]:
        """``pod_conditions`` and ``nominations`` merged into one status patch per pod
        (namespace, name, uid, conditions, nominated node or None), in first-seen order:
        upstream writes a failed pod's condition and its nomination together."""
        merged: dict[str, tuple[str, str, str, list[dict[str, Any]], list[str | None]]] = {}
        for ns, name, uid, cond in self.pod_conditions:
            merged.setdefault(uid, (ns, name, uid, [], [None]))[3].append(cond)
        for ns, name, uid, node in self.nominations:
            merged.setdefault(uid, (ns, name, uid, [], [None]))[4][0] = node
        return [(ns, name, uid, conds, node[0]) for ns, name, uid, conds, node in merged.values()]


def record_condition(pod: dict[str, Any], reason: str, message: str, now: float, out: ScheduleOutput) -> None:
    """PodScheduled=False, unless the pod already carries exactly that (upstream skips
    the API write then, and keeps lastTransitionTime while the status stays False)."""
    old: Any = next(  # the PodScheduled condition (JSON), or None
        (c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), None
    )
    was_false = old is not None and old.get("status") == "False"
    if was_false and old.get("reason") == reason and old.get("message") == message:
        return
    since = old.get("lastTransitionTime") if was_false and old.get("lastTransitionTime") else rfc3339(now)
    meta = pod.get("metadata") or {}
    cond = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": since,
    }
    out.pod_conditions.append((meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""), cond))
