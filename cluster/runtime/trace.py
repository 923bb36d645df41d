"""The event trace: one line per write the apiserver stored, for comparing runs.

Owns the trace format. A ``Trace`` is attached to the store as its journal (the hook the
durable log also uses), so it sees every change in resourceVersion order:

    <emulated time> <resourceVersion> <ADDED|MODIFIED|DELETED> <Kind> <namespace>/<name> <digest>

where the digest is a hash of the object's stored bytes ("-" for a deletion). Under the
local runtime the same scenario and seed give the same trace, byte for byte
(``kubemu run --runtime local --trace FILE``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TextIO


class Trace:
    def __init__(self, out: TextIO, clock: Callable[[], float]):
        self.out, self.clock = out, clock

    def record_put(self, kind: str, rv: int, event_type: str, ns: str, name: str, data: bytes) -> None:
        digest = hashlib.blake2b(data, digest_size=8).hexdigest()
        self.out.write(f"{self.clock():.6f} {rv} {event_type} {kind} {ns}/{name} {digest}\n")

    def record_remove(self, kind: str, rv: int, ns: str, name: str) -> None:
        self.out.write(f"{self.clock():.6f} {rv} DELETED {kind} {ns}/{name} -\n")
