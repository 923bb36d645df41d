"""The workload controllers (ReplicaSet, ReplicationController, DaemonSet, StatefulSet,
Job) through their work queue, as the manager runs them, with injected refusals: a refused
pod create or delete comes back as the owner's next reconcile (its Event at once), holds
the owner for client-go's per-key back-off (5 ms, 10 ms, 20 ms: the queue's, one step per
sync's refusals) and is sent again when it ends; a refusal that does not back off (a slow
start's unattempted creates, a pod already gone, a refused adoption or status write) is
acted on at the next sync. One table row per controller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sts_builders import sts
from workload_builders import ds, node, pod, rs

from cluster.api.errors import Conflict, Forbidden, InternalError, NotAttempted, NotFound
from cluster.api.requests import Create, Delete, RecordEvent, Request, Update, UpdateStatus
from cluster.controllers.batchjob import JobController
from cluster.controllers.daemonset import DaemonSetController
from cluster.controllers.manager import ControllerManager
from cluster.controllers.replicaset import ReplicaSetController
from cluster.controllers.replicationcontroller import ReplicationControllerController
from cluster.controllers.statefulset import StatefulSetController
from cluster.controllers.workqueue import WorkQueue
from cluster.controllers.writes import requests

T0 = 100.0


def _rc() -> dict:
    spec = {"replicas": 1, "selector": {"app": "rc"}}
    spec["template"] = {"metadata": {"labels": {"app": "rc"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": _meta("rc"), "spec": spec}


def _job() -> dict:
    labels = {"batch.kubernetes.io/controller-uid": "uid-job"}  # what the apiserver defaults
    containers = [{"name": "c", "image": "x"}]
    template = {"metadata": {"labels": labels}, "spec": {"restartPolicy": "Never", "containers": containers}}
    spec = {"completions": 1, "parallelism": 1, "selector": {"matchLabels": labels}, "template": template}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("job"), "spec": spec}


def running(name: str, owner: dict, node: str = "n1") -> dict:
    return pod(name).owned_by(owner).on(node).ready()


def _meta(name: str) -> dict:
    return {"name": name, "namespace": "default", "uid": f"uid-{name}"}


@dataclass
class Case:
    make: Any  # the controller (a WorkloadStep)
    objs: tuple[dict, ...]  # fed as ADDED, in order
    event: str  # the reason of the Event a refused create records


CREATES = {
    "replicaset": Case(ReplicaSetController, (rs("web", replicas=1),), "FailedCreate"),
    "replicationcontroller": Case(ReplicationControllerController, (_rc(),), "FailedCreate"),
    "daemonset": Case(DaemonSetController, (node("n1"), ds("agent")), "FailedCreate"),
    "statefulset": Case(StatefulSetController, (sts("web", 1),), "FailedCreate"),
    "job": Case(JobController, (_job(),), "FailedCreate"),
}


def _started(case: Case) -> tuple[ControllerManager, Create]:
    step = case.make()
    m = ControllerManager([step])
    m.on_events([(o["kind"], "ADDED", o, None) for o in case.objs], T0)
    (create,) = [r for r in requests(m.sync(T0)) if isinstance(r, Create) and r.obj["kind"] == "Pod"]
    return m, create


def _writes(reqs: list[Request]) -> list[Request]:
    """The pod writes among ``reqs`` (not the owner's status, not Events)."""
    return [r for r in reqs if not isinstance(r, (RecordEvent, UpdateStatus))]


def _reasons(reqs: list[Request]) -> list[str]:
    return [r.event["reason"] for r in reqs if isinstance(r, RecordEvent)]


def _same_pod(a: Create, b: Request) -> bool:
    return isinstance(b, Create) and {**a.obj, "metadata": None} == {**b.obj, "metadata": None}


@pytest.mark.parametrize("name", CREATES)
def test_a_refused_create_backs_off_then_is_sent_again(name):
    case = CREATES[name]
    m, create = _started(case)
    now = T0
    for delay in (0.005, 0.01, 0.02):
        m.on_failed(create, Forbidden("exceeded quota"), now)
        assert m.next_wakeup() == pytest.approx(now + delay)
        read = requests(m.sync(now))  # the owner's next reconcile reads the refusal
        assert _reasons(read) == [case.event] and not any(isinstance(r, Create) for r in read)
        assert requests(m.sync(now + delay / 2)) == []  # held until the back-off ends
        now = m.next_wakeup()
        (again,) = [r for r in _writes(requests(m.sync(now))) if isinstance(r, Create) and r.obj["kind"] == "Pod"]
        assert _same_pod(create, again)
        create = again
    metrics = m.metrics()[name]
    assert metrics["workqueue_retries_total"] == 3 and metrics["refused_writes"] == 3


@pytest.mark.parametrize("name", CREATES)
def test_a_refusal_for_another_controller_changes_nothing(name):
    m, _ = _started(CREATES[name])
    wake = m.next_wakeup()
    m.on_failed(Delete("Pod", "elsewhere", "p", "u"), InternalError("boom"), T0)
    assert requests(m.sync(T0)) == [] and m.next_wakeup() == wake
    assert m.metrics()[name]["workqueue_retries_total"] == 0


def test_the_refusals_of_one_sync_back_off_one_step():
    m = ControllerManager([ReplicaSetController()])
    m.on_events([("ReplicaSet", "ADDED", rs("web", replicas=3), None)], T0)
    creates = _writes(requests(m.sync(T0)))
    assert len(creates) == 3
    for c in creates:
        m.on_failed(c, Forbidden("exceeded quota"), T0)
    assert m.next_wakeup() == pytest.approx(T0 + 0.005)
    assert _reasons(requests(m.sync(T0))) == ["FailedCreate"] * 3
    assert len(_writes(requests(m.sync(T0 + 0.005)))) == 3 and m.metrics()["replicaset"]["workqueue_retries_total"] == 1


def test_unattempted_creates_are_no_longer_expected_without_a_back_off():
    m, create = _started(CREATES["replicaset"])
    m.on_failed(create, NotAttempted("an earlier batch failed"), T0)
    assert m.next_wakeup() != pytest.approx(T0 + 0.005)
    (again,) = _writes(requests(m.sync(T0)))  # created again at once, no Event
    assert _same_pod(create, again)


@pytest.mark.parametrize(
    "error,backs_off,reasons",
    [
        (InternalError("boom"), True, ["FailedDelete"]),
        (NotFound("gone"), False, ["SuccessfulDelete"]),  # done anyway: asked again at once
    ],
)
def test_a_refused_delete(error, backs_off, reasons):
    web = rs("web", replicas=1)
    m = ControllerManager([ReplicaSetController()])
    m.on_events([(o["kind"], "ADDED", o, None) for o in (web, running("a", web), running("b", web, node="n2"))], T0)
    (delete,) = _writes(requests(m.sync(T0)))
    assert isinstance(delete, Delete) and delete.kind == "Pod"
    m.on_failed(delete, error, T0)
    read = requests(m.sync(T0))
    assert _reasons(read) == reasons and (_writes(read) == []) == backs_off
    if backs_off:
        assert m.next_wakeup() == pytest.approx(T0 + 0.005)
        assert _writes(requests(m.sync(T0 + 0.005))) == [delete]


def test_a_refused_adoption_is_undone_and_not_retried_until_the_pod_changes():
    web = rs("web", replicas=1)
    orphan = pod("orphan").labels(app="web").rv("7")
    m = ControllerManager([ReplicaSetController()])
    m.on_events([(o["kind"], "ADDED", o, None) for o in (web, orphan)], T0)
    (adopt,) = _writes(requests(m.sync(T0)))
    assert isinstance(adopt, Update) and adopt.obj["metadata"]["ownerReferences"][0]["uid"] == "uid-rs-web"
    m.on_failed(adopt, Conflict("modified"), T0)
    (create,) = _writes(requests(m.sync(T0)))  # no back-off: the pod it lost is created
    assert isinstance(create, Create)
    m.on_events([("Pod", "MODIFIED", orphan.copy().rv("8"), None)], T0 + 1)
    assert [type(r) for r in _writes(requests(m.sync(T0 + 1)))] == [Update]


def test_a_refused_status_write_is_sent_again_at_the_next_sync():
    m = ControllerManager([ReplicaSetController()])
    m.on_events([("ReplicaSet", "ADDED", rs("web", replicas=0), None)], T0)
    (status,) = requests(m.sync(T0))
    assert isinstance(status, UpdateStatus) and requests(m.sync(T0)) == []
    m.on_failed(status, Conflict("stale"), T0)
    assert requests(m.sync(T0)) == [status] and m.next_wakeup() is None


def test_a_held_key_stays_held_while_ready():
    q: WorkQueue[str] = WorkQueue()
    q.add("k")
    assert q.back_off("k", 1.0) == pytest.approx(1.005) and q.next_ready() == pytest.approx(1.005)
    assert q.pop_ready(1.0) == ["k"] and q.has_ready() is False
