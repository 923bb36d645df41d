"""List + watch against the apiserver actor for one client, in batches.

A thin async wrapper around ``cluster.runtime.reflector.Reflector``: ``poll`` lists the
kinds that need it (first use, or after Expired), in pages of ``LIST_PAGE`` objects all
current at one resourceVersion, and otherwise long-polls one ``watch`` call for all kinds
at once, returning decoded watch events. Used by the component shell
(``component.py``) and by the Ray runtime's driver side (``cluster.py``).

The apiserver actor is restartable and Ray retries calls that were in flight when it died,
so a restart normally shows up here as an Expired watch (the restarted store no longer
holds the old resourceVersions) and a relist. Should Ray report the actor unreachable
anyway, ``poll`` waits a short, growing pause, returns no events, and relists every kind on
its next call: a reply lost in the failure may have carried events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ray.exceptions import RayActorError

from actors.packing import unpack_reply
from cluster.api.errors import Expired, StatusError
from cluster.api.requests import ListResult, Watch
from cluster.runtime.component import WatchEvent
from cluster.runtime.reflector import Reflector

FIRST_BACKOFF, MAX_BACKOFF = 0.05, 1.0  # real seconds after an unreachable apiserver
LIST_PAGE = 5_000  # objects per list reply: about 7 MB of pods


class Informer:
    def __init__(self, api, watches: Sequence[Watch] | Sequence[str]):
        self.api = api
        self.reflector = Reflector(watches)
        self.node_names = self.reflector.node_names("Pod")
        self.failures = 0  # calls Ray could not deliver
        self.restarted_lists = 0  # paginated lists the apiserver let go midway
        self.last_error = ""
        self._backoff = FIRST_BACKOFF

    async def poll(self, timeout: float) -> list[WatchEvent]:
        try:
            out = await self._poll(timeout)
        except RayActorError as e:
            self.failures += 1
            self.last_error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            self.reflector.relist_all()
            await asyncio.sleep(self._backoff)
            self._backoff = min(MAX_BACKOFF, self._backoff * 2)
            return []
        self._backoff = FIRST_BACKOFF
        return out

    async def _list(self, kind: str) -> ListResult:
        """Every object of ``kind`` at one resourceVersion, ``LIST_PAGE`` objects a reply (one
        reply of a million pods would be a gigabyte); a list the apiserver let go midway
        (Expired) starts again."""
        names = self.reflector.node_names(kind)
        while True:
            items: list[bytes] = []
            token = ""
            while True:
                page = await self.api.list_page.remote(kind, names, LIST_PAGE, token)
                if isinstance(page, Expired):
                    self.restarted_lists += 1
                    break
                if isinstance(page, StatusError):
                    raise page
                items += page.items
                token = page.continue_token
                if not token:
                    return ListResult(page.resource_version, items)

    async def _poll(self, timeout: float) -> list[WatchEvent]:
        r = self.reflector
        to_list = r.kinds_to_list()
        if to_list:
            # Every list is fetched before any is applied: a failure midway leaves the
            # reflector as it was, so the retry reports each change exactly as it should.
            replies = [await self._list(kind) for kind in to_list]
            out = []
            for kind, result in zip(to_list, replies):
                out += r.on_list(kind, result)
            return out
        reply = unpack_reply(await self.api.watch_packed.remote(r.watch_since(), self.node_names, timeout))
        out = []
        for kind, part in reply.items():
            out += r.on_watch(kind, part)
        return out
