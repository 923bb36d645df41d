"""The HorizontalPodAutoscaler's metrics: reading the pods and one Resource metric's proposal.

Owns upstream's replica calculation for a Resource metric (``replica_calculator.go``)
as pure functions of the pods and the emulated time:

- reading a pod: its usage of a resource now (``pod_metric``: the figure ``kubectl top``
  shows, from ``cluster/api/podmetrics.py``), its summed request (``pod_request``) and its group
  for the calculation (``classify``: ignored, unready, missing or ready);
- ``desired_replicas``: the proposal from utilization against requests, or from a raw
  average value, with the tolerance and the re-computation that assumes missing pods at
  100 % of their request on a scale-down and missing or unready pods at 0 % on a scale-up;
- ``resource_metric``: one ``metrics[]`` entry of an HPA as the controller reports it (the
  proposal, the metric's name for the rescale reason and its ``currentMetrics`` entry),
  with upstream's error texts.

Usage is the instantaneous emulated value at ``now``, where upstream's metrics-server
reports an average over its scrape window (typically 15-30 s). A sample is therefore
stamped ``now`` with a zero window, so the cpu initialization period's "sample predates
readiness" test never holds and only the Ready condition decides there.

Units are upstream's milli-units throughout: millicores, and thousandths of a byte for
memory (``Quantity.MilliValue``), so averages round as upstream's do. ``hpa.py`` (the
controller) is the only caller outside the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..api.objects import condition, is_terminating, name_of, phase_of
from ..api.podmetrics import pod_usage_now
from ..api.quantity import QuantityError, to_milli
from ..clock import parse_timestamp

TOLERANCE = 0.1
CPU_INITIALIZATION_PERIOD = 300.0
INITIAL_READINESS_DELAY = 30.0

READY, UNREADY, MISSING, IGNORED = "ready", "unready", "missing", "ignored"
_SI = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


class MetricError(Exception):
    """A metric that yields no proposal; the message is upstream's error text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---- reading pods ---------------------------------------------------------------------------


def pod_metric(pod: dict[str, Any], resource: str, now: float) -> int | None:
    """The pod's usage of ``resource`` at ``now`` in milli-units (millicores; thousandths of
    a byte, as upstream's ``MilliValue``), or None when the metrics API has none for it:
    exactly what ``kubectl top`` shows (``cluster/api/podmetrics.py``, the one rule)."""
    usage = pod_usage_now(pod, resource, now)
    if usage is None:
        return None
    return usage if resource == "cpu" else usage * 1000


