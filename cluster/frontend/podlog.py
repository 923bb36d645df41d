"""``GET pods/<name>/log``: an emulated container's log, read or followed.

Owns the log endpoint: its query parameters
(``container``, ``previous``, ``timestamps``, ``sinceSeconds``, ``sinceTime``,
``tailLines``, ``limitBytes``, ``follow``) read and refused as upstream (a number that is
not one: 400; a value ``ValidatePodLogOptions`` refuses: 422 on ``PodLogOptions``), the
container choice of ``connect.pick_container``, and the answer as ``text/plain``.

The lines of a container that runs its command (``cluster/kubelet/commandrun.py``) are
what it printed, which the front end asks the node's kubelet for (``ContainerLogs``
through ``Backend.kubelet``, as upstream's apiserver reads a log from the kubelet); every
line carries the run's start. For any other container (or a kubelet that cannot be
asked) the lines come from the pod as the apiserver stores it: the kubelet writes each
container's state into the pod's status, as it does anyway, and
``cluster/api/containerlogs.py`` renders that state (and the ``kubemu.io/log`` annotations)
as what the container printed. An unbound pod has no log yet: an empty 200, as upstream's
apiserver answers with no kubelet to ask.

``follow=true`` holds the response open: the lines so far, then, when the run ends, its
exit line (a rendered log's: an output's has none), and the end. The follower waits for the pod's watch events on its node
(``Backend.watch`` and ``Backend.changed``, one wait at a time, woken by writes: no
polling) and ends when the run ends, when the pod goes, or when the client goes away (the
server cancels the handler). Called by ``subresources.py``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..api import codec
from ..api.containerlogs import LogLine, LogUnavailable, Run, chosen_run, exit_line, run_lines, run_now, timestamped
from ..api.errors import BadRequest, Cause, Expired, Invalid, NotFound
from ..api.kubeletcalls import ContainerLogs
from ..api.objects import name_of, namespace_of
from ..api.podhead import read_head
from ..clock import parse_timestamp
from .backend import KubeletUnreachable
from .connect import node_of, pick_container
from .paths import Target
from .query import _bool, _int64
from .wire import Request, Response, WatchStream, not_allowed

if TYPE_CHECKING:
    from .handler import Handler

TEXT = "text/plain"
WAIT = 30.0  # real seconds a quiet follower waits before it looks again (writes wake it sooner)


class LogOptions(NamedTuple):
    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    since: float | None = None  # emulated time: lines before it are left out
    tail: int | None = None
    limit: int | None = None


def parse_options(query: Mapping[str, str], name: str, now: float) -> LogOptions:
    """The PodLogOptions of ``query``: 400 for a value that does not parse, 422 for one
    upstream's ValidatePodLogOptions refuses (all of them, in its order)."""
    tail, limit, since_seconds = _int64(query, "tailLines"), _int64(query, "limitBytes"), _int64(query, "sinceSeconds")
    since_time = None
    if "sinceTime" in query:
        since_time = parse_timestamp(query["sinceTime"])
        if since_time is None:
            raise BadRequest(f"sinceTime: {json.dumps(query['sinceTime'])} is not an RFC 3339 time")
    errs = []
    if tail is not None and tail < 0:
        errs.append(
            Cause("FieldValueInvalid", f"Invalid value: {tail}: must be greater than or equal to 0", "tailLines")
        )
    if limit is not None and limit < 1:
        errs.append(Cause("FieldValueInvalid", f"Invalid value: {limit}: must be greater than 0", "limitBytes"))
    if since_seconds is not None and since_time is not None:
        errs.append(
            Cause("FieldValueForbidden", "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified", "")
        )
    elif since_seconds is not None and since_seconds < 1:
        errs.append(
            Cause("FieldValueInvalid", f"Invalid value: {since_seconds}: must be greater than 0", "sinceSeconds")
        )
    if errs:
        shown = [f"{c.field}: {c.message}" for c in errs]
        detail = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
        raise Invalid(f'PodLogOptions "{name}" is invalid: {detail}', tuple(errs))
    since = now - since_seconds if since_seconds is not None else since_time
    return LogOptions(
        query.get("container", ""),
        _bool(query.get("follow", "false")),
        _bool(query.get("previous", "false")),
        _bool(query.get("timestamps", "false")),
        since,
        tail,
        limit,
    )


