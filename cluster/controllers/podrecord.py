"""A pod as pod GC and the taint manager keep it: the few fields they read, and its bytes.

Owns ``PodRecord`` and ``PodRecords``, the builder that makes them. A decoded pod dict
costs about 7 KB, the same pod as the apiserver's msgpack bytes about 1.3 KB, and the two
controllers read only its key, node, phase, deletionTimestamp, tolerations and what
orders terminated pods. A record keeps those (node names and phases interned, equal
tolerations lists shared between pods, since nearly every pod carries the same two
DefaultTolerationSeconds tolerations) and the bytes, decoded only when a whole pod is
needed again: when pod GC or the taint manager writes about the pod (its uid, its status
as last seen, a condition, an Event naming it). Writes are rare next to events.

The bytes of a record that stays current (most pods: created, bound, Running, then quiet
for the rest of the run) are compressed once ``YOUNG`` newer records have been made:
deflate against a recent pod's bytes as its preset dictionary, since pods differ from one
another in a few names, uids and times, takes a density pod's 1,030 bytes to about 170
for some 11 microseconds, once per pod rather than once per event. A record that is
replaced while young is never compressed.

A record is read-only once built: one record is handed to every controller that keeps
records, so none may change it (its builder alone swaps its bytes for their compressed
form, which ``pod()`` reads the same). ``pod()`` returns a fresh dict each call.

Who calls it: ``manager.ControllerManager`` builds one record per pod watch event (from
the event's object and its ``raw`` bytes), hands it to each controller with an
``on_pod_record`` and keeps it as the parked copy of the pod (``ownedpods.ParkedPods``
decodes it for a controller whose parking ends); ``podgc.PodGC`` and
``tainteviction.TaintEvictionController`` build their own when fed a pod dict through
``on_event`` (tests, callers without the bytes).
"""

from __future__ import annotations

import sys
from typing import Any

from ..api.codec import decode, encode
from ..api.settledbytes import PACKED, Packer, unpack
from ..api.sharing import SharedValues
from ..clock import parse_timestamp

Key = tuple[str, str]  # (namespace, name)

# Distinct tolerations lists kept for sharing; past this the table starts again (sharing
# is an economy, not a rule: an unshared list compares equal all the same).
MAX_SHARED_TOLERATIONS = 1024
NO_TIME = float("-inf")
# Records made since a record was made, before its bytes are compressed if it is still
# the pod's current record; also how many records one preset dictionary serves.
YOUNG = 4096


class PodRecord:
    """What pod GC and the taint manager read of one version of a pod (read-only)."""

    __slots__ = ("key", "node", "phase", "evicted", "terminating", "created", "tolerations", "raw", "zdict")

    def __init__(
        self,
        key: Key,
        node: str,
        phase: str,
        evicted: bool,
        terminating: bool,
        created: float,
        tolerations: list[dict[str, Any]] | None,
        raw: bytes,
    ) -> None:
        self.key = key
        self.node = node  # spec.nodeName, "" when unbound
        self.phase = phase
        self.evicted = evicted  # Failed with reason Evicted
        self.terminating = terminating  # metadata.deletionTimestamp is set
        # creationTimestamp in emulated seconds (-inf when absent), read for terminal pods
        # only: it orders them for pod GC, and a running pod costs no float this way.
        self.created = created
        self.tolerations = tolerations  # spec.tolerations, possibly shared with other records
        self.raw = raw  # the pod's bytes, or (first byte ``PACKED``) their compressed form
        self.zdict: bytes | None = None  # the preset dictionary the bytes are compressed against

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def pod(self) -> dict[str, Any]:
        """The whole pod as last seen, decoded afresh (the caller may change it)."""
        pod: dict[str, Any] = decode(self.encoded())
        return pod

    def encoded(self) -> bytes:
        """The pod's bytes (decompressed when the builder compressed them)."""
        raw = self.raw
        if not raw or raw[0] != PACKED:
            return raw
        return unpack(raw, self.zdict or b"")


