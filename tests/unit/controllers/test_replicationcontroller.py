"""The ReplicationController controller: the ReplicaSet logic through the RC adapter
(equality selector, ownerReference kind, event source, status written to the RC)."""

from workload_builders import Fake

from cluster.api.errors import Forbidden, NotAttempted
from cluster.api.requests import UpdateStatus
from cluster.clock import rfc3339
from cluster.controllers.replicationcontroller import ReplicationControllerController, as_replicaset


def rc(name="legacy", replicas=2, selector=None, generation=1):
    labels = {"app": name}
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": generation},
        "spec": {
            "replicas": replicas,
            "selector": dict(labels) if selector is None else selector,
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }


def test_the_map_selector_is_shown_as_match_labels():
    assert as_replicaset(rc())["spec"]["selector"] == {"matchLabels": {"app": "legacy"}}
    assert as_replicaset(rc(selector={}))["spec"]["selector"] is None  # selects nothing: never managed
    assert rc()["spec"]["selector"] == {"app": "legacy"}  # the original is left alone


def test_pods_are_created_with_an_rc_owner_and_events_from_the_replication_controller():
    f = Fake(ReplicationControllerController()).add(rc())
    w = f.sync()
    assert [p["metadata"]["generateName"] for p in w.pod_creates] == ["legacy-", "legacy-"]
    assert {
        (r["kind"], r["apiVersion"], r["name"]) for p in w.pod_creates for r in p["metadata"]["ownerReferences"]
    } == {("ReplicationController", "v1", "legacy")}
    f.land(w)
    w = f.sync()
    assert [(e["reason"], e["source"]["component"]) for e in w.events] == [
        ("SuccessfulCreate", "replication-controller"),
        ("SuccessfulCreate", "replication-controller"),
    ]
    assert w.replicaset_status == []
    assert w.requests == [
        UpdateStatus(
            "ReplicationController",
            "default",
            "legacy",
            "uid-legacy",
            {
                "replicas": 2,
                "fullyLabeledReplicas": 2,
                "readyReplicas": 0,
                "availableReplicas": 0,
                "observedGeneration": 1,
            },
        )
    ]


def test_an_rc_with_an_empty_selector_creates_nothing():
    w = Fake(ReplicationControllerController()).add(rc(selector={})).sync()
    assert w.pod_creates == []


def test_replicasets_and_their_pods_are_not_the_rc_controllers():
    rs = {**rc(), "apiVersion": "apps/v1", "kind": "ReplicaSet"}
    w = Fake(ReplicationControllerController()).add(rs).sync()
    assert w.pod_creates == [] and w.requests == []


def _statuses(w) -> list[dict]:
    return [r.status for r in w.requests if isinstance(r, UpdateStatus)]


def test_a_quota_refusal_sets_replica_failure_until_the_count_is_as_wanted():
    f = Fake(ReplicationControllerController()).add(rc(replicas=3))
    f.land(f.sync(), fail=1, error=Forbidden('pods "legacy-2" is forbidden: exceeded quota: q'))
    (status,) = _statuses(f.sync())
    assert status["conditions"] == [
        {
            "type": "ReplicaFailure",
            "status": "True",
            "lastTransitionTime": rfc3339(0),
            "reason": "FailedCreate",
            "message": 'pods "legacy-2" is forbidden: exceeded quota: q',
        }
    ]
    assert status["replicas"] == 2
    f.modify({**rc(replicas=2, generation=2), "status": status})
    (status,) = _statuses(f.sync())
    assert "conditions" not in status and status["observedGeneration"] == 2


def test_a_slow_start_create_left_unattempted_sets_no_failure():
    f = Fake(ReplicationControllerController()).add(rc(replicas=1))
    (req,) = f.sync().pod_creates
    f.ctrl.on_create_failed(req, NotAttempted("not attempted"), f.now)
    assert all("conditions" not in s for s in _statuses(f.sync()))
