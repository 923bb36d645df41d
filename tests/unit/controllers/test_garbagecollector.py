"""The garbage collector: dependents of gone owners, unseen owners, Foreground and Orphan
owners, refused writes; then each propagation policy end to end through the apiserver, the
ReplicaSet controller and the collector."""

import pytest
from gc_builders import ControlPlane, feed, key_only, obj, ref, replica_set, writes

from cluster.api.errors import Conflict, Forbidden, NotFound, ServiceUnavailable
from cluster.api.patches import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    FinalizeNamespace,
    RemoveFinalizer,
    RemoveOwnerReferences,
)
from cluster.api.requests import Delete, Patch, UpdateStatus
from cluster.controllers.garbagecollector import OWNER_GRACE, GarbageCollector
from cluster.controllers.manager import ControllerManager
from cluster.controllers.replicaset import ReplicaSetController
from cluster.controllers.writes import Writes, requests

FG, ORPHAN = FOREGROUND_FINALIZER, ORPHAN_FINALIZER
WEB = obj("ReplicaSet", "web")
API = obj("ReplicaSet", "api")


def pod(name="p", *owners, **kw):
    return obj("Pod", name, owners=owners or [ref("ReplicaSet", "web")], **kw)


# ---- dependents -------------------------------------------------------------------------------

DEPENDENTS = [
    # (case, events in order, the writes of the next sync)
    ("a live owner: nothing", [("ADDED", WEB), ("ADDED", pod())], []),
    (
        "the owner deleted: the dependent goes, Background",
        [("ADDED", WEB), ("ADDED", pod()), ("DELETED", WEB)],
        [("delete", "Pod/default/p", "Background")],
    ),
    (
        "a relist's key-only DELETED is enough",
        [("ADDED", WEB), ("ADDED", pod()), ("DELETED", key_only("ReplicaSet", "web"))],
        [("delete", "Pod/default/p", "Background")],
    ),
    (
        "the owner replaced under its name",
        [("ADDED", WEB), ("ADDED", pod()), ("MODIFIED", obj("ReplicaSet", "web", uid="u-web-2"))],
        [("delete", "Pod/default/p", "Background")],
    ),
    (
        "a dependent of a deleted owner seen later goes at once",
        [("ADDED", WEB), ("DELETED", WEB), ("ADDED", pod())],
        [("delete", "Pod/default/p", "Background")],
    ),
    (
        "one owner gone, one live: only the reference goes",
        [("ADDED", WEB), ("ADDED", API), ("ADDED", pod("p", ref("ReplicaSet", "web"), ref("ReplicaSet", "api")))]
        + [("DELETED", WEB)],
        [("refs", "Pod/default/p", ("u-web",))],
    ),
    (
        "a dependent being deleted is left to finish",
        [("ADDED", WEB), ("ADDED", pod(deleting=True)), ("DELETED", WEB)],
        [],
    ),
    (
        "its own orphan finalizer decides its policy",
        [("ADDED", WEB), ("ADDED", pod(finalizers=[ORPHAN])), ("DELETED", WEB)],
        [("delete", "Pod/default/p", "Orphan")],
    ),
    (
        "a cluster-scoped dependent cannot have a namespaced owner",
        [("ADDED", WEB), ("ADDED", obj("PersistentVolume", "pv", ns="", owners=[ref("ReplicaSet", "web")]))],
        [("delete", "PersistentVolume/pv", "Background")],
    ),
    (
        "a cluster-scoped owner of a namespaced dependent is found",
        [("ADDED", obj("Node", "n1", ns="")), ("ADDED", obj("ConfigMap", "cm", owners=[ref("Node", "n1")]))],
        [],
    ),
    ("an owner of a kind not watched (Event) counts as present", [("ADDED", pod("p", ref("Event", "e")))], []),
    ("an owner of a kind kubemu does not serve counts as present", [("ADDED", pod("p", ref("Widget", "w")))], []),
]


@pytest.mark.parametrize("case,events,expected", DEPENDENTS, ids=[c[0] for c in DEPENDENTS])
def test_dependents(case, events, expected):
    gc = GarbageCollector()
    feed(gc, *events)
    assert writes(gc.sync(100.0)) == expected  # late enough for any unseen owner's grace
    assert writes(gc.sync(101.0)) == []  # asked once


UNSEEN = [
    # (case, events at 0, events at 3, writes at OWNER_GRACE)
    ("never seen: dangling after the grace", [("ADDED", pod())], [], [("delete", "Pod/default/p", "Background")]),
    ("seen within the grace: solid", [("ADDED", pod())], [("ADDED", WEB)], []),
    (
        "its name only in another namespace: dangling after the grace",
        [("ADDED", obj("ReplicaSet", "web", ns="other")), ("ADDED", pod())],
        [],
        [("delete", "Pod/default/p", "Background")],
    ),
]


