"""The writes a component has sent and not yet seen answered, and the tally of those that were.

Owns ``Inflight``: each write call a component shell sent without waiting (its reply, any
object with ``done()`` and ``result()``, such as the ``concurrent.futures.Future`` of a Ray
call, with the requests it carried), how many replies came back, which requests failed
(handed to the component's next batch), and per request type the first and last wall time
and the count of successful writes (``write_window``: what the benchmarks measure). The Ray
component shell (``actors/component.py``) adds a call each time it writes and collects on
every turn of its loop; the wall time is its to give (``cluster/`` never reads the clock).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..api.errors import ServiceUnavailable, StatusError
from ..api.requests import Bind, Outcome, Request
from .component import Failure


class Reply(Protocol):
    def done(self) -> bool: ...

    def result(self) -> Any: ...


Window = tuple[float | None, float | None, int]  # (first, last, count) of successful writes


class Inflight:
    def __init__(self) -> None:
        self.calls: list[tuple[Reply, list[Request]]] = []  # (reply of a write call, its requests)
        self.replies = 0  # write calls answered, ever (a stepped cluster's ``Answer.writes``)
        self.windows: dict[str, list[Any]] = {}  # request type -> [first, last, count], wall time

    def __bool__(self) -> bool:
        return bool(self.calls)

    def add(self, reply: Reply, requests: list[Request]) -> None:
        self.calls.append((reply, requests))

    def pending(self) -> list[Any]:
        """The replies not collected yet, as the runtime gave them (its futures)."""
        return [reply for reply, _ in self.calls]

    def any_done(self) -> bool:
        """A reply has come in that ``collect`` has not taken."""
        return any(reply.done() for reply, _ in self.calls)

    def collect(self, wall: float) -> list[Failure]:
        """Take the replies that have come in: the requests that failed, in order; each
        success is tallied at ``wall``."""
        keep, failures = [], []
        for reply, writes in self.calls:
            if not reply.done():
                keep.append((reply, writes))
                continue
            self.replies += 1
            for req, err in zip(writes, outcomes(reply, len(writes))):
                if err is not None:
                    failures.append(Failure(req, err))
                else:
                    tally(self.windows, req, wall)
        self.calls = keep
        return failures

    def window(self, kind: str) -> Window:
        """(first, last, count) of the successful writes of ``kind`` (see ``tally``)."""
        first, last, count = self.windows.get(kind, (None, None, 0))
        return first, last, count

    def reset_window(self, kind: str) -> int:
        """Start ``kind``'s window again; how many it had counted."""
        count: int = self.windows.pop(kind, (None, None, 0))[2]
        return count


def tally(windows: dict[str, list[Any]], req: Any, now: float) -> None:
    """Count one successful write in ``windows`` under its request type and, for a Bind,
    also under ``Bind:<the pod name's prefix before its first '-'>`` (benches measure one
    group of pods among others)."""
    keys = [type(req).__name__]
    if isinstance(req, Bind):
        keys.append(f"Bind:{req.name.split('-', 1)[0]}")
    for key in keys:
        w = windows.setdefault(key, [now, now, 0])
        w[1], w[2] = now, w[2] + 1


def outcomes(reply: Reply, n: int) -> list[Outcome]:
    """The per-request outcomes of a write call; when the call itself failed (the apiserver
    unreachable for good), a retryable error for each, so the component tries again."""
    try:
        got: list[Outcome] = reply.result()
        return got
    except Exception as e:  # the runtime wraps the cause in types of its own
        first = (str(e).splitlines() or [""])[0]
        err: StatusError = ServiceUnavailable(f"write call failed: {type(e).__name__}: {first}")
        return [err] * n
