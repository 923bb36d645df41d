"""``rolloutBounds`` and ``statefulSetIdentity`` fed by hand through the Mirror: each fires
where it should and stays quiet through what upstream allows (the first look at a
rollout, a scale, node failures, a completed rollout, a relist)."""

import copy

from cluster.clock import rfc3339
from cluster.scenario.mirror import Mirror


def deploy(image="v1", replicas=4, surge=1, unavailable=1, strategy="RollingUpdate", uid="d", status=None):
    spec = {
        "replicas": replicas,
        "strategy": {"type": strategy}
        | (
            {"rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}} if strategy == "RollingUpdate" else {}
        ),
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}},
    }
    return {
        "kind": "Deployment",
        "metadata": {"namespace": "default", "name": "web", "uid": uid, "generation": 1},
        "spec": spec,
        "status": status or {},
    }


def rset(name, replicas, owner="d"):
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "namespace": "default",
            "name": name,
            "uid": name,
            "ownerReferences": [{"kind": "Deployment", "uid": owner, "controller": True}],
        },
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas},
    }


def pod(name, owner, ready=True, node="n1", terminating=False, kind="ReplicaSet", uid=None, phase="Running", since=0):
    meta = {
        "namespace": "default",
        "name": name,
        "uid": uid or name,
        "ownerReferences": [{"kind": kind, "name": owner, "uid": owner, "controller": True}],
    }
    if terminating:
        meta["deletionTimestamp"] = rfc3339(1)
    cond = {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": rfc3339(since)}
    return {
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {"phase": phase, "conditions": [cond]},
    }


def node(name, ready=True):
    cond = {"type": "Ready", "status": "True" if ready else "Unknown"}
    return {"kind": "Node", "metadata": {"name": name}, "status": {"conditions": [cond]}}


class Run:
    """A mirror fed events, observed at increasing times."""

    def __init__(self, *objs):
        self.m, self.t = Mirror(), 0.0
        self.apply(*objs)

    def apply(self, *objs, etype="MODIFIED"):
        for o in objs:
            key = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
            known = self.m.get(o["kind"], *key) is not None
            self.m.apply(o["kind"], etype if known or etype == "DELETED" else "ADDED", copy.deepcopy(o), self.t, self.t)

    def delete(self, *objs):
        self.apply(*objs, etype="DELETED")

    def observe(self, dt=1.0):
        self.t += dt
        self.m.check_invariants(self.t)
        return self.m.violations["rolloutBounds"]


def steady(n=4):
    return [node("n1"), deploy(), rset("old", n)] + [pod(f"o{i}", "old") for i in range(n)]


def test_a_rollout_within_surge_and_unavailability_is_quiet():
    r = Run(*steady())
    assert r.observe() == []
    r.apply(deploy("v2"), rset("old", 3), rset("new", 2), pod("o0", "old", terminating=True))
    r.apply(pod("n0", "new", ready=False), pod("n1", "new", ready=False))
    assert r.observe() == []  # 3 available, 5 pods: at both bounds
    r.apply(pod("n0", "new"), pod("n1", "new"), rset("old", 1), pod("o1", "old", terminating=True))
    r.apply(pod("o2", "old", terminating=True), rset("new", 4), pod("n2", "new", ready=False), pod("n3", "new", False))
    assert r.observe() == []  # 3 available (o3, n0, n1), 5 pods
    r.apply(pod("n2", "new"), pod("n3", "new"), rset("old", 0), pod("o3", "old", terminating=True))
    assert r.observe() == []


def test_a_rollout_that_drops_every_old_pod_at_once_fires_once():
    r = Run(*steady())
    r.observe()
    r.apply(deploy("v2"), rset("old", 0), rset("new", 4), *[pod(f"o{i}", "old", terminating=True) for i in range(4)])
    r.apply(*[pod(f"n{i}", "new", ready=False) for i in range(4)])
    assert r.observe() == []  # the first look after the template changed is skipped
    assert r.observe(2.0) == ["at 4.0s Deployment default/web: 0 available (at least 3 wanted), 4 pods (at most 5)"]
    assert len(r.observe()) == 1  # one line per rollout


def test_too_many_pods_fire_even_when_the_template_change_came_first():
    r = Run(*steady())
    r.observe()
    r.apply(deploy("v2"))
    r.observe()
    r.apply(rset("new", 3), *[pod(f"n{i}", "new", ready=False) for i in range(3)])
    assert r.observe() == ["at 3.0s Deployment default/web: 4 available (at least 3 wanted), 7 pods (at most 5)"]


def test_percentages_resolve_as_upstream():
    # 10 replicas, 25%/25%: surge rounds up to 3, unavailable down to 2
    r = Run(node("n1"), deploy(replicas=10, surge="25%", unavailable="25%"), rset("old", 10))
    r.apply(*[pod(f"o{i}", "old") for i in range(10)])
    r.observe()
    r.apply(deploy("v2", replicas=10, surge="25%", unavailable="25%"), rset("new", 3))
    r.apply(*[pod(f"n{i}", "new", ready=False) for i in range(3)], rset("old", 8))
    r.apply(pod("o8", "old", terminating=True), pod("o9", "old", terminating=True))
    r.observe()
    assert r.observe() == []  # 8 available, 11 pods
    r.apply(rset("new", 5), pod("n3", "new", ready=False), pod("n4", "new", ready=False), pod("n5", "new", False))
    assert r.observe() == ["at 4.0s Deployment default/web: 8 available (at least 8 wanted), 14 pods (at most 13)"]


def test_both_zero_means_one_unavailable():
    r = Run(node("n1"), deploy(surge=0, unavailable=0), rset("old", 4), *[pod(f"o{i}", "old") for i in range(4)])
    r.observe()
    r.apply(deploy("v2", surge=0, unavailable=0), rset("old", 3), pod("o0", "old", terminating=True), rset("new", 1))
    r.apply(pod("n0", "new", ready=False))
    r.observe()
    assert r.observe() == []  # 3 of 4 available: one unavailable allowed


def test_min_ready_seconds_delays_availability():
    d = deploy()
    d["spec"]["minReadySeconds"] = 10
    r = Run(node("n1"), d, rset("old", 4), *[pod(f"o{i}", "old", since=-30) for i in range(4)])
    r.observe()
    d2 = deploy("v2")
    d2["spec"]["minReadySeconds"] = 10
    r.apply(d2, rset("old", 2), rset("new", 2), pod("o0", "old", terminating=True), pod("o1", "old", terminating=True))
    r.apply(pod("n0", "new", since=2), pod("n1", "new", since=2))  # Ready at 2 s: available at 12 s
    r.observe()
    assert r.observe() == ["at 3.0s Deployment default/web: 2 available (at least 3 wanted), 4 pods (at most 5)"]


def test_a_scale_is_skipped_and_then_the_loosest_bounds_hold():
    r = Run(*steady())
    r.observe()
    r.apply(deploy("v2"), rset("new", 1), pod("n0", "new", ready=False))
    r.observe()
    # scaled to 8 mid-rollout: floor min(4-1, 8-1) = 3, ceiling max(4+1, 8+1) = 9
    r.apply(deploy("v2", replicas=8), rset("new", 5), *[pod(f"n{i}", "new", ready=False) for i in range(1, 5)])
    assert r.observe() == []  # the observation right after spec.replicas changed
    assert r.observe() == []  # 4 available >= 3, 9 pods <= 9
    r.apply(pod("o0", "old", terminating=True), pod("o1", "old", terminating=True))
    assert r.observe() == ["at 5.0s Deployment default/web: 2 available (at least 3 wanted), 7 pods (at most 9)"]


def test_a_complete_rollout_is_no_longer_judged():
    r = Run(*steady())
    r.observe()
    done = {"updatedReplicas": 4, "replicas": 4, "availableReplicas": 4, "observedGeneration": 2}
    d = deploy("v2", status=done)
    d["metadata"]["generation"] = 2
    r.apply(d, rset("old", 0), rset("new", 4), *[pod(f"n{i}", "new") for i in range(4)])
    r.delete(*[pod(f"o{i}", "old") for i in range(4)])
    r.apply(rset("old", 0))
    r.observe()
    r.apply(*[pod(f"n{i}", "new", ready=False) for i in range(4)])  # every pod crashes at once
    assert r.observe() == []


def test_recreate_and_steady_deployments_are_not_judged():
    r = Run(node("n1"), deploy(strategy="Recreate"), rset("old", 4), *[pod(f"o{i}", "old", False) for i in range(4)])
    r.observe()
    r.apply(deploy("v2", strategy="Recreate"))
    r.observe()
    assert r.observe() == []
    r = Run(node("n1"), deploy(), rset("old", 4), *[pod(f"o{i}", "old", ready=False) for i in range(4)])
    r.observe()
    assert r.observe() == []  # one ReplicaSet and no template change: not rolling


def test_a_rollout_under_way_when_first_seen_is_judged_from_the_second_look():
    r = Run(node("n1"), deploy(), rset("old", 3), rset("new", 1), pod("o0", "old"), pod("n0", "new", ready=False))
    assert r.observe() == []
    assert r.observe() == ["at 2.0s Deployment default/web: 1 available (at least 3 wanted), 2 pods (at most 5)"]


def test_pods_lost_with_their_node_lower_the_floor():
    r = Run(*steady(), node("n2"))
    r.apply(pod("o2", "old", node="n2"), pod("o3", "old", node="n2"))
    r.observe()
    r.apply(deploy("v2"), rset("old", 3), rset("new", 2), pod("o0", "old", terminating=True))
    r.apply(pod("n0", "new", ready=False), pod("n1", "new", ready=False))
    r.observe()
    r.apply(node("n2", ready=False))  # o2 and o3 still report Ready: lost, not counted
    assert r.observe() == []  # 1 available, floor 3 - 2 lost
    r.delete(pod("o2", "old", node="n2"), pod("o3", "old", node="n2"))  # evicted: still lost
    assert r.observe() == []
    r.apply(pod("o1", "old", ready=False))  # a shortfall the node does not explain
    assert r.observe() == [
        "at 5.0s Deployment default/web: 0 available (at least 1 wanted), 3 pods (at most 5); 2 lost with their nodes"
    ]


def test_a_pod_that_vanished_with_its_node_between_two_looks_is_lost():
    r = Run(*steady(), node("n2"))
    r.apply(pod("o3", "old", node="n2"))
    r.observe()
    r.apply(deploy("v2"), rset("new", 1), pod("n0", "new", ready=False))
    r.observe()
    r.apply(node("n2", ready=False), pod("o3", "old", node="n2", terminating=True, ready=False))
    r.apply(pod("o2", "old", ready=False))
    assert r.observe() == []  # o2 down, o3 gone with n2: 2 available, floor 3 - 1


def test_pods_that_never_ran_on_a_dead_node_are_not_lost():
    r = Run(*steady(), node("n2"))
    r.observe()
    r.apply(deploy("v2"), rset("new", 1), pod("n0", "new", ready=False, node="n2"))
    r.observe()
    r.apply(node("n2", ready=False), pod("o0", "old", ready=False), pod("o1", "old", ready=False))
    assert r.observe() == ["at 3.0s Deployment default/web: 2 available (at least 3 wanted), 4 pods (at most 5)"]


def test_a_recreated_deployment_starts_afresh():
    r = Run(*steady())
    r.observe()
    r.delete(deploy())
    r.apply(deploy("v2", uid="d2"), rset("x", 2, owner="d2"), rset("y", 2, owner="d2"))
    r.apply(pod("x0", "x", ready=False), pod("y0", "y", ready=False))
    assert r.observe() == []  # a new uid: the first look


# ---- statefulSetIdentity -------------------------------------------------------------------


def sts_pod(name, uid=None, owner="db", **kw):
    return pod(name, owner, kind="StatefulSet", uid=uid, **kw)


def identity(r: Run):
    return r.m.violations["statefulSetIdentity"]


def test_a_second_pod_of_one_name_fires():
    r = Run(sts_pod("db-0", uid="u1", terminating=True))
    r.m.apply("Pod", "ADDED", sts_pod("db-0", uid="u2"), 3.0, 3.0)
    assert identity(r) == [
        "at 3.0s StatefulSet default/db: pod db-0 appeared as u2 while u1 of that name was still there"
    ]


def test_a_replacement_seen_in_order_or_through_a_relist_is_quiet():
    r = Run(sts_pod("db-0", uid="u1"), sts_pod("db-1", uid="v1", phase="Failed"))
    r.delete(sts_pod("db-0", uid="u1"))
    r.m.apply("Pod", "ADDED", sts_pod("db-0", uid="u2"), 1.0, 1.0)
    r.m.apply("Pod", "MODIFIED", sts_pod("db-0", uid="u3"), 2.0, 2.0)  # a relist missed the deletion
    r.m.apply("Pod", "ADDED", sts_pod("db-1", uid="v2"), 2.0, 2.0)  # the Failed one is over
    r.m.apply("Pod", "ADDED", pod("web-0", "rs", uid="w1"), 2.0, 2.0)
    r.m.apply("Pod", "ADDED", pod("web-0", "rs", uid="w2"), 2.0, 2.0)  # not a StatefulSet's
    assert identity(r) == []


def test_names_without_the_sets_ordinal_fire():
    r = Run(sts_pod("db-0"), sts_pod("db-1", terminating=True))
    r.apply(sts_pod("db-01"), sts_pod("db-x"), sts_pod("web-2"))
    assert identity(r) == [
        "at 0.0s StatefulSet default/db: db-1 and db-01 hold ordinal 1",
        "at 0.0s pod default/db-x of StatefulSet db has no ordinal name",
        "at 0.0s pod default/web-2 of StatefulSet db has no ordinal name",
    ]
    r.delete(sts_pod("db-01"))
    r.apply(sts_pod("db-2"), sts_pod("db-3", phase="Succeeded"), sts_pod("db-03"))
    assert len(identity(r)) == 3  # db-03 shares its ordinal only with a finished pod


def test_a_pod_back_with_its_node_counts_again():
    r = Run(*steady(), node("n2"))
    r.apply(pod("o3", "old", node="n2"))
    r.observe()
    r.apply(deploy("v2"), rset("new", 1), pod("n0", "new", ready=False))
    r.observe()
    r.apply(node("n2", ready=False))
    assert r.observe() == []  # o3 lost: floor 2, 3 available
    r.apply(node("n2"))  # the partition heals: o3 is available again and no longer lost
    r.apply(pod("o0", "old", ready=False), pod("o1", "old", ready=False))
    assert r.observe() == ["at 4.0s Deployment default/web: 2 available (at least 3 wanted), 5 pods (at most 5)"]
