"""The DaemonSet controller (pure, no Ray): eligibility by taints, nodeSelector and
affinity, the tolerations and node affinity of daemon pods, nodes coming and going,
failed and duplicate pods, status, garbage collection and every failure path."""

import copy

import pytest
from workload_builders import Fake, Real, ds, names, node, pod, target

from cluster.api.errors import InternalError
from cluster.api.requests import Create
from cluster.controllers.daemonset import (
    DaemonSetController,
    add_daemon_tolerations,
    node_should_run,
    replace_node_affinity,
    target_node,
    template_hash,
)
from cluster.controllers.workload import EXPECTATIONS_TIMEOUT
from cluster.controllers.writes import requests

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
NK = "node.kubernetes.io/"
DAEMON_TOLERATIONS = [
    {"key": NK + "not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": NK + "unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": NK + "disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": NK + "memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": NK + "pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": NK + "unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def fresh(*objs, now: float = 0.0) -> Fake:
    return Fake(DaemonSetController(), now).add(*objs)


def settle(f: Fake, rounds: int = 20) -> list:
    """Sync and land until nothing is asked for; returns every pod created."""
    made = []
    for _ in range(rounds):
        w = f.sync()
        if not w.pod_creates:
            return made
        made += f.land(w)
    raise AssertionError("did not settle")


def daemon_pod(name, owner, node_name, bound=True):
    p = pod(name).owned_by(owner).for_node(node_name)
    return p.on(node_name) if bound else p


def status_of(w):
    ((_, _, _, status),) = w.daemonset_status
    return status


# ---- the daemon pod ---------------------------------------------------------------------------


def test_created_pod_has_daemon_tolerations_node_affinity_and_revision_hash():
    agent = ds("agent").pod_spec(tolerations=[{"key": "gpu", "operator": "Exists"}])
    w = fresh(node("n1"), agent).sync()
    (p,) = w.pod_creates
    assert p["metadata"]["generateName"] == "agent-"
    assert p["metadata"]["labels"] == {"app": "agent", "controller-revision-hash": template_hash(agent.template)}
    assert p["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "name": "agent",
            "uid": "uid-ds-agent",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert p["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}] + DAEMON_TOLERATIONS
    assert p["spec"]["affinity"] == {
        "nodeAffinity": {
            REQ: {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
            }
        }
    }
    assert agent.template["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]  # template untouched


def test_daemon_tolerations_replace_same_ones_and_add_network_for_host_network():
    spec = {
        "hostNetwork": True,
        "tolerations": [
            {"key": NK + "not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": NK + "unreachable", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
    }
    add_daemon_tolerations(spec)
    assert (
        spec["tolerations"]
        == [
            DAEMON_TOLERATIONS[0],  # replaced: no tolerationSeconds
            {"key": NK + "unreachable", "operator": "Equal", "effect": "NoExecute", "tolerationSeconds": 300},
            *DAEMON_TOLERATIONS[1:],
            {"key": NK + "network-unavailable", "operator": "Exists", "effect": "NoSchedule"},
        ]
    )
    again = {"tolerations": list(spec["tolerations"]), "hostNetwork": True}
    add_daemon_tolerations(again)
    assert again["tolerations"] == spec["tolerations"]  # idempotent


PIN = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
LABEL_TERM = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
PREFERRED = [{"weight": 1, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]
POD_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": []}


@pytest.mark.parametrize(
    "affinity,want",
    [
        (None, {"nodeAffinity": {REQ: PIN}}),
        ({"podAffinity": POD_AFFINITY}, {"podAffinity": POD_AFFINITY, "nodeAffinity": {REQ: PIN}}),
        ({"nodeAffinity": {PREF: PREFERRED}}, {"nodeAffinity": {PREF: PREFERRED, REQ: PIN}}),
        ({"nodeAffinity": {REQ: LABEL_TERM, PREF: PREFERRED}}, {"nodeAffinity": {REQ: PIN, PREF: PREFERRED}}),
    ],
    ids=["none", "pod affinity only", "preferred only", "required terms replaced"],
)
def test_replace_node_affinity(affinity, want):
    spec = {} if affinity is None else {"affinity": copy.deepcopy(affinity)}
    replace_node_affinity(spec, "n1")
    assert spec["affinity"] == want
    assert target_node({"spec": spec}) == "n1"


def test_target_node_prefers_node_name_and_needs_one_value():
    assert target_node(pod("p").on("n2").for_node("n1")) == "n2"
    assert target_node(pod("p")) is None
    bad = pod("p").for_node("n1")
    bad.spec["affinity"]["nodeAffinity"][REQ]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = ["a", "b"]
    assert target_node(bad) is None


# ---- eligibility ----------------------------------------------------------------------------

ELIGIBILITY = [
    # id, DaemonSet tweak, node, (should run, may continue)
    ("plain node", lambda d: d, node("n"), (True, True)),
    (
        "nodeSelector matches",
        lambda d: d.pod_spec(nodeSelector={"disk": "ssd"}),
        node("n").labels(disk="ssd"),
        (True, True),
    ),
    (
        "nodeSelector does not match",
        lambda d: d.pod_spec(nodeSelector={"disk": "ssd"}),
        node("n").labels(disk="hdd"),
        (False, False),
    ),
    (
        "required affinity does not match",
        lambda d: d.pod_spec(affinity={"nodeAffinity": {REQ: LABEL_TERM}}),
        node("n").labels(zone="b"),
        (False, False),
    ),
    (
        "required affinity matches",
        lambda d: d.pod_spec(affinity={"nodeAffinity": {REQ: LABEL_TERM}}),
        node("n").labels(zone="a"),
        (True, True),
    ),
    ("template nodeName elsewhere", lambda d: d.pod_spec(nodeName="other"), node("n"), (False, False)),
    ("untolerated NoSchedule: may stay", lambda d: d, node("n").taint("dedicated"), (False, True)),
    ("untolerated NoExecute: must go", lambda d: d, node("n").taint("dedicated", "NoExecute"), (False, False)),
    ("PreferNoSchedule is ignored", lambda d: d, node("n").taint("x", "PreferNoSchedule"), (True, True)),
    (
        "tolerated by the template",
        lambda d: d.pod_spec(tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}]),
        node("n").taint("dedicated", "NoExecute", "gpu"),
        (True, True),
    ),
    (
        "unreachable NoExecute tolerated automatically",
        lambda d: d,
        node("n").taint(NK + "unreachable", "NoExecute").taint(NK + "not-ready", "NoExecute"),
        (True, True),
    ),
    (
        "pressure and unschedulable tolerated automatically",
        lambda d: d,
        node("n")
        .taint(NK + "memory-pressure")
        .taint(NK + "disk-pressure")
        .taint(NK + "pid-pressure")
        .taint(NK + "unschedulable"),
        (True, True),
    ),
    (
        "network-unavailable only with hostNetwork",
        lambda d: d,
        node("n").taint(NK + "network-unavailable"),
        (False, True),
    ),
    (
        "network-unavailable with hostNetwork",
        lambda d: d.pod_spec(hostNetwork=True),
        node("n").taint(NK + "network-unavailable"),
        (True, True),
    ),
]


@pytest.mark.parametrize("tweak,n,want", [c[1:] for c in ELIGIBILITY], ids=[c[0] for c in ELIGIBILITY])
def test_node_should_run(tweak, n, want):
    assert node_should_run(tweak(ds("agent")), n) == want


def test_only_eligible_nodes_get_pods_and_misscheduled_pods_are_counted_or_deleted():
    agent = ds("agent").pod_spec(nodeSelector={"role": "worker"})
    f = fresh(
        node("w1").labels(role="worker"), node("w2").labels(role="worker"), node("m1").labels(role="master"), agent
    )
    made = settle(f)
    assert sorted(target(p) for p in made) == ["w1", "w2"]
    f.modify(node("w2").labels(role="worker").taint("maintenance"))  # NoSchedule: the pod may stay
    w = f.sync()
    assert not w.pod_deletes
    assert (status_of(w)["desiredNumberScheduled"], status_of(w)["numberMisscheduled"]) == (1, 1)
    f.modify(node("w2").labels(role="worker").taint("maintenance", "NoExecute"))
    assert names(f.sync().pod_deletes) == [names(made)[1]]
    f.remove(made[1])
    f.modify(node("w1").labels(role="master"))  # no longer selected
    assert names(f.sync().pod_deletes) == [names(made)[0]]


# ---- nodes coming and going --------------------------------------------------------------------


def test_one_sync_creates_for_every_node_and_a_node_added_later_gets_its_own():
    f = fresh(*[node(f"n{i}") for i in range(6)], ds("agent"))
    w = f.sync()
    assert [r.slow_start[1] for r in requests(w) if isinstance(r, Create) and r.obj["kind"] == "Pod"] == [
        0,
        1,
        1,
        2,
        2,
        2,
    ]
    f.land(w)
    assert not f.sync().pod_creates
    f.add(node("n9"))
    (p,) = f.sync().pod_creates
    assert target(p) == "n9"


def test_node_status_changes_cost_nothing():
    agent = ds("agent")
    n1 = node("n1")
    f = fresh(n1, agent)
    settle(f)
    f.sync()
    f.modify(n1.copy().status(conditions=[{"type": "Ready", "status": "False"}]))
    assert not f.sync()


def test_deleted_node_leaves_bound_pods_to_pod_gc_but_deletes_unscheduled_ones():
    agent = ds("agent")
    f = fresh(node("n1"), node("n2"), agent, daemon_pod("a1", agent, "n1"), daemon_pod("a2", agent, "n2", bound=False))
    assert not f.sync().pod_creates
    f.remove(node("n1"), node("n2"))
    w = f.sync()
    assert names(w.pod_deletes) == ["a2"]
    assert status_of(w)["desiredNumberScheduled"] == 0


# ---- pods on a node ------------------------------------------------------------------------------


def test_failed_pod_is_deleted_with_backoff_and_replaced():
    agent = ds("agent")
    a = daemon_pod("a", agent, "n1")
    f = fresh(node("n1"), agent, a, now=10.0)
    w = f.sync()
    assert not w.pod_creates and not w.pod_deletes
    f.modify(a.copy().phase("Failed"))
    w = f.sync()
    assert names(w.pod_deletes) == ["a"]
    assert [(e["reason"], e["type"], e["message"]) for e in w.events if e["reason"] == "FailedDaemonPod"] == [
        ("FailedDaemonPod", "Warning", "Found failed daemon pod default/a on node n1, will try to kill it")
    ]
    f.remove(a)
    made = settle(f)
    assert [target(p) for p in made] == ["n1"]
    f.modify(made[0].copy().phase("Failed"))  # fails again at once: 1 s backoff since the last delete
    assert not f.sync().pod_deletes
    assert f.ctrl.next_wakeup() == 11.0
    f.now = 11.0
    assert names(f.sync().pod_deletes) == names(made)


def test_succeeded_pod_is_deleted():
    agent = ds("agent")
    f = fresh(node("n1"), agent, daemon_pod("a", agent, "n1").phase("Succeeded"))
    w = f.sync()
    assert names(w.pod_deletes) == ["a"] and "SucceededDaemonPod" in [e["reason"] for e in w.events]


def test_duplicate_pods_on_a_node_keep_the_oldest():
    agent = ds("agent")
    pods = [
        daemon_pod("new", agent, "n1").created(30),
        daemon_pod("old", agent, "n1").created(10),
        daemon_pod("unbound", agent, "n1", bound=False).created(0),
        daemon_pod("mid", agent, "n1").created(20),
    ]
    w = fresh(node("n1"), agent, *pods).sync()
    assert names(w.pod_deletes) == ["mid", "new", "unbound"]


def test_a_terminating_pod_holds_its_node_until_it_is_gone():
    agent = ds("agent")
    a = daemon_pod("a", agent, "n1").terminating()
    f = fresh(node("n1"), agent, a)
    w = f.sync()
    assert not w.pod_creates and not w.pod_deletes
    f.remove(a)
    assert len(f.sync().pod_creates) == 1


# ---- status ----------------------------------------------------------------------------------------


def test_status_values():
    agent = ds("agent").min_ready(5).generation(4)
    current = template_hash(agent.template)
    pods = [
        daemon_pod("a", agent, "n1").ready(at=0).labels(app="agent", **{"controller-revision-hash": current}),
        daemon_pod("b", agent, "n2").ready(at=98).labels(app="agent"),
        daemon_pod("c", agent, "n3"),
    ]
    f = fresh(node("n1"), node("n2"), node("n3"), node("n4").taint("x", "NoSchedule"), agent, *pods, now=100.0)
    w = f.sync()
    assert status_of(w) == {
        "desiredNumberScheduled": 3,
        "currentNumberScheduled": 3,
        "numberMisscheduled": 0,
        "numberReady": 2,
        "updatedNumberScheduled": 1,
        "numberAvailable": 1,
        "numberUnavailable": 2,
        "observedGeneration": 4,
    }
    assert f.ctrl.next_wakeup() == 103.0
    f.now = 103.0
    assert status_of(f.sync())["numberAvailable"] == 2
    assert not f.sync()


def test_observed_generation_waits_for_expectations():
    agent = ds("agent").generation(1)
    f = fresh(node("n1"), node("n2"), agent)
    f.land(f.sync(), fail=1)
    f.now = f.ctrl.next_wakeup()
    f.modify(agent.copy().generation(2).pod_spec(hostNetwork=True))
    f.modify(node("n1").labels(x="y"))
    w = f.sync()
    assert w.pod_creates and status_of(w)["observedGeneration"] == 2


# ---- ownership and deletion --------------------------------------------------------------------------


def test_orphans_are_adopted_and_the_deleted_daemonsets_pods_left_to_the_garbage_collector():
    agent = ds("agent")
    f = fresh(node("n1"), node("n2"), agent, pod("stray").labels(app="agent").on("n1"))
    w = f.sync()
    assert names(w.pod_updates) == ["stray"]
    assert [target(p) for p in w.pod_creates] == ["n2"]
    f.land(w)
    f.remove(agent)
    assert not f.sync().pod_deletes


# ---- failures -----------------------------------------------------------------------------------------


def test_failed_create_is_retried_on_its_node_after_backoff():
    f = fresh(node("n1"), node("n2"), ds("agent"))
    w = f.sync()
    assert [target(p) for p in w.pod_creates] == ["n1", "n2"]
    f.land(w, fail=1)
    w = f.sync()
    assert [e["reason"] for e in w.events] == ["SuccessfulCreate", "FailedCreate"] and not w.pod_creates
    f.now = f.ctrl.next_wakeup()
    assert [target(p) for p in f.sync().pod_creates] == ["n2"]


def test_lost_creates_expire_and_every_node_is_looked_at_again():
    f = fresh(node("n1"), ds("agent"))
    assert len(f.sync().pod_creates) == 1  # lost: never observed, never reported
    f.add(node("n2"))
    assert not f.sync().pod_creates
    f.now = EXPECTATIONS_TIMEOUT
    assert [target(p) for p in f.sync().pod_creates] == ["n1", "n2"]
    assert f.ctrl.next_wakeup() == 2 * EXPECTATIONS_TIMEOUT


def test_failed_delete_is_retried_after_backoff():
    agent = ds("agent")
    f = fresh(node("n1"), agent, daemon_pod("a", agent, "n1").phase("Succeeded"))
    ((ns, name, uid, _),) = f.sync().pod_deletes
    f.ctrl.on_delete_failed(ns, name, uid, InternalError("boom"), f.now)
    w = f.sync()
    assert not w.pod_deletes and [e["reason"] for e in w.events] == ["FailedDelete"]
    f.now = f.ctrl.next_wakeup()
    assert names(f.sync().pod_deletes) == ["a"]


# ---- against the real apiserver ----------------------------------------------------------------------


def test_converges_against_the_apiserver():
    loop = Real(DaemonSetController())
    agent = ds("agent")
    del agent["metadata"]["uid"]
    loop.create(node("n1"), node("n2"), node("n3").taint("dedicated", "NoExecute"), agent)
    loop.pump()
    pods = loop.pods()
    assert sorted(target(p) for p in pods) == ["n1", "n2"] and not loop.errors
    assert all(
        not any("tolerationSeconds" in t and t["key"].startswith(NK) for t in p["spec"]["tolerations"]) for p in pods
    )
    assert loop.get("DaemonSet", "agent")["status"]["desiredNumberScheduled"] == 2
    loop.api.delete("DaemonSet", "default", "agent", None, None, loop.now)
    loop.pump()  # nothing more: the pods are the garbage collector's (test_garbagecollector.py)
    assert len(loop.pods()) == 2


def test_only_a_nodes_name_labels_and_taints_are_kept():
    """Every node is kept whether or not DaemonSets run (they place pods by these three)."""
    worker = node("w1").labels(role="worker").taint("maintenance").status(nodeInfo={"kubeletVersion": "v1.31.0"})
    f = fresh(worker, ds("agent").pod_spec(nodeSelector={"role": "worker"}))
    assert f.ctrl._nodes["w1"] == {
        "kind": "Node",
        "metadata": {"name": "w1", "labels": {"role": "worker"}},
        "spec": {"taints": worker["spec"]["taints"]},
    }
    assert not settle(f)  # placed by what is kept: the taint is not tolerated
