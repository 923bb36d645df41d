"""The StatefulSet controller (pure, no Ray): one sync's exact writes for each pod state and
policy (tables), revisions and their history, status counters, expectations and failure
reports; then whole scenarios against the real apiserver logic (``Loop``)."""

import json

import pytest
from sts_builders import Loop, controller, land, member, rev_name, revision, sts
from workload_builders import names, pod

from cluster.api.errors import AlreadyExists, Forbidden, NotFound
from cluster.controllers.statefulset import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    StatefulSetController,
    member_ordinal,
)
from cluster.controllers.statefulsetrevisions import (
    HASH_LABEL,
    SAFE_ALPHABET,
    fnv1_32,
    go_json,
    history_to_delete,
    revision_data,
    revision_hash,
)


def reasons(w) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in w.events]


def old_and_new(replicas: int = 3):
    """A set whose template moved from image v1 (revision 1, current) to v2 (revision 2)."""
    old = sts("web", replicas).image("v1")
    new = sts("web", replicas).image("v2").current(rev_name(old))
    return old, new, (revision(old, 1), revision(new, 2))


# ---- identity ------------------------------------------------------------------------------


def test_a_created_pod_has_its_stable_identity():
    web = sts("web", 2).service("nginx").template_labels(tier="fe")
    w = controller(web).sync(0)
    (p,) = w.pod_creates
    assert p["metadata"]["name"] == "web-0" and "generateName" not in p["metadata"]
    assert p["metadata"]["labels"] == {
        "app": "web",
        "tier": "fe",
        POD_NAME_LABEL: "web-0",
        POD_INDEX_LABEL: "0",
        REVISION_LABEL: rev_name(web),
    }
    assert p["spec"]["hostname"] == "web-0" and p["spec"]["subdomain"] == "nginx"
    assert p["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "web",
            "uid": "uid-sts-web",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_without_a_service_name_there_is_no_subdomain_and_ordinals_may_start_elsewhere():
    web = sts("web", 2).start(5).parallel()
    w = controller(web).sync(0)
    assert names(w.pod_creates) == ["web-5", "web-6"]
    assert all("subdomain" not in p["spec"] for p in w.pod_creates)
    assert [p["metadata"]["labels"][POD_INDEX_LABEL] for p in w.pod_creates] == ["5", "6"]


@pytest.mark.parametrize(
    "pod_name, ordinal",
    [("web-0", 0), ("web-12", 12), ("web-x", None), ("web-01", None), ("web-", None), ("webs-1", None)],
)
def test_member_ordinal(pod_name, ordinal):
    assert member_ordinal("web", pod_name) == ordinal


def test_lost_identity_labels_are_put_back():
    web = sts("web", 1)
    w = controller(web, member(web, 0, "unlabelled")).sync(0)
    (fixed,) = w.pod_updates
    assert fixed["metadata"]["labels"][POD_INDEX_LABEL] == "0" and fixed["metadata"]["resourceVersion"] == "1"


# ---- one sync: creating, replacing, scaling down -----------------------------------------------


@pytest.mark.parametrize(
    "policy, replicas, pods, creates, deletes",
    [
        # OrderedReady: one create per sync, each after its predecessors are Running and Ready.
        ("OrderedReady", 3, {}, ["web-0"], []),
        ("OrderedReady", 3, {0: "pending"}, [], []),
        ("OrderedReady", 3, {0: "running"}, [], []),
        ("OrderedReady", 3, {0: "ready"}, ["web-1"], []),
        ("OrderedReady", 3, {0: "terminating"}, [], []),
        ("OrderedReady", 3, {0: "ready", 2: "ready"}, ["web-1"], []),
        ("OrderedReady", 3, {0: "ready", 1: "failed"}, [], ["web-1"]),
        ("OrderedReady", 3, {0: "succeeded"}, [], ["web-0"]),
        # Parallel: every missing pod at once, whatever the others are doing.
        ("Parallel", 3, {}, ["web-0", "web-1", "web-2"], []),
        ("Parallel", 3, {1: "pending"}, ["web-0", "web-2"], []),
        ("Parallel", 3, {0: "failed", 1: "pending"}, ["web-2"], ["web-0"]),
        # Scale down: highest first; OrderedReady one at a time once the rest is healthy.
        ("OrderedReady", 1, {0: "ready", 1: "ready", 2: "ready"}, [], ["web-2"]),
        ("OrderedReady", 1, {0: "ready", 1: "ready", 2: "terminating"}, [], []),
        ("OrderedReady", 1, {0: "ready", 1: "ready", 2: "running"}, [], ["web-2"]),
        ("OrderedReady", 1, {0: "ready", 1: "running", 2: "ready"}, [], ["web-2"]),
        ("OrderedReady", 1, {0: "ready", 1: "running", 2: "running"}, [], []),
        ("OrderedReady", 1, {0: "pending", 1: "ready", 2: "ready"}, [], []),
        ("OrderedReady", 0, {0: "ready", 1: "ready"}, [], ["web-1"]),
        ("Parallel", 1, {0: "ready", 1: "ready", 2: "ready"}, [], ["web-2", "web-1"]),
        ("Parallel", 1, {0: "pending", 1: "ready", 2: "terminating"}, [], ["web-1"]),
        # Scaling and creating in one Parallel sync.
        ("Parallel", 2, {1: "failed", 3: "ready"}, ["web-0"], ["web-1", "web-3"]),
    ],
)
def test_one_sync(policy, replicas, pods, creates, deletes):
    web = sts("web", replicas)
    if policy == "Parallel":
        web.parallel()
    w = controller(web, *(member(web, i, state) for i, state in pods.items())).sync(0)
    assert names(w.pod_creates) == creates
    assert names(w.pod_deletes) == deletes
    assert all(d[3] is None for d in w.pod_deletes)  # the pod's own grace period


@pytest.mark.parametrize(
    "state, event",
    [
        ("failed", ("Warning", "RecreatingFailedPod", "StatefulSet default/web is recreating failed Pod web-0")),
        (
            "succeeded",
            ("Normal", "RecreatingTerminatedPod", "StatefulSet default/web is recreating terminated Pod web-0"),
        ),
    ],
)
def test_a_finished_pod_is_deleted_then_created_again_after_it_is_gone(state, event):
    web = sts("web", 1)
    dead = member(web, 0, state)
    c = controller(web, dead)
    w = c.sync(0)
    assert names(w.pod_deletes) == ["web-0"] and not w.pod_creates and reasons(w) == [event]
    assert not c.sync(0.001)  # its delete is on its way: not again
    c.on_event("Pod", "DELETED", dead, 0.01)
    w = c.sync(0.01)
    assert names(w.pod_creates) == ["web-0"]
    assert reasons(w) == [("Normal", "SuccessfulDelete", "delete Pod web-0 in StatefulSet web successful")]


def test_a_pod_that_keeps_failing_is_recreated_with_a_growing_delay():
    web = sts("web", 1)
    c = controller(web)
    times = []
    now = 0.0
    for _ in range(4):
        (created,) = land(c, c.sync(now), now)
        dead = member(web, 0, "failed")
        dead.meta["uid"] = created.meta["uid"]
        c.on_event("Pod", "MODIFIED", dead, now)
        while not c.sync(now).pod_deletes:
            now = c.next_wakeup()
        times.append(now)
        c.on_event("Pod", "DELETED", dead, now)
    assert times[0] == 0.0 and times[1] - times[0] == pytest.approx(0.005)
    assert times[3] - times[2] == pytest.approx(0.02)


def test_min_ready_seconds_hold_the_next_pod_and_wake_the_controller():
    web = sts("web", 2).min_ready(10)
    c = controller(web, member(web, 0, "ready", ready_at=0))
    w = c.sync(5)
    assert not w.pod_creates and w.statefulset_status[0][3]["availableReplicas"] == 0
    assert c.next_wakeup() == 10
    w = c.sync(10)
    assert names(w.pod_creates) == ["web-1"] and w.statefulset_status[0][3]["availableReplicas"] == 1


# ---- one sync: rolling updates -----------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy, pods, deletes",
    [
        ("rolling", {0: "old", 1: "old", 2: "old"}, ["web-2"]),
        ("rolling", {0: "old", 1: "old", 2: "new-pending"}, []),
        ("rolling", {0: "old", 1: "old", 2: "new"}, ["web-1"]),
        ("rolling", {0: "old", 1: "new", 2: "new"}, ["web-0"]),
        ("rolling", {0: "new", 1: "new", 2: "new"}, []),
        ("rolling", {0: "old", 1: "old", 2: "old-terminating"}, []),
        ("rolling", {0: "old", 1: "old-running", 2: "old"}, []),  # scaling/readiness first
        ("parallel", {0: "old", 1: "old", 2: "new-pending"}, []),  # still one at a time
        ("parallel", {0: "old", 1: "old", 2: "old"}, ["web-2"]),
        ("partition=2", {0: "old", 1: "old", 2: "old"}, ["web-2"]),
        ("partition=2", {0: "old", 1: "old", 2: "new"}, []),
        ("partition=3", {0: "old", 1: "old", 2: "old"}, []),
        ("ondelete", {0: "old", 1: "old", 2: "old"}, []),
    ],
)
def test_rolling_update_step(strategy, pods, deletes):
    old, new, revs = old_and_new()
    if strategy == "parallel":
        new.parallel()
    elif strategy.startswith("partition="):
        new.partition(int(strategy.split("=")[1]))
    elif strategy == "ondelete":
        new.on_delete()
    built = []
    for i, spec in pods.items():
        which, _, state = spec.partition("-")
        built.append(member(new, i, state or "ready", rev=rev_name(old if which == "old" else new)))
    w = controller(new, *built, revisions=revs).sync(0)
    assert names(w.pod_deletes) == deletes and not w.pod_creates


