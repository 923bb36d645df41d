"""Expectation timings and invariants, on a mirror fed by hand."""

from cluster.scenario.expectations import Tracker
from cluster.scenario.mirror import Mirror
from cluster.scenario.schema import Expectation


def node(name, cpu="2", pods="110"):
    return {
        "kind": "Node",
        "metadata": {"name": name},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name, node_name="", phase="Pending", cpu="1", uid=None, labels=None):
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid or name, "labels": labels or {}},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase},
    }


def test_no_overcommit_counts_running_pods_only():
    m = Mirror()
    m.apply("Node", "ADDED", node("n1", cpu="2"), 0, 0)
    m.apply("Pod", "ADDED", pod("a", "n1", "Running", cpu="1500m"), 1, 0)
    m.apply("Pod", "ADDED", pod("b", "n1", "Pending", cpu="1"), 1, 0)  # bound, not admitted yet
    m.check_invariants(1)
    assert m.violations["noOvercommit"] == []
    m.apply("Pod", "MODIFIED", pod("b", "n1", "Running", cpu="1"), 2, 0)
    m.check_invariants(2)
    assert len(m.violations["noOvercommit"]) == 1 and "node n1" in m.violations["noOvercommit"][0]
    m.apply("Pod", "DELETED", pod("a", "n1", "Running"), 3, 0)
    m.check_invariants(3)
    assert m.requested_on("n1")["cpu"] == 1000


def test_pod_count_is_part_of_overcommit():
    m = Mirror()
    m.apply("Node", "ADDED", node("n1", cpu="8", pods="1"), 0, 0)
    for name in ("a", "b"):
        m.apply("Pod", "ADDED", pod(name, "n1", "Running", cpu="1"), 0, 0)
    m.check_invariants(0)
    assert "pods=2" in m.violations["noOvercommit"][0]


def test_double_binding_is_detected():
    m = Mirror()
    m.apply("Pod", "ADDED", pod("a", "n1"), 0, 0)
    m.apply("Pod", "MODIFIED", pod("a", "n2"), 1, 0)
    assert m.violations["noDoubleBinding"] == ["pod default/a (a) bound to n1 and then to n2"]


def exp(**kw):
    return Expectation.model_validate(kw)


def test_within_decides_on_first_hold_or_after_deadline():
    m = Mirror()
    t = Tracker([exp(within=10, pod={"name": "a"}, phase="Running"), exp(within=5, pod={"name": "b"}, absent=False)])
    m.apply("Pod", "ADDED", pod("a"), 0, 0)
    t.observe(m, 1)
    assert [v.ok for v in t.verdicts] == [None, None]
    m.apply("Pod", "MODIFIED", pod("a", "n1", "Running"), 4, 0)
    t.observe(m, 6)
    assert [(v.ok, v.decided_at) for v in t.verdicts] == [(True, 6), (False, 6)]
    assert t.verdicts[1].detail.startswith("not within 5s")


def test_always_fails_at_first_violation_and_end_is_judged_at_finish():
    m = Mirror()
    t = Tracker(
        [
            exp(always=True, count={"kind": "Pod"}, atMost=1),
            exp(at="end", count={"kind": "Pod", "phase": "Running"}, equals=1),
        ]
    )
    m.apply("Pod", "ADDED", pod("a", "n1", "Running"), 0, 0)
    t.observe(m, 0)
    assert t.settled(m)  # the end expectation holds now
    m.apply("Pod", "ADDED", pod("b"), 1, 0)
    t.observe(m, 1)
    assert t.verdicts[0].ok is False and t.verdicts[0].decided_at == 1
    t.finish(m, 2)
    assert t.verdicts[1].ok is True and not t.passed


def test_label_selector_pod_expectation_needs_every_match():
    m = Mirror()
    t = Tracker([exp(within=5, pod={"labelSelector": "app=web"}, phase="Running")])
    m.apply("Pod", "ADDED", pod("a", "n1", "Running", labels={"app": "web"}), 0, 0)
    m.apply("Pod", "ADDED", pod("b", labels={"app": "web"}), 0, 0)
    t.observe(m, 1)
    assert t.verdicts[0].ok is None and "default/b" in t.verdicts[0].detail
    m.apply("Pod", "MODIFIED", pod("b", "n1", "Running", labels={"app": "web"}), 2, 0)
    t.observe(m, 2)
    assert t.verdicts[0].ok is True


def test_event_expectation_matches_object_and_reason():
    m = Mirror()
    ev = {
        "kind": "Event",
        "metadata": {"name": "e"},
        "reason": "Scheduled",
        "type": "Normal",
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "a"},
    }
    m.apply("Event", "ADDED", ev, 0, 0)
    t = Tracker(
        [
            exp(within=1, event={"reason": "Scheduled", "object": "Pod/default/a"}, atLeast=1),
            exp(within=1, event={"reason": "Scheduled", "object": "Pod/default/b"}, atLeast=1),
        ]
    )
    t.observe(m, 2)
    assert [v.ok for v in t.verdicts] == [True, False]


def test_throughput_needs_enough_binds_and_latency_percentiles():
    from cluster.scenario.report import MIN_BINDS_FOR_THROUGHPUT, metrics, percentile

    m = Mirror()
    for i in range(3):
        m.apply("Pod", "ADDED", pod(f"p{i}", "n1", "Running"), i, real_now=i * 0.001)
    assert metrics(m, {})["schedulingThroughput"] is None
    for i in range(3, MIN_BINDS_FOR_THROUGHPUT):
        m.apply("Pod", "ADDED", pod(f"p{i}", "n1", "Running"), 0, real_now=1.0)
    assert metrics(m, {})["schedulingThroughput"] == MIN_BINDS_FOR_THROUGHPUT
    assert [percentile([1, 2, 3, 4], p) for p in (50, 90, 99)] == [2, 4, 4]