@pytest.mark.parametrize("case,first,later,expected", UNSEEN, ids=[c[0] for c in UNSEEN])
def test_an_owner_never_seen_is_waited_for(case, first, later, expected):
    gc = GarbageCollector()
    feed(gc, *first, now=0.0)
    assert writes(gc.sync(0.0)) == [] and gc.next_wakeup() == OWNER_GRACE
    feed(gc, *later, now=3.0)
    assert writes(gc.sync(3.0)) == []
    assert writes(gc.sync(OWNER_GRACE)) == expected and gc.next_wakeup() is None


def test_a_status_change_of_a_dependent_costs_no_look():
    gc = GarbageCollector()
    feed(gc, ("ADDED", WEB), ("ADDED", pod()))
    gc.sync(0.0)
    running = pod()
    running["status"] = {"phase": "Running"}
    feed(gc, ("MODIFIED", running))
    assert gc.queue.depth() == 0 and writes(gc.sync(1.0)) == []  # no key named
    assert gc.dependents("u-web") == [("Pod", "default", "p")]
    feed(gc, ("MODIFIED", obj("Pod", "p")))  # its reference dropped: no longer a dependent
    assert gc.dependents("u-web") == []


def test_a_dependent_that_starts_terminating_is_left_to_finish_and_its_orphaning_owner_asks_again():
    gc = GarbageCollector()
    feed(gc, ("ADDED", WEB), ("ADDED", pod("a")))
    feed(gc, ("MODIFIED", obj("ReplicaSet", "web", finalizers=[ORPHAN], deleting=True)))
    assert writes(gc.sync(1.0)) == [("refs", "Pod/default/a", ("u-web",))]
    assert writes(gc.sync(2.0)) == []  # asked once
    feed(gc, ("MODIFIED", pod("a", deleting=True)))  # the pod's own deletion began meanwhile
    assert gc.dependents("u-web") == [("Pod", "default", "a")]
    assert writes(gc.sync(3.0)) == [("refs", "Pod/default/a", ("u-web",))]  # seen changed: asked anew
    feed(gc, ("DELETED", WEB))
    assert writes(gc.sync(4.0)) == []  # a terminating dependent is not deleted again


# ---- owners deleting in the foreground ---------------------------------------------------------


def test_foreground_deletes_every_dependent_and_waits_only_for_the_blocking_ones():
    gc = GarbageCollector()
    blocking, loose = pod("a"), pod("b", ref("ReplicaSet", "web", block=False))
    feed(gc, ("ADDED", WEB), ("ADDED", blocking), ("ADDED", loose))
    feed(gc, ("MODIFIED", obj("ReplicaSet", "web", finalizers=[FG], deleting=True)))
    assert writes(gc.sync(1.0)) == [
        ("delete", "Pod/default/a", "Background"),
        ("delete", "Pod/default/b", "Background"),
    ]
    feed(
        gc,
        ("MODIFIED", pod("a", deleting=True)),
        ("MODIFIED", pod("b", ref("ReplicaSet", "web", block=False), deleting=True)),
    )
    assert writes(gc.sync(2.0)) == []  # a still exists (terminating) and blocks
    feed(gc, ("DELETED", pod("a")))
    assert writes(gc.sync(3.0)) == [("finalizer", "ReplicaSet/default/web", FG)]  # b does not block
    assert writes(gc.sync(4.0)) == []


FOREGROUND = [
    # (case, the dependent and what else it needs, the writes once its owner deletes in the foreground)
    ("no dependents: the finalizer goes at once", [], [("finalizer", "ReplicaSet/default/web", FG)]),
    (
        "a dependent with another live owner keeps it and loses the reference",
        [("ADDED", API), ("ADDED", pod("p", ref("ReplicaSet", "web"), ref("ReplicaSet", "api")))],
        [("refs", "Pod/default/p", ("u-web",))],
    ),
    (
        "a dependent with dependents of its own is deleted in the foreground",
        [("ADDED", obj("ConfigMap", "mid", owners=[ref("ReplicaSet", "web")]))]
        + [("ADDED", obj("ConfigMap", "leaf", owners=[ref("ConfigMap", "mid")]))],
        [("delete", "ConfigMap/default/mid", "Foreground")],
    ),
]


@pytest.mark.parametrize("case,events,expected", FOREGROUND, ids=[c[0] for c in FOREGROUND])
def test_foreground(case, events, expected):
    gc = GarbageCollector()
    feed(gc, ("ADDED", WEB), *events)
    assert writes(gc.sync(0.0)) == []
    feed(gc, ("MODIFIED", obj("ReplicaSet", "web", finalizers=[FG], deleting=True)))
    assert writes(gc.sync(1.0)) == expected


