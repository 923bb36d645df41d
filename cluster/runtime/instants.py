"""Which instant each write of a stepped cluster was made at, and watch replies of one instant.

Owns the marks a held apiserver clock leaves as it moves (the last resourceVersion written
before each new instant) and the rule that cuts a watch reply after the last event of its
oldest instant. The Ray apiserver actor (``actors/apiserverclock.py``) records a mark each
time its held clock moves on and cuts every clocked watch reply, which then carries the
instant its events were written at: a component hands them to its logic at that instant,
even when the writers have moved the clock further meanwhile (the coordinator lets node
hosts run their heartbeats ahead: ``stepper.py``). Without such a run-ahead a reply holds
events of the current instant only, and nothing is cut.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

from ..api.errors import Expired
from ..api.requests import WatchChunk

KEEP = 4096  # marks kept: a watcher further behind than this gets its events uncut

Reply = dict[str, WatchChunk | Expired]
# (kind, resourceVersion) -> how many of the events after it this watcher's selection holds,
# or None when the window no longer reaches back that far.
CountAfter = Callable[[str, int], "int | None"]


class Instants:
    """Marks ``(rv, at)``: the writes after resourceVersion ``rv`` (up to the next mark's)
    were made at emulated time ``at``."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._rvs: list[int] = []
        self._at: list[float] = []

    def moved(self, rv: int, at: float) -> None:
        """The held clock moved on to ``at`` with ``rv`` the latest resourceVersion written."""
        if self._at and at <= self._at[-1]:
            return  # never back
        if self._rvs and self._rvs[-1] == rv:
            self._at[-1] = at  # nothing was written at the instant it leaves
        else:
            self._rvs.append(rv)
            self._at.append(at)
            if len(self._rvs) > 2 * self.keep:
                del self._rvs[: -self.keep], self._at[: -self.keep]

    def __len__(self) -> int:
        return len(self._rvs)

    def cut(self, since: dict[str, int], reply: Reply, count_after: CountAfter) -> tuple[float | None, Reply]:
        """The instant ``reply``'s oldest events were written at, and the reply cut after
        that instant's last event (a cut kind resumes from there); None when the reply has
        no events, no instant was marked yet, or the window no longer reaches back (the
        caller then says its current instant)."""
        kinds = [k for k, part in reply.items() if isinstance(part, WatchChunk) and part.events]
        if not kinds or not self._rvs:
            return None, reply
        lowest = min(since[k] for k in kinds)
        # The mark of the instant lowest + 1 is in; -1: written before the clock was first
        # held (the nodes registering), handed over at the first instant.
        first = bisect_right(self._rvs, lowest) - 1
        for j in range(first, len(self._rvs)):
            at = self._at[max(j, 0)]
            if j + 1 == len(self._rvs):
                return at, reply  # every remaining event is of the latest instant
            end = self._rvs[j + 1]
            kept: dict[str, int] = {}
            for k in kinds:
                part = reply[k]
                assert isinstance(part, WatchChunk)
                if since[k] >= end:
                    kept[k] = 0
                    continue
                after = count_after(k, end)
                if after is None:
                    return None, reply
                kept[k] = len(part.events) - after
            if any(kept.values()):
                return at, _cut(reply, kept, {k: max(since[k], end) for k in kinds})
        return None, reply  # not reached: the latest instant returns


def _cut(reply: Reply, kept: dict[str, int], resume: dict[str, int]) -> Reply:
    """``reply`` with each kind's first ``kept[kind]`` events, a cut kind resuming from
    ``resume[kind]``."""
    out = dict(reply)
    for kind, n in kept.items():
        part = reply[kind]
        assert isinstance(part, WatchChunk)
        if n < len(part.events):
            out[kind] = WatchChunk(part.events[:n], resume[kind])
    return out
