"""When a component gets a turn, and when it is quiet: the rules both runtimes share.

Owns three small predicates over what a component has pending (its watch's events, the
failures of its earlier writes, a boot) and what its last ``Result`` said (``wake_at``,
``next_change``). The local runtime (``local.py``) asks them for every member in every
round; the Ray runtime's component shell asks them through ``componentloop.py``. One
place, so the two runtimes turn a component for the same reasons.
"""

from __future__ import annotations

from collections.abc import Sequence


def due(wake_at: float | None, now: float) -> bool:
    """Whether the component's own wakeup has come."""
    return wake_at is not None and wake_at <= now


def wants_turn(events: Sequence[object], failures: Sequence[object], boot: str, is_due: bool) -> bool:
    """Whether a batch is worth giving: events came, a write failed, it boots, or work is due
    (an empty batch otherwise would only spin it at the instant)."""
    return bool(events or failures or boot or is_due)


def quiet_after(failures: Sequence[object], next_change: float | None, now: float, horizon: float) -> bool:
    """Nothing left to look at (no failed write) and no change of its own within ``horizon``
    emulated seconds of ``now`` (heartbeats do not count: they are not a ``next_change``)."""
    return not failures and (next_change is None or next_change > now + horizon)
