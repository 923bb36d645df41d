"""The Deployment controller: upstream's arithmetic as tables, then whole rollouts
against the real apiserver logic."""

import pytest
from deploy_builders import Rollout, deployment, rs

from cluster.controllers import deploymentutil as du


def rolling(replicas: int, surge, unavailable) -> dict:
    return {
        "replicas": replicas,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
    }


@pytest.mark.parametrize(
    "surge, unavailable, desired, want",
    [
        ("25%", "25%", 10, (3, 2)),
        ("39%", "39%", 10, (4, 3)),
        ("0%", "0%", 0, (0, 1)),
        ("0%", "1%", 2, (0, 1)),  # 0/0 -> 0/1: old -1, new +1, alternating
        ("1%", "25%", 2, (1, 0)),
        (0, 0, 5, (0, 1)),
        (2, "50%", 5, (2, 2)),
        ("100%", "0%", 7, (7, 0)),
        ("10%", "10%", 1, (1, 0)),
    ],
)
def test_fenceposts_round_surge_up_and_unavailability_down(surge, unavailable, desired, want):
    assert du.fenceposts(surge, unavailable, desired) == want


def test_max_unavailable_is_capped_at_replicas_and_zero_for_recreate():
    assert du.max_unavailable(rolling(2, 0, 5)) == 2
    assert du.max_unavailable(rolling(0, 0, 5)) == 0
    assert du.max_unavailable({"replicas": 4, "strategy": {"type": "Recreate"}}) == 0
    assert du.max_surge({"replicas": 4, "strategy": {"type": "Recreate"}}) == 0


@pytest.mark.parametrize(
    "spec, sizes, new_size, want",
    [
        (rolling(1, 1, 0), [5, 5], 5, 5),  # over the total already: unchanged
        (rolling(6, 10, 0), [2], 2, 6),  # capped at the replicas wanted
        (rolling(10, "25%", "25%"), [10, 0], 0, 3),
        (rolling(10, "25%", "25%"), [8, 3], 3, 5),
        (rolling(3, 1, 0), [3, 0], 0, 1),
        ({"replicas": 4, "strategy": {"type": "Recreate"}}, [4, 0], 0, 4),
    ],
)
def test_new_replicaset_size(spec, sizes, new_size, want):
    everything = [rs(f"r{i}", n) for i, n in enumerate(sizes)]
    assert du.new_rs_replicas(spec, everything, new_size) == want


@pytest.mark.parametrize(
    "spec, old, new, want",
    [
        # replicas 10, 25%/25%: the worked example's two scale-downs
        (rolling(10, "25%", "25%"), [(10, 10)], (3, 0), {"old0": 8}),
        (rolling(10, "25%", "25%"), [(8, 8)], (5, 0), {}),
        (rolling(10, "25%", "25%"), [(8, 8)], (5, 5), {"old0": 3}),
        (rolling(10, "25%", "25%"), [(3, 3)], (10, 10), {"old0": 0}),
        # unavailable old replicas go first, oldest first, within the budget
        (rolling(10, "25%", "25%"), [(4, 1), (6, 6)], (3, 0), {"old0": 2}),
        (rolling(10, 3, 0), [(4, 1), (6, 6)], (3, 3), {"old0": 1}),  # 1 + 6 + 3 available: no more
        (rolling(10, 3, 1), [(4, 1), (6, 6)], (3, 3), {"old0": 0}),  # 3 unhealthy, then 1 more
        # maxUnavailable 0: nothing goes until a new replica is available
        (rolling(3, 1, 0), [(3, 3)], (1, 0), {}),
        (rolling(3, 1, 0), [(3, 3)], (1, 1), {"old0": 2}),
    ],
)
def test_old_replicasets_scale_down(spec, old, new, want):
    olds = [rs(f"old{i}", n, a, created=i) for i, (n, a) in enumerate(old)]
    assert du.old_scale_down(spec, olds, rs("new", *new, created=99)) == want


@pytest.mark.parametrize(
    "before, after, surge, sizes, want",
    [
        (5, 10, 0, [2, 3], [4, 6]),
        (5, 3, 0, [2, 3], [1, 2]),
        (9, 4, 0, [8, 1], [4, 0]),
        (7, 10, 0, [2, 3, 2], [3, 4, 3]),
        (13, 8, 0, [2, 8, 3], [1, 5, 2]),
        (3, 4, 0, [1, 1, 1], [2, 1, 1]),  # the newest takes the extra
        (3, 2, 0, [1, 1, 1], [1, 1, 0]),  # the oldest gives one up
        (6, 0, 0, [2, 2, 2], [0, 0, 0]),
        (10, 20, 2, [6, 6], [11, 11]),
        (10, 50, (3, 6), [5, 8], [22, 34]),
        (10, 20, ("25%", "25%"), [5, 8], [10, 15]),
    ],
)
def test_proportional_scaling(before, after, surge, sizes, want):
    """Sizes are listed newest first; max-replicas is what the last scale annotated."""
    old_surge, new_surge = surge if isinstance(surge, tuple) else (surge, surge)
    resolve = du.fenceposts(old_surge, "25%" if old_surge == "25%" else 1, before)[0]
    spec = rolling(after, new_surge, "25%" if new_surge == "25%" else 1)
    active = [rs(f"rs{i}", n, n, created=100 - i, max_replicas=before + resolve) for i, n in enumerate(sizes)]
    got, direction = du.proportional_sizes(spec, active, sum(sizes))
    assert [got[f"rs{i}"] for i in range(len(sizes))] == want
    assert direction == ("up" if after > before else "down")


