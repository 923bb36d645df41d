"""The ReplicaSet controller (pure, no Ray): exact writes for creates in slow-start batches
with expectations, replacements, scale-down victims, status, adoption, garbage collection
and every failure path."""

import random
from dataclasses import dataclass, field

import pytest
from workload_builders import Fake, Real, names, pod, rs

from cluster.api.errors import Conflict, InternalError, NotFound
from cluster.api.requests import Create
from cluster.controllers import scaledown
from cluster.controllers.replicaset import ReplicaSetController, deletion_order, pods_to_delete, replicaset_status
from cluster.controllers.workload import BURST_REPLICAS, EXPECTATIONS_TIMEOUT, Writes
from cluster.controllers.writes import requests

NOT_FOUND = NotFound('pods "x" not found')


def fresh(*objs, now: float = 0.0) -> Fake:
    return Fake(ReplicaSetController(), now).add(*objs)


def running(name, owner, node="n1", ready_at=0.0):
    return pod(name).owned_by(owner).on(node).ready(at=ready_at)


def reasons(w: Writes) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in w.events]


# ---- creating -------------------------------------------------------------------------


def test_created_pod_comes_from_the_template_with_a_controller_reference():
    web = rs("web", replicas=1).template_labels(tier="fe").pod_spec(priorityClassName="high")
    web.template["metadata"]["annotations"] = {"a": "b"}
    w = fresh(web).sync()
    assert w.pod_creates == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": "web-",
                "namespace": "default",
                "labels": {"app": "web", "tier": "fe"},
                "annotations": {"a": "b"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "web",
                        "uid": "uid-rs-web",
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "priorityClassName": "high"},
        }
    ]
    assert w.pod_creates[0]["spec"] is not web.template["spec"]  # a copy per pod


def test_one_sync_sends_its_creates_as_slow_start_batches_gated_by_expectations():
    web = rs("web", replicas=10)
    f = fresh(web)
    w = f.sync()
    sent = [r.slow_start for r in requests(w) if isinstance(r, Create)]
    assert sent == [("uid-rs-web", b) for b in (0, 1, 1, 2, 2, 2, 2, 3, 3, 3)]  # batches of 1, 2, 4, then 3
    assert f.sync().pod_creates == []  # nothing more until the creates are observed
    f.land(w)
    assert f.sync().pod_creates == []


def test_creates_per_sync_are_capped_at_burst_replicas():
    f = fresh(rs("big", replicas=1200))
    sizes = []
    while True:
        w = f.sync()
        if not w.pod_creates:
            break
        sizes.append(len(w.pod_creates))
        f.land(w)
    assert sizes == [BURST_REPLICAS, BURST_REPLICAS, 200]


def test_successful_create_events_name_the_observed_pods():
    f = fresh(rs("web", replicas=2))
    f.land(f.sync())
    w = f.sync()
    assert reasons(w)[0] == ("SuccessfulCreate", "Created pod: web-0")
    assert w.events[0]["involvedObject"]["kind"] == "ReplicaSet"


def test_a_relist_of_existing_pods_records_no_create_events():
    web = rs("web", replicas=1)
    w = fresh(web, running("web-a", web)).sync()
    assert w.pod_creates == [] and w.events == []


@pytest.mark.parametrize("change", ["terminating", "deleted", "failed", "succeeded"])
def test_a_pod_that_stops_counting_is_replaced(change):
    web = rs("web", replicas=3)
    pods = [running(f"web-{i}", web) for i in range(3)]
    f = fresh(web, *pods)
    assert f.sync().pod_creates == []
    gone = pods[1].copy()
    if change == "terminating":
        f.modify(gone.terminating())
    elif change == "deleted":
        f.remove({"kind": "Pod", "metadata": {"namespace": "default", "name": "web-1"}})  # a relist: key only
    else:
        f.modify(gone.phase("Failed" if change == "failed" else "Succeeded"))
    w = f.sync()
    assert len(w.pod_creates) == 1
    assert w.replicaset_status[0][3]["replicas"] == 2


