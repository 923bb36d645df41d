"""Webhooks played by a local aiohttp server on a thread of its own, for the tests that have
kubemu call webhooks (unit tests of the front end, kubectl tests against serve).

A subclass answers ``respond(name, review, request)`` with the AdmissionReview's ``response``
for the admission webhook at path ``/<name>``; this class serves it, wrapped as upstream's
``admission.k8s.io/v1`` AdmissionReview. A conversion webhook is at ``/convert/<name>``:
``convert(name, review, request)`` answers with the whole ConversionReview sent back
(``converted`` builds a successful one). ``tls=True`` serves HTTPS with a certificate made
for 127.0.0.1; ``ca_bundle`` is what a ``clientConfig.caBundle`` trusting it holds."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from cluster.frontend import tls as kubemu_tls


def converted(review: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """A successful ConversionReview answering ``review``: each object passed through
    ``change`` (which gets a copy with ``apiVersion`` already set to the desired one)."""
    request = review["request"]
    objects = [change({**o, "apiVersion": request["desiredAPIVersion"]}) for o in request["objects"]]
    response = {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": objects}
    return {"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": response}


class WebhookServer:
    def __init__(self, tls: bool = False) -> None:
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.scheme, self.ca_bundle, self._context = "http", "", None
        if tls:
            cert, key = kubemu_tls.certificate("127.0.0.1")
            self.scheme, self.ca_bundle = "https", base64.b64encode(cert).decode()
            self._context = kubemu_tls.server_context(cert, key)
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        assert ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/{name}", self._answer)
        app.router.add_post("/convert/{name}", self._convert)
        runner = web.AppRunner(app)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self._context)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self.loop.run_forever()

    async def _answer(self, request: web.Request) -> web.Response:
        review = orjson.loads(await request.read())
        response = await self.respond(request.match_info["name"], review, request)
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})

    async def respond(self, name: str, review: dict[str, Any], request: web.Request) -> dict[str, Any]:
        raise NotImplementedError

    async def _convert(self, request: web.Request) -> web.Response:
        review = orjson.loads(await request.read())
        return web.json_response(await self.convert(request.match_info["name"], review, request))

    async def convert(self, name: str, review: dict[str, Any], request: web.Request) -> dict[str, Any]:
        raise NotImplementedError

    def url(self, name: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
