"""What the HTTP front end needs of an apiserver, and the one over the local runtime.

Owns ``Backend``, the interface ``handler.py`` calls for every request (reads, the typed
writes, watches and a wait for the next change), and ``LocalBackend``, which answers from
the ``APIServer`` of a ``LocalCluster`` in this process. Errors are the apiserver's
``StatusError``s, raised as they are; the handler turns them into ``Status`` bodies.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ..api import codec
from ..api.errors import BadRequest, Cause, Expired, Invalid
from ..api.kinds import BY_KIND, CUSTOM, Resource, deleted_answer
from ..api.kubeletcalls import KubeletCall
from ..api.requests import Bind, Create, Delete, Evict, Patch, Request, Update, UpdateStatus, WatchChunk
from ..apiserver.apiserver import APIServer

# How long a write may wait before the watches hear of it (real seconds): every write of
# the window reaches a watch in one chunk. Small beside a watch's usual latency.
WAKE_COALESCE = 0.002


def apply_one(api: APIServer, req: Request, now: float, dry_run: bool = False) -> dict[str, Any] | None:
    """Apply one write as an HTTP client asked for it; what the API answers with (the object
    created or updated; after a delete, the object still terminating or, once gone, the
    object or a success ``Status`` as ``kinds.deleted_answer`` says), or None for a bind,
    an eviction, or a subresource's patch that removed the object. ``dry_run``: carried out
    in full and answered, nothing kept (``APIServer.dry_run``). Raises the apiserver's
    ``StatusError``. The Ray apiserver actor calls it too, so both runtimes answer alike."""
    if dry_run:
        with api.dry_run():
            return _apply_one(api, req, now)
    return _apply_one(api, req, now)


def _apply_one(api: APIServer, req: Request, now: float) -> dict[str, Any] | None:
    if isinstance(req, Create):
        return codec.clone(api.create(req.obj, now))
    if isinstance(req, Update):
        return codec.clone(api.update(req.obj, now))
    if isinstance(req, UpdateStatus):
        api.update_status(req.kind, req.namespace, req.name, req.uid, codec.clone(req.status), codec.clone(req.meta))
        return codec.clone(api.get(req.kind, req.namespace, req.name))
    if isinstance(req, Delete):
        before = codec.clone(api.get(req.kind, req.namespace, req.name))
        gone = api.delete(req.kind, req.namespace, req.name, req.uid or None, req.grace, now, req.propagation)
        return deleted_answer(before) if gone else codec.clone(api.get(req.kind, req.namespace, req.name))
    if isinstance(req, Patch):  # a subresource's typed write (ephemeralcontainers, finalize)
        api.patch(req.kind, req.namespace, req.name, req.uid, req.patch, now)
        gone = not api.exists(req.kind, req.namespace, req.name)  # a finalize that let a namespace go
        return None if gone else codec.clone(api.get(req.kind, req.namespace, req.name))
    if isinstance(req, Bind):
        api.bind(req.namespace, req.name, req.uid, req.node, now)
    elif isinstance(req, Evict):
        api.evict(req.namespace, req.name, req.uid or None, req.grace, now)
    else:
        raise BadRequest(f"request: {type(req).__name__} is not one an HTTP client makes")
    return None


def _object(out: dict[str, Any] | None) -> dict[str, Any]:
    assert out is not None  # creates, updates and deletes answer with the object
    return out


class KubeletUnreachable(Exception):
    """A node's kubelet cannot be asked (no route, or it does not answer); one line."""