@pytest.mark.parametrize(
    "strategy, expected",
    [("partition=2", "old"), ("partition=1", "new"), ("rolling", "new"), ("ondelete", "new")],
)
def test_a_missing_pod_is_created_at_the_revision_its_side_of_the_partition_wants(strategy, expected):
    old, new, revs = old_and_new()
    if strategy.startswith("partition="):
        new.partition(int(strategy.split("=")[1]))
    elif strategy == "ondelete":
        new.on_delete()
    pods = [member(new, 0, rev=rev_name(old)), member(new, 2, rev=rev_name(new))]
    (p,) = controller(new, *pods, revisions=revs).sync(0).pod_creates
    want = old if expected == "old" else new
    assert p["metadata"]["name"] == "web-1" and p["metadata"]["labels"][REVISION_LABEL] == rev_name(want)
    assert p["spec"]["containers"][0]["image"] == want.template["spec"]["containers"][0]["image"]


def test_scaling_down_goes_before_updating():
    old, new, revs = old_and_new(2)
    pods = [member(new, i, rev=rev_name(old)) for i in range(3)]
    w = controller(new, *pods, revisions=revs).sync(0)
    assert names(w.pod_deletes) == ["web-2"]
    pods[2].terminating()
    w = controller(new, *pods, revisions=revs).sync(0)
    assert not w.pod_deletes  # OrderedReady: web-1 is not rolled while web-2 is going


