"""The controller-manager's loop logic: which controller hears which event, and the writes.

Owns the contract every controller in this package keeps and the routing of events to
them (the ``Writes`` a sync returns and their order as requests are in ``writes``). The
controller-manager component (``component.py``) is the only caller: it feeds each watch
batch to ``ControllerManager.on_events``, reports refused requests through ``on_failed``,
calls ``sync(now)`` and asks to run again at ``next_wakeup()``.

A controller is any object with:

- ``kinds``: the kinds of watch events it wants (a tuple of kind names);
- ``on_event(kind, event_type, obj, now)``: remember what changed (no writes here);
- ``sync(now) -> Writes``: everything it wants written now; a returned write is assumed
  sent, and the watch event that follows it is how the controller learns the outcome;
- ``next_wakeup() -> float | None``: the emulated time it next needs a ``sync`` although
  no event came (a grace period or a tolerationSeconds deadline), or None.

A controller that keeps every pod but reads only a few fields of each may have
``on_pod_record(event_type, record, now)``: it then hears pod events as a
``podrecord.PodRecord`` (those fields and the pod's encoded bytes) instead of through
``on_event``. The manager builds one record per pod event and hands the same one to each
such controller (pod GC and the taint manager), so a pod costs its bytes and a record, not
a decoded dict (about five times the bytes) per controller that keeps it.

Optionally, ``on_create_failed`` / ``on_update_failed`` / ``on_delete_failed`` /
``on_status_failed`` / ``on_cascade_failed`` / ``on_patch_failed`` (pods and cascades) and
``on_object_create_failed`` / ``on_object_update_failed`` (other kinds) hear of items the
apiserver refused (``on_failed`` routes them; see
``writes.failure_hook``). Adding a controller is adding it to ``default_controllers``, and a
``Writes`` field plus an ``ORDER`` row in ``writes`` if it needs a new kind of write.
"""

from __future__ import annotations

from ..api.errors import StatusError
from ..api.eventcorrelation import EventCorrelator
from ..api.leasehead import read_lease_head
from ..api.requests import Request
from ..runtime.component import WatchEvent
from .batchjob import JobController
from .cronjobs import CronJobController
from .daemonset import DaemonSetController
from .deployment import DeploymentController
from .disruption import DisruptionController
from .garbagecollector import GarbageCollector
from .hpa import HorizontalPodAutoscalerController
from .jobttl import TTLAfterFinishedController
from .namespace import NamespaceController
from .nodelifecycle import NodeLifecycleController
from .nodetaints import NodeTaintController
from .ownedpods import ParkedPods, pod_key
from .podgc import PodGC
from .podrecord import PodRecord, PodRecords
from .reconciler import ReconcilerStep
from .replicaset import ReplicaSetController
from .statefulset import StatefulSetController
from .tainteviction import TaintEvictionController
from .writes import Writes, failure_hook


class NodeTaintStep:
    """Taint Nodes by Condition (``nodetaints``) in the controller shape: the latest copy of
    each node seen since the last sync is checked once."""

    kinds = ("Node",)

    def __init__(self) -> None:
        self.controller = NodeTaintController()
        self._seen: dict[str, tuple[str, dict]] = {}

    def on_event(self, kind: str, event_type: str, obj: dict, now: float) -> None:
        self._seen[(obj.get("metadata") or {}).get("name", "")] = (event_type, obj)

    def sync(self, now: float) -> Writes:
        out = Writes()
        for name in sorted(self._seen):
            patch = self.controller.on_node(*self._seen[name])
            if patch is not None:
                out.node_taints.append(patch)
        self._seen.clear()
        return out

    def next_wakeup(self) -> float | None:
        return None


