"""Sets of object names and keys that cost a bit, not a string, per numbered name.

Owns ``NameSet`` (a set of names) and ``KeySet`` (a set of (namespace, name) keys, one
``NameSet`` per namespace). A name that is a prefix followed by a decimal index without a
leading zero (``density-41``, ``web-0``) is one bit in its prefix's bitmap; any other name
is kept as a string. A client that must only remember which objects it has seen (the
benches' driver counting Running pods, a reflector remembering the keys of a kind it reads
lazily) holds 100,000 numbered pods in about 12 KB instead of about 20 MB of strings and
tuples. A bitmap grows only while it stays within ``SLACK_BYTES`` plus a byte per member
(8 bits a member), so scattered large indices are kept as strings instead.

Who calls it: ``reflector.Reflector`` (keys of lazy kinds) and the benches' ``PodWatch``
(``actors/harness/benchstartup.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, MutableSet

_NUMBERED = re.compile(r"(.*?)(0|[1-9][0-9]{0,9})\Z", re.DOTALL)
SLACK_BYTES = 8192  # a bitmap may hold this many bytes beyond one a member


class NameSet(MutableSet[str]):
    """A set of names (see the module docstring): a ``MutableSet``, equal to a ``set`` of
    the same names."""

    __slots__ = ("_bits", "_counts", "_other", "_len")

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._bits: dict[str, bytearray] = {}  # prefix -> bit i set: prefix + str(i) is in
        self._counts: dict[str, int] = {}  # prefix -> its set bits
        self._other: set[str] = set()
        self._len = 0
        for name in names:
            self.add(name)

    def __len__(self) -> int:
        return self._len

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        m = _NUMBERED.match(name)
        if m is not None:
            bits = self._bits.get(m.group(1))
            if bits is not None:
                i = int(m.group(2))
                if (i >> 3) < len(bits) and bits[i >> 3] & (1 << (i & 7)):
                    return True
        return name in self._other

    def add(self, name: str) -> None:
        if name in self:
            return
        self._len += 1
        m = _NUMBERED.match(name)
        if m is not None:
            prefix, i = m.group(1), int(m.group(2))
            bits = self._bits.get(prefix)
            count = self._counts.get(prefix, 0)
            need = (i >> 3) + 1
            if bits is None or need > len(bits):
                if need > SLACK_BYTES + count + 1:
                    self._other.add(name)  # too far out for the bitmap
                    return
                if bits is None:
                    bits = self._bits[prefix] = bytearray()
                bits.extend(bytes(max(need - len(bits), len(bits) // 4)))
            bits[i >> 3] |= 1 << (i & 7)
            self._counts[prefix] = count + 1
            return
        self._other.add(name)

    def discard(self, name: str) -> None:
        if name in self._other:
            self._other.discard(name)
            self._len -= 1
            return
        m = _NUMBERED.match(name)
        if m is None:
            return
        prefix, i = m.group(1), int(m.group(2))
        bits = self._bits.get(prefix)
        if bits is None or (i >> 3) >= len(bits) or not bits[i >> 3] & (1 << (i & 7)):
            return
        bits[i >> 3] &= ~(1 << (i & 7)) & 0xFF
        self._len -= 1
        self._counts[prefix] -= 1
        if not self._counts[prefix]:
            del self._bits[prefix], self._counts[prefix]

    def __iter__(self) -> Iterator[str]:
        for prefix, bits in self._bits.items():
            for byte_at, byte in enumerate(bits):
                if byte:
                    for b in range(8):
                        if byte & (1 << b):
                            yield f"{prefix}{(byte_at << 3) | b}"
        yield from self._other


class KeySet(MutableSet[tuple[str, str]]):
    """A set of (namespace, name) keys, a ``NameSet`` per namespace."""

    __slots__ = ("_by_ns", "_len")

    def __init__(self) -> None:
        self._by_ns: dict[str, NameSet] = {}
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        names = self._by_ns.get(key[0])
        return names is not None and key[1] in names

    def add(self, key: tuple[str, str]) -> None:
        names = self._by_ns.get(key[0])
        if names is None:
            names = self._by_ns[key[0]] = NameSet()
        before = len(names)
        names.add(key[1])
        self._len += len(names) - before

    def discard(self, key: tuple[str, str]) -> None:
        names = self._by_ns.get(key[0])
        if names is None:
            return
        before = len(names)
        names.discard(key[1])
        self._len -= before - len(names)
        if not names:
            del self._by_ns[key[0]]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for ns, names in self._by_ns.items():
            for name in names:
                yield ns, name
