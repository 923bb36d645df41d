"""The HorizontalPodAutoscaler's arithmetic as tables: reading pods, one metric's replica
proposal (upstream's replica calculator) and the normalisation with and without
``behavior``."""

from __future__ import annotations

import pytest
from hpa_builders import worker
from workload_builders import pod

from cluster.clock import rfc3339
from cluster.controllers.hpametrics import (
    IGNORED,
    MISSING,
    READY,
    UNREADY,
    MetricError,
    Proposal,
    Sample,
    classify,
    desired_replicas,
    milli_quantity,
    pod_metric,
    pod_request,
)
from cluster.controllers.hparecommend import (
    DOWN_LIMIT,
    DOWN_STABILIZED,
    READY_FOR_SCALE,
    TOO_FEW,
    TOO_MANY,
    UP_LIMIT,
    UP_STABILIZED,
    WITHIN_RANGE,
    Policy,
    ScaleEvent,
    ScalingRules,
    convert_with_behavior,
    convert_with_rules,
    normalize,
    normalize_with_behavior,
    scale_down_limit,
    scale_up_limit,
    scaling_rules,
    stabilize,
    store_scale_event,
)

# ---- quantities ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "milli, text",
    [(0, "0"), (250, "250m"), (1500, "1500m"), (2000, "2"), (600000, "600"), (104857600000, "104857600"),
     (100000000000, "100M"), (33333, "33333m"), (1000000, "1k")],
)  # fmt: skip
def test_milli_quantity_is_the_canonical_decimal_si_form(milli, text):
    assert milli_quantity(milli) == text


# ---- the replica calculation (§5.2) -------------------------------------------------------------


def sample(name, group, usage=None, request=1000):
    return Sample(name, group, usage, request)


CALC = [
    # (case, current, target, samples, utilization?, expected)
    ("250% of a 50% target", 2, 50, [sample("a", READY, 1250, 500), sample("b", READY, 1250, 500)], True, Proposal(10, 250, 1250)),
    ("54% of 50% is within tolerance", 2, 50, [sample("a", READY, 270, 500), sample("b", READY, 270, 500)], True,
     Proposal(2, 54, 270)),
    ("scale up", 3, 30, [sample("a", READY, 300), sample("b", READY, 500), sample("c", READY, 700)], True, Proposal(5, 50, 500)),
    ("unready at 0% on a scale-up", 3, 30, [sample("a", UNREADY, 300), sample("b", READY, 500), sample("c", READY, 700)], True,
     Proposal(4, 60, 600)),
    ("failed pods ignored", 2, 30, [sample("a", READY, 500), sample("b", READY, 700), sample("c", IGNORED), sample("d", IGNORED)], True,
     Proposal(4, 60, 600)),
    ("scale down", 5, 50, [sample(n, READY, u) for n, u in zip("abcde", (100, 300, 500, 250, 250))], True,
     Proposal(3, 28, 280)),
    ("unready left out of a scale-down", 5, 50,
     [sample("a", READY, 100), sample("b", READY, 300), sample("c", READY, 500), sample("d", UNREADY, 250), sample("e", UNREADY, 250)], True,
     Proposal(2, 30, 300)),
    ("requests differ, within tolerance", 3, 100,
     [sample("a", READY, 1010, 900), sample("b", READY, 1030, 1000), sample("c", READY, 1020, 1100)], True, Proposal(3, 102, 1020)),
    ("missing, at target", 2, 100, [sample("a", READY, 1000), sample("b", MISSING)], True, Proposal(2, 100, 1000)),
    ("missing at 0% cancels a scale-up", 2, 100, [sample("a", READY, 1900), sample("b", MISSING)], True, Proposal(2, 190, 1900)),
    ("missing at 100% on a scale-down", 4, 50, [sample("a", READY, 100), sample("b", READY, 100), sample("c", READY, 100),
     sample("d", MISSING)], True, Proposal(3, 10, 100)),
    ("missing and unready on a scale-down", 4, 50, [sample("a", UNREADY, 100), sample("b", READY, 100), sample("c", READY, 100),
     sample("d", MISSING)], True, Proposal(3, 10, 100)),
    ("missing at a target above 100%", 4, 300, [sample("a", READY, 200, 2000), sample("b", READY, 100, 2000),
     sample("c", READY, 100, 2000), sample("d", MISSING, None, 2000)], True, Proposal(2, 6, 133)),
    ("unready flip the direction", 3, 50, [sample("a", READY, 600), sample("b", UNREADY), sample("c", UNREADY)], True,
     Proposal(3, 60, 600)),
    ("average value", 3, 300, [sample("a", READY, 300), sample("b", READY, 500), sample("c", READY, 700)], False,
     Proposal(5, None, 500)),
    ("average value, missing at the target", 3, 500, [sample("a", READY, 100), sample("b", READY, 100), sample("c", MISSING)], False,
     Proposal(2, None, 100)),
]  # fmt: skip


