"""Pod events keyed by their head: the reflector's bookkeeping is the same, and the object
is decoded only when a client reads it."""

from __future__ import annotations

import pytest

from cluster.api.codec import decode, encode
from cluster.api.podhead import read_head
from cluster.api.requests import Bind, Watch
from cluster.apiserver.apiserver import APIServer
from cluster.runtime.component import WatchEvent
from cluster.runtime.reflector import Reflector


def pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


def test_an_event_from_bytes_decodes_on_first_read_and_keeps_the_dict():
    data = encode(pod("a"))
    ev = WatchEvent("Pod", "ADDED", raw=data)
    assert ev.head.name == "a" and ev.head.node_name == ""
    first = ev.obj
    assert first == decode(data) and ev.obj is first
    assert tuple(ev) == ("Pod", "ADDED", first, data)
    assert ev == WatchEvent("Pod", "ADDED", decode(data), data)


def test_an_event_needs_the_object_or_its_bytes():
    with pytest.raises(ValueError, match="needs the object or its bytes"):
        WatchEvent("Pod", "DELETED")


def test_bytes_without_a_pod_head_still_give_a_head_from_the_whole_object():
    odd = {"kind": "Pod", "metadata": {"name": "x", "namespace": "default"}, "spec": None}
    assert WatchEvent("Pod", "ADDED", raw=encode(odd)).head.name == "x"


@pytest.mark.parametrize("heads", [False, True], ids=["decoded", "by head"])
def test_list_watch_and_relist_report_the_same_events_either_way(heads):
    api = APIServer()
    r = Reflector([Watch("Pod", heads=heads)])
    api.create(pod("a"), 0)
    api.create(pod("b"), 0)
    listed = r.on_list("Pod", api.list("Pod"))
    uid_b = api.get("Pod", "default", "b")["metadata"]["uid"]
    api.write([Bind("default", "b", uid_b, "n1")], 0)
    api.delete("Pod", "default", "a", None, 0, 0)
    watched = r.on_watch("Pod", api.watch({"Pod": r.rv["Pod"]})["Pod"])
    api.create(pod("c"), 0)
    r.relist_all()
    relisted = r.on_list("Pod", api.list("Pod"))

    def seen(events):
        return [(e.type, e.obj["metadata"]["name"], e.head.node_name) for e in events]

    assert seen(listed) == [("ADDED", "a", ""), ("ADDED", "b", "")]
    assert seen(watched) == [("MODIFIED", "b", "n1"), ("DELETED", "a", "")]
    assert seen(relisted) == [("MODIFIED", "b", "n1"), ("ADDED", "c", "")]
    assert all(e.raw is not None for e in listed + watched + relisted)


@pytest.mark.parametrize("heads", [True, False])
def test_a_relist_names_the_pods_it_drops_to_a_client_that_keeps_them_by_uid(heads):
    """Watched by head, a relist's DELETED of a pod gone meanwhile carries the uid and node
    last seen, and a pod deleted and created again under its name comes as the DELETED of
    the old uid, then the ADDED of the new; otherwise the key is all a DELETED says."""
    api = APIServer()
    r = Reflector([Watch("Pod", heads=heads)])
    for name in ("a", "b"):
        api.create(pod(name), 0)
    uid = {n: api.get("Pod", "default", n)["metadata"]["uid"] for n in ("a", "b")}
    api.write([Bind("default", "a", uid["a"], "n1")], 0)
    r.on_list("Pod", api.list("Pod"))
    api.delete("Pod", "default", "a", None, 0, 0)
    api.delete("Pod", "default", "b", None, 0, 0)
    api.create(pod("b"), 0)  # the same name, a new uid
    r.relist_all()
    relisted = r.on_list("Pod", api.list("Pod"))
    new_b = api.get("Pod", "default", "b")["metadata"]["uid"]

    def seen(events):
        return [(e.type, e.obj["metadata"]["name"], e.head.uid, e.head.node_name) for e in events]

    if heads:
        assert seen(relisted) == [
            ("DELETED", "b", uid["b"], ""),
            ("ADDED", "b", new_b, ""),
            ("DELETED", "a", uid["a"], "n1"),
        ]
    else:
        assert seen(relisted) == [("MODIFIED", "b", new_b, ""), ("DELETED", "a", "", "")]


def node(name: str, ready: str = "True") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }


@pytest.mark.parametrize("lazy", [False, True], ids=["decoded", "lazy"])
def test_a_lazy_kind_is_read_only_as_far_as_its_key_and_reports_the_same_events(lazy):
    api = APIServer()
    r = Reflector([Watch("Node", lazy=lazy)])
    api.create(node("a"), 0)
    api.create(node("b"), 0)
    listed = r.on_list("Node", api.list("Node"))
    api.delete("Node", "", "a", None, 0, 0)
    api.create(node("c", "False"), 0)
    watched = r.on_watch("Node", api.watch({"Node": r.rv["Node"]})["Node"])
    api.delete("Node", "", "b", None, 0, 0)
    r.relist_all()
    relisted = r.on_list("Node", api.list("Node"))
    undecoded = [e._obj is None for e in listed + watched + relisted]
    assert undecoded == ([True] * 5 + [False] if lazy else [False] * 6)  # a relist's DELETED is built

    def seen(events):
        return [(e.type, e.obj["metadata"]["name"]) for e in events]

    assert seen(listed) == [("ADDED", "a"), ("ADDED", "b")]
    assert seen(watched) == [("DELETED", "a"), ("ADDED", "c")]
    assert seen(relisted) == [("MODIFIED", "c"), ("DELETED", "b")]
    assert watched[1].obj == api.get("Node", "", "c")  # decoded whole once read


@pytest.mark.parametrize(
    "odd",
    [{"kind": "Node", "metadata": {"namespace": "x"}}, {"kind": "Node", "metadata": {"name": 7}}],
    ids=["no name", "a name that is no string"],
)
def test_a_lazy_kind_whose_key_cannot_be_read_is_decoded_whole(odd):
    from cluster.runtime.reflector import _read

    key, obj, head = _read(encode(odd), False, True)
    assert obj == odd and head is None


def test_every_watched_pod_event_is_read_by_its_head_and_decoded_only_when_read():
    # A new pending pod too: a scheduler behind a backlog keeps it as its bytes.
    api = APIServer()
    r = Reflector([Watch("Pod", heads=True)])
    r.on_list("Pod", api.list("Pod"))
    api.create(pod("a"), 0)
    uid = api.get("Pod", "default", "a")["metadata"]["uid"]
    api.write([Bind("default", "a", uid, "n1")], 0)
    added, bound = r.on_watch("Pod", api.watch({"Pod": r.rv["Pod"]})["Pod"])
    assert added._obj is None and bound._obj is None
    for ev in (added, bound):
        from_bytes = read_head(ev.raw)
        assert ev.head == from_bytes and ev.head.spec_key == from_bytes.spec_key
    assert added.obj["metadata"]["uid"] == uid and added.head.nominated == ""
