"""The apiserver's snapshot files: the whole store at one resourceVersion, written and read
as a stream.

Owns the snapshot format. ``wal.DurableLog`` writes one (``write_snapshot``) every so many
records and recovery reads the newest (``load_snapshot``); nothing else touches these
files. A snapshot of a million pods is over a gigabyte of encoded objects, so it is never
packed into one buffer: objects go to the file in chunks of ``CHUNK_OBJECTS``, each framed
with its own CRC, and the reader decodes one chunk at a time. Either way the snapshot is
written to ``<name>.tmp`` and renamed into place only once complete, so a process killed
mid-write leaves the previous snapshot (and the log segments after it) as they were.

    frame            layout (little-endian)
    ---------------  -----------------------------------------------------------------------
    header           8 bytes "KMSNAP02" | u64 rv
    chunk            u32 payload length | u32 CRC32(payload) | payload
    chunk payload    msgpack [[kind, namespace, name, data], ...]
    trailer          a chunk whose payload is msgpack {"rv": rv, "objects": count}, last

Snapshots written before streaming (``KMSNAP01``: one frame holding every object) are
still read.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO

import msgpack

from ..api import codec

Objects = dict[str, dict[tuple[str, str], bytes]]

CHUNK_OBJECTS = 2_000  # objects per chunk: ~3 MB of pods, so the writer's peak stays small
HEADER = struct.Struct("<8sQ")
CHUNK = struct.Struct("<II")
MAGIC = b"KMSNAP02"
# Before streaming: 8 bytes "KMSNAP01" | u64 payload length | u32 CRC32 | one msgpack payload.
V1_HEADER = struct.Struct("<8sQI")
V1_MAGIC = b"KMSNAP01"
MAX_CHUNK = 1 << 30  # a larger length field is damage, not a chunk


class SnapshotCorrupt(ValueError):
    """The snapshot cannot be read; the message says why (the caller names the file)."""


def write_snapshot(path: str, rv: int, objects: Objects, *, fsync: bool = False) -> None:
    """Stream the state at ``rv`` to ``path`` (the caller renames it into place)."""
    with open(path, "wb") as f:
        f.write(HEADER.pack(MAGIC, rv))
        count = 0
        for chunk in _chunks(objects):
            _frame(f, msgpack.packb(chunk, use_bin_type=True))
            count += len(chunk)
        _frame(f, msgpack.packb({"rv": rv, "objects": count}, use_bin_type=True))
        f.flush()
        if fsync:
            os.fsync(f.fileno())


def _chunks(objects: Objects) -> Iterator[list[list]]:
    chunk: list[list] = []
    for kind, bucket in objects.items():
        if not bucket:
            chunk.append([kind, "", "", b""])  # an empty kind is remembered: its window starts evicted
        for (ns, name), data in bucket.items():
            chunk.append([kind, ns, name, data])
            if len(chunk) >= CHUNK_OBJECTS:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def _frame(f: BinaryIO, payload: bytes) -> None:
    f.write(CHUNK.pack(len(payload), zlib.crc32(payload)))
    f.write(payload)


def load_snapshot(path: str, rv: int) -> Objects:
    """The objects of the snapshot at ``path``, which must hold ``rv``; raises
    ``SnapshotCorrupt`` (or ``OSError``) when it cannot be read."""
    with open(path, "rb") as f:
        head = f.read(HEADER.size)
        if head[:8] == V1_MAGIC:
            return _load_v1(head + f.read(), rv)
        if len(head) < HEADER.size:
            raise SnapshotCorrupt(f"{len(head)} bytes is shorter than the header")
        magic, at = HEADER.unpack(head)
        if magic != MAGIC:
            raise SnapshotCorrupt("not a kubemu snapshot")
        if at != rv:
            raise SnapshotCorrupt(f"holds rv {at}, its name says {rv}")
        objects: Objects = {}
        count = 0
        for payload in _read_chunks(f):
            item = _decode(payload)
            if isinstance(item, dict):
                if item.get("rv") != rv or item.get("objects") != count:
                    raise SnapshotCorrupt(f"trailer {item!r} does not match rv {rv} and {count} objects")
                if f.read(1):
                    raise SnapshotCorrupt("bytes after the trailer")
                return objects
            count += _add(objects, item)
        raise SnapshotCorrupt("ends before its trailer")


def _read_chunks(f: BinaryIO) -> Iterator[bytes]:
    while True:
        head = f.read(CHUNK.size)
        if not head:
            return
        if len(head) < CHUNK.size:
            raise SnapshotCorrupt("a chunk header is cut short")
        length, crc = CHUNK.unpack(head)
        if length > MAX_CHUNK:
            raise SnapshotCorrupt(f"a chunk claims {length} bytes")
        payload = f.read(length)
        if len(payload) != length:
            raise SnapshotCorrupt(f"a chunk is {len(payload)} bytes, its header says {length}")
        if zlib.crc32(payload) != crc:
            raise SnapshotCorrupt("CRC mismatch")
        yield payload


def _decode(payload: bytes):
    try:
        return msgpack.unpackb(payload, raw=False)
    except (ValueError, TypeError, msgpack.ExtraData) as e:
        raise SnapshotCorrupt(f"unexpected content ({e})") from e


def _add(objects: Objects, chunk) -> int:
    if not isinstance(chunk, list):
        raise SnapshotCorrupt(f"a chunk is a {type(chunk).__name__}, not a list")
    added = 0
    try:
        for kind, ns, name, data in chunk:
            bucket = objects.setdefault(kind, {})
            if name:  # "" marks a kind with no objects
                bucket[(ns, name)] = data
            added += 1
    except (ValueError, TypeError) as e:
        raise SnapshotCorrupt(f"unexpected content ({e})") from e
    return added


def _load_v1(buf: bytes, rv: int) -> Objects:
    h = V1_HEADER
    if len(buf) < h.size:
        raise SnapshotCorrupt(f"{len(buf)} bytes is shorter than the header")
    _, length, crc = h.unpack_from(buf)
    payload = memoryview(buf)[h.size :]
    if len(payload) != length:
        raise SnapshotCorrupt(f"payload is {len(payload)} bytes, header says {length}")
    if zlib.crc32(payload) != crc:
        raise SnapshotCorrupt("CRC mismatch")
    try:
        state = codec.decode(payload)
        fmt, at = state["format"], state["rv"]
        objects = {kind: {(ns, name): data for ns, name, data in items} for kind, items in state["objects"].items()}
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise SnapshotCorrupt(f"unexpected content ({e})") from e
    if fmt != 1 or at != rv:
        raise SnapshotCorrupt(f"format {fmt} at rv {at}, expected format 1 at rv {rv}")
    return objects
