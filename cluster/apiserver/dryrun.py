"""Server-side dry run: a request carried out in full against a store that keeps nothing.

Owns ``DryRunStore``, the store the apiserver swaps in for one ``dryRun=All`` request
(``APIServer.dry_run``). Reads go to the real store, except for objects this request has
already written, which read back as written, so a dry run sees its own steps (a delete that
marks a pod terminating answers with the terminating pod). Writes stay here and are dropped
with it: no resourceVersion is used, nothing reaches the watch window or the durable log,
and no watcher hears of it. As upstream, a dry-run create answers without a
resourceVersion and a dry-run update with the stored one.
"""

from __future__ import annotations

from typing import Any

from ..api import codec
from .storage import Storage

_GONE = b""  # the written bytes of an object this request removed


class DryRunStore:
    def __init__(self, base: Storage):
        self.base = base
        self._written: dict[tuple[str, str, str], bytes] = {}

    def __getattr__(self, name: str) -> Any:
        # The reads that see the kind as a whole (list, keys, count, events, revisions) and
        # the clock come from the real store: nothing a dry run writes can change them.
        return getattr(self.base, name)

    # -- reads of one object see this request's writes ---------------------------------------
    def raw(self, kind: str, ns: str, name: str) -> bytes | None:
        data = self._written.get((kind, ns, name))
        if data is None:
            return self.base.raw(kind, ns, name)
        return data or None

    def get(self, kind: str, ns: str, name: str) -> dict | None:
        data = self.raw(kind, ns, name)
        return codec.decode(data) if data else None

    def peek(self, kind: str, ns: str, name: str) -> dict | None:
        if (kind, ns, name) in self._written:
            return self.get(kind, ns, name)
        return self.base.peek(kind, ns, name)

    def has(self, kind: str, ns: str, name: str) -> bool:
        return self.raw(kind, ns, name) is not None

    # -- writes are kept here and dropped --------------------------------------------------------
    def at(self, now: float) -> None:
        return None  # the real store's clock moves with real writes only

    def put(self, kind: str, obj: dict, event_type: str) -> int:
        m = obj["metadata"]
        if event_type == "ADDED":
            m.pop("resourceVersion", None)  # nothing reached storage
        else:
            stored = self.base.get(kind, m.get("namespace", ""), m["name"])
            if stored is not None:
                m["resourceVersion"] = stored["metadata"].get("resourceVersion")
        self._written[(kind, m.get("namespace", ""), m["name"])] = codec.encode(obj)
        return self.base.rv

    def remove(self, kind: str, ns: str, name: str, last: dict | None = None) -> int:
        self._written[(kind, ns, name)] = _GONE
        return self.base.rv

    def remove_as_stored(self, kind: str, ns: str, name: str, stored_rv: str) -> bool:
        self.remove(kind, ns, name)
        return True

    def renew(self, ns: str, name: str, applied: dict) -> bool:
        return False  # the caller takes the general way, through ``put``
