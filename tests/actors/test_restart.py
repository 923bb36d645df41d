"""Restarting the control plane's actors under Ray: the apiserver recovers every
acknowledged write from its data directory and keeps its timeline, watchers relist, the
scheduler picks up where the old one stopped without binding a pod twice."""

import asyncio
import time
import uuid

import pytest
import ray
from ray.exceptions import RayActorError

from actors.apiserver import APIServerActor
from actors.component import ComponentActor
from actors.informer import Informer
from actors.packing import pack_reply
from actors.restart import RestartError, _pid, restart
from cluster.api.codec import decode
from cluster.api.errors import AlreadyExists
from cluster.api.requests import Create, Delete, ListPage, WatchChunk
from cluster.clock import from_rfc3339
from cluster.kubelet.node import node_object
from cluster.runtime.component import ComponentSpec
from cluster.scenario.layout import expand_pools
from cluster.scenario.schema import NodePool
from cluster.scheduler.component import SchedulerComponent

pytestmark = pytest.mark.ray


def pod(name, cpu=None):
    c = {"name": "c", "image": "pause"}
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [c]}}


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def names(items):
    return {decode(b)["metadata"]["name"] for b in items}


async def crash(handle) -> None:
    """Kill the actor's process and wait for Ray's restart, without starting any clock."""
    old = await handle.__ray_call__.remote(_pid)
    ray.kill(handle, no_restart=False)
    while await handle.__ray_call__.remote(_pid) == old:
        await asyncio.sleep(0.05)


async def test_a_restarted_apiserver_has_every_write_and_continues_the_rv_sequence(ray_local, tmp_path):
    api = APIServerActor.remote(seed=1, data_dir=str(tmp_path))
    start = time.time()
    await api.start_clock.remote(start)
    assert await api.write.remote([Create(pod(f"p{i}")) for i in range(20)]) == [None] * 20
    assert await api.write.remote([Delete("Pod", "default", "p0", "", 0)]) == [None]
    rv, before = await api.list.remote("Pod")
    assert await restart(api, start, timeout=30) > 0
    rv_after, after = await api.list.remote("Pod")
    assert rv_after == rv and sorted(after) == sorted(before)  # byte for byte, resourceVersions too
    assert (await api.durability.remote())["recoveredResourceVersion"] == rv
    assert await api.write.remote([Create(pod("new"))]) == [None]
    created = await api.get.remote("Pod", "default", "new")
    assert int(created["metadata"]["resourceVersion"]) == rv + 1
    old_uids = {decode(b)["metadata"]["uid"] for b in before}
    assert created["metadata"]["uid"] not in old_uids
    ray_local.kill(api)


async def test_every_acknowledged_create_survives_a_restart_under_load(ray_local, tmp_path):
    api = APIServerActor.remote(seed=1, data_dir=str(tmp_path))
    start = time.time()
    await api.start_clock.remote(start)
    acked, conflicts, phases = set(), set(), {"before": 0, "after": 0}
    stop = asyncio.Event()

    async def client():
        i = 0
        while not stop.is_set():
            batch = [pod(f"load-{i + k}") for k in range(50)]
            i += 50
            results = await api.write.remote([Create(p) for p in batch])
            for p, r in zip(batch, results):
                if r is None:
                    acked.add(p["metadata"]["name"])
                    phases["after" if restarted.is_set() else "before"] += 1
                else:
                    assert isinstance(r, AlreadyExists), r  # only a retried create whose first attempt committed
                    conflicts.add(p["metadata"]["name"])

    restarted = asyncio.Event()
    task = asyncio.ensure_future(client())
    await asyncio.sleep(0.5)
    await restart(api, start, timeout=30)
    restarted.set()
    await asyncio.sleep(0.5)
    stop.set()
    await task
    _, items = await api.list.remote("Pod")
    stored = names(items)
    assert acked <= stored and conflicts <= stored
    assert phases["before"] > 0 and phases["after"] > 0
    ray_local.kill(api)


