"""The namespace controller (upstream's ``pkg/controller/namespace``): emptying a deleted namespace.

Owns the middle of a namespace's deletion. The apiserver (``cluster/apiserver/apiserver.py``)
marks a deleted namespace Terminating and refuses new content in it; this controller
deletes everything inside, and once nothing is left takes the ``kubernetes`` entry out of
``spec.finalizers`` (upstream's ``namespaces/finalize``), after which the apiserver removes
the namespace (unless a garbage-collector finalizer still holds it).

Who calls it: the controller manager runs ``NamespaceReconciler`` in a ``ReconcilerStep``
(``reconciler.py``): a Namespace's events name its key, and so do the ADDED and DELETED
of every object in it (every namespaced kind but Event); the reconcile sends the
``Terminating`` phase, a Background delete of each object left, and the ``FinalizeNamespace``
patch. A refused write comes back as the namespace's next reconcile (after the work
queue's back-off), which asks again when a retry can help.

A namespace's lifecycle:

| state                                | how it is left                          | this controller does            |
|--------------------------------------|-----------------------------------------|---------------------------------|
| Active                               | DELETE: deletionTimestamp, Terminating  | nothing                         |
| Terminating, content left            | each object's DELETED                   | Delete (Background) each object once; pods terminate gracefully |
| Terminating, empty, ``kubernetes`` in spec.finalizers | FinalizeNamespace      | asks for it once                |
| Terminating, spec.finalizers empty   | the apiserver removes it (GC finalizers aside) | nothing                  |
| gone                                 |                                         | forgets it                      |

What it keeps: the cache keeps of each object in a namespace only its name
(``Watches.names_only``: an update costs nothing), and of a Namespace only a terminating
one. Deletes carry no uid precondition, as upstream's deletecollection carries none.

The namespace's status conditions (``namespaceconditions.py``) are written as upstream's
deleter writes them after its deletes: on a pass that sends no new delete (every object
left has had its delete), what is left is what remains (``NamespaceContentRemaining``),
the deletes refused for good are the content failures; an unchanged set writes nothing.

Deviations from upstream, on purpose: Events are not watched (the most numerous kind): the
apiserver drops a namespace's Events when it removes the namespace. What remains is not
read for finalizers (``namespaceconditions.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..api.errors import NotFound, StatusError
from ..api.kinds import RESOURCES
from ..api.objects import namespace_of
from ..api.patches import NAMESPACE_FINALIZER, FinalizeNamespace
from ..api.requests import Delete, Patch, Request, UpdateStatus
from .namespaceconditions import conditions
from .reconciler import Indexer, Key, ObjectCache, Outcome, Watches

IGNORED_KINDS = ("Event",)
CONTENT_KINDS = tuple(r.kind for r in RESOURCES if r.namespaced and r.kind not in IGNORED_KINDS)

Obj = dict[str, Any]
Asked = tuple[str, str]  # (kind, name) of a delete sent, not yet seen DELETED


def _terminating(ns: Obj) -> Obj | None:
    """What the cache keeps of a Namespace: the namespace while it is being deleted."""
    return ns if (ns.get("metadata") or {}).get("deletionTimestamp") else None


def _its_namespace(event_type: str, obj: Obj) -> tuple[Key, ...]:
    return (("", namespace_of(obj)),)


class NamespaceReconciler:
    """Terminating namespaces and what is left in them (see the module docstring)."""

    name: ClassVar[str] = "namespace"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("Namespace", project=_terminating),
        *(Watches(kind, keys=_its_namespace, names_only=True) for kind in CONTENT_KINDS),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = ()

    def __init__(self, cache: ObjectCache) -> None:
        self.cache = cache
        self._asked: dict[str, set[Asked]] = {}  # namespace -> deletes sent, not yet seen DELETED
        # namespace -> (the resourceVersion it was asked at, writes sent about the namespace
        # itself): a new version of the namespace answers them.
        self._ns_asked: dict[str, tuple[str, set[str]]] = {}
        # namespace -> the deletes refused for good, with their errors
        self._failed: dict[str, dict[Asked, str]] = {}

    def reconcile(self, key: Key, now: float) -> Outcome:
        name = key[1]
        ns: Obj | None = self.cache.projected("Namespace", "", name)
        if ns is None:
            self._asked.pop(name, None)
            self._ns_asked.pop(name, None)
            self._failed.pop(name, None)
            return Outcome()
        self._take_refusals(key)
        out = Outcome()
        meta = ns.get("metadata") or {}
        uid, status = meta.get("uid", ""), ns.get("status") or {}
        items = self.content(name)
        asked = self._asked.setdefault(name, set())
        asked &= set(items)  # an object seen DELETED is answered
        fresh = [item for item in items if item not in asked]
        for kind, obj_name in fresh:
            asked.add((kind, obj_name))
            out.writes.append(Delete(kind, name, obj_name, "", None, "Background"))
        new = {**status, "phase": "Terminating"}
        finalizers = (ns.get("spec") or {}).get("finalizers") or ()
        # Every delete answered: what is left remains (upstream counts after its deletes,
        # and not at all once the namespace is finalized).
        if not fresh and NAMESPACE_FINALIZER in finalizers:
            failed = self._failed.get(name, {})
            errors = [failed[item] for item in items if item in failed]  # of what is still there
            conds = conditions((kind for kind, _ in items), errors, status.get("conditions"), now)
            if conds is not None:
                new["conditions"] = conds
        if new != status and self._ask(ns, "status"):
            # Before the deletes in the batch: the phase first, as upstream marks it first.
            out.writes.insert(0, UpdateStatus("Namespace", "", name, uid, new))
        if items:
            return out
        if NAMESPACE_FINALIZER in finalizers and self._ask(ns, "finalize"):
            out.writes.append(Patch("Namespace", "", name, uid, FinalizeNamespace()))
        return out

    def _ask(self, ns: Obj, what: str) -> bool:
        meta = ns.get("metadata") or {}
        name, rv = meta.get("name", ""), str(meta.get("resourceVersion") or "")
        at, asked = self._ns_asked.get(name, ("", set()))
        if at != rv or not asked:
            asked = set()
            self._ns_asked[name] = (rv, asked)
        if what in asked:
            return False
        asked.add(what)
        return True

    def _take_refusals(self, key: Key) -> None:
        """Refused writes a retry can help are asked again by this reconcile; a delete
        refused for good is a content failure (``namespaceconditions.py``)."""
        for req, error in self.cache.refused(key):
            if error.retryable:
                self._forget_asked(key[1], req, error)
            elif isinstance(req, Delete) and not isinstance(error, NotFound):  # NotFound: done
                self._failed.setdefault(key[1], {})[(req.kind, req.name)] = error.message

    def _forget_asked(self, name: str, req: Request, error: StatusError) -> None:
        if isinstance(req, Delete):
            self._asked.get(name, set()).discard((req.kind, req.name))
            return
        what = "status" if isinstance(req, UpdateStatus) else "finalize"
        self._ns_asked.get(name, ("", set()))[1].discard(what)

    def content(self, namespace: str) -> list[tuple[str, str]]:
        """What is left in ``namespace``: (kind, name), kinds in order, then names."""
        return [(kind, n) for kind in sorted(CONTENT_KINDS) for n in self.cache.names(kind, namespace)]
