"""What one YuniKorn scheduling batch asks to be written, in the order it must land.

Owns ``Output``: binds, the victims' deletes, pod status writes (a pending pod's
PodScheduled condition carrying its allocation log; a rejected application's pods failed)
and events. Filled by the core; turned into requests by ``component.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Output:
    binds: list[tuple[str, str, str, str]] = field(default_factory=list)  # (ns, name, uid, node)
    deletes: list[tuple[str, str, str]] = field(default_factory=list)  # (ns, name, uid)
    conditions: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)  # (ns, name, uid, cond)
    failed: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)  # (ns, name, uid, status)
    events: list[dict[str, Any]] = field(default_factory=list)
