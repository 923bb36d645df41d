"""Placed pods keep no object: what the scheduler reads of them after the dict is gone.

The cache keeps what it parsed of a placed pod and lets its object go (``PodInfo.compact``
with ``placed``), keeping the bytes the watch delivered only while the pod is being
deleted. These tests follow one placed pod through the updates a kubelet and the
apiserver make and check that every parsed fact and index follows, without the object.
"""

from __future__ import annotations

import copy

import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.api import codec
from cluster.api.codec import encode
from cluster.api.selectors import LabelSelector
from cluster.scheduler import intake, podinfo
from cluster.scheduler.cache import Cache
from cluster.scheduler.preemption import terminating_by_preemption


def placed(c: Cache, pod: dict):
    return c.add_pod(pod, encode(pod))


def requested(c: Cache, node: str) -> dict:
    snap = c.snapshot()
    i = snap.index_of(node)
    return {col: int(snap.requested[i, j]) for j, col in enumerate(snap.column_names) if snap.requested[i, j]}


def test_a_placed_pod_keeps_what_the_scheduler_reads_and_no_object():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("a").req(cpu="1").label("app", "x").node("n1")
    pinfo = placed(c, pod)
    assert (pinfo.requests, pinfo.labels, pinfo.deleting) == ({"cpu": 1000}, {"app": "x"}, False)
    with pytest.raises(LookupError, match="placed pod default/a keeps only what the scheduler reads"):
        pinfo.pod  # noqa: B018 (the read is the test)
    assert pinfo.ref() == {"kind": "Pod", "metadata": {"namespace": "default", "name": "a", "uid": "uid-default-a"}}


