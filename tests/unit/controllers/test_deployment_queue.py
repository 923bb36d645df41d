"""The Deployment controller through its work queue, as the manager runs it, with injected
refusals: a refused write comes back as the Deployment's next reconcile after client-go's
per-key back-off (5 ms, 10 ms, 20 ms: one step per sync whose writes were refused, however
many were), which reads it (a refused ReplicaSet create records FailedCreate, a refused
scale leaves the ReplicaSet as last seen, a refused status is written again) and asks
again; a reconcile that asks for nothing forgets the failures."""

from __future__ import annotations

import pytest
from deploy_builders import deployment

from cluster.api.errors import Conflict, InternalError
from cluster.api.requests import Create, RecordEvent, Request, Update, UpdateStatus
from cluster.controllers import deploymentutil as du
from cluster.controllers.deployment import DeploymentController
from cluster.controllers.manager import ControllerManager
from cluster.controllers.writes import requests

T0 = 100.0


def _dep(replicas: int = 3) -> dict:
    d = deployment("web", replicas=replicas)
    d["metadata"].update(uid="uid-web", resourceVersion="1", generation=1)
    return d


def _owned_rs(d: dict, replicas: int) -> dict:
    """The ReplicaSet ``d``'s controller made of its template, sized ``replicas``."""
    digest = du.template_hash(d["spec"]["template"])
    labels = {**d["spec"]["template"]["metadata"]["labels"], du.HASH_LABEL: digest}
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": True}
    annotations = {du.REVISION: "1", du.DESIRED: str(replicas), du.MAX_REPLICAS: str(replicas + 1)}
    meta = {"name": f"web-{digest}", "namespace": "default", "uid": "uid-rs", "resourceVersion": "7"}
    meta.update(labels=labels, annotations=annotations, ownerReferences=[ref], creationTimestamp="2026-01-01T00:00:00Z")
    spec = {"replicas": replicas, "selector": {"matchLabels": labels}, "template": d["spec"]["template"]}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta, "spec": spec, "status": {}}


def _manager(*objs: dict) -> ControllerManager:
    m = ControllerManager([DeploymentController()])
    m.on_events([(o["kind"], "ADDED", o, None) for o in objs], T0)
    return m


def _shape(reqs: list[Request]) -> list[tuple[str, str]]:
    return [(type(r).__name__, r.event["reason"] if isinstance(r, RecordEvent) else _kind(r)) for r in reqs]


def _kind(r: Request) -> str:
    return r.obj["kind"] if isinstance(r, (Create, Update)) else r.kind  # type: ignore[attr-defined]


def test_refused_writes_back_off_then_are_sent_again():
    m = _manager(_dep())
    sent = requests(m.sync(T0))
    first = [("Create", "ReplicaSet"), ("Update", "Deployment"), ("UpdateStatus", "Deployment")]
    assert _shape(sent)[:3] == first
    now = T0
    for delay in (0.005, 0.01, 0.02):
        for req in sent:
            if not isinstance(req, RecordEvent):
                m.on_failed(req, InternalError("etcd down"), now)  # three refusals, one step
        assert m.next_wakeup() == pytest.approx(now + delay)
        assert requests(m.sync(now + delay / 2)) == []  # held until the back-off ends
        now += delay
        sent = requests(m.sync(now))
        assert _shape(sent) == [*first, ("RecordEvent", "FailedCreate"), ("RecordEvent", "ScalingReplicaSet")]
        (create,) = [r for r in sent if isinstance(r, Create)]
        assert create.obj["spec"]["replicas"] == 3 and create.obj["metadata"]["name"].startswith("web-")
    metrics = m.metrics()["deployment"]
    assert metrics["workqueue_retries_total"] == 3 and metrics["refused_writes"] == 9


def test_a_refused_scale_is_read_at_the_next_reconcile_and_sent_again_from_the_last_seen_copy():
    d = _dep(replicas=3)
    d["metadata"]["annotations"] = {du.REVISION: "1"}  # nothing to write of the Deployment itself
    m = _manager(d, _owned_rs(d, replicas=1))
    (scale,) = [r for r in requests(m.sync(T0)) if isinstance(r, Update) and r.obj["kind"] == "ReplicaSet"]
    assert scale.obj["spec"]["replicas"] == 3 and scale.obj["metadata"]["resourceVersion"] == "7"
    m.on_failed(scale, Conflict("the object has been modified"), T0)
    assert m.next_wakeup() == pytest.approx(T0 + 0.005)
    again = [r for r in requests(m.sync(T0 + 0.005)) if isinstance(r, Update) and r.obj["kind"] == "ReplicaSet"]
    assert again == [scale]  # the refused copy is gone: the ReplicaSet as last seen, scaled anew
    m.on_failed(scale, Conflict("the object has been modified"), T0 + 0.005)
    assert m.next_wakeup() == pytest.approx(T0 + 0.015)  # the second failure: 10 ms


def test_a_refused_status_is_written_again_and_success_forgets_the_failures():
    d = _dep(replicas=1)
    d["metadata"]["annotations"] = {du.REVISION: "1"}
    m = _manager(d, _owned_rs(d, replicas=1))
    (status,) = [r for r in requests(m.sync(T0)) if isinstance(r, UpdateStatus)]
    m.on_failed(status, InternalError("etcd down"), T0)
    assert [r for r in requests(m.sync(T0 + 0.005)) if isinstance(r, UpdateStatus)] == [status]
    # The status lands: its echo names the Deployment, whose reconcile asks for nothing.
    echo = {**d, "metadata": {**d["metadata"], "resourceVersion": "2"}, "status": status.status}
    m.on_events([("Deployment", "MODIFIED", echo, None)], T0 + 1)
    assert requests(m.sync(T0 + 1)) == [] and m.next_wakeup() is None
    later = {**echo, "metadata": {**echo["metadata"], "resourceVersion": "3", "generation": 2}}
    m.on_events([("Deployment", "MODIFIED", later, None)], T0 + 2)  # a new observedGeneration
    (status,) = [r for r in requests(m.sync(T0 + 2)) if isinstance(r, UpdateStatus)]
    m.on_failed(status, InternalError("etcd down"), T0 + 2)
    assert m.next_wakeup() == pytest.approx(T0 + 2.005)  # forgotten: the first step again
