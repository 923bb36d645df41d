"""``kubectl exec`` over WebSocket: the upgrade of an exec request and its channel stream.

Owns the Kubernetes remote-command protocol over WebSocket as kubemu speaks it:
subprotocols ``v5.channel.k8s.io`` and ``v4.channel.k8s.io`` (what kubectl 1.30+ and the
Python client's ``stream`` offer); every binary message starts with its channel (1
stdout, 2 stderr, 3 the error channel, which carries a ``Status``: ``Success``, or
``Failure`` with reason ``NonZeroExitCode`` and the exit code as the cause ``ExitCode``,
from which kubectl prints ``command terminated with exit code N`` and exits N). SPDY
(kubectl 1.29 and older, or a client without those subprotocols) is not served: the
request is refused as before (``connect.py``), and kubectl 1.30+ only falls back to SPDY
when the WebSocket upgrade itself fails.

The handler stays free of sockets: ``server.py`` opens an ``Upgrade`` for each request
asking for a WebSocket (``offered``), ``connect.py`` checks the request as upstream does,
runs the command through the kubelet and ``accept``s the session, answering 101;
``server.py`` then upgrades the connection and ``send``s the session. The command has run
in full before the upgrade (kubemu's commands read no stdin), so a failure to reach the
kubelet is still an ordinary ``Status``.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any, NamedTuple

from aiohttp import web

from ..api.emulatedshell import ExecResult
from .wire import Response, dumps

V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"
PROTOCOLS = (V5, V4)
STDOUT, STDERR, ERROR = 1, 2, 3


class ExecSession(NamedTuple):
    argv: tuple[str, ...]
    result: ExecResult
    stdout: bool = True
    stderr: bool = True
    tty: bool = False
    wait: float = 0.0  # real seconds to wait before answering (an emulated `sleep`)


class Upgrade:
    """A request's offer to become a WebSocket: its query with repeated values kept
    (``command`` repeats), the subprotocol chosen, and the session once accepted."""

    __slots__ = ("query", "protocol", "session")

    def __init__(self, query: dict[str, list[str]], offered: str):
        self.query = query
        wanted = [p.strip() for p in offered.split(",")]
        self.protocol = next((p for p in wanted if p in PROTOCOLS), "")
        self.session: ExecSession | None = None


UPGRADE: ContextVar[Upgrade | None] = ContextVar("kubemu_upgrade", default=None)


def offered(request: web.BaseRequest) -> Upgrade | None:
    """The ``Upgrade`` of a request that asks for a WebSocket, else None."""
    if request.headers.get("Upgrade", "").lower() != "websocket":
        return None
    query = {k: request.query.getall(k) for k in request.query}
    return Upgrade(query, request.headers.get("Sec-WebSocket-Protocol", ""))


def accept(box: Upgrade, session: ExecSession) -> Response:
    box.session = session
    return Response(101, b"")


def status(session: ExecSession) -> dict[str, Any]:
    """The error channel's ``Status`` for the command's exit code."""
    code = session.result.code
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    shown = "[" + " ".join(session.argv) + "]"
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command {shown}, exit code {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


def frames(session: ExecSession) -> list[bytes]:
    """The binary messages of the session, in order (a TTY has no stderr of its own)."""
    out, err = session.result.stdout.encode(), session.result.stderr.encode()
    if session.tty:
        out, err = out + err, b""
    msgs = []
    if session.stdout and out:
        msgs.append(bytes([STDOUT]) + out)
    if session.stderr and err:
        msgs.append(bytes([STDERR]) + err)
    msgs.append(bytes([ERROR]) + dumps(status(session)))
    return msgs


async def send(request: web.BaseRequest, box: Upgrade) -> web.StreamResponse:
    """Upgrade the connection and send the accepted session; then close it."""
    assert box.session is not None
    ws = web.WebSocketResponse(protocols=(box.protocol,), autoping=True)
    await ws.prepare(request)
    try:
        if box.session.wait > 0:
            await asyncio.sleep(box.session.wait)
        for msg in frames(box.session):
            await ws.send_bytes(msg)
        await ws.close()
    except (ConnectionResetError, asyncio.CancelledError):
        pass  # the client went away
    return ws