@pytest.mark.parametrize("case, current, goal, samples, utilization, expected", CALC, ids=[c[0] for c in CALC])
def test_desired_replicas(case, current, goal, samples, utilization, expected):
    assert desired_replicas(current, goal, samples, utilization=utilization) == expected


@pytest.mark.parametrize(
    "samples, message",
    [
        ([sample("a", MISSING), sample("b", UNREADY)], "unable to get metrics for resource cpu: no metrics returned from resource metrics API"),
        ([sample("a", UNREADY, 100), sample("b", IGNORED, 100)], "did not receive metrics for targeted pods (pods might be unready)"),
        ([sample("a", READY, 100), Sample("b", IGNORED, None, None, "missing request for cpu in container c of Pod b")],
         "missing request for cpu in container c of Pod b"),
        ([sample("a", READY, 100, 0)], "no metrics returned matched known pods"),
    ],
)  # fmt: skip
def test_desired_replicas_errors(samples, message):
    with pytest.raises(MetricError) as e:
        desired_replicas(2, 50, samples)
    assert e.value.message == message


def test_a_scale_up_band_of_its_own():
    samples = [sample("a", READY, 560), sample("b", READY, 560)]  # 56% of 50%: ratio 1.12
    assert desired_replicas(2, 50, samples).replicas == 3
    assert desired_replicas(2, 50, samples, tolerance=(0.1, 0.2)).replicas == 2


# ---- reading pods ----------------------------------------------------------------------------------


def test_usage_runs_from_the_containers_start():
    p = worker("a", usage="ramp(100m, 500m, 100s)", start=100)
    assert pod_metric(p, "cpu", 150) == 300
    assert pod_metric(p, "cpu", 900) == 500
    assert pod_metric(p, "memory", 150) == 0  # nothing declared: 0, as kubectl top shows it
    mem = worker("m", usage="64Mi", resource="memory", request="128Mi")
    assert pod_metric(mem, "memory", 10) == 64 * 2**20 * 1000  # milli-bytes, as upstream


