"""``GET /metrics``: the apiserver's, the scheduler's and YuniKorn mode's metrics in the
Prometheus text format, under upstream's names, so upstream dashboards and queries work
unchanged.

Owns ``Metrics``, one set of metrics in a ``CollectorRegistry`` of its own (never the
process-wide one, so tests and several servers in one process do not collide), and the
labels of a request as upstream spells them (``request_verb``, ``request_labels``,
``storage_objects``). ``handler.py`` calls ``observe_request`` once per request with the
labels ``request_labels`` gives and the wall-clock seconds it took, and answers
``GET /metrics`` with ``render()`` as ``CONTENT_TYPE_LATEST``. The object counts, the
scheduler's counters and YuniKorn mode's queues are not pushed here: ``Metrics`` calls
``storage``, ``scheduler`` and ``yunikorn`` at every scrape, so a scrape shows them as they
are at that moment. The ``yunikorn_*`` families are built in ``yunikorn.py``.

What each metric is, against upstream (kube-apiserver and kube-scheduler, 1.3x):

Exact
  ``apiserver_request_total{verb,resource,code}``: every request observed, the verb
  normalised as upstream does (``request_verb``). Upstream has more labels (group,
  version, subresource, scope, component, dry_run); kubemu keeps these three, so a request
  to a subresource (``pods/binding``) counts under its resource (``pods``), as a sum over
  upstream's ``subresource`` label would.
  ``apiserver_request_duration_seconds{verb,resource}``: the wall-clock time the caller
  measured, in upstream's buckets. As upstream, a WATCH lasts as long as its stream.
  ``apiserver_storage_objects{resource}``: the objects stored per resource (upstream's
  group-resource label: ``pods``, ``deployments.apps``), read at the scrape; upstream's
  is refreshed periodically, so kubemu's is, if anything, fresher.
  ``scheduler_schedule_attempts_total{result,profile}``: from the scheduler's cumulative
  counters, with upstream's meaning: ``scheduled`` is a pod whose bind went through,
  ``error`` includes the binds the apiserver refused (kubemu's ``bindFailures`` and
  ``bindConflicts``, which its ``scheduled`` counter counted when the bind was sent).
  A bind still in flight counts as scheduled (upstream counts it when the bind returns).

Approximate
  ``profile`` is always ``default-scheduler``: the scheduler counts over all its profiles.
  ``scheduler_preemption_attempts_total``: upstream counts every run of DefaultPreemption's
  PostFilter, that is every attempt rejected by the filters; kubemu reports its
  ``unschedulable`` attempts, which also counts the rare rejections at Reserve or Permit
  and the rejections in a profile with preemption disabled. The preemptions that
  nominated a node are ``scheduler_preemption_victims_count``.
  ``scheduler_preemption_victims`` (histogram): the scheduler keeps only the total of
  preemptions and of victims, not each preemption's victims. At each scrape the new
  preemptions are observed with the new victims spread evenly among them, so ``_count``
  (preemptions that nominated a node) and ``_sum`` (victims) are exact; the buckets are
  exact when at most one preemption happens between scrapes. Counters that go down (a
  restarted scheduler whose counts were not carried over) are taken as counting from zero.
  ``scheduler_pending_pods{queue}``: the scheduler exposes only its total of pending pods
  (``pending``), reported under ``queue="active"``; a view that carries
  ``pendingQueues`` (``{"active": n, "backoff": n, "unschedulable": n, "gated": n}``) is
  reported queue by queue instead.

Registered, never observed
  ``scheduler_scheduling_attempt_duration_seconds{result,profile}`` and
  ``scheduler_pod_scheduling_sli_duration_seconds{attempts}``: the scheduler does not time
  its attempts (in emulated time an attempt takes none) nor expose when a pod entered its
  queue, so these show their HELP and TYPE and no series. ``Metrics`` keeps them as
  attributes for a caller that can measure them.

YuniKorn mode, against Apache YuniKorn core 1.5 and later (queue metrics with a ``queue``
label; 1.8 dropped the older per-queue names); present only while YuniKorn mode runs, read
from its ``inspect()`` view:

Exact
  ``yunikorn_queue_resource{queue,state,resource}`` (gauge): per queue, its full path in
  ``queue``; ``state`` one of ``guaranteed``, ``max``, ``allocated``, ``pending``,
  ``preempting``; one series per resource type in YuniKorn's units (``vcore`` in
  millicores, ``memory`` in bytes, ``pods``). Differences in the edges only: upstream keeps
  a resource type it has seen at 0 once it is gone and also reports ``maxRunningApps``;
  kubemu shows what the queue holds at the scrape, so an absent type has no series.

Approximate
  ``yunikorn_queue_app{queue,state}`` (gauge): only ``state="running"``, the queue's
  ``runningApps``: applications with at least one placed pod. Upstream tracks every
  application state (new, accepted, completing, ...) and calls an application running from
  its first allocation until it starts completing, which is close but not the same.
  ``yunikorn_scheduler_container_allocation_attempt_total{state}``: only
  ``state="allocated"``, from the view's ``scheduled``. Upstream also counts ``rejected``,
  ``error`` and ``released``. ``scheduled`` goes down by one when the apiserver refuses a
  bind (the pod is an ask again); it carries across the component's restarts on the local
  runtime and starts from zero on Ray, which a Prometheus ``rate()`` reads as a counter reset.

kubemu's own, in upstream's namespace
  ``yunikorn_scheduler_preemption_victims_total``: allocations chosen as preemption
  victims (general, DaemonSet and quota preemption), from the view's ``preemptions``.
  Upstream exports no such count (only how long its preemption checks take).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from itertools import accumulate
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from ..api.errors import NotFound
from ..api.kinds import RESOURCES, Resource
from .controllermetrics import ControllersCollector, ControllersView
from .paths import group_version, target
from .yunikorn import YuniKornCollector, YuniKornView

# The text format generate_latest writes, as kube-apiserver serves it; prometheus_client's
# own CONTENT_TYPE_LATEST names version 1.0.0, which older scrapers do not all accept.
CONTENT_TYPE_LATEST = "text/plain; version=0.0.4; charset=utf-8"
PROFILE = "default-scheduler"
APPLY = "application/apply-patch+yaml"
# Upstream reports requests to these subresources as CONNECT, whatever their method.
CONNECT_SUBRESOURCES = frozenset({"attach", "exec", "log", "portforward", "proxy"})


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Prometheus' ExponentialBuckets: ``count`` upper bounds from ``start``, each ``factor`` times the last."""
    return tuple(start * factor**i for i in range(count))


