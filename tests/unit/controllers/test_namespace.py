"""The namespace controller: a terminating namespace's content deleted once each, the
``kubernetes`` finalizer dropped when it is empty, refused writes; then a namespace
deletion end to end through the apiserver, the ReplicaSet controller, the garbage
collector and the namespace controller."""

import pytest
from gc_builders import ControlPlane, feed, obj, replica_set, writes

from cluster.api.errors import Forbidden, NotFound, ServiceUnavailable
from cluster.api.requests import Create, Delete, RecordEvent, UpdateStatus
from cluster.controllers.garbagecollector import GarbageCollector
from cluster.controllers.manager import ControllerManager
from cluster.controllers.namespace import NamespaceReconciler
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.replicaset import ReplicaSetController
from cluster.controllers.writes import requests


def namespace(name="team", phase="Active", deleting=False, finalizers=("kubernetes",)):
    ns = obj("Namespace", name, ns="")
    ns["spec"] = {"finalizers": list(finalizers)} if finalizers else {}
    ns["status"] = {"phase": phase}
    if deleting:
        ns["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:01Z"
    return ns


TERMINATING = namespace(phase="Terminating", deleting=True)
CONTENT = [obj("Pod", "p", ns="team"), obj("ConfigMap", "cm", ns="team"), obj("ReplicaSet", "web", ns="team")]


CASES = [
    # (case, events, the writes of the next sync)
    ("an active namespace: nothing", [("ADDED", namespace()), *[("ADDED", o) for o in CONTENT]], []),
    (
        "terminating: every object in it deleted, Background, in key order",
        [("ADDED", namespace()), *[("ADDED", o) for o in CONTENT], ("MODIFIED", TERMINATING)],
        [
            ("delete", "ConfigMap/team/cm", "Background"),
            ("delete", "Pod/team/p", "Background"),
            ("delete", "ReplicaSet/team/web", "Background"),
        ],
    ),
    (
        "other namespaces are left alone",
        [("ADDED", obj("Pod", "q", ns="default")), ("ADDED", obj("Pod", "p", ns="team")), ("ADDED", TERMINATING)],
        [("delete", "Pod/team/p", "Background")],
    ),
    (
        "terminating and empty: the conditions say so, and the kubernetes finalizer goes",
        [("ADDED", TERMINATING)],
        [("status", "Namespace/team", "Terminating"), ("finalize", "Namespace/team", "kubernetes")],
    ),
    ("already finalized: nothing", [("ADDED", namespace(phase="Terminating", deleting=True, finalizers=()))], []),
    (
        "kinds in order, then names within a kind; a deleted object is not asked for",
        [
            *[("ADDED", obj(kind, name, ns="team")) for kind, name in [("Pod", "b"), ("Pod", "a"), ("ConfigMap", "z")]],
            ("ADDED", obj("ConfigMap", "y", ns="team")),
            ("DELETED", obj("ConfigMap", "y", ns="team")),
            ("ADDED", TERMINATING),
        ],
        [
            ("delete", "ConfigMap/team/z", "Background"),
            ("delete", "Pod/team/a", "Background"),
            ("delete", "Pod/team/b", "Background"),
        ],
    ),
    (
        "a DELETED for an object never seen changes nothing",
        [("DELETED", obj("Pod", "x", ns="team")), ("DELETED", obj("Secret", "s", ns="other")), ("ADDED", TERMINATING)],
        [("status", "Namespace/team", "Terminating"), ("finalize", "Namespace/team", "kubernetes")],
    ),
    (
        "deleting but not yet Terminating: the phase first",
        [("ADDED", namespace(deleting=True))],
        [("status", "Namespace/team", "Terminating"), ("finalize", "Namespace/team", "kubernetes")],
    ),
]


@pytest.mark.parametrize("case,events,expected", CASES, ids=[c[0] for c in CASES])
def test_namespace_controller(case, events, expected):
    nc = _namespace_controller()
    feed(nc, *events)
    assert writes(nc.sync(0.0)) == expected
    assert writes(nc.sync(1.0)) == []  # asked once


def _namespace_controller() -> ReconcilerStep:
    return ReconcilerStep(NamespaceReconciler, sort_keys=True)


def test_the_finalizer_goes_once_the_last_object_is_deleted():
    nc = _namespace_controller()
    feed(nc, ("ADDED", obj("Pod", "a", ns="team")), ("ADDED", obj("Pod", "b", ns="team")), ("ADDED", TERMINATING))
    assert len(writes(nc.sync(0.0))) == 2
    feed(nc, ("MODIFIED", obj("Pod", "a", ns="team", deleting=True)), ("DELETED", obj("Pod", "a", ns="team")))
    # No new delete: what is left is what remains (the conditions; ``test_namespace_conditions.py``).
    assert writes(nc.sync(1.0)) == [("status", "Namespace/team", "Terminating")]
    assert nc.reconciler.content("team") == [("Pod", "b")]
    feed(nc, ("DELETED", obj("Pod", "b", ns="team")))
    assert writes(nc.sync(2.0)) == [("finalize", "Namespace/team", "kubernetes")]  # the status: once per version
    feed(nc, ("DELETED", TERMINATING))
    assert writes(nc.sync(3.0)) == []


def test_a_modified_object_costs_nothing():
    nc = _namespace_controller()
    feed(nc, ("MODIFIED", obj("Pod", "p", ns="default")))
    assert nc.reconciler.content("default") == [] and nc.queue.depth() == 0
    assert nc.on_lease_head("MODIFIED", None, 0.0) and not nc.on_lease_head("ADDED", None, 0.0)


@pytest.mark.parametrize("error,retried", [(ServiceUnavailable("down"), True), (NotFound("gone"), False)])
def test_a_refused_delete_is_retried_only_when_a_retry_can_help(error, retried):
    nc = _namespace_controller()
    m = ControllerManager([nc])
    m.on_events([("Pod", "ADDED", obj("Pod", "p", ns="team"), None), ("Namespace", "ADDED", TERMINATING, None)], 0.0)
    (sent,) = requests(m.sync(0.0))
    m.on_failed(sent, error, 0.0)
    m.on_failed(Delete("Pod", "default", "other", "", None, "Background"), error, 0.0)  # not its own: ignored
    assert m.next_wakeup() == pytest.approx(0.005)  # the work queue's back-off, either way
    expected = [("delete", "Pod/team/p", "Background")] if retried else [("status", "Namespace/team", "Terminating")]
    assert writes(m.sync(0.005)) == expected  # not retried: what is left remains


def test_a_refused_finalize_or_status_is_asked_again():
    nc = _namespace_controller()
    m = ControllerManager([nc])
    m.on_events([("Namespace", "ADDED", namespace(deleting=True), None)], 0.0)
    status, finalize = requests(m.sync(0.0))
    m.on_failed(finalize, ServiceUnavailable("down"), 0.0)
    m.on_failed(status, ServiceUnavailable("down"), 0.0)
    m.on_failed(UpdateStatus("ReplicaSet", "team", "web", "u-web", {}), ServiceUnavailable("down"), 0.0)  # not its own
    assert writes(m.sync(0.005)) == [
        ("status", "Namespace/team", "Terminating"),
        ("finalize", "Namespace/team", "kubernetes"),
    ]
    assert writes(m.sync(1.0)) == [] and m.next_wakeup() is None


def test_the_default_controller_manager_runs_the_namespace_controller():
    assert "namespace" in ControllerManager().metrics()


# ---- end to end ---------------------------------------------------------------------------------------


def test_a_deleted_namespace_is_emptied_then_goes():
    c = ControlPlane([ReplicaSetController(), GarbageCollector(), _namespace_controller()])
    c.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}, 0.0)
    c.api.create(replica_set(replicas=2, ns="team"), 0.0)
    c.api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "team"}}, 0.0)
    c.at(0.0, rounds=20)
    c.run_pods("team")
    c.api.write([RecordEvent(obj("Event", "seen", ns="team") | {"reason": "Started", "message": "m"})], 0.0)
    c.at(1.0)
    assert len(c.pods("team")) == 2

    c.api.delete("Namespace", "", "team", None, None, 10.0)
    c.at(10.0)
    ns = c.get("Namespace", "team", ns="")
    assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
    assert c.get("ReplicaSet", "web", ns="team") is None and c.get("ConfigMap", "cm", ns="team") is None
    assert len(c.pods("team")) == 2 and all(p["metadata"]["deletionGracePeriodSeconds"] == 30 for p in c.pods("team"))
    (err,) = c.api.write([Create(obj("ConfigMap", "late", ns="team"))], 11.0)
    assert isinstance(err, Forbidden)

    c.now = 20.0
    c.confirm(ns="team")  # the kubelets: the containers have stopped
    c.at(20.0)
    assert c.get("Namespace", "team", ns="") is None and c.pods("team") == []
    assert [e for e in c.api.store.objects("Event") if e["metadata"]["namespace"] == "team"] == []
    assert [(type(r).__name__, e) for r, e in c.results if e is not None] == []  # no controller write refused
