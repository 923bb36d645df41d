"""List and watch semantics: resume points, selectors, Expired and relist."""

import pytest
from store_builders import make_pod

from cluster.api.codec import decode
from cluster.api.errors import Expired
from cluster.api.requests import Bind
from cluster.runtime.reflector import Reflector
from cluster.store.apiserver import APIServer


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
    api = APIServer(window=3)
    for i in range(10):
        api.create(make_pod(f"p{i}"), 0)
    with pytest.raises(Expired) as err:
        api.store.events_since("Pod", 1)
    assert err.value.code == 410 and err.value.reason == "Expired"
    assert err.value.message.startswith("too old resource version: 1 (")


def test_relist_then_watch_sees_every_later_event_exactly_once():
    api = APIServer(window=3)
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
    api = APIServer(window=2)
    _, resume = api.store.events_since("Pod", api.store.rv, {"n1"})
    for i in range(6):  # a watcher that keeps polling never expires, though it gets nothing
        api.create(make_pod(f"p{i}", node="n2"), 0)
        events, resume = api.store.events_since("Pod", resume, {"n1"})
        assert events == [] and resume == api.store.rv
