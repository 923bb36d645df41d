"""The web view of ``kubemu serve`` at ``/ui``, on the API's own listener.

Owns the paths under ``/ui`` and who may read them: a request carrying the API's bearer
token (the kubeconfig's), or the browser cookie set by ``/ui/login?code=CODE`` (the
one-time URL ``kubemu serve`` prints at start; a used code is refused) or by
``/ui?token=TOKEN``. Without a token (``--insecure-http``) the view is open, as the API is.

Paths: ``/ui`` the page (the cluster now, live charts, a pod's page at ``#pod/NS/NAME``, the
YuniKorn queue tree when that scheduler runs); ``/ui/events`` its server-sent events
(``ui_live.py``); ``/ui/api/pod/NS/NAME`` a pod with its events and, where the
``SchedulingResult`` kind is served, its scheduling explanation; ``/ui/assets/NAME`` the
page's scripts (Plotly's bundle from the ``plotly`` package). Every failure is a Kubernetes
``Status``. ``handler.py`` hands every ``/ui`` request here.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..api.errors import MethodNotAllowed, NotFound, StatusError, Unauthorized
from ..api.kinds import BY_KIND
from ..viz import page
from ..viz.figures import Figure, layout
from .ui_live import stream
from .wire import Request, Response, WatchStream, ok

if TYPE_CHECKING:
    from .handler import Handler

COOKIE = "kubemu-ui"
HTML = "text/html; charset=utf-8"
MAX_EVENTS = 100  # a pod page's events, newest last
ASSETS: dict[str, Callable[[], str]] = {"plotly.min.js": page.plotly_js, "ui.js": lambda: page.asset("ui.js")}


def is_ui_path(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


class UiAccess:
    """The one-time login code and the sessions it opened (one per handler)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.code: str | None = secrets.token_urlsafe(24) if token else None
        self.sessions: set[str] = set()

    def login_url(self, server: str) -> str:
        return f"{server}/ui" if self.code is None else f"{server}/ui/login?code={self.code}"

    def allowed(self, req: Request) -> bool:
        if not self.token:
            return True
        if hmac.compare_digest(req.headers.get("authorization", ""), f"Bearer {self.token}"):
            return True
        return _cookie(req.headers.get("cookie", "")) in self.sessions

    def open_session(self) -> Response:
        session = secrets.token_urlsafe(32)
        self.sessions.add(session)
        cookie = f"{COOKIE}={session}; Path=/ui; HttpOnly; Secure; SameSite=Strict"
        return Response(303, b"", HTML, (("Location", "/ui"), ("Set-Cookie", cookie)))


def access(h: Handler) -> UiAccess:
    """The handler's ``UiAccess``, made on first use (``kubemu serve`` prints its URL)."""
    found = getattr(h, "_ui_access", None)
    if found is None:
        found = UiAccess(h.token)
        h._ui_access = found  # type: ignore[attr-defined]
    return found


def _cookie(header: str) -> str:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return ""


async def answer(h: Handler, req: Request) -> Response | WatchStream:
    gate = access(h)
    path = req.path.rstrip("/") or "/"
    if req.method not in ("GET", "HEAD"):
        raise MethodNotAllowed(f"the web view answers GET only, not {req.method}")
    if path == "/ui/login":
        if gate.code is not None and hmac.compare_digest(req.query.get("code", ""), gate.code):
            gate.code = None  # one time only
            return gate.open_session()
        raise Unauthorized("Unauthorized: this login link is not valid (each one works once; use a bearer token)")
    if path == "/ui" and gate.token and hmac.compare_digest(req.query.get("token", ""), gate.token):
        return gate.open_session()
    if not gate.allowed(req):
        raise Unauthorized("Unauthorized")
    if path == "/ui":
        return Response(200, _page().encode(), HTML, (("Cache-Control", "no-store"),))
    if path == "/ui/events":
        await h.refresh()
        return WatchStream(stream(h, lambda: _extra(h)), "text/event-stream")
    if path.startswith("/ui/assets/"):
        name = path.removeprefix("/ui/assets/")
        if name not in ASSETS:
            raise NotFound(f'the web view has no asset "{name}"')
        return Response(
            200, ASSETS[name]().encode(), "text/javascript; charset=utf-8", (("Cache-Control", "max-age=3600"),)
        )
    parts = path.split("/")
    if len(parts) == 6 and parts[:4] == ["", "ui", "api", "pod"]:
        return ok(await pod_page(h, parts[4], parts[5]))
    raise NotFound(f'the web view has no page "{path}"')


def _extra(h: Handler) -> dict[str, Any]:
    """The parts of the summary that come from a component's view, not from the watch."""
    yk = h.yunikorn()
    return {"yunikorn": yk.get("queues") if yk else None}


async def pod_page(h: Handler, ns: str, name: str) -> dict[str, Any]:
    pod = await h.backend.get("Pod", ns, name)
    _, events = await h.backend.list("Event", None)
    mine = [
        e
        for e in events
        if (e.get("involvedObject") or {}).get("kind") == "Pod"
        and (e.get("involvedObject") or {}).get("name") == name
        and (e.get("metadata") or {}).get("namespace") == ns
    ]
    mine.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    explanation = None
    if "SchedulingResult" in BY_KIND:  # served only where the scheduler's explanations are
        try:
            explanation = await h.backend.get("SchedulingResult", ns, name)
        except StatusError:
            explanation = None  # this pod has none (yet)
    st = pod.get("status") or {}
    return {
        "namespace": ns,
        "name": name,
        "phase": st.get("phase"),
        "node": (pod.get("spec") or {}).get("nodeName"),
        "nominatedNodeName": st.get("nominatedNodeName"),
        "conditions": st.get("conditions") or [],
        "events": [
            {
                "time": e.get("lastTimestamp") or e.get("eventTime"),
                "type": e.get("type"),
                "reason": e.get("reason"),
                "message": e.get("message"),
                "count": e.get("count") or 1,
            }
            for e in mine[-MAX_EVENTS:]
        ],
        "explanation": explanation,
    }


def live_figures() -> list[Figure]:
    """The live charts, empty: the page extends their traces with each point."""
    date = {"type": "date", "title": {"text": "emulated time"}}

    def fig(id: str, title: str, names: list[tuple[str, str]], y_title: str) -> Figure:
        traces = [
            {"type": "scatter", "mode": "lines", "name": n, "x": [], "y": [], "line": {"color": c}} for n, c in names
        ]
        look = layout(y_title=y_title, height=260)
        look["xaxis"] = date
        return Figure(id, title, traces, look)

    return [
        fig("live-throughput", "Throughput", [("bound/s", "#4c7fd9"), ("started/s", "#3aa57a")], "pods per second"),
        fig("live-latency", "Startup latency", [("p50", "#3aa57a"), ("p90", "#f2a93b"), ("p99", "#d9534f")], "seconds"),
        fig(
            "live-queue",
            "Pending pods by queue",
            [("waiting", "#f2a93b"), ("unschedulable", "#d9534f"), ("nominated", "#9b6ad6")],
            "pods",
        ),
    ]


def _page() -> str:
    body = page.asset("ui.html")
    scripts = [
        f'<script src="{page.PLOTLY_PATH}"></script>',
        page.inline_script(page.asset("charts.js")),
        '<script src="/ui/assets/ui.js"></script>',
    ]
    return page.render("kubemu: live", body, live_figures(), scripts=scripts)