# Upstream's buckets (k8s.io/apiserver endpoints/metrics, pkg/scheduler/metrics).
REQUEST_BUCKETS = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    15,
    20,
    30,
    45,
    60,
)
ATTEMPT_BUCKETS = exponential_buckets(0.001, 2, 15)
SLI_BUCKETS = exponential_buckets(0.01, 2, 20)
VICTIM_BUCKETS = exponential_buckets(1, 2, 7)

Storage = Callable[[], Mapping[str, int]]
SchedulerView = Callable[[], Mapping[str, Any] | None]


# -- labels ----------------------------------------------------------------------------------
def request_verb(method: str, is_list: bool, is_watch: bool, *, content_type: str = "", subresource: str = "") -> str:
    """Upstream's ``verb`` label for a request: GET on a collection is LIST, a GET with a
    true ``watch`` parameter is WATCH, DELETE on a collection is DELETECOLLECTION, a PATCH
    carrying a server-side apply body is APPLY, a request to a streaming subresource
    (log, exec, ...) is CONNECT, and a method upstream does not know is ``other``."""
    m = method.upper()
    if subresource in CONNECT_SUBRESOURCES:
        return "CONNECT"
    if m in ("GET", "HEAD"):
        return "WATCH" if is_watch else "LIST" if is_list else "GET"
    if m == "PATCH" and content_type.split(";")[0].strip().lower() == APPLY:
        return "APPLY"
    if m == "DELETE":
        return "DELETECOLLECTION" if is_list else "DELETE"
    if m in ("POST", "PUT", "PATCH"):
        return m
    return "other"


def request_labels(method: str, path: str, query: Mapping[str, str], content_type: str = "") -> tuple[str, str]:
    """(verb, resource) of a request: the resource is the plural the path names (``pods``
    for ``pods/binding`` too), "" for a path that names none (discovery, ``/version``,
    ``/metrics``, an unknown path), as upstream labels a non-resource request."""
    watch = query.get("watch")
    # Upstream's reading of a boolean parameter: present and neither "0" nor "false".
    is_watch = watch is not None and watch.lower() not in ("0", "false")
    gv = group_version(path)
    if gv is not None and gv[2]:
        try:
            t = target(*gv)
        except NotFound:
            pass
        else:
            verb = request_verb(method, not t.name, is_watch, content_type=content_type, subresource=t.subresource)
            return verb, t.resource.plural
    return request_verb(method, False, is_watch, content_type=content_type), ""


