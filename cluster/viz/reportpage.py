"""The HTML report of a run (``kubemu run --html FILE``) and of a benchmark (``kubemu bench
... --html FILE``): one self-contained page each.

Owns what the run's page shows, from the JSON report alone: the verdict and every
expectation, the headline metrics, the charts of ``figures.py``, preemptions (preemptor →
victims), the pods that failed or still wait with their last FailedScheduling message, the
per-plugin explanations when the report has ``schedulingResults``, and YuniKorn's queues.
Lists that grow with the run (pods, preemptions) are cut at ``MAX_ROWS`` rows with a count
of the rest, so a 100,000-node run stays a page of a few megabytes.
"""

from __future__ import annotations

from typing import Any

from ..scheduler import explain_text
from . import figures as figs
from .page import Cell, cards, chart, esc, render, table

MAX_ROWS = 200
EXPLAINED_PHASES = ("Pending", "Failed")


def report_page(report: dict) -> str:
    by_id = {f.id: f for f in figs.report_figures(report)}
    verdict = (
        '<span class="badge ok">PASSED</span>' if report.get("passed") else '<span class="badge bad">FAILED</span>'
    )
    head = (
        f'<header class="top"><h1>{esc(report.get("scenario"))}</h1>{verdict}'
        f'<span class="sub">{esc(report.get("runtime", ""))} runtime · ended at {report.get("endedAt") or 0:.1f}s '
        f"emulated · {report.get('wallSeconds', 0):.1f}s wall</span></header>"
    )
    body = [head, "<main>", f'<p class="desc">{esc(report.get("description") or "")}</p>']
    body.append(_metrics(report))
    body.append(_expectations(report))
    body.append(_charts(by_id))
    body.append(_preemptions(report))
    body.append(_explanations(report))
    if "yunikorn" in report:
        body.append(_yunikorn(report, by_id))
    body.append("</main>")
    return render(f"kubemu: {report.get('scenario')}", "\n".join(body), list(by_id.values()))


def _metrics(report: dict) -> str:
    m = report.get("metrics") or {}
    lat = m.get("podStartupLatency") or {}
    pods, nodes = report.get("pods") or [], report.get("nodes") or []
    return cards(
        [
            ("nodes Ready / all", f"{sum(1 for n in nodes if n.get('ready'))} / {len(nodes)}"),
            ("pods at the end", len(pods)),
            ("pods scheduled", m.get("podsScheduled")),
            ("pods/s (first bind to last)", m.get("schedulingThroughput") or "—"),
            ("startup p50 / p99 (s)", f"{lat.get('p50', '—')} / {lat.get('p99', '—')}"),
            ("preemptions", m.get("preemptions", 0)),
            ("evictions", m.get("evictions", 0)),
            ("chaos actions", len(report.get("chaos") or ())),
        ]
    )


def _expectations(report: dict) -> str:
    rows: list[list[Cell]] = []
    for e in report.get("expectations") or ():
        decided = "" if e.get("decidedAt") is None else f"{e['decidedAt']:g}s"
        rows.append(
            [
                str(e.get("index")),
                ("ok", "ok") if e.get("ok") else ("bad", "FAIL"),
                esc(e.get("detail")),
                esc(decided),
                '<span class="pill">implicit</span>' if e.get("implicit") else "",
            ]
        )
    html = table(["#", "verdict", "detail", "decided at", ""], rows)
    return f'<section id="expectations"><h2>Expectations</h2>{html}</section>'


def _charts(by_id: dict[str, figs.Figure]) -> str:
    notes = {
        "fig-queue": "waiting: not yet tried or backing off; unschedulable: PodScheduled False "
        "(Unschedulable); nominated: waiting for preemption victims to go.",
        "fig-heat-cpu": "Each row a node (or, past 200 nodes, the mean of a bucket of nodes in name order).",
        "fig-chaos": "Markers: chaos actions and the events of failure and healing; a bigger marker is more events.",
    }
    order = [
        ("fig-pods", "fig-throughput"),
        ("fig-latency", "fig-cdf"),
        ("fig-queue",),
        ("fig-heat-cpu", "fig-heat-memory"),
        ("fig-chaos",),
    ]
    out = []
    for ids in order:
        present = [by_id[i] for i in ids if i in by_id]
        if not present:
            continue
        inner = "".join(chart(f, notes.get(f.id, "")) for f in present)
        out.append(f'<div class="grid2">{inner}</div>' if len(present) > 1 else inner)
    return '<div style="display:grid;gap:16px;margin-bottom:16px">' + "".join(out) + "</div>"


