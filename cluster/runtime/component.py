"""The component protocol: the one shape every part of the control plane has.

Owns the contract between a component (the scheduler, a node host and its kubelets, the
controller manager, and everything that follows) and the runtime that drives it. A
component is a plain class; a runtime (``local.py`` in one process, ``actors/`` on Ray)
watches the kinds it asks for, feeds it batches, applies what it writes and tells it which
writes failed. It reads as controller-runtime's one method does: a request in, a result
with "requeue after" out.

- ``watches()``: the kinds it watches, with selectors (``Watch``); read once per
  incarnation. A relist after an apiserver restart reaches it as ordinary events.
- ``reconcile(batch) -> Result``: ``batch`` holds the emulated time, the watch events since
  the last batch, the writes of earlier results that failed and why (``Failure``: the
  request and its ``StatusError``), and, on the first batch of an incarnation, ``boot``.
  The result holds the writes it wants made, in order (``cluster/api/requests.py``), when
  it next wants a batch although nothing happened (``wake_at``), and the earliest time it
  may change anything on its own (``next_change``; heartbeats do not count), which the
  runtimes read to end a run only once the cluster has settled.
- ``handle(command, now)``: a chaos command aimed at it (``commands.py``); what it writes
  in response comes out of the next ``reconcile``, which the runtime runs at once.
- ``inspect(now)``: a read-only view for reports and benchmarks (counters, what each pod
  holds).

A component never reads a clock, never blocks and holds no reference to the runtime, so
tests drive it with hand-made batches. Its lifecycle, as the runtimes run it:

| state       | event                         | next        | the runtime does                       |
|-------------|-------------------------------|-------------|----------------------------------------|
| built       | the cluster starts            | running     | reconcile(boot=START), then list+watch |
| running     | events, failures or wake_at   | running     | reconcile(events, failures)            |
| running     | a chaos command               | running     | handle(command), then reconcile        |
| running     | restarted (chaos or a crash)  | built again | a new instance: reconcile(boot=RESTART), relist |
| running     | killed (a host process)       | gone        | nothing more                           |
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..api.errors import StatusError
from ..api.requests import Request, Watch

START, RESTART = "start", "restart"


class WatchEvent(NamedTuple):
    kind: str
    type: str  # ADDED | MODIFIED | DELETED
    obj: dict[str, Any]
    # The object's encoded bytes as the apiserver sent them (None for a made-up DELETED):
    # a client that keeps many objects may keep these instead of the decoded dict.
    raw: bytes | None = None


class Failure(NamedTuple):
    """A write the apiserver refused (or that never reached it), and why."""

    request: Request
    error: StatusError


@dataclass(slots=True)
class Batch:
    now: float
    events: list[WatchEvent] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    boot: str = ""  # START or RESTART on the first batch of an incarnation, else ""


@dataclass(slots=True)
class Result:
    writes: list[Request] = field(default_factory=list)
    wake_at: float | None = None  # a batch at this time even without events; None: only on events
    next_change: float | None = None  # the earliest change it may make on its own, heartbeats aside


class CommandError(ValueError):
    """A command the component cannot carry out; the message is one line naming the field."""


class Component(ABC):
    """Base class of every component; ``name`` identifies it in logs and reports."""

    name: str = ""

    @abstractmethod
    def watches(self) -> Sequence[Watch]: ...

    @abstractmethod
    def reconcile(self, batch: Batch) -> Result: ...

    def handle(self, command: Any, now: float) -> str:
        """Carry out a chaos command; returns a detail for the chaos log ("" for none)."""
        raise CommandError(f"component: {self.name} takes no commands ({type(command).__name__})")

    def inspect(self, now: float) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class ComponentSpec:
    """How to build a component, as data a runtime can send to another process and use
    again after a restart. ``factory`` is a class (or function) importable by name;
    ``nodes`` lists the emulated nodes a node host runs, so chaos aimed at a node finds it."""

    name: str
    factory: Callable[..., Component]
    kwargs: dict[str, Any] = field(default_factory=dict)
    nodes: tuple[str, ...] = ()

    def build(self) -> Component:
        component = self.factory(**self.kwargs)
        component.name = self.name
        return component
