"""Restarting a node-host actor: the kubelets of the new process re-register their nodes and
adopt the pods bound to them; nothing that ran is restarted, and new pods still run."""

import asyncio
import time
import uuid

import pytest

from actors.apiserver import APIServerActor
from actors.component import ComponentActor
from actors.restart import restart
from cluster.api.requests import Create
from cluster.clock import from_rfc3339
from cluster.kubelet.node import NodeConfig
from cluster.runtime.commands import KillNode
from cluster.scenario.layout import host_spec

pytestmark = pytest.mark.ray

CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def bound(name, node="node-0"):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        },
    }


async def running(api, names, timeout=15.0) -> dict:
    """name -> pod, once every named pod is Running."""
    deadline = time.monotonic() + timeout
    while True:
        pods = {n: await api.get.remote("Pod", "default", n) for n in names}
        if all(isinstance(p, dict) and (p.get("status") or {}).get("phase") == "Running" for p in pods.values()):
            return pods
        assert time.monotonic() < deadline, f"not Running in time: {pods}"
        await asyncio.sleep(0.05)


def loop_counter():
    """A function for ``__ray_call__``: how many host loops run in the actor's process.
    Made inside a function so Ray ships it by value (workers cannot import test modules)."""

    def loops(actor) -> int:
        import asyncio

        return sum(
            1
            for t in asyncio.all_tasks(actor._task.get_loop())
            if t.get_coro().__qualname__ == "ComponentActor._run" and not t.done()
        )

    return loops


async def test_a_restarted_host_keeps_its_pods_running_and_its_nodes_ready(ray_local):
    loops = loop_counter()
    name = f"apiserver-{uuid.uuid4().hex[:8]}"
    api = APIServerActor.options(name=name).remote(seed=1)
    configs = [NodeConfig("node-0", dict(CAPACITY)), NodeConfig("node-1", dict(CAPACITY))]
    host = ComponentActor.remote(name, host_spec(configs, 0), 1.0)  # the apiserver by name, as the cluster passes it
    start = time.time()
    await api.start_clock.remote(start)
    await host.prime.remote()  # registers both nodes
    assert {n: await api.get.remote("Node", "", n) for n in ("node-0", "node-1")}.keys() == {"node-0", "node-1"}
    await host.start_clock.remote(start)
    await host.start_clock.remote(start)
    assert await host.__ray_call__.remote(loops) == 1
    names = [f"web-{i}" for i in range(3)]
    assert await api.write.remote([Create(bound(n)) for n in names]) == [None] * 3
    before = await running(api, names)
    assert await host.command.remote(KillNode("node-1")) == ""  # revived by the restart below

    restarted_at = time.time() - start  # emulated seconds (time scale 1)
    await restart(host, start, timeout=30)
    assert await host.__ray_call__.remote(loops) == 1
    assert await api.write.remote([Create(bound("after"))]) == [None]
    await running(api, ["after"])  # the new loop listed, adopted and admits again
    after = await running(api, names)
    for n in names:
        # Not written at all: the same resourceVersion, startTime and container start.
        assert after[n]["metadata"]["resourceVersion"] == before[n]["metadata"]["resourceVersion"]
        cs = after[n]["status"]["containerStatuses"][0]
        assert (after[n]["status"]["startTime"], cs["restartCount"]) == (before[n]["status"]["startTime"], 0)
    node = await api.get.remote("Node", "", "node-0")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and from_rfc3339(ready["lastHeartbeatTime"]) >= int(restarted_at)
    for n in ("node-0", "node-1"):
        lease = await api.get.remote("Lease", "kube-node-lease", n)
        assert from_rfc3339(lease["spec"]["renewTime"].split(".")[0] + "Z") >= int(restarted_at)
    assert await host.healthy.remote() == []
    ray_local.kill(host, no_restart=True)
    ray_local.kill(api, no_restart=True)
