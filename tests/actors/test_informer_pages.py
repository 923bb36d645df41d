"""The informer relists in pages (no Ray: a fake actor around a real APIServer): the pages
add up to one consistent list, and a list the apiserver let go midway starts again."""

import asyncio

from actors import informer as informer_mod
from actors.informer import Informer
from cluster.api.errors import StatusError
from cluster.apiserver.apiserver import APIServer


def _pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


class _Method:
    def __init__(self, fn):
        self.fn = fn

    def remote(self, *args):
        async def call():
            try:
                return self.fn(*args)
            except StatusError as e:
                return e

        return call()


class _Actor:
    """The apiserver actor's list_page, with a hook run before each page."""

    def __init__(self, api, before_page=None):
        self.api, self.calls = api, []

        def page(kind, names, limit, token=""):
            self.calls.append(token)
            if before_page is not None:
                before_page(len(self.calls))
            return api.list_page(kind, names, limit, token)

        self.list_page = _Method(page)


def test_a_relist_comes_in_pages_and_adds_up(monkeypatch):
    monkeypatch.setattr(informer_mod, "LIST_PAGE", 3)
    api = APIServer()
    for i in range(10):
        api.create(_pod(f"p{i}"), 0.0)
    actor = _Actor(api, before_page=lambda n: api.create(_pod(f"late{n}"), 1.0) if n == 2 else None)
    inf = Informer(actor, ["Pod"])
    events = asyncio.run(inf.poll(0.1))
    assert sorted(e.obj["metadata"]["name"] for e in events) == sorted(f"p{i}" for i in range(10))
    assert len(actor.calls) == 4 and actor.calls[0] == ""  # 3 + 3 + 3 + 1


def test_a_list_let_go_midway_starts_again(monkeypatch):
    monkeypatch.setattr(informer_mod, "LIST_PAGE", 2)
    api = APIServer()
    for i in range(5):
        api.create(_pod(f"p{i}"), 0.0)
    actor = _Actor(api, before_page=lambda n: api.pages._open.clear() if n == 2 else None)
    inf = Informer(actor, ["Pod"])
    events = asyncio.run(inf.poll(0.1))
    assert sorted(e.obj["metadata"]["name"] for e in events) == [f"p{i}" for i in range(5)]
    assert inf.restarted_lists == 1 and actor.calls[2] == ""  # the third call starts afresh


def _lease(renew):
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "n1", "renewTime": f"2026-01-01T00:00:{renew:02d}.000000Z"},
    }


def test_a_relist_of_one_kind_lets_the_other_kinds_watch_meanwhile(monkeypatch):
    """Pods relisted after their watch expired come a page a poll and then a chunk a poll,
    while each poll carries the Lease renewals made since; the pods' own watch resumes only
    once the relist's events are all handed over, and nothing is lost or said twice."""
    monkeypatch.setattr(informer_mod, "LIST_PAGE", 3)
    monkeypatch.setattr(informer_mod, "RELIST_CHUNK", 4)
    from actors.packing import pack_reply

    api = APIServer()
    for i in range(10):
        api.create(_pod(f"p{i}"), 0.0)
    api.create(_lease(0), 0.0)
    actor = _Actor(api)
    actor.watch_packed = _Method(lambda since, names, timeout: pack_reply(api.watch(since, names)))
    inf = Informer(actor, ["Lease", "Pod"])
    first = asyncio.run(inf.poll(0.1))
    assert sorted((e.kind, e.type) for e in first) == [("Lease", "ADDED")] + [("Pod", "ADDED")] * 10
    inf.reflector.rv["Pod"] = None  # as an Expired pod watch leaves it
    polls = []
    for n in range(1, 12):
        lease = api.get("Lease", "kube-node-lease", "n1")
        api.update({**lease, "spec": {**lease["spec"], "renewTime": f"2026-01-01T00:00:{n:02d}.000000Z"}}, float(n))
        if n in (2, 5):
            api.create(_pod(f"new{n}"), float(n))  # during the pages, then during the chunks
        polls.append([(e.kind, e.type, e.obj["metadata"]["name"]) for e in asyncio.run(inf.poll(0.1))])
    assert all(("Lease", "MODIFIED", "n1") in got for got in polls)  # every poll: the renewal
    pods = [[p for p in got if p[0] == "Pod"] for got in polls]
    # Pages 3+3+3+2 (new2 is in the list), no pod events meanwhile; then 11 events in chunks of 4.
    assert [len(p) for p in pods[:4]] == [0, 0, 0, 4]
    assert [len(p) for p in pods[4:6]] == [4, 4]
    # The last chunk, then in the same poll the pods' watch from the list's version: new5.
    assert pods[5][-1] == ("Pod", "ADDED", "new5")
    listed = sorted(name for got in pods[:6] for _, _, name in got[:11])
    assert listed == sorted([f"p{i}" for i in range(10)] + ["new2", "new5"])
    assert pods[6:] == [[]] * 5
    assert inf.reflector.relists == 1
