"""A pod's head: the few fields most watch events are judged by, read without the body.

Owns ``PodHead`` and the two ways to get one: ``read_head`` from a pod's encoded bytes
(msgspec decodes only these fields and skips the rest of the map, several times cheaper
than building the whole dict) and ``head_of`` from a decoded pod. Most pod events a client
receives change nothing it keeps (a kubelet's own status write coming back, a delete the
scheduler only has to release), so the reflector (``cluster/runtime/reflector.py``) hands
every pod event over with its head and decodes the body only when a client reads it.

``spec_key`` identifies the spec and labels: two heads with the same key carry the same
spec (nodeName included) and labels, so a client may keep what it parsed from them. It is
a hash of their encoded bytes: equal objects encoded differently only cost the slow path,
never a wrong answer (equal hashes of unequal bytes aside).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from .codec import encode

_NIL = msgspec.Raw(b"\xc0")  # msgpack nil: what an absent field encodes as


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    deletionTimestamp: str | None = None
    deletionGracePeriodSeconds: int | None = None
    labels: msgspec.Raw = _NIL
    ownerReferences: msgspec.Raw = _NIL


class _Status(msgspec.Struct):
    phase: str | None = None
    startTime: str | None = None
    nominatedNodeName: str | None = None


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: msgspec.Raw = _NIL
    status: _Status = msgspec.field(default_factory=_Status)


class _Spec(msgspec.Struct):
    nodeName: str | None = None
    terminationGracePeriodSeconds: int | None = None
    activeDeadlineSeconds: int | None = None
    ephemeralContainers: list[msgspec.Raw] | None = None  # counted, not read


_pod_decoder = msgspec.msgpack.Decoder(_Pod)
_spec_decoder = msgspec.msgpack.Decoder(_Spec)


class PodHead(NamedTuple):
    namespace: str
    name: str
    uid: str
    node_name: str
    phase: str
    start_time: str | None
    deleting: bool  # deletionTimestamp set
    grace: int | None  # metadata.deletionGracePeriodSeconds
    spec_grace: int | None  # spec.terminationGracePeriodSeconds
    nominated: str  # status.nominatedNodeName ("" when unset)
    active_deadline: int | None = None  # spec.activeDeadlineSeconds
    # The encoded spec and labels (read_head) or the decoded pod (head_of), for spec_key.
    spec_raw: Any = None
    labels_raw: Any = None
    owners_raw: Any = None  # the encoded metadata.ownerReferences (read_head only)
    pod: dict[str, Any] | None = None
    ephemeral: int = 0  # how many spec.ephemeralContainers (only ever added to)

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def spec_key(self) -> int:
        """Equal for two heads whose spec and labels are the same bytes (module docstring)."""
        if self.pod is not None:
            return spec_key(self.pod)
        return hash((bytes(self.spec_raw), bytes(self.labels_raw)))


def read_head(data: bytes) -> PodHead:
    """The head of an encoded pod; raises ValueError when the bytes do not hold a pod of
    the expected shape (the caller then decodes the whole object)."""
    try:
        p = _pod_decoder.decode(data)
        spec = _spec_decoder.decode(p.spec) if p.spec is not _NIL else _Spec()
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        raise ValueError(f"not a pod head: {e}") from None
    m, st = p.metadata, p.status
    return PodHead(
        m.namespace,
        m.name,
        m.uid,
        spec.nodeName or "",
        st.phase or "",
        st.startTime,
        bool(m.deletionTimestamp),
        m.deletionGracePeriodSeconds,
        spec.terminationGracePeriodSeconds,
        st.nominatedNodeName or "",
        spec.activeDeadlineSeconds,
        p.spec,
        m.labels,
        m.ownerReferences,
        ephemeral=len(spec.ephemeralContainers or ()),
    )


def head_of(pod: dict[str, Any]) -> PodHead:
    """The same head from a decoded pod (its ``spec_key`` equals that of ``read_head`` of
    the pod's encoding)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    return PodHead(
        meta.get("namespace") or "",
        meta.get("name") or "",
        meta.get("uid") or "",
        spec.get("nodeName") or "",
        status.get("phase") or "",
        status.get("startTime"),
        bool(meta.get("deletionTimestamp")),
        meta.get("deletionGracePeriodSeconds"),
        spec.get("terminationGracePeriodSeconds"),
        status.get("nominatedNodeName") or "",
        spec.get("activeDeadlineSeconds"),
        pod=pod,
        ephemeral=len(spec.get("ephemeralContainers") or ()),
    )


def spec_key(pod: dict[str, Any]) -> int:
    """``PodHead.spec_key`` of a decoded pod."""
    return _key(pod.get("spec"), pod)


def bound_spec_key(pod: dict[str, Any], node_name: str) -> int:
    """The ``spec_key`` the pod will have once bound to ``node_name`` by the apiserver,
    which sets ``spec.nodeName`` in place (the key's last position when it was absent)."""
    spec = dict(pod.get("spec") or {})
    spec["nodeName"] = node_name
    return _key(spec, pod)


_NODE_NAME = encode("nodeName")


def bound_key_from_bytes(spec: bytes, labels: bytes, node_name: str) -> int | None:
    """``bound_spec_key`` from the unbound pod's encoded spec and labels, without decoding
    or encoding the spec: the bind appends ``nodeName`` to the spec map, so its encoding is
    the map's with one more entry at the end. None when ``spec`` is not a map, or may
    already name a node (the bind would then rewrite an entry in place)."""
    if _NODE_NAME in spec or not spec:
        return None
    first = spec[0]
    if 0x80 <= first <= 0x8F:  # fixmap
        n, body = first & 0x0F, spec[1:]
    elif first == 0xDE:  # map 16
        n, body = int.from_bytes(spec[1:3], "big"), spec[3:]
    elif first == 0xDF:  # map 32
        n, body = int.from_bytes(spec[1:5], "big"), spec[5:]
    else:
        return None
    n += 1
    if n <= 0x0F:
        header = bytes((0x80 | n,))
    elif n <= 0xFFFF:
        header = b"\xde" + n.to_bytes(2, "big")
    else:
        header = b"\xdf" + n.to_bytes(4, "big")
    return hash((header + body + _NODE_NAME + encode(node_name), labels))


def _key(spec: Any, pod: dict[str, Any]) -> int:
    return hash((encode(spec), encode((pod.get("metadata") or {}).get("labels"))))
