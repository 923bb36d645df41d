"""The HTTP server that carries the Kubernetes API: aiohttp over TLS (or plain HTTP on
loopback), every request handed to ``handler.Handler``.

Owns the transport only: reading a request into a ``handler.Request`` (the whole body,
at most 3 MiB: 413 beyond), writing a ``Response``, and streaming a ``WatchStream``
chunk by chunk until the handler ends it or the client goes away. Started by ``kubemu
serve`` (``actors/harness/serve.py``).
"""

from __future__ import annotations

import asyncio
import ssl

from aiohttp import web
from multidict import CIMultiDict

from ..api.errors import InternalError, RequestEntityTooLarge
from .handler import LOG, MAX_BODY, Handler
from .wire import Request, Response, error


def app(handler: Handler) -> web.Application:
    async def serve(request: web.Request) -> web.StreamResponse:
        try:
            # The whole body, however it arrives (chunked, in many small writes, slowly):
            # ``content.read(n)`` would return only what had arrived so far.
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _answer(error(RequestEntityTooLarge("the request body is too large (at most 3 MiB)")))
        req = Request(
            request.method,
            request.path,
            dict(request.query),
            {k.lower(): v for k, v in request.headers.items()},
            body,
        )
        try:
            answer = await handler.handle(req)
        except Exception as e:  # ``handle`` answers every failure itself; this is the last net
            LOG.error("kubemu: %s %s failed", request.method, request.path, exc_info=e)
            return _answer(
                error(
                    InternalError(
                        f"an error on the server ({type(e).__name__}) has prevented the request from succeeding"
                    )
                )
            )
        if isinstance(answer, Response):
            return _answer(answer)
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

    application = web.Application(client_max_size=MAX_BODY)
    application.router.add_route("*", "/{tail:.*}", serve)
    return application


def _answer(answer: Response) -> web.Response:
    headers = CIMultiDict({"Content-Type": answer.content_type})
    for name, value in answer.headers:
        headers.add(name, value)  # a name may repeat (one Warning header per warning)
    return web.Response(status=answer.status, body=answer.body, headers=headers)


async def start(handler: Handler, host: str, port: int, tls: ssl.SSLContext | None) -> web.AppRunner:
    """Listen on ``host:port``; returns the runner (``await runner.cleanup()`` stops it)."""
    # Open watches end at shutdown instead of holding it up (their clients re-watch).
    runner = web.AppRunner(app(handler), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=tls)
    await site.start()
    return runner
