"""The HorizontalPodAutoscaler's normalisation of a proposed replica count.

Owns what upstream's ``horizontal.go`` does between the metrics' largest proposal and the
scale it writes (upstream's normalizeDesiredReplicas and its stabilization), as pure functions:

- without ``behavior`` (``normalize``): the largest recommendation of the downscale
  stabilisation window, the ``max(2 * current, 4)`` scale-up limit, the clamp to
  [minReplicas, maxReplicas];
- with ``behavior`` (``normalize_with_behavior``): per-direction stabilisation windows (up:
  the smallest recommendation of its window, down: the largest), then the Pods / Percent
  policies, each limiting the change against the replica count one period ago as the
  HPA's scale-event history (``store_scale_event``) tells it, picked by selectPolicy.

Each returns the AbleToScale and ScalingLimited reasons and messages it implies. The
histories (recommendations, scale events) are plain lists the caller keeps per HPA; the
functions return new lists instead of changing the ones given. Times compare as upstream's
do (``Before`` / ``After`` are strict), which matters here: emulated syncs land exactly on
window boundaries. ``hpa.py`` (the controller) is the only caller outside the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DOWNSCALE_STABILIZATION = 300.0
SCALE_UP_LIMIT_FACTOR, SCALE_UP_LIMIT_MINIMUM = 2.0, 4.0
_MAX_INT32, _MIN_INT32 = 2**31 - 1, -(2**31)

WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
READY_FOR_SCALE = ("ReadyForNewScale", "recommended size matches current size")
UP_STABILIZED = (
    "ScaleUpStabilized",
    "recent recommendations were lower than current one, applying the lowest recent recommendation",
)
DOWN_STABILIZED = (
    "ScaleDownStabilized",
    "recent recommendations were higher than current one, applying the highest recent recommendation",
)


Recommendation = tuple[int, float]  # (replicas, when)


@dataclass(frozen=True)
class Normalized:
    """A normalised recommendation and the two conditions it sets."""

    replicas: int
    able: tuple[str, str]  # AbleToScale (True): reason, message
    limited: bool  # ScalingLimited status
    limit: tuple[str, str]  # ScalingLimited reason, message
    history: list[Recommendation]


def stabilize(
    history: list[Recommendation], desired: int, now: float, window: float
) -> tuple[int, list[Recommendation]]:
    """Without ``behavior``: the largest recommendation of the last ``window`` seconds
    (``desired`` included); ``desired`` replaces the last expired entry or is appended."""
    best, old = desired, None
    cutoff = now - window
    for i, (rec, at) in enumerate(history):
        if at < cutoff:
            old = i
        elif rec > best:
            best = rec
    return best, _record(history, old, (desired, now))


def _record(history: list[Recommendation], old: int | None, entry: Recommendation) -> list[Recommendation]:
    new = list(history)
    if old is None:
        new.append(entry)
    else:
        new[old] = entry
    return new


def convert_with_rules(current: int, desired: int, low: int, high: int) -> tuple[int, tuple[str, str]]:
    """The clamp without ``behavior``: at most ``max(2 * current, 4)``, then [low, high]."""
    up_limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    top, limit = (up_limit, UP_LIMIT) if high > up_limit else (high, TOO_MANY)
    if desired < low:
        return low, TOO_FEW
    if desired > top:
        return top, limit
    return desired, WITHIN_RANGE


def normalize(
    current: int, desired: int, low: int, high: int, history: list[Recommendation], now: float, window: float
) -> Normalized:
    stabilized, history = stabilize(history, desired, now, window)
    able = DOWN_STABILIZED if stabilized != desired else READY_FOR_SCALE
    replicas, limit = convert_with_rules(current, stabilized, low, high)
    return Normalized(replicas, able, replicas != stabilized, limit, history)


@dataclass(frozen=True)
class Policy:
    type: str  # Pods or Percent
    value: int
    period: float  # seconds


@dataclass(frozen=True)
class ScalingRules:
    window: float  # stabilizationWindowSeconds
    select: str  # Max, Min or Disabled
    policies: tuple[Policy, ...]


_UP_POLICIES = (Policy("Pods", 4, 15.0), Policy("Percent", 100, 15.0))
_DOWN_POLICIES = (Policy("Percent", 100, 15.0),)


def scaling_rules(behavior: dict[str, Any], direction: str, downscale_window: float) -> ScalingRules:
    """A direction's rules as the apiserver defaults them; an unset scale-down window is
    the controller's ``downscale_window``."""
    part = behavior.get(direction) or {}
    up = direction == "scaleUp"
    window = part.get("stabilizationWindowSeconds")
    if window is None:
        window = 0 if up else downscale_window
    raw = part.get("policies")
    policies = (
        tuple(Policy(p.get("type", ""), int(p.get("value", 0)), float(p.get("periodSeconds", 0))) for p in raw)
        if raw
        else (_UP_POLICIES if up else _DOWN_POLICIES)
    )
    return ScalingRules(float(window), part.get("selectPolicy") or "Max", policies)