def test_terminating_pods_are_neither_counted_nor_deleted_again():
    web = rs("web", replicas=1)
    f = fresh(web, running("web-a", web).terminating(), running("web-b", web))
    w = f.sync()
    assert w.pod_creates == [] and w.pod_deletes == []
    assert w.replicaset_status[0][3]["replicas"] == 1


# ---- scaling down ---------------------------------------------------------------------


def _owner():
    return rs("web", replicas=0)


ORDER_CASES = [
    ("unassigned before assigned", [running("a", _owner()), pod("b").owned_by(_owner())], ["b", "a"]),
    (
        "Pending before Unknown before Running",
        [
            running("r", _owner()),
            pod("p").owned_by(_owner()).on("n1"),
            pod("u").owned_by(_owner()).on("n1").phase("Unknown"),
        ],
        ["p", "u", "r"],
    ),
    (
        "not ready before ready",
        [running("r", _owner()), pod("nr").owned_by(_owner()).on("n1").phase("Running").ready(ready=False)],
        ["nr", "r"],
    ),
    (
        "lower deletion cost first",
        [running("hi", _owner(), node="n1").cost(10), running("lo", _owner(), node="n2").cost(-5)],
        ["lo", "hi"],
    ),
    (
        "doubled up before alone",
        [running("alone", _owner(), node="n1"), running("d1", _owner(), node="n2"), running("d2", _owner(), node="n2")],
        ["d1", "d2", "alone"],
    ),
    (
        "ready for less time first (log2 buckets)",
        [running("old", _owner(), node="n1", ready_at=0), running("new", _owner(), node="n2", ready_at=990)],
        ["new", "old"],
    ),
    (
        "same log2 bucket of readiness: by uid, restarts not consulted",
        [running("b", _owner(), node="n1", ready_at=1).restarts(9), running("a", _owner(), node="n2", ready_at=2)],
        ["a", "b"],
    ),
    (
        "more restarts first",
        [running("calm", _owner(), node="n1"), running("crashy", _owner(), node="n2").restarts(3)],
        ["crashy", "calm"],
    ),
    (
        "newer before older",
        [running("old", _owner(), node="n1").created(0), running("new", _owner(), node="n2").created(900)],
        ["new", "old"],
    ),
]


@pytest.mark.parametrize("pods,want", [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES])
def test_deletion_order(pods, want):
    assert names(deletion_order(pods, now=1000.0)) == want


def _population(rng: random.Random, owner, n: int) -> list:
    """Pods differing in every fact the ranking reads, several to a node. Times are picked
    in distinct log2 buckets of age: two different times in one bucket tie by uid while
    equal times go on to the next fact, which is no strict weak order (upstream's Less is
    the same), and no two ways of sorting need agree on it."""
    out = []
    for i in range(n):
        p = pod(f"p{i:03d}").owned_by(owner)
        if rng.random() < 0.9:
            p.on(f"n{rng.randrange(n // 3 + 1)}")
        if rng.random() < 0.7:
            p.ready(at=rng.choice([0.0, 500.0, 900.0, 999.0]))
        out.append(p.created(rng.choice([0.0, 600.0])).restarts(rng.randrange(3)).cost(rng.choice([0, 0, 5])))
    return out


def _full_sort(pods, now):
    """The reference: every pod ranked, key order, then one sort by the whole comparison."""
    from functools import cmp_to_key

    from cluster.controllers.scaledown import Ranked, _compare

    on_node: dict = {}
    for p in pods:
        on_node[p["spec"].get("nodeName", "")] = on_node.get(p["spec"].get("nodeName", ""), 0) + 1
    ranked = [Ranked(p, on_node[p["spec"].get("nodeName", "")]) for p in pods]
    ranked.sort(key=lambda r: r.key)
    ranked.sort(key=cmp_to_key(lambda a, b: _compare(a, b, now)))
    return names([r.pod for r in ranked])


