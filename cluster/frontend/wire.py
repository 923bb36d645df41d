"""What goes over the wire for one HTTP request of the Kubernetes API, and back.

Owns the transport-free request and answers (``Request``, ``Response``, ``WatchStream``)
and the JSON bodies every part of the front end writes: objects, success and failure
``Status``es. Shared by ``handler.py``, ``verbs.py``, ``subresources.py``, ``watch.py`` and
``server.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, NamedTuple

import orjson

from ..api.errors import MethodNotAllowed, StatusError

JSON = "application/json"


class Request(NamedTuple):
    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]  # lower-case names
    body: bytes = b""


class Response(NamedTuple):
    status: int
    body: bytes
    content_type: str = JSON
    headers: tuple[tuple[str, str], ...] = ()  # more headers: Warning (one per text), ETag, Vary


class WatchStream(NamedTuple):
    lines: AsyncIterator[bytes]
    content_type: str = JSON


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def ok(obj: Any, status: int = 200, content_type: str = JSON) -> Response:
    return Response(status, dumps(obj), content_type)


def error(e: StatusError) -> Response:
    status = e.status()
    # As upstream's error writer: a Status suggesting a delay carries it as Retry-After too,
    # which is what makes client-go wait and retry by itself.
    delay = (status.get("details") or {}).get("retryAfterSeconds") or 0
    headers = (("Retry-After", str(delay)),) if delay > 0 else ()
    return Response(e.code, dumps(status), headers=headers)


def success(code: int, details: dict[str, Any] | None = None) -> Response:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        body["details"] = details
    return ok(body, code)


def not_allowed(method: str, what: str) -> MethodNotAllowed:
    """The 405 for a verb ``what`` (a resource, or resource/subresource) does not take."""
    return MethodNotAllowed(f"the server does not allow this method on the requested resource ({method} {what})")
