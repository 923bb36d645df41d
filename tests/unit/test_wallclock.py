"""Only an allow-list of modules under cluster/ reads or waits on the wall clock.

Everything else takes the time it is given (emulated seconds), so the local runtime replays
a scenario identically and a unit test drives any component with a fake clock. A module
that needs real time says why here, and docs/architecture.md names it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# module -> why it needs real time
ALLOWED = {
    "cluster/runtime/paced.py": "serve's local runtime: emulated time may not run ahead of the wall (outside clients)",
    "cluster/runtime/stepper.py": "the Ray runtime's pace: the coordinator waits for the wall before it jumps",
    "cluster/runtime/local.py": "the wall time of each bind, for the benchmarks' throughput",
    "cluster/frontend/watch.py": "a watch's timeoutSeconds and the bookmark interval are a client's real seconds",
    "cluster/frontend/tls.py": "the serving certificate's validity is checked against the client's real clock",
    "cluster/frontend/handler.py": "request latency on /metrics is real time",
    "cluster/frontend/backend.py": "serve's backend waits (with a real timeout) for a write before a watch answers",
    "cluster/frontend/ui_live.py": "the live view's update rate, in a browser's real seconds",
    "cluster/frontend/execstream.py": "an exec'd sleep holds the client's stream for its real seconds",
    "cluster/scenario/driver.py": "progress lines and the report's wall duration of a run",
    "cluster/scenario/sampler.py": "the sampler's budget: the share of real time spent sampling",
}

# What reads the wall clock or waits on it, by qualified name.
_TIME = "time time_ns monotonic monotonic_ns perf_counter perf_counter_ns process_time process_time_ns"
_TIME += " thread_time thread_time_ns sleep localtime gmtime ctime asctime strftime"
CLOCK = (
    {f"time.{f}" for f in _TIME.split()}
    | {f"datetime.{c}.{f}" for c in ("datetime", "date") for f in ("now", "utcnow", "today")}
    | {f"asyncio.{f}" for f in ("sleep", "wait_for", "timeout", "timeout_at")}
)
_MODULES = {"time", "datetime", "asyncio"}


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> qualified name, for names bound by imports of the clock modules."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in _MODULES:
                    out[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module in _MODULES and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _qualified(node: ast.expr, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def clock_uses(source: str) -> set[str]:
    """The qualified clock functions ``source`` refers to (called or passed along)."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            q = _qualified(node, aliases)
            if q in CLOCK:
                found.add(q)
    return found


@pytest.mark.parametrize(
    "source, uses",
    [
        ("import time\nt = time.monotonic()", {"time.monotonic"}),
        ("import time as t\nx = t.perf_counter()", {"time.perf_counter"}),
        ("from time import monotonic as m\nx = m()", {"time.monotonic"}),
        ("import time\ndef f(wall=time.time): ...", {"time.time"}),
        ("import datetime\nn = datetime.datetime.now(datetime.timezone.utc)", {"datetime.datetime.now"}),
        (
            "from datetime import datetime, date\na = datetime.utcnow()\nb = date.today()",
            {"datetime.datetime.utcnow", "datetime.date.today"},
        ),
        ("import asyncio\nasync def f(e):\n    await asyncio.wait_for(e.wait(), 1)", {"asyncio.wait_for"}),
        # emulated time and date arithmetic are fine
        ("from datetime import datetime, timezone\nx = datetime.fromtimestamp(0, timezone.utc)", set()),
        ("def f(backend):\n    return backend.now()", set()),
        ("import time\nx = time.struct_time", set()),
        ("from .clock import time\nx = time.now()", set()),
    ],
)
def test_clock_uses(source, uses):
    assert clock_uses(source) == uses


def _readers() -> dict[str, set[str]]:
    out = {}
    for p in sorted((ROOT / "cluster").rglob("*.py")):
        uses = clock_uses(p.read_text(encoding="utf-8"))
        if uses:
            out[p.relative_to(ROOT).as_posix()] = uses
    return out


def test_only_the_allowed_modules_read_the_wall_clock():
    readers = _readers()
    new = {m: sorted(u) for m, u in readers.items() if m not in ALLOWED}
    assert not new, (
        f"these modules read the wall clock: {new}. Take the time as an argument (emulated seconds), "
        "or add the module to ALLOWED with the reason and name it in docs/architecture.md"
    )
    stale = sorted(set(ALLOWED) - set(readers))
    assert not stale, f"these modules no longer read the wall clock: remove them from ALLOWED and the doc: {stale}"


def test_architecture_names_every_wall_clock_reader():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = [m for m in ALLOWED if f"`{m}`" not in text]
    assert not unnamed, f"docs/architecture.md (the wall clock section) does not name: {unnamed}"
