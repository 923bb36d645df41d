"""Event objects (core/v1 Event) as components report them.

The scheduler, the kubelets and the controllers all describe what they did with Events;
this module owns their shape so the report and expectations can read them uniformly.
Events are created through the apiserver in batches like every other write.
"""

from __future__ import annotations

from typing import Any

from ..clock import rfc3339
from .objects import KINDS, key_of, uid_of


def make_event(
    obj: dict[str, Any],
    reason: str,
    message: str,
    now: float,
    *,
    type: str = "Normal",
    component: str = "",
    host: str = "",
) -> dict[str, Any]:
    """An Event about ``obj`` at emulated time ``now``; the apiserver assigns uid and rv."""
    kind, ns, name = key_of(obj)
    ts = rfc3339(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            # The apiserver completes the name from its seeded generator, so a replay names
            # every event alike (upstream's recorder uses <object>.<hex timestamp>).
            "generateName": f"{name}.{component or 'kubemu'}.",
            "namespace": ns or "default",
            "annotations": {"kubemu.io/time": repr(round(now, 6))},
        },
        "involvedObject": {
            "kind": kind,
            "namespace": ns,
            "name": name,
            "uid": uid_of(obj),
            "apiVersion": KINDS.get(kind, ("v1", True))[0],
        },
        "reason": reason,
        "message": message,
        "type": type,
        "source": {"component": component, **({"host": host} if host else {})},
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1,
    }


def event_time(ev: dict[str, Any]) -> float:
    """The emulated time an event was recorded, at full precision."""
    return float(((ev.get("metadata") or {}).get("annotations") or {}).get("kubemu.io/time", 0.0))


def involved_ref(ev: dict[str, Any]) -> str:
    """The event's object as ``Kind/namespace/name`` (``Kind/name`` when cluster-scoped)."""
    io = ev.get("involvedObject") or {}
    if io.get("namespace"):
        return f"{io.get('kind')}/{io['namespace']}/{io.get('name')}"
    return f"{io.get('kind')}/{io.get('name')}"