# ---- status ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pods, expect",
    [
        # (revision, state) per ordinal -> replicas, ready, current, updated, currentRevision
        ({0: ("old", "ready"), 1: ("old", "pending"), 2: ("new", "ready")}, (3, 2, 2, 1, "old")),
        ({0: ("new", "ready"), 1: ("new", "ready"), 2: ("new", "ready")}, (3, 3, 3, 3, "new")),
        ({0: ("new", "ready"), 1: ("new", "ready"), 2: ("new", "running")}, (3, 2, 0, 3, "old")),
        ({0: ("old", "ready"), 1: ("old", "running"), 2: ("new", "terminating")}, (3, 2, 2, 0, "old")),
        ({0: ("old", "ready"), 1: ("old", "ready"), 2: ("old", "ready")}, (3, 3, 2, 0, "old")),  # web-2 rolls
        ({}, (0, 0, 0, 0, "new")),
    ],
)
def test_status_counters(pods, expect):
    old, new, revs = old_and_new()
    built = [member(new, i, state, rev=rev_name(old if r == "old" else new)) for i, (r, state) in pods.items()]
    c = controller(new.generation(4), *built, revisions=revs)
    status = c.sync(0).statefulset_status[0][3]
    replicas, ready, current, updated, current_rev = expect
    assert status == {
        "currentRevision": rev_name(old if current_rev == "old" else new),
        "replicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "currentReplicas": current,
        "updatedReplicas": updated,
        "updateRevision": rev_name(new),
        "collisionCount": 0,
        "observedGeneration": 4,
    }


