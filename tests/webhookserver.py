"""Admission webhooks played by a local aiohttp server on a thread of its own, for the tests
that have kubemu call webhooks (unit tests of the front end, kubectl tests against serve).

A subclass answers ``respond(name, review, request)`` with the AdmissionReview's ``response``
for the webhook at path ``/<name>``; this class serves it, wrapped as upstream's
``admission.k8s.io/v1`` AdmissionReview."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import orjson
from aiohttp import web


class WebhookServer:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        assert ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/{name}", self._answer)
        runner = web.AppRunner(app)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
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

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
