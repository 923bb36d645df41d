"""DeleteOptions' propagationPolicy in the apiserver: the garbage collector's finalizers per
policy and per kind, objects held by finalizers, and the patches that let them go."""

import pytest
from store_builders import make_pod

from cluster.api.errors import Invalid
from cluster.api.patches import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, RemoveFinalizer, RemoveOwnerReferences
from cluster.api.requests import Delete, Patch
from cluster.apiserver.deletion import default_propagation
from cluster.clock import rfc3339

FG, ORPHAN = FOREGROUND_FINALIZER, ORPHAN_FINALIZER


def config_map(name="cm", finalizers=None, owners=()):
    meta = {"name": name, "namespace": "default"}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if owners:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": u} for n, u in owners]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {}}


def job(name="j"):
    pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    spec = {"template": {"spec": pod}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _get(api, kind="ConfigMap", name="cm"):
    return api.store.get(kind, "default", name)


# ---- the finalizers a delete sets -----------------------------------------------------------

POLICIES = [
    # (case, object, policy, finalizers after the delete: None means the object is gone)
    ("no policy, no finalizer: Background, gone", config_map(), "", None),
    ("Background: gone at once", config_map(), "Background", None),
    ("Foreground: held by foregroundDeletion", config_map(), "Foreground", [FG]),
    ("Orphan: held by orphan", config_map(), "Orphan", [ORPHAN]),
    ("no policy keeps an orphan finalizer it carries", config_map(finalizers=[ORPHAN]), "", [ORPHAN]),
    ("no policy keeps a foregroundDeletion it carries", config_map(finalizers=[FG]), "", [FG]),
    (
        "a policy replaces the finalizer it carries",
        config_map(finalizers=["x/hold", ORPHAN]),
        "Foreground",
        ["x/hold", FG],
    ),
    (
        "Background drops the GC finalizers, others hold",
        config_map(finalizers=[FG, "x/hold"]),
        "Background",
        ["x/hold"],
    ),
    ("Background on a GC-held object lets it go", config_map(finalizers=[ORPHAN]), "Background", None),
    ("batch/v1 Job: Orphan by default", job(), "", [ORPHAN]),
    ("batch/v1 Job: an explicit Background wins", job(), "Background", None),
]


@pytest.mark.parametrize("case,obj,policy,after", POLICIES, ids=[c[0] for c in POLICIES])
def test_the_policy_decides_the_finalizers(api, case, obj, policy, after):
    kind, name = obj["kind"], obj["metadata"]["name"]
    api.create(obj, now=0)
    gone = api.delete(kind, "default", name, None, None, now=5, propagation=policy)
    stored = _get(api, kind, name)
    assert gone is (after is None) and (stored is None) is (after is None)
    if after is not None:
        m = stored["metadata"]
        assert m["finalizers"] == after
        assert m["deletionTimestamp"] == rfc3339(5) and m["deletionGracePeriodSeconds"] == 0


@pytest.mark.parametrize(
    "kind,policy",
    [("Job", "Orphan"), ("ReplicaSet", "Background"), ("DaemonSet", "Background"), ("Deployment", "Background")]
    + [("StatefulSet", "Background"), ("CronJob", "Background"), ("Pod", "Background"), ("ConfigMap", "Background")],
)
def test_default_policy_per_kind_as_upstream_serves_these_versions(kind, policy):
    assert default_propagation(kind) == policy


def test_an_unknown_policy_is_invalid_and_changes_nothing(api):
    api.create(config_map(), now=0)
    rv = _get(api)["metadata"]["resourceVersion"]
    with pytest.raises(Invalid) as e:
        api.delete("ConfigMap", "default", "cm", None, None, now=1, propagation="Sideways")
    assert e.value.message == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
        'supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    assert e.value.causes[0].field == "propagationPolicy"
    assert _get(api)["metadata"]["resourceVersion"] == rv


def test_the_delete_request_carries_the_policy_and_defaults_to_none(api):
    api.create(config_map("a"), now=0)
    api.create(config_map("b"), now=0)
    assert Delete("ConfigMap", "default", "a").propagation == ""
    assert api.write([Delete("ConfigMap", "default", "a"), Delete("ConfigMap", "default", "b", "", None, "Orphan")], 1)
    assert _get(api, name="a") is None and _get(api, name="b")["metadata"]["finalizers"] == [ORPHAN]


def test_a_second_delete_of_a_held_object_writes_nothing(api):
    api.create(config_map(), now=0)
    api.delete("ConfigMap", "default", "cm", None, None, now=1, propagation="Foreground")
    rv = _get(api)["metadata"]["resourceVersion"]
    assert api.delete("ConfigMap", "default", "cm", None, None, now=2) is False
    assert _get(api)["metadata"]["resourceVersion"] == rv


# ---- letting go: a patch that removes the last finalizer ------------------------------------------


@pytest.mark.parametrize(
    "finalizers,remove,gone",
    [([FG], FG, True), ([ORPHAN, "x/hold"], ORPHAN, False), ([FG], ORPHAN, False)],
)
def test_removing_the_last_finalizer_of_a_deleted_object_removes_it(api, finalizers, remove, gone):
    api.create(config_map(finalizers=finalizers), now=0)
    api.delete("ConfigMap", "default", "cm", None, None, now=1)
    uid = _get(api)["metadata"]["uid"]
    assert api.write([Patch("ConfigMap", "default", "cm", uid, RemoveFinalizer(remove))], 2) == [None]
    assert (_get(api) is None) is gone


def test_removing_a_finalizer_of_a_live_object_only_edits_it(api):
    api.create(config_map(finalizers=[FG]), now=0)
    api.write([Patch("ConfigMap", "default", "cm", "", RemoveFinalizer(FG))], 1)
    assert "finalizers" not in _get(api)["metadata"]


def test_remove_owner_references_drops_only_the_named_uids(api):
    api.create(config_map("dep", owners=[("a", "u-a"), ("b", "u-b"), ("c", "u-c")]), now=0)
    api.write([Patch("ConfigMap", "default", "dep", "", RemoveOwnerReferences(("u-a", "u-c")))], 1)
    assert [r["uid"] for r in _get(api, name="dep")["metadata"]["ownerReferences"]] == ["u-b"]
    rv = _get(api, name="dep")["metadata"]["resourceVersion"]
    api.write([Patch("ConfigMap", "default", "dep", "", RemoveOwnerReferences(("u-a",)))], 2)
    assert _get(api, name="dep")["metadata"]["resourceVersion"] == rv  # nothing to drop: no write
    api.write([Patch("ConfigMap", "default", "dep", "", RemoveOwnerReferences(("u-b",)))], 3)
    assert "ownerReferences" not in _get(api, name="dep")["metadata"]


# ---- pods: graceful deletion and the propagation finalizers ----------------------------------------


def test_a_pod_deleted_in_the_foreground_terminates_and_waits_for_its_finalizer(api):
    api.create(make_pod(node="n1"), now=0)
    assert api.delete("Pod", "default", "p", None, None, now=10, propagation="Foreground") is False
    m = _get(api, "Pod", "p")["metadata"]
    assert (m["finalizers"], m["deletionGracePeriodSeconds"], m["deletionTimestamp"]) == ([FG], 30, rfc3339(40))
    uid = m["uid"]
    api.write([Patch("Pod", "default", "p", uid, RemoveFinalizer(FG))], 11)  # the GC: no dependents
    assert _get(api, "Pod", "p")["metadata"]["deletionGracePeriodSeconds"] == 30  # still terminating
    assert api.delete("Pod", "default", "p", uid, 0, now=20) is True  # the kubelet's confirm


def test_a_pod_whose_kubelet_confirms_first_waits_for_the_collector(api):
    api.create(make_pod(node="n1"), now=0)
    api.delete("Pod", "default", "p", None, None, now=10, propagation="Orphan")
    uid = _get(api, "Pod", "p")["metadata"]["uid"]
    assert api.delete("Pod", "default", "p", uid, 0, now=12) is False
    m = _get(api, "Pod", "p")["metadata"]
    assert (m["finalizers"], m["deletionGracePeriodSeconds"], m["deletionTimestamp"]) == ([ORPHAN], 0, rfc3339(12))
    api.write([Patch("Pod", "default", "p", uid, RemoveFinalizer(ORPHAN))], 13)
    assert _get(api, "Pod", "p") is None


def test_a_pending_pod_deletion_keeps_its_finalizers_whatever_the_policy(api):
    api.create(make_pod(node="n1"), now=0)
    api.delete("Pod", "default", "p", None, 30, now=10)
    rv = _get(api, "Pod", "p")["metadata"]["resourceVersion"]
    assert api.delete("Pod", "default", "p", None, 30, now=11, propagation="Foreground") is False
    m = _get(api, "Pod", "p")["metadata"]
    assert m["resourceVersion"] == rv and "finalizers" not in m
