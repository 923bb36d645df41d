"""What an emulated container printed: the log lines of one run of a container, rendered
from the pod as the apiserver stores it.

Owns the text ``kubectl logs`` shows for kubemu's containers whose command the kubelet does
not run (a container that runs one has its printed output instead, which the log endpoint
asks the kubelet for: ``cluster/kubelet/commandrun.py``). No process runs, so the kubelet writes each container's state into the
pod's status (``state.running.startedAt``; ``state.terminated`` with exit code, reason,
start and finish; ``lastState.terminated`` for the run before a restart), and this module
turns that state and the pod's ``kubemu.io/log`` annotations into lines::

    kubemu: container c started at 2026-01-01T00:00:00Z
    <each line of the annotation kubemu.io/log.c, else of kubemu.io/log>
    kubemu: container c exited with code 1 (Error) at 2026-01-01T00:00:05Z

Each line carries the emulated time it was written (the run's start for the first line and
the annotation's text, its finish for the exit line), which ``timestamps``, ``sinceSeconds``
and ``sinceTime`` read. Which run a request gets, and the errors when there is none, follow
the kubelet (upstream's ``validateContainerLogStatus``): ``previous`` takes
``lastState.terminated``; otherwise the running run, else the terminated one, else the
previous one; a container still waiting has no logs yet. Those errors are the kubelet's
400 texts, which the apiserver passes on. Called by the HTTP front end's log endpoint
(``cluster/frontend/podlog.py``); pure, so the same pod gives the same lines anywhere.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..clock import parse_timestamp, rfc3339
from .annotations import LOG

STATUS_LISTS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")


class LogUnavailable(ValueError):
    """The kubelet has no log for this request; ``str()`` is its one-line message."""


class LogLine(NamedTuple):
    at: float  # emulated seconds
    text: str


class Run(NamedTuple):
    """One run of a container as the pod's status shows it."""

    container: str
    started: float
    finished: float | None = None  # None while it runs
    exit_code: int = 0
    reason: str = ""


def container_status(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    """The status of ``container`` (a regular, init or ephemeral one), as the kubelet looks
    for it: the regular containers' first."""
    status = pod.get("status") or {}
    for field in STATUS_LISTS:
        for cs in status.get(field) or ():
            if isinstance(cs, dict) and cs.get("name") == container:
                return cs
    return None


def _time(value: Any) -> float:
    t = parse_timestamp(value) if isinstance(value, str) else None
    return 0.0 if t is None else t


def _terminated(container: str, state: dict[str, Any]) -> Run:
    code = state.get("exitCode")
    return Run(
        container,
        _time(state.get("startedAt")),
        _time(state.get("finishedAt")),
        code if isinstance(code, int) and not isinstance(code, bool) else 0,
        str(state.get("reason") or ""),
    )


def chosen_run(pod: dict[str, Any], container: str, previous: bool = False) -> Run:
    """The run whose log a request for ``container`` reads; raises ``LogUnavailable``."""
    name = (pod.get("metadata") or {}).get("name", "")
    cs = container_status(pod, container)
    if cs is None:
        raise LogUnavailable(f'container "{container}" in pod "{name}" is not available')
    state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated")
    if previous:
        if not isinstance(last, dict):
            raise LogUnavailable(f'previous terminated container "{container}" in pod "{name}" not found')
        return _terminated(container, last)
    if isinstance(state.get("running"), dict):
        return Run(container, _time(state["running"].get("startedAt")))
    if isinstance(state.get("terminated"), dict):
        return _terminated(container, state["terminated"])
    if isinstance(last, dict):
        return _terminated(container, last)
    waiting = state.get("waiting")
    if isinstance(waiting, dict):
        reason = _WAITING_SAID.get(waiting.get("reason", ""), waiting.get("reason", ""))
        raise LogUnavailable(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    raise LogUnavailable(f'container "{container}" in pod "{name}" is waiting to start - no logs yet')


# The pending failures the kubelet words for a log request (the reason itself otherwise).
_WAITING_SAID = {
    "ErrImagePull": "image can't be pulled",
    "ImagePullBackOff": "trying and failing to pull image",
}


def run_now(pod: dict[str, Any] | None, run: Run) -> Run | None:
    """``run`` as ``pod`` (a later version of the pod) shows it now: still running
    (``finished`` None), finished (with its exit), or None when the pod no longer shows it
    (gone, or the kubelet dropped the container's status)."""
    cs = None if pod is None else container_status(pod, run.container)
    if cs is None:
        return None
    state = cs.get("state") or {}
    running = state.get("running")
    if isinstance(running, dict) and _time(running.get("startedAt")) == run.started:
        return run
    for ended in (state.get("terminated"), (cs.get("lastState") or {}).get("terminated")):
        if isinstance(ended, dict) and _time(ended.get("startedAt")) == run.started:
            return _terminated(run.container, ended)
    return None


def _annotation_text(pod: dict[str, Any], container: str) -> str:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(f"{LOG}.{container}", annotations.get(LOG, ""))
    return text if isinstance(text, str) else ""


def start_lines(pod: dict[str, Any], run: Run) -> list[LogLine]:
    """What the run printed when it started: the start line, then the annotation's text."""
    out = [LogLine(run.started, f"kubemu: container {run.container} started at {rfc3339(run.started)}")]
    out += [LogLine(run.started, line) for line in _annotation_text(pod, run.container).splitlines()]
    return out


def exit_line(run: Run) -> LogLine:
    assert run.finished is not None  # only a finished run has an exit line
    reason = f" ({run.reason})" if run.reason else ""
    return LogLine(
        run.finished,
        f"kubemu: container {run.container} exited with code {run.exit_code}{reason} at {rfc3339(run.finished)}",
    )


def run_lines(pod: dict[str, Any], run: Run) -> list[LogLine]:
    """Every line of the run so far."""
    lines = start_lines(pod, run)
    if run.finished is not None:
        lines.append(exit_line(run))
    return lines


def timestamped(line: LogLine) -> str:
    """The line with the kubelet's ``timestamps=true`` prefix (RFC 3339, nanoseconds, fixed width)."""
    whole = int(line.at)
    nanos = int(round((line.at - whole) * 1e9))
    return f"{rfc3339(whole)[:-1]}.{nanos:09d}Z {line.text}"
