"""What a node host's kubelets want written to the apiserver, batched between flushes.

Owns the coalescing rules: per pod the last full status wins (a pod admitted and started
between two flushes is written once, as Running), per node the last status wins, per node
the latest lease renewal wins. The kubelets append; the node-host actor shell calls
``drain`` and sends each part as one batched call, applying ``pod_status`` before
``pod_deletes`` (a confirmed pod may carry a final status in the same batch).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PodKey = tuple[str, str, str]  # (namespace, name, uid)


@dataclass
class Outbox:
    node_creates: list[dict] = field(default_factory=list)
    node_status: dict[str, dict] = field(default_factory=dict)
    leases: dict[str, float] = field(default_factory=dict)
    pod_status: dict[str, tuple[str, str, str, dict]] = field(default_factory=dict)
    pod_deletes: dict[str, PodKey] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)

    def drain(self) -> Outbox:
        """Hand over everything collected so far and start empty."""
        out = Outbox(self.node_creates, self.node_status, self.leases, self.pod_status, self.pod_deletes, self.events)
        self.node_creates, self.node_status, self.leases = [], {}, {}
        self.pod_status, self.pod_deletes, self.events = {}, {}, []
        return out

    def empty(self) -> bool:
        return not (
            self.node_creates or self.node_status or self.leases or self.pod_status or self.pod_deletes or self.events
        )