@pytest.mark.parametrize("seed", range(5))
def test_a_burst_picks_the_first_victims_of_the_full_order_even_with_facts_kept(seed):
    rng, web = random.Random(seed), rs("web", replicas=1)
    pods, facts = _population(rng, web, 120), {}
    assert names(deletion_order(pods, 1000.0)) == _full_sort(pods, 1000.0)
    for count in (1, 7, 40, 119):
        assert names(pods_to_delete(pods, count, 1000.0, facts)) == _full_sort(pods, 1000.0)[:count]
    # Some pods change (a new object each, as an update is): the kept facts must not be used.
    for i in rng.sample(range(len(pods)), 30):
        pods[i] = pods[i].copy().ready(at=999.0, ready=rng.random() < 0.5).on(f"n{rng.randrange(5)}")
    assert names(pods_to_delete(pods, 25, 1000.0, facts)) == _full_sort(pods, 1000.0)[:25]
    assert set(facts) == {id(p) for p in pods}  # these pods' facts, by identity


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("odd", ["restarts", "ready", "created"])
def test_pods_started_together_are_picked_as_the_full_order_picks_them(seed, odd):
    """Most pods share every time fact (the fast path: key order decides within a group);
    a few differ in one fact, so their groups must still go by the time rules."""
    rng, web = random.Random(seed), rs("web", replicas=1)
    pods = [pod(f"p{i:03d}").owned_by(web).on(f"n{rng.randrange(6)}").ready(at=0.0).created(0.0) for i in range(60)]
    for i in rng.sample(range(len(pods)), 4):
        changed = {
            "restarts": lambda p: p.restarts(1),
            "ready": lambda p: p.ready(at=999.0),
            "created": lambda p: p.created(900.0),
        }
        pods[i] = changed[odd](pods[i].copy())
    full = _full_sort(pods, 1000.0)
    for count in range(1, len(pods)):
        assert names(pods_to_delete(pods, count, 1000.0, {})) == full[:count], count


# Ready and creation times: all equal within a log2 bucket of age at 1000 s (the first two
# sets), all different within one (the third), or both at once (the last: no strict weak order).
_TIMES = [([0.0, 990.0], [0.0, 999.0]), ([5.0, 5.0, 999.0], [1.0]), ([10.0, 11.0, 12.0, 995.0], [2.0, 3.0])]
_TIMES.append(([0.0, 0.0, 100.0, 101.0, 990.0], [0.0, 0.0, 50.0, 51.0]))


def _crowded(rng: random.Random, owner, n: int, ready_times, created_times) -> list:
    """Pods sharing times and log2 buckets, as pods started together do."""
    out = []
    for i in range(n):
        p = pod(f"p{i:03d}").owned_by(owner).on(f"n{i % 4}")
        if rng.random() < 0.8:
            p.ready(at=rng.choice(ready_times))
        out.append(p.created(rng.choice(created_times)).restarts(rng.randrange(2)))
    return out


def _inversions(pods, victims, now):
    """Pods left that the comparison puts strictly before a victim."""
    from cluster.controllers.scaledown import _compare

    ranked = {r.key: r for r in scaledown._ranked(pods, {})}
    chosen = {("default", n) for n in victims}
    return [
        (b.key, a.key)
        for a in (ranked[k] for k in chosen)
        for b in ranked.values()
        if b.key not in chosen and _compare(b, a, now) < 0
    ]


def test_sort_keys_agree_with_every_verdict_of_the_comparison(monkeypatch):
    real, used = scaledown._time_keys, []
    monkeypatch.setattr(scaledown, "_time_keys", lambda g: used.append(real(g)) or used[-1])
    for seed in range(40):
        pods = _crowded(random.Random(seed), rs("web", replicas=1), 60, *_TIMES[seed % len(_TIMES)])
        for count in (1, 10, 30, 59):
            used.clear()
            victims = names(pods_to_delete(pods, count, 1000.0))
            if all(k is not None for k in used):
                assert _inversions(pods, victims, 1000.0) == [], (seed, count)
            else:  # the comparator decided some group
                monkeypatch.setattr(scaledown, "_time_keys", lambda g: None)
                assert victims == names(pods_to_delete(pods, count, 1000.0)), (seed, count)
                monkeypatch.setattr(scaledown, "_time_keys", lambda g: used.append(real(g)) or used[-1])


