"""List and watch semantics: resume points, selectors, Expired and relist."""

import sys

import pytest
from store_builders import make_pod

from cluster.api.codec import decode
from cluster.api.errors import Expired
from cluster.api.requests import Bind
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.window import Window
from cluster.kubelet.component import lease
from cluster.runtime.reflector import Reflector


def _events(n):
    """A window of ``n`` events by count alone (no age kept): these tests write at one instant."""
    return Window(min_events=n, fresh=0)


def names(events):
    return [(t, decode(b)["metadata"]["name"]) for t, b in events]


def test_watch_from_a_list_sees_only_later_events():
    api = APIServer()
    api.create(make_pod("a"), 0)
    rv, items = api.store.list("Pod")
    api.create(make_pod("b"), 0)
    events, resume = api.store.events_since("Pod", rv)
    assert names(events) == [("ADDED", "b")]
    assert resume == api.store.rv


def test_too_old_resource_version_is_expired():
    api = APIServer(window=_events(3))
    for i in range(10):
        api.create(make_pod(f"p{i}"), 0)
    with pytest.raises(Expired) as err:
        api.store.events_since("Pod", 1)
    assert err.value.code == 410 and err.value.reason == "Expired"
    assert err.value.message.startswith("too old resource version: 1 (")


def test_relist_then_watch_sees_every_later_event_exactly_once():
    api = APIServer(window=_events(3))
    r = Reflector(["Pod"])
    seen = []

    def poll():
        for kind in r.kinds_to_list():
            seen.extend((t, o["metadata"]["name"]) for _, t, o, _ in r.on_list(kind, api.list(kind)))
            return
        reply = api.watch({"Pod": r.rv["Pod"]})["Pod"]
        seen.extend((t, o["metadata"]["name"]) for _, t, o, _ in r.on_watch("Pod", reply))

    api.create(make_pod("old"), 0)
    poll()  # initial list
    for i in range(10):  # more than the window holds while the client is away
        api.create(make_pod(f"p{i}"), 0)
    api.delete("Pod", "default", "old", None, 0, 0)
    poll()  # Expired
    assert r.rv["Pod"] is None
    seen.clear()
    poll()  # relist: current state, and the deletion it missed
    assert sorted(seen) == sorted([("ADDED", f"p{i}") for i in range(10)] + [("DELETED", "old")])
    seen.clear()
    api.create(make_pod("new"), 0)
    api.delete("Pod", "default", "p3", None, 0, 0)
    poll()
    poll()  # nothing new: nothing repeated
    assert seen == [("ADDED", "new"), ("DELETED", "p3")]
    assert r.relists == 1


def test_node_selector_watch_turns_a_bind_into_added():
    api = APIServer()
    pod = api.create(make_pod("a"), 0)
    rv = api.store.rv
    api.write([Bind("default", "a", pod["metadata"]["uid"], "n1")], 1)
    api.create(make_pod("b", node="n2"), 1)
    mine, _ = api.store.events_since("Pod", rv, {"n1"})
    assert names(mine) == [("ADDED", "a")]
    api.delete("Pod", "default", "a", None, 0, 2)
    mine, _ = api.store.events_since("Pod", rv, {"n1"})
    assert names(mine) == [("ADDED", "a"), ("DELETED", "a")]


def test_quiet_selective_watcher_still_advances():
    api = APIServer(window=_events(2))
    _, resume = api.store.events_since("Pod", api.store.rv, {"n1"})
    for i in range(6):  # a watcher that keeps polling never expires, though it gets nothing
        api.create(make_pod(f"p{i}", node="n2"), 0)
        events, resume = api.store.events_since("Pod", resume, {"n1"})
        assert events == [] and resume == api.store.rv


# ---- Lease renewals coalesce -----------------------------------------------------------


def _renew(api, node, t):
    api.update(lease(node, t), t)


def _leases(events):
    return [(t, decode(b)["metadata"]["name"], decode(b)["spec"]["renewTime"][17:19]) for t, b in events]


