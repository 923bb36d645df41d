"""Admission, binding, status and concurrency through the apiserver logic."""

import random

import pytest
from store_builders import make_pod

from cluster.api.errors import AlreadyAssigned, AlreadyExists, Conflict, Forbidden, Invalid, NotFound, StatusError
from cluster.api.patches import Apply, PodConditions
from cluster.api.requests import Bind, Create, Patch, RecordEvent, UpdateStatus
from cluster.apiserver.admission import Admission
from cluster.apiserver.apiserver import APIServer
from cluster.kubelet.component import lease


def test_pod_defaults():
    api = APIServer()
    pod = api.create(
        make_pod(containers=[{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]), 5
    )
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


def test_pods_follow_the_default_priority_class_as_it_comes_and_goes():
    api = APIServer()
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "globalDefault": True}

    def admitted(name: str) -> tuple:
        spec = api.create(make_pod(name), 0)["spec"]
        return spec.get("priorityClassName"), spec["priority"]

    assert admitted("a") == (None, 0)
    api.create(dict(pc, metadata={"name": "d1"}, value=7), 0)
    assert admitted("b") == ("d1", 7)
    api.delete("PriorityClass", "", "d1", None, None, 0)
    assert admitted("c") == (None, 0)
    api.create(dict(pc, metadata={"name": "d2"}, value=9), 0)
    assert admitted("d") == ("d2", 9)


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


def test_second_bind_is_a_conflict_that_names_the_node():
    api = APIServer()
    uid = api.create(make_pod(), 0)["metadata"]["uid"]
    assert api.write([Bind("default", "p", uid, "n1")], 1) == [None]
    (err,) = api.write([Bind("default", "p", uid, "n2")], 2)
    assert isinstance(err, AlreadyAssigned) and isinstance(err, Conflict)
    assert (err.code, err.reason, err.node) == (409, "Conflict", "n1")
    pod = api.store.get("Pod", "default", "p")
    assert pod["spec"]["nodeName"] == "n1"
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]


def test_batches_report_per_item():
    api = APIServer()
    results = api.write([Create(make_pod("a")), Create(make_pod("a")), Create(make_pod("b"))], 0)
    assert results[0] is None and isinstance(results[1], AlreadyExists) and results[2] is None


def test_a_request_the_apiserver_does_not_serve_is_invalid_and_alone():
    api = APIServer()
    (bad, good) = api.write([("Pod", "default", "p"), Create(make_pod("b"))], 0)
    assert isinstance(bad, Invalid) and "tuple is not a request" in bad.message and good is None


def test_generate_name_draws_a_suffix_from_the_seeded_generator():
    a, b = APIServer(seed=4), APIServer(seed=4)
    pods = [dict(make_pod(), metadata={"generateName": "web-", "namespace": "default"}) for _ in range(50)]
    names = [a.create(p, 0)["metadata"]["name"] for p in pods]
    assert names == [b.create(p, 0)["metadata"]["name"] for p in pods]
    assert len(set(names)) == 50 and all(n.startswith("web-") and len(n) == 9 for n in names)
    assert not set("aeiou013") & set("".join(n[4:] for n in names))


def test_events_are_named_by_the_apiserver():
    api = APIServer(seed=1)
    ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "p.kubelet.", "namespace": "default"}}
    ev.update(involvedObject={"kind": "Pod", "name": "p", "namespace": "default"}, reason="Started", message="m")
    assert api.write([RecordEvent(ev), RecordEvent(ev)], 0) == [None, None]
    names = sorted(e["metadata"]["name"] for e in api.store.objects("Event"))
    assert len(names) == 2 and all(n.startswith("p.kubelet.") for n in names)


def test_stale_resource_version_is_a_conflict():
    api = APIServer()
    pod = api.create(make_pod(), 0)
    stale = dict(pod, metadata=dict(pod["metadata"]))
    api.update(pod, 1)
    with pytest.raises(Conflict):
        api.update(stale, 2)


def test_leases_are_created_by_the_first_apply_then_renewed():
    api = APIServer()
    renew = lambda t: Patch("Lease", "kube-node-lease", "n1", "", Apply(lease("n1", t)))  # noqa: E731
    assert api.write([renew(0.0)], 0) == [None]
    created = api.store.get("Lease", "kube-node-lease", "n1")["metadata"]["uid"]
    assert api.write([renew(10.0)], 10) == [None]
    got = api.store.get("Lease", "kube-node-lease", "n1")
    assert got["spec"]["renewTime"] == "2026-01-01T00:00:10.000000Z" and got["metadata"]["uid"] == created
    assert got["spec"]["holderIdentity"] == "n1" and got["spec"]["leaseDurationSeconds"] == 40
    rv = got["metadata"]["resourceVersion"]
    assert api.write([renew(10.0)], 11) == [None]  # nothing changed: nothing written
    assert api.store.get("Lease", "kube-node-lease", "n1")["metadata"]["resourceVersion"] == rv


def _nominate(uid, node, conditions=(), name="p"):
    return Patch("Pod", "default", name, uid, PodConditions(tuple(conditions), node))


