"""The apiserver actor over Ray: batched writes, long-poll watches, Expired."""

import asyncio
import time

import pytest

from actors.apiserver import APIServerActor
from actors.informer import Informer
from cluster.api.requests import Create
from cluster.apiserver.window import Window

pytestmark = pytest.mark.ray


def pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


async def test_watch_returns_as_soon_as_something_is_written(ray_local):
    api = APIServerActor.remote(window=Window(min_events=4, fresh=0))
    informer = Informer(api, ["Pod"])
    assert await informer.poll(0) == []  # the initial list: empty
    waiting = asyncio.ensure_future(informer.poll(10.0))
    await asyncio.sleep(0.2)
    t = time.monotonic()
    assert await api.write.remote([Create(pod("a")), Create(pod("b"))]) == [None, None]
    events = await waiting
    assert time.monotonic() - t < 2.0
    assert [(k, t_, o["metadata"]["name"]) for k, t_, o, _ in events] == [("Pod", "ADDED", "a"), ("Pod", "ADDED", "b")]
    ray_local.kill(api)


async def test_a_watcher_behind_the_window_relists(ray_local):
    api = APIServerActor.remote(window=Window(min_events=2, fresh=0))
    informer = Informer(api, ["Pod"])
    await informer.poll(0)
    await api.write.remote([Create(pod(f"p{i}")) for i in range(8)])
    assert await informer.poll(0) == []  # Expired: nothing delivered, relist next
    relisted = await informer.poll(0)
    assert sorted(o["metadata"]["name"] for _, _, o, _ in relisted) == [f"p{i}" for i in range(8)]
    assert informer.reflector.relists == 1
    ray_local.kill(api)