def test_a_watcher_catching_up_gets_each_leases_latest_renewal_only():
    api = APIServer()
    start = api.store.rv
    api.create(lease("n1", 0), 0)
    api.create(lease("n2", 0), 0)
    after_create = api.store.rv
    for t in (10, 20, 30):
        _renew(api, "n1", t)
        _renew(api, "n2", t)
    mid = api.store.rv - 1  # a watcher that saw n1's renewal at 30 but not n2's
    _renew(api, "n1", 40)
    assert _leases(api.store.events_since("Lease", start)[0]) == [
        ("ADDED", "n1", "00"),
        ("ADDED", "n2", "00"),
        ("MODIFIED", "n2", "30"),
        ("MODIFIED", "n1", "40"),
    ]
    assert _leases(api.store.events_since("Lease", after_create)[0]) == [
        ("MODIFIED", "n2", "30"),
        ("MODIFIED", "n1", "40"),
    ]
    assert _leases(api.store.events_since("Lease", mid)[0]) == [("MODIFIED", "n2", "30"), ("MODIFIED", "n1", "40")]


def test_a_deleted_lease_keeps_its_creation_and_deletion_and_pods_never_coalesce():
    api = APIServer()
    start = api.store.rv
    api.create(lease("n1", 0), 0)
    _renew(api, "n1", 10)
    _renew(api, "n1", 20)
    api.delete("Lease", "kube-node-lease", "n1", "", None, 20)
    api.create(lease("n1", 30), 30)
    _renew(api, "n1", 40)
    got = [(t, s) for t, _, s in _leases(api.store.events_since("Lease", start)[0])]
    assert got == [("ADDED", "00"), ("MODIFIED", "20"), ("DELETED", "20"), ("ADDED", "30"), ("MODIFIED", "40")]
    api.create(make_pod("p"), 0)
    pod_rv = api.store.rv
    api.update_status("Pod", "default", "p", "", {"phase": "Running"})
    api.update_status("Pod", "default", "p", "", {"phase": "Running", "podIP": "10.0.0.1"})
    assert [t for t, _ in api.store.events_since("Pod", pod_rv)[0]] == ["MODIFIED", "MODIFIED"]


def test_paging_through_superseded_slots_resumes_where_it_stopped():
    api = APIServer(window=_events(1000))
    start = api.store.rv
    for i in range(5):
        api.create(lease(f"n{i}", 0), 0)
    for t in range(1, 6):
        for i in range(5):
            _renew(api, f"n{i}", 10 * t)
    whole, _ = api.store.events_since("Lease", start)
    paged, rv = [], start
    while rv < api.store.rv:
        chunk, rv = api.store.events_since("Lease", rv, limit=3)
        paged += chunk
    assert paged == whole and len(whole) == 10  # five creations, five latest renewals


def test_a_window_trimmed_past_a_leases_last_renewal_still_coalesces_the_next():
    api = APIServer(window=_events(4))
    api.create(lease("n1", 0), 0)
    for i in range(12):
        api.create(lease(f"m{i}", 0), 0)  # push n1's events out of the window
    _renew(api, "n1", 10)
    rv = api.store.rv
    _renew(api, "n1", 20)
    assert _leases(api.store.events_since("Lease", rv - 1)[0]) == [("MODIFIED", "n1", "20")]


def test_a_pods_key_and_its_events_in_the_window_hold_one_copy_of_its_names():
    api = APIServer()
    pod = api.create(make_pod("a"), 0)
    api.write([Bind("default", "a", pod["metadata"]["uid"], "".join(["n", "1"]))], 1)  # decoded afresh
    ((ns, name),) = api.store.keys("Pod")
    log = api.store._logs["Pod"]
    assert [ev.type for ev in log.events] == ["ADDED", "MODIFIED"]
    assert all(ev.name is name for ev in log.events)
    assert ns is sys.intern("".join(["def", "ault"]))
    assert log.events[1].node is sys.intern("".join(["n", "1"]))