def test_usage_needs_a_running_container():
    p = worker("a", usage="300m")
    p["status"]["containerStatuses"] = [{"name": "c", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]
    assert pod_metric(p, "cpu", 10) is None
    bare = worker("b", usage="300m", start=5)
    del bare["status"]["containerStatuses"]
    assert pod_metric(bare, "cpu", 10) == 300  # a hand-made Running pod: from startTime


def test_requests_sum_the_containers_and_sidecars():
    p = worker("a", request="250m")
    p.spec["containers"].append({"name": "d", "image": "x", "resources": {"requests": {"cpu": "0.5"}}})
    p.spec["initContainers"] = [
        {"name": "side", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
        {"name": "init", "image": "x"},  # runs to completion: not counted
    ]
    assert pod_request(p, "cpu") == (850, "")
    assert pod_request(p, "memory") == (None, "missing request for memory in container c of Pod a")
    p.spec["resources"] = {"requests": {"memory": "1Gi"}}
    assert pod_request(p, "memory") == (2**30 * 1000, "")


NOW = 1000.0


def _p(phase="Running", ready="True", start=900.0, ltt=950.0, terminating=False):
    p = pod("p").phase(phase)
    p["status"]["startTime"] = rfc3339(start)
    if ready is not None:
        p["status"]["conditions"] = [{"type": "Ready", "status": ready, "lastTransitionTime": rfc3339(ltt)}]
    return p.terminating() if terminating else p


CLASSIFY = [
    ("being deleted", _p(terminating=True), "cpu", True, IGNORED),
    ("failed", _p(phase="Failed"), "cpu", True, IGNORED),
    ("pending", _p(phase="Pending", ready="False"), "cpu", False, UNREADY),
    ("no metric", _p(), "cpu", False, MISSING),
    ("memory ignores readiness", _p(ready="False"), "memory", True, READY),
    ("no Ready condition", _p(ready=None), "cpu", True, UNREADY),
    ("ready in the initialization period", _p(), "cpu", True, READY),
    ("unready in the initialization period", _p(ready="False"), "cpu", True, UNREADY),
    ("never ready since the start", _p(ready="False", start=0, ltt=10), "cpu", True, UNREADY),
    ("unready after having been ready", _p(ready="False", start=0, ltt=500), "cpu", True, READY),
]


@pytest.mark.parametrize("case, p, resource, has_metric, group", CLASSIFY, ids=[c[0] for c in CLASSIFY])
def test_classify(case, p, resource, has_metric, group):
    assert classify(p, resource, has_metric, NOW) == group


def test_a_metric_window_keeps_a_just_ready_pod_out():
    assert classify(_p(ltt=995), "cpu", True, NOW, metric_window=15) == UNREADY
    assert classify(_p(ltt=980), "cpu", True, NOW, metric_window=15) == READY


# ---- normalisation without behavior ------------------------------------------------------------------


@pytest.mark.parametrize(
    "current, desired, low, high, expected",
    [
        (5, 7, 3, 8, (7, WITHIN_RANGE)),
        (3, 1, 2, 8, (2, TOO_FEW)),
        (2, 10, 1, 20, (4, UP_LIMIT)),  # max(2 * 2, 4)
        (5, 20, 1, 20, (10, UP_LIMIT)),
        (20, 50, 1, 30, (30, TOO_MANY)),
        (4, 8, 1, 8, (8, WITHIN_RANGE)),
    ],
)
def test_convert_with_rules(current, desired, low, high, expected):
    assert convert_with_rules(current, desired, low, high) == expected


def test_stabilisation_keeps_the_largest_of_the_window_and_recycles_an_expired_entry():
    history = [(9, 600.0), (5, 700.0), (3, 950.0)]
    best, new = stabilize(history, 2, 1000.0, 300.0)
    assert best == 5 and new == [(2, 1000.0), (5, 700.0), (3, 950.0)]  # 600 is older than 300 s
    assert stabilize(history, 2, 1000.0, 300.0)[1] is not history
    assert stabilize([(5, 700.0)], 2, 1000.0, 300.0)[0] == 5  # exactly 300 s old still counts


def test_normalize_sets_the_conditions():
    n = normalize(4, 2, 1, 10, [(4, 900.0)], 1000.0, 300.0)
    assert (n.replicas, n.able, n.limited, n.limit) == (4, DOWN_STABILIZED, False, WITHIN_RANGE)
    n = normalize(2, 10, 1, 10, [(2, 1000.0)], 1015.0, 300.0)
    assert (n.replicas, n.able, n.limited, n.limit) == (4, READY_FOR_SCALE, True, UP_LIMIT)
    n = normalize(4, 2, 1, 10, [(4, 600.0)], 1000.0, 300.0)
    assert (n.replicas, n.able, n.history) == (2, READY_FOR_SCALE, [(2, 1000.0)])


# ---- behavior ----------------------------------------------------------------------------------------

UP = ScalingRules(0.0, "Max", (Policy("Pods", 4, 15.0), Policy("Percent", 100, 15.0)))
DOWN = ScalingRules(300.0, "Max", (Policy("Percent", 100, 15.0),))


def rules(select="Max", *policies, window=0.0):
    return ScalingRules(window, select, tuple(Policy(t, v, p) for t, v, p in policies))


@pytest.mark.parametrize(
    "current, ups, downs, rule, expected",
    [
        (1, [], [], rules("Max", ("Pods", 4, 15)), 5),
        (3, [], [], rules("Max", ("Percent", 100, 15)), 6),
        (10, [], [], UP, 20),  # Max: the larger of +4 and +100%
        (10, [], [], rules("Min", ("Pods", 4, 15), ("Percent", 100, 15)), 14),
        (10, [], [], rules("Disabled", ("Pods", 4, 15)), 10),
        (3, [], [], rules("Max", ("Percent", 50, 15)), 5),  # ceil(4.5)
        # 3 replicas were added 10 s ago: the period started at 7
        (10, [ScaleEvent(3, 990.0)], [], rules("Max", ("Pods", 4, 15)), 11),
        # exactly one period ago no longer counts
        (10, [ScaleEvent(3, 985.0)], [], rules("Max", ("Pods", 4, 15)), 14),
        (10, [], [ScaleEvent(2, 995.0)], rules("Max", ("Pods", 4, 15)), 16),
    ],
)
def test_scale_up_limit(current, ups, downs, rule, expected):
    assert scale_up_limit(current, ups, downs, rule, 1000.0) == expected


@pytest.mark.parametrize(
    "current, downs, rule, expected",
    [
        (10, [], DOWN, 0),
        (10, [], rules("Max", ("Percent", 10, 60), ("Pods", 5, 60)), 5),
        (10, [], rules("Min", ("Percent", 10, 60), ("Pods", 5, 60)), 9),
        (10, [], rules("Disabled", ("Pods", 5, 60)), 10),
        (7, [], rules("Max", ("Percent", 50, 60)), 3),  # int(3.5)
        (8, [ScaleEvent(2, 980.0)], rules("Max", ("Pods", 3, 60)), 7),  # the period started at 10
    ],
)
def test_scale_down_limit(current, downs, rule, expected):
    assert scale_down_limit(current, [], downs, rule, 1000.0) == expected


def test_convert_with_behavior():
    none: tuple[list, list] = ([], [])
    assert convert_with_behavior(2, 20, 1, 10, none, (UP, DOWN), 0.0) == (6, UP_LIMIT)
    assert convert_with_behavior(8, 20, 1, 10, none, (UP, DOWN), 0.0) == (10, TOO_MANY)
    slow = rules("Max", ("Pods", 1, 60))
    assert convert_with_behavior(8, 2, 1, 10, none, (UP, slow), 0.0) == (7, DOWN_LIMIT)
    assert convert_with_behavior(8, 2, 3, 10, none, (UP, DOWN), 0.0) == (3, TOO_FEW)
    assert convert_with_behavior(8, 5, 1, 10, none, (UP, DOWN), 0.0) == (5, WITHIN_RANGE)
    # a limit already used up keeps the count, never goes backwards
    used = ([ScaleEvent(10, 995.0)], [])
    assert convert_with_behavior(12, 20, 1, 30, used, (rules("Max", ("Pods", 1, 15)), DOWN), 1000.0) == (12, UP_LIMIT)


def test_behavior_stabilisation_windows():
    up, down = rules("Max", ("Pods", 4, 15), window=60), rules("Max", ("Percent", 100, 15), window=120)
    history = [(3, 950.0), (8, 900.0), (6, 700.0)]
    # scale-up: the smallest of the last 60 s (3) caps the rise from 4
    n = normalize_with_behavior(4, 9, 1, 20, history, ([], []), (up, down), 1000.0)
    assert (n.replicas, n.able) == (4, UP_STABILIZED)
    # scale-down: the largest of the last 120 s (8) holds 10 at 8
    n = normalize_with_behavior(10, 2, 1, 20, history, ([], []), (up, down), 1000.0)
    assert (n.replicas, n.able, n.limited) == (8, DOWN_STABILIZED, False)
    assert n.history == [(3, 950.0), (8, 900.0), (2, 1000.0)]  # 700 expired in both windows
    n = normalize_with_behavior(4, 4, 1, 20, [], ([], []), (up, down), 1000.0)
    assert (n.replicas, n.able, n.limit) == (4, READY_FOR_SCALE, WITHIN_RANGE)


def test_scaling_rules_fill_the_defaults():
    assert scaling_rules({"scaleUp": {}}, "scaleUp", 300.0) == UP
    assert scaling_rules({"scaleDown": {"selectPolicy": "Min"}}, "scaleDown", 300.0) == ScalingRules(
        300.0, "Min", DOWN.policies
    )
    custom = {
        "scaleDown": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
    }
    assert scaling_rules(custom, "scaleDown", 300.0) == ScalingRules(0.0, "Max", (Policy("Pods", 1, 60.0),))


def test_scale_events_reuse_an_outdated_slot():
    events = [ScaleEvent(2, 900.0), ScaleEvent(1, 990.0)]
    new = store_scale_event(events, 3, 1000.0, UP)
    assert new == [ScaleEvent(3, 1000.0), ScaleEvent(1, 990.0)]
    assert store_scale_event([ScaleEvent(1, 990.0)], 3, 1000.0, UP) == [ScaleEvent(1, 990.0), ScaleEvent(3, 1000.0)]
