"""Settled objects' bytes, compressed against a recent object of their kind.

Owns the one compression scheme kubemu uses for objects it keeps but seldom reads: deflate
with a recent object's msgpack bytes as the preset dictionary. Objects of one kind differ
from one another in a few names, uids and times, so a density pod's 1,030 bytes become
about 170 for some 11 microseconds; reading them back takes a few microseconds.

Compressed bytes start with ``PACKED`` (0), which never starts an object's msgpack (a map),
so a holder can keep either form in one place and tell them apart by the first byte. The
dictionary is not in the bytes: the holder keeps it beside them (one ``bytes`` shared by
the ``refresh`` objects a ``Packer`` compresses against it).

Who calls it: the apiserver's store (``cluster/apiserver/store.py``: an object's bytes once
the watch window no longer shares them) and the controller manager's pod records
(``cluster/controllers/podrecord.py``: a record that stayed current a while).
"""

from __future__ import annotations

import zlib

PACKED = 0
# deflate's parameters: a 4 KB window holds the dictionary and most of a pod; level 4
# compresses density pods as well as level 9 at a fifth of its time.
_LEVEL, _WBITS, _MEM_LEVEL = 4, -12, 4
# Objects compressed against one dictionary before a newer object becomes the dictionary
# (objects change over a run: a recent one shares the most with what comes next).
REFRESH = 4096


def is_packed(data: bytes) -> bool:
    return bool(data) and data[0] == PACKED


def unpack(data: bytes, zdict: bytes) -> bytes:
    """The bytes ``Packer.pack`` compressed into ``data`` against ``zdict``."""
    return zlib.decompressobj(_WBITS, zdict=zdict).decompress(data[1:])


class Packer:
    """Compresses bytes against a recent object's bytes, changing that object every
    ``refresh`` compressions."""

    __slots__ = ("_zdict", "_uses", "_refresh", "packed")

    def __init__(self, refresh: int = REFRESH) -> None:
        if refresh < 1:
            raise ValueError(f"refresh: {refresh} must be at least 1")
        self._zdict = b""
        self._uses = 0
        self._refresh = refresh
        self.packed = 0  # how many bytes were compressed (and smaller for it)

    def pack(self, raw: bytes) -> tuple[bytes, bytes] | None:
        """(``raw`` compressed, the dictionary it needs), or None when ``raw`` is empty,
        compressed already, or would not get smaller."""
        if not raw or raw[0] == PACKED:
            return None
        if self._uses >= self._refresh or not self._zdict:
            self._zdict, self._uses = raw, 0
        z = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, self._zdict)
        packed = bytes((PACKED,)) + z.compress(raw) + z.flush()
        self._uses += 1
        if len(packed) >= len(raw):
            return None
        self.packed += 1
        return packed, self._zdict
