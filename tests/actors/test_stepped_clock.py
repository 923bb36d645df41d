"""The actors' side of stepped time (``cluster/runtime/stepper.py``): a held clock moves
only when told, ``step`` runs what is due at the instant and answers once the component is
done with it, a write moves the apiserver's held clock to its writer's instant (never
back), a watch reply tells the instant its events were written at (one instant a reply), and a restarted apiserver stamps writes at the
instant it was held at."""

import asyncio
import uuid

import pytest
import ray

from actors.apiserver import APIServerActor
from actors.component import ComponentActor
from actors.packing import pack, unpack_reply
from actors.restart import _pid
from cluster.api.requests import Create, Watch
from cluster.clock import ClockSpec, from_rfc3339
from cluster.runtime.component import Component, ComponentSpec, Result

pytestmark = pytest.mark.ray


def config_map(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def ticker() -> ComponentSpec:
    """A component that writes the ConfigMap ``tick-<now>`` at 10 s and 20 s and keeps
    (now, events, boot) of every batch it is given. Made here, so Ray's workers get the
    class by value (they cannot import a test module)."""

    class Ticker(Component):
        def __init__(self):
            self.due = [10.0, 20.0]
            self.batches = []

        def watches(self):
            return (Watch("ConfigMap"),)

        def reconcile(self, batch):
            self.batches.append((batch.now, len(batch.events), batch.boot))
            writes = []
            while self.due and self.due[0] <= batch.now:
                meta = {"name": f"tick-{self.due.pop(0):g}", "namespace": "default"}
                writes.append(Create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}))
            wake = self.due[0] if self.due else None
            return Result(writes=writes, wake_at=wake, next_change=wake)

        def inspect(self, now):
            return {"batches": self.batches}

    return ComponentSpec("ticker", Ticker)


def held(at: float) -> ClockSpec:
    return ClockSpec(1.0, None, at)


async def created_at(api, name: str) -> float:
    obj = await api.get.remote("ConfigMap", "default", name)
    return from_rfc3339(obj["metadata"]["creationTimestamp"])


async def test_a_held_component_runs_due_work_only_when_stepped_to_its_instant(ray_local):
    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    actor = ComponentActor.remote(name, ticker())
    await api.set_clock.remote(held(0.0))
    await actor.set_clock.remote(held(0.0))
    first = await actor.step.remote(0.0, 0)
    assert first.idle and first.running and first.wake_at == 10.0 and first.next_change == 10.0
    await asyncio.sleep(0.6)  # a held clock: nothing happens by itself, however long
    assert (await actor.inspect.remote())["batches"] == [(0.0, 0, "start")]
    answer = await actor.step.remote(10.0, 0)  # the instant comes: the tick runs, its write is answered
    assert answer.idle and answer.wake_at == 20.0 and answer.writes == 1
    assert await created_at(api, "tick-10") == 10.0  # the write moved the apiserver's clock on
    batches = (await actor.inspect.remote())["batches"]
    assert batches[1] == (10.0, 0, "")
    # Its own write comes back as an event, handled at the instant; an empty reply is not a batch.
    await asyncio.sleep(0.6)
    assert [b for b in (await actor.inspect.remote())["batches"] if b[1] == 0 and b[2] == ""] == [batches[1]]
    ray.kill(actor)
    ray.kill(api)


async def test_a_component_learns_a_new_instant_from_the_watch_reply_that_brings_its_events(ray_local):
    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    actor = ComponentActor.remote(name, ticker())
    await api.set_clock.remote(held(0.0))
    await actor.set_clock.remote(held(0.0))
    assert (await actor.step.remote(0.0, 0)).idle
    # Another writer's write at 5 s: the apiserver moves to 5, and so does whoever sees it.
    assert await api.write_clocked.remote(5.0, pack([Create(config_map("other"))])) == [None]
    rv = await api.resource_version.remote()
    answer = await actor.step.remote(None, rv)
    assert answer.idle and answer.seen >= rv
    assert (await actor.inspect.remote())["batches"][-1] == (5.0, 1, "")
    ray.kill(actor)
    ray.kill(api)


async def test_a_write_moves_a_held_apiserver_on_to_its_instant_never_back(ray_local):
    api = APIServerActor.remote(seed=1)
    await api.set_clock.remote(held(30.0))
    assert await api.write_clocked.remote(12.0, pack([Create(config_map("late"))])) == [None]
    assert await api.write_clocked.remote(45.5, pack([Create(config_map("next"))])) == [None]
    assert await created_at(api, "late") == 30.0  # a writer behind writes at the cluster's instant
    assert await created_at(api, "next") == 45.0  # timestamps are whole seconds
    # A watch reply holds the events of one instant and says which (instants.py).
    at, blob = await api.watch_clocked.remote({"ConfigMap": 0}, None, 0.0)
    chunk = unpack_reply(blob)["ConfigMap"]
    assert at == 30.0 and len(chunk.events) == 1
    at, blob = await api.watch_clocked.remote({"ConfigMap": chunk.resume}, None, 0.0)
    assert at == 45.5 and len(unpack_reply(blob)["ConfigMap"].events) == 1
    ray.kill(api)


async def test_a_restarted_apiserver_writes_at_the_instant_it_was_held_at(ray_local, tmp_path):
    api = APIServerActor.remote(seed=1, data_dir=str(tmp_path))
    await api.set_clock.remote(held(0.0))
    assert await api.write_clocked.remote(250.0, pack([Create(config_map("before"))])) == [None]
    old = await api.__ray_call__.remote(_pid)
    ray.kill(api, no_restart=False)
    while await api.__ray_call__.remote(_pid) == old:
        await asyncio.sleep(0.05)
    assert await api.clock_started.remote()  # held, from the directory, before anyone says so
    assert await api.write.remote([Create(config_map("after"))]) == [None]
    assert await created_at(api, "after") == 250.0
    ray.kill(api)