class PodRecords:
    """Builds records, sharing equal tolerations lists between them (see the module)."""

    __slots__ = ("_tolerations", "_last", "_stamp", "_young", "_young_limit", "_packer")

    def __init__(self, young: int | None = None) -> None:
        """``young``: records made after a record before it is compressed (``YOUNG``)."""
        self._tolerations = SharedValues(MAX_SHARED_TOLERATIONS)
        self._last: list[dict[str, Any]] | None = None  # the most recent shared list: the fast path
        self._stamp: tuple[str, float] = ("", NO_TIME)  # the last creationTimestamp read
        self._young: dict[Key, PodRecord] = {}  # each pod's current record, oldest first, not yet compressed
        self._young_limit = YOUNG if young is None else young
        self._packer = Packer(max(1, self._young_limit))  # a recent pod's bytes as the dictionary

    @property
    def packed(self) -> int:
        """Records compressed so far."""
        return self._packer.packed

    def make(self, pod: dict[str, Any], raw: bytes | None, key: Key | None = None) -> PodRecord:
        """The record of ``pod``; ``raw`` is its encoded bytes (encoded here when None).
        ``key``: the pod's (namespace, name) as already kept, e.g. by its previous record:
        sharing it keeps one tuple and one name string per pod instead of one per event."""
        m = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        phase = status.get("phase") or ""
        terminal = phase in ("Succeeded", "Failed")
        rec = PodRecord(
            (sys.intern(m.get("namespace", "")), m.get("name", "")) if key is None else key,
            sys.intern(spec.get("nodeName") or ""),
            sys.intern(phase),
            phase == "Failed" and status.get("reason") == "Evicted",
            bool(m.get("deletionTimestamp")),
            self._created(m.get("creationTimestamp")) if terminal else NO_TIME,
            self._shared(spec.get("tolerations")),
            encode(pod) if raw is None else raw,
        )
        self._age(rec)
        return rec

    def forget(self, key: Key) -> None:
        """The pod is gone (its DELETED's record was made): its record is not compressed."""
        self._young.pop(key, None)

    def _age(self, rec: PodRecord) -> None:
        """``rec`` is its pod's current record: the oldest current record past ``YOUNG``
        newer ones is compressed (the pod has probably settled)."""
        young = self._young
        young.pop(rec.key, None)  # its previous record, if young, will never be compressed
        young[rec.key] = rec
        if len(young) > self._young_limit:
            self._pack(young.pop(next(iter(young))))

    def _pack(self, rec: PodRecord) -> None:
        packed = self._packer.pack(rec.raw)
        if packed is not None:
            rec.raw, rec.zdict = packed

    def _created(self, stamp: Any) -> float:
        if not isinstance(stamp, str):
            return NO_TIME
        last, when = self._stamp
        if stamp != last:  # pods created together share one float
            parsed = parse_timestamp(stamp)
            when = parsed if parsed is not None else NO_TIME
            self._stamp = (stamp, when)
        return when

    def _shared(self, tolerations: Any) -> list[dict[str, Any]] | None:
        """``tolerations``, or an equal (==) list seen before. Equal lists are
        interchangeable: the taint manager compares their fields with == and reads
        tolerationSeconds as a number."""
        if not tolerations:
            # None or [] as the pod has it: the taint manager tells them apart.
            empty: list[dict[str, Any]] | None = tolerations
            return empty
        last = self._last
        if last is not None and tolerations == last:
            return last
        try:
            shared: list[dict[str, Any]] = self._tolerations.keep(
                tuple(tuple(sorted(t.items())) for t in tolerations), tolerations
            )
        except (AttributeError, TypeError):  # not a list of flat dicts: keep the pod's own
            own: list[dict[str, Any]] = tolerations
            return own
        self._last = shared
        return shared
