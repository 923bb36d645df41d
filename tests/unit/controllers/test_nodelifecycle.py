"""The node lifecycle controller: grace periods from heartbeats, Unknown conditions, the
NoExecute eviction taints, recovery, a restarted controller's fresh grace, and the
apiserver's heartbeat-guarded ``patch_node_conditions``."""

import pytest
from controller_builders import NOT_READY, UNREACHABLE, Loop, cond, lease, node, summary, taint

from cluster.api.errors import Conflict, Invalid, NotFound
from cluster.api.patches import NodeConditions
from cluster.api.requests import Patch
from cluster.apiserver.apiserver import APIServer
from cluster.clock import rfc3339
from cluster.controllers.nodelifecycle import (
    MONITOR_PERIOD,
    Shared,
    health_view,
    lease_renew_time,
    no_execute_patch,
    node_lifecycle_step,
    unknown_conditions,
)
from cluster.controllers.writes import requests

GONE_QUIET = [
    ("condition", "n1", "Ready", "Unknown", "NodeStatusUnknown"),
    ("condition", "n1", "MemoryPressure", "Unknown", "NodeStatusUnknown"),
    ("condition", "n1", "DiskPressure", "Unknown", "NodeStatusUnknown"),
    ("condition", "n1", "PIDPressure", "Unknown", "NodeStatusUnknown"),
    ("taint+", "n1", UNREACHABLE, "NoExecute"),
    ("event", "NodeNotReady", "Node n1 status is now: NodeNotReady", "Normal", "Node"),
]
# The controller's first sight of a node.
REGISTERED = ("event", "RegisteredNode", "Node n1 event: Registered Node n1 in Controller", "Normal", "Node")


def registered(name):
    return ("event", "RegisteredNode", f"Node {name} event: Registered Node {name} in Controller", "Normal", "Node")


def _feed(c, events):
    for now, kind, etype, obj in events:
        c.on_event(kind, etype, obj, now)


def _conditions_at(c, now):
    return [line for line in summary(c.sync(now)) if line[0] == "condition"]


# ---- when the grace ends -----------------------------------------------------------------

GRACE_CASES = [
    # (case, events as (time, kind, type, object), when the node goes Unknown)
    ("never renews: 40 s from first sight", [(0, "Node", "ADDED", node())], 40.0),
    ("first seen late: the grace starts then", [(7, "Node", "ADDED", node())], 47.0),
    (
        "lease renewals move the probe to when they are seen",
        [
            (0, "Node", "ADDED", node()),
            (10, "Lease", "MODIFIED", lease(renew=9)),
            (20.5, "Lease", "MODIFIED", lease(renew=20)),
        ],
        60.5,
    ),
    (
        "a renewTime that is not later is no heartbeat",
        [
            (0, "Node", "ADDED", node()),
            (10, "Lease", "ADDED", lease(renew=9)),
            (30, "Lease", "MODIFIED", lease(renew=9)),
            (31, "Lease", "MODIFIED", lease(renew=5)),
        ],
        50.0,
    ),
    (
        "a lease seen before its node counts only once the node is seen",
        [(0, "Lease", "ADDED", lease(renew=0)), (3, "Node", "ADDED", node()), (4, "Lease", "MODIFIED", lease(renew=0))],
        43.0,
    ),
    (
        "a lease outside kube-node-lease is not a node's",
        [(0, "Node", "ADDED", node()), (20, "Lease", "MODIFIED", lease(renew=20, ns="default"))],
        40.0,
    ),
    (
        "an unreadable renewTime is no heartbeat",
        [
            (0, "Node", "ADDED", node()),
            (20, "Lease", "MODIFIED", {**lease(), "spec": {"renewTime": "soon"}}),
            (21, "Lease", "MODIFIED", {**lease(), "spec": {}}),
        ],
        40.0,
    ),
    (
        "a deleted lease is no heartbeat",
        [(0, "Node", "ADDED", node()), (20, "Lease", "DELETED", lease(renew=20))],
        40.0,
    ),
    (
        "a new Ready lastHeartbeatTime is a heartbeat",
        [(0, "Node", "ADDED", node()), (30, "Node", "MODIFIED", node(heartbeat=29, rv="2"))],
        70.0,
    ),
    (
        "a node write with the same heartbeat is not",
        [(0, "Node", "ADDED", node()), (30, "Node", "MODIFIED", node(rv="2", taints=[taint("x")]))],
        40.0,
    ),
    ("no Ready condition yet: node-startup-grace-period (60 s)", [(0, "Node", "ADDED", node(ready=None))], 60.0),
    (
        "a Ready condition appearing is a heartbeat, and the grace becomes 40 s",
        [(0, "Node", "ADDED", node(ready=None)), (15, "Node", "MODIFIED", node(rv="2"))],
        55.0,
    ),
]


