"""The typed vocabulary of apiserver calls: every write a client can ask for, and what reads
return.

Owns the write requests (``Create``, ``Update``, ``UpdateStatus``, ``Patch``, ``Delete``,
``Bind``, ``Evict``, ``RecordEvent``), the watch selector (``Watch``) and the read results
(``ListResult``, ``WatchChunk``). Components return lists of requests
(``cluster/runtime/component.py``); the apiserver (``cluster/apiserver/apiserver.py``) applies
them in order and answers each with ``None`` (done) or a ``StatusError``
(``errors.py``). Requests are named tuples: typed, read by field name, and cheap to build
and to send between processes in the batches of thousands the scheduler writes.

Patches are typed too (``patches.py``): each says what it changes and how.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .errors import StatusError
from .patches import PatchOp


class Create(NamedTuple):
    """Create ``obj``; ``metadata.generateName`` without a name asks the server for one.

    ``slow_start`` is ``(group, batch)`` for the creates a controller sends as one upstream
    slowStartBatch (batches of 1, 2, 4, ...): once a create of ``group`` is refused, the
    apiserver answers the group's creates of later batches with ``NotAttempted`` instead of
    applying them, as the controller's loop would have stopped before sending them.
    """

    obj: dict[str, Any]
    slow_start: tuple[str, int] | None = None


class Update(NamedTuple):
    """Replace an object's spec and metadata; a ``metadata.resourceVersion`` in ``obj`` is a
    precondition (a stale one is a Conflict). The status is left as it is."""

    obj: dict[str, Any]


class UpdateStatus(NamedTuple):
    """Replace an object's ``status`` (the status subresource)."""

    kind: str
    namespace: str
    name: str
    uid: str  # precondition; "" for none
    status: dict[str, Any]
    # Labels and annotations written with the status (None: kept): upstream's status
    # subresource keeps metadata changes for most kinds.
    meta: dict[str, Any] | None = None


class Patch(NamedTuple):
    """Change part of an object as ``patch`` says (``patches.py``)."""

    kind: str
    namespace: str
    name: str
    uid: str  # precondition; "" for none
    patch: PatchOp


class Delete(NamedTuple):
    """Delete with DeleteOptions: ``uid`` is the precondition ("" for none), ``grace`` the
    gracePeriodSeconds (None: the object's own; pods terminate gracefully) and
    ``propagation`` the propagationPolicy: "Background", "Foreground", "Orphan", or "" for
    the kind's default (``cluster/apiserver/apiserver.py`` says which)."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    grace: int | None = None
    propagation: str = ""


class Bind(NamedTuple):
    """The binding subresource: set a pod's ``spec.nodeName`` once."""

    namespace: str
    name: str
    uid: str
    node: str


class Evict(NamedTuple):
    """The eviction subresource: a graceful delete that a PodDisruptionBudget may refuse."""

    namespace: str
    name: str
    uid: str = ""
    grace: int | None = None


class RecordEvent(NamedTuple):
    """Record a core/v1 Event (``events.make_event``). Components put their events after the
    writes they describe, so nothing reports a write that was not made."""

    event: dict[str, Any]


Request = Create | Update | UpdateStatus | Patch | Delete | Bind | Evict | RecordEvent
Outcome = StatusError | None  # what the apiserver answers for each request: None is done


def target(req: Request) -> tuple[str, str, str]:
    """The (kind, namespace, name) a request writes, for logs and traces."""
    if isinstance(req, (Create, Update)):
        meta = req.obj.get("metadata") or {}
        return req.obj.get("kind", ""), meta.get("namespace", ""), meta.get("name") or meta.get("generateName", "")
    if isinstance(req, RecordEvent):
        meta = req.event.get("metadata") or {}
        return "Event", meta.get("namespace", ""), meta.get("name") or meta.get("generateName", "")
    if isinstance(req, (Bind, Evict)):
        return "Pod", req.namespace, req.name
    return req.kind, req.namespace, req.name


class Watch(NamedTuple):
    """What one kind of a client's watch selects. ``node_names`` is the field selector
    ``spec.nodeName`` over a set of nodes (Pods only: a node host watches the pods of its
    own nodes); None selects every object of the kind. ``heads`` (Pods only): the client
    judges most events by the pod's head (``podhead.py``), so its events decode the object
    only when it is read; it keeps pods by uid, so a relist names the uid (and node) of
    each pod it reports gone or replaced (``cluster/runtime/reflector.py``). ``lazy``: the
    client reads what it needs from the event's bytes itself, so the reflector reads only
    the object's key and the object is decoded only if the client asks for it."""

    kind: str
    node_names: frozenset[str] | None = None
    heads: bool = False
    lazy: bool = False


RawEvent = tuple[str, bytes]  # (ADDED | MODIFIED | DELETED, the object as the store encoded it)


class ListResult(NamedTuple):
    """A list: every object of a kind (encoded once by the store) and the resourceVersion
    the list is current at, which a watch resumes from."""

    resource_version: int
    items: list[bytes]


class ListPage(NamedTuple):
    """One page of a paginated list: up to the asked number of objects, the resourceVersion
    the whole list is current at, and the token for the next page ("" after the last)."""

    resource_version: int
    items: list[bytes]
    continue_token: str


class WatchChunk(NamedTuple):
    """One kind's part of a watch reply: the events after the caller's resourceVersion, and
    the resourceVersion to resume from (past filtered-out events too)."""

    events: list[RawEvent]
    resume: int
