"""PodDisruptionBudget status as upstream's disruption controller computes it (pure, no Ray)."""

import pytest

from cluster.clock import rfc3339
from cluster.controllers.disruption import (
    DELETION_TIMEOUT,
    DisruptionController,
    pdb_status,
    pdbs_for_pod,
    scaled_value,
    status_needs_write,
)

WEB = {"app": "web"}


def pod(name, labels=WEB, ns="default", phase="Running", ready=True, deleting=False):
    p = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": dict(labels) if labels is not None else None},
        "spec": {"nodeName": "n1"},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if deleting:
        p["metadata"]["deletionTimestamp"] = rfc3339(1000)
    return p


def pdb(name="web", ns="default", selector=None, status=None, generation=None, **spec):
    obj = {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": WEB} if selector is None else selector, **spec},
    }
    if selector == "null":
        obj["spec"]["selector"] = None
    if status is not None:
        obj["status"] = status
    if generation is not None:
        obj["metadata"]["generation"] = generation
    return obj


def healthy(n):
    return [pod(f"p{i}") for i in range(n)]


def numbers(status):
    return tuple(status[f] for f in ("currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed"))


# ---- the arithmetic ----------------------------------------------------------------------

CASES = [
    # id, spec, pods, (currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed)
    ("minAvailable int below count", {"minAvailable": 2}, healthy(3), (3, 2, 3, 1)),
    ("minAvailable int equals count", {"minAvailable": 3}, healthy(3), (3, 3, 3, 0)),
    ("minAvailable int above count", {"minAvailable": 5}, healthy(3), (3, 5, 3, 0)),
    ("minAvailable 0", {"minAvailable": 0}, healthy(2), (2, 0, 2, 2)),
    ("minAvailable 50% of 3 rounds up to 2", {"minAvailable": "50%"}, healthy(3), (3, 2, 3, 1)),
    ("minAvailable 34% of 3 rounds up to 2", {"minAvailable": "34%"}, healthy(3), (3, 2, 3, 1)),
    ("minAvailable 100%", {"minAvailable": "100%"}, healthy(4), (4, 4, 4, 0)),
    ("minAvailable 0%", {"minAvailable": "0%"}, healthy(3), (3, 0, 3, 3)),
    ("maxUnavailable int", {"maxUnavailable": 1}, healthy(3), (3, 2, 3, 1)),
    ("maxUnavailable int above count clamps at 0", {"maxUnavailable": 5}, healthy(3), (3, 0, 3, 3)),
    ("maxUnavailable 50% of 3 rounds up to 2", {"maxUnavailable": "50%"}, healthy(3), (3, 1, 3, 2)),
    ("maxUnavailable 10% of 3 rounds up to 1", {"maxUnavailable": "10%"}, healthy(3), (3, 2, 3, 1)),
    ("maxUnavailable 0", {"maxUnavailable": 0}, healthy(3), (3, 3, 3, 0)),
    ("maxUnavailable 0%", {"maxUnavailable": "0%"}, healthy(3), (3, 3, 3, 0)),
    ("maxUnavailable 25% of 10", {"maxUnavailable": "25%"}, healthy(10), (10, 7, 10, 3)),
    (
        "unready pod is expected but not healthy",
        {"minAvailable": 2},
        healthy(2) + [pod("u", ready=False)],
        (2, 2, 3, 0),
    ),
    ("unready pod with maxUnavailable", {"maxUnavailable": 1}, healthy(2) + [pod("u", ready=False)], (2, 2, 3, 0)),
    (
        "pending pod is expected but not healthy",
        {"maxUnavailable": 1},
        healthy(3) + [pod("pend", phase="Pending", ready=False)],
        (3, 3, 4, 0),
    ),
    (
        "terminating pod is expected but not healthy",
        {"minAvailable": 2},
        healthy(2) + [pod("t", deleting=True)],
        (2, 2, 3, 0),
    ),
    (
        "terminal pods are not counted at all",
        {"minAvailable": 1},
        healthy(2) + [pod("f", phase="Failed", ready=False), pod("s", phase="Succeeded", ready=False)],
        (2, 1, 2, 1),
    ),
    ("no pods: nothing allowed even with room", {"maxUnavailable": 1}, [], (0, 0, 0, 0)),
    ("no pods and minAvailable 0", {"minAvailable": 0}, [], (0, 0, 0, 0)),
    (
        "pods of other namespaces and labels are ignored",
        {"minAvailable": 1},
        healthy(2) + [pod("o", ns="other"), pod("x", labels={"app": "db"}), pod("n", labels=None)],
        (2, 1, 2, 1),
    ),
]


