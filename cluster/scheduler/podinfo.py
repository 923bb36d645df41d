"""What the scheduler knows about one pod and one node, parsed once per object.

Owns ``PodInfo`` (a pod's requests, labels, inter-pod terms and host ports, and the node
it is attached to), ``NodeInfo`` (a node's object, allocatable, pods, used host ports and
images), ``ResourceColumns`` (resource name -> array column) and ``Topology`` (domain ids
per node row for one label key). Built and kept current by ``Cache``; read by the queue,
the cycle and every plugin.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from ..api.codec import decode, encode
from ..api.objects import labels_of, name_of, namespace_of, node_name_of, priority_of, uid_of
from ..api.podhead import PodHead, bound_key_from_bytes, bound_spec_key, spec_key
from ..api.predicates import HostPort, host_ports
from ..api.resources import CPU, EPHEMERAL, MEMORY, PODS, pod_nonzero_requests, pod_requests
from ..api.sharing import SharedValues
from .podterms import PodTerms

BASE_COLUMNS = (CPU, MEMORY, EPHEMERAL)
CPU_COL, MEMORY_COL, EPHEMERAL_COL = 0, 1, 2  # fixed positions of BASE_COLUMNS


def resources_signature(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What a pod's requests depend on, compared cheaply to skip re-parsing on updates."""
    spec = pod.get("spec") or {}
    return (
        tuple(c.get("resources") for c in spec.get("containers") or ()),
        tuple((c.get("resources"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()),
        spec.get("overhead"),
        tuple(c.get("ports") for c in spec.get("containers") or ()),
    )


def _terms_signature(pod: dict[str, Any]) -> Any:
    """What a pod's index keys depend on: its labels dict alone when it has no inter-pod
    terms (nearly every pod: no tuple kept per pod), else (labels, podAffinity,
    podAntiAffinity)."""
    aff = (pod.get("spec") or {}).get("affinity") or {}
    affinity, anti = aff.get("podAffinity"), aff.get("podAntiAffinity")
    return (labels_of(pod), affinity, anti) if affinity or anti else labels_of(pod)


# What PodInfo.refresh parses from a pod's spec, labels and namespace (its template).
_PARSED_FIELDS = (
    "priority",
    "gates",
    "labels",
    "_terms_sig",
    "_sig",
    "requests",
    "nonzero_cpu",
    "nonzero_mem",
    "req_cols",
    "host_ports",
)
_PARSED_OF = attrgetter(*_PARSED_FIELDS)


class PodInfo:
    """A pod with its requests parsed once; shared by the queue, the cycle and the cache.

    ``node`` is the NodeInfo the cache has attached the pod to (None while pending or a
    ghost); ``terms`` its inter-pod terms (None when it has none). A pending pod that no
    cycle has tried yet keeps its object as the encoded bytes the watch delivered
    (``compact``: a backlog of new pods can be large, and a decoded dict is five times the
    bytes); the cycle that pops it ``expand``s it, and ``pod`` decodes it afresh.

    A placed pod keeps no object at all (``compact(raw, placed=True)``): the scheduler holds
    every placed pod in the cluster, and what it reads of one is parsed beside it
    (requests, labels, terms, ports, ``deleting``, ``start_time``, ``scheduler_name``), or
    named by ``ref`` (a victim's Event). Only while it is being deleted does it keep its
    bytes, for preemption's one read of its conditions (``terminating_by_preemption``).
    """

    __slots__ = (
        "uid",
        "namespace",
        "name",
        "_pod",
        "_raw",
        "deleting",
        "start_time",
        "scheduler_name",
        "priority",
        "gates",
        "requests",
        "req_cols",
        "nonzero_cpu",
        "nonzero_mem",
        "_sig",
        "_fp_node",
        "_fp_key",
        "labels",
        "terms",
        "host_ports",
        "node",
        "_terms_sig",
        "passed_static",
        "_template",
    )

    # Set by refresh() (first called from __init__).
    _pod: dict[str, Any] | None
    deleting: bool  # metadata.deletionTimestamp is set
    start_time: str | None  # status.startTime as written
    scheduler_name: str  # spec.schedulerName ("" for the default)
    priority: int
    gates: tuple[str, ...]  # the names of spec.schedulingGates, in order
    requests: dict[str, int]
    req_cols: tuple[tuple[int, int], ...]
    nonzero_cpu: int
    nonzero_mem: int
    labels: dict[str, str]
    terms: PodTerms | None
    host_ports: tuple[HostPort, ...]

    def __init__(self, pod: dict[str, Any], columns: ResourceColumns):
        self.uid = uid_of(pod)
        self.namespace = sys.intern(namespace_of(pod))
        self.name = name_of(pod)
        self._raw: bytes | None = None
        self._sig: bytes | None = None
        # nodeName and podhead.spec_key of the object, once compacted: what a later
        # version's head is compared with (see ``same_head``). None: not taken yet.
        self._fp_node: str | None = None
        self._fp_key = 0
        self._terms_sig: Any = None
        self.node: NodeInfo | None = None
        # (node name, Cache.node_epoch) where every filter but the resource fit passed,
        # as preemption found when it nominated the node; see SchedulerHost.nominated_node_fits.
        self.passed_static: tuple[str, int] | None = None
        self._template: HeadTemplate | None = None  # the bytes it came from (from_head)
        if not self._from_template(pod, columns):
            self.refresh(pod, columns)
            if self.terms is None:
                columns.remember(pod, self.namespace, self._parsed())

    def _parsed(self) -> tuple[Any, ...]:
        """What ``refresh`` parses from the spec, labels and namespace."""
        return _PARSED_OF(self)

    def _from_template(self, pod: dict[str, Any], columns: ResourceColumns) -> bool:
        """Take what a recent pod with an equal spec, labels and namespace parsed (a
        Deployment's replicas arrive one after another); False when none matches."""
        parsed = columns.template(pod, self.namespace)
        if parsed is None:
            return False
        self.pod = pod
        self.terms = None  # templates are kept of pods without inter-pod terms only
        for name, value in zip(_PARSED_FIELDS, parsed):
            setattr(self, name, value)
        return True

    @classmethod
    def from_head(cls, head: PodHead, raw: bytes, template: HeadTemplate) -> PodInfo:
        """A new pending pod as its bytes, never decoded: what a recent pod with the same
        encoded spec, labels and namespace parsed (``ResourceColumns.template_of_head``),
        and the rest from ``head``. The same PodInfo as parsing the object and then
        ``compact(raw, head=head)``; a pod being deleted or already bound does not come
        this way."""
        self = cls.__new__(cls)
        self.uid, self.namespace, self.name = head.uid, template.namespace, head.name
        self._pod, self._raw = None, raw
        self.deleting = False
        self.start_time = _shared_str(head.start_time)
        self.scheduler_name = template.scheduler_name
        for name, value in zip(_PARSED_FIELDS, template.parsed):
            setattr(self, name, value)
        self.terms = None  # templates are kept of pods without inter-pod terms only
        self._fp_node, self._fp_key = "", template.spec_key  # compact()'s, of an unbound pod
        self.node = None
        self.passed_static = None
        self._template = None if head.nominated else template
        return self

    @property
    def template(self) -> HeadTemplate | None:
        """The bytes this pod's spec, labels, owners and namespace came from, when known
        and it carried no nominated node (``ResourceColumns.template_of_head``); None once
        another version of it is taken."""
        return self._template

    @property
    def pod(self) -> dict[str, Any]:
        """The object; a compacted pod's is decoded afresh on each read (do not mutate).
        A placed pod that keeps none raises ``LookupError`` (read what is kept, or ``ref``)."""
        pod = self._pod
        if pod is not None:
            return pod
        if self._raw is None:
            raise LookupError(f"placed pod {self.namespace}/{self.name} keeps only what the scheduler reads of it")
        return decode(self._raw)  # type: ignore[no-any-return]

    @pod.setter
    def pod(self, pod: dict[str, Any]) -> None:
        self._pod, self._raw = pod, None
        self._template = None  # another version: its bytes are not the template's
        self.deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
        self.start_time = _shared_str((pod.get("status") or {}).get("startTime"))
        self.scheduler_name = sys.intern((pod.get("spec") or {}).get("schedulerName") or "")

    def ref(self) -> dict[str, Any]:
        """The pod as an Event's involvedObject names it: kind, namespace, name and uid."""
        return {"kind": "Pod", "metadata": {"namespace": self.namespace, "name": self.name, "uid": self.uid}}

    def compact(self, raw: bytes | None, placed: bool = False, head: PodHead | None = None) -> None:
        """Let the dict go, keeping ``raw``, its encoding: a pending pod always, a
        ``placed`` one only while it is being deleted (see the class). Without ``raw`` (a
        caller that has no bytes) the dict stays. ``head``, the head of the same bytes,
        gives the fingerprint without encoding the object again."""
        if raw is not None and self._pod is not None:
            node = node_name_of(self._pod)
            if self._fp_node != node:  # not taken yet, or the bind changed the spec
                self._fp_node = sys.intern(node)
                self._fp_key = head.spec_key if head is not None else spec_key(self._pod)
            self._pod, self._raw = None, raw if self.deleting or not placed else None

    @property
    def compacted(self) -> bool:
        return self._pod is None

    def same_head(self, head: PodHead) -> bool:
        """A compacted pod: does ``head``'s version have the same spec and labels?"""
        return self._fp_node is not None and self._fp_key == head.spec_key

    def take_head(self, raw: bytes, head: PodHead) -> None:
        """Take a newer version of a placed pod whose spec and labels are the same
        (``same_head``): only what the scheduler reads of the rest changes. ``raw``, its
        encoding, is kept while the pod is being deleted (``compact``)."""
        self._raw = raw if head.deleting else None
        self.deleting = head.deleting
        self.start_time = _shared_str(head.start_time)

    def expect_bound(self, node_name: str) -> None:
        """Remember the ``spec_key`` the bind to ``node_name`` will give the object, so that
        its confirmation can be recognised by its head (``bound_as``): from the bytes it
        came from when it knows them (a pod kept as bytes stays so), else from the object.
        The key waits where a compacted pod's fingerprint goes, with no node beside it."""
        t = self._template
        key = None if t is None else bound_key_from_bytes(t.spec, t.labels, node_name)
        self._fp_node, self._fp_key = None, bound_spec_key(self.pod, node_name) if key is None else key

    def bound_as(self, head: PodHead) -> bool:
        """Is ``head`` the version the bind ``expect_bound`` made, same spec and labels?"""
        expected = self._pod is not None or self._template is not None  # expect_bound's states
        return expected and self._fp_node is None and self._fp_key == head.spec_key

    def confirm_bound(self, raw: bytes, head: PodHead) -> None:
        """Become the placed pod of ``head`` (``bound_as``): keep what is parsed, and the
        fingerprint, but not the object (``compact``'s placed case)."""
        self._fp_node = sys.intern(head.node_name)
        self._pod = None
        self.take_head(raw, head)

    def expand(self) -> None:
        """Hold the decoded object from now on (a scheduling cycle reads it many times)."""
        if self._pod is None:
            self._pod = decode(self._raw)  # type: ignore[arg-type]
            self._raw = None

    @property
    def resources_key(self) -> bytes | None:
        """Equal for pods whose requests and host ports are the same (what the resource
        fit of a pod reads of it)."""
        return self._sig

    def requests_changed(self, pod: dict[str, Any]) -> bool:
        """Would ``refresh(pod)`` change the requests or host ports?"""
        return _resources_key(pod) != self._sig

    def terms_changed(self, pod: dict[str, Any]) -> bool:
        """Would ``refresh(pod)`` change the labels or inter-pod terms (index keys)?"""
        changed: bool = _terms_signature(pod) != self._terms_sig
        return changed

    def same_spec(self, pod: dict[str, Any]) -> bool:
        """True when ``pod`` differs from the current object at most in what the scheduler
        does not parse (status, bookkeeping metadata, the bind's nodeName)."""
        old = self._pod
        if old is None:
            # Compacted: compare fingerprints rather than decode the old object.
            return self._fp_node is not None and spec_key(pod) == self._fp_key
        a, b = old.get("spec") or {}, pod.get("spec") or {}
        if a.get("nodeName") != b.get("nodeName"):
            # The bind: nodeName is not parsed into a PodInfo, so compare the rest.
            b = dict(b)
            b.pop("nodeName", None)
            if "nodeName" in a:
                b["nodeName"] = a["nodeName"]
        # (A C-level dict comparison, far cheaper than building the signatures.)
        return a == b and labels_of(old) == labels_of(pod)

    def refresh(self, pod: dict[str, Any], columns: ResourceColumns) -> bool:
        """Take the newer object; re-parse requests only if they changed. True if they did."""
        if self._sig is not None and self.same_spec(pod):
            self.pod = pod  # the fingerprint still holds
            return False
        self.pod = pod
        self._fp_node = None
        self.passed_static = None  # the spec changed: filters may judge it differently
        self.priority = priority_of(pod)
        self.gates = _gate_names(pod)
        tsig = _terms_signature(pod)
        if tsig != self._terms_sig:
            with_terms = isinstance(tsig, tuple)
            self.labels = columns.shared_labels(tsig[0] if with_terms else tsig)
            self._terms_sig = tsig if with_terms else self.labels
            terms = PodTerms(pod, self.namespace) if with_terms else None
            self.terms = terms if terms else None
        sig = _resources_key(pod)
        if sig == self._sig:
            return False
        self._sig, parsed = _parsed_requests(sig, pod, columns)
        self.requests, self.nonzero_cpu, self.nonzero_mem, self.req_cols, self.host_ports = parsed
        return True

    @property
    def nominated_node_name(self) -> str:
        return (self.pod.get("status") or {}).get("nominatedNodeName") or ""

    def __repr__(self) -> str:
        return f"PodInfo({self.namespace}/{self.name})"


def _gate_names(pod: dict[str, Any]) -> tuple[str, ...]:
    return tuple(g.get("name", "") for g in (pod.get("spec") or {}).get("schedulingGates") or ())


def _resources_key(pod: dict[str, Any]) -> bytes:
    """``resources_signature`` as bytes: hashable, small, and the same for every pod of
    one template, so the parse below is shared."""
    return encode(resources_signature(pod))


PARSED_MAX = 4096  # parsed requests kept per cache; templates are few, so cleared whole when full
TEMPLATES_KEPT = 4  # new pods' parses kept for the next pods of their template
LABELS_MAX = 4096  # distinct labels dicts kept for sharing (pods of one template have equal labels)


def _shared_str(value: str | None) -> str | None:
    """One copy of a string many pods hold alike (a start time shared by the pods started in
    one second): the decoder makes a new one for every object."""
    return sys.intern(value) if isinstance(value, str) else value


def _parsed_requests(sig: bytes, pod: dict[str, Any], columns: ResourceColumns) -> tuple[bytes, tuple[Any, ...]]:
    """The kept copy of ``sig`` and (requests, nonzero cpu, nonzero memory, req_cols,
    host_ports) for it. Pods of one template share one entry, and so one key and one
    requests dict in memory: treat them as read-only."""
    hit = columns.parsed.get(sig)
    if hit is not None:
        return hit
    requests = {k: v for k, v in pod_requests(pod).items() if k != PODS}
    nz = pod_nonzero_requests(pod)
    # Only positive requests: a zero request can never fail a fit check.
    req_cols = tuple((columns.index(k), v) for k, v in requests.items() if v > 0)
    parsed = (requests, nz.get(CPU, 0), nz.get(MEMORY, 0), req_cols, host_ports(pod))
    if len(columns.parsed) >= PARSED_MAX:
        columns.parsed.clear()
    hit = columns.parsed[sig] = (sig, parsed)
    return hit


def _head_key(head: PodHead) -> tuple[str, bytes, bytes, bytes]:
    return (head.namespace, bytes(head.spec_raw), bytes(head.labels_raw), bytes(head.owners_raw))


class HeadTemplate(NamedTuple):
    """What pods with one encoded spec, labels and namespace parse to (``from_head``)."""

    namespace: str
    scheduler_name: str
    parsed: tuple[Any, ...]  # PodInfo._parsed()
    spec_key: int  # the head's spec_key of those bytes
    spec: bytes  # the encoded spec, labels and ownerReferences themselves
    labels: bytes
    owners: bytes


class ResourceColumns:
    """Resource name -> column index; grows on first sight and tells the cache to widen.
    Also holds what pods of one template share once parsed: their requests and labels."""

    def __init__(self, on_new: Callable[[], object]):
        self.names: list[str] = []
        # What PodInfo parsed per resources key; column indexes only grow, so it stays valid.
        self.parsed: dict[bytes, tuple[bytes, tuple[Any, ...]]] = {}
        self._labels = SharedValues(LABELS_MAX)
        # (spec, labels, namespace, PodInfo._parsed()) of the last few new pods parsed,
        # newest first; compared by value, the dicts as decoded (never written to).
        self._templates: list[tuple[Any, ...]] = []
        # The same by the encoded spec, labels and owners of a pod's head, for new pods
        # kept as bytes (PodInfo.from_head); the most recent TEMPLATES_KEPT, oldest first.
        self._head_templates: dict[tuple[str, bytes, bytes, bytes], HeadTemplate] = {}
        self._index: dict[str, int] = {}
        self._on_new = on_new
        for name in BASE_COLUMNS:
            self.index(name)

    def template(self, pod: dict[str, Any], namespace: str) -> tuple[Any, ...] | None:
        """What a pod with ``pod``'s spec, labels and namespace parsed lately, or None."""
        spec, labels = pod.get("spec"), (pod.get("metadata") or {}).get("labels")
        for t_spec, t_labels, t_ns, parsed in self._templates:
            if t_ns == namespace and t_spec == spec and t_labels == labels:
                return parsed  # type: ignore[no-any-return]
        return None

    def remember(self, pod: dict[str, Any], namespace: str, parsed: tuple[Any, ...]) -> None:
        entry = (pod.get("spec"), (pod.get("metadata") or {}).get("labels"), namespace, parsed)
        self._templates = [entry, *self._templates[: TEMPLATES_KEPT - 1]]

    def template_of_head(self, head: PodHead) -> HeadTemplate | None:
        """What a recent pod with ``head``'s encoded spec, labels and namespace parsed (a
        head read from bytes only), or None."""
        if head.spec_raw is None:
            return None
        return self._head_templates.get(_head_key(head))

    def remember_head(self, head: PodHead, pinfo: PodInfo) -> None:
        """Keep what ``pinfo`` parsed under its head's encoded spec and labels (a head read
        from bytes, a pod without inter-pod terms); ``pinfo`` then knows its bytes too
        (``expect_bound``)."""
        if head.spec_raw is None or pinfo.terms is not None:
            return
        kept = self._head_templates
        key = _head_key(head)
        template = kept.pop(key, None)  # the same bytes parse alike: keep the one, as newest
        if template is None:
            template = HeadTemplate(pinfo.namespace, pinfo.scheduler_name, pinfo._parsed(), head.spec_key, *key[1:])
        kept[key] = template
        if not head.nominated:  # what a run's kind needs besides the bytes (KindRun.serves)
            pinfo._template = template
        if len(kept) > TEMPLATES_KEPT:
            del kept[next(iter(kept))]

    def index(self, name: str) -> int:
        col = self._index.get(name)
        if col is None:
            col = self._index[name] = len(self.names)
            self.names.append(name)
            self._on_new()
        return col

    def get(self, name: str) -> int | None:
        return self._index.get(name)

    def shared_labels(self, labels: dict[str, str]) -> dict[str, str]:
        """``labels``, or an equal dict a pod parsed before: pods of one template keep one
        (read-only, as every parsed field)."""
        try:
            shared: dict[str, str] = self._labels.keep(tuple(sorted(labels.items())), labels)
        except TypeError:  # a value that cannot be hashed: keep the pod's own
            return labels
        return shared


class NodeInfo:
    """One node as the cache holds it: what filters and scores read (labels, taints,
    cordon, allocatable, images, the pods on it and their host ports), parsed once per
    object. Like a placed pod, the object itself is kept as its encoding when the watch
    gave one (``set_node``); ``node`` decodes it for the rare whole-object read."""

    __slots__ = (
        "name",
        "index",
        "_node",
        "_raw",
        "labels",
        "taints",
        "unschedulable",
        "allocatable",
        "pods",
        "ports",
        "images",
    )

    _node: dict[str, Any] | None
    _raw: bytes | None
    labels: dict[str, str]
    taints: list[dict[str, Any]]
    unschedulable: bool  # spec.unschedulable (cordoned)
    images: dict[str, int]  # image name -> size in bytes

    def __init__(self, node: dict[str, Any], index: int, raw: bytes | None = None):
        self.name = name_of(node)
        self.index = index
        self.allocatable: dict[str, int] = {}
        self.pods: dict[str, PodInfo] = {}
        self.ports: dict[tuple[str, str, int], int] = {}  # (hostIP, protocol, port) -> pods using it
        self.set_node(node, raw)

    def set_node(self, node: dict[str, Any], raw: bytes | None = None) -> None:
        """Take a newer object (``raw``: its encoding, kept instead of the dict)."""
        spec = node.get("spec") or {}
        self.labels = (node.get("metadata") or {}).get("labels") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        self.images = node_images(node)
        self._node, self._raw = (None, raw) if raw is not None else (node, None)

    @property
    def node(self) -> dict[str, Any]:
        """The object; a compacted node's is decoded afresh on each read (do not mutate)."""
        node = self._node
        return node if node is not None else decode(self._raw)  # type: ignore[arg-type]


def node_images(node: dict[str, Any]) -> dict[str, int]:
    """Every name of every image in ``status.images``, with its size."""
    out: dict[str, int] = {}
    for img in (node.get("status") or {}).get("images") or ():
        for name in img.get("names") or ():
            out[name] = int(img.get("sizeBytes") or 0)
    return out


class Topology:
    """Domain ids per node row for one topology key: ``ids[i]`` indexes ``values``, -1 when
    node ``i`` lacks the label. Valid for one ``node_epoch``."""

    __slots__ = ("key", "ids", "values")

    def __init__(self, key: str, infos: list[NodeInfo]):
        self.key = key
        index: dict[str, int] = {}
        ids = np.empty(len(infos), dtype=np.int64)
        for i, ni in enumerate(infos):
            v = ni.labels.get(key)
            ids[i] = -1 if v is None else index.setdefault(v, len(index))
        self.ids = ids
        self.values = list(index)

    @property
    def num_domains(self) -> int:
        return len(self.values)
