"""The client side of list + watch, as upstream's Reflector does it.

Owns, for one client, the resourceVersion to resume each kind's watch from and the keys
the client has seen, so that a relist after ``Expired`` (or after an apiserver restart)
turns into ordinary events: ADDED/MODIFIED for what is listed, DELETED for what vanished
while the client was not watching. Every informer in kubemu (scheduler, node hosts, the
scenario driver) uses one through ``actors/informer.py``.
"""

from __future__ import annotations

from ..api.codec import decode
from ..api.objects import name_of, namespace_of

Event = tuple[str, str, dict]  # (kind, type, object)


class Reflector:
    def __init__(self, kinds: list[str]):
        self.rv: dict[str, int | None] = {k: None for k in kinds}
        self._known: dict[str, set[tuple[str, str]]] = {k: set() for k in kinds}
        self.relists = 0
        self._listed: set[str] = set()

    def kinds_to_list(self) -> list[str]:
        return [k for k, rv in self.rv.items() if rv is None]

    def relist_all(self) -> None:
        """Relist every kind on the next poll: the connection failed, so a reply that carried
        events may have been lost. What was known stays known, so the relist reports what
        vanished meanwhile as DELETED."""
        for kind in self.rv:
            self.rv[kind] = None

    def watch_since(self) -> dict[str, int]:
        return {k: rv for k, rv in self.rv.items() if rv is not None}

    def on_list(self, kind: str, rv: int, items: list[bytes]) -> list[Event]:
        objs = [decode(b) for b in items]
        known = self._known[kind]
        seen = {(namespace_of(o), name_of(o)) for o in objs}
        out: list[Event] = [(kind, "MODIFIED" if (namespace_of(o), name_of(o)) in known else "ADDED", o) for o in objs]
        for ns, name in known - seen:
            # Gone while we were not watching: the relist is the only news of it.
            out.append((kind, "DELETED", {"kind": kind, "metadata": {"namespace": ns, "name": name}}))
        self._known[kind] = seen
        if kind in self._listed:
            self.relists += 1
        self._listed.add(kind)
        self.rv[kind] = rv
        return out

    def on_watch(self, kind: str, reply) -> list[Event]:
        """Apply one kind's part of a watch reply: ``(events, rv)`` or an ``"expired: ..."`` string."""
        if isinstance(reply, str):
            self.rv[kind] = None  # relist on the next poll
            return []
        events, rv = reply
        known = self._known[kind]
        out: list[Event] = []
        for etype, data in events:
            obj = decode(data)
            key = (namespace_of(obj), name_of(obj))
            if etype == "DELETED":
                known.discard(key)
            else:
                known.add(key)
            out.append((kind, etype, obj))
        self.rv[kind] = rv
        return out