async def test_a_watcher_relists_across_a_restart_and_ends_with_the_stores_objects(ray_local, tmp_path):
    api = APIServerActor.remote(seed=1, data_dir=str(tmp_path))
    start = time.time()
    await api.start_clock.remote(start)
    informer = Informer(api, ["Pod"])
    seen: dict[str, str] = {}

    def apply(events):
        for _, etype, obj, _ in events:
            if etype == "DELETED":
                seen.pop(obj["metadata"]["name"], None)
            else:
                seen[obj["metadata"]["name"]] = obj["metadata"]["resourceVersion"]

    apply(await informer.poll(0))
    await api.write.remote([Create(pod(f"p{i}")) for i in range(10)])
    apply(await informer.poll(0))
    assert len(seen) == 10
    waiting = asyncio.ensure_future(informer.poll(30.0))  # in flight through the restart
    await asyncio.sleep(0.2)
    await api.write.remote([Create(node("n1"))])  # no pod event: the watch waits on, its rv now behind
    await restart(api, start, timeout=30)
    assert await waiting == []  # Ray retried it on the new instance: Expired
    await api.write.remote([Create(pod("after"))])
    await api.write.remote([Delete("Pod", "default", "p0", "", 0)])
    deadline = time.monotonic() + 20
    while True:
        _, items = await api.list.remote("Pod")
        want = {decode(b)["metadata"]["name"]: decode(b)["metadata"]["resourceVersion"] for b in items}
        if seen == want or time.monotonic() > deadline:
            break
        apply(await informer.poll(0.2))
    assert seen == want and "p0" not in seen and "after" in seen
    assert informer.reflector.relists >= 1
    ray_local.kill(api)


def bench_nodes(n):
    pools = [NodePool(namePrefix="node", count=n, capacity={"cpu": "4", "memory": "32Gi", "pods": "110"})]
    return [node_object(cfg, i, 0.0, cfg.allocatable()) for i, cfg in enumerate(expand_pools(pools))]