def test_partly_equal_times_go_by_uid_only_where_uid_agrees():
    web = rs("web", replicas=1)
    same = [pod(f"p{i}").owned_by(web).on("n1").ready(at=t).created(1.0) for i, t in enumerate([5.0, 5.0, 6.0])]
    groups = _groups(same, 1000.0)
    assert [scaledown._time_keys(g) is not None for g in groups] == [True]
    restarted = [same[0], same[1].copy().restarts(2), same[2]]  # ties on time 5.0 now go by restarts
    assert [scaledown._time_keys(g) for g in _groups(restarted, 1000.0)] == [None]


def _groups(pods, now):
    groups: dict = {}
    for r in scaledown._ranked(pods, {}):
        r.buckets(now)
        groups.setdefault(r.prefix, []).append(r)
    return list(groups.values())


def test_pods_started_together_are_ranked_by_keys():
    web = rs("web", replicas=1)
    pods = [pod(f"p{i}").owned_by(web).on(f"n{i % 3}").ready(at=5.0).created(1.0) for i in range(9)]
    assert all(scaledown._time_keys(g) is not None for g in _groups(pods, 10.0))


def test_scale_down_deletes_the_first_victims_and_waits_for_them():
    web = rs("web", replicas=4)
    pods = [
        running("ready-old", web, node="n1", ready_at=0),
        running("ready-new", web, node="n2", ready_at=900),
        pod("pending").owned_by(web).on("n3"),
        pod("unbound").owned_by(web),
    ]
    f = fresh(web, *pods, now=1000.0)
    assert f.sync().pod_deletes == []
    f.modify(web.copy().replicas(1))
    w = f.sync()
    assert w.pod_deletes == [("default", n, f"uid-{n}", None) for n in ["pending", "ready-new", "unbound"]]
    assert [r for r, _ in reasons(w)] == ["SuccessfulDelete"] * 3
    assert f.sync().pod_deletes == []  # expectations: not again until observed
    f.modify(pods[1].copy().terminating(), pods[2].copy().terminating())
    assert f.sync().pod_deletes == []  # one deletion still unobserved
    f.remove(pods[3])
    assert f.sync().pod_deletes == [] and f.ctrl.expectations("default", "web").fulfilled()


# ---- status -------------------------------------------------------------------------------


def test_status_counts_and_is_written_only_when_it_changes():
    web = rs("web", replicas=4).template_labels(tier="fe").min_ready(10).generation(7)
    web.status(conditions=[{"type": "Custom", "status": "True"}])
    pods = [
        running("a", web, ready_at=0).labels(app="web", tier="fe"),
        running("b", web, ready_at=95).labels(app="web", tier="fe"),
        pod("c").owned_by(web).labels(app="web").on("n1").phase("Running"),
        pod("d").owned_by(web).labels(app="web"),
    ]
    f = fresh(web, *pods, now=100.0)
    w = f.sync()
    assert w.replicaset_status == [
        (
            "default",
            "web",
            "uid-rs-web",
            {
                "conditions": [{"type": "Custom", "status": "True"}],
                "replicas": 4,
                "fullyLabeledReplicas": 2,
                "readyReplicas": 2,
                "availableReplicas": 1,
                "observedGeneration": 7,
            },
        )
    ]
    assert f.sync().replicaset_status == []
    assert f.ctrl.next_wakeup() == 105.0  # b becomes available at 95 + 10
    f.now = 105.0
    assert f.sync().replicaset_status[0][3]["availableReplicas"] == 2
    assert f.ctrl.next_wakeup() is None


def test_own_status_echo_does_not_resync_but_a_foreign_status_does():
    web = rs("web", replicas=0)
    f = fresh(web)
    ((ns, name, uid, status),) = f.sync().replicaset_status
    f.modify(web.copy().status(**status))
    assert not f.sync()
    f.modify(web.copy().status(replicas=9))
    assert f.sync().replicaset_status[0][3]["replicas"] == 0


def test_replicaset_status_function_matches_the_controller():
    web = rs("web", replicas=2).generation(3)
    pods = [running("a", web), pod("b").owned_by(web)]
    assert replicaset_status(web, pods, 10.0) == {
        "replicas": 2,
        "fullyLabeledReplicas": 2,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "observedGeneration": 3,
    }


