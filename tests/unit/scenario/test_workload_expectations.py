"""The scenario side of workloads: the ``object`` expectation and its field paths, the
``scale`` and ``rollback`` actions as kubectl performs them, and the ``rolloutBounds`` and
``statefulSetIdentity`` invariants, fed by hand."""

import pytest
from test_scenario_schema import scenario

from cluster.clock import rfc3339
from cluster.scenario import objectexpect
from cluster.scenario.mirror import Mirror
from cluster.scenario.rollout import Refused, rolled_back, scaled
from cluster.scenario.schema import ScenarioError, load

DEPLOY = {
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "annotations": {"deployment.kubernetes.io/revision": "2"}},
    "status": {
        "updatedReplicas": 3,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
        ],
    },
}


@pytest.mark.parametrize(
    "path, comparator, ok, seen",
    [
        ("status.updatedReplicas", {"equals": 3}, True, "= 3"),
        ("status.updatedReplicas", {"atLeast": 4}, False, "= 3"),
        ("status.updatedReplicas", {"atMost": 3.0}, True, "= 3"),
        (
            "status.conditions[type=Progressing].reason",
            {"equals": "NewReplicaSetAvailable"},
            True,
            '"NewReplicaSetAvailable"',
        ),
        ("status.conditions[type=Nope].reason", {"equals": "x"}, False, "missing"),
        ("status.conditions[1].status", {"equals": "True"}, True, '"True"'),
        ('metadata.annotations["deployment.kubernetes.io/revision"]', {"equals": "2"}, True, '"2"'),
        ('metadata.annotations["deployment.kubernetes.io/revision"]', {"equals": 2}, False, '"2"'),
        ("status.collisionCount", {"exists": False}, True, "missing"),
        ("status.conditions[type=Available]", {"exists": True}, True, "MinimumReplicasAvailable"),
        ("status.conditions[type=Available].reason", {"atLeast": 1}, False, "MinimumReplicasAvailable"),
    ],
)
def test_object_fields_are_read_and_compared(path, comparator, ok, seen):
    got, detail = objectexpect.check(DEPLOY, "Deployment default/web", path, comparator)
    assert got is ok and seen in detail and detail.startswith(f"Deployment default/web {path} = ")


def test_an_absent_object_only_satisfies_exists_false():
    assert objectexpect.check(None, "Job default/pi", "status", {"exists": False}) == (True, "Job default/pi: absent")
    assert objectexpect.check(None, "Job default/pi", "status", {"equals": 1})[0] is False


OBJ = {"at": "end", "object": {"kind": "Deployment", "name": "web"}}


@pytest.mark.parametrize(
    "expectation, message",
    [
        ({**OBJ, "field": "status..x", "equals": 1}, "spec.expect[0].field: cannot read 'status..x' at position 6"),
        ({**OBJ, "equals": 1}, "spec.expect[0].field: an object expectation needs the field to compare"),
        (
            {**OBJ, "field": "status.replicas"},
            "spec.expect[0]: an object expectation needs equals, atLeast, atMost or exists",
        ),
        ({**OBJ, "field": "status", "exists": True, "equals": 1}, "spec.expect[0].exists: takes no other comparator"),
        (
            {"at": "end", "object": {"kind": "Widget", "name": "w"}, "field": "spec", "exists": True},
            'spec.expect[0].object.kind: "Widget" is not a kind kubemu serves',
        ),
        (
            {"at": "end", "count": {"kind": "Pod"}, "equals": "three"},
            'spec.expect[0].equals: "three" must be an integer (a count)',
        ),
        (
            {"at": "end", "count": {"kind": "Pod"}, "field": "x", "equals": 1},
            "spec.expect[0].field: only an object expectation takes it",
        ),
        ({"always": True, "invariant": "rolloutBound"}, 'spec.expect[0].invariant: "rolloutBound" is not an invariant'),
    ],
)
def test_bad_object_expectations_are_refused_at_load(expectation, message):
    doc = scenario(
        expect=[
            {"at": "end", **expectation}
            if "always" not in expectation
            else {"always": True, **{k: v for k, v in expectation.items() if k != "always"}}
        ]
    )
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert str(err.value).startswith(message), str(err.value)


