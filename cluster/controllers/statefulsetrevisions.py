"""A StatefulSet's ControllerRevisions: naming, hashing, choosing, cleaning up.

Owns what upstream's ``controller/history`` package and the revision half of
``statefulset/stateful_set_control.go`` decide: every
distinct pod template of a StatefulSet is stored as a ControllerRevision ``<set>-<hash>``
whose ``data`` is the patch that reapplies the template; ``plan_revisions`` picks the
revision pods below the update boundary run (``currentRevision``) and the one the template
describes (``updateRevision``), creating it, or renumbering an equal older one on a
rollback; ``history_to_delete`` names the revisions past ``revisionHistoryLimit``.
``RevisionIndex`` caches ControllerRevisions by owner; ``RevisionBook`` is the
controller's side of them: the cache, adoption of orphans, and the writes in flight.

Who calls it: ``statefulset.StatefulSetController`` (the only writer of ControllerRevisions
besides users); tests. Everything here is a pure function of plain dicts, except the index
and the book.

A ControllerRevision, as the StatefulSet controller sees it:

| state    | how it is left                                  | the controller                     |
|----------|-------------------------------------------------|------------------------------------|
| orphan   | adopted (an ownerReference added by an update)  | adopts it when the selector matches|
| update   | the template changes                            | creates pods at it (above the      |
|          |                                                 | partition), rolls pods onto it     |
| current  | every pod is updated and ready (RollingUpdate)  | creates pods at it below partition |
| history  | a rollback renumbers it; or it is cleaned up    | deletes the oldest past the limit  |
|          |                                                 | that no pod uses                   |

The hash is upstream's recipe: 32-bit FNV-1 over the JSON of ``data`` (keys sorted,
compact, Go's escaping) followed by the decimal collision count, rendered in the safe
alphabet. It equals upstream's when kubemu's stored template serialises as upstream's
fully defaulted one does, which it generally does not (kubemu defaults fewer fields);
it is stable for equal templates and changes with the template, which is what matters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..api.codec import clone
from ..api.objects import name_of, namespace_of
from ..clock import parse_timestamp
from .daemonsetupdate import HASH_LABEL as DAEMONSET_HASH_LABEL
from .ownedpods import EXPECTATIONS_TIMEOUT, controller_ref, owner_reference
from .reconciler import Obj

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream rand.SafeEncodeString's alphabet
HASH_LABEL = "controller.kubernetes.io/hash"  # upstream history.ControllerRevisionHashLabel
_MAX_PREFIX = 223  # a revision name stays within 253 characters
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}

RevKey = tuple[str, str]  # (namespace, name)


# ---- naming and hashing ------------------------------------------------------------------


def go_json(obj: object) -> bytes:
    """``obj`` as Go's ``json.Marshal`` writes a map: sorted keys, no spaces, HTML-escaped."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES.items():
        text = text.replace(char, escaped)
    return text.encode()