def test_a_partitioned_rollout_never_makes_the_update_current():
    old, new, revs = old_and_new()
    new.partition(2)
    pods = [member(new, 0, rev=rev_name(old)), member(new, 1, rev=rev_name(old)), member(new, 2, rev=rev_name(new))]
    status = controller(new, *pods, revisions=revs).sync(0).statefulset_status[0][3]
    assert (status["currentRevision"], status["updatedReplicas"], status["currentReplicas"]) == (rev_name(old), 1, 2)


def test_status_is_written_only_when_it_changes():
    web = sts("web", 1)
    c = controller(web, member(web, 0))
    (item,) = c.sync(0).statefulset_status
    c.on_event("StatefulSet", "MODIFIED", {**web, "status": item[3]}, 0)
    assert not c.sync(1)


# ---- revisions -------------------------------------------------------------------------------


def test_fnv1_and_go_json_as_upstream():
    assert fnv1_32(b"") == 0x811C9DC5 and fnv1_32(b"a") == 0x050C5D7E
    assert go_json({"b": "<&>", "a": [1, "é"]}) == '{"a":[1,"é"],"b":"\\u003c\\u0026\\u003e"}'.encode()


def test_revision_hash_is_stable_safe_and_follows_the_template_and_collisions():
    a, b = sts("web").image("v1"), sts("web").image("v2")
    ha = revision_hash(revision_data(a.template), 0)
    assert ha == revision_hash(revision_data(sts("web").image("v1").template), 0)
    assert ha != revision_hash(revision_data(b.template), 0)
    assert ha != revision_hash(revision_data(a.template), 1)
    assert set(ha) <= set(SAFE_ALPHABET) and rev_name(a) == f"web-{ha}"


def test_the_first_sync_stores_the_template_as_revision_1():
    web = sts("web", 1).template_labels(tier="fe")
    web.meta["annotations"] = {"note": "x"}
    w = controller(web, revisions=()).sync(0)
    (rev,) = w.creates
    assert rev["kind"] == "ControllerRevision" and rev["apiVersion"] == "apps/v1" and rev["revision"] == 1
    assert rev["metadata"]["name"] == rev_name(web)
    assert rev["metadata"]["labels"] == {"app": "web", "tier": "fe", HASH_LABEL: rev_name(web)[4:]}
    assert rev["metadata"]["annotations"] == {"note": "x"}
    assert rev["metadata"]["ownerReferences"][0]["uid"] == "uid-sts-web"
    # As Go writes the template: its zero fields filled in, every map's keys sorted.
    assert rev["data"] == {
        "spec": {
            "template": {
                "$patch": "replace",
                "metadata": {"creationTimestamp": None, "labels": {"app": "web", "tier": "fe"}},
                "spec": {"containers": [{"image": "busybox", "name": "c", "resources": {}}]},
            }
        }
    }
    assert json.dumps(rev["data"], separators=(",", ":")) == go_json(rev["data"]).decode()  # keys already in order
    assert w.pod_creates[0]["metadata"]["labels"][REVISION_LABEL] == rev_name(web)
    assert w.statefulset_status[0][3]["currentRevision"] == w.statefulset_status[0][3]["updateRevision"]


def test_a_template_change_adds_the_next_revision_and_keeps_the_current_one():
    old, new, _ = old_and_new()
    w = controller(new, *(member(new, i, rev=rev_name(old)) for i in range(3)), revisions=(revision(old, 4),)).sync(0)
    (rev,) = w.creates
    assert rev["metadata"]["name"] == rev_name(new) and rev["revision"] == 5
    status = w.statefulset_status[0][3]
    assert (status["currentRevision"], status["updateRevision"]) == (rev_name(old), rev_name(new))


def test_going_back_to_an_older_template_renumbers_its_revision():
    old, new, (r1, r2) = old_and_new()
    back = sts("web", 3).image("v1").current(rev_name(new))
    w = controller(back, *(member(back, i, rev=rev_name(new)) for i in range(3)), revisions=(r1, r2)).sync(0)
    assert not w.creates
    (renumbered,) = w.updates
    assert renumbered["metadata"]["name"] == rev_name(old) and renumbered["revision"] == 3
    assert renumbered["metadata"]["resourceVersion"] == "1"
    assert names(w.pod_deletes) == ["web-2"]  # and the rollout back begins


