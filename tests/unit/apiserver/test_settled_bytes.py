"""Settled objects' bytes kept compressed (cluster/api/settledbytes.py) by the store once the
watch window lets their latest event go (cluster/apiserver/store.py, window.py): every read
answers exactly as from plain bytes, and what is still in the window stays shared."""

import pytest

from cluster.api import codec
from cluster.api.settledbytes import PACKED, Packer, is_packed, unpack
from cluster.apiserver.store import Store
from cluster.apiserver.window import Event, KindLog, Window

# Keeps one event: every second append trims the rest (fresh 0 s: nothing is young).
TINY = Window(min_events=1, fresh=0.0, max_bytes=1 << 20)


def pod(name: str, ns: str = "default", node: str = "", **labels: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": {"app": "web", **labels}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]},
        "status": {"phase": "Running" if node else "Pending"},
    }


def packed(store: Store, kind: str) -> set[tuple[str, str]]:
    return {key for key, entry in store._objects.get(kind, {}).items() if entry[2] is not None}


def filled(window: Window = TINY) -> Store:
    store = Store(window=window)
    for i in range(5):
        store.put("Pod", pod(f"p{i}", node="n1"), "ADDED")
    store.put("Pod", pod("q", ns="other", node="n2"), "ADDED")
    store.put("Namespace", {"kind": "Namespace", "metadata": {"name": "other"}}, "ADDED")
    store.put("Namespace", {"kind": "Namespace", "metadata": {"name": "more"}}, "ADDED")
    return store


# -- the scheme --------------------------------------------------------------------------


def test_packed_bytes_read_back_exactly_and_start_with_the_marker():
    packer = Packer()
    raws = [codec.encode(pod(f"p{i}", node="n1")) for i in range(3)]
    out = [packer.pack(r) for r in raws]
    assert all(o is not None and o[0][0] == PACKED and len(o[0]) < len(r) for o, r in zip(out, raws))
    assert [unpack(o[0], o[1]) for o in out if o] == raws
    assert packer.packed == 3 and all(is_packed(o[0]) for o in out if o)


@pytest.mark.parametrize(
    "raw",
    [
        b"",  # nothing to pack
        bytes((PACKED,)) + b"abc",  # packed already
        codec.encode({"a": 1}),  # too small to get smaller
    ],
)
def test_what_would_not_get_smaller_is_left_alone(raw):
    packer = Packer()
    assert packer.pack(raw) is None and packer.packed == 0


def test_a_new_dictionary_every_refresh_compressions():
    packer = Packer(refresh=2)
    got = [packer.pack(codec.encode(pod(f"p{i}"))) for i in range(5)]
    zdicts = [g[1] for g in got if g]
    assert zdicts[0] is zdicts[1] and zdicts[2] is not zdicts[0] and zdicts[2] is zdicts[3]
    assert zdicts[4] is not zdicts[2]


def test_refresh_must_be_positive():
    with pytest.raises(ValueError, match="refresh: 0 must be at least 1"):
        Packer(refresh=0)


def test_an_object_never_encodes_to_the_marker():
    assert all(codec.encode(o)[0] != PACKED for o in [{}, {"a": 1}, pod("x"), {str(i): i for i in range(40)}])


# -- the window tells the store what it lets go ------------------------------------------


def test_a_trim_hands_over_the_events_it_lets_go_before_they_go():
    seen = []
    log = KindLog(TINY, dropped=lambda evs: seen.append([e.rv for e in evs]))
    for rv in range(1, 6):
        log.append(Event(rv, "ADDED", f"o{rv}", "", "", b"x" * 10), ("", f"o{rv}"), 0.0)
    assert seen == [[1], [2], [3], [4]] and log.rvs == [5]


def test_a_log_without_a_listener_trims_the_same():
    log = KindLog(TINY)
    for rv in range(1, 6):
        log.append(Event(rv, "ADDED", f"o{rv}", "", "", b"x" * 10), ("", f"o{rv}"), 0.0)
    assert log.rvs == [5] and log.evicted_upto == 4


# -- the store -----------------------------------------------------------------------------


def test_objects_out_of_the_window_are_packed_those_in_it_share_their_bytes():
    store = filled()
    assert packed(store, "Pod") == {("default", f"p{i}") for i in range(5)}  # q: its event is the window's
    assert packed(store, "Namespace") == {("", "other")}
    log = store._logs["Pod"]
    (last,) = [e for e in log.events]
    assert store._objects["Pod"][("other", "q")][0] is last.data


