"""The storage interface: what the apiserver needs of the place its objects live.

Owns ``Storage`` (the object store, the watch window and the hook of the durable log, as
``APIServer`` and its helpers in this package call them) and ``Journal`` (what a durable log,
or the local runtime's write trace, is told of every write). The apiserver alone calls a
``Storage``: code outside ``cluster/apiserver`` goes through ``APIServer``'s methods
(``resource_version``, ``count``, ``exists``, ``set_journal``), and import-linter keeps it
from importing the implementation (pyproject.toml). Also re-exports the watch window's
policy (``Window``), the one storage setting callers outside choose.

Today's implementation is ``store.Store``: objects as msgpack bytes in memory, a bounded
window of events per kind (``window.py``), and a ``Journal`` (``wal.DurableLog``) that makes
them durable, snapshots included (``durable.py``). Another implementation only has to keep
these promises:

- every write takes the next resourceVersion of one global, increasing sequence and returns
  it; ``put`` sets it in the object's metadata;
- ``events_since`` answers the events of a kind after a resourceVersion, in order, and the
  resourceVersion to resume from, or raises ``Expired`` when it no longer holds them (or the
  resourceVersion is ahead of it, as after losing history);
- ``get`` answers a copy the caller may change; ``peek`` and ``peek_all`` one it must not;
- with a journal set, every write is recorded in it before the write returns.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Set
from typing import Protocol

from .window import DEFAULT_WINDOW, Window

__all__ = ["DEFAULT_WINDOW", "Journal", "Storage", "Window"]


class Journal(Protocol):
    """Told of every write a ``Storage`` makes, with the bytes it stored."""

    def record_put(self, kind: str, rv: int, event_type: str, namespace: str, name: str, data: bytes) -> None: ...

    def record_remove(self, kind: str, rv: int, namespace: str, name: str) -> None: ...


class Storage(Protocol):
    """Versioned objects by (kind, namespace, name), their change events, and a journal.

    A cluster-scoped object has namespace "". ``node_names`` selects pods by their
    spec.nodeName and Nodes by their name (the node hosts' watches and lists)."""

    journal: Journal | None

    @property
    def rv(self) -> int:
        """The resourceVersion of the latest write."""
        ...

    # -- reads ----------------------------------------------------------------------------
    def get(self, kind: str, ns: str, name: str) -> dict | None: ...

    def peek(self, kind: str, ns: str, name: str) -> dict | None: ...

    def peek_all(self, kind: str) -> builtins.list[dict]: ...

    def raw(self, kind: str, ns: str, name: str) -> bytes | None: ...

    def has(self, kind: str, ns: str, name: str) -> bool: ...

    def keys(self, kind: str) -> builtins.list[tuple[str, str]]: ...

    def objects(self, kind: str) -> Iterable[dict]: ...

    def count(self, kind: str) -> int: ...

    def kind_revision(self, kind: str) -> int:
        """Moves with every write of ``kind``."""
        ...

    def list(self, kind: str, node_names: Set[str] | None = None) -> tuple[int, builtins.list[bytes]]:
        """The encoded objects of ``kind`` and the resourceVersion they are current at."""
        ...

    def events_since(
        self, kind: str, since_rv: int, node_names: Set[str] | None = None, limit: int = 10_000
    ) -> tuple[builtins.list[tuple[str, bytes]], int]:
        """(type, bytes) of the events after ``since_rv``, and the rv to resume from."""
        ...

    # -- writes ---------------------------------------------------------------------------
    def at(self, now: float) -> None:
        """The apiserver's clock reads ``now`` (never goes back): the window ages by it."""
        ...

    def put(self, kind: str, obj: dict, event_type: str) -> int: ...

    def remove(self, kind: str, ns: str, name: str, last: dict | None = None) -> int: ...

    def remove_as_stored(self, kind: str, ns: str, name: str, stored_rv: str) -> bool:
        """A removal without decoding; False (nothing done) sends the caller to ``remove``."""
        ...

    def renew(self, ns: str, name: str, applied: dict) -> bool:
        """A node Lease's renewal in place; False sends the caller the general way."""
        ...

    # -- durability -----------------------------------------------------------------------
    def snapshot_state(self) -> tuple[int, dict[str, dict[tuple[str, str], bytes]]]:
        """The rv and every kind's objects' bytes by (namespace, name): a snapshot."""
        ...