@pytest.mark.parametrize("case,events,expiry", GRACE_CASES, ids=[c[0] for c in GRACE_CASES])
def test_grace_expires_exactly_at_probe_plus_grace(case, events, expiry):
    c = node_lifecycle_step()
    _feed(c, events)
    c.sync(events[-1][0])
    assert c.next_wakeup() == expiry
    assert _conditions_at(c, expiry - 0.001) == []
    assert [line[2:4] for line in _conditions_at(c, expiry)] == [
        ("Ready", "Unknown"),
        ("MemoryPressure", "Unknown"),
        ("DiskPressure", "Unknown"),
        ("PIDPressure", "Unknown"),
    ]


def test_the_whole_pass_when_a_ready_node_goes_quiet():
    c = node_lifecycle_step()
    _feed(c, [(0, "Node", "ADDED", node())])
    assert summary(c.sync(0)) == [REGISTERED]
    assert summary(c.sync(40)) == GONE_QUIET
    # Nothing came back yet for that node version: no second write, until the monitor period passes.
    assert summary(c.sync(41)) == []
    assert c.next_wakeup() == 40 + MONITOR_PERIOD
    assert summary(c.sync(40 + MONITOR_PERIOD)) == GONE_QUIET  # the write was lost: sent again


def test_unknown_conditions_keep_the_heartbeat_and_skip_what_is_already_unknown():
    n = node(heartbeat=12)
    n["status"]["conditions"][1] = cond("DiskPressure", "Unknown", 12, 30, reason="NodeStatusUnknown")
    out = unknown_conditions(n, 52.4)
    assert [c["type"] for c in out] == ["Ready", "MemoryPressure", "PIDPressure"]
    ready = out[0]
    assert ready == {
        "type": "Ready",
        "status": "Unknown",
        "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status.",
        "lastHeartbeatTime": rfc3339(12),
        "lastTransitionTime": rfc3339(52),
    }


def test_conditions_never_posted_get_never_updated_with_the_creation_time():
    n = node(ready=None, pressure=False)
    out = unknown_conditions(n, 60)
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in out] == [
        (t, "Unknown", "NodeStatusNeverUpdated", "Kubelet never posted node status.")
        for t in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
    ]
    assert all(c["lastHeartbeatTime"] == rfc3339(0) and c["lastTransitionTime"] == rfc3339(60) for c in out)


