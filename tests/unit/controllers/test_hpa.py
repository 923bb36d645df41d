"""The HorizontalPodAutoscaler controller (pure, no Ray): its exact status, Events and
target writes, failures included, and a scale-up / scale-down run against the real
apiserver logic. The arithmetic's tables are in ``test_hpacalc.py``."""

from __future__ import annotations

import copy

from deploy_builders import deployment
from hpa_builders import hpa, target, worker
from workload_builders import Real

from cluster.api.errors import Conflict
from cluster.api.requests import Update, UpdateStatus
from cluster.clock import rfc3339
from cluster.controllers.hpa import HorizontalPodAutoscalerReconciler
from cluster.controllers.hparecommend import DOWN_STABILIZED, UP_LIMIT
from cluster.controllers.ownedpods import ParkedPods
from cluster.controllers.reconciler import ReconcilerStep


def hpa_step(**kw) -> ReconcilerStep:
    return ReconcilerStep(
        lambda cache: HorizontalPodAutoscalerReconciler(cache, **kw),
        sort_keys=True,
        parking=ParkedPods(),
        unparked_by=("HorizontalPodAutoscaler",),
    )


class Sync:
    """One sync's writes, by what they are: target ``updates`` (the objects), ``hpa_status``
    (namespace, name, uid, status) and ``events``."""

    def __init__(self, w) -> None:
        self.updates = [r.obj for r in w.requests if isinstance(r, Update)]
        self.hpa_status = [(r.namespace, r.name, r.uid, r.status) for r in w.requests if isinstance(r, UpdateStatus)]
        self.events = w.events

    def __bool__(self) -> bool:
        return bool(self.updates or self.hpa_status or self.events)


class Drive:
    """The controller fed by hand: events in, one sync's writes out."""

    def __init__(self, *objs, **kw):
        self.ctrl = hpa_step(**kw)
        self.add(*objs)

    def add(self, *objs, etype="ADDED", now=0.0):
        for o in objs:
            self.ctrl.on_event(o["kind"], etype, o, now)
        return self

    def sync(self, now=0.0):
        return Sync(self.ctrl.sync(now))


def status_of(w, name="web") -> dict:
    [(ns, n, uid, status)] = [s for s in w.hpa_status if s[1] == name]
    return status


def conds(status) -> dict:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status.get("conditions", [])}


def events(w) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in w.events]


# ---- the controller ------------------------------------------------------------------------------


def test_scale_up_writes_the_target_status_and_event():
    d = Drive(hpa(), target(replicas=2), worker("web-a", "1250m"), worker("web-b", "1250m"))
    w = d.sync(100.0)
    [scaled] = w.updates
    assert scaled["spec"]["replicas"] == 4 and scaled["metadata"]["resourceVersion"] == "7"
    assert d.ctrl.cache.get("Deployment", "default", "web")["spec"]["replicas"] == 2  # the cache is untouched
    ts = rfc3339(100.0)
    assert status_of(w) == {
        "currentReplicas": 2,
        "desiredReplicas": 4,
        "lastScaleTime": ts,
        "observedGeneration": 1,
        "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 250, "averageValue": "1250m"}}}
        ],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "lastTransitionTime": ts, "reason": "SucceededRescale",
             "message": "the HPA controller was able to update the target scale to 4"},
            {"type": "ScalingActive", "status": "True", "lastTransitionTime": ts, "reason": "ValidMetricFound",
             "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization "
                        "(percentage of request)"},
            {"type": "ScalingLimited", "status": "True", "lastTransitionTime": ts, "reason": "ScaleUpLimit",
             "message": "the desired replica count is increasing faster than the maximum scale rate"},
        ],
    }  # fmt: skip
    assert events(w) == [
        (
            "Normal",
            "SuccessfulRescale",
            "New size: 4; reason: cpu resource utilization (percentage of request) above target",
        )
    ]
    assert w.events[0]["source"]["component"] == "horizontal-pod-autoscaler"
    assert d.ctrl.next_wakeup() == 115.0


def test_every_hpa_is_evaluated_each_period_and_unchanged_status_is_not_rewritten():
    d = Drive(hpa(), target(replicas=2), worker("web-a", "270m"), worker("web-b", "270m"))
    w = d.sync(0.0)
    assert not w.updates and conds(status_of(w))["AbleToScale"][1] == "ReadyForNewScale"
    assert not d.sync(10.0)  # not due
    stored = hpa()
    stored["status"] = status_of(w)
    d.add(stored, etype="MODIFIED")
    assert not d.sync(15.0)  # due, evaluated, nothing changed
    assert d.ctrl.next_wakeup() == 30.0


def test_memory_average_value_target():
    metric = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}},
    }
    pods = [worker(f"web-{i}", "300Mi", "1Gi", resource="memory") for i in "ab"]
    w = Drive(hpa(metrics=[metric]), target(replicas=2), *pods).sync(0.0)
    assert w.updates[0]["spec"]["replicas"] == 4
    assert status_of(w)["currentMetrics"] == [
        {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "314572800"}}}
    ]
    assert events(w) == [("Normal", "SuccessfulRescale", "New size: 4; reason: memory resource above target")]


