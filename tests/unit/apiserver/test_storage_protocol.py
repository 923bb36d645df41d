"""The storage interface: ``Store`` keeps the ``Storage`` protocol, a second implementation
(a plain dict-backed one, below) can back an ``APIServer`` for create/get/list/watch/delete,
and the apiserver's small public methods that replace reaching into its store."""

import inspect

import pytest
from store_builders import make_pod

from cluster.api import codec
from cluster.api.errors import Expired, NotFound
from cluster.api.requests import Create, Delete, WatchChunk
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.storage import Storage
from cluster.apiserver.store import Store


class DictStorage:
    """The simplest ``Storage``: every object and every event kept decoded-then-encoded in
    dicts and lists, no window (nothing expires but a resourceVersion ahead of it), no fast
    paths (``renew``/``remove_as_stored`` send the apiserver the general way)."""

    def __init__(self):
        self.journal = None
        self.rv = 0
        self.objects_: dict[str, dict[tuple[str, str], bytes]] = {}
        self.events: dict[str, list[tuple[int, str, bytes, str]]] = {}

    def get(self, kind, ns, name):
        data = self.raw(kind, ns, name)
        return codec.decode(data) if data else None

    peek = get

    def peek_all(self, kind):
        return list(self.objects(kind))

    def raw(self, kind, ns, name):
        return self.objects_.get(kind, {}).get((ns, name))

    def has(self, kind, ns, name):
        return self.raw(kind, ns, name) is not None

    def keys(self, kind):
        return list(self.objects_.get(kind, {}))

    def objects(self, kind):
        return [codec.decode(d) for d in self.objects_.get(kind, {}).values()]

    def count(self, kind):
        return len(self.objects_.get(kind, {}))

    def kind_revision(self, kind):
        return max((e[0] for e in self.events.get(kind, [])), default=0)

    def list(self, kind, node_names=None):
        items = self.objects_.get(kind, {}).values()
        return self.rv, [d for d in items if node_names is None or _node(d) in node_names]

    def events_since(self, kind, since_rv, node_names=None, limit=10_000):
        if since_rv > self.rv:
            raise Expired(f"too large resource version: {since_rv} (current {self.rv})")
        after = [e for e in self.events.get(kind, []) if e[0] > since_rv][:limit]
        resume = after[-1][0] if len(after) == limit else self.rv
        return [(t, d) for _, t, d, node in after if node_names is None or node in node_names], resume

    def at(self, now):
        pass

    def put(self, kind, obj, event_type):
        self.rv += 1
        m = obj["metadata"]
        m["resourceVersion"] = str(self.rv)
        data = codec.encode(obj)
        self.objects_.setdefault(kind, {})[(m.get("namespace", ""), m["name"])] = data
        self.events.setdefault(kind, []).append((self.rv, event_type, data, _node(data)))
        if self.journal is not None:
            self.journal.record_put(kind, self.rv, event_type, m.get("namespace", ""), m["name"], data)
        return self.rv

    def remove(self, kind, ns, name, last=None):
        self.rv += 1
        obj = last if last is not None else codec.decode(self.objects_[kind].pop((ns, name)))
        self.objects_[kind].pop((ns, name), None)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        data = codec.encode(obj)
        self.events.setdefault(kind, []).append((self.rv, "DELETED", data, _node(data)))
        if self.journal is not None:
            self.journal.record_remove(kind, self.rv, ns, name)
        return self.rv

    def remove_as_stored(self, kind, ns, name, stored_rv):
        return False

    def renew(self, ns, name, applied):
        return False

    def snapshot_state(self):
        return self.rv, {kind: dict(bucket) for kind, bucket in self.objects_.items()}


def _node(data: bytes) -> str:
    return (codec.decode(data).get("spec") or {}).get("nodeName") or ""


class Journal:
    def __init__(self):
        self.records = []

    def record_put(self, kind, rv, event_type, ns, name, data):
        self.records.append((rv, event_type, kind, ns, name))

    def record_remove(self, kind, rv, ns, name):
        self.records.append((rv, "DELETED", kind, ns, name))


def _protocol_members() -> list[str]:
    return sorted(
        name for name in {*vars(Storage), *Storage.__annotations__} if not name.startswith("_") and name not in ("mro",)
    )


def test_the_protocol_names_what_the_apiserver_calls():
    assert _protocol_members() == [
        "at", "count", "events_since", "get", "has", "journal", "keys", "kind_revision", "list",
        "objects", "peek", "peek_all", "put", "raw", "remove", "remove_as_stored", "renew", "rv",
        "snapshot_state",
    ]  # fmt: skip


@pytest.mark.parametrize("impl", [Store(), DictStorage()], ids=["Store", "DictStorage"])
def test_each_implementation_has_every_member_with_the_protocols_parameters(impl):
    for name in _protocol_members():
        assert hasattr(impl, name), name
        wanted = getattr(Storage, name, None)
        if callable(wanted):
            got = inspect.signature(getattr(impl, name)).parameters
            assert list(got) == list(inspect.signature(wanted).parameters)[1:], name


def pod_names(api: APIServer) -> list[str]:
    return sorted(codec.decode(d)["metadata"]["name"] for d in api.list("Pod").items)


def test_a_second_storage_backs_an_apiserver_for_create_list_watch_and_delete():
    storage = DictStorage()
    api = APIServer(seed=3, store=storage)
    assert api.resource_version() == 0  # a given storage is not bootstrapped
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}, 1.0)
    api.write([], 1.0)  # the `kubernetes` Service and its endpoints, written with every batch's first
    rv0 = api.resource_version()
    assert api.write([Create(make_pod("a")), Create(make_pod("b", node="n1"))], 2.0) == [None, None]
    assert pod_names(api) == ["a", "b"] and api.list("Pod").resource_version == rv0 + 2
    assert api.get("Pod", "default", "a")["metadata"]["uid"]  # admission ran against it
    assert [codec.decode(d)["metadata"]["name"] for d in api.list("Pod", frozenset({"n1"})).items] == ["b"]

    uid = api.get("Pod", "default", "b")["metadata"]["uid"]
    [outcome] = api.write([Delete("Pod", "default", "b", uid, grace=0)], 3.0)
    assert outcome is None and pod_names(api) == ["a"]
    chunk = api.watch({"Pod": rv0})["Pod"]
    assert isinstance(chunk, WatchChunk)
    seen = [(t, codec.decode(d)["metadata"]["name"]) for t, d in chunk.events]
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "b")] and chunk.resume == api.resource_version()
    assert isinstance(api.watch({"Pod": api.resource_version() + 1})["Pod"], Expired)
    with pytest.raises(NotFound):
        api.get("Pod", "default", "b")


def test_the_public_reads_and_the_journal_go_to_whichever_storage_backs_it():
    for api in (APIServer(seed=1), APIServer(seed=1, store=DictStorage())):
        if not api.exists("Namespace", "", "default"):
            api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}, 0.0)
        journal, before = Journal(), api.resource_version()
        api.set_journal(journal)
        api.create(make_pod("a"), 1.0)
        assert api.resource_version() == before + 1 and api.count("Pod") == 1
        assert api.exists("Pod", "default", "a") and not api.exists("Pod", "default", "zz")
        assert journal.records == [(before + 1, "ADDED", "Pod", "default", "a")]
        api.set_journal(None)
        api.create(make_pod("b"), 1.0)
        assert len(journal.records) == 1 and api.count("Pod") == 2


def test_count_and_exists_of_a_kind_never_stored_are_zero_and_false():
    api = APIServer(seed=1)
    assert api.count("CronJob") == 0 and not api.exists("CronJob", "default", "x")