def test_scale_and_rollback_steps_load():
    s = load(
        scenario(
            timeline=[
                {"at": "5s", "scale": {"name": "web", "replicas": 4}},
                {"at": "9s", "rollback": {"name": "web", "toRevision": 1}},
            ]
        )
    )
    assert (s.spec.timeline[0].scale.kind, s.spec.timeline[0].scale.replicas) == ("Deployment", 4)
    assert s.spec.timeline[1].rollback.toRevision == 1
    with pytest.raises(ScenarioError, match=r"spec.timeline\[0\].scale.replicas"):
        load(scenario(timeline=[{"at": "5s", "scale": {"name": "web", "replicas": -1}}]))


# ---- kubectl scale and rollout undo -----------------------------------------------------


def template(image: str, hash_: str | None = None) -> dict:
    labels = {"app": "web", **({"pod-template-hash": hash_} if hash_ else {})}
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}}


def rs(name: str, rev: int, image: str, owner: str = "d-uid", **ann) -> dict:
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "annotations": {"deployment.kubernetes.io/revision": str(rev), **ann},
            "ownerReferences": [{"kind": "Deployment", "uid": owner, "controller": True}],
        },
        "spec": {"template": template(image, name.split("-")[-1])},
    }


def deployment(image: str = "nginx:3", paused: bool = False) -> dict:
    return {
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "uid": "d-uid",
            "annotations": {"deployment.kubernetes.io/revision": "3", "note": "x"},
        },
        "spec": {"paused": paused, "template": template(image)},
        "status": {"replicas": 3},
    }


HISTORY = [
    rs("web-a", 1, "nginx:1", **{"kubernetes.io/change-cause": "first"}),
    rs("web-b", 2, "nginx:2"),
    rs("web-c", 3, "nginx:3"),
    rs("other-d", 9, "x", owner="else"),
]


@pytest.mark.parametrize("to, image, cause", [(0, "nginx:2", None), (1, "nginx:1", "first")])
def test_rollback_takes_the_template_and_annotations_of_the_revision(to, image, cause):
    new = rolled_back(deployment(), HISTORY, to)
    assert new["spec"]["template"] == template(image) and "status" not in new
    assert new["metadata"]["annotations"].get("kubernetes.io/change-cause") == cause
    # kubectl keeps the Deployment's own value of the controller's annotations (annotationsToSkip)
    assert new["metadata"]["annotations"].get("deployment.kubernetes.io/revision") == "3"


@pytest.mark.parametrize(
    "d, history, to, message",
    [
        (
            deployment(paused=True),
            HISTORY,
            0,
            "you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/web' and try again",
        ),
        (deployment(), HISTORY, 9, "unable to find specified revision 9 in history"),
        (deployment(), HISTORY[2:], 0, 'no rollout history found for deployment "web"'),
        (deployment(), HISTORY, 3, "skipped rollback (current template already matches revision 3)"),
    ],
)
def test_rollback_refusals_are_kubectls(d, history, to, message):
    with pytest.raises(Refused) as err:
        rolled_back(d, history, to)
    assert str(err.value) == message


def test_scale_sets_replicas_or_a_jobs_parallelism():
    assert scaled({"kind": "StatefulSet", "spec": {"replicas": 1}}, 5)["spec"] == {"replicas": 5}
    assert scaled({"kind": "Job", "spec": {"parallelism": 1}}, 3)["spec"] == {"parallelism": 3}


# ---- invariants --------------------------------------------------------------------------


def dep(replicas=4, surge=1, unavailable=1):
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}
    return {
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "d"},
        "spec": {"replicas": replicas, "strategy": strategy},
    }


