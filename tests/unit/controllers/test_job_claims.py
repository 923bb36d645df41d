"""Ownership labels and claims the conformance suite checks: the Job controller claims pods
as upstream's ClaimPods does (it adopts an orphan whose labels match its selector and
releases an owned pod whose labels stop matching; a pod that leaves that way is not
counted as failed), and a DaemonSet's ControllerRevisions carry its pods' hash label."""

import pytest
from deploy_builders import Rollout, deployment
from workload_builders import Fake, Workload, ds, names, node, pod

from cluster.controllers import jobutil as ju
from cluster.controllers.batchjob import JobController
from cluster.controllers.daemonset import DaemonSetController
from cluster.controllers.statefulsetrevisions import new_revision

UID = "uid-job-j"


def job(parallelism: int = 2, completions: int = 4) -> Workload:
    labels = {"batch.kubernetes.io/controller-uid": UID, "job-name": "j"}
    obj = Workload(
        apiVersion="batch/v1",
        kind="Job",
        metadata={"name": "j", "namespace": "default", "uid": UID},
        spec={"parallelism": parallelism, "completions": completions, "backoffLimit": 6},
    )
    obj.labels(**labels)
    obj.template["spec"]["restartPolicy"] = "Never"
    return obj


def started() -> tuple[Fake, Workload, list]:
    j = job()
    f = Fake(JobController(), now=1.0).add(j)
    made = f.land(f.sync())
    for p in made:
        f.modify(p.copy().on("n1").ready(at=1.0).rv("2"))
    f.sync()
    return f, j, made


def test_an_orphaned_job_pod_is_readopted_and_not_counted_as_failed():
    f, j, made = started()
    first = made[0].copy().rv("3")
    first.meta["ownerReferences"] = []
    f.modify(first)
    w = f.sync()
    assert names(w.pod_updates) == [first.meta["name"]]
    assert w.pod_updates[0]["metadata"]["ownerReferences"][0]["uid"] == UID
    assert not w.pod_creates  # adopted back in the same sync: nothing to replace
    assert all(s[3].get("failed", 0) == 0 for s in w.job_status)


def test_a_job_pod_whose_labels_stop_matching_is_released_and_replaced():
    f, j, made = started()
    first = made[0].copy().rv("3").labels()
    f.modify(first)
    w = f.sync()
    assert [(p["metadata"]["name"], p["metadata"]["ownerReferences"]) for p in w.pod_updates] == [
        (first.meta["name"], [])
    ]
    assert len(w.pod_creates) == 1  # the released pod no longer counts as active
    assert [s[3]["failed"] for s in w.job_status] == [0]
    assert [s[3]["active"] for s in w.job_status] == [1]


def test_a_matching_orphan_is_not_adopted_while_being_deleted_or_by_a_finished_job():
    f, j, made = started()
    dying = pod("dying").labels(**j.template["metadata"]["labels"]).terminating()
    f.add(dying)
    assert not f.sync().pod_updates
    done = j.copy()
    done["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    f.modify(done)
    f.add(pod("late").labels(**j.template["metadata"]["labels"]))
    assert not f.sync().pod_updates


# ---- revision labels (DaemonSet and StatefulSet label their ControllerRevisions apart) ----------


def test_a_daemonset_revision_carries_the_pods_hash_label_and_a_statefulset_its_own():
    a = ds("agent").generation(1)
    w = Fake(DaemonSetController()).add(node("n0"), a).sync()
    (revision,) = w.creates
    (created,) = w.pod_creates
    labels = revision["metadata"]["labels"]
    assert labels == {
        "app": "agent",
        "controller-revision-hash": created["metadata"]["labels"]["controller-revision-hash"],
    }
    sts_labels = new_revision({**a, "kind": "StatefulSet"}, 1, 0)["metadata"]["labels"]
    assert set(sts_labels) == {"app", "controller.kubernetes.io/hash"}


# ---- Deployments claim ReplicaSets (upstream's rollover test) --------------------------------


def orphan_rs(name: str, labels: dict, replicas: int = 1) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "c", "image": "httpd"}]},
            },
        },
    }