def test_several_metrics_take_the_largest():
    mem = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    cpu = hpa()["spec"]["metrics"][0]
    pods = [worker(f"web-{i}", "300m") for i in "ab"]  # cpu 60% of 50%: 3
    for p in pods:
        p.meta["annotations"]["kubemu.io/memory-usage"] = "200Mi"  # 100% of 50%: 4
        p.spec["containers"][0]["resources"]["requests"]["memory"] = "200Mi"
    w = Drive(hpa(metrics=[cpu, mem]), target(replicas=2), *pods).sync(0.0)
    assert w.updates[0]["spec"]["replicas"] == 4
    assert events(w)[0][2].endswith("reason: memory resource utilization (percentage of request) above target")


def test_missing_target():
    w = Drive(hpa()).sync(0.0)
    msg = 'deployments.apps "web" not found'
    assert events(w) == [("Warning", "FailedGetScale", msg)]
    assert conds(status_of(w)) == {
        "AbleToScale": (
            "False",
            "FailedGetScale",
            f"the HPA controller was unable to get the target's current scale: {msg}",
        )
    }
    assert not w.updates
    other = hpa(kind="CronJob")
    w = Drive(other).sync(0.0)
    assert events(w) == [("Warning", "FailedGetScale", 'no matches for kind "CronJob" in group "apps"')]


def test_a_target_at_zero_disables_scaling():
    w = Drive(hpa(), target(replicas=0)).sync(0.0)
    assert status_of(w)["desiredReplicas"] == 0 and "currentReplicas" not in status_of(w)
    assert conds(status_of(w))["ScalingActive"] == (
        "False",
        "ScalingDisabled",
        "scaling is disabled since the replica count of the target is zero",
    )
    assert not w.updates and not w.events


def test_replicas_outside_min_max_are_brought_back():
    w = Drive(hpa(low=3, high=5), target(replicas=1)).sync(0.0)
    assert w.updates[0]["spec"]["replicas"] == 3
    assert events(w) == [
        ("Normal", "SuccessfulRescale", "New size: 3; reason: Current number of replicas below Spec.MinReplicas")
    ]
    w = Drive(hpa(low=3, high=5), target(replicas=9)).sync(0.0)
    assert events(w) == [
        ("Normal", "SuccessfulRescale", "New size: 5; reason: Current number of replicas above Spec.MaxReplicas")
    ]


def test_a_missing_request_fails_the_metric():
    p = worker("web-a", "300m")
    del p.spec["containers"][0]["resources"]
    w = Drive(hpa(), target(replicas=1), p).sync(0.0)
    inner = "failed to get cpu utilization: missing request for cpu in container c of Pod web-a"
    assert events(w) == [
        ("Warning", "FailedGetResourceMetric", inner),
        ("Warning", "FailedComputeMetricsReplicas",
         f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {inner}"),
    ]  # fmt: skip
    s = status_of(w)
    assert conds(s)["ScalingActive"] == (
        "False",
        "FailedGetResourceMetric",
        f"the HPA was unable to compute the replica count: {inner}",
    )
    assert s["currentMetrics"] == [{"type": ""}] and s["desiredReplicas"] == 0 and s["currentReplicas"] == 1


def test_one_failing_metric_does_not_stop_a_scale_up():
    bad = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    pods = [worker(f"web-{i}", "1250m") for i in "ab"]
    w = Drive(hpa(metrics=[hpa()["spec"]["metrics"][0], bad]), target(replicas=2), *pods).sync(0.0)
    assert w.updates[0]["spec"]["replicas"] == 4
    assert [e[1] for e in events(w)] == ["FailedGetResourceMetric", "SuccessfulRescale"]
    assert conds(status_of(w))["ScalingActive"][1] == "ValidMetricFound"


def test_selector_shared_by_two_hpas_is_ambiguous():
    d = Drive(hpa("one"), hpa("two"), target(replicas=2), worker("web-a", "250m"))
    w = d.sync(0.0)  # "one" registers its selector first; "two" then finds the pods taken
    msg = "pods by selector app=web are controlled by multiple HPAs: [default/one default/two]"
    assert ("Warning", "AmbiguousSelector", msg) in events(w)
    assert conds(status_of(w, "two"))["ScalingActive"] == ("False", "AmbiguousSelector", msg)


def test_a_refused_update_is_reported_and_retried_next_period():
    d = Drive(hpa(), target(replicas=2), worker("web-a", "1250m"), worker("web-b", "1250m"))
    w = d.sync(0.0)
    error = Conflict('Operation cannot be fulfilled on deployments "web": the object has been modified')
    d.ctrl.on_failed(Update(w.updates[0]), error, 0.5)
    assert d.ctrl.next_wakeup() == 0.505  # the work queue's back-off
    w2 = d.sync(0.505)
    assert events(w2) == [("Warning", "FailedRescale", f"New size: 4; reason: cpu resource utilization "
                                                         f"(percentage of request) above target; error: {error.message}")]  # fmt: skip
    s = status_of(w2)
    assert conds(s)["AbleToScale"] == (
        "False",
        "FailedUpdateScale",
        f"the HPA controller was unable to update the target scale: {error.message}",
    )
    assert s["desiredReplicas"] == 0 and "lastScaleTime" not in s
    assert d.sync(15.0).updates[0]["spec"]["replicas"] == 4


def test_behavior_policies_limit_the_rise():
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}, "scaleDown": {}}
    pods = [worker(f"web-{i}", "1250m") for i in "ab"]
    d = Drive(hpa(behavior=behavior), target(replicas=2), *pods)
    w = d.sync(0.0)
    assert w.updates[0]["spec"]["replicas"] == 3
    assert conds(status_of(w))["ScalingLimited"] == ("True",) + UP_LIMIT
    d.add(target(replicas=3, rv="8"), etype="MODIFIED")
    assert not d.sync(15.0).updates  # the period's one pod is used up
    assert d.sync(60.0).updates[0]["spec"]["replicas"] == 4


