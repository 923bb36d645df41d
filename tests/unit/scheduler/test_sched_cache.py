"""Scheduler cache: node arrays, swap-remove, ghosts, assume/confirm/forget/expiry, releases."""

from __future__ import annotations

import pytest
from sched_builders import make_node, make_pod

from cluster.scheduler.cache import Cache

GI = 1024**3


def row(c: Cache, name: str) -> dict:
    """A node's numbers as the snapshot arrays hold them."""
    snap = c.snapshot()
    i = snap.index_of(name)
    return {
        "requested": {
            col: int(snap.requested[i, j]) for j, col in enumerate(snap.column_names) if snap.requested[i, j]
        },
        "nonzero": tuple(int(x) for x in snap.nonzero_requested[i]),
        "pods": int(snap.pod_count[i]),
        "allowed": int(snap.allowed_pods[i]),
    }


def test_node_arrays_and_growth():
    c = Cache()
    for i in range(200):  # more than the initial row capacity
        c.add_node(make_node(f"n{i}", cpu="2", memory="4Gi", pods="10"))
    snap = c.snapshot()
    assert snap.num_nodes == 200
    assert snap.allocatable[:, 0].tolist() == [2000] * 200
    assert snap.allocatable[:, 1].tolist() == [4 * GI] * 200
    assert snap.allowed_pods.tolist() == [10] * 200
    assert [snap.node_name(i) for i in (0, 199)] == ["n0", "n199"]


def test_node_without_pods_allocatable_admits_none():
    c = Cache()
    n = make_node("n1")
    del n["status"]["allocatable"]["pods"]
    c.add_node(n)
    assert row(c, "n1")["allowed"] == 0


@pytest.mark.parametrize(
    "change,expected",
    [
        (lambda n: n.heartbeat("2026-01-01T00:00:10Z"), set()),
        (lambda n: n.alloc(cpu="8"), {"allocatable"}),
        (lambda n: n.label("zone", "a"), {"labels"}),
        (lambda n: n.taint("dedicated"), {"taints"}),
        (lambda n: n.unschedulable(), {"unschedulable"}),
        (lambda n: n.alloc(cpu="8").label("zone", "a"), {"allocatable", "labels"}),
    ],
    ids=["heartbeat", "allocatable", "labels", "taints", "unschedulable", "two aspects"],
)
def test_update_node_reports_relevant_changes(change, expected):
    c = Cache()
    node = make_node("n1").heartbeat("2026-01-01T00:00:00Z")
    assert c.add_node(node) == {"added"}
    assert c.update_node(change(node.copy_())) == expected


def test_allocatable_change_rewrites_the_row():
    c = Cache()
    c.add_node(make_node("n1", cpu="4").ext("nvidia.com/gpu", "2"))
    c.update_node(make_node("n1", cpu="8"))  # gpu gone (device plugin left)
    snap = c.snapshot()
    assert int(snap.allocatable[0, 0]) == 8000
    assert int(snap.allocatable[0, snap.column("nvidia.com/gpu")]) == 0


def test_remove_node_swaps_last_into_the_hole():
    c = Cache()
    for name in ("a", "b", "c"):
        c.add_node(make_node(name, cpu={"a": "1", "b": "2", "c": "3"}[name]))
    c.add_pod(make_pod("pc").req(cpu="500m").node("c"))
    assert c.remove_node("a")
    snap = c.snapshot()
    assert snap.num_nodes == 2
    assert [snap.node_name(i) for i in range(2)] == ["c", "b"]
    assert snap.index_of("c") == 0 and snap.index_of("a") is None
    assert snap.allocatable[:, 0].tolist() == [3000, 2000]
    assert row(c, "c")["requested"] == {"cpu": 500}
    assert not c.remove_node("a")


def test_pods_on_unknown_or_removed_nodes_are_ghosts_until_the_node_appears():
    c = Cache()
    c.add_pod(make_pod("early").req(cpu="1").node("n1"))
    c.add_node(make_node("n1"))
    assert row(c, "n1")["requested"] == {"cpu": 1000}
    c.remove_node("n1")
    c.add_node(make_node("n1"))  # the pod is still bound there
    assert row(c, "n1")["requested"] == {"cpu": 1000}
    c.remove_pod("uid-default-early")
    assert row(c, "n1")["requested"] == {}