class DisruptionStep:
    """The disruption controller in the controller shape; a write carries the PDB's uid."""

    kinds = ("PodDisruptionBudget", "Pod")

    def __init__(self) -> None:
        self.controller = DisruptionController()
        # Without budgets nothing reads the pods, and most clusters have none (the
        # controller-manager used to not even watch pods then).
        self._parked = ParkedPods()

    @property
    def parking(self) -> ParkedPods:
        return self._parked

    def on_event(self, kind: str, event_type: str, obj: dict, now: float) -> None:
        if kind == "Pod":
            if not self._parked.park(event_type, obj):
                self.controller.on_pod(event_type, obj)
            return
        for pod in self._parked.release():
            self.controller.on_pod("ADDED", pod)
        self.controller.on_pdb(event_type, obj)

    def sync(self, now: float) -> Writes:
        out = Writes()
        for ns, name, status in self.controller.sync(now):
            uid = ((self.controller.pdb(ns, name) or {}).get("metadata") or {}).get("uid", "")
            out.pdb_status.append((ns, name, uid, status))
        return out

    def next_wakeup(self) -> float | None:
        return self.controller.next_recheck()


LIST_ORDER = (
    "Node",
    "Lease",
    "PodDisruptionBudget",
    "Deployment",
    "ReplicaSet",
    "DaemonSet",
    "StatefulSet",
    "CronJob",
    "Job",
    "Pod",
)


def default_controllers(job_run_seconds: float | None = 5.0) -> list:
    """``job_run_seconds``: how long a Job's pod runs when its template does not say."""
    return [
        NodeLifecycleController(),
        NodeTaintStep(),
        TaintEvictionController(),
        PodGC(),
        DisruptionStep(),
        DeploymentController(),
        ReplicaSetController(),
        DaemonSetController(),
        StatefulSetController(),
        JobController(default_run_seconds=job_run_seconds),
        TTLAfterFinishedController(),
        CronJobController(),
        HorizontalPodAutoscalerController(),
        GarbageCollector(),
        NamespaceController(),
    ]


