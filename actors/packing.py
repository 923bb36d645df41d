"""One write call's requests, and one watch reply, as one pickled blob each, for the Ray
calls to and from the apiserver.

Ray serializes a list argument element by element and pickles each element msgpack cannot
hold (every typed request) on its own, with a fresh pickler: about 19 µs of the caller's
CPU per request, measured in a node host during a rolling update, where one pickle of the
whole list costs about 1 µs per request, and the apiserver's unpickling shrinks alike.
The blob only ever travels between kubemu's own processes. Called by the component shell
and the driver (``pack``) and by the apiserver actor (``unpack``).

A watch reply (kind -> ``WatchChunk`` or ``Expired``) goes the other way the same way
(``pack_reply``/``unpack_reply``): Ray pickled each of its events' tuples through
cloudpickle's Python-level hook, about 2.3 us an event of the apiserver's CPU against 0.9
as one blob, paid once per watcher for every event.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

from cluster.api.errors import Expired
from cluster.api.requests import Request, WatchChunk


def pack(requests: Sequence[Request]) -> bytes:
    return pickle.dumps(list(requests), protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> list[Request]:
    requests = pickle.loads(blob)
    if not isinstance(requests, list):
        raise TypeError(f"write_packed: expected a pickled list of requests, got {type(requests).__name__}")
    return requests


def pack_reply(reply: dict[str, WatchChunk | Expired]) -> bytes:
    return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_reply(blob: bytes) -> dict[str, WatchChunk | Expired]:
    reply = pickle.loads(blob)
    if not isinstance(reply, dict):
        raise TypeError(f"watch_packed: expected a pickled dict of watch chunks, got {type(reply).__name__}")
    return reply