def test_patch_pod_status_sets_clears_and_checks_uid():
    api = APIServer()
    pod = api.create(make_pod("p"), 0)
    uid = pod["metadata"]["uid"]
    assert api.write([_nominate(uid, "n1")], 1) == [None]
    assert api.get("Pod", "default", "p")["status"]["nominatedNodeName"] == "n1"
    rv = api.get("Pod", "default", "p")["metadata"]["resourceVersion"]
    assert api.write([_nominate(uid, "n1")], 2) == [None]  # unchanged: no write
    assert api.write([_nominate(uid, None)], 2) == [None]
    assert api.get("Pod", "default", "p")["metadata"]["resourceVersion"] == rv
    assert api.write([_nominate(uid, "")], 3) == [None]
    assert "nominatedNodeName" not in api.get("Pod", "default", "p")["status"]
    bad = api.write([_nominate("other-uid", "n2"), _nominate("", "n2", name="gone")], 4)
    assert [type(e) for e in bad] == [Conflict, NotFound] and [e.code for e in bad] == [409, 404]


def test_patch_pod_status_writes_condition_and_nomination_at_once():
    api = APIServer()
    uid = api.create(make_pod("p"), 0)["metadata"]["uid"]
    rv = int(api.get("Pod", "default", "p")["metadata"]["resourceVersion"])
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}
    assert api.write([_nominate(uid, "n1", [cond])], 1) == [None]
    pod = api.get("Pod", "default", "p")
    assert int(pod["metadata"]["resourceVersion"]) == rv + 1
    assert pod["status"]["nominatedNodeName"] == "n1"
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled"]


def test_create_and_status_copy_the_callers_objects_unless_handed_over():
    api = APIServer()
    mine = make_pod("kept")
    api.create(mine, 0)
    assert api.store.get("Pod", "default", "kept") is not mine and "uid" not in mine["metadata"]
    status = {"phase": "Running"}
    assert api.write([UpdateStatus("Pod", "default", "kept", "", status)], 1) == [None]
    status["phase"] = "Failed"  # the caller's dict changes; the stored object must not
    assert api.store.get("Pod", "default", "kept")["status"]["phase"] == "Running"
    given = make_pod("given")
    assert api.write([Create(given)], 0, owned=True) == [None]
    # Handed over, the object itself was admitted (no copy made); the store keeps its bytes.
    assert given["metadata"]["uid"] == api.store.get("Pod", "default", "given")["metadata"]["uid"]
    assert api.store.get("Pod", "default", "given") is not api.store.get("Pod", "default", "given")


def test_errors_carry_their_status_and_survive_pickling():
    import pickle

    err = AlreadyAssigned('pod p is already assigned to node "n1"', node="n1")
    back = pickle.loads(pickle.dumps(err))
    assert back == err and back.node == "n1" and isinstance(back, StatusError)
    assert back.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pod p is already assigned to node "n1"',
        "reason": "Conflict",
        "code": 409,
    }


def test_peek_decodes_each_stored_version_once_and_follows_writes():
    api = APIServer()
    first = api.store.peek("Namespace", "", "default")
    assert first is api.store.peek("Namespace", "", "default")  # one decode per version
    ns = api.store.get("Namespace", "", "default")
    ns["metadata"]["labels"] = {"team": "a"}
    api.store.put("Namespace", ns, "MODIFIED")
    again = api.store.peek("Namespace", "", "default")
    assert again is not first and again["metadata"]["labels"] == {"team": "a"}
    assert api.store.peek("Namespace", "", "nope") is None
    assert "default" in {n["metadata"]["name"] for n in api.store.peek_all("Namespace")}


def test_a_refused_create_stops_its_slow_start_at_that_batch():
    api = APIServer()
    api.create(make_pod("taken"), 0)
    names = ["a", "taken", "b", "c", "d", "e", "f"]  # batches 0, 1, 1, 2, 2, 2, 2
    creates = [Create(make_pod(n), ("rs-1", (i + 1).bit_length() - 1)) for i, n in enumerate(names)]
    other = [Create(make_pod("other-0"), ("rs-2", 0)), Create(make_pod("other-1"), ("rs-2", 1))]
    out = api.write([*creates, *other, Create(make_pod("plain"))], 1)
    assert [type(o).__name__ for o in out[:7]] == ["NoneType", "AlreadyExists", "NoneType"] + ["NotAttempted"] * 4
    assert out[7:] == [None, None, None]  # another group and a create outside any are unaffected
    assert sorted(name for (_, name) in api.store.keys("Pod")) == ["a", "b", "other-0", "other-1", "plain", "taken"]
    assert out[3].retryable and "an earlier batch" in out[3].message


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_generated_name_suffixes_are_the_draws_random_choice_makes(seed):
    # Replays name objects as they always did: the same characters per seed.
    rng = random.Random(seed)
    want = ["".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5)) for _ in range(200)]
    adm = Admission(None, seed)
    assert [adm.name_suffix() for _ in range(200)] == want


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_uids_are_the_version_4_uuids_of_the_seeded_draws(seed):
    """A seeded run names its objects as before: the uid of each create is the string
    ``uuid.UUID`` makes of the same 128-bit draw, version and variant bits set."""
    import uuid

    admission, draws = Admission(None, seed=seed), random.Random(seed)
    for _ in range(2000):
        want = uuid.UUID(int=draws.getrandbits(128), version=4)
        got = admission.new_uid()
        assert got == str(want) and uuid.UUID(got).version == 4 and uuid.UUID(got).variant == uuid.RFC_4122


def test_an_integer_the_store_cannot_keep_is_refused_naming_its_field():
    api = APIServer()
    rv = api.store.rv
    pod = make_pod("huge")
    pod["spec"]["priority"] = 2**70
    with pytest.raises(Invalid, match=r"^spec.priority: Invalid value: 1180591620717411303424: is out of range"):
        api.create(pod, 0)
    assert api.store.rv == rv and not api.store.has("Pod", "default", "huge")
