"""Admission, binding, status and concurrency through the apiserver logic."""

import pytest
from store_builders import make_pod

from cluster.store.apiserver import APIServer
from cluster.store.errors import AlreadyExists, Conflict, Forbidden, Invalid, NotFound


def test_pod_defaults():
    api = APIServer()
    pod = api.create(make_pod(containers=[{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]), 5)
    spec = pod["spec"]
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    keys = {(t["key"], t["tolerationSeconds"]) for t in spec["tolerations"]}
    assert keys == {("node.kubernetes.io/not-ready", 300), ("node.kubernetes.io/unreachable", 300)}
    assert pod["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert pod["metadata"]["uid"] and pod["metadata"]["resourceVersion"]


def test_uids_are_deterministic_by_seed():
    a, b = APIServer(seed=3), APIServer(seed=3)
    assert a.create(make_pod(), 0)["metadata"]["uid"] == b.create(make_pod(), 0)["metadata"]["uid"]


def test_priority_admission():
    api = APIServer()
    api.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
            "preemptionPolicy": "Never",
        },
        0,
    )
    pod = api.create(make_pod(priorityClassName="high"), 0)
    assert (pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]) == (1000, "Never")
    crit = api.create(make_pod("c", priorityClassName="system-node-critical"), 0)
    assert crit["spec"]["priority"] == 2000001000
    with pytest.raises(Forbidden, match="no PriorityClass with name nope was found"):
        api.create(make_pod("x", priorityClassName="nope"), 0)
    with pytest.raises(Forbidden, match="must not be provided in pod spec"):
        api.create(make_pod("y", priorityClassName="high", priority=5), 0)


def test_global_default_priority_class():
    api = APIServer()
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 7, "globalDefault": True}
    api.create(dict(pc, metadata={"name": "d1"}), 0)
    with pytest.raises(Forbidden, match="d1 is already marked as default"):
        api.create(dict(pc, metadata={"name": "d2"}), 0)
    pod = api.create(make_pod(), 0)
    assert (pod["spec"]["priorityClassName"], pod["spec"]["priority"]) == ("d1", 7)


def test_system_priority_classes_cannot_be_deleted():
    api = APIServer()
    with pytest.raises(Forbidden):
        api.delete("PriorityClass", "", "system-node-critical", None, None, 0)


def test_create_rejects_invalid_existing_and_unknown_namespace():
    api = APIServer()
    api.create(make_pod(), 0)
    with pytest.raises(AlreadyExists):
        api.create(make_pod(), 0)
    with pytest.raises(Invalid, match=r"spec.containers"):
        api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "e"}, "spec": {"containers": []}}, 0)
    with pytest.raises(NotFound, match='namespaces "nope" not found'):
        api.create(make_pod(ns="nope"), 0)


def test_second_bind_is_a_conflict():
    api = APIServer()
    uid = api.create(make_pod(), 0)["metadata"]["uid"]
    assert api.bind([("default", "p", uid, "n1")], 1) == [None]
    (err,) = api.bind([("default", "p", uid, "n2")], 2)
    assert err[:2] == (409, "Conflict") and "already assigned" in err[2]
    pod = api.store.get("Pod", "default", "p")
    assert pod["spec"]["nodeName"] == "n1"
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]


def test_batches_report_per_item():
    api = APIServer()
    results = api.create_many([make_pod("a"), make_pod("a"), make_pod("b")], 0)
    assert results[0] is None and results[1][1] == "AlreadyExists" and results[2] is None


def test_stale_resource_version_is_a_conflict():
    api = APIServer()
    pod = api.create(make_pod(), 0)
    stale = dict(pod, metadata=dict(pod["metadata"]))
    api.update(pod, 1)
    with pytest.raises(Conflict):
        api.update(stale, 2)


def test_leases_are_created_then_renewed():
    api = APIServer()
    api.renew_leases([("n1", 0.0)], 0)
    api.renew_leases([("n1", 10.0)], 10)
    lease = api.store.get("Lease", "kube-node-lease", "n1")
    assert lease["spec"]["renewTime"] == "2026-01-01T00:00:10.000000Z"
    assert lease["spec"]["holderIdentity"] == "n1"


def test_patch_pod_status_sets_clears_and_checks_uid():
    api = APIServer()
    pod = api.create(make_pod("p"), 0)
    uid = pod["metadata"]["uid"]
    assert api.patch_pod_status([("default", "p", uid, [], "n1")], 1) == [None]
    assert api.get("Pod", "default", "p")["status"]["nominatedNodeName"] == "n1"
    rv = api.get("Pod", "default", "p")["metadata"]["resourceVersion"]
    assert api.patch_pod_status([("default", "p", uid, [], "n1")], 2) == [None]  # unchanged: no write
    assert api.patch_pod_status([("default", "p", uid, [], None)], 2) == [None]
    assert api.get("Pod", "default", "p")["metadata"]["resourceVersion"] == rv
    assert api.patch_pod_status([("default", "p", uid, [], "")], 3) == [None]
    assert "nominatedNodeName" not in api.get("Pod", "default", "p")["status"]
    bad = api.patch_pod_status([("default", "p", "other-uid", [], "n2"), ("default", "gone", "", [], "n2")], 4)
    assert [r[0] for r in bad] == [409, 404]


def test_patch_pod_status_writes_condition_and_nomination_at_once():
    api = APIServer()
    uid = api.create(make_pod("p"), 0)["metadata"]["uid"]
    rv = int(api.get("Pod", "default", "p")["metadata"]["resourceVersion"])
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}
    assert api.patch_pod_status([("default", "p", uid, [cond], "n1")], 1) == [None]
    pod = api.get("Pod", "default", "p")
    assert int(pod["metadata"]["resourceVersion"]) == rv + 1
    assert pod["status"]["nominatedNodeName"] == "n1"
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]


def test_create_copies_the_callers_object_unless_it_is_handed_over():
    api = APIServer()
    mine = make_pod("kept")
    api.create(mine, 0)
    assert api.store.get("Pod", "default", "kept") is not mine and "uid" not in mine["metadata"]
    given = make_pod("given")
    assert api.create_many([given], 0, owned=True) == [None]
    assert api.store.get("Pod", "default", "given") is given