def test_sync_returns_the_writes_class_the_manager_chooses():
    @dataclass
    class Merged(Writes):
        node_taints: list = field(default_factory=list)

    class Controller(ReplicaSetController):
        writes_class = Merged

    w = Fake(Controller()).add(rs("web", replicas=1)).sync()
    assert type(w) is Merged and len(w.pod_creates) == 1 and w.node_taints == []


def test_missing_replicas_defaults_to_one():
    assert len(fresh(rs("web", replicas=None)).sync().pod_creates) == 1


# ---- ownership --------------------------------------------------------------------------------


def test_matching_orphans_are_adopted_and_counted_others_ignored():
    web = rs("web", replicas=3)
    other = rs("other", replicas=5)
    f = fresh(
        web,
        pod("orphan").labels(app="web").rv("7"),
        pod("stranger").labels(app="db"),
        pod("dying").labels(app="web").terminating(),
        pod("foreign").owned_by(other).labels(app="web"),
    )
    w = f.sync()
    assert [
        (p["metadata"]["name"], p["metadata"]["resourceVersion"], p["metadata"]["ownerReferences"][0]["uid"])
        for p in w.pod_updates
    ] == [("orphan", "7", "uid-rs-web")]
    assert len(w.pod_creates) == 2  # 3 wanted, 1 adopted
    assert w.replicaset_status[0][3]["replicas"] == 1
    assert not f.sync().pod_updates  # adopted once


def test_an_owned_pod_that_no_longer_matches_is_released_and_replaced():
    web = rs("web", replicas=1)
    a = running("a", web)
    f = fresh(web, a)
    assert not f.sync().pod_creates
    f.modify(a.copy().labels(app="debug"))
    w = f.sync()
    assert [p["metadata"]["ownerReferences"] for p in w.pod_updates] == [[]]
    assert len(w.pod_creates) == 1


def test_failed_adoption_is_undone_and_not_retried_until_the_pod_changes():
    web = rs("web", replicas=1)
    orphan = pod("orphan").labels(app="web").rv("7")
    f = fresh(web, orphan)
    w = f.sync()
    assert names(w.pod_updates) == ["orphan"] and not w.pod_creates
    f.ctrl.on_update_failed(w.pod_updates[0], Conflict("modified"), f.now)
    f.land(f.sync())  # the create that was skipped for the adopted pod is now needed
    w = f.sync()
    assert not w.pod_updates
    f.modify(orphan.copy().rv("8"))
    assert names(f.sync().pod_updates) == ["orphan"]


# ---- deletion of the ReplicaSet (its pods are the garbage collector's) -----------------------------


def test_a_deleted_replicaset_leaves_its_pods_to_the_garbage_collector():
    web = rs("web", replicas=2)
    f = fresh(web, running("a", web), running("b", web).terminating(), pod("orphan").labels(app="web"))
    w = f.sync()
    assert names(w.pod_updates) == ["orphan"]
    f.remove({"kind": "ReplicaSet", "metadata": {"namespace": "default", "name": "web"}})  # key only
    w = f.sync()
    assert not w.pod_deletes and not w.replicaset_status and not w.pod_creates
    f.add(pod("late").owned_by(web))
    assert not f.sync() and f.ctrl.next_wakeup() is None


def test_a_replicaset_being_deleted_manages_nothing_and_adopts_nothing():
    web = rs("web", replicas=3).terminating()
    f = fresh(web, running("a", web), pod("orphan").labels(app="web"))
    w = f.sync()
    assert not w.pod_creates and not w.pod_updates and not w.pod_deletes


def test_a_replicaset_replaced_under_the_same_name_starts_afresh():
    old = rs("web", replicas=1, uid="u1")
    f = fresh(old, running("a", old))
    f.sync()
    w = f.add(rs("web", replicas=1, uid="u2")).sync()
    assert not w.pod_deletes  # the old one's pod is the garbage collector's
    assert len(w.pod_creates) == 1 and w.pod_creates[0]["metadata"]["ownerReferences"][0]["uid"] == "u2"


def test_an_empty_or_invalid_selector_manages_nothing():
    bad = rs("web", replicas=2)
    bad.spec["selector"] = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    assert not fresh(bad).sync().pod_creates


