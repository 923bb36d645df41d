"""The controller-manager's loop logic: which controller hears which event, and the writes.

Owns the routing of events to the controllers and the merge of their writes (their order
as requests is ``writes.ORDER``: ``writes.ranked``). The controller-manager component
(``component.py``) is the only caller: it feeds each watch batch to
``ControllerManager.on_events``, reports refused requests through ``on_failed``, calls
``sync(now)`` and asks to run again at ``next_wakeup()``.

Every controller is a ``Reconciler`` (``reconciler.py``: the kinds it watches and the keys
an event names, declared indexers and cache features, ``reconcile(key, now) -> Outcome``)
in a ``ReconcilerStep``, which owns its work queue and routes a refused write back to the
key that asked for it. The step is the shape the manager drives (``Controller``), every
part of it declared, none looked up by name:

- ``kinds``: the kinds of watch events it wants (a tuple of kind names);
- ``on_event(kind, event_type, obj, now)``: remember what changed (no writes here);
- ``takes_records`` / ``on_pod_record``: pod events as the shared ``podrecord.PodRecord``
  (the reconciler's pod watch declares ``Watches.records``);
- ``on_lease_head``: a Lease judged by its head (``Watches.names_only``, ``fold`` or
  ``heads``), False when it needs the decoded object;
- ``parking``: pods kept aside until its first owner (``ReconcilerStep(parking=...)``), or None;
- ``sync(now) -> Writes``: everything it wants written now; a returned write is assumed
  sent, and the watch event that follows it is how the controller learns the outcome;
- ``on_failed(request, error, now)``: a refused request (each ignores what is not its
  own; the reconciler reads its own from ``ObjectCache.refused``);
- ``next_wakeup() -> float | None``: the emulated time it next needs a ``sync`` although
  no event came, or None; ``name`` and ``metrics()``: its counters.

The manager builds one record per pod event and hands it to every controller that keeps
records, so a pod costs its bytes and a record, not a decoded dict per such controller; it
keeps one parked copy of the pods for every parked controller.

Adding a controller is a ``ReconcilerStep`` in ``default_controllers``; its writes are
typed requests (``cluster/api/requests.py``), placed by ``writes.rank``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ..api import kindspec
from ..api.codec import decode
from ..api.errors import StatusError
from ..api.eventcorrelation import EventCorrelator
from ..api.leasehead import read_lease_head
from ..api.requests import Request
from ..runtime.component import WatchEvent
from .batchjob import JobController
from .cronjobs import CronJobReconciler
from .daemonset import DaemonSetController
from .deployment import DeploymentController
from .disruption import DisruptionReconciler
from .endpoints import service_endpoint_steps
from .garbagecollector import GarbageCollector
from .hpa import HorizontalPodAutoscalerReconciler
from .jobttl import TTLAfterFinishedReconciler
from .namespace import NamespaceReconciler
from .nodelifecycle import node_lifecycle_step
from .nodetaints import NodeTaintReconciler
from .ownedpods import ParkedPods, pod_key
from .persistentvolume import PersistentVolumeStep
from .podgc import PodGCReconciler
from .podrecord import PodRecord, PodRecords
from .reconciler import Parking, ReconcilerStep
from .replicaset import ReplicaSetController
from .replicationcontroller import ReplicationControllerController
from .resourcequota import ResourceQuotaStep
from .serviceaccount import RootCAReconciler, ServiceAccountReconciler
from .statefulset import StatefulSetController
from .tainteviction import TaintEvictionReconciler, by_node
from .writes import Writes, ranked


class Controller(Protocol):
    """What the manager drives (the module docstring); a ``ReconcilerStep`` is one."""

    kinds: tuple[str, ...]
    takes_records: bool

    @property
    def name(self) -> str: ...

    @property
    def parking(self) -> Parking | None: ...

    def on_event(self, kind: str, event_type: str, obj: dict[str, Any], now: float) -> None: ...

    def on_pod_record(self, event_type: str, rec: Any, now: float) -> None: ...

    def on_lease_head(self, event_type: str, head: Any, now: float) -> bool: ...

    def sync(self, now: float) -> Writes: ...

    def on_failed(self, request: Request, error: StatusError, now: float) -> None: ...

    def next_wakeup(self) -> float | None: ...

    def metrics(self) -> dict[str, Any]: ...


LIST_ORDER = kindspec.ordered("list_order")  # each kind's place is in its spec (``kinds.py``)


def default_controllers(job_run_seconds: float | None = 5.0) -> list[Controller]:
    """``job_run_seconds``: how long a Job's pod runs when its template does not say."""
    return [
        node_lifecycle_step(),
        ReconcilerStep(NodeTaintReconciler, sort_keys=True),
        ReconcilerStep(TaintEvictionReconciler, sort_keys=True, records=PodRecords(), order=by_node),
        ReconcilerStep(PodGCReconciler, records=PodRecords()),
        # Without budgets nothing reads the pods, and most clusters have none.
        ReconcilerStep(DisruptionReconciler, sort_keys=True, parking=ParkedPods()),
        DeploymentController(),
        ReplicaSetController(),
        ReplicationControllerController(),  # issue 40
        DaemonSetController(),
        StatefulSetController(),
        JobController(default_run_seconds=job_run_seconds),
        ReconcilerStep(TTLAfterFinishedReconciler, sort_keys=True),
        ReconcilerStep(CronJobReconciler, sort_keys=True),
        ReconcilerStep(
            HorizontalPodAutoscalerReconciler,
            sort_keys=True,
            parking=ParkedPods(),
            unparked_by=("HorizontalPodAutoscaler",),
        ),
        GarbageCollector(),
        ReconcilerStep(NamespaceReconciler, sort_keys=True),
        ResourceQuotaStep(),  # issue 40
        ReconcilerStep(ServiceAccountReconciler, sort_keys=True),  # issue 40: ServiceAccounts, root CA, endpoints
        ReconcilerStep(RootCAReconciler, sort_keys=True),
        *service_endpoint_steps(),
        PersistentVolumeStep(),  # issue 40: volumes
    ]