def test_a_name_taken_by_other_data_is_a_collision():
    web = sts("web", 1)
    squatter = revision(sts("web", 1).image("other"))
    squatter["metadata"]["name"] = rev_name(web)
    squatter["metadata"]["ownerReferences"] = [{"kind": "StatefulSet", "uid": "someone", "controller": True}]
    w = controller(web, revisions=(squatter,)).sync(0)
    (rev,) = w.creates
    assert rev["metadata"]["name"] == f"web-{revision_hash(revision_data(web.template), 1)}"
    assert w.statefulset_status[0][3]["collisionCount"] == 1


def test_an_orphan_revision_the_selector_matches_is_adopted_and_used():
    web = sts("web", 1)
    orphan = revision(web)
    orphan["metadata"]["ownerReferences"] = []
    w = controller(web, revisions=(orphan,)).sync(0)
    (adopted,) = w.updates
    assert not w.creates and adopted["metadata"]["ownerReferences"][0]["uid"] == "uid-sts-web"
    assert w.pod_creates[0]["metadata"]["labels"][REVISION_LABEL] == rev_name(web)


@pytest.mark.parametrize(
    "count, live, limit, gone",
    [(5, {3}, 2, [1, 2]), (5, {1, 5}, 1, [2, 3]), (3, set(), 10, []), (3, {1, 2, 3}, 0, [])],
)
def test_history_beyond_the_limit_goes_oldest_first(count, live, limit, gone):
    revs = [{"metadata": {"name": f"r{i}"}, "revision": i} for i in range(1, count + 1)]
    doomed = history_to_delete(revs, {f"r{i}" for i in live}, limit)
    assert [r["revision"] for r in doomed] == gone


def test_old_revisions_no_pod_uses_are_deleted_past_the_limit():
    versions = [sts("web", 2).image(f"v{i}") for i in range(1, 5)]
    current = versions[-1].history(1).current(rev_name(versions[1]))
    pods = [member(current, 0, rev=rev_name(versions[0])), member(current, 1, rev=rev_name(current))]
    revs = tuple(revision(v, i + 1) for i, v in enumerate(versions))
    c = controller(current, *pods, revisions=revs)
    w = c.sync(0)
    # v1 (a pod's), v2 (current) and v4 (update) are live; v3 is the one history keeps.
    assert not w.deletes
    c.on_event("StatefulSet", "MODIFIED", current.copy().history(0), 0)
    w = c.sync(0)
    assert w.deletes == [
        ("ControllerRevision", "default", rev_name(versions[2]), f"uid-{rev_name(versions[2])}", "Background")
    ]
    assert not c.sync(0.1).deletes  # sent once


# ---- expectations and failures -----------------------------------------------------------------


def test_a_create_is_not_repeated_before_its_pod_is_seen_and_recorded_when_it_is():
    web = sts("web", 2)
    c = controller(web)
    w = c.sync(0)
    assert names(w.pod_creates) == ["web-0"] and not w.events
    assert not c.sync(1).pod_creates
    land(c, w, 2)
    w = c.sync(2)
    assert reasons(w) == [("Normal", "SuccessfulCreate", "create Pod web-0 in StatefulSet web successful")]
    assert not w.pod_creates  # web-0 is Pending


def test_a_create_not_seen_for_300_seconds_is_made_again():
    c = controller(sts("web", 1))
    assert names(c.sync(0).pod_creates) == ["web-0"]
    assert c.next_wakeup() == 300
    assert names(c.sync(300).pod_creates) == ["web-0"]


@pytest.mark.parametrize(
    "error, event",
    [
        (AlreadyExists('pods "web-0" already exists'), None),
        (
            Forbidden("exceeded quota"),
            ("Warning", "FailedCreate", "create Pod web-0 in StatefulSet web failed error: exceeded quota"),
        ),
    ],
)
def test_a_refused_create_is_forgotten_and_retried_after_a_backoff(error, event):
    c = controller(sts("web", 1))
    (p,) = c.sync(0).pod_creates
    c.on_create_failed(p, error, 0)
    w = c.sync(0)
    assert not w.pod_creates and reasons(w) == ([event] if event else [])
    assert c.next_wakeup() == pytest.approx(0.005)
    assert names(c.sync(0.005).pod_creates) == ["web-0"]