def pod_request(pod: dict[str, Any], resource: str) -> tuple[int | None, str]:
    """(the pod's request for ``resource`` in milli-units, "") or (None, upstream's error).

    A pod-level request (``spec.resources``) wins; otherwise the containers' and the
    restartable init containers' requests are summed, and one without is an error."""
    spec = pod.get("spec") or {}
    name = (pod.get("metadata") or {}).get("name", "")
    pod_level = ((spec.get("resources") or {}).get("requests") or {}).get(resource)
    try:
        if pod_level is not None:
            return to_milli(pod_level), ""
        containers = list(spec.get("containers") or [])
        containers += [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
        total = 0
        for c in containers:
            req = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if req is None:
                return None, f"missing request for {resource} in container {c.get('name', '')} of Pod {name}"
            total += to_milli(req)
    except QuantityError as e:
        return None, str(e)
    return total, ""


def classify(
    pod: dict[str, Any],
    resource: str,
    has_metric: bool,
    now: float,
    cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
    initial_readiness_delay: float = INITIAL_READINESS_DELAY,
    metric_window: float = 0.0,
) -> str:
    """The pod's group: IGNORED (being deleted, or Failed), UNREADY (Pending; for cpu, not
    yet fit to be measured), MISSING (no metric) or READY, in upstream's order of tests."""
    if is_terminating(pod) or phase_of(pod) == "Failed":
        return IGNORED
    if phase_of(pod) == "Pending":
        return UNREADY
    if not has_metric:
        return MISSING
    if resource != "cpu":
        return READY
    ready = condition(pod, "Ready")
    start_raw = (pod.get("status") or {}).get("startTime")
    start = parse_timestamp(start_raw) if start_raw else None
    if ready is None or start is None:
        return UNREADY
    ltt_raw = ready.get("lastTransitionTime")
    parsed = parse_timestamp(ltt_raw) if ltt_raw else None
    transition = -math.inf if parsed is None else parsed
    if start + cpu_initialization_period > now:
        # Inside the initialization period a sample counts only if it was taken wholly
        # after the pod became ready (the sample is stamped now, ``metric_window`` long).
        unready = ready.get("status") == "False" or now < transition + metric_window
    else:
        # Later, only a pod that has never been ready is left out.
        unready = ready.get("status") == "False" and start + initial_readiness_delay > transition
    return UNREADY if unready else READY


# ---- one metric's proposal -----------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One pod of the target, as the calculation sees it."""

    name: str
    group: str  # READY, UNREADY, MISSING or IGNORED (``classify``)
    usage: int | None = None  # milli-units now; None when the metrics API has none
    request: int | None = 0  # milli-units; None when a container has no request
    request_error: str = ""


@dataclass(frozen=True)
class Proposal:
    replicas: int
    utilization: int | None  # percent of requests; None for an AverageValue target
    average: int  # the average usage of the pods measured, milli-units


def within(ratio: float, tolerance: tuple[float, float]) -> bool:
    """Whether ``ratio`` is inside the (scale-down, scale-up) tolerance band around 1."""
    down, up = tolerance
    return 1.0 - down <= ratio <= 1.0 + up


def _utilization(metrics: dict[str, int], requests: dict[str, int], target: int) -> tuple[float, int, int]:
    total = requested = entries = 0
    for name, value in metrics.items():
        if name in requests:
            total, requested, entries = total + value, requested + requests[name], entries + 1
    if requested == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = total * 100 // requested
    return utilization / target, utilization, total // entries


def _average(metrics: dict[str, int], target: int) -> tuple[float, int]:
    average = sum(metrics.values()) // len(metrics)
    return average / target, average


def _assume(
    metrics: dict[str, int], requests: dict[str, int], missing: list[str], unready: list[str], ratio: float, target: int
) -> None:
    """Fill in the pods left out of the first ratio: on a scale-up at 0; missing pods on a
    scale-down at their request (or a utilization target above 100 %), or at an average
    value target. ``requests`` is empty for an average value target."""
    for name in missing:
        if ratio > 1.0:
            metrics[name] = 0
        elif requests:
            metrics[name] = requests[name] * max(100, target) // 100
        else:
            metrics[name] = target
    for name in unready:
        metrics[name] = 0


def desired_replicas(
    current: int,
    target: int,
    samples: list[Sample],
    *,
    resource: str = "cpu",
    utilization: bool = True,
    tolerance: tuple[float, float] = (TOLERANCE, TOLERANCE),
) -> Proposal:
    """One Resource metric's replica proposal for a target at ``current`` replicas.

    ``target`` is the averageUtilization (percent) or, with ``utilization=False``, the
    averageValue in milli-units. Raises MetricError with upstream's message (before the
    caller's "failed to get <resource> utilization: " prefix)."""
    if all(s.usage is None for s in samples):
        raise MetricError(
            f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API"
        )
    metrics = {s.name: s.usage for s in samples if s.group == READY and s.usage is not None}
    ready_count = len(metrics)
    if not metrics:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    requests: dict[str, int] = {}
    if utilization:
        for s in samples:
            if s.request is None:
                raise MetricError(s.request_error)
            requests[s.name] = s.request
        ratio, used, average = _utilization(metrics, requests, target)
    else:
        ratio, average = _average(metrics, target)
    unready = [s.name for s in samples if s.group == UNREADY]
    missing = [s.name for s in samples if s.group == MISSING]
    scale_up_with_unready = bool(unready) and ratio > 1.0
    util = used if utilization else None
    if not scale_up_with_unready and not missing:
        if within(ratio, tolerance):
            return Proposal(current, util, average)
        return Proposal(math.ceil(ratio * ready_count), util, average)
    _assume(metrics, requests, missing if ratio != 1.0 else [], unready if scale_up_with_unready else [], ratio, target)
    new_ratio = _utilization(metrics, requests, target)[0] if utilization else _average(metrics, target)[0]
    if within(new_ratio, tolerance) or (ratio < 1.0 < new_ratio) or (new_ratio < 1.0 < ratio):
        return Proposal(current, util, average)  # too small a change, or the direction flips
    replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return Proposal(current, util, average)
    return Proposal(replicas, util, average)


# ---- one metric as the controller reports it ------------------------------------------------


def milli_quantity(value: int) -> str:
    """``value`` thousandths as a canonical DecimalSI quantity (upstream
    ``NewMilliQuantity(value, DecimalSI).String()``): 250 -> ``250m``, 2000 -> ``2``,
    104857600000 -> ``104857600``, 100000000000 -> ``100M``."""
    if value == 0:
        return "0"
    amount, exponent = abs(value), -3
    while amount % 10 == 0 and exponent < 18:
        amount, exponent = amount // 10, exponent + 1
    shift = exponent % 3  # bring the exponent down to a multiple of 3
    amount, exponent = amount * 10**shift, exponent - shift
    return f"{'-' if value < 0 else ''}{amount}{_SI[exponent]}"


@dataclass(frozen=True)
class Readiness:
    """The controller's flags that decide when a pod's cpu sample counts."""

    cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD
    initial_readiness_delay: float = INITIAL_READINESS_DELAY


def sample(pod: dict[str, Any], resource: str, now: float, readiness: Readiness = Readiness()) -> Sample:
    usage = pod_metric(pod, resource, now)
    group = classify(
        pod, resource, usage is not None, now, readiness.cpu_initialization_period, readiness.initial_readiness_delay
    )
    request, error = pod_request(pod, resource)
    return Sample(name_of(pod), group, usage, request, error)


def resource_metric(
    resource: dict[str, Any],
    pods: list[dict[str, Any]],
    current: int,
    now: float,
    tolerance: tuple[float, float] = (TOLERANCE, TOLERANCE),
    readiness: Readiness = Readiness(),
) -> tuple[int, str, dict[str, Any]]:
    """A ``metrics[].resource`` entry's (proposal, name for the rescale reason, status
    entry); raises MetricError with the text upstream reports (before its "failed to get
    <resource> resource metric value: " prefix)."""
    name, target = resource.get("name", ""), resource.get("target") or {}
    samples = [sample(p, name, now, readiness) for p in pods]
    if target.get("averageValue") is not None:
        try:
            goal = to_milli(target["averageValue"])
            p = desired_replicas(current, goal, samples, resource=name, utilization=False, tolerance=tolerance)
        except (MetricError, QuantityError, ZeroDivisionError) as e:
            raise MetricError(f"failed to get {name} usage: {e}") from None
        value: dict[str, Any] = {"averageValue": milli_quantity(p.average)}
        return p.replicas, f"{name} resource", _status(name, value)
    if target.get("averageUtilization") is None:
        raise MetricError(
            "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
        )
    try:
        p = desired_replicas(current, int(target["averageUtilization"]), samples, resource=name, tolerance=tolerance)
    except (MetricError, ZeroDivisionError) as e:
        raise MetricError(f"failed to get {name} utilization: {e}") from None
    value = {"averageUtilization": p.utilization, "averageValue": milli_quantity(p.average)}
    return p.replicas, f"{name} resource utilization (percentage of request)", _status(name, value)


def _status(name: str, current: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": name, "current": current}}
