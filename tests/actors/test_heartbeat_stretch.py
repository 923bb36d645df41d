"""Heartbeat stretches on the actors (``ComponentActor.beat``, ``cluster/runtime/stepper.py``):
a host runs its Lease renewals ahead of the coordinator, each written at its own instant;
a watcher that catches up afterwards handles each renewal at the instant it was written
(one instant a watch reply); a beat stops after an instant that wrote anything else."""

import asyncio
import uuid

import pytest
import ray

from actors.apiserver import APIServerActor
from actors.component import ComponentActor
from cluster.api.objects import NODE_LEASE_NAMESPACE
from cluster.api.patches import Apply
from cluster.api.requests import Create, Patch, Watch
from cluster.clock import ClockSpec
from cluster.kubelet.component import lease
from cluster.runtime.component import Component, ComponentSpec, Result

pytestmark = pytest.mark.ray


def heart(other_at: float | None = None) -> ComponentSpec:
    """Applies a Lease every 10 s from 10 s on (as a kubelet renews its own); at ``other_at``
    it also creates a ConfigMap. Built here so Ray's workers get the class by value."""

    class Heart(Component):
        def __init__(self):
            self.next = 10.0

        def watches(self):
            return (Watch("ConfigMap", lazy=True),)

        def reconcile(self, batch):
            writes: list = []
            if batch.now >= self.next:
                name = f"n{batch.now:g}"  # a Lease an instant: the watch window keeps each one's event
                writes.append(Patch("Lease", NODE_LEASE_NAMESPACE, name, "", Apply(lease(name, batch.now))))
                if other_at is not None and batch.now >= other_at:
                    meta = {"name": f"at-{batch.now:g}", "namespace": "default"}
                    writes.append(Create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}))
                self.next = batch.now + 10.0
            return Result(writes=writes, wake_at=self.next, next_change=None)

        def inspect(self, now):
            return {}

    return ComponentSpec("heart", Heart)


def listener() -> ComponentSpec:
    """Keeps (now, how many Lease events) of every batch with events."""

    class Listener(Component):
        def __init__(self):
            self.batches = []

        def watches(self):
            return (Watch("Lease"),)

        def reconcile(self, batch):
            if batch.events:
                self.batches.append((batch.now, len(batch.events)))
            return Result()

        def inspect(self, now):
            return {"batches": self.batches}

    return ComponentSpec("listener", Listener)


async def started(spec: ComponentSpec, api_name: str):
    actor = ComponentActor.remote(api_name, spec)
    await actor.set_clock.remote(ClockSpec(1.0, None, 0.0))
    await done(actor, 0.0, 0)
    return actor


async def done(actor, now, rv):
    """``step`` until the component is done (a step answers "not done" after a second of
    real time, which a busy machine can take)."""
    for _ in range(30):
        answer = await actor.step.remote(now, rv)
        if answer.idle:
            return answer
    raise AssertionError("never done with the instant")


@pytest.mark.parametrize(
    ("other_at", "reached", "renewals"),
    [
        (None, 40.0, [(10.0, 1), (20.0, 1), (30.0, 1), (40.0, 1)]),  # every renewal before 45 s
        (20.0, 20.0, [(10.0, 1), (20.0, 1)]),  # stops after the instant that wrote a ConfigMap
    ],
)
async def test_a_host_runs_its_heartbeats_ahead_and_a_watcher_sees_each_at_its_instant(
    ray_local, other_at, reached, renewals
):
    # Four instants' writes land in order (as separate calls they did not always: Ray runs
    # an async actor's calls in no set order, which mixed two instants' renewals).
    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    await api.set_clock.remote(ClockSpec(1.0, None, 0.0))
    host, watcher = await started(heart(other_at), name), await started(listener(), name)
    answer, at = await host.beat.remote(45.0)
    answer = answer if answer.idle else await done(host, None, 0)  # the reply was more than a second away
    assert at == reached and answer.wake_at == reached + 10.0
    assert answer.writes == 1  # every instant's writes in one call, answered
    rv = await api.resource_version.remote()
    caught_up = await done(watcher, None, rv)  # its clock stays where its events put it
    assert caught_up.seen >= rv
    assert (await watcher.inspect.remote())["batches"] == renewals
    ray.kill(host)
    ray.kill(watcher)
    ray.kill(api)


async def test_a_host_whose_clock_runs_by_the_wall_does_not_beat(ray_local):
    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    host = ComponentActor.remote(name, heart())
    answer, _ = await host.beat.remote(45.0)  # never started
    assert not answer.running
    await asyncio.gather(api.start_clock.remote(0.0), host.start_clock.remote(0.0))
    answer, _ = await host.beat.remote(45.0)
    assert not answer.running  # a running clock has no instants to run ahead
    ray.kill(host)
    ray.kill(api)
