"""List + watch against the apiserver actor for one client, in batches.

A thin async wrapper around ``cluster.store.reflector.Reflector``: ``poll`` lists the
kinds that need it (first use, or after Expired) and otherwise long-polls one ``watch``
call for all kinds at once, returning decoded ``(kind, type, object)`` events.
"""
from __future__ import annotations

from cluster.store.reflector import Reflector


class Informer:
    def __init__(self, api, kinds: list[str], node_names: list[str] | None = None):
        self.api = api
        self.reflector = Reflector(kinds)
        self.node_names = node_names

    async def poll(self, timeout: float) -> list:
        to_list = self.reflector.kinds_to_list()
        if to_list:
            out = []
            for kind in to_list:
                rv, items = await self.api.list.remote(kind, self.node_names if kind == "Pod" else None)
                out += self.reflector.on_list(kind, rv, items)
            return out
        reply = await self.api.watch.remote(self.reflector.watch_since(), self.node_names, timeout)
        out = []
        for kind, part in reply.items():
            out += self.reflector.on_watch(kind, part)
        return out