def resource_label(r: Resource) -> str:
    """Upstream's group-resource string: ``pods``, ``deployments.apps``."""
    return f"{r.plural}.{r.group}" if r.group else r.plural


def storage_objects(count: Callable[[str], int]) -> dict[str, int]:
    """Objects stored per resource, for every kind kubemu serves, keyed by upstream's label;
    ``count(kind)`` is how many objects of a kind are stored (``APIServer.count``)."""
    return {resource_label(r): count(r.kind) for r in RESOURCES}


# -- collectors ---------------------------------------------------------------------------------
class _WithoutCreated:
    """prometheus_client's own metrics, without their ``_created`` series: upstream's Go
    client exports none, and turning them off in prometheus_client is process-wide."""

    def __init__(self, *metrics: Counter | Histogram):
        self._metrics = metrics

    def describe(self) -> Iterable[Metric]:
        for m in self._metrics:
            yield from m.describe()

    def collect(self) -> Iterable[Metric]:
        for m in self._metrics:
            for family in m.collect():  # a new family at every call: changing it is safe
                family.samples = [s for s in family.samples if not s.name.endswith("_created")]
                yield family


class _StorageCollector:
    """``apiserver_storage_objects``, read from ``storage`` at every scrape."""

    def __init__(self, storage: Storage):
        self._storage = storage

    @staticmethod
    def _family() -> GaugeMetricFamily:
        return GaugeMetricFamily(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            labels=("resource",),
        )

    def describe(self) -> Iterable[Metric]:
        return [self._family()]

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        for resource, n in sorted(self._storage().items()):
            family.add_metric([resource], n)
        return [family]


class VictimsHistogram:
    """``scheduler_preemption_victims`` rebuilt from the scheduler's cumulative counts of
    preemptions and victims: each call observes the preemptions since the last one, the
    new victims spread as evenly as integers allow (see the module docstring)."""

    def __init__(self) -> None:
        self.counts = [0] * (len(VICTIM_BUCKETS) + 1)  # per bucket, not cumulative; the last is +Inf
        self.sum = 0
        self._seen = (0, 0)

    def update(self, preemptions: int, victims: int) -> None:
        p0, v0 = self._seen
        if preemptions < p0 or victims < v0:
            p0, v0 = 0, 0  # a new scheduler instance, counting from zero
        self._seen = (preemptions, victims)
        new, killed = preemptions - p0, victims - v0
        if new <= 0:
            return
        each, more = divmod(killed, new)
        self._observe(each, new - more)
        self._observe(each + 1, more)
        self.sum += killed

    def _observe(self, victims: int, times: int) -> None:
        self.counts[bisect_left(VICTIM_BUCKETS, victims)] += times

    def family(self) -> HistogramMetricFamily:
        cumulative = list(accumulate(self.counts))
        buckets = [(floatToGoString(le), float(n)) for le, n in zip(VICTIM_BUCKETS, cumulative)]
        buckets.append(("+Inf", float(cumulative[-1])))
        return HistogramMetricFamily(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=buckets,
            sum_value=float(self.sum),
        )


def _n(view: Mapping[str, Any], key: str) -> int:
    v = view.get(key)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def attempt_results(view: Mapping[str, Any]) -> dict[str, int]:
    """The scheduler's counters as upstream's ``result`` label counts them: a refused bind
    is an error, not a scheduled pod."""
    refused = _n(view, "bindFailures") + _n(view, "bindConflicts")
    return {
        "scheduled": max(_n(view, "scheduled") - refused, 0),
        "unschedulable": _n(view, "unschedulable"),
        "error": _n(view, "errors") + refused,
    }


def pending_queues(view: Mapping[str, Any]) -> dict[str, int]:
    """Pending pods per queue: ``pendingQueues`` when the view has it, else the total as active."""
    queues = view.get("pendingQueues")
    if isinstance(queues, Mapping):
        return {str(q): int(n) for q, n in queues.items()}
    return {"active": _n(view, "pending")} if "pending" in view else {}


