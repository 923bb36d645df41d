"""What one ``Scheduler.schedule`` call asks the actor shell to write to the apiserver.

Owns ``ScheduleOutput``: binds, pod conditions, nominations, victims' deletes and events,
in the order the cycles produced them, and their merge into one status patch per pod.
Filled by ``Scheduler`` and ``host.apply_post_filter``; read by ``actors/scheduler.py``
and the in-process benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ScheduleOutput:
    binds: list[tuple[str, str, str, str]] = field(default_factory=list)  # (ns, name, uid, node)
    pod_conditions: list[tuple[str, str, str, dict]] = field(default_factory=list)  # (ns, name, uid, cond)
    events: list[dict] = field(default_factory=list)
    deletes: list[tuple[str, str, str]] = field(default_factory=list)  # preemption victims (ns, name, uid)
    nominations: list[tuple[str, str, str, str]] = field(default_factory=list)  # (ns, name, uid, node or "")

    def status_patches(self) -> list[tuple[str, str, str, list[dict], str | None]]:
        """``pod_conditions`` and ``nominations`` merged into one status patch per pod
        (namespace, name, uid, conditions, nominated node or None), in first-seen order:
        upstream writes a failed pod's condition and its nomination together."""
        merged: dict[str, list] = {}
        for ns, name, uid, cond in self.pod_conditions:
            merged.setdefault(uid, [ns, name, uid, [], None])[3].append(cond)
        for ns, name, uid, node in self.nominations:
            merged.setdefault(uid, [ns, name, uid, [], None])[4] = node
        return [tuple(m) for m in merged.values()]