def stabilize_with_behavior(
    history: list[Recommendation], desired: int, current: int, now: float, up: float, down: float
) -> tuple[int, tuple[str, str], list[Recommendation]]:
    """``current`` brought within [smallest recommendation of the last ``up`` seconds,
    largest of the last ``down`` seconds] (``desired`` counted in both)."""
    low = high = desired
    up_cut, down_cut = now - up, now - down
    old = None
    for i, (rec, at) in enumerate(history):
        if at > up_cut:
            low = min(rec, low)
        if at > down_cut:
            high = max(rec, high)
        if at < up_cut and at < down_cut:
            old = i
    rec = min(max(current, low), high)
    reason = UP_STABILIZED if desired >= current else DOWN_STABILIZED
    return rec, reason, _record(history, old, (desired, now))


@dataclass(frozen=True)
class ScaleEvent:
    change: int  # replicas added (a scale-up list) or removed (a scale-down list)
    at: float
    outdated: bool = False


def _changed_within(period: float, events: list[ScaleEvent], now: float) -> int:
    cutoff = now - period
    return sum(e.change for e in events if e.at > cutoff)


def _limit(
    current: int, up: list[ScaleEvent], down: list[ScaleEvent], rules: ScalingRules, now: float, sign: int
) -> int:
    if rules.select == "Disabled":
        return current
    # Scaling up, Max picks the largest count; scaling down, Max picks the smallest.
    largest = (rules.select != "Min") == (sign > 0)
    result = _MIN_INT32 if largest else _MAX_INT32
    pick = max if largest else min
    proposed = 0
    for p in rules.policies:
        start = current - _changed_within(p.period, up, now) + _changed_within(p.period, down, now)
        if p.type == "Pods":
            proposed = start + sign * p.value
        elif p.type == "Percent" and sign > 0:
            proposed = math.ceil(start * (1 + p.value / 100))
        elif p.type == "Percent":
            proposed = int(start * (1 - p.value / 100))
        result = pick(result, proposed)
    return result


def scale_up_limit(current: int, up: list[ScaleEvent], down: list[ScaleEvent], rules: ScalingRules, now: float) -> int:
    """The most replicas the scale-up policies allow now (from the count a period ago)."""
    return _limit(current, up, down, rules, now, 1)


def scale_down_limit(
    current: int, up: list[ScaleEvent], down: list[ScaleEvent], rules: ScalingRules, now: float
) -> int:
    """The fewest replicas the scale-down policies allow now."""
    return _limit(current, up, down, rules, now, -1)


def convert_with_behavior(
    current: int,
    desired: int,
    low: int,
    high: int,
    events: tuple[list[ScaleEvent], list[ScaleEvent]],
    rules: tuple[ScalingRules, ScalingRules],
    now: float,
) -> tuple[int, tuple[str, str]]:
    """The policies' rate limit and the [low, high] clamp; ``events`` and ``rules`` are
    (scale-up, scale-down) pairs."""
    up, down = events
    if desired > current:
        top = max(scale_up_limit(current, up, down, rules[0], now), current)
        top, limit = (top, UP_LIMIT) if high > top else (high, TOO_MANY)
        if desired > top:
            return top, limit
    elif desired < current:
        bottom = min(scale_down_limit(current, up, down, rules[1], now), current)
        bottom, limit = (bottom, DOWN_LIMIT) if low < bottom else (low, TOO_FEW)
        if desired < bottom:
            return bottom, limit
    return desired, WITHIN_RANGE


def normalize_with_behavior(
    current: int,
    desired: int,
    low: int,
    high: int,
    history: list[Recommendation],
    events: tuple[list[ScaleEvent], list[ScaleEvent]],
    rules: tuple[ScalingRules, ScalingRules],
    now: float,
) -> Normalized:
    stabilized, reason, history = stabilize_with_behavior(
        history, desired, current, now, rules[0].window, rules[1].window
    )
    able = reason if stabilized != desired else READY_FOR_SCALE
    replicas, limit = convert_with_behavior(current, stabilized, low, high, events, rules, now)
    return Normalized(replicas, able, replicas != stabilized, limit, history)


def store_scale_event(events: list[ScaleEvent], change: int, now: float, rules: ScalingRules) -> list[ScaleEvent]:
    """``events`` with a change of ``change`` replicas at ``now``: events older than the
    direction's longest policy period are marked outdated and the last of them is reused."""
    longest = max((p.period for p in rules.policies), default=0.0)
    cutoff = now - longest
    new = [ScaleEvent(e.change, e.at, True) if e.at < cutoff else e for e in events]
    old = None
    for i, e in enumerate(new):
        if e.outdated:
            old = i
    entry = ScaleEvent(change, now)
    if old is None:
        new.append(entry)
    else:
        new[old] = entry
    return new
