"""What the HTTP front end needs of an apiserver, and the one over the local runtime.

Owns ``Backend``, the interface ``handler.py`` calls for every request (reads, the typed
writes, watches and a wait for the next change), and ``LocalBackend``, which answers from
the ``APIServer`` of a ``LocalCluster`` in this process. Errors are the apiserver's
``StatusError``s, raised as they are; the handler turns them into ``Status`` bodies.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from ..api import codec
from ..api.errors import Expired
from ..api.requests import WatchChunk
from ..store.apiserver import APIServer


class Backend(Protocol):
    def now(self) -> float: ...

    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]: ...

    async def list(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, list[dict[str, Any]]]: ...

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    async def update(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    async def update_status(self, kind: str, ns: str, name: str, status: dict[str, Any]) -> dict[str, Any]: ...

    async def delete(self, kind: str, ns: str, name: str, uid: str, grace: int | None) -> dict[str, Any]: ...

    async def bind(self, ns: str, name: str, uid: str, node: str) -> None: ...

    async def evict(self, ns: str, name: str, uid: str, grace: int | None) -> None: ...

    async def watch(self, kind: str, rv: int, node_names: frozenset[str] | None) -> WatchChunk | Expired: ...

    async def resource_version(self) -> int: ...

    async def changed(self, rv: int, timeout: float) -> None:
        """Return once the resourceVersion passes ``rv``, or after ``timeout`` real seconds."""
        ...


class LocalBackend:
    """Answers from ``api()``'s store at ``now()``; ``tick`` wakes the waiting watches (the
    serving loop calls it after every settled instant)."""

    def __init__(self, api: Any, now: Any, poke: Any = None):
        self._api, self.now = api, now  # callables: the runtime may replace its apiserver on restart
        self._poke = poke  # tells a paced runtime a client wrote, so it reacts at once
        self._changed = asyncio.Event()

    @property
    def api(self) -> APIServer:
        api: APIServer = self._api()
        return api

    def tick(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _wrote(self) -> None:
        self.tick()
        if self._poke is not None:
            self._poke()

    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]:
        return codec.clone(self.api.get(kind, ns, name))

    async def list(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, list[dict[str, Any]]]:
        result = self.api.list(kind, node_names)
        return result.resource_version, [codec.decode(b) for b in result.items]

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        created = codec.clone(self.api.create(obj, self.now()))
        self._wrote()
        return created

    async def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        updated = codec.clone(self.api.update(obj, self.now()))
        self._wrote()
        return updated

    async def update_status(self, kind: str, ns: str, name: str, status: dict[str, Any]) -> dict[str, Any]:
        self.api.update_status(kind, ns, name, "", codec.clone(status))
        self._wrote()
        return await self.get(kind, ns, name)

    async def delete(self, kind: str, ns: str, name: str, uid: str, grace: int | None) -> dict[str, Any]:
        before = await self.get(kind, ns, name)
        gone = self.api.delete(kind, ns, name, uid or None, grace, self.now())
        self._wrote()
        return before if gone else await self.get(kind, ns, name)

    async def bind(self, ns: str, name: str, uid: str, node: str) -> None:
        self.api.bind(ns, name, uid, node, self.now())
        self._wrote()

    async def evict(self, ns: str, name: str, uid: str, grace: int | None) -> None:
        self.api.evict(ns, name, uid or None, grace, self.now())
        self._wrote()

    async def watch(self, kind: str, rv: int, node_names: frozenset[str] | None) -> WatchChunk | Expired:
        return self.api.watch({kind: rv}, node_names)[kind]

    async def resource_version(self) -> int:
        return self.api.store.rv

    async def changed(self, rv: int, timeout: float) -> None:
        if self.api.store.rv > rv:
            return
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass
