"""The pieces of a restart that need no Ray: the restart helper's waiting, and the component
shell's reading of write replies that a restart can garble."""

import asyncio
import concurrent.futures
import time

import pytest
from ray.exceptions import ActorUnavailableError, RayActorError

from actors.component import _outcomes
from actors.restart import RestartError, _ask
from cluster.api.errors import Conflict, ServiceUnavailable


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


def test_a_failed_write_call_reads_as_a_retryable_failure_of_each_request():
    fut = concurrent.futures.Future()
    fut.set_exception(RayActorError(error_msg="The actor died unexpectedly\nmore"))
    results = _outcomes(fut, 2)
    assert results == [ServiceUnavailable("write call failed: RayActorError: The actor died unexpectedly")] * 2
    assert all(r.retryable for r in results)
    ok = concurrent.futures.Future()
    ok.set_result([None, Conflict("x")])
    assert _outcomes(ok, 2) == [None, Conflict("x")]