class ControllerManager:
    """Routes watch events to the controllers that want them and merges their writes."""

    def __init__(self, controllers: list | None = None):
        self.controllers = default_controllers() if controllers is None else controllers
        self._recorder = EventCorrelator()  # client-go's recorder: counts, combines and rations events
        self._by_kind: dict[str, list] = {}
        self._steps = [c for c in self.controllers if isinstance(c, ReconcilerStep)]
        for c in self.controllers:
            for kind in c.kinds:
                self._by_kind.setdefault(kind, []).append(c)
        # Controllers with nothing to control yet (no owner, no budget) hear no pod events:
        # the manager keeps the latest copy of each pod once for all of them (its record,
        # when controllers keep records: a decoded dict is five times the record's bytes),
        # and a parked controller reads them when its first owner comes (``ParkedPods``).
        parkers = [c for c in self.controllers if isinstance(getattr(c, "parking", None), ParkedPods)]
        self._parkers = [c.parking for c in parkers]
        # Only an event a parked controller hears can end its parking (its first owner).
        self._unparking_kinds = {k for c in parkers for k in c.kinds if k != "Pod"}
        self._latest: dict | None = {} if self._parkers else None
        for parking in self._parkers:
            parking.share(self._latest if self._latest is not None else {})
        # (controller, its on_lease_head or None) for every controller hearing Leases.
        self._lease_takers = [(c, getattr(c, "on_lease_head", None)) for c in self._by_kind.get("Lease", ())]
        takes_records = any(hasattr(c, "on_pod_record") for c in self._by_kind.get("Pod", ()))
        self._records = PodRecords() if takes_records else None
        self._pod_routes: list = []
        self._reroute()

    def _reroute(self) -> None:
        """Who hears pod events now, and how (a record or the dict); once no controller is
        parked, the shared copy goes."""
        self._pod_routes = [
            (c.on_pod_record, True) if hasattr(c, "on_pod_record") else (c.on_event, False)
            for c in self._by_kind.get("Pod", ())
            if not (getattr(c, "parking", None) and c.parking.on)
        ]
        if self._latest is not None and not any(p.on for p in self._parkers):
            self._latest = None

    @property
    def kinds(self) -> list[str]:
        """Every kind some controller watches, in list order: nodes and owners before pods,
        so a relist knows the nodes before it judges the pods bound to them and the owners
        before it counts their pods; kinds not in ``LIST_ORDER`` follow, first-wanted first."""
        return sorted(self._by_kind, key=lambda k: LIST_ORDER.index(k) if k in LIST_ORDER else len(LIST_ORDER))

    @property
    def lazy_kinds(self) -> frozenset[str]:
        """Kinds whose events the manager reads from their bytes first (the Lease, when every
        controller hearing Leases can judge one by its head): the watch need not decode them."""
        takers = self._lease_takers
        return frozenset(("Lease",)) if takers and all(by_head for _, by_head in takers) else frozenset()

    def on_events(self, events, now: float) -> None:
        """``events``: the batch's ``WatchEvent``s (kind, type, object, encoded bytes)."""
        by_kind = self._by_kind
        for ev in events:
            if isinstance(ev, WatchEvent) and ev.kind == "Lease" and ev.raw is not None:
                kind = ev.kind
                self._on_lease(ev, now)
            else:
                kind, event_type, obj, raw = ev
                if kind == "Pod":
                    self._on_pod(event_type, obj, raw, now)
                    continue
                for c in by_kind.get(kind, ()):
                    c.on_event(kind, event_type, obj, now)
            if self._latest is not None and kind in self._unparking_kinds:
                self._reroute()  # a first owner may have ended a controller's parking

    def _on_lease(self, ev: WatchEvent, now: float) -> None:
        """A Lease event with its bytes: by its head where a controller can judge it so
        (10,000 renewals a second at 100,000 nodes), else decoded."""
        head = read_lease_head(ev.raw) if ev.type != "DELETED" else None  # type: ignore[arg-type]
        for c, by_head in self._lease_takers:
            if head is None or by_head is None or not by_head(ev.type, head, now):
                c.on_event("Lease", ev.type, ev.obj, now)

    def _on_pod(self, event_type: str, obj: dict, raw: bytes | None, now: float) -> None:
        latest, rec = self._latest, None
        if self._records is not None:
            # The parked copy is the record every keeper got (its bytes are kept anyway);
            # the next record of the pod takes its key, so one tuple serves every table.
            prior = latest.get(pod_key(obj)) if latest is not None else None
            rec = self._records.make(obj, raw, prior.key if isinstance(prior, PodRecord) else None)
            if latest is not None:
                if event_type == "DELETED":
                    latest.pop(rec.key, None)
                else:
                    latest[rec.key] = rec
        elif latest is not None:
            if event_type == "DELETED":
                latest.pop(pod_key(obj), None)
            else:
                latest[pod_key(obj)] = obj
        for deliver, takes_record in self._pod_routes:
            if takes_record:
                deliver(event_type, rec, now)
            else:
                deliver("Pod", event_type, obj, now)

    def sync(self, now: float) -> Writes:
        out = Writes()
        for c in self.controllers:
            out.extend(c.sync(now))
        if out.events:
            out.events = self._recorder.correlate(out.events, now)
        return out

    def next_wakeup(self) -> float | None:
        times = [t for t in (c.next_wakeup() for c in self.controllers) if t is not None]
        return min(times, default=None)

    def on_failed(self, request: Request, error: StatusError, now: float) -> None:
        """A request the apiserver refused with ``error``: tell every controller that asks to
        hear of such failures (each ignores items that are not its own)."""
        for c in self._steps:
            c.on_failed(request, error, now)
        hook = failure_hook(request)
        if hook is None:
            return
        method, args = hook
        for c in self.controllers:
            report = getattr(c, method, None)
            if report is not None:
                report(*args, error, now)
