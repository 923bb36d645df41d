"""The apiserver's durable log: an append-only record of every store mutation, periodic
snapshots, and recovery from both after a restart.

The apiserver owns one ``DurableLog`` through ``cluster/apiserver/durable.py``: its ``Store``
calls ``record_put``/``record_remove`` for every write, ``commit()`` runs before the actor
acknowledges the writes to anyone, and ``maybe_snapshot(store)`` between batches. On start
the Store is built with ``Store.from_recovered(log.recovered)``. Everything here is plain
file IO on a directory the caller passes in; nothing reads the clock.

On-disk layout of the directory (numbers are 20-digit, zero-padded resourceVersions)::

    file                          contents
    ----------------------------  ---------------------------------------------------------
    snapshot-<rv>.snap            the whole state at <rv>, streamed in chunks
    snapshot-<rv>.snap.tmp        a snapshot being written; ignored, removed on open
    wal-<base>.log                log segment started after snapshot <base>; record frames,
                                  every record's rv > <base>, rvs strictly increasing

    frame           layout (little-endian)
    --------------  ------------------------------------------------------------------------
    record          u32 payload length | u32 CRC32(payload) | payload
    record payload  msgpack [rv, kind, type, namespace, name, data]; type is ADDED, MODIFIED
                    or DELETED; data is the object's encoded bytes (may be empty for DELETED)
    snapshot        a header, then chunks of objects, then a trailer (``snapshot.py``)

Durability is against the apiserver actor or its process dying, not against power loss: a
commit is flushed to the operating system, which keeps it when the process dies. ``fsync``
(default off) additionally forces data and directory entries to the device, at a cost of
milliseconds per commit that the emulator does not need.

Recovery loads the newest snapshot and replays the records after it. A process killed
mid-commit can leave a torn last record; it was never acknowledged, so it is dropped and the
file truncated. Damage anywhere else cannot be explained by a crash, so it is an error
rather than a silent loss of acknowledged writes. Records of a batch are independent: a
crash mid-batch may keep a prefix of the batch, as a lost etcd response would.
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from dataclasses import dataclass, field
from typing import NamedTuple

import msgpack

from ..api import codec
from ..api.errors import InternalError
from . import snapshot

RECORD_HEADER = struct.Struct("<II")
EVENT_TYPES = ("ADDED", "MODIFIED", "DELETED")
# No single object comes near this; a larger length field is damage, not a record.
MAX_RECORD = 256 << 20

_SNAPSHOT_RE = re.compile(r"^snapshot-(\d{20})\.snap$")
_SEGMENT_RE = re.compile(r"^wal-(\d{20})\.log$")
_TEMP_RE = re.compile(r"^snapshot-\d{20}\.snap\.tmp$")

Objects = dict[str, dict[tuple[str, str], bytes]]  # kind -> (namespace, name) -> bytes


class WalError(InternalError):
    """A log or snapshot problem; the message names the file (and offset) and says whether
    retrying can help (a full disk can clear; a corrupt file will not fix itself)."""

    def __init__(self, what: str, retryable: bool):
        hint = "a retry may help" if retryable else "a retry will not help"
        super().__init__(f"{what} ({hint})", retryable=retryable)


class Record(NamedTuple):
    """One logged write; a tuple, so it is cheap to make (one per write) and msgpack writes
    it as the record payload's array as it is."""

    rv: int
    kind: str
    type: str  # ADDED | MODIFIED | DELETED
    namespace: str
    name: str
    data: bytes = b""


@dataclass(slots=True)
class Recovered:
    rv: int = 0  # the last acknowledged resourceVersion; the next write gets rv + 1
    objects: Objects = field(default_factory=dict)  # includes kinds that are now empty
    snapshot_rv: int = 0  # 0: no snapshot was loaded
    records_replayed: int = 0
    torn: bool = False
    bytes_dropped: int = 0


