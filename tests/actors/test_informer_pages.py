"""The informer relists in pages (no Ray: a fake actor around a real APIServer): the pages
add up to one consistent list, and a list the apiserver let go midway starts again."""

import asyncio

from actors import informer as informer_mod
from actors.informer import Informer
from cluster.api.errors import StatusError
from cluster.store.apiserver import APIServer


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