def test_a_placed_pod_being_deleted_keeps_its_bytes_for_preemptions_read():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("a").req(cpu="1").node("n1")
    pinfo = placed(c, pod)
    going = copy.deepcopy(pod).terminating()
    going["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    assert placed(c, going) is pinfo
    assert pinfo.deleting and pinfo.pod == going and pinfo.pod is not going
    assert terminating_by_preemption(pinfo.pod)


def test_status_updates_of_a_placed_pod_keep_its_requests_and_move_its_start_time():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("a").req(cpu="1").node("n1")
    pinfo = placed(c, pod)
    running = copy.deepcopy(pod).phase("Running")
    running["status"]["startTime"] = "2026-01-01T00:01:00Z"
    assert placed(c, running) is pinfo
    assert pinfo.start_time == "2026-01-01T00:01:00Z"
    assert requested(c, "n1") == {"cpu": 1000}
    slot = c.table.slot_of(pinfo.uid)
    assert c.table.start[slot] == 60.0  # emulated seconds since 2026-01-01T00:00:00Z


def test_a_resized_placed_pod_moves_the_node_totals():
    c = Cache()
    c.add_node(make_node("n1"))
    placed(c, make_pod("a").req(cpu="1").node("n1"))
    placed(c, make_pod("a").req(cpu="3").node("n1"))
    assert requested(c, "n1") == {"cpu": 3000}


def test_a_placed_pod_that_starts_terminating_leaves_the_spread_counts():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("a").label("app", "x").node("n1")
    pinfo = placed(c, pod)
    app_x = LabelSelector.from_dict({"matchLabels": {"app": "x"}})
    assert not pinfo.deleting and c.pods.rows("default", app_x).tolist() == [0]
    placed(c, copy.deepcopy(pod).terminating())
    assert pinfo.deleting and c.pods.rows("default", app_x).tolist() == []


def test_pods_of_one_template_share_one_parse():
    c = Cache()
    c.add_node(make_node("n1"))
    a = placed(c, make_pod("a").req(cpu="1", memory="1Gi").node("n1"))
    b = placed(c, make_pod("b").req(cpu="1", memory="1Gi").node("n1"))
    other = placed(c, make_pod("c").req(cpu="2").node("n1"))
    assert a.requests is b.requests
    assert other.requests is not a.requests and other.requests["cpu"] == 2000


def test_an_assumed_pod_keeps_its_dict_until_the_watch_confirms_it():
    c = Cache()
    c.add_node(make_node("n1"))
    pod = make_pod("a").req(cpu="1")
    pinfo = c.new_pod_info(pod)
    c.assume_pod(pinfo, "n1", now=0)
    assert pinfo.pod is pod
    c.add_pod(copy.deepcopy(pod).node("n1"), encode(copy.deepcopy(pod).node("n1")))
    assert pinfo.compacted and pinfo.requests == {"cpu": 1000}
    with pytest.raises(LookupError):
        pinfo.pod  # noqa: B018


@pytest.fixture
def long_backlog(monkeypatch):
    """Every new pending pod is behind a backlog long enough to be held as bytes."""
    monkeypatch.setattr(intake, "DECODED_BACKLOG", 0)


def test_a_pending_pod_is_bytes_until_a_cycle_tries_it_and_keeps_its_dict_after_a_failure(long_backlog):
    s = make_scheduler([make_node("n1", cpu="1")])
    pod = make_pod("big").req(cpu="2")
    s.on_pod("ADDED", pod, 0, encode(pod))
    pinfo = s.queue.get(pod["metadata"]["uid"]).pinfo
    assert pinfo.pod == pod and pinfo.pod is not pinfo.pod  # held as bytes: a fresh decode per read
    out = s.schedule(0)
    assert not out.binds and [e["reason"] for e in out.events] == ["FailedScheduling"]
    assert pinfo.pod is pinfo.pod  # tried and failed: the queueing hints read its dict
    relabelled = copy.deepcopy(pod).label("app", "x")
    s.on_pod("MODIFIED", relabelled, 1, encode(relabelled))
    assert pinfo.pod is pinfo.pod and pinfo.labels == {"app": "x"}


def test_an_untried_pending_pod_takes_updates_as_bytes_and_schedules(long_backlog):
    s = make_scheduler([make_node("n1")])
    pod = make_pod("a").req(cpu="1")
    s.on_pod("ADDED", pod, 0, encode(pod))
    relabelled = copy.deepcopy(pod).label("app", "x")
    s.on_pod("MODIFIED", relabelled, 0, encode(relabelled))
    pinfo = s.queue.get(pod["metadata"]["uid"]).pinfo
    assert pinfo.pod is not pinfo.pod and pinfo.labels == {"app": "x"}
    out = s.schedule(0)
    assert [(name, node) for _, name, _, node in out.binds] == [("a", "n1")]


def test_behind_a_short_backlog_a_pending_pod_keeps_its_dict_and_is_decoded_once(monkeypatch):
    monkeypatch.setattr(intake, "DECODED_BACKLOG", 2)
    s = make_scheduler([make_node("n1")])
    pods = [make_pod(f"p{i}").req(cpu="100m") for i in range(3)]
    for p in pods:
        s.on_pod("ADDED", p, 0, encode(p))
    held = [s.queue.get(p["metadata"]["uid"]).pinfo for p in pods]
    # The first two leave at most two pods in the active queue; the third makes it three.
    assert [pinfo.pod is pinfo.pod for pinfo in held] == [True, True, False]
    decoded = []
    monkeypatch.setattr(podinfo, "decode", lambda raw: decoded.append(raw) or codec.decode(raw))
    out = s.schedule(0)
    assert sorted(name for _, name, _, _ in out.binds) == ["p0", "p1", "p2"]
    assert len(decoded) == 1  # only the pod held as bytes was decoded for its cycle


def test_a_node_is_kept_as_bytes_with_what_filters_read_parsed():
    c = Cache()
    node = make_node("n1").label("zone", "a").taint("dedicated")
    assert c.add_node(node, encode(node)) == {"added"}
    ni = c.node_info("n1")
    assert ni.node == node and ni.node is not node
    assert (ni.labels["zone"], [t["key"] for t in ni.taints], ni.unschedulable) == ("a", ["dedicated"], False)
    cordoned = copy.deepcopy(node).unschedulable()
    assert c.update_node(cordoned, encode(cordoned)) == {"unschedulable"}
    assert ni.unschedulable and ni.node["spec"]["unschedulable"] is True


def test_pods_of_one_template_share_labels_and_start_times():
    c = Cache()
    c.add_node(make_node("n1"))
    pods = [make_pod(name).label("app", "x").node("n1") for name in ("a", "b")]
    for p in pods:
        p["status"]["startTime"] = "".join(["2026-01-01T00:00:0", "5Z"])  # a fresh string each
    a, b = (placed(c, p) for p in pods)
    assert a.labels is b.labels and a.labels == {"app": "x"}
    assert a.start_time is b.start_time
    other = placed(c, make_pod("c").label("app", "y").node("n1"))
    assert other.labels == {"app": "y"}
    relabelled = placed(c, copy.deepcopy(pods[1]).label("app", "y"))
    assert relabelled is b and b.labels is other.labels and a.labels == {"app": "x"}
