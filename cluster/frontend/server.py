"""The HTTP server that carries the Kubernetes API: aiohttp over TLS (or plain HTTP on
loopback), every request handed to ``handler.Handler``.

Owns the transport only: reading a request into a ``handler.Request`` (body size capped
before it is read in full), writing a ``Response``, and streaming a ``WatchStream``
chunk by chunk until the handler ends it or the client goes away. Started by ``kubemu
serve`` (``actors/harness/serve.py``).
"""

from __future__ import annotations

import asyncio
import ssl

from aiohttp import web

from .handler import MAX_BODY, Handler
from .wire import Request, Response


def app(handler: Handler) -> web.Application:
    async def serve(request: web.Request) -> web.StreamResponse:
        body = await request.content.read(MAX_BODY + 1)
        req = Request(
            request.method,
            request.path,
            dict(request.query),
            {k.lower(): v for k, v in request.headers.items()},
            body,
        )
        answer = await handler.handle(req)
        if isinstance(answer, Response):
            return web.Response(status=answer.status, body=answer.body, headers={"Content-Type": answer.content_type})
        stream = web.StreamResponse(status=200, headers={"Content-Type": answer.content_type})
        stream.enable_chunked_encoding()
        await stream.prepare(request)
        try:
            async for line in answer.lines:
                await stream.write(line)
        except (ConnectionResetError, asyncio.CancelledError):
            return stream  # the client went away: nothing more to send
        await stream.write_eof()
        return stream

    application = web.Application(client_max_size=MAX_BODY + 1)
    application.router.add_route("*", "/{tail:.*}", serve)
    return application


async def start(handler: Handler, host: str, port: int, tls: ssl.SSLContext | None) -> web.AppRunner:
    """Listen on ``host:port``; returns the runner (``await runner.cleanup()`` stops it)."""
    # Open watches end at shutdown instead of holding it up (their clients re-watch).
    runner = web.AppRunner(app(handler), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=tls)
    await site.start()
    return runner