def controller_of(obj: dict) -> str | None:
    refs = [r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")]
    return refs[0]["name"] if refs else None


def test_a_deployment_adopts_a_matching_orphan_replicaset_and_rolls_it_over():
    r = Rollout(ready_after=1)
    r.create(orphan_rs("old", {"app": "web", "pod": "httpd"}))
    r.create(orphan_rs("stranger", {"app": "db"}))
    r.run(3)
    r.create(deployment("web", replicas=1, strategy={"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}))
    r.run(2)
    assert controller_of(r.get("ReplicaSet", "old")) == "web"
    assert controller_of(r.get("ReplicaSet", "stranger")) is None
    r.run(10)
    assert r.get("ReplicaSet", "old")["spec"]["replicas"] == 0  # rolled over to the new one
    # The stranger's pod and one of web's stayed available throughout (maxUnavailable 0).
    assert min(available for t, _, available in r.samples if t >= 3) == 2


def test_a_deployment_releases_a_replicaset_whose_labels_stop_matching():
    r = Rollout(ready_after=1)
    r.create(deployment("web", replicas=1))
    r.run(3)
    (mine,) = r.replicasets()
    r.update("ReplicaSet", mine["metadata"]["name"], lambda o: o["metadata"].update(labels={"app": "other"}))
    r.run(2)
    assert controller_of(r.get("ReplicaSet", mine["metadata"]["name"])) is None
    # The released one still holds the new ReplicaSet's name: a collision, a new hash.
    assert [str(e) for _, e in r.refused] == [f'replicasets.apps "{mine["metadata"]["name"]}" already exists']
    status = r.get("Deployment", "web")["status"]
    assert (status["collisionCount"], status["availableReplicas"]) == (1, 1)
    assert [controller_of(x) for x in r.replicasets()] == [None, "web"]


# ---- how long a Job's pod runs: a plain ``sleep N`` command says -------------------------------


@pytest.mark.parametrize(
    "containers, want",
    [
        ([{"name": "c", "command": ["sleep", "300"]}], 300.0),
        ([{"name": "c", "command": ["sleep"], "args": ["1000000"]}], 1000000.0),
        ([{"name": "c", "command": ["/bin/sh", "-c", "sleep 7"]}], 7.0),
        ([{"name": "a", "command": ["sleep", "3"]}, {"name": "b", "command": ["sleep", "9"]}], 9.0),
        ([{"name": "c", "command": ["sh", "-c", "sleep 5; exit 1"]}], None),  # not a plain sleep
        ([{"name": "c", "command": ["sleep", "forever"]}], None),
        ([{"name": "c", "command": ["sleep", "-1"]}], None),
        ([{"name": "c", "command": ["sleep", "inf"]}], None),
        ([{"name": "c", "image": "busybox"}], None),
    ],
)
def test_sleep_seconds(containers, want):
    assert ju.sleep_seconds({"containers": containers}) == want


def test_a_job_pod_runs_as_long_as_its_sleep_unless_annotated():
    j = job(parallelism=1, completions=1)
    j.template["spec"]["containers"] = [{"name": "c", "image": "busybox", "command": ["sleep", "300"]}]
    (created,) = Fake(JobController()).add(j).sync().pod_creates
    assert created["metadata"]["annotations"]["kubemu.io/run-seconds"] == "300"
    j.template["metadata"]["annotations"] = {"kubemu.io/run-seconds": "2"}
    (created,) = Fake(JobController()).add(j).sync().pod_creates
    assert created["metadata"]["annotations"]["kubemu.io/run-seconds"] == "2"
    j.template["metadata"].pop("annotations")
    j.template["spec"]["containers"] = [{"name": "c", "image": "busybox"}]
    (created,) = Fake(JobController()).add(j).sync().pod_creates
    assert created["metadata"]["annotations"]["kubemu.io/run-seconds"] == "5"