def test_a_node_that_never_posted_ready_gets_no_event_and_its_unreachable_taint():
    c = node_lifecycle_step()
    _feed(c, [(0, "Node", "ADDED", node(ready=None, pressure=False))])
    lines = summary(c.sync(60))
    assert lines == [
        ("condition", "n1", "Ready", "Unknown", "NodeStatusNeverUpdated"),
        ("condition", "n1", "MemoryPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("condition", "n1", "DiskPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("condition", "n1", "PIDPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("taint+", "n1", UNREACHABLE, "NoExecute"),
        REGISTERED,
    ]


# ---- the NoExecute taints ------------------------------------------------------------------

TAINT_CASES = [
    # (case, Ready status, taints the node has, expected (add keys, remove keys) or None)
    ("ready, clean", "True", [], None),
    ("ready again: both removed", "True", [taint(UNREACHABLE), taint(NOT_READY)], ([], [NOT_READY, UNREACHABLE])),
    ("not ready: not-ready added", "False", [], ([NOT_READY], [])),
    ("not ready, was unreachable: swapped", "False", [taint(UNREACHABLE)], ([NOT_READY], [UNREACHABLE])),
    ("unknown: unreachable added", "Unknown", [], ([UNREACHABLE], [])),
    ("unknown, was not ready: swapped", "Unknown", [taint(NOT_READY)], ([UNREACHABLE], [NOT_READY])),
    ("unknown, already tainted", "Unknown", [taint(UNREACHABLE, added=3)], None),
    ("the NoSchedule twins are not ours", "True", [taint(UNREACHABLE, "NoSchedule")], None),
    ("other NoExecute taints are not ours", "True", [taint("dedicated")], None),
    ("no Ready condition: hands off", None, [taint(UNREACHABLE)], None),
    ("a Ready status upstream has no case for: hands off", "Maybe", [taint(UNREACHABLE)], None),
]


@pytest.mark.parametrize("case,ready,taints,expected", TAINT_CASES, ids=[c[0] for c in TAINT_CASES])
def test_no_execute_patch(case, ready, taints, expected):
    patch = no_execute_patch(node(taints=taints), ready, 61.7)
    if expected is None:
        assert patch is None
        return
    name, add, remove = patch
    assert name == "n1"
    assert ([t["key"] for t in add], [t["key"] for t in remove]) == expected
    assert all(t == {"key": t["key"], "effect": "NoExecute", "timeAdded": rfc3339(61)} for t in add)
    assert all(t == {"key": t["key"], "effect": "NoExecute"} for t in remove)


def test_kubelet_reporting_not_ready_then_going_quiet_swaps_the_taint_without_an_event():
    c = node_lifecycle_step()
    _feed(c, [(0, "Node", "ADDED", node(ready="False"))])
    assert summary(c.sync(0)) == [("taint+", "n1", NOT_READY, "NoExecute"), REGISTERED]
    _feed(c, [(0.1, "Node", "MODIFIED", node(ready="False", rv="2", taints=[taint(NOT_READY, added=0)]))])
    assert summary(c.sync(0.1)) == []
    assert summary(c.sync(40)) == [
        ("condition", "n1", "Ready", "Unknown", "NodeStatusUnknown"),
        ("condition", "n1", "MemoryPressure", "Unknown", "NodeStatusUnknown"),
        ("condition", "n1", "DiskPressure", "Unknown", "NodeStatusUnknown"),
        ("condition", "n1", "PIDPressure", "Unknown", "NodeStatusUnknown"),
        ("taint+", "n1", UNREACHABLE, "NoExecute"),
        ("taint-", "n1", NOT_READY, "NoExecute"),
    ]


def test_a_deleted_node_is_forgotten():
    c = node_lifecycle_step()
    _feed(c, [(0, "Node", "ADDED", node()), (5, "Node", "DELETED", node())])
    assert c.next_wakeup() is None
    assert summary(c.sync(100)) == []
    assert c.reconciler.probe_time("n1") is None


def test_lease_renew_time_parses_micro_time():
    assert lease_renew_time(lease(renew=12.25)) == 12.25
    assert lease_renew_time({"spec": {"renewTime": 5}}) is None


# ---- through the apiserver: death, recovery, restart ------------------------------------------


def _kubelet_dies_at_20():
    loop = Loop()
    loop.register("n1", 0)
    loop.register("n2", 0)
    for t in (0, 10, 20):
        loop.renew(["n1", "n2"], t)
        loop.at(t)
    return loop


def test_a_dead_kubelet_goes_unknown_40s_after_its_last_renewal_and_recovers():
    loop = _kubelet_dies_at_20()
    for t in (30, 40, 50):
        loop.renew(["n2"], t)  # n1 is dead
        loop.at(t)
    loop.run(until=59.9)
    assert [line for _, line in loop.trace] == [REGISTERED, registered("n2")]
    loop.trace.clear()
    loop.run(until=60)
    assert [(t, line) for t, line in loop.trace] == [
        (60, ("condition", "n1", "Ready", "Unknown", "NodeStatusUnknown")),
        (60, ("condition", "n1", "MemoryPressure", "Unknown", "NodeStatusUnknown")),
        (60, ("condition", "n1", "DiskPressure", "Unknown", "NodeStatusUnknown")),
        (60, ("condition", "n1", "PIDPressure", "Unknown", "NodeStatusUnknown")),
        (60, ("taint+", "n1", UNREACHABLE, "NoExecute")),
        (60, ("event", "NodeNotReady", "Node n1 status is now: NodeNotReady", "Normal", "Node")),
        (60, ("taint+", "n1", UNREACHABLE, "NoSchedule")),  # Taint Nodes by Condition, on the next event
    ]
    n1 = loop.node("n1")
    assert [(t["key"], t["effect"], t.get("timeAdded")) for t in n1["spec"]["taints"]] == [
        (UNREACHABLE, "NoExecute", rfc3339(60)),
        (UNREACHABLE, "NoSchedule", None),
    ]
    ready = next(c for c in n1["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["lastHeartbeatTime"], ready["lastTransitionTime"]) == (rfc3339(0), rfc3339(60))
    assert all(err is None for _, err in loop.results)
    # The partition heals: the kubelet renews and posts its own status; both taints go.
    for t in (60, 70, 80):
        loop.renew(["n2"], t)
        loop.at(t)
    loop.trace.clear()
    loop.renew(["n1", "n2"], 90)
    loop.post_ready("n1", 90)
    loop.at(90)
    assert [line for _, line in loop.trace] == [
        ("taint-", "n1", UNREACHABLE, "NoExecute"),
        ("taint-", "n1", UNREACHABLE, "NoSchedule"),
    ]
    assert loop.node("n1")["spec"]["taints"] == []
    assert loop.manager.next_wakeup() == 130  # healthy again, with a fresh grace


def test_a_restarted_controller_gives_every_node_a_fresh_grace():
    loop = _kubelet_dies_at_20()
    loop.restart_controllers()  # at 50, before the old controller's deadline of 60
    for t in (50, 60, 70, 80, 89.9, 90):
        loop.renew(["n2"], t)
        loop.at(t)
        if t < 90:
            assert not [line for _, line in loop.trace if line[0] == "condition"]
    assert [line[1:3] for _, line in loop.trace if line[0] == "condition"] == [
        ("n1", "Ready"),
        ("n1", "MemoryPressure"),
        ("n1", "DiskPressure"),
        ("n1", "PIDPressure"),
    ]
    announced = [(t, line[2]) for t, line in loop.trace if line[:2] == ("event", "RegisteredNode")]
    # Each incarnation announces the nodes it finds (upstream's knownNodeSet starts empty).
    assert announced == [(t, registered(n)[2]) for t in (0, 50) for n in ("n1", "n2")]
    assert {t for t, line in loop.trace if line[:2] != ("event", "RegisteredNode")} == {90}


def test_a_status_posted_while_the_controller_decides_wins():
    """The controller decided on a stale heartbeat; the kubelet posted in between: Conflict."""
    loop = _kubelet_dies_at_20()
    c = loop.manager.controllers[0]
    writes = c.sync(60)
    first = requests(writes)[0]
    assert isinstance(first, Patch) and isinstance(first.patch, NodeConditions) and first.name == "n1"
    loop.post_ready("n1", 59)
    (err,) = loop.api.write(requests(writes)[:1], 60)
    assert isinstance(err, Conflict) and err.code == 409
    ready = next(c for c in loop.node("n1")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"


# ---- the apiserver's NodeConditions patch ------------------------------------------------------


def _api_with_node():
    api = APIServer()
    n = node()
    for key in ("resourceVersion", "uid", "creationTimestamp"):
        del n["metadata"][key]
    api.create(n, 0)
    return api


def _patch(name, conditions):
    return Patch("Node", "", name, "", NodeConditions(tuple(conditions)))


def test_patch_node_conditions_sets_only_the_given_conditions():
    api = _api_with_node()
    api.update_status("Node", "", "n1", "", {**node()["status"], "capacity": {"cpu": "4"}})
    unknown = cond("Ready", "Unknown", 0, 45, reason="NodeStatusUnknown")
    assert api.write([_patch("n1", [unknown])], 45) == [None]
    got = api.get("Node", "", "n1")
    assert got["status"]["capacity"] == {"cpu": "4"}
    assert [c["status"] for c in got["status"]["conditions"]] == ["False", "False", "False", "Unknown"]
    rv = got["metadata"]["resourceVersion"]
    assert api.write([_patch("n1", [unknown])], 46) == [None]  # no change, no write
    assert api.get("Node", "", "n1")["metadata"]["resourceVersion"] == rv
    added = cond("NetworkUnavailable", "False", 0)
    assert api.write([_patch("n1", [added])], 47) == [None]
    assert [c["type"] for c in api.get("Node", "", "n1")["status"]["conditions"]][-1] == "NetworkUnavailable"


BAD_PATCHES = [
    ("no name", ("", [cond("Ready", "Unknown")]), NotFound('nodes "" not found')),
    ("condition not a dict", ("n1", ["Ready"]), Invalid("status.conditions[0]: 'Ready' is not a condition")),
    ("no type", ("n1", [{"status": "True"}]), Invalid("status.conditions[0].type: None is not a condition type")),
    (
        "bad status",
        ("n1", [{"type": "Ready", "status": "Yes"}]),
        Invalid("status.conditions[0].status: 'Yes' is not one of True, False, Unknown"),
    ),
    (
        "twice",
        ("n1", [cond("Ready", "Unknown"), cond("Ready", "True")]),
        Invalid("status.conditions[1].type: 'Ready' is given twice"),
    ),
    ("unknown node", ("ghost", [cond("Ready", "Unknown")]), NotFound('nodes "ghost" not found')),
]


@pytest.mark.parametrize("case,item,expected", BAD_PATCHES, ids=[c[0] for c in BAD_PATCHES])
def test_patch_node_conditions_rejects_bad_items_alone(case, item, expected):
    api = _api_with_node()
    good = _patch("n1", [cond("Ready", "Unknown", 0, 45)])
    rv = api.store.rv
    assert api.write([_patch(*item), good], 45) == [expected, None]
    assert api.store.rv == rv + 1  # only the good item wrote


def test_patch_node_conditions_conflicts_on_a_newer_heartbeat_and_writes_nothing_of_the_item():
    api = _api_with_node()
    api.update_status("Node", "", "n1", "", node(heartbeat=30)["status"])
    rv = api.store.rv
    stale = [cond("MemoryPressure", "Unknown", 30, 45), cond("Ready", "Unknown", 0, 45)]
    (err,) = api.write([_patch("n1", stale)], 45)
    assert isinstance(err, Conflict) and (err.code, err.reason) == (409, "Conflict")
    assert "condition Ready has a newer heartbeat" in err.message
    assert api.store.rv == rv


def test_a_whole_node_gives_the_same_pass_and_only_what_it_reads_is_kept():
    whole = node()
    whole["metadata"].update(labels={"kubernetes.io/hostname": "n1"}, annotations={"a": "b"})
    whole["status"].update(
        capacity={"cpu": "4"},
        allocatable={"cpu": "4"},
        addresses=[{"type": "Hostname", "address": "n1"}],
        nodeInfo={"kubeletVersion": "v1.31.0"},
        images=[{"names": ["pause"], "sizeBytes": 1}],
    )
    c = node_lifecycle_step()
    _feed(c, [(0, "Node", "ADDED", whole)])
    assert summary(c.sync(40)) == [*GONE_QUIET[:5], REGISTERED, GONE_QUIET[5]]
    kept = c.reconciler._health["n1"].node
    assert kept == {
        "kind": "Node",
        "metadata": {k: whole["metadata"][k] for k in ("name", "uid", "resourceVersion", "creationTimestamp")},
        "spec": {"taints": whole["spec"]["taints"]},
        "status": {"conditions": whole["status"]["conditions"]},
    }


# ---- what is kept per node -----------------------------------------------------------------


def test_equal_conditions_and_taints_are_kept_once_for_all_nodes():
    shared = Shared()
    a = health_view(node("a", heartbeat=5, taints=[taint(UNREACHABLE, added=1)]), shared)
    b = health_view(node("b", heartbeat=5, taints=[taint(UNREACHABLE, added=1)]), shared)
    c = health_view(node("c", heartbeat=6, taints=[taint(UNREACHABLE, added=2)]), shared)
    conds = [x["status"]["conditions"] for x in (a, b, c)]
    assert all(x is y for x, y in zip(conds[0], conds[1]))  # the same dicts
    assert not any(x is y for x, y in zip(conds[0], conds[2]))  # another heartbeat: own dicts
    assert conds[0] == conds[1] and conds[0] != conds[2]
    assert a["spec"]["taints"] is b["spec"]["taints"] and a["spec"]["taints"] is not c["spec"]["taints"]
    assert health_view(node("a", heartbeat=5), None) == health_view(node("a", heartbeat=5), Shared())


def test_shared_keeps_what_it_cannot_hash_and_starts_again_past_its_limit():
    shared = Shared(limit=2)
    odd = {"type": "Ready", "status": "True", "extra": {"nested": 1}}  # a dict value: unhashable
    assert shared.conditions([odd])[0] is odd
    assert shared.taints([{"key": "k", "values": ["x"]}])[0] == {"key": "k", "values": ["x"]}
    assert shared.conditions(None) is None and shared.taints([]) == []
    first = [cond(t, "False") for t in ("A", "B")]
    kept = shared.conditions(first)
    assert shared.conditions([dict(c) for c in first])[1] is kept[1]
    shared.conditions([cond("C", "False")])  # a third entry: the table starts again
    assert shared.conditions([dict(first[0])])[0] is not kept[0]


def test_shared_conditions_leave_the_controller_s_writes_unchanged():
    # Two nodes with equal conditions go quiet together: each gets its own Unknown writes,
    # and the dicts they share are not changed by the first node's.
    c = node_lifecycle_step()
    _feed(c, [(0, "Node", "ADDED", node("a")), (0, "Node", "ADDED", node("b"))])
    before = [dict(x) for x in c.cache.projected("Node", "", "a").view["status"]["conditions"]]
    lines = _conditions_at(c, 40.0)
    assert sorted(lines) == sorted(
        ("condition", n, t, "Unknown", "NodeStatusUnknown")
        for n in ("a", "b")
        for t in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
    )
    assert c.cache.projected("Node", "", "a").view["status"]["conditions"] == before
    assert (
        c.cache.projected("Node", "", "a").view["status"]["conditions"][0]
        is c.cache.projected("Node", "", "b").view["status"]["conditions"][0]
    )
