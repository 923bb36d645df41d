"""The HorizontalPodAutoscaler controller (autoscaling/v2; every metric source type).

Owns what upstream's ``pkg/controller/podautoscaler/horizontal.go`` does each sync period
read the target's scale (a Deployment, ReplicaSet or
StatefulSet in the HPA's namespace: ``spec.replicas`` and ``spec.selector``), compute a
proposal per metric (``hpasources``: Resource and ContainerResource from the selected pods'
usage, ``hpametrics``; Pods, Object and External fail as upstream fails with no metrics
adapter, kubemu serving none), take the largest, normalise
it (``hparecommend``: stabilisation, scale-up limit or ``behavior`` policies, min/max
clamp), scale the target when the count changes, and report ``status`` with the
AbleToScale / ScalingActive / ScalingLimited conditions, the ``SuccessfulRescale`` Event
and the Warning Events of each failure, with upstream's reasons and messages.

Who calls it: the controller manager runs ``HorizontalPodAutoscalerReconciler`` in a
``ReconcilerStep`` (``reconciler.py``): an HPA's events name its key; its targets and the
pods are only cached (upstream reads the scale and the pods afresh each period; until the
first HPA the pods are parked, ``ownedpods.ParkedPods``, as nothing reads them). A
reconcile evaluates an HPA that is due and returns the target with ``spec.replicas``
changed (an ``Update`` carrying the resourceVersion it was read at), its status and
Events; it looks again when the next period is due. A refused target update comes back as
the HPA's next reconcile (``ObjectCache.refused``): it writes the FailedUpdateScale
condition and a ``FailedRescale`` Event, and the following period tries again.

Metrics are kubemu's declared usage (``kubemu.io/cpu-usage`` / ``memory-usage``) evaluated
at the instant of the sync, where upstream's metrics-server averages over a scrape
window (15-30 s): an emulated HPA reacts to a ramp up to one window earlier.

An HPA, as a state table:

| state     | how it is left                                  | sync does                              |
|-----------|-------------------------------------------------|----------------------------------------|
| waiting   | ``due`` passes (first sight: due at once; then  | nothing                                |
|           | every ``sync_period`` after its last sync)      |                                        |
| due       | the sync evaluates it (-> waiting, due + 15 s)  | the reconcile above; status if changed |
| rescaling | the target's update is refused (the next sync   | (the target update is in ``updates``)  |
|           | reports it) or the next period comes            |                                        |
| deleted   | DELETED: its histories are forgotten            | nothing                                |

Deviation: the ``SuccessfulRescale`` Event and the status of a rescale are sent with the
target update, before its outcome is known; upstream sends them after the update
succeeded. A refusal is then reported as upstream reports it (FailedRescale, AbleToScale
False FailedUpdateScale, desiredReplicas and lastScaleTime as before) and its scale event
is taken out of the ``behavior`` history.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..api import codec
from ..api.events import make_event
from ..api.objects import labels_of, name_of, namespace_of, uid_of
from ..api.quantity import QuantityError, parse
from ..api.requests import Update, UpdateStatus
from ..api.selectors import LabelSelector, SelectorError
from ..clock import rfc3339
from . import hpametrics as hm
from . import hparecommend as rc
from .hpasources import MetricFailed, evaluate
from .ownedpods import error_text
from .reconciler import Indexer, Obj, ObjectCache, Outcome, Watches

Key = tuple[str, str]
TargetKey = tuple[str, str, str]  # (kind, namespace, name)
SYNC_PERIOD = 15.0
TARGET_RESOURCES = {"Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets"}
ABLE, ACTIVE, LIMITED = "AbleToScale", "ScalingActive", "ScalingLimited"
WARNING = "Warning"
DEFAULT_METRIC = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}


def _set_condition(conds: list[Obj], ctype: str, status: bool, reason: str, message: str, now: float) -> None:
    """Upstream's setCondition: the transition time moves only when the status does."""
    text = "True" if status else "False"
    for c in conds:
        if c.get("type") == ctype:
            break
    else:
        c = {"type": ctype}
        conds.append(c)
    if c.get("status") != text:
        c["lastTransitionTime"] = rfc3339(now)
    c.update(status=text, reason=reason, message=message)


