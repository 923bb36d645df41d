"""Pod events judged by their head leave the scheduler as the decoded objects would.

Every scheduler test drives ``on_pod`` through ``on_pod_event`` (see the conftest), which
settles most events of placed pods from the head. These tests run one lifecycle twice,
once through the head and once through the decoded object (``Scheduler._on_pod``), and
compare what the cache, the spread index and the queue hold after each step.
"""

from __future__ import annotations

import copy

from sched_builders import make_node, make_pod, make_scheduler

from cluster.api.codec import encode
from cluster.api.requests import Bind, Create, Update
from cluster.api.selectors import LabelSelector
from cluster.apiserver.apiserver import APIServer
from cluster.runtime.component import WatchEvent
from cluster.scheduler import Scheduler, intake

APP = LabelSelector.from_dict({"matchLabels": {"app": "web"}})


def by_head(s: Scheduler, etype: str, pod: dict) -> None:
    s.on_pod_event(WatchEvent("Pod", etype, raw=encode(pod)), 0.0)


def by_object(s: Scheduler, etype: str, pod: dict) -> None:
    s._on_pod(etype, copy.deepcopy(pod), 0.0, encode(pod))


def state(s: Scheduler) -> dict:
    c = s.cache
    pinfo = c.pod_info("uid-default-a")
    snap = c.snapshot()
    return {
        "placed": None if pinfo is None else (pinfo.deleting, pinfo.start_time, pinfo.labels, pinfo.requests),
        "object": None if pinfo is None else kept(pinfo),
        "spread rows": c.pods.rows("default", APP).tolist(),
        "requested": snap.requested.tolist(),
        "pending": s.pending_count(),
    }


def kept(pinfo) -> dict | None:
    """The object the scheduler still holds of a placed pod (only while it is deleted)."""
    try:
        return pinfo.pod
    except LookupError:
        return None


def lifecycle() -> list[tuple[str, dict]]:
    base = make_pod("a").req(cpu="1").label("app", "web").node("n1")
    running = copy.deepcopy(base).phase("Running")
    running["status"]["startTime"] = "2026-01-01T00:00:07Z"
    relabelled = copy.deepcopy(running).label("app", "db")
    back = copy.deepcopy(running)
    deleting = copy.deepcopy(running).terminating()
    return [
        ("ADDED", base),
        ("MODIFIED", running),  # the kubelet's status write: the head settles it
        ("MODIFIED", relabelled),  # a new spec key: decoded
        ("MODIFIED", back),
        ("MODIFIED", deleting),  # starts terminating: the head settles it
        ("MODIFIED", copy.deepcopy(deleting).phase("Succeeded")),  # terminal: gone
        ("DELETED", deleting),
    ]


def test_each_step_of_a_placed_pods_life_leaves_the_same_state():
    heads, objects = (make_scheduler(nodes=[make_node("n1"), make_node("n2")]) for _ in range(2))
    for step, (etype, pod) in enumerate(lifecycle()):
        by_head(heads, etype, pod)
        by_object(objects, etype, pod)
        # Read after every step: an index the head path forgot to touch shows up stale.
        assert state(heads) == state(objects), f"step {step}: {etype}"


def test_the_head_path_follows_status_and_deletion_and_keeps_bytes_only_while_deleting():
    s = make_scheduler(nodes=[make_node("n1")])
    steps = lifecycle()
    for etype, pod in steps[:2]:
        by_head(s, etype, pod)
    pinfo = s.cache.pod_info("uid-default-a")
    assert pinfo.compacted and pinfo.start_time == "2026-01-01T00:00:07Z"
    assert kept(pinfo) is None
    assert s.cache.pods.rows("default", APP).tolist() == [0]
    by_head(s, *steps[4])
    assert pinfo.deleting and s.cache.pods.rows("default", APP).tolist() == []
    assert kept(pinfo) == steps[4][1]
    by_head(s, *steps[6])
    assert s.cache.pod_info("uid-default-a") is None


def test_a_resize_seen_by_head_is_decoded_and_moves_the_node_totals():
    s = make_scheduler(nodes=[make_node("n1")])
    by_head(s, "ADDED", make_pod("a").req(cpu="1").node("n1"))
    by_head(s, "MODIFIED", make_pod("a").req(cpu="3").node("n1").phase("Running"))
    snap = s.cache.snapshot()
    assert snap.requested[snap.index_of("n1")].tolist()[0] == 3000


def _bound_through_the_apiserver(relabel: bool = False):
    """A pod created in an in-process apiserver, scheduled, its bind applied there; returns
    the scheduler and the bind's watch event (``relabel``: labels changed meanwhile)."""
    api = APIServer()
    s = make_scheduler(nodes=[make_node("n1"), make_node("n2")])
    api.write([Create(make_pod("a").req(cpu="1").label("app", "web"))], 1.0)
    created = api.watch({"Pod": 0})["Pod"]
    rv = created.resume
    for etype, raw in created.events:
        s.on_pod_event(WatchEvent("Pod", etype, raw=raw), 1.0)
    out = s.schedule(1.0)
    ns, name, uid, node = out.binds[0]
    if relabel:
        pod = api.get("Pod", ns, name)
        pod["metadata"]["labels"] = {"app": "db"}
        api.write([Update(pod)], 1.0)
    api.write([Bind(ns, name, uid, node)], 1.0)
    events = [WatchEvent("Pod", etype, raw=raw) for etype, raw in api.watch({"Pod": rv})["Pod"].events]
    return s, events, uid


def test_the_scheduler_confirms_its_own_bind_by_the_head_without_decoding_it():
    s, events, uid = _bound_through_the_apiserver()
    (bind,) = events
    s.on_pod_event(bind, 1.0)
    assert bind._obj is None  # the head alone settled it
    assert not s.cache.is_assumed(uid)
    pinfo = s.cache.pod_info(uid)
    assert pinfo.compacted and kept(pinfo) is None and pinfo.labels == {"app": "web"}
    # A later status write of the same pod is also judged by its head.
    assert pinfo.same_head(bind.head)


def test_a_bind_of_a_pod_relabelled_meanwhile_is_decoded_and_the_labels_follow():
    s, events, uid = _bound_through_the_apiserver(relabel=True)
    for ev in events:
        s.on_pod_event(ev, 1.0)
    assert events[-1]._obj is not None  # not the version the bind was expected to make
    assert not s.cache.is_assumed(uid)
    assert s.cache.pod_info(uid).labels == {"app": "db"}
    assert s.cache.pods.rows("default", APP).tolist() == []


def test_a_pending_pod_kept_as_bytes_knows_its_spec_from_the_head(monkeypatch):
    monkeypatch.setattr(intake, "DECODED_BACKLOG", 0)  # behind a backlog: kept as its bytes
    s = make_scheduler(nodes=[])
    pod = make_pod("a").req(cpu="1").label("app", "web")
    by_head(s, "ADDED", pod)
    pinfo = s.queue.get("uid-default-a").pinfo
    assert pinfo.compacted
    assert pinfo.same_spec(copy.deepcopy(pod).phase("Pending"))  # a status write: same spec
    assert not pinfo.same_spec(copy.deepcopy(pod).label("app", "db"))