def _preemptions(report: dict) -> str:
    found = report.get("preemptions") or []
    if not found:
        return ""
    rows = [
        [f"{p['time']:g}s", esc(p["preemptor"]), esc(p.get("node") or ""), esc(", ".join(p["victims"]))]
        for p in found[:MAX_ROWS]
    ]
    more = f'<p class="note">and {len(found) - MAX_ROWS} more</p>' if len(found) > MAX_ROWS else ""
    return (
        '<section id="preemptions"><h2>Preemptions (preemptor → victims)</h2>'
        + table(["time", "preemptor", "node", "victims"], rows)
        + more
        + "</section>"
    )


def _explanations(report: dict) -> str:
    last: dict[str, dict] = {}
    for ev in report.get("events") or ():
        if ev.get("reason") == "FailedScheduling":
            last[ev.get("object") or ""] = ev
    results = {_ref(r): r for r in report.get("schedulingResults") or () if isinstance(r, dict)}
    stuck = [p for p in report.get("pods") or () if p.get("phase") in EXPLAINED_PHASES]
    if not stuck and not results:
        return ""
    rows = []
    for p in stuck[:MAX_ROWS]:
        ref = f"Pod/{p.get('namespace')}/{p.get('name')}"
        failed = last.get(ref) or {}
        why = failed.get("message") or p.get("message") or p.get("reason") or ""
        explained = results.get(f"{p.get('namespace')}/{p.get('name')}")
        detail = _result_html(explained) if explained else ""
        rows.append([esc(f"{p.get('namespace')}/{p.get('name')}"), esc(p.get("phase")), esc(why) + detail])
    # Pods explained although they were placed (``explain: all``), after the ones still waiting.
    shown = {f"{p.get('namespace')}/{p.get('name')}" for p in stuck[:MAX_ROWS]}
    for ref, explained in list(results.items())[: max(0, MAX_ROWS - len(rows))]:
        if ref not in shown:
            rows.append([esc(ref), esc(explained.get("result") or ""), _result_html(explained)])
    more = f'<p class="note">and {len(stuck) - MAX_ROWS} more</p>' if len(stuck) > MAX_ROWS else ""
    return (
        '<section id="explanations"><h2>Pods that failed or still wait, and why</h2>'
        + table(["pod", "phase", "last FailedScheduling (or the pod's reason) and the per-plugin explanation"], rows)
        + more
        + "</section>"
    )


def _ref(result: dict) -> str:
    m = result.get("metadata") or {}
    pod = result.get("pod") or {}
    ns = pod.get("namespace") or m.get("namespace") or result.get("namespace") or "default"
    name = pod.get("name") or m.get("name") or result.get("name") or ""
    return f"{ns}/{name}"


def _result_html(result: dict) -> str:
    """A SchedulingResult as ``kubemu explain pod`` prints it (one renderer for both)."""
    return f"<details><summary>per-plugin explanation</summary><pre>{esc(explain_text.render(result))}</pre></details>"


def _yunikorn(report: dict, by_id: dict[str, figs.Figure]) -> str:
    yk = report["yunikorn"]
    counters = ", ".join(f"{k} {v}" for k, v in sorted(yk.get("counters", {}).items()))

    def res(r: Any) -> str:
        return esc(", ".join(f"{k}={v}" for k, v in sorted((r or {}).items())) or "—")

    rows = [
        [
            esc(q["queue"]),
            res(q.get("guaranteed")),
            res(q.get("max")),
            res(q.get("allocated")),
            res(q.get("pending")),
            str(q.get("preemptions", 0)),
        ]
        for q in yk.get("queues", [])
    ]
    fig = chart(by_id["fig-yunikorn"]) if "fig-yunikorn" in by_id else ""
    return (
        f'{fig}<section id="yunikorn"><h2>YuniKorn queues</h2><p class="note">{esc(counters)}; vcore in millicores, '
        "memory in bytes</p>"
        + table(["queue", "guaranteed", "max", "allocated", "pending", "victims"], rows)
        + "</section>"
    )


def bench_page(result: dict) -> str:
    """A benchmark's figures as charts, with every figure in a table beside them."""
    found = figs.bench_figures(result)
    name = result.get("benchmark", "bench")
    complete = result.get("complete")
    badge = (
        ""
        if complete is None
        else ('<span class="badge ok">complete</span>' if complete else '<span class="badge bad">incomplete</span>')
    )
    rows = [[esc(k), f'<span class="mono">{esc(v)}</span>'] for k, v in result.items()]
    body = (
        f'<header class="top"><h1>kubemu bench {esc(name)}</h1>{badge}'
        f'<span class="sub">{esc(result.get("nodes", ""))} nodes · {esc(result.get("pods", ""))} pods · '
        f"{esc(result.get('seconds', ''))} s</span></header><main>"
        + "".join(chart(f) for f in found)
        + '<section id="figures"><h2>Every figure</h2>'
        + table(["figure", "value"], rows)
        + "</section></main>"
    )
    return render(f"kubemu bench {name}", body, found)