def test_template_hash_is_stable_and_follows_the_template():
    t = deployment()["spec"]["template"]
    assert du.template_hash(t) == du.template_hash(dict(t))
    other = deployment()["spec"]["template"]
    other["spec"]["containers"][0]["image"] = "nginx:2"
    assert du.template_hash(other) != du.template_hash(t)
    assert du.template_hash(t, 1) != du.template_hash(t)
    assert set(du.template_hash(t)) <= set("bcdfghjklmnpqrstvwxz2456789")


# ---- whole rollouts ----------------------------------------------------------------------


def new_image(image: str):
    def change(d):
        d["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return change


def test_rolling_update_steps_as_upstream_and_keeps_its_bounds():
    r = Rollout(ready_after=10)
    r.create(deployment(replicas=10))
    r.run(30)
    first = r.replicasets()[0]["metadata"]["name"]
    r.update("Deployment", "web", new_image("nginx:2"))
    r.run(60)
    second = r.replicasets()[1]["metadata"]["name"]
    assert r.events("ScalingReplicaSet") == [
        f"Scaled up replica set {first} to 10",
        f"Scaled up replica set {second} to 3",
        f"Scaled down replica set {first} to 8 from 10",
        f"Scaled up replica set {second} to 5 from 3",
        f"Scaled down replica set {first} to 3 from 8",
        f"Scaled up replica set {second} to 10 from 5",
        f"Scaled down replica set {first} to 0 from 3",
    ]
    during = r.samples[30:]
    assert min(s[2] for s in during) == 8 and max(s[1] for s in during) == 13
    status = r.get("Deployment", "web")["status"]
    assert (status["observedGeneration"], status["updatedReplicas"], status["availableReplicas"]) == (2, 10, 10)
    assert r.condition("web", "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert r.get("ReplicaSet", second)["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert r.get("Deployment", "web")["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    labels = r.get("ReplicaSet", second)["spec"]["template"]["metadata"]["labels"]
    assert labels["pod-template-hash"] == second.removeprefix("web-")


def test_max_unavailable_zero_never_drops_below_the_replicas():
    r = Rollout(ready_after=5)
    r.create(
        deployment(
            replicas=3, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
        )
    )
    r.run(10)
    r.update("Deployment", "web", new_image("nginx:2"))
    r.run(40)
    during = r.samples[10:]
    assert min(s[2] for s in during) >= 3 and max(s[1] for s in during) <= 4
    assert r.sizes() == [0, 3]


def test_recreate_removes_every_old_pod_before_the_first_new_one():
    r = Rollout(ready_after=3)
    r.create(deployment(replicas=4, strategy={"type": "Recreate"}))
    r.run(10)
    r.update("Deployment", "web", new_image("nginx:2"))
    r.run(20)
    names = [x["metadata"]["name"] for x in r.replicasets()]
    assert r.events("ScalingReplicaSet")[1:] == [
        f"Scaled down replica set {names[0]} to 0 from 4",
        f"Scaled up replica set {names[1]} to 4",
    ]
    assert r.sizes() == [0, 4]


def test_a_stuck_rollout_times_out_then_a_rollback_recovers_it():
    r = Rollout(ready_after=2)
    r.create(deployment(replicas=4, progressDeadlineSeconds=30))
    r.run(10)
    r.stuck.add("broken")
    r.update("Deployment", "web", new_image("broken"))
    r.run(50)
    cond = r.condition("web", "Progressing")
    assert (cond["status"], cond["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert cond["message"].endswith("has timed out progressing.")
    first = r.replicasets()[0]
    # kubectl rollout undo: the template of revision 1, its hash label removed
    template = first["spec"]["template"]
    template["metadata"]["labels"].pop("pod-template-hash")

    def undo(d):
        d["spec"]["template"] = template

    r.update("Deployment", "web", undo)
    r.run(20)
    assert r.sizes() == [4, 0]
    rev = r.get("ReplicaSet", first["metadata"]["name"])["metadata"]["annotations"]
    assert (rev["deployment.kubernetes.io/revision"], rev["deployment.kubernetes.io/revision-history"]) == ("3", "1")
    assert r.condition("web", "Progressing")["reason"] == "NewReplicaSetAvailable"


def test_a_paused_deployment_scales_but_does_not_roll():
    r = Rollout(ready_after=2)
    r.create(deployment(replicas=2))
    r.run(5)

    def pause_and_change(d):
        d["spec"]["paused"] = True
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
        d["spec"]["replicas"] = 3

    r.update("Deployment", "web", pause_and_change)
    r.run(10)
    assert r.sizes() == [3]
    cond = r.condition("web", "Progressing")
    assert (cond["status"], cond["reason"], cond["message"]) == ("Unknown", "DeploymentPaused", "Deployment is paused")

    def resume(d):
        d["spec"]["paused"] = False

    r.update("Deployment", "web", resume)
    r.run(20)
    assert r.sizes() == [0, 3]


def test_scaling_in_the_middle_of_a_rollout_is_proportional():
    r = Rollout(ready_after=10)
    r.create(deployment(replicas=10))
    r.run(20)
    r.stuck.add("nginx:2")
    r.update("Deployment", "web", new_image("nginx:2"))
    r.run(5)
    assert r.sizes() == [8, 5]

    def scale(d):
        d["spec"]["replicas"] = 20

    r.update("Deployment", "web", scale)
    r.run(3)
    assert r.sizes() == [15, 10]


def test_history_beyond_the_limit_is_deleted_once_complete():
    r = Rollout(ready_after=1)
    r.create(deployment(replicas=1, revisionHistoryLimit=1))
    r.run(5)
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        r.update("Deployment", "web", new_image(image))
        r.run(10)
    revisions = [x["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for x in r.replicasets()]
    assert revisions == ["3", "4"]