# ---- failures ---------------------------------------------------------------------------------


def test_a_refused_create_stops_the_later_batches_and_backs_off():
    f = fresh(rs("web", replicas=10))
    made = f.land(f.sync(), fail=7)  # batches 1, 2, 4, 3: the third batch is refused, the fourth not sent
    assert len(made) == 3
    w = f.sync()
    assert [r for r, _ in reasons(w)] == ["SuccessfulCreate"] * 3 + ["FailedCreate"] * 4  # none for the skipped
    assert reasons(w)[3][1] == "Error creating: exceeded quota" and w.events[3]["type"] == "Warning"
    assert not w.pod_creates  # backing off
    assert f.ctrl.next_wakeup() == pytest.approx(0.005)
    f.now = 0.005
    assert len(f.sync().pod_creates) == 7  # the skipped creates are no longer expected


def _pod_of(ctrl):
    return {"metadata": {"ownerReferences": [{"kind": "ReplicaSet", "uid": "uid-rs-web", "controller": True}]}}


def test_repeated_failures_double_the_backoff():
    f = fresh(rs("web", replicas=1))
    waits = []
    for _ in range(4):
        f.land(f.sync(), fail=1)
        f.sync()
        waits.append(round(f.ctrl.next_wakeup() - f.now, 6))
        f.now = f.ctrl.next_wakeup()
    assert waits == [0.005, 0.01, 0.02, 0.04]


def test_unreported_lost_creates_expire_after_the_timeout():
    f = fresh(rs("web", replicas=3))
    assert len(f.sync().pod_creates) == 3  # never land, never reported
    assert f.ctrl.next_wakeup() == EXPECTATIONS_TIMEOUT
    f.now = EXPECTATIONS_TIMEOUT - 1
    assert not f.sync().pod_creates
    f.now = EXPECTATIONS_TIMEOUT
    assert len(f.sync().pod_creates) == 3
    assert f.ctrl.next_wakeup() == 2 * EXPECTATIONS_TIMEOUT


def test_expired_deletes_let_the_replicaset_act_again():
    web = rs("web", replicas=1)
    f = fresh(web, running("a", web), running("b", web, node="n2"))
    assert len(f.sync().pod_deletes) == 1
    f.now = EXPECTATIONS_TIMEOUT
    assert len(f.sync().pod_deletes) == 1
    assert f.ctrl.expectations("default", "web").dels


@pytest.mark.parametrize(
    "error,want",
    [
        (NOT_FOUND, ["SuccessfulDelete"]),  # gone anyway: no backoff, acts on what the cache shows
        (InternalError("boom"), ["FailedDelete"]),  # backs off
    ],
)
def test_failed_delete_lowers_expectations(error, want):
    web = rs("web", replicas=1)
    f = fresh(web, running("a", web), running("b", web, node="n2"))
    ((ns, name, uid, _),) = f.sync().pod_deletes
    f.ctrl.on_delete_failed(ns, name, uid, error, f.now)
    w = f.sync()  # the refusal comes back as the ReplicaSet's next reconcile
    assert [r for r, _ in reasons(w)] == want
    assert len(w.pod_deletes) == (1 if want == ["SuccessfulDelete"] else 0)
    # Lowered by the refusal; after NotFound the reconcile asked for the delete anew.
    assert f.ctrl.expectations("default", "web").fulfilled() == (want == ["FailedDelete"])


def test_failed_status_write_is_sent_again():
    web = rs("web", replicas=0)
    f = fresh(web)
    ((ns, name, uid, status),) = f.sync().replicaset_status
    assert not f.sync()
    f.ctrl.on_status_failed(ns, name, uid, Conflict("x"), f.now)
    assert f.sync().replicaset_status == [(ns, name, uid, status)]


def test_failure_reports_for_unknown_owners_are_ignored():
    f = fresh()
    f.ctrl.on_create_failed(_pod_of(f.ctrl), NOT_FOUND, 0)
    f.ctrl.on_delete_failed("default", "nope", "u", NOT_FOUND, 0)
    f.ctrl.on_update_failed(pod("nope"), NOT_FOUND, 0)
    f.ctrl.on_status_failed("default", "nope", "u", NOT_FOUND, 0)
    assert not f.sync() and f.ctrl.next_wakeup() is None