# ---- a run against the apiserver -------------------------------------------------------------------


class Cluster:
    """The HPA against the real apiserver logic; the test plays the Deployment controller
    and the kubelet: the pods follow ``spec.replicas``, Running and Ready at once. The
    first pods carry the load, a ramp from 20% to 120% of their request over 60 s; pods
    added later idle at 20%."""

    HOT, IDLE = "ramp(100m, 600m, 60s)", "100m"

    def __init__(self) -> None:
        self.loop = Real(hpa_step())
        self.seq = 0
        self.loop.create(deployment("web", replicas=2))
        h = hpa(low=1, high=8)
        del h["metadata"]["uid"]
        self.loop.create(h)
        self.follow(self.HOT)

    def follow(self, usage: str = IDLE) -> None:
        api, now = self.loop.api, self.loop.now
        want = self.loop.get("Deployment", "web")["spec"]["replicas"]
        pods = self.loop.pods()
        for p in pods[want:]:
            api.delete("Pod", "default", p["metadata"]["name"], p["metadata"]["uid"], 0, now)
        for _ in range(want - len(pods)):
            self.seq += 1
            p = worker(f"web-{self.seq:02d}", usage, start=now)
            stored = api.create({k: copy.deepcopy(p[k]) for k in ("apiVersion", "kind", "metadata", "spec")}, now)
            m = stored["metadata"]
            api.update_status("Pod", "default", m["name"], m["uid"], copy.deepcopy(p["status"]))

    def end_load(self) -> None:
        """The loaded pods go (a rollout); their replacements idle."""
        for p in self.loop.pods():
            if p["metadata"]["annotations"]["kubemu.io/cpu-usage"] == self.HOT:
                self.loop.api.delete("Pod", "default", p["metadata"]["name"], p["metadata"]["uid"], 0, self.loop.now)

    def run(self, until: float) -> list[tuple[float, int]]:
        """Every 5 s: the pods follow the Deployment, the HPA syncs; returns the changes
        of ``spec.replicas`` as (time, replicas)."""
        changes, last = [], self.loop.get("Deployment", "web")["spec"]["replicas"]
        while self.loop.now < until:
            self.loop.now += 5.0
            self.follow()
            self.loop.pump()
            replicas = self.loop.get("Deployment", "web")["spec"]["replicas"]
            if replicas != last:
                changes.append((self.loop.now, replicas))
            last = replicas
        return changes


def test_scales_up_under_a_usage_ramp_and_down_only_after_the_stabilisation_window():
    c = Cluster()
    # The HPA is first seen at 5 s, then evaluated every 15 s. At 35 s the two loaded pods
    # use 391m (78% of 50%): 4 (the max(2 * 2, 4) limit); at 50 s 1232m over 4 pods: 5; at
    # 65 s 1500m over 5 pods: 6; from 80 s 1600m over 6 pods is within the tolerance.
    assert c.run(200.0) == [(35.0, 4), (50.0, 5), (65.0, 6)]
    status = c.loop.get("HorizontalPodAutoscaler", "web")["status"]
    assert status["currentMetrics"][0]["resource"]["current"] == {"averageUtilization": 53, "averageValue": "266m"}
    assert (status["lastScaleTime"], status["desiredReplicas"]) == (rfc3339(65.0), 6)
    c.end_load()
    # From 215 s all idle (20%: 3 of 6), but the 200 s sync recommended 6: the scale-down
    # waits until that recommendation is more than 300 s old (515 s); then 2 in turn.
    assert c.run(900.0) == [(515.0, 3), (830.0, 2)]
    status = c.loop.get("HorizontalPodAutoscaler", "web")["status"]
    assert (status["currentReplicas"], status["observedGeneration"]) == (2, 1)
    assert conds(status)["AbleToScale"] == ("True", *DOWN_STABILIZED)
    messages = [e["message"] for e in c.loop.api.store.objects("Event")]
    assert messages.count("New size: 3; reason: All metrics below target") == 1
