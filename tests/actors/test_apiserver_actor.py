"""The apiserver actor over Ray: batched writes, long-poll watches, Expired."""

import asyncio
import time

import pytest

from actors.apiserver import APIServerActor
from actors.informer import Informer
from cluster.api import codec
from cluster.api.errors import Expired
from cluster.api.requests import Create, Watch

pytestmark = pytest.mark.ray


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [{"name": "c"}]}}


async def test_watch_returns_as_soon_as_something_is_written(ray_local):
    api = APIServerActor.remote(window=4)
    informer = Informer(api, ["Pod"])
    assert await informer.poll(0) == []  # the initial list: empty
    waiting = asyncio.ensure_future(informer.poll(10.0))
    await asyncio.sleep(0.2)
    t = time.monotonic()
    assert await api.write.remote([Create(pod("a")), Create(pod("b"))]) == [None, None]
    events = await waiting
    assert time.monotonic() - t < 2.0
    assert [(k, t_, o["metadata"]["name"]) for k, t_, o in events] == [("Pod", "ADDED", "a"), ("Pod", "ADDED", "b")]
    ray_local.kill(api)


async def test_a_watcher_behind_the_window_relists(ray_local):
    api = APIServerActor.remote(window=2)
    informer = Informer(api, ["Pod"])
    await informer.poll(0)
    await api.write.remote([Create(pod(f"p{i}")) for i in range(8)])
    assert await informer.poll(0) == []  # Expired: nothing delivered, relist next
    relisted = await informer.poll(0)
    assert sorted(o["metadata"]["name"] for _, _, o in relisted) == [f"p{i}" for i in range(8)]
    assert informer.reflector.relists == 1
    ray_local.kill(api)


def bound(name, node):
    p = pod(name)
    p["spec"]["nodeName"] = node
    return p


async def test_a_node_set_is_registered_once_and_watched_by_id(ray_local):
    api = APIServerActor.remote()
    mine = frozenset({"n1", "n2"})
    sel = await api.register_selector.remote(mine)
    assert await api.register_selector.remote(frozenset({"n2", "n1"})) == sel  # the same set, the same id
    assert await api.register_selector.remote(frozenset({"n3"})) != sel
    rv = await api.resource_version.remote()
    await api.write.remote([Create(bound("a", "n1")), Create(bound("b", "n3")), Create(bound("c", "n2"))])
    chunk = (await api.watch.remote({"Pod": rv}, sel, 1.0))["Pod"]
    assert sorted(codec.decode(d)["metadata"]["name"] for _, d in chunk.events) == ["a", "c"]
    unknown = await api.watch.remote({"Pod": rv, "Node": rv}, 999, 1.0)
    assert set(unknown) == {"Pod", "Node"} and all(isinstance(v, Expired) for v in unknown.values())
    ray_local.kill(api)


async def test_an_informer_for_some_nodes_registers_its_set_and_again_after_a_relist(ray_local):
    api = APIServerActor.remote()
    informer = Informer(api, [Watch("Pod", frozenset({"n1"}))])
    await informer.poll(0)  # the list: no registration needed
    await api.write.remote([Create(bound("a", "n1")), Create(bound("b", "n2"))])
    events = await informer.poll(1.0)
    assert [o["metadata"]["name"] for _, _, o in events] == ["a"]
    first = informer._selector
    assert first is not None
    informer.reflector.relist_all()
    await informer.poll(0)  # relisted: the id is dropped
    assert informer._selector is None
    await informer.poll(0)
    assert informer._selector == first  # the apiserver gives the same set the same id
    ray_local.kill(api)