def fresh(ev: WatchEvent) -> dict[str, Any]:
    """The event's object decoded from its bytes and not kept by the event (reading
    ``ev.obj`` would keep it there until the batch goes); a made-up DELETED has no bytes."""
    if ev.raw is None:
        return ev.obj
    obj: dict[str, Any] = decode(ev.raw)
    return obj


class ControllerManager:
    """Routes watch events to the controllers that want them and merges their writes."""

    def __init__(self, controllers: list[Controller] | list[ReconcilerStep] | None = None) -> None:
        self.controllers: list[Controller] = list(default_controllers() if controllers is None else controllers)
        self._recorder = EventCorrelator()  # client-go's recorder: counts, combines and rations events
        self._by_kind: dict[str, list[Controller]] = {}
        for c in self.controllers:
            for kind in c.kinds:
                self._by_kind.setdefault(kind, []).append(c)
        # Controllers with nothing to control yet (no owner, no budget) hear no pod events:
        # the manager keeps the latest copy of each pod once for all of them (its record,
        # when controllers keep records: a decoded dict is five times the record's bytes),
        # and a parked controller reads them when its first owner comes (``ParkedPods``).
        parkers = [c for c in self.controllers if isinstance(c.parking, ParkedPods)]
        self._parkers = [p for c in parkers if isinstance(p := c.parking, ParkedPods)]
        # Only an event a parked controller hears can end its parking (its first owner).
        self._unparking_kinds = {k for c in parkers for k in c.kinds if k != "Pod"}
        self._latest: dict[Any, Any] | None = {} if self._parkers else None
        for parking in self._parkers:
            parking.share(self._latest if self._latest is not None else {})
        self._lease_takers = self._by_kind.get("Lease", [])
        takes_records = any(c.takes_records for c in self._by_kind.get("Pod", ()))
        self._records = PodRecords() if takes_records else None
        self._pod_routes: list[tuple[Any, bool]] = []
        self._reroute()

    def _reroute(self) -> None:
        """Who hears pod events now, and how (a record or the dict); once no controller is
        parked, the shared copy goes."""
        self._pod_routes = [
            (c.on_pod_record, True) if c.takes_records else (c.on_event, False)
            for c in self._by_kind.get("Pod", ())
            if not (c.parking is not None and c.parking.on)
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
        """Kinds the watch need not decode: all of them. The manager decodes each event
        from its bytes as it routes it (a Lease only when a controller cannot judge it by
        its head), so one decoded object lives at a time, not a whole batch's: at 10,000
        nodes a batch of decoded Nodes left the process about 10 KB a node larger, freed
        but held by the allocator around what the controllers keep."""
        return frozenset(self._by_kind)

    def on_events(self, events: Iterable[Any], now: float) -> None:
        """``events``: the batch's ``WatchEvent``s (kind, type, object, encoded bytes), or
        (kind, type, object, bytes or None) tuples."""
        by_kind = self._by_kind
        for ev in events:
            if isinstance(ev, WatchEvent):
                kind, event_type, raw = ev.kind, ev.type, ev.raw
                obj = None if kind == "Lease" and raw is not None else fresh(ev)
            else:
                kind, event_type, obj, raw = ev
            if obj is None:
                self._on_lease(ev, now)
            elif kind == "Pod":
                self._on_pod(event_type, obj, raw, now)
                continue
            else:
                for c in by_kind.get(kind, ()):
                    c.on_event(kind, event_type, obj, now)
            if self._latest is not None and kind in self._unparking_kinds:
                self._reroute()  # a first owner may have ended a controller's parking

    def _on_lease(self, ev: WatchEvent, now: float) -> None:
        """A Lease event with its bytes: by its head where a controller can judge it so
        (10,000 renewals a second at 100,000 nodes), else decoded."""
        head = read_lease_head(ev.raw) if ev.type != "DELETED" else None  # type: ignore[arg-type]
        obj = None
        for c in self._lease_takers:
            if head is None or not c.on_lease_head(ev.type, head, now):
                if obj is None:
                    obj = fresh(ev)
                c.on_event("Lease", ev.type, obj, now)

    def _on_pod(self, event_type: str, obj: dict[str, Any], raw: bytes | None, now: float) -> None:
        latest, rec = self._latest, None
        if self._records is not None:
            # The parked copy is the record every keeper got (its bytes are kept anyway);
            # the next record of the pod takes its key, so one tuple serves every table.
            prior = latest.get(pod_key(obj)) if latest is not None else None
            rec = self._records.make(obj, raw, prior.key if isinstance(prior, PodRecord) else None)
            if event_type == "DELETED":
                self._records.forget(rec.key)
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
        """Every controller's writes as typed requests (``out.requests``) in landing order,
        each row's in controller order, and their events (``out.events``), correlated."""
        out = Writes()
        pairs: list[tuple[int, Request]] = []
        for c in self.controllers:
            w = c.sync(now)
            if w.events:
                out.events += w.events
            pairs += ranked(w)
        pairs.sort(key=lambda pair: pair[0])  # stable: controller order within a row
        out.requests = [req for _, req in pairs]
        if out.events:
            out.events = self._recorder.correlate(out.events, now)
        return out

    def next_wakeup(self) -> float | None:
        times = [t for t in (c.next_wakeup() for c in self.controllers) if t is not None]
        return min(times, default=None)

    def metrics(self) -> dict[str, dict[str, Any]]:
        """Each reconciler's work-queue and reconcile counters (``ReconcilerStep.metrics``),
        by controller name."""
        return {c.name: c.metrics() for c in self.controllers}

    def on_failed(self, request: Request, error: StatusError, now: float) -> None:
        """A request the apiserver refused with ``error``: tell every controller (each
        ignores requests that are not its own)."""
        for c in self.controllers:
            c.on_failed(request, error, now)