def test_a_dependent_that_loses_the_reference_unblocks_the_owner():
    gc = GarbageCollector()
    feed(gc, ("ADDED", WEB), ("ADDED", API), ("ADDED", pod("p", ref("ReplicaSet", "web"), ref("ReplicaSet", "api"))))
    feed(gc, ("MODIFIED", obj("ReplicaSet", "web", finalizers=[FG], deleting=True)))
    gc.sync(1.0)
    feed(gc, ("MODIFIED", pod("p", ref("ReplicaSet", "api"))))
    assert writes(gc.sync(2.0)) == [("finalizer", "ReplicaSet/default/web", FG)]


# ---- owners orphaning their dependents -------------------------------------------------------


def test_orphan_strips_the_reference_from_every_dependent_then_drops_the_finalizer():
    gc = GarbageCollector()
    feed(
        gc, ("ADDED", WEB), ("ADDED", pod("a")), ("ADDED", pod("b", ref("ReplicaSet", "web"), ref("ReplicaSet", "api")))
    )
    feed(gc, ("ADDED", API), ("MODIFIED", obj("ReplicaSet", "web", finalizers=[ORPHAN], deleting=True)))
    assert writes(gc.sync(1.0)) == [("refs", "Pod/default/a", ("u-web",)), ("refs", "Pod/default/b", ("u-web",))]
    feed(gc, ("MODIFIED", obj("Pod", "a")))
    assert writes(gc.sync(2.0)) == []  # b still names it
    feed(gc, ("MODIFIED", pod("b", ref("ReplicaSet", "api"))))
    assert writes(gc.sync(3.0)) == [("finalizer", "ReplicaSet/default/web", ORPHAN)]
    feed(gc, ("DELETED", WEB))
    assert writes(gc.sync(4.0)) == []  # the orphans are nobody's dependents any more


def test_an_owner_orphaning_nothing_drops_its_finalizer_at_once():
    gc = GarbageCollector()
    feed(gc, ("ADDED", obj("ConfigMap", "cm", finalizers=[ORPHAN], deleting=True)))
    assert writes(gc.sync(0.0)) == [("finalizer", "ConfigMap/default/cm", ORPHAN)]


# ---- refused writes -------------------------------------------------------------------------------

REFUSALS = [
    # (case, the error, asked again when the work queue's back-off ends)
    ("unavailable: retried", ServiceUnavailable("down"), True),
    ("a conflict: retried", Conflict("replaced"), True),
    ("not found: the watch will say it is gone", NotFound("gone"), False),
    ("forbidden: final", Forbidden("no"), False),
]


@pytest.mark.parametrize("case,error,retried", REFUSALS, ids=[c[0] for c in REFUSALS])
def test_a_refused_delete_is_retried_only_when_a_retry_can_help(case, error, retried):
    m = ControllerManager([GarbageCollector()])
    m.on_events([(o["kind"], e, o, None) for e, o in (("ADDED", WEB), ("ADDED", pod()), ("DELETED", WEB))], 0.0)
    (sent,) = requests(m.sync(0.0))
    m.on_failed(sent, error, 0.0)
    assert m.next_wakeup() == pytest.approx(0.005)  # the key's reconcile reads it, either way
    assert writes(m.sync(0.004)) == []  # held until the back-off ends
    again = [("delete", "Pod/default/p", "Background")] if retried else []
    assert writes(m.sync(0.005)) == again
    assert m.next_wakeup() is None


def test_refusals_back_off_exponentially_per_key_and_success_forgets():
    """Upstream's rate-limited queue: 5 ms, 10 ms, 20 ms for the same key; a reconcile
    that asks for nothing forgets its failures."""
    m = ControllerManager([GarbageCollector()])
    m.on_events([(o["kind"], e, o, None) for e, o in (("ADDED", WEB), ("ADDED", pod()), ("DELETED", WEB))], 0.0)
    (sent,) = requests(m.sync(0.0))
    now = 0.0
    for delay in (0.005, 0.01, 0.02):
        m.on_failed(sent, ServiceUnavailable("down"), now)
        assert m.next_wakeup() == pytest.approx(now + delay)
        now += delay
        (sent,) = requests(m.sync(now))
    assert m.metrics()["garbage-collector"]["workqueue_retries_total"] == 3
    # The delete lands: the pod terminating names its key, whose reconcile asks nothing.
    m.on_events([("Pod", "MODIFIED", pod(deleting=True), None)], now + 1)
    assert writes(m.sync(now + 1)) == [] and m.next_wakeup() is None


