"""What a YuniKorn-scheduled pod is to the scheduler: an ask while pending, an allocation
once placed, and the application it belongs to.

Owns ``Alloc`` (one pod: size, priority, the two preemption flags, originator, required
node, creation time, and the scheduling state the core and the preemptors keep on it),
``App`` (an application: its pods, its originator, its queue) and the reading of a pod's
labels and annotations (``read_pod``: section 3 of docs/yunikorn.md). Created by the core
(``core.py``) when the watch shows a pod; read by the preemptors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..clock import parse_timestamp
from .resources import Res, of_pod, total

SCHEDULER_NAME = "yunikorn"
ALLOW_PREEMPTION = "yunikorn.apache.org/allow-preemption"
QUEUE_KEYS = (("label", "yunikorn.apache.org/queue"), ("annotation", "yunikorn.apache.org/queue"), ("label", "queue"))
APP_KEYS = (
    ("label", "yunikorn.apache.org/app-id"),
    ("annotation", "yunikorn.apache.org/app-id"),
    ("label", "applicationId"),
    ("label", "spark-app-selector"),
)


@dataclass(eq=False, slots=True)
class Alloc:
    """One pod. ``node`` is "" while it is an ask. The fields below ``seq`` are state the
    scheduler keeps: they live exactly as long as the pod is known."""

    uid: str
    namespace: str
    name: str
    app_id: str
    queue_name: str | None  # as the pod names it (None: placement decides)
    res: Res
    priority: int
    allow_preempt_self: bool
    allow_preempt_other: bool
    required_node: str  # a DaemonSet pod's node, else ""
    create_time: float
    pod: dict[str, Any]
    seq: int = 0  # arrival order: the tie-breaker after creation time
    node: str = ""
    queue: Any = None  # the leaf Queue it is accounted in (queues.Queue)
    app: App | None = None
    originator: bool = False
    victim: bool = False  # chosen by a preemption, not gone yet
    triggered_preemption: bool = False
    gate_passed_at: float | None = None  # the last time it passed the preemption gate
    reserved_node: str = ""  # a reservation it holds
    log: list[str] = field(default_factory=list)  # allocation-log strings, oldest first
    nofit_epoch: int = -1  # the capacity epoch at which no node fitted it
    shown: str = ""  # the log as last written to the pod's PodScheduled condition
    informed: bool = False  # its DaemonSet "no preemption victim found" event is recorded

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def note(self, message: str) -> None:
        """Record an allocation-log string; a repeat moves it to the end, as a count would."""
        if message in self.log:
            self.log.remove(message)
        self.log.append(message)
        del self.log[:-8]


@dataclass(eq=False, slots=True)
class App:
    app_id: str
    queue: Any  # queues.Queue
    allocs: dict[str, Alloc] = field(default_factory=dict)  # uid -> pod, pending and placed
    originator_uid: str = ""
    submit_time: float = 0.0
    seq: int = 0
    rejected: str = ""  # why no queue took it; its pods end Failed

    def allocated(self) -> Res:
        return total(a.res for a in self.allocs.values() if a.node)


def _lookup(meta: dict[str, Any], keys: tuple[tuple[str, str], ...]) -> str | None:
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    for where, key in keys:
        value = (labels if where == "label" else annotations).get(key)
        if value:
            return str(value)
    return None


def is_yunikorn(pod: dict[str, Any]) -> bool:
    return (pod.get("spec") or {}).get("schedulerName") == SCHEDULER_NAME


def required_node(pod: dict[str, Any]) -> str:
    """The node a DaemonSet pod is pinned to: a required node-affinity ``matchFields`` term
    on ``metadata.name`` (how the DaemonSet controller pins its pods)."""
    meta = pod.get("metadata") or {}
    if not any(ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or ()):
        return ""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or ()
    for term in terms:
        for req in term.get("matchFields") or ():
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and req.get("values"):
                return str(req["values"][0])
    return ""


def allow_preempt_self(pod: dict[str, Any], classes: dict[str, dict[str, Any]]) -> bool:
    """The pod's own annotation wins ("true"/"false"); else only the exact string "false"
    on its PriorityClass opts out; no annotation or an unknown class means it may be a victim."""
    own = ((pod.get("metadata") or {}).get("annotations") or {}).get(ALLOW_PREEMPTION)
    if own is not None and str(own).lower() in ("true", "false"):
        return str(own).lower() == "true"
    pc = classes.get((pod.get("spec") or {}).get("priorityClassName") or "")
    if pc is None:
        return True
    return ((pc.get("metadata") or {}).get("annotations") or {}).get(ALLOW_PREEMPTION) != "false"


def read_pod(pod: dict[str, Any], classes: dict[str, dict[str, Any]]) -> Alloc:
    """A pod as YuniKorn sees it (its queue still to be placed)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    ns = meta.get("namespace") or "default"
    created = meta.get("creationTimestamp")
    return Alloc(
        uid=meta.get("uid") or f"{ns}/{meta.get('name')}",
        namespace=ns,
        name=meta.get("name") or "",
        app_id=_lookup(meta, APP_KEYS) or f"yunikorn-{ns}-autogen",
        queue_name=_lookup(meta, QUEUE_KEYS),
        res=of_pod(pod),
        priority=int(spec.get("priority") or 0),
        allow_preempt_self=allow_preempt_self(pod, classes),
        allow_preempt_other=spec.get("preemptionPolicy") != "Never",
        required_node=required_node(pod),
        create_time=float(int(parse_timestamp(created) or 0.0)) if created else 0.0,
        pod=pod,
        node=spec.get("nodeName") or "",
    )