class _SchedulerCollector:
    """The scheduler's metrics derived from its cumulative counters, read from ``scheduler``
    at every scrape (None: no scheduler runs, and only the victims histogram, which is kept
    here, is shown)."""

    def __init__(self, scheduler: SchedulerView):
        self._scheduler = scheduler
        self._victims = VictimsHistogram()
        self._lock = threading.Lock()  # scrapes may come from several threads

    @staticmethod
    def _families() -> tuple[CounterMetricFamily, CounterMetricFamily, GaugeMetricFamily]:
        return (
            CounterMetricFamily(
                "scheduler_schedule_attempts_total",
                "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
                "scheduled, while 'error' means an internal scheduler problem.",
                labels=("result", "profile"),
            ),
            CounterMetricFamily(
                "scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now"
            ),
            GaugeMetricFamily(
                "scheduler_pending_pods",
                "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
                "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods "
                "that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable "
                "pods that the scheduler never attempted to schedule because they are gated.",
                labels=("queue",),
            ),
        )

    def describe(self) -> Iterable[Metric]:
        return [*self._families(), VictimsHistogram().family()]

    def collect(self) -> Iterable[Metric]:
        view = self._scheduler()
        attempts, preemption_attempts, pending = self._families()
        with self._lock:
            if view is not None:
                for result, n in attempt_results(view).items():
                    attempts.add_metric([result, PROFILE], n)
                preemption_attempts.add_metric([], _n(view, "unschedulable"))
                for queue, n in sorted(pending_queues(view).items()):
                    pending.add_metric([queue], n)
                self._victims.update(_n(view, "preemptions"), _n(view, "victims"))
            victims = self._victims.family()
        return [attempts, preemption_attempts, pending, victims]


# -- the metrics of one server ------------------------------------------------------------------
def _no_objects() -> Mapping[str, int]:
    return {}


def _no_scheduler() -> Mapping[str, Any] | None:
    return None


_no_yunikorn = _no_scheduler


class Metrics:
    """The metrics one front end serves. ``storage()`` gives the objects stored per resource
    (``storage_objects``), ``scheduler()`` the scheduler's view (its ``inspect()`` dict: the
    counters in ``Scheduler.stats`` and ``pending``; None without a scheduler),
    ``yunikorn()`` the YuniKorn-mode scheduler's (None when it does not run); all are
    called at every scrape. Counters handed in should be the run's (carried across
    scheduler restarts, as ``Cluster.scheduler_stats`` does) so they never go down."""

    def __init__(
        self,
        storage: Storage = _no_objects,
        scheduler: SchedulerView = _no_scheduler,
        yunikorn: YuniKornView = _no_yunikorn,
        controllers: ControllersView | None = None,  # the controller manager's view: controllermetrics.py
    ):
        self.registry = CollectorRegistry()
        self._requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, resource and HTTP response code.",
            ("verb", "resource", "code"),
            registry=None,
        )
        self._durations = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb and resource.",
            ("verb", "resource"),
            buckets=REQUEST_BUCKETS,
            registry=None,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ("result", "profile"),
            buckets=ATTEMPT_BUCKETS,
            registry=None,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
            "involve multiple scheduling attempts.",
            ("attempts",),
            buckets=SLI_BUCKETS,
            registry=None,
        )
        self.registry.register(_WithoutCreated(self._requests, self._durations))
        self.registry.register(_StorageCollector(storage))
        self.registry.register(_SchedulerCollector(scheduler))
        self.registry.register(_WithoutCreated(self.scheduling_attempt_duration, self.pod_scheduling_sli_duration))
        self.registry.register(YuniKornCollector(yunikorn))
        if controllers is not None:  # a front end with controllers behind it
            self.registry.register(ControllersCollector(controllers))

    def observe_request(self, verb: str, resource: str, code: int, seconds: float) -> None:
        """One request answered: ``verb`` and ``resource`` as ``request_labels`` gives them,
        ``code`` the HTTP status sent, ``seconds`` the wall-clock time it took."""
        self._requests.labels(verb, resource, str(code)).inc()
        self._durations.labels(verb, resource).observe(max(seconds, 0.0))

    def render(self) -> bytes:
        """Every metric in the Prometheus text format (``CONTENT_TYPE_LATEST``)."""
        return generate_latest(self.registry)