def owned_rs(name):
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": name,
            "ownerReferences": [{"kind": "Deployment", "uid": "d", "controller": True}],
        },
    }


def pod(name, rs_name, ready=True, node="n1", owner_kind="ReplicaSet", terminating=False):
    meta = {
        "name": name,
        "namespace": "default",
        "uid": name,
        "ownerReferences": [{"kind": owner_kind, "name": rs_name, "uid": rs_name, "controller": True}],
    }
    if terminating:
        meta["deletionTimestamp"] = rfc3339(1)
    conds = [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": rfc3339(0)}]
    return {
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {"phase": "Running", "conditions": conds},
    }


def ready_node(name="n1", ready=True):
    return {
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "Unknown"}]},
    }


def mirror_with(*objs) -> Mirror:
    m = Mirror()
    for o in objs:
        m.apply(o["kind"], "ADDED", o, 0.0, 0.0)
    return m


def observe(m: Mirror, now: float = 10.0) -> list[str]:
    m.check_invariants(now)
    m.check_invariants(now + 1)  # the first look at a rollout only records it
    return m.violations["rolloutBounds"]


def test_rollout_bounds_quiet_within_surge_and_unavailability():
    # 4 replicas, surge 1, unavailable 1: 5 pods, 3 of them available, is allowed.
    m = mirror_with(
        ready_node(),
        dep(),
        owned_rs("old"),
        owned_rs("new"),
        pod("o1", "old"),
        pod("o2", "old"),
        pod("o3", "old"),
        pod("n1", "new", ready=False),
        pod("n2", "new", ready=False),
    )
    assert observe(m) == []


def test_rollout_bounds_fire_on_too_many_pods_and_too_few_available():
    m = mirror_with(
        ready_node(),
        dep(),
        owned_rs("old"),
        owned_rs("new"),
        *[pod(f"o{i}", "old") for i in range(4)],
        pod("n1", "new", ready=False),
        pod("n2", "new", ready=False),
    )
    (v,) = observe(m)
    assert "Deployment default/web: 4 available (at least 3 wanted), 6 pods (at most 5)" in v
    m = mirror_with(
        ready_node(),
        dep(),
        owned_rs("old"),
        owned_rs("new"),
        pod("o1", "old"),
        pod("o2", "old", ready=False),
        pod("n1", "new", ready=False),
    )
    assert "1 available (at least 3 wanted)" in observe(m)[0]


def test_rollout_bounds_allow_for_pods_lost_with_their_node():
    pods = [
        pod("o1", "old"),
        pod("o2", "old", node="dead"),
        pod("o3", "old", node="dead"),
        pod("n1", "new", ready=False),
    ]
    m = mirror_with(ready_node(), ready_node("dead", ready=False), dep(), owned_rs("old"), owned_rs("new"), *pods)
    assert observe(m) == []  # 1 available, but 2 were lost with the node: the floor is 3 - 2


def test_rollout_bounds_ignore_a_deployment_not_rolling():
    m = mirror_with(ready_node(), dep(), owned_rs("old"), pod("o1", "old", ready=False))
    assert observe(m) == []


def test_statefulset_identity():
    def sts_pod(name):
        return pod(name, "db", owner_kind="StatefulSet")

    m = mirror_with(
        {"kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"}}, sts_pod("db-0"), sts_pod("db-1")
    )
    m.check_invariants(1.0)
    assert m.violations["statefulSetIdentity"] == []
    m.apply("Pod", "ADDED", sts_pod("db-01"), 2.0, 2.0)
    m.apply("Pod", "ADDED", sts_pod("db-x"), 2.0, 2.0)
    m.check_invariants(2.0)
    assert m.violations["statefulSetIdentity"] == [
        "at 2.0s StatefulSet default/db: db-1 and db-01 hold ordinal 1",
        "at 2.0s pod default/db-x of StatefulSet db has no ordinal name",
    ]
