"""Every reconciler through its work queue with injected failures: a refused write comes
back to its key after client-go's per-key back-off (5 ms, then 10 ms, ...) and is sent
again; a reconcile error is retried the same way; once a reconcile of the key asks for
nothing more, its failures are forgotten. One table row per controller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hpa_builders import hpa, target, worker

from cluster.api.errors import Conflict, ServiceUnavailable
from cluster.api.patches import NodeTaints
from cluster.api.requests import Delete, Patch, Request, Update, UpdateStatus
from cluster.clock import rfc3339
from cluster.controllers.cronjobs import CronJobReconciler
from cluster.controllers.disruption import DisruptionReconciler, pdb_status
from cluster.controllers.hpa import HorizontalPodAutoscalerReconciler
from cluster.controllers.jobttl import TTLAfterFinishedReconciler
from cluster.controllers.manager import ControllerManager
from cluster.controllers.namespace import NamespaceReconciler
from cluster.controllers.nodetaints import UNSCHEDULABLE_TAINT, NodeTaintReconciler
from cluster.controllers.ownedpods import ParkedPods
from cluster.controllers.podgc import GC_CHECK_PERIOD, PodGCReconciler
from cluster.controllers.podrecord import PodRecords
from cluster.controllers.reconciler import Key, Outcome, ReconcilerStep
from cluster.controllers.tainteviction import TaintEvictionReconciler
from cluster.controllers.writes import requests

T0 = 100.0


def _cordoned_node() -> dict:
    return {"kind": "Node", "metadata": {"name": "n1", "uid": "n-u"}, "spec": {"unschedulable": True}}


def _finished_job() -> dict:
    return {
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default", "uid": "j-u"},
        "spec": {"ttlSecondsAfterFinished": 0},
        "status": {"completionTime": rfc3339(50), "conditions": [{"type": "Complete", "status": "True"}]},
    }


def _due_cronjob() -> dict:
    return {
        "kind": "CronJob",
        "metadata": {"name": "tick", "namespace": "default", "uid": "cj-u", "creationTimestamp": rfc3339(0)},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {}}}}},
    }


def _terminating_namespace() -> dict:
    meta = {"name": "team", "uid": "ns-u", "deletionTimestamp": rfc3339(1)}
    return {"kind": "Namespace", "metadata": meta, "spec": {}, "status": {"phase": "Terminating"}}


def _config_map() -> dict:
    return {"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "team"}}


def _budget() -> dict:
    spec = {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    return {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default", "uid": "b-u"},
        "spec": spec,
    }


def _web_pod() -> dict:
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}}, "status": {}}


def _unscheduled_terminating_pod() -> dict:
    meta = {"name": "p", "namespace": "default", "uid": "p-u", "deletionTimestamp": rfc3339(1)}
    return {"kind": "Pod", "metadata": meta, "spec": {}, "status": {"phase": "Pending"}}


def _dedicated_node() -> dict:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
    return {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [taint]}}


def _bound_pod() -> dict:
    meta = {"name": "b", "namespace": "default", "uid": "b-u"}
    return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}


@dataclass
class Case:
    make: Any  # the reconciler class
    kind: str
    obj: dict
    refused: type  # the type of the first write the apiserver refuses
    wake: Callable[[float], float | None] = lambda sent_at: None  # when it looks again anyway
    before: tuple[tuple[str, dict], ...] = ()  # (kind, object) events fed first
    step: dict[str, Any] = field(default_factory=dict)  # ReconcilerStep's options


CASES = {
    "node-taints": Case(NodeTaintReconciler, "Node", _cordoned_node(), Patch),
    "ttl-after-finished": Case(TTLAfterFinishedReconciler, "Job", _finished_job(), Delete),
    "cronjob": Case(CronJobReconciler, "CronJob", _due_cronjob(), UpdateStatus, wake=lambda t: 120.1),
    "taint-eviction-controller": Case(
        TaintEvictionReconciler,
        "Pod",
        _bound_pod(),
        Delete,
        before=(("Node", _dedicated_node()),),
        step={"records": PodRecords()},
    ),
    "pod-garbage-collector": Case(
        PodGCReconciler,
        "Pod",
        _unscheduled_terminating_pod(),
        Delete,
        wake=lambda t: t + GC_CHECK_PERIOD,  # a delete never confirmed is asked again
        step={"records": PodRecords()},
    ),
    "namespace": Case(
        NamespaceReconciler, "Namespace", _terminating_namespace(), Delete, before=(("ConfigMap", _config_map()),)
    ),
    "disruption": Case(
        DisruptionReconciler, "PodDisruptionBudget", _budget(), UpdateStatus, before=(("Pod", _web_pod()),)
    ),
}
EXPECTED = {
    "taint-eviction-controller": Delete("Pod", "default", "b", "b-u", None),
    "pod-garbage-collector": Delete("Pod", "default", "p", "p-u", 0),
    "namespace": Delete("ConfigMap", "team", "cm", "", None, "Background"),
    # The status arithmetic is test_disruption.py's; here: the write, its uid and its retry.
    "disruption": UpdateStatus("PodDisruptionBudget", "default", "b", "b-u", pdb_status(_budget(), [_web_pod()], T0)),
    "node-taints": Patch("Node", "", "n1", "", NodeTaints(({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"},), ())),
    "ttl-after-finished": Delete("Job", "default", "j", "j-u", None, "Foreground"),
    "cronjob": UpdateStatus(
        "CronJob",
        "default",
        "tick",
        "cj-u",
        {
            "active": [{"kind": "Job", "namespace": "default", "name": "tick-29453761", "apiVersion": "batch/v1"}],
            "lastScheduleTime": rfc3339(60),
        },
    ),
}


def _started(case: Case) -> tuple[ControllerManager, ReconcilerStep, Request]:
    step = ReconcilerStep(case.make, sort_keys=True, **case.step)
    m = ControllerManager([step])
    m.on_events([(kind, "ADDED", o, None) for kind, o in case.before], T0)
    m.on_events([(case.kind, "ADDED", case.obj, None)], T0)
    sent = [r for r in requests(m.sync(T0)) if isinstance(r, case.refused)]
    assert m.next_wakeup() == case.wake(T0)
    return m, step, sent[0]


@pytest.mark.parametrize("name", CASES)
def test_a_refused_write_comes_back_after_a_growing_backoff(name):
    case = CASES[name]
    m, step, refused = _started(case)
    assert step.name == name and refused == EXPECTED[name]
    now = T0
    for delay in (0.005, 0.01, 0.02):
        m.on_failed(refused, Conflict("stale"), now)
        assert m.next_wakeup() == pytest.approx(now + delay)
        assert requests(m.sync(now + delay / 2)) == []  # held until the back-off ends
        now = m.next_wakeup()
        assert refused in requests(m.sync(now))  # sent again
    assert m.next_wakeup() == pytest.approx(case.wake(now))  # the write went through: nothing more held
    metrics = m.metrics()[name]
    assert metrics["workqueue_retries_total"] == 3 and metrics["refused_writes"] == 3
    assert metrics["controller_runtime_reconcile_errors_total"] == 0


@pytest.mark.parametrize("name", CASES)
def test_a_refusal_for_another_controller_is_not_retried(name):
    case = CASES[name]
    m, step, _ = _started(case)
    m.on_failed(Delete("Pod", "elsewhere", "p", "u"), ServiceUnavailable("down"), T0)
    assert m.next_wakeup() == case.wake(T0) and m.metrics()[name]["workqueue_retries_total"] == 0


class _Failing:
    """The reconciler under test, failing its first ``n`` reconciles with an error."""

    def __init__(self, inner: Any, n: int) -> None:
        self.inner, self.left = inner, n
        self.name, self.watches, self.indexers = inner.name, inner.watches, inner.indexers

    def reconcile(self, key: Key, now: float) -> Outcome:
        if self.left:
            self.left -= 1
            return Outcome(error="injected")
        return self.inner.reconcile(key, now)


@pytest.mark.parametrize("name", CASES)
def test_a_reconcile_error_is_retried_with_backoff_then_forgotten(name):
    case = CASES[name]
    step = ReconcilerStep(lambda cache: _Failing(case.make(cache), 3), sort_keys=True, **case.step)
    m = ControllerManager([step])
    m.on_events([(kind, "ADDED", o, None) for kind, o in case.before], T0)
    m.on_events([(case.kind, "ADDED", case.obj, None)], T0)
    now, waits = T0, []
    for _ in range(3):
        assert requests(m.sync(now)) == []
        waits.append(m.next_wakeup() - now)
        now = m.next_wakeup()
    assert waits == pytest.approx([0.005, 0.01, 0.02])
    assert EXPECTED[name] in requests(m.sync(now))
    assert step.queue.limiter.retries(_key(case.obj)) == 0  # forgotten on success
    results = m.metrics()[name]["controller_runtime_reconcile_total"]
    assert results["error"] == 3 and results["success"] + results["requeue_after"] == 1


def _key(obj: dict) -> Key:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


# ---- the controllers whose refused write is reported rather than sent again -----------------


def _hpa_manager() -> tuple[ControllerManager, Request]:
    step = ReconcilerStep(
        HorizontalPodAutoscalerReconciler,
        sort_keys=True,
        parking=ParkedPods(),
        unparked_by=("HorizontalPodAutoscaler",),
    )
    m = ControllerManager([step])
    objs = [hpa(), target(replicas=2), worker("web-a", "1250m"), worker("web-b", "1250m")]
    m.on_events([(o["kind"], "ADDED", o, None) for o in objs], T0)
    (update,) = [r for r in requests(m.sync(T0)) if isinstance(r, Update)]
    return m, update


def test_hpa_a_refused_target_update_is_reported_after_the_backoff_and_retried_next_period():
    m, update = _hpa_manager()
    assert update.obj["spec"]["replicas"] == 4 and m.next_wakeup() == T0 + 15
    m.on_failed(update, Conflict("stale"), T0)
    assert m.next_wakeup() == pytest.approx(T0 + 0.005)
    w = m.sync(T0 + 0.005)
    assert [e["reason"] for e in w.events] == ["FailedRescale"]
    (status,) = [r for r in requests(w) if isinstance(r, UpdateStatus)]
    able = next(c for c in status.status["conditions"] if c["type"] == "AbleToScale")
    assert (able["status"], able["reason"]) == ("False", "FailedUpdateScale")
    assert m.next_wakeup() == T0 + 15  # the next period tries again
    assert [r.obj["spec"]["replicas"] for r in requests(m.sync(T0 + 15)) if isinstance(r, Update)] == [4]


def test_hpa_a_reconcile_error_is_retried_with_backoff():
    step = ReconcilerStep(lambda cache: _Failing(HorizontalPodAutoscalerReconciler(cache), 2), sort_keys=True)
    m = ControllerManager([step])
    for o in [hpa(), target(replicas=2), worker("web-a", "1250m"), worker("web-b", "1250m")]:
        m.on_events([(o["kind"], "ADDED", o, None)], T0)
    assert requests(m.sync(T0)) == [] and m.next_wakeup() == pytest.approx(T0 + 0.005)
    assert requests(m.sync(T0 + 0.005)) == [] and m.next_wakeup() == pytest.approx(T0 + 0.015)
    assert any(isinstance(r, Update) for r in requests(m.sync(T0 + 0.015)))


# ---- node lifecycle: a refused write is looked at after the back-off, sent again at the monitor period


def test_node_lifecycle_a_refused_write_comes_back_after_the_backoff_and_is_sent_at_the_monitor_period():
    from cluster.api.patches import NodeConditions
    from cluster.controllers.nodelifecycle import MONITOR_PERIOD, node_lifecycle_step

    step = node_lifecycle_step()
    m = ControllerManager([step])
    quiet = {"type": "Ready", "status": "True", "lastHeartbeatTime": rfc3339(0)}
    m.on_events(
        [
            (
                "Node",
                "ADDED",
                {"kind": "Node", "metadata": {"name": "n1", "resourceVersion": "1"}, "status": {"conditions": [quiet]}},
                None,
            )
        ],
        0.0,
    )
    assert [r.event["reason"] for r in requests(m.sync(0.0))] == ["RegisteredNode"] and m.next_wakeup() == 40.0
    sent = [r for r in requests(m.sync(40.0)) if isinstance(r, Patch)]
    assert [type(r.patch) for r in sent] == [NodeConditions, NodeTaints]
    m.on_failed(sent[0], Conflict("stale"), 40.0)
    assert m.next_wakeup() == pytest.approx(40.005)  # the key comes back after the back-off
    assert requests(m.sync(40.005)) == []  # upstream resends on its next monitor pass, not at once
    assert m.next_wakeup() == 40.0 + MONITOR_PERIOD
    again = [r for r in requests(m.sync(40.0 + MONITOR_PERIOD)) if isinstance(r, Patch)]
    assert [type(r.patch) for r in again] == [NodeConditions, NodeTaints]
    metrics = m.metrics()["node-lifecycle"]
    assert metrics["workqueue_retries_total"] == 1 and metrics["refused_writes"] == 1
