"""An actor Ray restarts on its own (a crash nobody planned) gets its clock started again
by ``Cluster.revive``, and carries on: here the scheduler, which then binds a new pod."""

import asyncio
import time

import pytest
import ray

from actors.cluster import RayCluster
from cluster.api.requests import Create
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool


def pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
    }


async def _bound(cluster, name, seconds=20.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        got = await cluster.api.get.remote("Pod", "default", name)
        if isinstance(got, dict) and got["spec"].get("nodeName"):
            return got["spec"]["nodeName"]
        await asyncio.sleep(0.1)
    return None


@pytest.mark.ray
async def test_a_scheduler_ray_restarted_on_its_own_is_revived(ray_local):
    pools = [NodePool(namePrefix="n", count=2, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = RayCluster(layout(expand_pools(pools)), time_scale=5.0)
    try:
        await cluster.start()
        assert await cluster.revive() == []  # everything runs: nothing to do
        await cluster.write([Create(pod("before"))])
        assert await _bound(cluster, "before")
        ray.kill(cluster.control["scheduler"], no_restart=False)  # nobody calls start_clock after this
        deadline = time.time() + 30
        revived = []
        while not revived and time.time() < deadline:
            revived = await cluster.revive()
            await asyncio.sleep(0.2)
        assert revived == ["scheduler"]
        await cluster.write([Create(pod("after"))])
        assert await _bound(cluster, "after")
    finally:
        await cluster.shutdown()
