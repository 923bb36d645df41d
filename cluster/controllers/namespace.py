"""The namespace controller (upstream's ``pkg/controller/namespace``): emptying a deleted namespace.

Owns the middle of a namespace's deletion. The apiserver (``cluster/apiserver/apiserver.py``)
marks a deleted namespace Terminating and refuses new content in it; this controller
deletes everything inside, and once nothing is left takes the ``kubernetes`` entry out of
``spec.finalizers`` (upstream's ``namespaces/finalize``), after which the apiserver removes
the namespace (unless a garbage-collector finalizer still holds it).

Who calls it: the controller manager (``manager.py``) feeds it Namespace events and those of
every namespaced kind but Event, calls ``sync(now)`` and sends the returned ``Writes``
(``namespace_status``, ``deletes`` with Background propagation, ``namespace_finalize``);
refused ones come back through ``on_cascade_failed`` / ``on_patch_failed`` /
``on_status_failed``.

A namespace's lifecycle:

| state                                | how it is left                          | this controller does            |
|--------------------------------------|-----------------------------------------|---------------------------------|
| Active                               | DELETE: deletionTimestamp, Terminating  | nothing                         |
| Terminating, content left            | each object's DELETED                   | Delete (Background) each object once; pods terminate gracefully |
| Terminating, empty, ``kubernetes`` in spec.finalizers | FinalizeNamespace      | asks for it once                |
| Terminating, spec.finalizers empty   | the apiserver removes it (GC finalizers aside) | nothing                  |
| gone                                 |                                         | forgets it                      |

What it keeps: per namespace and kind, the name of every object in it, written on ADDED and
dropped on DELETED (a pod's status changes cost nothing here). Deletes carry no uid
precondition, as upstream's deletecollection carries none.

Deviations from upstream, on purpose: Events are not watched (the most numerous kind): the
apiserver drops a namespace's Events when it removes the namespace. No
``NamespaceDeletionContentFailure``/``NamespaceContentRemaining`` conditions are written.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..api.kinds import RESOURCES
from ..api.patches import NAMESPACE_FINALIZER
from .writes import Writes

RETRY_SECONDS = 1.0  # before a refused write that a retry can help is asked again
IGNORED_KINDS = ("Event",)

Key = tuple[str, str, str]  # (kind, namespace, name)


class NamespaceController:
    """Terminating namespaces and what is left in them (see the module docstring)."""

    def __init__(self) -> None:
        content = tuple(r.kind for r in RESOURCES if r.namespaced and r.kind not in IGNORED_KINDS)
        self.kinds = ("Namespace", *content)
        self._namespaces: dict[str, dict] = {}  # the terminating ones, as last seen
        self._content: dict[str, dict[str, set[str]]] = {}  # namespace -> kind -> names
        self._dirty: set[str] = set()
        self._asked: set[Key] = set()  # deletes sent, not yet seen DELETED
        self._ns_asked: dict[str, set[str]] = {}  # namespace -> writes sent about the namespace itself
        self._retry: set[str] = set()
        self._retry_at: float | None = None

    # -- events ----------------------------------------------------------------------------
    def on_event(self, kind: str, etype: str, obj: dict, now: float) -> None:
        m = obj.get("metadata") or {}
        if kind == "Namespace":
            self._on_namespace(etype, obj, m.get("name", ""))
            return
        ns, name = m.get("namespace", ""), m.get("name", "")
        if etype == "DELETED":
            self._forget(ns, kind, name)
            self._asked.discard((kind, ns, name))
        elif etype == "ADDED":
            # Names by kind, not (kind, name) pairs: one tuple fewer per object kept.
            self._content.setdefault(ns, {}).setdefault(kind, set()).add(name)
        else:
            return  # the keys did not change
        if ns in self._namespaces:
            self._dirty.add(ns)

    def on_lease_head(self, etype: str, head: Any, now: float) -> bool:
        """A Lease read by its head: a renewal (MODIFIED) changes no key, so nothing to do;
        an ADDED or DELETED goes through ``on_event``."""
        return etype == "MODIFIED"

    def _forget(self, ns: str, kind: str, name: str) -> None:
        kinds = self._content.get(ns)
        if kinds is None or kind not in kinds:
            return
        names = kinds[kind]
        names.discard(name)
        if not names:
            del kinds[kind]
            if not kinds:
                del self._content[ns]

    def _on_namespace(self, etype: str, ns: dict, name: str) -> None:
        self._ns_asked.pop(name, None)  # whatever was asked of it has been answered
        if etype != "DELETED" and (ns.get("metadata") or {}).get("deletionTimestamp"):
            self._namespaces[name] = ns
            self._dirty.add(name)
        else:
            self._namespaces.pop(name, None)

    # -- sync ------------------------------------------------------------------------------
    def sync(self, now: float) -> Writes:
        out = Writes()
        if self._retry_at is not None and self._retry_at <= now:
            self._retry_at = None
            self._dirty |= self._retry
            self._retry = set()
        dirty, self._dirty = sorted(self._dirty), set()
        for name in dirty:
            ns = self._namespaces.get(name)
            if ns is not None:
                self._sync_namespace(name, ns, out)
        return out

    def _sync_namespace(self, name: str, ns: dict, out: Writes) -> None:
        uid = (ns.get("metadata") or {}).get("uid", "")
        status = ns.get("status") or {}
        if status.get("phase") != "Terminating" and self._ask(name, "status"):
            out.namespace_status.append(("", name, uid, {**status, "phase": "Terminating"}))
        items = self.content(name)
        if items:
            for kind, obj_name in items:
                if (kind, name, obj_name) not in self._asked:
                    self._asked.add((kind, name, obj_name))
                    out.deletes.append((kind, name, obj_name, "", "Background"))
            return
        finalizers = (ns.get("spec") or {}).get("finalizers") or ()
        if NAMESPACE_FINALIZER in finalizers and self._ask(name, "finalize"):
            out.namespace_finalize.append((name, uid))

    def _ask(self, name: str, what: str) -> bool:
        asked = self._ns_asked.setdefault(name, set())
        if what in asked:
            return False
        asked.add(what)
        return True

    # -- refused writes --------------------------------------------------------------------
    def on_cascade_failed(self, kind: str, ns: str, name: str, uid: str, error: StatusError, now: float) -> None:
        """A delete of the namespace's content was refused (the GC's too: ignored unless ours)."""
        key = (kind, ns, name)
        if key in self._asked and error.retryable:
            self._asked.discard(key)
            self._again(ns, now)

    def on_patch_failed(self, kind: str, ns: str, name: str, uid: str, error: StatusError, now: float) -> None:
        if kind == "Namespace":
            self._refused(name, "finalize", error, now)

    def on_status_failed(self, ns: str, name: str, uid: str, error: StatusError, now: float) -> None:
        if not ns:  # a namespace's (the workload controllers' statuses are namespaced)
            self._refused(name, "status", error, now)

    def _refused(self, name: str, what: str, error: StatusError, now: float) -> None:
        asked = self._ns_asked.get(name)
        if asked is not None and what in asked and error.retryable:
            asked.discard(what)
            self._again(name, now)

    def _again(self, name: str, now: float) -> None:
        self._retry.add(name)
        if self._retry_at is None:
            self._retry_at = now + RETRY_SECONDS

    # -- timers and reads ------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        return self._retry_at

    def content(self, namespace: str) -> list[tuple[str, str]]:
        """What is left in ``namespace``: (kind, name), sorted."""
        kinds = self._content.get(namespace, {})
        return [(kind, name) for kind in sorted(kinds) for name in sorted(kinds[kind])]