def snapshot_path(directory: str, rv: int) -> str:
    return os.path.join(directory, f"snapshot-{rv:020d}.snap")


def segment_path(directory: str, base: int) -> str:
    return os.path.join(directory, f"wal-{base:020d}.log")


# -- writing -----------------------------------------------------------------------------
# One packer for every record (the apiserver writes from one thread); packb would build a
# new one per call. Same format as ``codec.encode``.
_pack_record = msgpack.Packer(use_bin_type=True).pack


def encode_record(rec: Record) -> bytes:
    payload = _pack_record(rec)  # [rv, kind, type, namespace, name, data]
    return RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload


class LogFile:
    """One append-only log segment. A failed append is cut back off the file, so a later
    append never lands after half a record (which recovery would call mid-log damage)."""

    def __init__(self, path: str, fsync: bool = False):
        self.path, self.fsync = path, fsync
        self._broken = ""
        try:
            self._file = open(path, "ab")
            if fsync:  # the new directory entry must outlive a power loss too
                _fsync_dir(os.path.dirname(path) or ".")
        except OSError as e:
            raise WalError(f"{path}: cannot open log segment: {e.strerror or e}", True) from e
        self.size = self._file.tell()

    def append(self, records: list[Record]) -> None:
        """Write a batch and flush it; on return the batch survives a process crash."""
        if self._broken:
            raise WalError(self._broken, False)
        frames = [encode_record(r) for r in records]
        for rec, frame in zip(records, frames):
            # Recovery would take an oversized length field for damage, so never write one.
            if len(frame) - RECORD_HEADER.size > MAX_RECORD:
                raise WalError(
                    f"{self.path}: record rv {rec.rv} ({rec.kind} {rec.namespace}/{rec.name}) "
                    f"is {len(frame)} bytes, over the {MAX_RECORD}-byte limit",
                    False,
                )
        blob = b"".join(frames)
        try:
            self._file.write(blob)
            self._file.flush()
            if self.fsync:
                os.fsync(self._file.fileno())
        except OSError as e:
            self._cut_back(e)
        self.size += len(blob)

    def _cut_back(self, err: OSError) -> None:
        try:
            self._file.close()
        except OSError:
            pass  # the buffer still holds the failed bytes; they are discarded by the cut
        try:
            os.truncate(self.path, self.size)
            self._file = open(self.path, "ab")
        except OSError as e:
            self._broken = (
                f"{self.path}: append failed ({err.strerror or err}) and the partial write at "
                f"offset {self.size} could not be removed ({e.strerror or e}); restart to recover"
            )
            raise WalError(self._broken, False) from e
        raise WalError(f"{self.path}: append at offset {self.size} failed: {err.strerror or err}", True) from err

    def close(self) -> None:
        self._file.close()


def write_snapshot(directory: str, rv: int, objects: Objects, *, fsync: bool = False) -> str:
    """Stream the full state at ``rv`` (``snapshot.py``) to a temporary file and rename it
    into place, so a reader sees either the old snapshot or the complete new one. Returns
    the final path."""
    final = snapshot_path(directory, rv)
    tmp = final + ".tmp"
    try:
        snapshot.write_snapshot(tmp, rv, objects, fsync=fsync)
        os.replace(tmp, final)
        if fsync:
            _fsync_dir(directory)
    except OSError as e:
        _unlink_quietly(tmp)
        raise WalError(f"{final}: cannot write snapshot: {e.strerror or e}", True) from e
    return final


# -- recovery ----------------------------------------------------------------------------
def recover(directory: str) -> Recovered:
    """The state of the last acknowledged write: the newest snapshot plus the log after it.

    A torn last record is dropped and its file truncated. Only the newest snapshot is
    considered: older ones lack the segments that were deleted after the newer one was
    written, so falling back to them would silently lose writes; a corrupt newest snapshot
    is therefore an error. A missing directory is a first start: empty state at rv 0.
    """
    snapshots, segments = _listing(directory)
    out = Recovered()
    if snapshots:
        out.snapshot_rv, out.objects = _load_snapshot(*snapshots[-1])
        out.rv = out.snapshot_rv
    needed = _segments_to_replay(segments, out.snapshot_rv)
    prev_rv = 0
    for i, path in enumerate(needed):
        prev_rv = _replay_segment(path, out, prev_rv, last=i == len(needed) - 1)
    return out


