"""Stepped time across processes: the conservative discrete-event loop of the Ray runtime.

Owns the bookkeeping of the coordinator that moves a stepped cluster's clock (the Ray
runtime's ``RayCluster``, driven by the scenario driver through ``Cluster.settle_watch``
and ``Cluster.advance``): the latest answers, whom to ask, where to jump, the counts the
report gives. The decisions around it are ``coordinator.py``'s, the Ray calls that carry
them ``actors/coordinator.py``'s. Time stands at an instant while the components work
through it, as on the local runtime, and jumps to the next wakeup once the instant is done:

- ``settle_watch``: the components due at the instant, and those whose watches select a
  write made since they last answered, are asked for an ``Answer`` (the call moves the
  component's clock to the instant and makes due work run); a component answers once
  nothing is in flight, nothing is due and every event it has had is handled, and says
  how many of its write calls were answered. Which writes there were, the coordinator
  reads from a watch of its own over every kind a component or the driver watches
  (``concerned``), each time an answer says its component wrote. The instant is done when
  every live component's latest answer is idle and that watch, read *after* the writes
  those answers count, selects nothing for anyone since: a component with nothing in
  flight and nothing due writes only in response to a write, and there was none it has
  not handled.
- ``advance``: the clock jumps to the earliest wakeup any component reported or the
  driver's next time (a step, a deadline, the end). Nobody is told but the components due
  then (asked by the next ``settle``): every write carries its writer's instant, which
  moves the apiserver's clock on before it applies the write, and every watch reply
  carries the apiserver's instant, so a component learns the new instant with the first
  events written at it and nobody reacts to them at the old one.

- ``stretch``: when the next wakeups are node hosts' background timers (their Lease
  renewals) and nothing else is due before some time (no other component's wakeup, no
  change a host may make on its own, nothing of the driver's), the hosts run those
  instants ahead on their own, each instant's writes sent at that instant
  (``ComponentActor.beat``); the components the renewals concern then catch up, each
  event handed to them at the instant it was written (the apiserver's watch replies hold
  one instant each: ``instants.py``), before the clock stands at the last instant run. A
  day of heartbeats takes a few round trips per 40 emulated seconds instead of a few per
  10. A host that writes anything but a Lease in a stretch stops there, and the cluster
  reacts at that instant; should another host have run past it, the report counts a spill
  (``stretchSpills``).

With a pace (the scenario's ``timeScale``), emulated time also never runs ahead of the wall
clock times the pace: the coordinator waits for the wall before it jumps. A busy machine
only slows emulated time down; ``report`` says by how much (the lag behind the pace, and
the rate reached), instead of a component falling behind and failing an expectation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, NamedTuple

from ..api.requests import Watch
from .component import WatchEvent

MAX_PACE_WAIT = 0.25  # real seconds ``pace`` waits at once (the driver logs progress meanwhile)


class Answer(NamedTuple):
    """What one component says when asked whether it is done with the instant."""

    idle: bool  # nothing in flight, nothing due, every event it has had handled
    seen: int  # it has seen every write of the kinds it watches up to this resourceVersion
    wake_at: float | None  # its next wakeup, heartbeats included (None: only on events)
    next_change: float | None  # the earliest change it may make on its own, heartbeats aside
    writes: int = 0  # write calls of its that the apiserver has answered, ever
    running: bool = True  # False: its clock was never started (a process Ray restarted)


NOT_RUNNING = Answer(False, 0, None, None, running=False)
GONE = Answer(True, 1 << 62, None, None, writes=-1)  # a component whose process is gone for good


class Stepper:
    """The coordinator's bookkeeping: the latest answer of each component (by a key that
    stays the same across its restarts), whether the instant is done, where to jump."""

    def __init__(self, pace: float | None = None, wall: Callable[[], float] = time.monotonic):
        if pace is not None and pace <= 0:
            raise ValueError(f"timeScale: {pace!r} must be positive")
        self.pace, self._wall = pace, wall
        self.answers: dict[Hashable, Answer] = {}
        self.need: dict[Hashable, int] = {}  # key -> the resourceVersion it must have seen when it answers
        self._writes: dict[Hashable, int] = {}  # key -> its write calls answered, as it last said
        self._watching: dict[str, list[tuple[Hashable, frozenset[str] | None]]] = {}  # kind -> (key, nodes)
        self.steps = 0  # instants the clock jumped to
        self.rounds = 0  # rounds of questions asked
        self.forced = 0  # instants left before every component was done (see ``give_up``)
        self.stretches = 0  # heartbeat stretches the hosts ran ahead (see ``stretch``)
        self.spills = 0  # stretches in which a host stopped short while another ran past it
        self.max_lag = 0.0  # emulated seconds the clock was behind the pace, at most
        self._wall0: float | None = None  # wall time at emulated ``_emulated0`` (paced runs)
        self._emulated0 = 0.0

    # -- settling an instant --------------------------------------------------------------
    def record(self, key: Hashable, answer: Answer) -> bool:
        """Keep ``key``'s answer; whether it wrote since its previous one (so the coordinator
        must look at what was written)."""
        self.answers[key] = answer
        wrote = answer.writes != self._writes.get(key, 0)
        self._writes[key] = answer.writes
        return wrote

    def forget(self, key: Hashable | None = None) -> None:
        """Ask ``key`` (every component, for None) again: it restarted or lost its watch."""
        if key is None:
            self.answers.clear()
        else:
            self.answers.pop(key, None)

    def watching(self, key: Hashable, watches: Sequence[Watch]) -> None:
        """What component ``key`` watches (again, after a restart or a new host)."""
        for selected in self._watching.values():
            selected[:] = [(k, nodes) for k, nodes in selected if k != key]
        for w in watches:
            self._watching.setdefault(w.kind, []).append((key, w.node_names))

    def kinds(self) -> list[str]:
        """Every kind some component watches: what the coordinator's own watch must cover."""
        return sorted(k for k, selected in self._watching.items() if selected)

    def concerned(self, events: Iterable[WatchEvent]) -> set[Hashable]:
        """The components whose watches select one of ``events`` (a Pod or Node by node name,
        as the apiserver selects them)."""
        out: set[Hashable] = set()
        for ev in events:
            selected = self._watching.get(ev.kind)
            if not selected:
                continue
            node = None
            if ev.kind == "Pod":
                node = ev.head.node_name
            elif ev.kind == "Node":
                node = (ev.obj.get("metadata") or {}).get("name")
            for key, nodes in selected:
                if nodes is None or node in nodes:
                    out.add(key)
        return out

    def polled(self, rv: int, events: Iterable[WatchEvent]) -> None:
        """The coordinator's watch has every write up to ``rv``, ``events`` since it last
        looked: the components they concern are asked again, and must have seen ``rv``
        when they answer (an event it watches reaches a component with the resourceVersion
        its watch had reached then; a component whose watch selects nothing more waits for
        nothing: ``ComponentActor.step`` asks the apiserver). An answer that already says so
        (asked while the coordinator looked) stands."""
        for key in self.concerned(events):
            a = self.answers.get(key)
            if a is not None and a.seen < rv:
                del self.answers[key]
            self.need[key] = rv

    def watchers(self, kind: str) -> list[Hashable]:
        """The components that watch ``kind``."""
        return [key for key, _ in self._watching.get(kind, ())]

    def to_ask(self, keys: Iterable[Hashable]) -> list[Hashable]:
        """The components not known to be done with the instant."""
        out = []
        for key in keys:
            a = self.answers.get(key)
            if a is None or not a.idle or a.seen < self.need.get(key, 0):
                out.append(key)
        return out

    def give_up(self, keys: Iterable[Hashable]) -> None:
        """The instant is taking too long (a component stuck, or a machine far too busy):
        count it and treat the components as done with what they last said."""
        self.forced += 1
        for key in keys:
            self.need.pop(key, None)
            a = self.answers.get(key, NOT_RUNNING)
            self.answers[key] = Answer(True, a.seen, a.wake_at, a.next_change)

    # -- moving on ------------------------------------------------------------------------
    def next_time(self, keys: Iterable[Hashable], now: float, until: float | None) -> float | None:
        """The earliest wakeup after ``now`` of the live components ``keys``, or ``until``
        if sooner (a wakeup not after ``now`` is one given up on: ``give_up``)."""
        times = [w for k in keys if (a := self.answers.get(k)) is not None and (w := a.wake_at) is not None and w > now]
        if until is not None:
            times.append(until)
        return min(times) if times else None

    def stretch(
        self, hosts: Iterable[Hashable], others: Iterable[Hashable], now: float, until: float | None
    ) -> tuple[float, list[Hashable]] | None:
        """Where node hosts may run their heartbeats ahead to (exclusive), and which hosts:
        every component is done with ``now``; ``until`` (the driver's next time), every
        other component's next wakeup and every host's next change of its own bound it; a
        host whose next wakeup comes before the bound runs. None: no such stretch (or a
        paced run, whose jumps wait for the wall clock)."""
        if self.pace is not None:
            return None
        bound = float("inf") if until is None else until
        hosts = list(hosts)
        for key in [*others, *hosts]:
            a = self.answers.get(key)
            if a is None or not a.idle or (a.wake_at is not None and a.wake_at <= now):
                return None
        for key in others:
            if (w := self.answers[key].wake_at) is not None:
                bound = min(bound, w)
        for key in hosts:
            if (c := self.answers[key].next_change) is not None:
                bound = min(bound, c)
        due = [k for k in hosts if (w := self.answers[k].wake_at) is not None and w < bound]
        return (bound, due) if due else None

    def paced(self, now: float, target: float) -> tuple[float | None, float]:
        """Where to jump from ``now`` towards ``target`` under the pace: (the instant, or
        None to stay; real seconds to wait first). Without a pace: at once to ``target``."""
        if self.pace is None or target <= now:
            return target, 0.0
        wall = self.wall_now(now)
        if target <= wall:
            self.max_lag = max(self.max_lag, wall - target)
            return target, 0.0
        return None, min(MAX_PACE_WAIT, (target - wall) / self.pace)

    def wall_now(self, now: float) -> float:
        """Emulated time as the wall clock times the pace says it should be (the pace
        starts at the first question, from ``now``)."""
        assert self.pace is not None  # only paced runs ask
        if self._wall0 is None:
            self._wall0, self._emulated0 = self._wall(), now
        return self._emulated0 + (self._wall() - self._wall0) * self.pace

    def jumped(self) -> None:
        self.steps += 1

    def jump(self, at: float, keys: Iterable[Hashable]) -> None:
        """The clock jumped to ``at``: count the instant; the live components ``keys`` due
        by then (a host that stopped a stretch early, too) are asked again."""
        self.jumped()
        for key in keys:
            a = self.answers.get(key)
            if a is not None and a.wake_at is not None and a.wake_at <= at:
                self.forget(key)

    def stretched(self, due: Sequence[Hashable], reached: Iterable[float | None], now: float) -> float | None:
        """The hosts ``due`` ran a stretch from ``now``, each to its instant in ``reached``
        (None: it could not run): where the clock stands now, counting the stretch, or None
        when nobody ran ahead (busy, or restarted: the plain jump instead). A host that
        stopped short (it wrote more than a heartbeat, or could not run) while another ran
        past it counts a spill: its later renewals come after the others'."""
        at = max([now, *[r for r in reached if r is not None]])
        if at <= now:
            return None
        self.stretches += 1
        if any((a := self.answers.get(k)) is None or (a.wake_at is not None and a.wake_at < at) for k in due):
            self.spills += 1
        return at

    def gone(self, key: Hashable) -> None:
        """``key``'s process is gone for good (a dead Ray node): it holds nothing up again."""
        self.record(key, GONE)

    def quiet(self, keys: Iterable[Hashable], now: float, horizon: float) -> bool:
        """Every live component is done and none will change anything by itself within
        ``horizon`` emulated seconds (heartbeats aside)."""
        for key in keys:
            a = self.answers.get(key)
            if a is None or not a.idle or (a.next_change is not None and a.next_change <= now + horizon):
                return False
        return True

    def report(self, now: float) -> dict[str, Any]:
        """How the clock went, for the run's report: the mode, the instants, and for a paced
        run the rate reached and the lag behind the pace."""
        out: dict[str, Any] = {
            "mode": "stepped" if self.pace is None else "paced",
            "steps": self.steps,
            "rounds": self.rounds,
        }
        if self.forced:
            out["forcedSteps"] = self.forced
        if self.stretches:
            out["stretches"] = self.stretches
        if self.spills:
            out["stretchSpills"] = self.spills
        if self.pace is not None:
            out["timeScale"] = self.pace
            out["maxLagSeconds"] = round(self.max_lag, 3)
            if self._wall0 is not None and self._wall() > self._wall0:
                out["achievedScale"] = round((now - self._emulated0) / (self._wall() - self._wall0), 2)
        return out