# ---- against the real apiserver -----------------------------------------------------------------


def test_converges_against_the_apiserver():
    loop = Real(ReplicaSetController())
    web = rs("web", replicas=5)
    del web["metadata"]["uid"]
    loop.create(web, pod("stray").labels(app="web"))
    loop.pump()
    pods = loop.pods()
    assert len(pods) == 5 and not loop.errors
    assert all(
        p["metadata"]["ownerReferences"][0]["uid"] == loop.get("ReplicaSet", "web")["metadata"]["uid"] for p in pods
    )
    assert loop.get("ReplicaSet", "web")["status"]["replicas"] == 5
    uid = loop.get("ReplicaSet", "web")["metadata"]["uid"]
    loop.api.delete("ReplicaSet", "default", "web", None, None, loop.now)
    loop.pump()  # nothing more: the pods are the garbage collector's (test_garbagecollector.py)
    assert len(loop.pods()) == 5 and {p["metadata"]["ownerReferences"][0]["uid"] for p in loop.pods()} == {uid}


def test_refused_creates_against_the_apiserver_back_off_and_report():
    loop = Real(ReplicaSetController())
    web = rs("web", replicas=3).pod_spec(priorityClassName="missing")
    del web["metadata"]["uid"]
    loop.create(web)
    loop.pump()
    # One slow start: the first batch (one pod) is refused, so the second is not attempted.
    assert loop.pods() == [] and [e.reason for e in loop.errors] == ["Forbidden", "NotAttempted", "NotAttempted"]
    assert [e["reason"] for e in loop.api.store.objects("Event")] == ["FailedCreate"]
    assert loop.ctrl.next_wakeup() == pytest.approx(0.005)
    loop.now = 0.005
    loop.pump()
    assert [e.reason for e in loop.errors[3:]] == ["Forbidden", "NotAttempted", "NotAttempted"]  # all three again


def test_pods_seen_before_any_replicaset_are_parked_then_adopted_and_counted():
    f = Fake(ReplicaSetController())
    keep, gone = pod("orphan").labels(app="web").rv("7"), pod("gone").labels(app="web")
    web = rs("web", replicas=3)
    mine = running("mine", web)
    f.add(keep, gone, mine).remove(gone)
    assert not f.sync()  # no ReplicaSet yet: nothing to do, nothing indexed
    f.add(web)
    w = f.sync()
    assert [p["metadata"]["name"] for p in w.pod_updates] == ["orphan"]  # the deleted one is not adopted
    assert len(w.pod_creates) == 1  # 3 wanted: one owned, one adopted, slow start asks for 1
    assert w.replicaset_status[0][3]["replicas"] == 2


def _cell(r, now):
    r.buckets(now)
    return (r.ready_time is not None, r.ready_bucket if r.ready_time is not None else -1)


@pytest.mark.parametrize("seed", range(30))
def test_a_burst_takes_newer_ready_cells_before_older_ones_even_without_keys(seed):
    """Ready times in several log2 cells, some cells without sort keys (equal ready times
    whose creation buckets differ: no strict weak order inside them). Between two cells the
    comparison always goes by the cell, so no pod of a newer cell may be left while an
    older cell's pod goes, whatever the order inside a cell."""
    rng, web = random.Random(seed), rs("web", replicas=1)
    pods = [
        pod(f"p{i:03d}")
        .owned_by(web)
        .on("n1")
        .ready(at=rng.choice([0.0, 0.0, 500.0, 501.0, 900.0, 990.0, 990.0]))
        .created(rng.choice([0.0, 400.0, 600.0, 601.0]))
        for i in range(80)
    ]
    ranked = {r.key: r for r in scaledown._ranked(pods, {})}
    for count in (5, 20, 41, 79):
        victims = names(pods_to_delete(pods, count, 1000.0, {}))
        crossing = [
            (left, went)
            for left, went in _inversions(pods, victims, 1000.0)
            if _cell(ranked[left], 1000.0) != _cell(ranked[went], 1000.0)
        ]
        assert crossing == [], (seed, count)