def _listing(directory: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return [], []
    except OSError as e:
        raise WalError(f"{directory}: cannot list the log directory: {e.strerror or e}", True) from e
    snaps, segs = [], []
    for name in names:
        if m := _SNAPSHOT_RE.match(name):
            snaps.append((int(m.group(1)), os.path.join(directory, name)))
        elif m := _SEGMENT_RE.match(name):
            segs.append((int(m.group(1)), os.path.join(directory, name)))
    return sorted(snaps), sorted(segs)


def _segments_to_replay(segments: list[tuple[int, str]], snapshot_rv: int) -> list[str]:
    """Segments from the last one that starts at or before the snapshot. Earlier ones hold
    only records the snapshot covers (a crash before they were deleted) and are not read."""
    if not segments:
        return []
    start = max((i for i, (base, _) in enumerate(segments) if base <= snapshot_rv), default=None)
    if start is None:
        base, path = segments[0]
        raise WalError(
            f"{path}: log starts after rv {base} but the newest snapshot is at rv {snapshot_rv}; "
            f"records {snapshot_rv + 1}..{base} are missing",
            False,
        )
    return [path for _, path in segments[start:]]


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise WalError(f"{path}: cannot read {what}: {e.strerror or e}", True) from e


def _load_snapshot(rv: int, path: str) -> tuple[int, Objects]:
    try:
        return rv, snapshot.load_snapshot(path, rv)
    except snapshot.SnapshotCorrupt as e:
        raise WalError(f"snapshot {path} is corrupt: {e}; restore it or start from an empty directory", False) from e
    except OSError as e:
        raise WalError(f"{path}: cannot read snapshot: {e.strerror or e}", True) from e


def _replay_segment(path: str, out: Recovered, prev_rv: int, last: bool) -> int:
    """Apply the segment's records after the snapshot; returns the last rv seen."""
    buf = _read(path, "log segment")
    view = memoryview(buf)
    off = 0
    while (payload := _frame_at(view, off)) is not None:
        rec = _parse_record(payload)
        if rec is None:
            raise WalError(f"{path}: record at offset {off} has an intact CRC but is not a log record", False)
        if rec.rv <= prev_rv:
            raise WalError(f"{path}: record at offset {off} has rv {rec.rv}, not after {prev_rv}", False)
        prev_rv = rec.rv
        if rec.rv > out.snapshot_rv:
            _apply(out, rec, path, off)
        off += RECORD_HEADER.size + len(payload)
    if off < len(buf):
        _drop_torn_tail(path, view, off, last, out)
    return prev_rv


def _apply(out: Recovered, rec: Record, path: str, off: int) -> None:
    bucket = out.objects.setdefault(rec.kind, {})
    key = (rec.namespace, rec.name)
    if rec.type == "DELETED":
        if bucket.pop(key, None) is None:
            raise WalError(
                f"{path}: record at offset {off} deletes {rec.kind} {rec.namespace}/{rec.name}, which does not exist",
                False,
            )
    else:
        bucket[key] = rec.data
    out.rv = rec.rv
    out.records_replayed += 1


def _frame_at(view: memoryview, off: int) -> memoryview | None:
    """The payload of an intact record frame at ``off``, or None."""
    end = off + RECORD_HEADER.size
    if end > len(view):
        return None
    length, crc = RECORD_HEADER.unpack_from(view, off)
    if not 0 < length <= MAX_RECORD or end + length > len(view):
        return None
    payload = view[end : end + length]
    return payload if zlib.crc32(payload) == crc else None


def _parse_record(payload: memoryview) -> Record | None:
    try:
        v = codec.decode(payload)
    except Exception:  # msgpack raises several unrelated types on garbage
        return None
    if not (isinstance(v, list) and len(v) == 6):
        return None
    rv, kind, typ, ns, name, data = v
    if not (
        type(rv) is int
        and rv > 0
        and typ in EVENT_TYPES
        and isinstance(data, bytes)
        and isinstance(kind, str)
        and isinstance(ns, str)
        and isinstance(name, str)
    ):
        return None
    return Record(rv, kind, typ, ns, name, data)


def _why_bad(view: memoryview, off: int) -> str:
    if off + RECORD_HEADER.size > len(view):
        return "short header"
    length, _ = RECORD_HEADER.unpack_from(view, off)
    if not 0 < length <= MAX_RECORD:
        return f"impossible length {length}"
    if off + RECORD_HEADER.size + length > len(view):
        return "short payload"
    return "CRC mismatch"


def _drop_torn_tail(path: str, view: memoryview, off: int, last: bool, out: Recovered) -> None:
    """A bad frame is a torn write only if it is the last thing in the last segment: no
    intact record may follow it, in this file or a later one. Any intact record after it
    means acknowledged writes sit behind damage, which only an operator can judge."""
    why = _why_bad(view, off)
    later = next(
        (
            o
            for o in range(off + 1, len(view) - RECORD_HEADER.size + 1)
            if (p := _frame_at(view, o)) is not None and _parse_record(p) is not None
        ),
        None,
    )
    if later is not None or not last:
        after = f"an intact record at offset {later}" if later is not None else "a later log segment"
        raise WalError(f"{path}: corrupt record at offset {off} ({why}) is followed by {after}", False)
    try:
        os.truncate(path, off)
    except OSError as e:
        raise WalError(f"{path}: cannot truncate torn record at offset {off}: {e.strerror or e}", True) from e
    out.torn = True
    out.bytes_dropped += len(view) - off


# -- the apiserver's handle --------------------------------------------------------------
class DurableLog:
    """Recovers ``directory`` on construction (``self.recovered``), then logs new writes.

    Appends continue the last segment (recovery has just cut it to a clean end); every
    snapshot starts a new segment and deletes the segments and snapshots it covers.
    """

    def __init__(self, directory: str, snapshot_every: int = 10_000, *, fsync: bool = False):
        self.directory, self.snapshot_every, self.fsync = directory, snapshot_every, fsync
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            # Something else in the way of the directory stays there; a full disk can clear.
            fixed = isinstance(e, (FileExistsError, NotADirectoryError, PermissionError))
            raise WalError(f"{directory}: cannot create the log directory: {e.strerror or e}", not fixed) from e
        for name in os.listdir(directory):
            if _TEMP_RE.match(name):  # a snapshot a crash interrupted before its rename
                _unlink_quietly(os.path.join(directory, name))
        self.recovered = recover(directory)
        self.last_rv = self.recovered.rv
        self.snapshot_rv = self.recovered.snapshot_rv
        # Replayed records count toward the next snapshot, so restarts do not postpone it.
        self._since_snapshot = self.recovered.records_replayed
        self._interval = self._interval_after(self.recovered.objects)
        self._pending: list[Record] = []
        segments = _listing(directory)[1]
        base = segments[-1][0] if segments else self.snapshot_rv
        self._segment = LogFile(segment_path(directory, base), fsync)

    def record_put(self, kind: str, rv: int, event_type: str, namespace: str, name: str, data: bytes) -> None:
        """Queue an ADDED or MODIFIED write of ``data`` (the object's encoded bytes)."""
        if event_type not in ("ADDED", "MODIFIED"):
            raise WalError(f"{self._segment.path}: record_put takes ADDED or MODIFIED, not {event_type!r}", False)
        self._queue(Record(rv, kind, event_type, namespace, name, data))

    def record_remove(self, kind: str, rv: int, namespace: str, name: str, data: bytes = b"") -> None:
        self._queue(Record(rv, kind, "DELETED", namespace, name, data))

    def _queue(self, rec: Record) -> None:
        # Recovery rejects a decreasing rv, so refuse to write one in the first place.
        if rec.rv <= self.last_rv:
            raise WalError(
                f"{self._segment.path}: record rv {rec.rv} is not after the last recorded rv {self.last_rv}", False
            )
        self._pending.append(rec)
        self.last_rv = rec.rv

    @property
    def pending(self) -> int:
        return len(self._pending)

    def commit(self) -> int:
        """Write the queued records; acknowledge them only after this returns. On a
        retryable failure the batch stays queued and the file is as before the call."""
        if not self._pending:
            return 0
        self._segment.append(self._pending)
        n = len(self._pending)
        self._pending = []
        self._since_snapshot += n
        return n

    def snapshot_due(self, factor: float = 1.0) -> bool:
        return self._since_snapshot + len(self._pending) >= self._interval * factor

    def _interval_after(self, objects: Objects) -> int:
        """Records between snapshots once a snapshot of ``objects`` is written: at least
        ``snapshot_every``, and at least as many as it held objects. A snapshot writes every
        object, so tying the interval to the store's size spreads that cost over as many
        writes however large the store grows (at 100,000 nodes, 50,000 records were 5 s of
        Lease renewals, and writing the whole store every 5 s took 40% of the apiserver)."""
        return max(self.snapshot_every, sum(len(bucket) for bucket in objects.values()))

    def maybe_snapshot(self, store, factor: float = 1.0) -> bool:
        """Snapshot ``store`` (anything with ``snapshot_state()``) once ``factor`` times the
        interval's records have accumulated since the last one; returns whether it did."""
        if not self.snapshot_due(factor):
            return False
        try:
            self.snapshot(*store.snapshot_state())
        except WalError:
            # The committed records are safe in the log either way; a full disk would
            # otherwise cost a whole failed snapshot at every commit, so wait another tenth
            # of the interval before trying again.
            self._since_snapshot = self._interval - max(1, self._interval // 10) - len(self._pending)
            raise
        return True

    def snapshot(self, rv: int, objects: Objects) -> str:
        """Commit what is queued, write the state at ``rv``, start a new segment and delete
        what the snapshot covers. ``objects`` must be the state after every recorded write."""
        self.commit()
        if rv < self.last_rv:
            raise WalError(
                f"{snapshot_path(self.directory, rv)}: a snapshot at rv {rv} would not cover "
                f"the recorded rv {self.last_rv}",
                False,
            )
        path = write_snapshot(self.directory, rv, objects, fsync=self.fsync)
        self.snapshot_rv, self._since_snapshot = rv, 0
        self._interval = self._interval_after(objects)
        new_segment = segment_path(self.directory, rv)
        if new_segment != self._segment.path:
            self._segment.close()
            self._segment = LogFile(new_segment, self.fsync)
        self._prune(rv)
        return path

    def _prune(self, rv: int) -> None:
        snapshots, segments = _listing(self.directory)
        for base, path in segments:
            if base < rv:  # written before this snapshot, so every record in it is <= rv
                _unlink_quietly(path)
        for snap_rv, path in snapshots:
            if snap_rv < rv:
                _unlink_quietly(path)

    def close(self) -> None:
        self.commit()
        self._segment.close()

    def abandon(self) -> None:
        """Close without writing what is queued: for an owner that gave up on this log after
        a failed commit and recovers afresh from what the directory holds."""
        self._pending = []
        try:
            self._segment.close()
        except OSError:
            pass  # nothing is buffered after a commit, failed or not; the handle just goes


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    # A leftover file here is only wasted space: recovery skips covered segments, older
    # snapshots and temporary files.
    try:
        os.unlink(path)
    except OSError:
        pass
