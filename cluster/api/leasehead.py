"""A Lease's head: its key, uid and renewTime, read from its bytes without the body.

Owns ``LeaseHead`` and ``read_lease_head``. At 100,000 nodes the kubelets renew 10,000
Leases a second and the controller manager hears every renewal; all it needs of one is
which node renewed and when (the node lifecycle controller) and that the Lease is a plain
object without owners or finalizers (the garbage collector). Decoding each into a dict
was a fifth of the controller manager's samples. Who calls it:
``cluster/controllers/manager.py``, for the Lease events of its lazy Lease watch; a Lease
of another shape (owners, finalizers, being deleted, unreadable) is decoded as before.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

_NIL = msgspec.Raw(b"\xc0")  # msgpack nil: what an absent field encodes as


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    deletionTimestamp: msgspec.Raw = _NIL
    ownerReferences: msgspec.Raw = _NIL
    finalizers: msgspec.Raw = _NIL


class _Spec(msgspec.Struct):
    renewTime: str | None = None


class _Lease(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)


_decoder = msgspec.msgpack.Decoder(_Lease)


class LeaseHead(NamedTuple):
    namespace: str
    name: str
    uid: str
    renew_time: str | None  # spec.renewTime as written


def read_lease_head(data: bytes) -> LeaseHead | None:
    """The head of a plain Lease's bytes; None when the Lease has owners or finalizers, is
    being deleted, or is not of the expected shape (the caller decodes it then)."""
    try:
        lease = _decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    m = lease.metadata
    # Absent, null, "", [] and {} encode in one byte; a set field in more.
    if not m.name or len(m.deletionTimestamp) > 1 or len(m.ownerReferences) > 1 or len(m.finalizers) > 1:
        return None
    return LeaseHead(m.namespace, m.name, m.uid, lease.spec.renewTime)
