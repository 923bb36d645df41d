"""The HTTP call of a webhook kubemu itself calls: admission webhooks (``webhookcall.py``)
and CustomResourceDefinition conversion webhooks (``crdconversion.py``).

Owns how one JSON review reaches a webhook's ``clientConfig``: its ``url`` with upstream's
``?timeout=<n>s`` appended, over HTTPS trusting only the ``caBundle`` when one is given (the
system's roots otherwise) or over plain HTTP, the timeout enforced, anything but 200 a
failure. A ``service`` cannot be reached: kubemu's pods are emulated and serve no HTTP. Every
failure is ``Unreachable`` with upstream's wording of the call's error (``Post "<url>":
...``); each caller puts its own prefix in front.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp


class Unreachable(Exception):
    """The webhook could not be called, or answered with a status other than 200."""


def target(client_config: Mapping[str, Any]) -> str:
    """The URL a webhook is called at; Unreachable for one given as a ``service``."""
    url = client_config.get("url")
    if url:
        return str(url)
    service = client_config.get("service") or {}
    raise Unreachable(
        f'kubemu cannot reach service "{service.get("namespace")}/{service.get("name")}": '
        "its pods are emulated and serve no HTTP (give the webhook a url)"
    )


def ssl_context(client_config: Mapping[str, Any]) -> ssl.SSLContext | None:
    """A context trusting only the ``caBundle``; None when there is none."""
    bundle = client_config.get("caBundle")
    if not bundle:
        return None
    try:
        pem = base64.b64decode(bundle, validate=True).decode()
        return ssl.create_default_context(cadata=pem)
    except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError, TypeError) as e:
        raise Unreachable(f"the caBundle is not a PEM certificate bundle: {e}") from None


async def post(client_config: Mapping[str, Any], body: bytes, timeout: float) -> bytes:
    """POST ``body`` (JSON) to the webhook; its answer's body."""
    url = target(client_config)
    full = f"{url}{'&' if '?' in url else '?'}timeout={int(timeout)}s"
    context = ssl_context(client_config)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.post(
                full, data=body, headers={"Content-Type": "application/json"}, ssl=context if context else True
            ) as r:
                data = await r.read()
                if r.status != 200:
                    raise Unreachable(
                        f"the server responded with the status code {r.status} but did not return more information"
                    )
                return data
    except asyncio.TimeoutError:
        raise Unreachable(f'Post "{full}": context deadline exceeded') from None
    except (aiohttp.ClientError, OSError, ValueError) as e:
        raise Unreachable(f'Post "{full}": {e}') from None