def _status(
    obj: Obj, current: int, desired: int, metrics: list[Obj] | None, last_scale: str | None, conds: list[Obj]
) -> Obj:
    """A status as upstream's setStatus rebuilds it (its omitempty fields left out), with
    the generation acted on."""
    out: dict[str, Any] = {"desiredReplicas": desired}
    if current:
        out["currentReplicas"] = current
    if last_scale:
        out["lastScaleTime"] = last_scale
    if metrics:
        out["currentMetrics"] = metrics
    if conds:
        out["conditions"] = conds
    generation = (obj.get("metadata") or {}).get("generation")
    if generation:
        out["observedGeneration"] = generation
    return out


# A rescale to send: (current replicas, desired replicas, its reason, the metric statuses).
_Plan = tuple[int, int, str, list[Obj] | None]


class _Reconcile:
    """One evaluation of one HPA: the conditions it sets and the Events it records."""

    def __init__(self, obj: Obj, now: float, component: str) -> None:
        self.obj, self.now, self.component = obj, now, component
        self.original: Obj = obj.get("status") or {}
        self.conditions: list[Obj] = copy.deepcopy(self.original.get("conditions") or [])
        self.events: list[Obj] = []

    def condition(self, ctype: str, status: bool, reason: str, message: str) -> None:
        _set_condition(self.conditions, ctype, status, reason, message, self.now)

    def event(self, reason: str, message: str, type: str = "Normal") -> None:
        self.events.append(make_event(self.obj, reason, message, self.now, type=type, component=self.component))

    def status(self, current: int, desired: int, metrics: list[Obj] | None, rescaled: bool = False) -> Obj:
        last = rfc3339(self.now) if rescaled else self.original.get("lastScaleTime")
        return _status(self.obj, current, desired, metrics, last, self.conditions)

    def keep(self, current: int, metrics: list[Obj] | None) -> Obj:
        """The status when nothing is scaled: desiredReplicas as it was."""
        return self.status(current, int(self.original.get("desiredReplicas") or 0), metrics)


@dataclass
class _HPA:
    obj: Obj
    due: float
    recommendations: list[rc.Recommendation] = field(default_factory=list)
    up_events: list[rc.ScaleEvent] = field(default_factory=list)
    down_events: list[rc.ScaleEvent] = field(default_factory=list)
    # Its target's selector once seen (matches nothing before), to find HPAs sharing pods.
    selector: LabelSelector = field(default_factory=LabelSelector.nothing)
    evaluated: float | None = None

    @property
    def spec(self) -> Obj:
        return self.obj.get("spec") or {}


@dataclass
class _Rescale:
    """A target update in flight, and what to report if it is refused."""

    hpa: Key
    uid: str
    at: float
    desired: int
    reason: str
    failed_status: Obj  # the status upstream writes on failure, AbleToScale to be set
    events_before: tuple[list[rc.ScaleEvent], list[rc.ScaleEvent]]


def _in_namespace(pod: Obj) -> tuple[str]:
    return (namespace_of(pod),)


def _none(event_type: str, obj: Obj) -> tuple[()]:
    return ()  # only cached: read when an HPA is due