def test_bound_pod_counts_requests_and_nonzero():
    c = Cache()
    c.add_node(make_node("n1"))
    c.add_pod(make_pod("a").req(cpu="250m", memory="1Gi").node("n1"))
    c.add_pod(make_pod("b").req().node("n1"))  # no requests: 0 requested, 100m/200Mi non-zero
    assert row(c, "n1") == {
        "requested": {"cpu": 250, "memory": GI},
        "nonzero": (350, GI + 200 * 1024 * 1024),
        "pods": 2,
        "allowed": 110,
    }


def test_assume_then_confirm():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("p").req(cpu="1")
    pinfo = c.new_pod_info(pod)
    c.assume_pod(pinfo, "n1", now=0.0)
    assert c.is_assumed(pinfo.uid) and row(c, "n1")["requested"] == {"cpu": 1000}
    with pytest.raises(ValueError):
        c.assume_pod(pinfo, "n1", now=0.0)
    c.add_pod(pod.copy_().node("n1"))
    assert not c.is_assumed(pinfo.uid)
    assert row(c, "n1")["pods"] == 1  # confirmed, not double counted
    assert c.forget_pod(pinfo.uid) is None  # confirmed pods are not forgotten
    assert row(c, "n1")["pods"] == 1


def test_forget_releases():
    c = Cache()
    c.add_node(make_node("n1"))
    pinfo = c.new_pod_info(make_pod("p").req(cpu="1"))
    c.assume_pod(pinfo, "n1", now=0.0)
    assert c.forget_pod(pinfo.uid) is pinfo
    assert row(c, "n1") == {"requested": {}, "nonzero": (0, 0), "pods": 0, "allowed": 110}


def test_confirm_on_another_node_moves_the_pod():
    c = Cache()
    c.add_node(make_node("n1"))
    c.add_node(make_node("n2"))
    pod = make_pod("p").req(cpu="1")
    c.assume_pod(c.new_pod_info(pod), "n1", now=0.0)
    c.add_pod(pod.copy_().node("n2"))
    assert row(c, "n1")["pods"] == 0
    assert row(c, "n2")["requested"] == {"cpu": 1000}
    assert c.pod_node(pod["metadata"]["uid"]) == "n2"


@pytest.mark.parametrize("now,expired", [(29.9, 0), (30.0, 1), (40.0, 2)])
def test_assumptions_expire_after_ttl(now, expired):
    c = Cache(assume_ttl=30.0)
    c.add_node(make_node("n1"))
    a = c.new_pod_info(make_pod("a").req(cpu="1"))
    b = c.new_pod_info(make_pod("b").req(cpu="1"))
    c.assume_pod(a, "n1", now=0.0)
    c.assume_pod(b, "n1", now=5.0)
    out = c.cleanup(now)
    assert [p.name for p in out] == ["a", "b"][:expired]
    assert row(c, "n1")["pods"] == 2 - expired
    assert c.assumed_count() == 2 - expired


def test_confirmed_pods_never_expire():
    c = Cache(assume_ttl=30.0)
    c.add_node(make_node("n1"))
    pod = make_pod("a").req(cpu="1")
    c.assume_pod(c.new_pod_info(pod), "n1", now=0.0)
    c.add_pod(pod.copy_().node("n1"))
    assert c.cleanup(1000.0) == []
    assert row(c, "n1")["pods"] == 1


def test_remove_pod_releases_and_is_idempotent():
    c = Cache()
    c.add_node(make_node("n1"))
    c.add_pod(make_pod("a").req(cpu="1").node("n1"))
    assert c.remove_pod("uid-default-a") is not None
    assert c.remove_pod("uid-default-a") is None
    assert row(c, "n1")["requested"] == {} and row(c, "n1")["pods"] == 0


def test_in_place_resize_reaccounts():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("a").req(cpu="1").node("n1")
    c.add_pod(pod)
    resized = pod.copy_()
    resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    c.add_pod(resized)
    assert row(c, "n1")["requested"] == {"cpu": 2000}
    assert row(c, "n1")["nonzero"][0] == 2000


def test_snapshot_is_reused_until_the_shape_changes():
    c = Cache()
    c.add_node(make_node("n1"))
    s1 = c.snapshot()
    c.add_pod(make_pod("a").req(cpu="1").node("n1"))
    assert c.snapshot() is s1 and int(s1.requested[0, 0]) == 1000  # a view: sees the update
    c.add_node(make_node("n2"))
    assert c.snapshot() is not s1 and c.snapshot().num_nodes == 2
