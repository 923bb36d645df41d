"""Restarting a control-plane actor in place: the chaos action ``restart``.

The driver calls ``restart`` with the handle of a restartable actor (the apiserver, the
scheduler or the controller-manager: created with ``max_restarts=-1`` and
``max_task_retries=-1``, each with ``ping`` and ``start_clock``). It kills the process the
way a crash would, waits until a new incarnation answers, and starts that one's clock on
the cluster's timeline. Callers of the actor meanwhile see only a pause: Ray holds and
retries their calls. A stepped cluster's clock has no real start (``real_start`` None): its
coordinator (``actors/coordinator.py``) gives the new incarnation the instant the cluster
stands at, and time does not move while the restart takes its real seconds.
"""

from __future__ import annotations

import asyncio
import os
import time

import ray
from ray.exceptions import ActorUnavailableError, RayActorError

POLL = 0.05  # real seconds between looks at a restarting actor


class RestartError(RuntimeError):
    pass


def _pid(actor) -> int:
    return os.getpid()


async def restart(handle, real_start: float | None, timeout: float = 60.0) -> float:
    """Kill ``handle``'s process, wait for Ray to restart it, start its clock at
    ``real_start``; returns the real seconds it took. Raises ``RestartError`` when the
    actor does not come back within ``timeout`` seconds, or Ray gives up on it."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    old = await _ask(lambda: handle.__ray_call__.remote(_pid), deadline, "answer before the restart")
    ray.kill(handle, no_restart=False)
    # ray.kill returns before the process is gone, and a call sent meanwhile may still be
    # answered by the old process: only a new process id says the restart happened.
    while await _ask(lambda: handle.__ray_call__.remote(_pid), deadline, "come back") == old:
        await asyncio.sleep(POLL)
    await _ask(lambda: handle.ping.remote(), deadline, "answer ping")
    if real_start is not None:  # None: the cluster's clock has not started, nor had the actor's
        await _ask(lambda: handle.start_clock.remote(real_start), deadline, "start its clock")
    return time.monotonic() - t0


async def _ask(send, deadline: float, what: str):
    """The reply to the call ``send()`` makes, sent again while Ray reports the actor only
    temporarily unavailable."""
    while True:
        try:
            return await asyncio.wait_for(send(), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            raise RestartError(f"restart: the actor did not {what} in time; a longer timeout may help") from None
        except ActorUnavailableError:
            if time.monotonic() >= deadline:
                raise RestartError(f"restart: the actor did not {what} in time; a longer timeout may help") from None
            await asyncio.sleep(POLL)
        except RayActorError as e:
            # Ray gave up on it (restarts exhausted, or its constructor failed): final.
            first = (str(e).splitlines() or [""])[0]
            raise RestartError(f"restart: the actor did not {what}: {type(e).__name__}: {first}") from e