class HorizontalPodAutoscalerReconciler:
    """HorizontalPodAutoscalers: a due HPA evaluated, its writes returned."""

    name: ClassVar[str] = "horizontal-pod-autoscaler"
    COMPONENT = "horizontal-pod-autoscaler"
    watches: ClassVar[tuple[Watches, ...]] = (
        Watches("HorizontalPodAutoscaler"),
        *(Watches(kind, keys=_none) for kind in TARGET_RESOURCES),
        Watches("Pod", keys=_none),
    )
    indexers: ClassVar[tuple[tuple[str, str, Indexer], ...]] = (("Pod", "namespace", _in_namespace),)

    def __init__(
        self,
        cache: ObjectCache,
        *,
        sync_period: float = SYNC_PERIOD,
        tolerance: float = hm.TOLERANCE,
        downscale_stabilization: float = rc.DOWNSCALE_STABILIZATION,
        cpu_initialization_period: float = hm.CPU_INITIALIZATION_PERIOD,
        initial_readiness_delay: float = hm.INITIAL_READINESS_DELAY,
        configurable_tolerance: bool = False,  # upstream's alpha HPAConfigurableTolerance gate
    ) -> None:
        self.cache = cache
        self.sync_period, self.tolerance = sync_period, tolerance
        self.downscale_stabilization = downscale_stabilization
        self.readiness = hm.Readiness(cpu_initialization_period, initial_readiness_delay)
        self.configurable_tolerance = configurable_tolerance
        self._hpas: dict[Key, _HPA] = {}
        self._inflight: dict[TargetKey, _Rescale] = {}
        self._out = Outcome()

    def reconcile(self, key: Key, now: float) -> Outcome:
        obj = self.cache.get("HorizontalPodAutoscaler", *key)
        if obj is None:
            self._hpas.pop(key, None)
            self._drop_inflight(key)
            return Outcome()
        st = self._hpas.get(key)
        if st is None or uid_of(st.obj) != uid_of(obj):
            st = self._hpas[key] = _HPA(obj, due=now)  # evaluated at first sight
        else:
            st.obj = obj  # a spec change waits for the period, as upstream's rate-limited queue
        self._out = out = Outcome()
        for req, error in self.cache.refused(key):
            if isinstance(req, Update):
                self._refused(req.obj, error, now)
        if st.due <= now:
            self._reconcile(key, st, now)
        out.requeue_at = st.due
        return out

    def _drop_inflight(self, key: Key) -> None:
        for ref in [t for t, r in self._inflight.items() if r.hpa == key]:
            del self._inflight[ref]

    def _refused(self, obj: Obj, error: Any, now: float) -> None:
        """A target update of ours was refused: report it as upstream does."""
        rescale = self._inflight.pop((obj.get("kind", ""), namespace_of(obj), name_of(obj)), None)
        st = self._hpas.get(rescale.hpa) if rescale is not None else None
        if rescale is None or st is None or uid_of(st.obj) != rescale.uid:
            return
        text = error_text(error)
        status = rescale.failed_status
        msg = f"the HPA controller was unable to update the target scale: {text}"
        _set_condition(status.setdefault("conditions", []), ABLE, False, "FailedUpdateScale", msg, rescale.at)
        self._out.writes.append(UpdateStatus("HorizontalPodAutoscaler", *rescale.hpa, rescale.uid, status))
        message = f"New size: {rescale.desired}; reason: {rescale.reason}; error: {text}"
        self._out.events.append(
            make_event(st.obj, "FailedRescale", message, now, type=WARNING, component=self.COMPONENT)
        )
        if st.evaluated == rescale.at:  # upstream records a scale event only once it succeeded
            st.up_events, st.down_events = rescale.events_before

    # -- one HPA ---------------------------------------------------------------------------
    def _reconcile(self, key: Key, st: _HPA, now: float) -> None:
        st.due, st.evaluated = now + self.sync_period, now
        self._drop_inflight(key)
        r = _Reconcile(st.obj, now, self.COMPONENT)
        target, error = self._scale_target(st.obj)
        if target is None:
            r.event("FailedGetScale", error, WARNING)
            r.condition(
                ABLE,
                False,
                "FailedGetScale",
                f"the HPA controller was unable to get the target's current scale: {error}",
            )
            # desiredReplicas is always written (no omitempty upstream), 0 before any scale.
            status = {"desiredReplicas": 0, **r.original, "conditions": r.conditions}
            generation = (st.obj.get("metadata") or {}).get("generation")
            if generation:
                status["observedGeneration"] = generation
            self._finish(st, r, status)
            return
        r.condition(ABLE, True, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
        current = _replicas(target)
        if not st.recommendations:
            st.recommendations = [(current, now)]
        decision = self._decide(st, r, target, current)
        if decision is None:
            return
        desired, reason, metrics, rescale = decision
        if rescale:
            self._rescale(key, st, r, target, (current, desired, reason, metrics))
        else:
            desired = current
        self._finish(st, r, r.status(current, desired, metrics, rescaled=rescale))

    def _finish(self, st: _HPA, r: _Reconcile, status: Obj) -> None:
        if status != r.original:
            ns, name, uid = namespace_of(st.obj), name_of(st.obj), uid_of(st.obj)
            self._out.writes.append(UpdateStatus("HorizontalPodAutoscaler", ns, name, uid, status))
        self._out.events.extend(r.events)

    def _scale_target(self, hpa: Obj) -> tuple[Obj | None, str]:
        """The target, or None and upstream's error for a reference that resolves to none."""
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        api_version, kind, name = ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or ""
        parts = api_version.split("/")
        if len(parts) > 2:
            return None, f"unexpected GroupVersion string: {api_version}"
        group = parts[0] if len(parts) == 2 else ""
        resource = TARGET_RESOURCES.get(kind)
        if group != "apps" or resource is None:
            return None, f'no matches for kind "{kind}" in group "{group}"'
        target = self.cache.get(kind, namespace_of(hpa), name)
        if target is None:
            return None, f'{resource}.apps "{name}" not found'
        return target, ""

    def _decide(
        self, st: _HPA, r: _Reconcile, target: Obj, current: int
    ) -> tuple[int, str, list[Obj] | None, bool] | None:
        """(desired, rescale reason, metric statuses, whether to scale); None when the
        metrics failed (their status and Events are already out)."""
        low = st.spec.get("minReplicas")
        low = 1 if low is None else int(low)
        high = int(st.spec.get("maxReplicas") or 0)
        if current == 0 and low != 0:
            r.condition(
                ACTIVE, False, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero"
            )
            return 0, "", None, False
        if current > high:
            return high, "Current number of replicas above Spec.MaxReplicas", None, True
        if current < low:
            return low, "Current number of replicas below Spec.MinReplicas", None, True
        proposed, metric, statuses, error = self._compute_metrics(st, r, target, current)
        if proposed == -1:
            r.event("FailedComputeMetricsReplicas", error, WARNING)
            self._finish(st, r, r.keep(current, statuses))
            return None
        desired, rescale_metric = 0, ""
        if proposed > desired:
            desired, rescale_metric = proposed, metric
        reason = ""
        if desired > current:
            reason = f"{rescale_metric} above target"
        elif desired < current:
            reason = "All metrics below target"
        desired = self._normalize(st, r, current, desired, low, high)
        return desired, reason, statuses, desired != current

    def _normalize(self, st: _HPA, r: _Reconcile, current: int, desired: int, low: int, high: int) -> int:
        behavior = st.spec.get("behavior")
        if behavior is None:
            n = rc.normalize(current, desired, low, high, st.recommendations, r.now, self.downscale_stabilization)
        else:
            events = (st.up_events, st.down_events)
            n = rc.normalize_with_behavior(
                current, desired, low, high, st.recommendations, events, self._rules(st), r.now
            )
        st.recommendations = n.history
        r.condition(ABLE, True, *n.able)
        r.condition(LIMITED, n.limited, *n.limit)
        return n.replicas

    def _rules(self, st: _HPA) -> tuple[rc.ScalingRules, rc.ScalingRules]:
        behavior = st.spec.get("behavior") or {}
        return (
            rc.scaling_rules(behavior, "scaleUp", self.downscale_stabilization),
            rc.scaling_rules(behavior, "scaleDown", self.downscale_stabilization),
        )

    def _rescale(self, key: Key, st: _HPA, r: _Reconcile, target: Obj, plan: _Plan) -> None:
        current, desired, reason, metrics = plan
        scaled = codec.clone(target)
        scaled.setdefault("spec", {})["replicas"] = desired
        self._out.writes.append(Update(scaled))
        failed = _status(st.obj, current, int(r.original.get("desiredReplicas") or 0), metrics,
                         r.original.get("lastScaleTime"), copy.deepcopy(r.conditions))  # fmt: skip
        ref = (target.get("kind", ""), namespace_of(target), name_of(target))
        self._inflight[ref] = _Rescale(
            key, uid_of(st.obj), r.now, desired, reason, failed, (st.up_events, st.down_events)
        )
        r.condition(
            ABLE, True, "SucceededRescale", f"the HPA controller was able to update the target scale to {desired}"
        )
        r.event("SuccessfulRescale", f"New size: {desired}; reason: {reason}")
        if st.spec.get("behavior") is not None:
            up, down = self._rules(st)
            if desired > current:
                st.up_events = rc.store_scale_event(st.up_events, desired - current, r.now, up)
            else:
                st.down_events = rc.store_scale_event(st.down_events, current - desired, r.now, down)

    # -- metrics -----------------------------------------------------------------------------
    def _compute_metrics(
        self, st: _HPA, r: _Reconcile, target: Obj, current: int
    ) -> tuple[int, str, list[Obj] | None, str]:
        """(largest proposal or -1, its metric's name, metric statuses, error): upstream's
        computeReplicasForMetrics, conditions and per-metric Events included."""
        pods, error = self._selected_pods(st, r, target)
        if pods is None:
            return -1, "", None, error
        specs = st.spec.get("metrics") or [DEFAULT_METRIC]  # the apiserver's default, for a raw object
        statuses: list[Obj] = []
        replicas, metric, invalid = 0, "", 0
        first: MetricFailed | None = None
        for spec in specs:
            try:
                proposal, name, status = self._metric(st, spec, pods, current, r.now)
            except MetricFailed as f:
                r.event(f.reason, f.message, WARNING)
                statuses.append({"type": ""})
                first, invalid = first or f, invalid + 1
                continue
            statuses.append(status)
            if replicas == 0 or proposal > replicas:
                replicas, metric = proposal, name
        error = (
            f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first.outer}" if first else ""
        )
        if first is not None and (invalid >= len(specs) or replicas < current):
            r.condition(
                ACTIVE, False, first.reason, f"the HPA was unable to compute the replica count: {first.message}"
            )
            return -1, "", statuses, error
        r.condition(
            ACTIVE,
            True,
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {metric}",
        )
        return replicas, metric, statuses, error

    def _selected_pods(self, st: _HPA, r: _Reconcile, target: Obj) -> tuple[list[Obj] | None, str]:
        """The pods the target's selector selects (by name), or None and the error of a
        missing, invalid or shared selector (upstream's validateAndParseSelector)."""
        try:
            selector = LabelSelector.from_dict((target.get("spec") or {}).get("selector"))
        except SelectorError as e:
            msg = f"couldn't convert selector into a corresponding internal selector object: {e}"
            r.event("InvalidSelector", msg, WARNING)
            r.condition(ACTIVE, False, "InvalidSelector", msg)
            return None, msg
        text = str(selector)
        if not text:
            r.event("SelectorRequired", "selector is required", WARNING)
            r.condition(ACTIVE, False, "InvalidSelector", "the HPA target's scale is missing a selector")
            return None, "selector is required"
        st.selector = selector
        ns = namespace_of(st.obj)
        pods = [p for p in self.cache.by_index("Pod", "namespace", ns) if selector.matches(labels_of(p))]
        # Pods of one template share their labels: match each label set once per HPA.
        label_sets = {tuple(sorted(labels_of(p).items())) for p in pods}
        sharing = sorted(
            k
            for k, other in self._hpas.items()
            if k[0] == ns and any(other.selector.matches(dict(labels)) for labels in label_sets)
        )
        if len(sharing) > 1:
            names = " ".join(f"{k[0]}/{k[1]}" for k in sharing)
            msg = f"pods by selector {text} are controlled by multiple HPAs: [{names}]"
            r.event("AmbiguousSelector", msg, WARNING)
            r.condition(ACTIVE, False, "AmbiguousSelector", msg)
            return None, msg
        return pods, ""

    def _metric(self, st: _HPA, spec: Obj, pods: list[Obj], current: int, now: float) -> tuple[int, str, Obj]:
        """One metric's (proposal, name for the rescale reason, status); raises MetricFailed."""
        return evaluate(spec, pods, namespace_of(st.obj), current, now, self._tolerance(st), self.readiness)

    def _tolerance(self, st: _HPA) -> tuple[float, float]:
        down = up = self.tolerance
        behavior = st.spec.get("behavior")
        if self.configurable_tolerance and behavior:
            down = _quantity_float((behavior.get("scaleDown") or {}).get("tolerance"), down)
            up = _quantity_float((behavior.get("scaleUp") or {}).get("tolerance"), up)
        return down, up


def _quantity_float(raw: Any, default: float) -> float:
    if raw is None:
        return default
    try:
        return float(parse(raw))
    except QuantityError:
        return default


def _replicas(target: Obj) -> int:
    replicas = (target.get("spec") or {}).get("replicas")
    return 1 if replicas is None else int(replicas)
