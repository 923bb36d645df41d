"""The pieces of a restart that need no Ray: the restart helper's waiting, the
scheduler's reading of bind replies that a restart can garble."""

import asyncio
import concurrent.futures
import time

import pytest
from ray.exceptions import ActorUnavailableError, RayActorError

from actors.restart import RestartError, _ask
from actors.scheduler import _bind_results, _own_bind_retried


async def test_ask_sends_again_while_the_actor_is_only_temporarily_unavailable():
    sent = []

    async def reply():
        if len(sent) < 3:
            raise ActorUnavailableError("restarting", None)
        return "pong"

    def send():
        sent.append(1)
        return reply()

    assert await _ask(send, time.monotonic() + 5, "answer") == "pong" and len(sent) == 3


async def test_ask_gives_up_at_the_deadline_or_when_ray_gives_up():
    with pytest.raises(RestartError, match="did not answer ping in time; a longer timeout may help"):
        await _ask(lambda: asyncio.sleep(10), time.monotonic() + 0.05, "answer ping")

    async def dead():
        raise RayActorError(error_msg="The actor died because of an error raised in its creation task")

    with pytest.raises(RestartError, match="did not come back: RayActorError: The actor died"):
        await _ask(dead, time.monotonic() + 5, "come back")


def test_a_failed_bind_call_reads_as_a_retryable_failure_of_each_bind():
    fut = concurrent.futures.Future()
    fut.set_exception(RayActorError(error_msg="The actor died unexpectedly\nmore"))
    results = _bind_results(fut, 2)
    assert results == [(503, "ServiceUnavailable", "bind call failed: RayActorError: The actor died unexpectedly")] * 2
    ok = concurrent.futures.Future()
    ok.set_result([None, (409, "Conflict", "x")])
    assert _bind_results(ok, 2) == [None, (409, "Conflict", "x")]


def test_only_a_conflict_naming_the_chosen_node_is_a_retried_own_bind():
    mine = (409, "Conflict", 'pod p1 is already assigned to node "n1"')
    assert _own_bind_retried(mine, "n1")
    assert not _own_bind_retried(mine, "n2")
    assert not _own_bind_retried((409, "Conflict", "pod p1 is being deleted, cannot be assigned to a host"), "n1")
    assert not _own_bind_retried((404, "NotFound", 'pods "p1" not found'), "n1")


def test_a_fresh_scheduler_takes_nominations_an_earlier_one_made_from_the_pods_status():
    from cluster.kubelet.node import node_object
    from cluster.scenario.runner import expand_pools
    from cluster.scenario.schema import NodePool
    from cluster.scheduler import Scheduler

    sched = Scheduler(seed=1)
    pools = [NodePool(namePrefix="n", count=3, capacity={"cpu": "4", "memory": "32Gi", "pods": "110"})]
    for i, cfg in enumerate(expand_pools(pools)):
        sched.on_node("ADDED", node_object(cfg, i, 0.0, cfg.allocatable()), 0.0)

    def pending(name, nominated):
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Pending", "nominatedNodeName": nominated},
        }

    sched.on_pod("ADDED", pending("a", "n-2"), 1.0)
    sched.on_pod("ADDED", pending("b", "a-node-gone-meanwhile"), 1.0)
    out = sched.schedule(1.0, 10)
    assert sorted((name, node) for _, name, _, node in out.binds) == [("a", "n-2"), ("b", "n-0")]