def fnv1_32(data: bytes) -> int:
    """32-bit FNV-1 (multiply, then xor), as Go's ``fnv.New32``."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h * 0x01000193) & 0xFFFFFFFF) ^ byte
    return h


def safe_encode(text: str) -> str:
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in text)


def revision_hash(data: Obj, collisions: int) -> str:
    return safe_encode(str(fnv1_32(go_json(data) + str(collisions).encode())))


def revision_name(set_name: str, hash_: str) -> str:
    return f"{set_name[:_MAX_PREFIX]}-{hash_}"


def revision_data(template: Obj) -> Obj:
    """The patch a revision stores (upstream getPatch): the template, replaced whole, shaped
    as Go writes it (``go_shaped``), so a client comparing the revision's bytes with its
    own rendering of the owner (upstream's DaemonSet ``Match``) finds them equal."""
    return go_shaped({"spec": {"template": {**template, "$patch": "replace"}}})


_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def go_shaped(data: Obj) -> Obj:
    """``data`` (a revision patch) with the zero fields Go's ``json.Marshal`` writes for a
    pod template (``metadata.creationTimestamp: null``, each container's ``resources: {}``)
    and every map's keys sorted, as Go writes a map: the served bytes then match upstream's."""
    template = dict(data["spec"]["template"])
    template["metadata"] = {"creationTimestamp": None, **(template.get("metadata") or {})}
    spec = dict(template.get("spec") or {})
    for field_name in _CONTAINER_LISTS:
        if isinstance(spec.get(field_name), list):
            spec[field_name] = [{"resources": {}, **c} if isinstance(c, dict) else c for c in spec[field_name]]
    template["spec"] = spec
    shaped: Obj = _sorted({**data, "spec": {**data["spec"], "template": template}})
    return shaped


def _sorted(value: object) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def template_of(revision: Obj | None) -> Obj | None:
    """The pod template a revision reapplies, or None when it holds none."""
    template = (((revision or {}).get("data") or {}).get("spec") or {}).get("template")
    if not isinstance(template, dict):
        return None
    return {k: v for k, v in template.items() if k != "$patch"}


def number_of(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def sort_key(revision: Obj) -> tuple[int, float, str]:
    """Upstream SortControllerRevisions: by revision number, then age, then name."""
    stamp = (revision.get("metadata") or {}).get("creationTimestamp")
    return number_of(revision), (parse_timestamp(stamp) or 0.0) if stamp else 0.0, name_of(revision)


def new_revision(sts: Obj, number: int, collisions: int, kind: str = "StatefulSet") -> Obj:
    """The ControllerRevision for ``sts``'s current template (upstream newRevision); ``kind``
    is the owner's (a DaemonSet's revisions are made the same way)."""
    spec = sts.get("spec") or {}
    template = clone(spec.get("template") or {})
    data = revision_data(template)
    hash_ = revision_hash(data, collisions)
    # A DaemonSet labels its revisions as its pods, with controller-revision-hash (upstream's
    # DefaultDaemonSetUniqueLabelKey); a StatefulSet with the history package's label.
    label = DAEMONSET_HASH_LABEL if kind == "DaemonSet" else HASH_LABEL
    labels = {**((template.get("metadata") or {}).get("labels") or {}), label: hash_}
    meta: Obj = {
        "name": revision_name(name_of(sts), hash_),
        "namespace": namespace_of(sts),
        "labels": labels,
        "ownerReferences": [owner_reference(sts, kind)],
    }
    annotations = (sts.get("metadata") or {}).get("annotations")
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta, "data": data, "revision": number}


# ---- choosing current and update -----------------------------------------------------------


@dataclass
class RevisionPlan:
    """What ``plan_revisions`` decided; ``create`` and ``renumber`` are writes to send."""

    current: Obj
    update: Obj
    collisions: int
    create: Obj | None = None  # a new revision for the template
    renumber: Obj | None = None  # an equal older revision, given the next number (rollback)
    revisions: list[Obj] = field(default_factory=list)  # the set's revisions, oldest first


def plan_revisions(
    sts: Obj, owned: list[Obj], lookup: Callable[[str], Obj | None], kind: str = "StatefulSet"
) -> RevisionPlan:
    """Upstream getStatefulSetRevisions. ``owned``: the set's revisions (orphans it adopts
    included); ``lookup(name)``: any ControllerRevision of the namespace by name."""
    revisions = sorted(owned, key=sort_key)
    status = sts.get("status") or {}
    collisions = int(status.get("collisionCount") or 0)
    following = number_of(revisions[-1]) + 1 if revisions else 1
    data = revision_data((sts.get("spec") or {}).get("template") or {})
    equal = [r for r in revisions if r.get("data") == data]
    plan = RevisionPlan(current={}, update={}, collisions=collisions, revisions=revisions)
    if equal and equal[-1] is revisions[-1]:
        plan.update = revisions[-1]  # the template has not changed
    elif equal:
        plan.update = plan.renumber = {**equal[-1], "revision": following}
    else:
        plan.update, plan.collisions, fresh = _fresh(sts, data, following, collisions, lookup, kind)
        plan.create = plan.update if fresh else None
    wanted = status.get("currentRevision")
    plan.current = next((r for r in revisions if name_of(r) == wanted), plan.update)
    if name_of(plan.current) == name_of(plan.update):
        plan.current = plan.update
    return plan


def _fresh(
    sts: Obj, data: Obj, number: int, collisions: int, lookup: Callable[[str], Obj | None], kind: str
) -> tuple[Obj, int, bool]:
    """A new revision (True), or an existing one of the same name and data (False; upstream
    returns it on AlreadyExists); a name taken by other data is a collision: count it and
    hash again."""
    while True:
        name = revision_name(name_of(sts), revision_hash(data, collisions))
        taken = lookup(name)
        if taken is None:
            return new_revision(sts, number, collisions, kind), collisions, True
        if taken.get("data") == data:
            return taken, collisions, False
        collisions += 1


def pod_revision_for(sts: Obj, ordinal: int, plan: RevisionPlan) -> Obj:
    """The revision a new pod ``ordinal`` is created at (upstream newVersionedStatefulSetPod):
    the current one below the partition, or, without rollingUpdate settings, below the
    pods already current; the update revision otherwise."""
    spec = sts.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    rolling = (strategy.get("type") or "RollingUpdate") == "RollingUpdate"
    settings = strategy.get("rollingUpdate")
    start = int((spec.get("ordinals") or {}).get("start") or 0)
    current_replicas = int((sts.get("status") or {}).get("currentReplicas") or 0)
    if rolling and settings is None and ordinal < start + current_replicas:
        return plan.current
    if settings is not None and ordinal < start + int(settings.get("partition") or 0):
        return plan.current
    return plan.update


# ---- history -----------------------------------------------------------------------------


def history_to_delete(revisions: list[Obj], live: set[str], limit: int) -> list[Obj]:
    """The oldest revisions no pod, nor the current or update revision, uses, beyond
    ``limit`` of them (upstream truncateHistory); ``revisions`` oldest first."""
    history = [r for r in revisions if name_of(r) not in live]
    return history[: max(len(history) - limit, 0)]


# ---- the cache -----------------------------------------------------------------------------


class RevisionIndex:
    """ControllerRevisions by key, by controller uid, and orphans by namespace."""

    def __init__(self) -> None:
        self._by_key: dict[RevKey, Obj] = {}
        self._owned: dict[str, dict[RevKey, Obj]] = {}
        self._orphans: dict[str, dict[RevKey, Obj]] = {}

    @staticmethod
    def owner_of(rev: Obj) -> str:
        ref = controller_ref(rev)
        return ref.get("uid", "") if ref is not None else ""

    def get(self, key: RevKey) -> Obj | None:
        return self._by_key.get(key)

    def owned(self, uid: str) -> list[Obj]:
        return list(self._owned.get(uid, {}).values())

    def orphans(self, ns: str) -> list[Obj]:
        return [self._orphans[ns][k] for k in sorted(self._orphans.get(ns, {}))]

    def put(self, rev: Obj) -> None:
        key = (namespace_of(rev), name_of(rev))
        self.remove(key)
        self._by_key[key] = rev
        owner = self.owner_of(rev)
        table, slot = (self._owned, owner) if owner else (self._orphans, key[0])
        table.setdefault(slot, {})[key] = rev

    def remove(self, key: RevKey) -> Obj | None:
        old = self._by_key.pop(key, None)
        if old is not None:
            owner = self.owner_of(old)
            table, slot = (self._owned, owner) if owner else (self._orphans, key[0])
            bucket = table[slot]
            del bucket[key]
            if not bucket:
                del table[slot]
        return old


# ---- the controller's book of revisions ------------------------------------------------------


class RevisionBook:
    """The ControllerRevisions a controller knows, and its writes of them: creates,
    adoptions and renumberings are assumed done (in the cache at once) until the watch or
    a refusal says otherwise; deletes are remembered until the watch shows them."""

    def __init__(self, kind: str = "StatefulSet") -> None:
        self.kind = kind  # the owners' kind
        self.index = RevisionIndex()
        self._sent: dict[RevKey, tuple[Obj, Obj | None]] = {}  # key -> (sent, cached before)
        self._deleting: dict[RevKey, float] = {}  # key -> when its delete was sent

    def observe(self, etype: str, obj: Obj) -> list[Obj]:
        """A watch event; returns the revisions (before and after) whose owners care."""
        key = (namespace_of(obj), name_of(obj))
        self._sent.pop(key, None)  # the apiserver's word replaces what we assumed
        old = self.index.remove(key)
        if etype == "DELETED":
            self._deleting.pop(key, None)
            return [old] if old is not None else []
        self.index.put(obj)
        return [r for r in (old, obj) if r is not None]

    def refused(self, obj: Obj) -> Obj | None:
        """A write of ours was refused: put back what the cache held (unless the watch has
        replaced it meanwhile); returns what was sent, or None when it was not ours."""
        key = (namespace_of(obj), name_of(obj))
        got = self._sent.pop(key, None)
        if got is None:
            return None
        sent, before = got
        if self.index.get(key) is sent:
            self.index.remove(key)
            if before is not None:
                self.index.put(before)
        return sent

    def delete_failed(self, key: RevKey) -> None:
        self._deleting.pop(key, None)  # tried again at the owner's next sync

    def plan(
        self, sts: Obj, matches: Callable[[Obj], bool], act: bool, creates: list[Obj], updates: list[Obj]
    ) -> RevisionPlan:
        """Adopt the orphans ``matches`` accepts, choose current and update revisions, and
        create or renumber the update revision; without ``act`` nothing is written."""
        ns, uid = namespace_of(sts), (sts.get("metadata") or {}).get("uid", "")
        owned = self.index.owned(uid)
        if act:
            for orphan in self.index.orphans(ns):
                if matches(orphan):
                    refs = [*(orphan["metadata"].get("ownerReferences") or ()), owner_reference(sts, self.kind)]
                    adopted = {**orphan, "metadata": {**orphan["metadata"], "ownerReferences": refs}}
                    self._send(adopted, orphan, updates)
                    owned.append(adopted)
        plan = plan_revisions(sts, owned, lambda name: self.index.get((ns, name)), self.kind)
        if act and plan.create is not None:
            self._send(plan.create, None, creates)
        if act and plan.renumber is not None:
            self._send(plan.renumber, self.index.get((ns, name_of(plan.renumber))), updates)
        return plan

    def _send(self, rev: Obj, before: Obj | None, into: list[Obj]) -> None:
        into.append(rev)
        self._sent[(namespace_of(rev), name_of(rev))] = (rev, before)
        self.index.put(rev)

    def truncate(
        self,
        sts: Obj,
        plan: RevisionPlan,
        live: set[str],
        now: float,
        deletes: list[tuple[str, str, str, str, str]],
        pick: Callable[[list[Obj], set[str], int], list[Obj]] = history_to_delete,
    ) -> None:
        """Delete (Background) the history past ``revisionHistoryLimit`` (default 10); a
        delete neither seen nor refused is sent again after ``EXPECTATIONS_TIMEOUT``."""
        limit = (sts.get("spec") or {}).get("revisionHistoryLimit")
        for rev in pick(plan.revisions, live, 10 if limit is None else int(limit)):
            key, uid = (namespace_of(rev), name_of(rev)), (rev.get("metadata") or {}).get("uid", "")
            sent = self._deleting.get(key)
            if not uid or (sent is not None and sent + EXPECTATIONS_TIMEOUT > now):
                continue  # not created yet, or its delete is on its way
            self._deleting[key] = now
            deletes.append(("ControllerRevision", key[0], key[1], uid, "Background"))

    def of(self, uid: str) -> list[Obj]:
        return sorted(self.index.owned(uid), key=sort_key)