def test_every_read_of_a_packed_store_answers_as_a_plain_one():
    plain, tight = filled(Window()), filled()
    assert packed(plain, "Pod") == set() and len(packed(tight, "Pod")) == 5
    for ns, name in plain.keys("Pod"):
        assert tight.get("Pod", ns, name) == plain.get("Pod", ns, name)
        assert tight.raw("Pod", ns, name) == plain.raw("Pod", ns, name)
        assert tight.peek("Pod", ns, name) == plain.peek("Pod", ns, name)
    assert tight.list("Pod") == plain.list("Pod")
    assert tight.list("Pod", {"n2"}) == plain.list("Pod", {"n2"})
    assert list(tight.objects("Pod")) == list(plain.objects("Pod"))
    assert tight.peek_all("Namespace") == plain.peek_all("Namespace")
    assert tight.snapshot_state() == plain.snapshot_state()


def test_a_packed_object_removed_sends_its_last_version():
    store = filled()

    def last_event() -> tuple[str, str, str, str]:
        ((etype, data),), _ = store.events_since("Pod", store.rv - 1)
        m = codec.decode(data)
        return etype, m["metadata"]["name"], m["metadata"]["resourceVersion"], m["spec"]["nodeName"]

    store.remove("Pod", "default", "p0")
    assert last_event() == ("DELETED", "p0", str(store.rv), "n1")
    stored_rv = store.get("Pod", "default", "p1")["metadata"]["resourceVersion"]
    assert store.remove_as_stored("Pod", "default", "p1", stored_rv)
    assert last_event() == ("DELETED", "p1", str(store.rv), "n1")
    assert not store.has("Pod", "default", "p0") and not store.has("Pod", "default", "p1")


def test_a_write_to_a_packed_object_stores_plain_bytes_shared_with_its_event():
    store = filled()
    obj = store.get("Pod", "default", "p2")
    obj["metadata"]["labels"]["v"] = "2"
    store.put("Pod", obj, "MODIFIED")
    entry = store._objects["Pod"][("default", "p2")]
    assert entry[2] is None and entry[0] is store._logs["Pod"].events[-1].data
    assert store.get("Pod", "default", "p2")["metadata"]["labels"] == {"app": "web", "v": "2"}


def test_a_replaced_object_is_not_packed_from_its_old_event():
    store = Store(window=Window(min_events=2, fresh=0.0, max_bytes=1 << 20))
    store.put("Pod", pod("a"), "ADDED")
    store.put("Pod", pod("a", node="n1"), "MODIFIED")
    store.put("Pod", pod("b"), "ADDED")
    store.put("Pod", pod("c"), "ADDED")  # trims a's two events: only the second is a's bytes
    assert packed(store, "Pod") == {("default", "a")}
    assert store.get("Pod", "default", "a")["spec"]["nodeName"] == "n1"


def test_deleted_objects_and_leases_are_never_packed():
    store = Store(window=TINY)
    lease = {
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "n1"},
    }
    for i in range(4):
        store.put("Lease", dict(lease, metadata={"name": f"n{i}", "namespace": "kube-node-lease"}), "ADDED")
    store.put("Pod", pod("gone"), "ADDED")
    store.remove("Pod", "default", "gone")
    store.put("Pod", pod("x"), "ADDED")
    store.put("Pod", pod("y"), "ADDED")
    assert packed(store, "Lease") == set() and "Lease" not in store._packers
    assert packed(store, "Pod") == {("default", "x")}


def test_objects_in_many_namespaces_are_each_found_and_packed():
    store = Store(window=TINY)
    names = [(ns, f"p{i}") for i in range(3) for ns in ("a", "b", "c")]
    for ns, name in names:
        store.put("Pod", pod(name, ns=ns), "ADDED")
    store.put("Pod", pod("last", ns="z"), "ADDED")
    assert packed(store, "Pod") == set(names)
    assert [store.get("Pod", ns, name)["metadata"]["uid"] for ns, name in names] == [f"uid-{ns}-{n}" for ns, n in names]


def test_a_watcher_behind_the_window_relists_the_packed_objects_plain():
    store = filled()
    rv, items = store.list("Pod")
    assert rv == store.rv and all(not is_packed(b) for b in items)
    assert sorted(codec.decode(b)["metadata"]["name"] for b in items) == ["p0", "p1", "p2", "p3", "p4", "q"]