def render(lines: list[LogLine], opts: LogOptions, tail: bool = True) -> bytes:
    """The lines as sent: since-filtered, then the tail, each with its timestamp if asked
    (the byte limit is the caller's: it counts over a whole followed stream)."""
    if opts.since is not None:
        lines = [ln for ln in lines if ln.at >= opts.since]
    if tail and opts.tail is not None:
        lines = lines[len(lines) - opts.tail :] if opts.tail else []
    text = (timestamped(ln) if opts.timestamps else ln.text for ln in lines)
    return "".join(f"{t}\n" for t in text).encode()


async def answer(h: Handler, req: Request, t: Target) -> Response | WatchStream:
    if req.method != "GET":
        raise not_allowed(req.method, f"{t.resource.plural}/{t.subresource}")
    opts = parse_options(req.query, t.name, h.backend.now())
    pod = await h.backend.get("Pod", t.namespace, t.name)
    container = pick_container(pod, opts.container)
    if not (pod.get("spec") or {}).get("nodeName"):
        return Response(200, b"", TEXT)
    node = await node_of(h, pod)
    try:
        run = chosen_run(pod, container, opts.previous)
    except LogUnavailable as e:
        raise BadRequest(str(e)) from None
    printed = await _printed(h, pod, node, run)
    body = render(run_lines(pod, run) if printed is None else printed, opts)
    if opts.limit is not None:
        body = body[: opts.limit]
    if not opts.follow or run.finished is not None or (opts.limit is not None and len(body) >= opts.limit):
        return Response(200, body, TEXT)
    return WatchStream(_follow(h, pod, run, body, opts, printed is None), TEXT)


async def _printed(h: Handler, pod: dict[str, Any], node: str, run: Run) -> list[LogLine] | None:
    """What the run printed, as its kubelet kept it; None when it keeps nothing of it."""
    meta = pod.get("metadata") or {}
    call = ContainerLogs(node, namespace_of(pod), name_of(pod), str(meta.get("uid", "")), run.container, run.started)
    try:
        text = await h.backend.kubelet(call)
    except KubeletUnreachable:
        return None
    return None if not isinstance(text, str) else [LogLine(run.started, line) for line in text.splitlines()]


async def _follow(
    h: Handler, pod: dict[str, Any], run: Run, first: bytes, opts: LogOptions, exit_line_too: bool = True
) -> AsyncIterator[bytes]:
    if first:
        yield first
    left = None if opts.limit is None else opts.limit - len(first)
    ended = await _run_end(h, pod, run)
    if ended is None or ended.finished is None or not exit_line_too:
        return
    last = render([exit_line(ended)], opts, tail=False)
    if left is not None:
        last = last[: max(0, left)]
    if last:
        yield last


async def _run_end(h: Handler, pod: dict[str, Any], run: Run) -> Run | None:
    """The run once it has ended (None: the pod or its run went first), waiting for the
    pod's changes as its node's watch sees them."""
    ns, name, uid = namespace_of(pod), name_of(pod), (pod.get("metadata") or {}).get("uid", "")
    node = frozenset(((pod.get("spec") or {}).get("nodeName") or "",))
    rv = int((pod.get("metadata") or {}).get("resourceVersion") or 0)
    while True:
        chunk = await h.backend.watch("Pod", rv, node)
        if isinstance(chunk, Expired):  # fell out of the window: read the pod afresh
            rv = await h.backend.resource_version()
            try:
                now = run_now(await h.backend.get("Pod", ns, name), run)
            except NotFound:
                return None
            if now is None or now.finished is not None:
                return now
            continue
        for etype, data in chunk.events:
            head = read_head(data)
            if (head.namespace, head.name, head.uid) != (ns, name, uid):
                continue
            now = None if etype == "DELETED" else run_now(codec.decode(data), run)
            if now is None or now.finished is not None:
                return now
        rv = chunk.resume
        if not chunk.events:
            await h.backend.changed(rv, WAIT)
