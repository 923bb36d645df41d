"""The final delete of a plain pod, settled from its stored bytes.

Owns ``delete_plain_pod``, which ``APIServer._delete`` tries first for a pod deleted with
grace 0 and no propagation policy (what a kubelet sends once a terminating pod has
stopped, so one per replaced pod in a rollout). Such a delete of a pod without
finalizers, whose uid matches any precondition, removes it and changes nothing in it but
the resourceVersion: the general path decodes the pod, finds nothing to change, removes
it and encodes it again for its DELETED event. Here only the uid, the finalizers and the
resourceVersion are read (msgspec skips the rest) and the store patches the
resourceVersion into the stored bytes (``Store.remove_as_stored``), which are then the
bytes the general path would have encoded. Anything else (finalizers, a uid that does not
match, a pod that is not there) goes the general way, which also raises its errors.
"""

from __future__ import annotations

import msgspec

from .storage import Storage

_NIL = msgspec.Raw(b"\xc0")
_EMPTY_LIST = b"\x90"


class _Meta(msgspec.Struct):
    uid: str = ""
    resourceVersion: str = ""
    finalizers: msgspec.Raw = _NIL


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)


_decoder = msgspec.msgpack.Decoder(_Pod)


def delete_plain_pod(store: Storage, ns: str, name: str, uid: str | None) -> bool:
    """Remove the pod if it is plain (module docstring); False: nothing done, take the
    general path."""
    data = store.raw("Pod", ns, name)
    if data is None:
        return False
    try:
        m = _decoder.decode(data).metadata
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    if bytes(m.finalizers) not in (b"\xc0", _EMPTY_LIST) or (uid and m.uid != uid) or not m.resourceVersion:
        return False
    return store.remove_as_stored("Pod", ns, name, m.resourceVersion)