async def test_a_restarted_scheduler_binds_every_pending_pod_and_none_twice(ray_local):
    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    assert await api.write.remote([Create(n) for n in bench_nodes(10)]) == [None] * 10
    spec = ComponentSpec("scheduler", SchedulerComponent, {"seed": 1})
    sched = ComponentActor.remote(name, spec)  # by name: its arguments stay out of the object store
    start = time.time()
    await asyncio.gather(api.start_clock.remote(start), sched.start_clock.remote(start))
    watcher = Informer(api, ["Pod"])
    bound: dict[str, str] = {}
    moved = []

    async def watch(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for _, _, obj, _ in await watcher.poll(0.1):
                name, where = obj["metadata"]["name"], obj["spec"].get("nodeName")
                if where and bound.setdefault(name, where) != where:
                    moved.append((name, bound[name], where))

    total = 0

    async def create(n):
        nonlocal total
        assert await api.write.remote([Create(pod(f"p{total + k}", "100m")) for k in range(n)]) == [None] * n
        total += n

    for _ in range(3):
        await create(50)
        await watch(0.1)
    deadline = time.monotonic() + 20
    while not bound and time.monotonic() < deadline:
        await watch(0.1)
    bound_before = len(bound)
    await create(50)  # pending, or their binds in flight, while the scheduler restarts
    await restart(sched, start, timeout=30)
    for _ in range(2):
        await create(50)
        await watch(0.1)
    deadline = time.monotonic() + 30
    while len(bound) < total and time.monotonic() < deadline:
        await watch(0.2)
    assert not moved
    assert 0 < bound_before < total and len(bound) == total
    assert await sched.healthy.remote() == []
    assert (await sched.inspect.remote())["pending"] == 0
    ray_local.kill(sched)
    ray_local.kill(api)


async def test_a_restarted_apiserver_stamps_writes_on_the_same_timeline(ray_local, tmp_path):
    api = APIServerActor.remote(seed=1, data_dir=str(tmp_path))
    await api.start_clock.remote(time.time() - 1000.0)  # emulated time is 1000 s in
    await api.write.remote([Create(pod("before"))])
    before = await api.get.remote("Pod", "default", "before")
    await crash(api)  # nobody starts the restarted actor's clock
    await api.write.remote([Create(pod("after"))])
    after = await api.get.remote("Pod", "default", "after")
    t0, t1 = (from_rfc3339(o["metadata"]["creationTimestamp"]) for o in (before, after))
    assert 1000 <= t0 <= t1 < 1100
    ray_local.kill(api)


async def test_restart_reports_an_actor_that_does_not_come_back(ray_local):
    api = APIServerActor.options(max_restarts=0, max_task_retries=0).remote()
    await api.ping.remote()
    with pytest.raises(RestartError, match="the actor did not come back: .*Error"):
        await restart(api, time.time(), timeout=30)


async def test_an_informer_backs_off_and_relists_when_ray_cannot_reach_the_apiserver():
    class Call:
        def __init__(self, fn):
            self.fn = fn

        def remote(self, *args):
            async def reply():
                return self.fn(*args)

            return reply()

    class FlakyAPI:
        def __init__(self):
            self.down = False
            self.list_page = Call(self._list_page)
            self.watch_packed = Call(self._watch)

        def _check(self):
            if self.down:
                raise RayActorError(error_msg="The actor died unexpectedly before finishing this task.")

        def _list_page(self, kind, node_names, limit, token):
            self._check()
            from cluster.api.codec import encode

            return ListPage(5, [encode({"kind": kind, "metadata": {"name": "a", "namespace": "default"}})], "")

        def _watch(self, since, node_names, timeout):
            self._check()
            return pack_reply({k: WatchChunk([], rv) for k, rv in since.items()})

    api = FlakyAPI()
    informer = Informer(api, ["Pod", "Node"])
    assert len(await informer.poll(0)) == 2
    api.down = True
    t = time.monotonic()
    assert await informer.poll(0) == [] and await informer.poll(0) == []
    assert time.monotonic() - t >= 0.05 + 0.1  # a growing pause
    assert informer.failures == 2 and "RayActorError" in informer.last_error
    assert informer.reflector.kinds_to_list() == ["Pod", "Node"]
    api.down = False
    assert [t for _, t, _, _ in await informer.poll(0)] == ["MODIFIED", "MODIFIED"]
    assert informer.reflector.relists == 2


async def test_a_bad_data_dir_kills_the_apiserver_with_the_reason(ray_local, tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    api = APIServerActor.remote(data_dir=str(path))
    with pytest.raises(RayActorError, match="cannot create the log directory: File exists .a retry will not help"):
        await api.ping.remote()


async def test_a_component_that_raises_is_reported_and_restarted_from_a_fresh_list(ray_local):
    from cluster.api.requests import Watch
    from cluster.runtime.component import Component, Result

    class Picky(Component):
        """Fails on every batch that brings the ConfigMap "boom"; keeps the names it saw."""

        def __init__(self):
            self.seen, self.boots = [], []

        def watches(self):
            return (Watch("ConfigMap"),)

        def reconcile(self, batch):
            self.boots.append(batch.boot)
            names = [e.obj["metadata"]["name"] for e in batch.events if e.obj]
            if "boom" in names:
                raise ValueError("a bug that boom brings out")
            self.seen += names
            return Result()

        def inspect(self, now):
            return {"seen": self.seen, "boots": self.boots}

    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    actor = ComponentActor.remote(name, ComponentSpec("picky", Picky))
    start = time.time()
    await asyncio.gather(api.start_clock.remote(start), actor.start_clock.remote(start))
    ns = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "boom", "namespace": "default"}}
    assert await api.write.remote([Create(ns)]) == [None]
    deadline = time.monotonic() + 20
    while not await actor.healthy.remote() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert await actor.healthy.remote() == ["picky: ValueError: a bug that boom brings out"]  # a run fails on it
    assert await api.write.remote([Delete("ConfigMap", "default", "boom", "", 0)]) == [None]
    calm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "calm", "namespace": "default"}}
    assert await api.write.remote([Create(calm)]) == [None]
    deadline = time.monotonic() + 20
    while "calm" not in (seen := await actor.inspect.remote())["seen"] and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert "calm" in seen["seen"] and seen["boots"][0] == "restart"  # rebuilt, relisted, serving again
    ray_local.kill(actor)
    ray_local.kill(api)
