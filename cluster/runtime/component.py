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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..api.codec import decode
from ..api.errors import StatusError
from ..api.podhead import PodHead, head_of, read_head
from ..api.requests import Request, Watch

START, RESTART = "start", "restart"


class WatchEvent:
    """One watch event: ``kind``, ``type`` (ADDED | MODIFIED | DELETED), ``obj`` and ``raw``,
    the object's encoded bytes as the apiserver sent them (None for a made-up DELETED): a
    client that keeps many objects may keep these instead of the decoded dict.

    ``obj`` is decoded from ``raw`` on first read, so an event a client judges by its
    ``head`` alone (``cluster/api/podhead.py``; pods only) never builds the dict. Unpacks
    as the tuple (kind, type, obj, raw), which reads ``obj``.
    """

    __slots__ = ("kind", "type", "raw", "_obj", "_head")

    def __init__(
        self,
        kind: str,
        type: str,
        obj: dict[str, Any] | None = None,
        raw: bytes | None = None,
        head: PodHead | None = None,
    ):
        if obj is None and raw is None:
            raise ValueError("WatchEvent: needs the object or its bytes")
        self.kind, self.type, self._obj, self.raw, self._head = kind, type, obj, raw, head

    @property
    def obj(self) -> dict[str, Any]:
        obj = self._obj
        if obj is None:
            obj = self._obj = decode(self.raw)  # type: ignore[arg-type]
        return obj

    @property
    def head(self) -> PodHead:
        """A pod event's head (read from ``raw`` without decoding the rest)."""
        head = self._head
        if head is None:
            head = self._head = _head(self._obj, self.raw)
        return head

    def __iter__(self) -> Iterator[Any]:
        return iter((self.kind, self.type, self.obj, self.raw))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WatchEvent):
            return NotImplemented
        return (self.kind, self.type, self.obj, self.raw) == (other.kind, other.type, other.obj, other.raw)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"WatchEvent({self.kind!r}, {self.type!r}, {self.obj!r})"


def _head(obj: dict[str, Any] | None, raw: bytes | None) -> PodHead:
    if obj is None:
        try:
            return read_head(raw)  # type: ignore[arg-type]
        except ValueError:
            obj = decode(raw)  # type: ignore[arg-type]
    return head_of(obj)


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

    def handle(self, command: Any, now: float) -> Any:
        """Carry out a chaos command; returns a detail for the chaos log ("" for none), or
        the answer to a call (``cluster/api/kubeletcalls.py``)."""
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