class Backend(ABC):
    """Reads, one write at a time, and watches; the verbs are spelled out once, here."""

    @abstractmethod
    def now(self) -> float: ...

    @abstractmethod
    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]: ...

    @abstractmethod
    async def list(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, list[dict[str, Any]]]: ...

    async def list_encoded(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, Sequence[bytes]]:
        """``list`` as the store's encoded bytes (a reader that needs only a few fields)."""
        rv, items = await self.list(kind, node_names)
        return rv, [codec.encode(o) for o in items]

    @abstractmethod
    async def write(self, req: Request, dry_run: bool = False) -> dict[str, Any] | None:
        """One write, as ``apply_one`` answers it."""

    @abstractmethod
    async def watch(self, kind: str, rv: int, node_names: frozenset[str] | None) -> WatchChunk | Expired: ...

    @abstractmethod
    async def resource_version(self) -> int: ...

    @abstractmethod
    async def changed(self, rv: int, timeout: float) -> None:
        """Return once the resourceVersion passes ``rv``, or after ``timeout`` real seconds."""

    async def kubelet(self, call: KubeletCall) -> Any:
        """Ask the kubelet of ``call.node``, as the apiserver dials one (exec, the pod
        proxy); the answer ``cluster/api/kubeletcalls.py`` names. Raises ``KubeletUnreachable``
        when it cannot be asked (a backend with no route to the kubelets: the default)."""
        raise KubeletUnreachable(f"no kubelet of {call.node} can be reached from here")

    async def create(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        try:
            return _object(await self.write(Create(obj), dry_run))
        except Invalid as e:
            raise object_invalid(obj, e) from None

    async def update(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        try:
            return _object(await self.write(Update(obj), dry_run))
        except Invalid as e:
            raise object_invalid(obj, e) from None

    async def update_status(
        self,
        kind: str,
        ns: str,
        name: str,
        status: dict[str, Any],
        dry_run: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return _object(await self.write(UpdateStatus(kind, ns, name, "", status, meta), dry_run))

    async def delete(
        self,
        kind: str,
        ns: str,
        name: str,
        uid: str,
        grace: int | None,
        propagation: str = "",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        return _object(await self.write(Delete(kind, ns, name, uid, grace, propagation), dry_run))

    async def bind(self, ns: str, name: str, uid: str, node: str, dry_run: bool = False) -> None:
        await self.write(Bind(ns, name, uid, node), dry_run)

    async def evict(self, ns: str, name: str, uid: str, grace: int | None, dry_run: bool = False) -> None:
        await self.write(Evict(ns, name, uid, grace), dry_run)


class ObjectInvalid(Invalid):
    """An object the apiserver refused, named as upstream's NewInvalid names it, so kubectl
    prints ``The Deployment "web" is invalid: <field>: <message>``."""

    def __init__(self, message: str, causes: tuple[Cause, ...], details: dict[str, Any]) -> None:
        super().__init__(message, causes)
        self.details = details

    @classmethod
    def about(cls, r: Resource, name: str, detail: str, causes: tuple[Cause, ...]) -> ObjectInvalid:
        """``<Kind>[.<group>] "<name>" is invalid: <detail>`` about an object of ``r``."""
        qualified = f"{r.kind}.{r.group}" if r.group else r.kind
        details = {"name": name, "group": r.group, "kind": r.kind}
        return cls(f'{qualified} "{name}" is invalid: {detail}', causes, details)

    def _extra(self) -> dict[str, Any]:
        return {"details": self.details}

    def status(self) -> dict[str, Any]:
        out = super().status()
        out["details"] = {**self.details, "causes": out.get("details", {}).get("causes", [])}
        return out


def object_invalid(obj: dict[str, Any], e: Invalid) -> Invalid:
    kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name") or ""
    r = BY_KIND.get(kind or "") or CUSTOM.get(kind or "")
    if r is None or not name:
        return e
    field, _, rest = e.message.partition(": ")
    cause = Cause("FieldValueInvalid", rest or e.message, field if rest else "")
    return ObjectInvalid.about(r, name, e.message, e.causes or (cause,))


class LocalBackend(Backend):
    """Answers from ``api()``'s store at ``now()``; ``tick`` wakes the waiting watches (the
    serving loop calls it after every settled instant)."""

    def __init__(self, api: Any, now: Any, poke: Any = None, command: Any = None):
        self._api, self._now = api, now  # callables: the runtime may replace its apiserver on restart
        self._poke = poke  # tells a paced runtime a client wrote, so it reacts at once
        self._command = command  # the runtime's ``Cluster.command``: how a kubelet is asked
        self._changed = asyncio.Event()
        self._wake_loop: asyncio.AbstractEventLoop | None = None  # where a wake-up is due

    def now(self) -> float:
        t: float = self._now()
        return t

    @property
    def api(self) -> APIServer:
        api: APIServer = self._api()
        return api

    def tick(self) -> None:
        """Wake the waiting watches within ``WAKE_COALESCE`` seconds: the writes of that
        window reach each watch as one chunk (one socket write), not one wake-up per write."""
        loop = asyncio.get_running_loop()
        if self._wake_loop is loop:
            return  # (one due on a loop since closed never comes: schedule anew)
        self._wake_loop = loop
        loop.call_later(WAKE_COALESCE, self._wake)

    def _wake(self) -> None:
        self._wake_loop = None
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def get(self, kind: str, ns: str, name: str) -> dict[str, Any]:
        got: dict[str, Any] = codec.clone(self.api.get(kind, ns, name))
        return got

    async def list(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, list[dict[str, Any]]]:
        result = self.api.list(kind, node_names)
        return result.resource_version, [codec.decode(b) for b in result.items]

    async def list_encoded(self, kind: str, node_names: frozenset[str] | None) -> tuple[int, Sequence[bytes]]:
        result = self.api.list(kind, node_names)
        return result.resource_version, result.items

    async def write(self, req: Request, dry_run: bool = False) -> dict[str, Any] | None:
        out = apply_one(self.api, req, self.now(), dry_run)
        if dry_run:
            return out  # nothing changed: no watcher to wake
        self.tick()
        if self._poke is not None:
            self._poke()
        return out

    async def watch(self, kind: str, rv: int, node_names: frozenset[str] | None) -> WatchChunk | Expired:
        return self.api.watch({kind: rv}, node_names)[kind]

    async def kubelet(self, call: KubeletCall) -> Any:
        if self._command is None:
            return await super().kubelet(call)
        try:
            answer = await self._command(call)
        except ValueError as e:  # the runtime's or the host's refusal, in one line
            raise KubeletUnreachable(str(e)) from None
        if self._poke is not None:
            self._poke()  # an exec may have changed files a probe reads
        return answer

    async def resource_version(self) -> int:
        return self.api.resource_version()

    async def changed(self, rv: int, timeout: float) -> None:
        if self.api.resource_version() > rv and self._wake_loop is None:
            return  # (a wake due soon brings this change with the next ones)
        try:
            async with asyncio.timeout(timeout):
                await self._changed.wait()
        except TimeoutError:
            pass
