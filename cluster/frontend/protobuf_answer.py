"""Answers in Kubernetes protobuf, for the requests whose Accept prefers it.

Owns the response side of ``application/vnd.kubernetes.protobuf``: ``preferred`` reads an Accept
header as upstream's negotiation does, and ``answer`` turns the handler's JSON answer into
protobuf (an object, a list, a Status; a watch as upstream's length-prefixed ``WatchEvent``
stream). client-go's typed clients ask ``application/vnd.kubernetes.protobuf,application/json``;
every other client (kubectl's own JSON calls, the Python client, ``kubemu bench api``) asks JSON
and is never touched. ``Handler.handle`` calls it through ``cluster/frontend/protobuf.py``; the
bytes come from ``protobuf_encode.py``.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import orjson

from cluster.api import kinds
from cluster.api.errors import InternalError, NotAcceptable
from cluster.frontend import discovery, paths, protobuf_encode
from cluster.frontend.protobuf_schema import lookup
from cluster.frontend.wire import JSON, Request, Response, WatchStream, error

LOG = logging.getLogger("kubemu.api")
PROTOBUF = "application/vnd.kubernetes.protobuf"
_FRAMES: OrderedDict[bytes, bytes] = OrderedDict()  # watch line -> frame, shared by every watcher
SHARED_FRAMES = 2048
_CUSTOM_TYPES = "only the following media types are accepted: application/json, application/yaml"


def preferred(accept: str) -> bool:
    """Whether ``accept``'s first plain clause the API can answer names protobuf, as client-go's
    ``application/vnd.kubernetes.protobuf,application/json`` does. Clauses asking for a conversion
    (``as=Table``, aggregated discovery) are the handler's to answer; ``*/*`` means JSON, upstream's
    first serializer."""
    if "protobuf" not in accept:
        return False  # every JSON client: nothing more to read
    for clause in discovery.parse_accept(accept):
        if clause.target() is not None:
            continue
        if (clause.type, clause.subtype) == ("application", "vnd.kubernetes.protobuf"):
            return True
        if clause.matches(JSON) or clause.matches("application/yaml"):
            return False
    return False


def answer(req: Request, ans: Response | WatchStream) -> Response | WatchStream:
    """``ans`` in protobuf, for a request whose Accept the handler found ``preferred``.

    A JSON object, list or Status is re-encoded; a watch becomes upstream's length-prefixed
    ``WatchEvent`` stream. What has no protobuf (a custom resource or one of kubemu's own kinds,
    a Table, /version) stays JSON when the Accept allows JSON, and is a 406 for a custom or
    kubemu's own resource when it does not."""
    accept = req.headers.get("accept", "")
    try:
        if isinstance(ans, WatchStream):
            return _watch(req, ans, accept)
        return _response(req, ans, accept)
    except Exception as e:  # a bug of ours: the client still gets its answer, as JSON
        LOG.error("kubemu: %s %s: the protobuf answer failed", req.method, req.path, exc_info=e)
        return ans


def _response(req: Request, ans: Response, accept: str) -> Response:
    if ans.content_type != JSON or not ans.body:
        return ans
    obj: Any = None
    try:
        obj = orjson.loads(ans.body)
        body = protobuf_encode.encode_object(obj)
    except (orjson.JSONDecodeError, protobuf_encode.Unencodable) as e:
        if _is_custom(obj if isinstance(obj, dict) else {}) and not _json_acceptable(accept):
            return error(NotAcceptable(_CUSTOM_TYPES))
        LOG.debug("kubemu: %s %s answered as JSON: %s", req.method, req.path, e)
        return ans
    return Response(ans.status, body, PROTOBUF, ans.headers)


def _is_custom(obj: dict[str, Any]) -> bool:
    kind = str(obj.get("kind", ""))
    return kinds.json_only(kind.removesuffix("List")) or kinds.json_only(kind)


def _json_acceptable(accept: str) -> bool:
    return any(
        c.target() is None and (c.matches(JSON) or c.matches("application/yaml"))
        for c in discovery.parse_accept(accept)
    )


def _watch(req: Request, ans: WatchStream, accept: str) -> Response | WatchStream:
    if ans.content_type != JSON or "as=Table" in accept:
        return ans
    watched = _watched(req.path)
    if watched is None or lookup(*watched) is None:
        if watched is not None and kinds.json_only(watched[1]) and not _json_acceptable(accept):
            return error(NotAcceptable(_CUSTOM_TYPES))
        return ans
    return WatchStream(_frames(ans.lines), PROTOBUF + ";stream=watch")


def _watched(path: str) -> tuple[str, str] | None:
    """(apiVersion, kind) of the collection a watch path names, if kubemu serves it."""
    gv = paths.group_version(path)
    if gv is None:
        return None
    group, version, rest = gv
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    if not rest:
        return None
    r = kinds.BY_PLURAL.get((group, rest[0]))
    if r is None or r.version != version:
        r = kinds.served_at(group, version, rest[0])
    return (r.api_version, r.kind) if r is not None else None


async def _frames(lines: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in lines:
        yield b"".join(_frame(line) for line in chunk.split(b"\n") if line.strip())


def _frame(line: bytes) -> bytes:
    """One JSON watch line as a protobuf frame, encoded once for all the watchers that get it."""
    frame = _FRAMES.get(line)
    if frame is None:
        try:
            frame = protobuf_encode.watch_frame(orjson.loads(line))
        except Exception as e:  # Unencodable, or a bug of ours: the stream goes on
            status = InternalError(f"kubemu could not write a watch event as protobuf: {e}").status()
            frame = protobuf_encode.watch_frame({"type": "ERROR", "object": status})
        _FRAMES[line] = frame
        if len(_FRAMES) > SHARED_FRAMES:
            _FRAMES.popitem(last=False)
    return frame