def test_a_refused_finalizer_patch_is_asked_again_and_other_controllers_refusals_are_ignored():
    m = ControllerManager([GarbageCollector()])
    m.on_events([("ConfigMap", "ADDED", obj("ConfigMap", "cm", finalizers=[ORPHAN], deleting=True), None)], 0.0)
    (sent,) = requests(m.sync(0.0))
    m.on_failed(Delete("Pod", "team", "other", "", None, "Background"), ServiceUnavailable("down"), 0.0)  # not ours
    m.on_failed(sent, ServiceUnavailable("down"), 0.0)
    assert m.next_wakeup() == pytest.approx(0.005)
    assert writes(m.sync(0.005)) == [("finalizer", "ConfigMap/default/cm", ORPHAN)]
    assert m.metrics()["garbage-collector"]["refused_writes"] == 1


# ---- end to end: the apiserver, the ReplicaSet controller and the collector ---------------------------


def _running_replica_set(replicas: int = 3) -> tuple[ControlPlane, str]:
    c = ControlPlane([ReplicaSetController(), GarbageCollector()])
    c.api.create(replica_set(replicas=replicas), 0.0)
    c.at(0.0, rounds=20)
    c.run_pods()
    c.at(1.0)
    assert len(c.pods()) == replicas and all(p["status"]["phase"] == "Running" for p in c.pods())
    return c, c.get("ReplicaSet", "web")["metadata"]["uid"]


def _delete(c: ControlPlane, policy: str, now: float) -> None:
    c.api.delete("ReplicaSet", "default", "web", None, None, now, propagation=policy)
    c.at(now)
    assert [(type(r).__name__, e) for r, e in c.results if e is not None] == []  # no write refused


@pytest.mark.parametrize("policy", ["", "Background"])
def test_background_the_replicaset_goes_at_once_and_takes_its_pods(policy):
    c, _ = _running_replica_set()
    _delete(c, policy, 10.0)
    assert c.get("ReplicaSet", "web") is None
    assert len(c.pods()) == 3 and all(p["metadata"]["deletionGracePeriodSeconds"] == 30 for p in c.pods())
    c.now = 15.0
    c.confirm()
    c.at(15.0)
    assert c.pods() == []


def test_orphan_leaves_the_pods_running_without_the_owner_reference():
    c, uid = _running_replica_set()
    _delete(c, "Orphan", 10.0)
    assert c.get("ReplicaSet", "web") is None
    pods = c.pods()
    assert len(pods) == 3 and all(p["status"]["phase"] == "Running" for p in pods)
    assert all("deletionTimestamp" not in p["metadata"] and "ownerReferences" not in p["metadata"] for p in pods)


def test_foreground_the_replicaset_stays_until_its_pods_are_gone():
    c, _ = _running_replica_set()
    _delete(c, "Foreground", 10.0)
    rs = c.get("ReplicaSet", "web")
    assert rs["metadata"]["finalizers"] == [FG] and rs["metadata"]["deletionTimestamp"]
    assert len(c.pods()) == 3 and all(p["metadata"].get("deletionTimestamp") for p in c.pods())
    first = [p["metadata"]["name"] for p in c.pods()][:2]
    c.now = 12.0
    c.confirm(first)
    c.at(12.0)
    assert c.get("ReplicaSet", "web") is not None and len(c.pods()) == 1
    c.now = 14.0
    c.confirm()
    c.at(14.0)
    assert c.get("ReplicaSet", "web") is None and c.pods() == []
    creates = [r for r, _ in c.results if type(r).__name__ == "Create"]
    assert len(creates) == 3  # nothing was replaced while the ReplicaSet was being deleted


def test_the_default_controller_manager_runs_the_collector():
    assert any(isinstance(ctrl, GarbageCollector) for ctrl in ControllerManager().controllers)


# ---- the writes as requests --------------------------------------------------


def test_cascade_writes_become_requests_finalizers_after_everything_else():
    w = Writes(
        finalizers=[("ReplicaSet", "default", "web", "u-web", FG)],
        namespace_finalize=[("team", "u-team")],
        replicaset_status=[("default", "web", "u-web", {"replicas": 0})],
        deletes=[("Pod", "default", "p", "u-p", "Background")],
        owner_refs=[("Pod", "default", "q", "u-q", ("u-web",))],
        namespace_status=[("", "team", "u-team", {"phase": "Terminating"})],
    )
    assert requests(w) == [
        UpdateStatus("Namespace", "", "team", "u-team", {"phase": "Terminating"}),
        Patch("Pod", "default", "q", "u-q", RemoveOwnerReferences(("u-web",))),
        Delete("Pod", "default", "p", "u-p", None, "Background"),
        UpdateStatus("ReplicaSet", "default", "web", "u-web", {"replicas": 0}),
        Patch("ReplicaSet", "default", "web", "u-web", RemoveFinalizer(FG)),
        Patch("Namespace", "", "team", "u-team", FinalizeNamespace()),
    ]
