"""The HTTP server that carries the Kubernetes API: aiohttp over TLS (or plain HTTP on
loopback), every request handed to ``handler.Handler``.

Owns the transport only: reading a request into a ``handler.Request`` (the whole body,
however it arrives, at most 3 MiB: 413 beyond), writing a ``Response``, and streaming a
``WatchStream`` chunk by chunk until the handler ends it or the client goes away. It is
aiohttp's low-level server, without an application's router: every path and method
reaches the handler, which answers each with an object or a ``Status``; so does a request
the HTTP parser refuses (``_Protocol.handle_error``). Request lines and headers may be as
long as Go's default allows (1 MiB), for long label selectors and identity tokens. Started
by ``kubemu serve`` (``actors/harness/serve.py``).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from ..api.errors import InternalError, RequestEntityTooLarge, StatusError
from . import execstream
from .handler import LOG, MAX_BODY, Handler
from .wire import Request, Response, dumps, error

MAX_HEADER = 1 << 20  # Go's http.DefaultMaxHeaderBytes
READ = 1 << 16  # bytes asked of the body stream at a time


async def read_body(request: web.BaseRequest) -> bytes:
    """The whole body, however it arrives (chunked, in many small writes, slowly):
    ``content.read(n)`` alone returns only what has arrived so far."""
    declared = request.content_length
    if declared is not None and declared > MAX_BODY:
        raise RequestEntityTooLarge(f"the request body is too large: {declared} bytes (at most 3 MiB)")
    parts, size = [], 0
    while chunk := await request.content.read(READ):
        size += len(chunk)
        if size > MAX_BODY:
            raise RequestEntityTooLarge("the request body is too large (at most 3 MiB)")
        parts.append(chunk)
    return b"".join(parts)


def handle_with(handler: Handler) -> Any:
    async def serve(request: web.BaseRequest) -> web.StreamResponse:
        try:
            req = Request(
                request.method,
                request.path,
                dict(request.query),
                {k.lower(): v for k, v in request.headers.items()},
                await read_body(request),
            )
            box = execstream.offered(request)  # a WebSocket exec (execstream.py): handled, then upgraded
            token = execstream.UPGRADE.set(box)
            try:
                answer = await handler.handle(req)
            finally:
                execstream.UPGRADE.reset(token)
            if box is not None and box.session is not None and getattr(answer, "status", 0) == 101:
                return await execstream.send(request, box)
        except StatusError as e:
            return _answer(error(e))
        except Exception as e:  # ``handle`` answers every failure itself; this is the last net
            LOG.error("kubemu: %s %s failed", request.method, request.path, exc_info=e)
            failed = f"an error on the server ({type(e).__name__}) has prevented the request from succeeding"
            return _answer(error(InternalError(failed)))
        if isinstance(answer, Response):
            return _answer(answer)
        return await _stream(request, answer)

    return serve


async def _stream(request: web.BaseRequest, answer: Any) -> web.StreamResponse:
    stream = web.StreamResponse(status=200, headers={"Content-Type": answer.content_type})
    stream.enable_chunked_encoding()
    await stream.prepare(request)
    try:
        async for line in answer.lines:
            await stream.write(line)
    except (ConnectionResetError, asyncio.CancelledError):
        return stream  # the client went away: nothing more to send
    except Exception as e:  # a failure mid-stream ends this watch (its client re-watches), not the server
        LOG.error("kubemu: the watch %s failed", request.path, exc_info=e)
        return stream
    await stream.write_eof()
    return stream


def _answer(answer: Response) -> web.Response:
    headers = CIMultiDict({"Content-Type": answer.content_type})
    for name, value in answer.headers:
        headers.add(name, value)  # a name may repeat (one Warning header per warning)
    return web.Response(status=answer.status, body=answer.body, headers=headers)


class _Protocol(web.RequestHandler):
    """aiohttp's connection handler, but a request its parser refuses (a method it does
    not know, a malformed request line) is answered with a ``Status``, as everything else."""

    def handle_error(
        self, request: Any, status: int = 500, exc: BaseException | None = None, message: str | None = None
    ) -> web.StreamResponse:
        if status >= 500:
            LOG.error("kubemu: a request failed before it was read", exc_info=exc)
            answer = _answer(error(InternalError("an error on the server has prevented the request from succeeding")))
        else:
            text = f"the request is not valid HTTP/1.1: {str(exc or message).splitlines()[0]}"
            body: dict[str, Any] = {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": text,
            }
            body.update(reason="BadRequest" if status == 400 else "", code=status)
            answer = _answer(Response(status, dumps(body)))
        answer.force_close()  # the parser lost its place in the stream: the connection ends
        return answer


class _Server(web.Server):
    def __call__(self) -> web.RequestHandler:
        return _Protocol(self, loop=self._loop, **self._kwargs)


async def start(handler: Handler, host: str, port: int, tls: ssl.SSLContext | None) -> web.BaseRunner:
    """Listen on ``host:port``; returns the runner (``await runner.cleanup()`` stops it)."""
    # handler_cancellation: a client that goes away ends its handler at once, so a followed
    # log or a quiet watch stops waiting instead of lingering until its next write fails.
    server = _Server(
        handle_with(handler),
        handler_cancellation=True,
        access_log=None,
        max_line_size=MAX_HEADER,
        max_field_size=MAX_HEADER,
    )
    # Open watches end at shutdown instead of holding it up (their clients re-watch).
    runner = web.ServerRunner(server, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=tls)
    await site.start()
    return runner