def test_a_failed_delete_is_reported_and_retried():
    web = sts("web", 1)
    c = controller(web, member(web, 0), member(web, 1))
    assert names(c.sync(0).pod_deletes) == ["web-1"]
    assert not c.sync(0).pod_deletes
    c.on_delete_failed("default", "web-1", "uid-web-1", Forbidden("no"), 0)
    w = c.sync(0)
    assert reasons(w) == [("Warning", "FailedDelete", "delete Pod web-1 in StatefulSet web failed error: no")]
    assert names(c.sync(0.005).pod_deletes) == ["web-1"]
    c.on_delete_failed("default", "web-1", "uid-web-1", NotFound("gone"), 0.005)
    assert not c.sync(0.005).events


def test_a_refused_revision_create_is_forgotten():
    web = sts("web", 1)
    c = controller(web, revisions=())
    (rev,) = c.sync(0).creates
    c.on_object_create_failed(rev, Forbidden("no"), 0)
    assert not c.sync(0).creates  # the refusal is read by the set's next reconcile: backing off
    assert c.revisions("default", "web") == []
    assert [r["metadata"]["name"] for r in c.sync(0.005).creates] == [rev_name(web)]


def test_orphan_members_are_adopted_and_others_are_not():
    web = sts("web", 3)
    stray = pod("web-1").labels(app="web")
    other = pod("cache-0").labels(app="web")
    w = controller(web, stray, other).sync(0)
    assert names(w.pod_updates) == ["web-1"]
    assert w.pod_updates[0]["metadata"]["ownerReferences"][0]["uid"] == "uid-sts-web"


def test_a_set_being_deleted_only_reports_status():
    web = sts("web", 3).terminating()
    w = controller(web, member(web, 0), member(web, 4)).sync(0)
    assert not (w.pod_creates or w.pod_deletes or w.creates or w.deletes)
    assert w.statefulset_status[0][3]["replicas"] == 2


# ---- scenarios against the apiserver --------------------------------------------------------


def web_set(replicas: int = 3):
    obj = sts("web", replicas).service("web")
    del obj["metadata"]["uid"], obj["metadata"]["generation"]
    return obj


def test_ordered_ready_scale_up_one_pod_at_a_time():
    loop = Loop()
    loop.create(web_set(3))
    loop.settle()
    assert loop.names() == ["web-0"]
    loop.settle()
    assert loop.names() == ["web-0"]  # Pending: web-1 waits
    loop.ready("web-0")
    loop.settle()
    assert loop.names() == ["web-0", "web-1"]
    loop.ready("web-1")
    loop.settle()
    assert loop.names() == ["web-0", "web-1", "web-2"]
    loop.ready("web-2")
    loop.settle()
    status = loop.status()
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3)
    assert loop.events("SuccessfulCreate") == [f"create Pod web-{i} in StatefulSet web successful" for i in range(3)]
    assert not loop.errors


def ready_set(loop: Loop, replicas: int = 3, obj=None) -> None:
    loop.create(obj or web_set(replicas))
    for i in range(replicas):
        loop.settle()
        loop.ready(f"web-{i}")
    loop.settle()


def test_ordered_ready_scale_down_from_the_highest_ordinal_one_at_a_time():
    loop = Loop()
    ready_set(loop)
    loop.edit(replicas=1)
    loop.settle()
    assert loop.terminating() == ["web-2"] and loop.live() == ["web-0", "web-1"]
    loop.settle()
    assert loop.terminating() == ["web-2"]  # waits for it to be gone
    loop.finish("web-2")
    loop.settle()
    assert loop.terminating() == ["web-1"]
    loop.finish("web-1")
    loop.settle()
    assert loop.names() == ["web-0"] and loop.status()["replicas"] == 1
    assert loop.events("SuccessfulDelete") == [
        "delete Pod web-2 in StatefulSet web successful",
        "delete Pod web-1 in StatefulSet web successful",
    ]


def test_parallel_creates_and_deletes_all_at_once():
    loop = Loop()
    loop.create(web_set(3).parallel())
    loop.settle()
    assert loop.names() == ["web-0", "web-1", "web-2"]
    loop.ready("web-0", "web-1", "web-2")
    loop.edit(replicas=1)
    loop.settle()
    assert loop.terminating() == ["web-1", "web-2"]


