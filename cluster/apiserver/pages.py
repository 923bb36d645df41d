"""Paginated lists: every page of one list is current at the same resourceVersion.

Owns the lists in progress. A relist of a million pods is over a gigabyte of encoded
objects; sent as one reply it is one buffer in the apiserver, one in Ray's object store and
one in the client. Paged, each reply is ``limit`` objects. Upstream serves every page of a
list from etcd at the first page's revision, so a client sees one consistent state; kubemu
does the same by keeping, for each list in progress, the references to the objects' bytes
as the first page found them (the bytes are immutable: a later write stores new bytes, and
the old ones live on only while a list still holds them, as etcd keeps old revisions until
compaction). At most ``MAX_OPEN`` lists are kept; the oldest is dropped first, and a
continue token for a dropped or unknown list is Expired, as upstream answers a continue
token past compaction: the client starts its list again.

Called by ``APIServer.list_page`` (``apiserver.py``), for the informers' relists.
"""

from __future__ import annotations

from collections import OrderedDict

from ..api.errors import BadRequest, Expired
from ..api.requests import ListPage

MAX_OPEN = 32  # lists in progress at once (a relist per client and kind after a restart)


class OpenLists:
    def __init__(self, max_open: int = MAX_OPEN):
        self.max_open = max_open
        self._open: OrderedDict[str, tuple[int, list[bytes], int]] = OrderedDict()  # token -> (rv, items, next)
        self._seq = 0

    def first(self, rv: int, items: list[bytes], limit: int) -> ListPage:
        """The first page of a list whose objects are ``items`` at ``rv``."""
        if limit < 1:
            raise BadRequest(f"limit: {limit} must be at least 1")
        return self._page(rv, items, 0, limit)

    def next(self, token: str, limit: int) -> ListPage:
        """The page after the one that gave ``token``."""
        if limit < 1:
            raise BadRequest(f"limit: {limit} must be at least 1")
        held = self._open.pop(token, None)
        if held is None:
            raise Expired(
                f"continue: {token!r}: the list it continues is no longer held (at most {self.max_open} are); "
                "start the list again"
            )
        rv, items, start = held
        return self._page(rv, items, start, limit)

    def _page(self, rv: int, items: list[bytes], start: int, limit: int) -> ListPage:
        end = start + limit
        if end >= len(items):
            return ListPage(rv, items[start:], "")
        self._seq += 1
        token = f"{rv}-{self._seq}"
        self._open[token] = (rv, items, end)
        while len(self._open) > self.max_open:
            self._open.popitem(last=False)
        return ListPage(rv, items[start:end], token)

    def __len__(self) -> int:
        return len(self._open)
