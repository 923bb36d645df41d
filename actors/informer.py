"""List + watch against the apiserver actor for one client, in batches.

A thin async wrapper around ``cluster.runtime.reflector.Reflector``: ``poll`` lists the
kinds that need it (first use, or after Expired), in pages of ``LIST_PAGE`` objects all
current at one resourceVersion, and otherwise long-polls one ``watch`` call for all kinds
at once, returning decoded watch events. A kind whose watch expired while the others
keep watching is relisted a page a poll, its events handed over in chunks, with the other
kinds' events alongside (``_relist_step``), as upstream's per-kind informers never wait
for each other. Used by the component shell (``component.py``) and by the Ray runtime's
driver side (``cluster.py``, and ``coordinator.py``'s own watch).

The apiserver actor is restartable and Ray retries calls that were in flight when it died,
so a restart normally shows up here as an Expired watch (the restarted store no longer
holds the old resourceVersions) and a relist. Should Ray report the actor unreachable
anyway, ``poll`` waits a short, growing pause, returns no events, and relists every kind on
its next call: a reply lost in the failure may have carried events.

In a stepped run (``cluster/runtime/stepper.py``) a component's informer is ``clocked``:
each watch reply also brings the apiserver's emulated time (``server_now``), so events
written at a new instant are handled at that instant; and ``probe`` tells, without
taking anything, whether the apiserver holds events this informer has not had yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ray.exceptions import RayActorError

from actors.packing import unpack_reply
from cluster.api.errors import Expired, StatusError
from cluster.api.requests import ListResult, Watch, WatchChunk
from cluster.runtime.component import WatchEvent
from cluster.runtime.reflector import Reflector

FIRST_BACKOFF, MAX_BACKOFF = 0.05, 1.0  # real seconds after an unreachable apiserver
LIST_PAGE = 5_000  # objects per list reply: about 7 MB of pods
RELIST_CHUNK = 20_000  # events of a relist handed over per poll while the other kinds watch


class Informer:
    def __init__(self, api, watches: Sequence[Watch] | Sequence[str], clocked: bool = False):
        self.api = api
        self.clocked = clocked
        self.server_now = 0.0  # the apiserver's emulated time at its latest watch reply (clocked)
        self.reflector = Reflector(watches)
        self.node_names = self.reflector.node_names("Pod")
        self.failures = 0  # calls Ray could not deliver
        self.restarted_lists = 0  # paginated lists the apiserver let go midway
        self.last_error = ""
        self._backoff = FIRST_BACKOFF
        self._paging: dict[str, tuple[list[bytes], str]] = {}  # a relist under way: pages so far, next token
        self._relisted: tuple[str, list[WatchEvent]] | None = None  # a relist's events still to hand over

    async def poll(self, timeout: float) -> list[WatchEvent]:
        try:
            out = await self._poll(timeout)
        except RayActorError as e:
            self.failures += 1
            self.last_error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            self.reflector.relist_all()
            self._paging.clear()
            self._relisted = None
            await asyncio.sleep(self._backoff)
            self._backoff = min(MAX_BACKOFF, self._backoff * 2)
            return []
        self._backoff = FIRST_BACKOFF
        return out

    async def _list(self, kind: str) -> ListResult:
        """Every object of ``kind`` at one resourceVersion, ``LIST_PAGE`` objects a reply (one
        reply of a million pods would be a gigabyte); a list the apiserver let go midway
        (Expired) starts again."""
        while (result := await self._page(kind)) is None:
            pass
        return result

    async def _page(self, kind: str) -> ListResult | None:
        """The next page of ``kind``'s list: the whole list once its last page came, else
        None (the pages so far wait in ``_paging``; a list let go midway starts again)."""
        items, token = self._paging.pop(kind, ([], ""))
        page = await self.api.list_page.remote(kind, self.reflector.node_names(kind), LIST_PAGE, token)
        if isinstance(page, Expired):
            self.restarted_lists += 1
            return None
        if isinstance(page, StatusError):
            raise page
        if page.continue_token:
            self._paging[kind] = (items + page.items, page.continue_token)
            return None
        return ListResult(page.resource_version, items + page.items)

    async def _poll(self, timeout: float) -> list[WatchEvent]:
        r = self.reflector
        to_list = r.kinds_to_list()
        if self._relisted is not None or (to_list and r.watch_since() and all(map(r.has_listed, to_list))):
            return await self._relist_step(to_list)
        if to_list:
            self._paging.clear()  # a relist under way starts again within this list of every kind
            # Every list is fetched before any is applied: a failure midway leaves the
            # reflector as it was, so the retry reports each change exactly as it should.
            replies = [await self._list(kind) for kind in to_list]
            out = []
            for kind, result in zip(to_list, replies):
                out += r.on_list(kind, result)
            return out
        return await self._watch(r.watch_since(), timeout)

    async def _watch(self, since: dict[str, int], timeout: float) -> list[WatchEvent]:
        r = self.reflector
        if self.clocked:
            at, blob = await self.api.watch_clocked.remote(since, self.node_names, timeout)
            self.server_now = max(self.server_now, at)
        else:
            blob = await self.api.watch_packed.remote(since, self.node_names, timeout)
        reply = unpack_reply(blob)
        out = []
        for kind, part in reply.items():
            out += r.on_watch(kind, part)
        return out

    async def _relist_step(self, to_list: list[str]) -> list[WatchEvent]:
        """One step of relisting a kind whose watch expired while the others keep watching,
        as upstream's informers are one per kind: one page a poll, then the events the list
        makes ``RELIST_CHUNK`` a poll, each step with what the other kinds' watches hold.
        Else a relist of a million pods would hold back, for as long as it takes, the Lease
        renewals the node lifecycle controller must see every 40 s."""
        r, out = self.reflector, []
        if self._relisted is None:
            kind = to_list[0]
            result = await self._page(kind)
            if result is not None:
                self._relisted = (kind, r.on_list(kind, result))
        if self._relisted is not None:
            kind, events = self._relisted
            out, rest = events[:RELIST_CHUNK], events[RELIST_CHUNK:]
            self._relisted = (kind, rest) if rest else None
        # The relisted kind watches again only once its list's events are all handed over.
        busy = {self._relisted[0]} if self._relisted is not None else set()
        since = {k: rv for k, rv in r.watch_since().items() if k not in busy}
        return out + (await self._watch(since, 0.0) if since else [])

    def settled(self) -> bool:
        """No list, relist or paginated list under way."""
        return not (self.reflector.kinds_to_list() or self._paging or self._relisted is not None)

    async def probe(self) -> int | None:
        """Whether the apiserver holds events for this informer's watches that it has not
        had (its own watch may be parked there, or its reply on the way): None if so, or
        while a list is under way; else the resourceVersion it has seen every write of its
        watches up to. Takes nothing: the events stay for ``poll``."""
        since = self.reflector.watch_since()
        if not self.settled() or not since:
            return None
        try:
            reply = unpack_reply(await self.api.watch_packed.remote(since, self.node_names, 0.0))
        except RayActorError:
            return None
        if any(not isinstance(part, WatchChunk) or part.events for part in reply.values()):
            return None
        return min(part.resume for part in reply.values() if isinstance(part, WatchChunk))