def rollout(loop: Loop) -> list[str]:
    """Drive a rollout to its end as a kubelet would; returns the pods replaced, in order,
    checking each is touched only after its successor's replacement is Ready."""
    replaced = []
    for _ in range(10):
        loop.settle()
        if not loop.terminating():
            break
        (name,) = loop.terminating()
        assert all(loop.pod(n)["status"].get("phase") == "Running" for n in loop.live())
        replaced.append(name)
        loop.finish(name)
        loop.settle()
        assert loop.pod(name)["status"]["phase"] == "Pending" and not loop.terminating()
        loop.ready(name)
    return replaced


def test_rolling_update_replaces_the_highest_first_keeping_names():
    loop = Loop()
    ready_set(loop)
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in loop.pods()}
    first = loop.status()["currentRevision"]
    loop.edit(template_image="v2")
    assert rollout(loop) == ["web-2", "web-1", "web-0"]
    loop.settle()
    assert loop.names() == ["web-0", "web-1", "web-2"]
    assert all(p["metadata"]["uid"] != uids[p["metadata"]["name"]] for p in loop.pods())
    status = loop.status()
    assert status["updateRevision"] != first and status["currentRevision"] == status["updateRevision"]
    assert (status["currentReplicas"], status["updatedReplicas"], status["observedGeneration"]) == (3, 3, 2)
    assert {p["metadata"]["labels"][REVISION_LABEL] for p in loop.pods()} == {status["updateRevision"]}
    assert [(r["metadata"]["name"], r["revision"]) for r in loop.revisions()] == [
        (first, 1),
        (status["updateRevision"], 2),
    ]


def test_a_partition_updates_only_the_pods_at_or_above_it():
    loop = Loop()
    ready_set(loop, obj=web_set(3).partition(2))
    first = loop.status()["currentRevision"]
    loop.edit(template_image="v2")
    assert rollout(loop) == ["web-2"]
    status = loop.status()
    assert (status["currentRevision"], status["updatedReplicas"], status["currentReplicas"]) == (first, 1, 2)
    assert [loop.pod(f"web-{i}")["spec"]["containers"][0]["image"] for i in range(3)] == ["busybox", "busybox", "v2"]


def test_on_delete_updates_a_pod_only_when_someone_deletes_it():
    loop = Loop()
    ready_set(loop, obj=web_set(3).on_delete())
    loop.edit(template_image="v2")
    loop.settle()
    assert not loop.terminating() and loop.status()["updatedReplicas"] == 0
    loop.delete("web-1")
    loop.finish("web-1")
    loop.settle()
    assert loop.pod("web-1")["spec"]["containers"][0]["image"] == "v2"
    assert loop.pod("web-0")["spec"]["containers"][0]["image"] == "busybox"
    assert loop.events("SuccessfulDelete") == []


def test_a_failed_pod_is_recreated_under_its_name():
    loop = Loop()
    ready_set(loop, 2)
    uid = loop.pod("web-1")["metadata"]["uid"]
    loop.fail("web-1")
    loop.settle()
    assert loop.names() == ["web-0", "web-1"] and loop.pod("web-1")["metadata"]["uid"] != uid
    assert loop.events("RecreatingFailedPod") == ["StatefulSet default/web is recreating failed Pod web-1"]
    assert loop.pod("web-1")["status"]["phase"] == "Pending"


def test_a_deleted_set_leaves_its_pods_and_revisions_to_the_garbage_collector():
    loop = Loop()
    ready_set(loop, 1)
    loop.api.delete("StatefulSet", "default", "web", None, None, loop.now)
    loop.settle()
    assert loop.names() == ["web-0"] and len(loop.revisions()) == 1


def test_the_controller_contract():
    c = StatefulSetController()
    assert c.kinds == ("StatefulSet", "Pod", "ControllerRevision")
    assert (c.NAME, c.COMPONENT, c.STATUS_FIELD) == ("statefulset", "statefulset-controller", "statefulset_status")
    assert not c.sync(0) and c.next_wakeup() is None


def test_history_past_the_limit_is_deleted_once_no_pod_uses_it():
    loop = Loop()
    ready_set(loop, 1, obj=web_set(1).history(1))
    for image in ("v2", "v3", "v4"):
        loop.edit(template_image=image)
        assert rollout(loop) == ["web-0"]
    loop.settle()
    images = [r["data"]["spec"]["template"]["spec"]["containers"][0]["image"] for r in loop.revisions()]
    assert images == ["v3", "v4"] and [r["revision"] for r in loop.revisions()] == [3, 4]
    assert loop.status()["currentRevision"] == loop.revisions()[-1]["metadata"]["name"]