@pytest.mark.parametrize("spec,pods,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_status_numbers(spec, pods, expected):
    status = pdb_status(pdb(**spec), pods, now=10)
    assert numbers(status) == expected
    assert status["disruptedPods"] == {}


SELECTOR_CASES = [
    ("null selector matches nothing", "null", 0),
    ("empty selector matches every pod of the namespace", {}, 4),
    ("matchLabels", {"matchLabels": WEB}, 2),
    ("matchExpressions", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}, 3),
    ("DoesNotExist", {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, 1),
]


@pytest.mark.parametrize("selector,count", [c[1:] for c in SELECTOR_CASES], ids=[c[0] for c in SELECTOR_CASES])
def test_selector_semantics(selector, count):
    pods = healthy(2) + [pod("db", labels={"app": "db"}), pod("bare", labels=None), pod("elsewhere", ns="other")]
    status = pdb_status(pdb(selector=selector, minAvailable=0), pods, now=0)
    assert status["expectedPods"] == count
    assert status["disruptionsAllowed"] == count  # minAvailable 0: every counted healthy pod may go


def test_healthy_needs_running_and_ready_true():
    no_conditions = pod("a")
    no_conditions["status"]["conditions"] = []
    ready_unknown = pod("b")
    ready_unknown["status"]["conditions"][0]["status"] = "Unknown"
    not_running = pod("d", phase="Unknown")  # Ready=True alone is not enough here
    status = pdb_status(pdb(minAvailable=0), [no_conditions, ready_unknown, not_running, pod("c")], now=0)
    assert numbers(status) == (1, 0, 4, 1)


def test_scaled_value_rounds_percentages_up_and_rejects_junk():
    assert [scaled_value(v, 7) for v in (3, "0%", "1%", "14%", "15%", "100%")] == [3, 0, 1, 1, 2, 7]
    for bad in ("5", "abc", "-5%", True, None, 1.5):
        with pytest.raises(ValueError):
            scaled_value(bad, 7)


def test_unreadable_spec_fails_safe():
    old = {"currentHealthy": 3, "desiredHealthy": 1, "expectedPods": 3, "disruptionsAllowed": 2}
    status = pdb_status(pdb(minAvailable="lots", status=old), healthy(3), now=5)
    assert status["disruptionsAllowed"] == 0 and status["currentHealthy"] == 3
    (cond,) = status["conditions"]
    assert (cond["status"], cond["reason"]) == ("False", "SyncFailed") and "lots" in cond["message"]


def test_observed_generation_follows_metadata_generation():
    assert pdb_status(pdb(minAvailable=1, generation=4), healthy(2), now=0)["observedGeneration"] == 4
    assert pdb_status(pdb(minAvailable=1), healthy(2), now=0)["observedGeneration"] == 0


# ---- the condition ---------------------------------------------------------------------


def test_condition_sufficient_and_insufficient():
    (yes,) = pdb_status(pdb(minAvailable=1), healthy(2), now=7)["conditions"]
    (no,) = pdb_status(pdb(minAvailable=2), healthy(2), now=7)["conditions"]
    assert (yes["type"], yes["status"], yes["reason"]) == ("DisruptionAllowed", "True", "SufficientPods")
    assert (no["type"], no["status"], no["reason"]) == ("DisruptionAllowed", "False", "InsufficientPods")
    assert yes["lastTransitionTime"] == rfc3339(7)


def test_condition_transition_time_moves_only_on_flip_and_others_are_kept():
    other = {"type": "Example", "status": "True", "reason": "Kept", "lastTransitionTime": rfc3339(1)}
    first = pdb_status(pdb(minAvailable=1, status={"conditions": [other]}), healthy(2), now=10)
    same = pdb_status(pdb(minAvailable=1, status=first), healthy(2), now=20)
    flipped = pdb_status(pdb(minAvailable=2, status=same), healthy(2), now=30)
    allowed = {c["type"]: c for c in same["conditions"]}
    assert allowed["Example"] == other
    assert allowed["DisruptionAllowed"]["lastTransitionTime"] == rfc3339(10)
    assert {c["type"]: c for c in flipped["conditions"]}["DisruptionAllowed"]["lastTransitionTime"] == rfc3339(30)


# ---- disruptedPods -----------------------------------------------------------------------


def test_recently_evicted_pod_is_not_healthy_until_the_timeout():
    status = {"disruptedPods": {"p0": rfc3339(100)}}
    during = pdb_status(pdb(minAvailable=1, status=status), healthy(3), now=100 + DELETION_TIMEOUT - 1)
    assert numbers(during) == (2, 1, 3, 1) and during["disruptedPods"] == {"p0": rfc3339(100)}
    after = pdb_status(pdb(minAvailable=1, status=status), healthy(3), now=100 + DELETION_TIMEOUT)
    assert numbers(after) == (3, 1, 3, 2) and after["disruptedPods"] == {}


def test_disrupted_entries_end_when_the_pod_terminates_vanishes_or_has_no_time():
    status = {"disruptedPods": {"t": rfc3339(100), "gone": rfc3339(100), "p0": "yesterday"}}
    pods = healthy(2) + [pod("t", deleting=True)]
    out = pdb_status(pdb(minAvailable=1, status=status), pods, now=110)
    assert out["disruptedPods"] == {}
    assert numbers(out) == (2, 1, 3, 1)


def test_status_needs_write_ignores_transition_times_and_zero_defaults():
    status = pdb_status(pdb(minAvailable=1), healthy(2), now=3)
    assert not status_needs_write(status, pdb_status(pdb(minAvailable=1, status=status), healthy(2), now=9))
    assert status_needs_write({}, status)
    assert status_needs_write(status, dict(status, disruptedPods={"p0": rfc3339(1)}))
    assert status_needs_write(status, dict(status, observedGeneration=2))


# ---- pdbs_for_pod ------------------------------------------------------------------------


def test_pdbs_for_pod():
    budgets = [
        pdb("web"),
        pdb("all", selector={}),
        pdb("none", selector="null"),
        pdb("db", selector={"matchLabels": {"app": "db"}}),
        pdb("web-other-ns", ns="other"),
    ]
    assert [p["metadata"]["name"] for p in pdbs_for_pod(pod("p"), budgets)] == ["web", "all"]
    assert [p["metadata"]["name"] for p in pdbs_for_pod(pod("q", labels=None), budgets)] == ["all"]
    assert [p["metadata"]["name"] for p in pdbs_for_pod(pod("r", ns="other"), budgets)] == ["web-other-ns"]


# ---- the controller ----------------------------------------------------------------------


def fed(*pdbs, pods=()):
    dc = DisruptionController()
    for b in pdbs:
        dc.on_pdb("ADDED", b)
    for p in pods:
        dc.on_pod("ADDED", p)
    return dc


def test_sync_writes_once_then_only_changes():
    dc = fed(pdb(minAvailable=2), pods=healthy(3))
    (write,) = dc.sync(now=1)
    ns, name, status = write
    assert (ns, name, numbers(status)) == ("default", "web", (3, 2, 3, 1))
    assert dc.sync(now=2) == []
    # The watch echo of our own write changes nothing.
    dc.on_pdb("MODIFIED", pdb(minAvailable=2, status=status))
    assert dc.sync(now=3) == []
    assert dc.pdb("default", "web")["status"] == status


def test_pod_turning_unready_rewrites_and_unrelated_pods_do_not_wake_the_pdb():
    dc = fed(pdb(minAvailable=2), pods=healthy(3))
    dc.sync(now=1)
    dc.on_pod("MODIFIED", pod("db-0", labels={"app": "db"}))
    assert dc.pending() == 0 and dc.sync(now=2) == []
    dc.on_pod("MODIFIED", pod("p1", ready=False))
    (write,) = dc.sync(now=3)
    assert numbers(write[2]) == (2, 2, 3, 0)
    assert write[2]["conditions"][0]["reason"] == "InsufficientPods"


def test_a_lost_write_is_repeated_when_the_watch_brings_the_old_status():
    dc = fed(pdb(minAvailable=1), pods=healthy(2))
    (first,) = dc.sync(now=1)
    dc.on_pdb("MODIFIED", pdb(minAvailable=1, status={}))
    (again,) = dc.sync(now=2)
    assert again[:2] == first[:2] and numbers(again[2]) == numbers(first[2]) == (2, 1, 2, 1)


def test_relabelled_pod_moves_between_budgets():
    a = pdb("a", selector={"matchLabels": {"team": "a"}}, minAvailable=0)
    b = pdb("b", selector={"matchLabels": {"team": "b"}}, minAvailable=0)
    dc = fed(a, b, pods=[pod("x", labels={"team": "a"})])
    dc.sync(now=1)
    dc.on_pod("MODIFIED", pod("x", labels={"team": "b"}))
    writes = {name: status["expectedPods"] for _, name, status in dc.sync(now=2)}
    assert writes == {"a": 0, "b": 1}


def test_relist_delete_without_labels_still_wakes_the_pdb():
    dc = fed(pdb(minAvailable=1), pods=healthy(2))
    dc.sync(now=1)
    dc.on_pod("DELETED", {"kind": "Pod", "metadata": {"namespace": "default", "name": "p1"}})
    (write,) = dc.sync(now=2)
    assert numbers(write[2]) == (1, 1, 1, 0)


def test_namespaces_are_independent_and_writes_come_in_key_order():
    dc = fed(
        pdb(ns="zeta", minAvailable=1),
        pdb(ns="alpha", minAvailable=1),
        pods=[pod("p", ns="zeta"), pod("q", ns="zeta"), pod("r", ns="alpha")],
    )
    writes = dc.sync(now=1)
    assert [(ns, numbers(s)) for ns, _, s in writes] == [("alpha", (1, 1, 1, 0)), ("zeta", (2, 1, 2, 1))]
    dc.on_pod("DELETED", pod("q", ns="zeta"))
    assert [ns for ns, _, _ in dc.sync(now=2)] == ["zeta"]


def test_deleted_pdb_is_forgotten():
    dc = fed(pdb(minAvailable=1), pods=healthy(2))
    dc.on_pdb("DELETED", pdb())
    assert dc.sync(now=1) == []
    dc.on_pod("MODIFIED", pod("p0", ready=False))
    assert dc.sync(now=2) == [] and dc.pdb("default", "web") is None


def test_expired_disruption_is_rechecked_without_any_event():
    evicted = {"disruptionsAllowed": 0, "disruptedPods": {"p0": rfc3339(10)}}
    dc = fed(pdb(minAvailable=1, status=evicted), pods=healthy(2))
    (write,) = dc.sync(now=20)
    assert numbers(write[2]) == (1, 1, 2, 0) and write[2]["disruptedPods"] == {"p0": rfc3339(10)}
    assert dc.next_recheck() == 10 + DELETION_TIMEOUT
    assert dc.sync(now=10 + DELETION_TIMEOUT - 1) == []
    (write,) = dc.sync(now=10 + DELETION_TIMEOUT)
    assert numbers(write[2]) == (2, 1, 2, 1) and write[2]["disruptedPods"] == {}
    assert dc.next_recheck() is None


def test_pdb_count_follows_adds_and_deletes():
    from cluster.controllers.disruption import DisruptionController

    c = DisruptionController()
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "a", "namespace": "default", "uid": "u1"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
    }
    assert c.pdb_count() == 0
    c.on_pdb("ADDED", pdb)
    assert c.pdb_count() == 1
    c.on_pdb("DELETED", pdb)
    assert c.pdb_count() == 0
