"""The charts of a run's report, as Plotly figure specifications (plain dicts).

Owns which chart shows which of the report's figures: pods by phase, scheduling
throughput, startup latency over time and its CDF, the pending pods (the watch's queue
view), the node utilisation heatmaps, the chaos timeline, and YuniKorn's queues. Each
function takes the JSON report (``cluster/scenario/report.py``) and returns a
``Figure``: the id of its element on the page, its title, and the ``data`` and ``layout``
Plotly draws; the page (``page.py``) inlines them and Plotly renders them. Nothing here
draws: the numbers go to Plotly exactly as the report has them, so a test can compare the
two.
"""

from __future__ import annotations

from typing import Any, NamedTuple

PHASE_COLOURS = {
    "Pending": "#f2a93b",
    "Running": "#3aa57a",
    "Succeeded": "#4c7fd9",
    "Failed": "#d9534f",
    "Terminating": "#8a8f98",
}
PENDING_COLOURS = {"waiting": "#f2a93b", "unschedulable": "#d9534f", "nominated": "#9b6ad6"}
# Events that belong on the chaos timeline: what breaks nodes, takes pods and heals.
TIMELINE_REASONS = (
    "NodeNotReady",
    "NodeReady",
    "RegisteredNode",
    "RemovingNode",
    "TaintManagerEviction",
    "Evicted",
    "Preempted",
    "OOMKilling",
    "EvictionThresholdMet",
    "NodeHasInsufficientMemory",
    "NodeHasDiskPressure",
    "NodeHasInsufficientPID",
)
MAX_TIMELINE_MARKERS = 3000


class Figure(NamedTuple):
    id: str
    title: str
    data: list[dict[str, Any]]
    layout: dict[str, Any]

    def spec(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "data": self.data, "layout": self.layout}


def layout(x_title: str = "emulated seconds", y_title: str = "", **more: Any) -> dict[str, Any]:
    """The look every chart shares."""
    base: dict[str, Any] = {
        "margin": {"l": 60, "r": 20, "t": 10, "b": 45},
        "height": 300,
        "hovermode": "x unified",
        "legend": {"orientation": "h", "y": -0.22},
        "xaxis": {"title": {"text": x_title}, "zeroline": False},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "#fbfbfd",
        "font": {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 12},
    }
    base.update(more)
    return base


def line(name: str, x: list, y: list, colour: str | None = None, **more: Any) -> dict[str, Any]:
    trace: dict[str, Any] = {"type": "scatter", "mode": "lines", "name": name, "x": x, "y": y}
    if colour:
        trace["line"] = {"color": colour, "width": 2}
    trace.update(more)
    return trace


def pods_by_phase(report: dict) -> Figure:
    s = report["series"]
    data = [
        line(p, s["t"], s[p], PHASE_COLOURS[p], stackgroup=None if p == "Terminating" else "phase")
        for p in ("Running", "Pending", "Succeeded", "Failed", "Terminating")
        if any(s.get(p) or ())
    ]
    return Figure("fig-pods", "Pods by phase", data, layout(y_title="pods"))


def rates(t: list[float], cumulative: list[int]) -> tuple[list[float], list[float]]:
    """Per-interval rate of a cumulative count: (interval ends, count per emulated second)."""
    xs, ys = [], []
    for i in range(1, len(t)):
        dt = t[i] - t[i - 1]
        if dt > 0:
            xs.append(t[i])
            ys.append(round((cumulative[i] - cumulative[i - 1]) / dt, 3))
    return xs, ys


def throughput(report: dict) -> Figure:
    """Pods created, bound and started so far (lines), and binds per emulated second in
    each interval between samples (bars, right axis)."""
    s = report["series"]
    data = [
        line(name, s["t"], s[key], colour, line_shape="hv")
        for key, name, colour in (
            ("created", "created", "#8a8f98"),
            ("scheduled", "bound", "#4c7fd9"),
            ("started", "started", "#3aa57a"),
        )
    ]
    x, y = rates(s["t"], s["scheduled"])
    data.append({"type": "bar", "name": "bound per second", "x": x, "y": y, "yaxis": "y2", "opacity": 0.45})
    look = layout(y_title="pods so far", margin={"l": 60, "r": 60, "t": 10, "b": 45})
    look["yaxis2"] = {
        "overlaying": "y",
        "side": "right",
        "title": {"text": "binds/s"},
        "rangemode": "tozero",
        "showgrid": False,
    }
    return Figure("fig-throughput", "Scheduling throughput", data, look)


def latency(report: dict) -> Figure:
    lat = report["series"]["startupLatency"]
    data = [
        line(p, lat["t"], lat[p], colour, mode="lines+markers")
        for p, colour in (("p50", "#3aa57a"), ("p90", "#f2a93b"), ("p99", "#d9534f"))
    ]
    return Figure("fig-latency", "Pod startup latency (creation → Running)", data, layout(y_title="seconds"))


def latency_cdf(report: dict) -> Figure:
    c = report["series"]["startupCdf"]
    data = [line("pods started", c["seconds"], c["fraction"], "#4c7fd9", line_shape="hv")]
    look = layout("startup latency, emulated seconds", "fraction of pods", hovermode="closest")
    look["yaxis"]["range"] = [0, 1.02]
    return Figure("fig-cdf", "Startup latency CDF", data, look)


def pending(report: dict) -> Figure:
    s = report["series"]
    data = [
        line(k, s["t"], s[k], PENDING_COLOURS[k], stackgroup="pending")
        for k in ("waiting", "unschedulable", "nominated")
    ]
    return Figure(
        "fig-queue", "Pending pods (the scheduling queues as the watch sees them)", data, layout(y_title="pods")
    )


def heatmap(report: dict, resource: str) -> Figure:
    h = report["heatmap"]
    rows = len(h["rows"])
    data = [
        {
            "type": "heatmap",
            "x": h["t"],
            "y": h["rows"],
            "z": h[resource],
            "zmin": 0,
            "zmax": 1,
            "colorscale": [[0, "#f4f7fb"], [0.5, "#f2a93b"], [1, "#b2182b"]],
            "colorbar": {"title": {"text": "requested /<br>allocatable"}, "tickformat": ".0%"},
            "hovertemplate": "%{y}<br>%{x}s: %{z:.0%}<extra></extra>",
        }
    ]
    look = layout(y_title="", height=max(260, min(640, 40 + 6 * rows)), hovermode="closest")
    look["yaxis"] = {"automargin": True, "autorange": "reversed", "showticklabels": rows <= 60}
    look["margin"] = {"l": 90, "r": 20, "t": 10, "b": 45}
    return Figure(f"fig-heat-{resource}", f"Node {resource} requested / allocatable", data, look)


def chaos_timeline(report: dict) -> Figure:
    """Nodes Ready and not (lines) and, on the same time axis, chaos actions and the events
    of failure and healing (markers; events of one reason at one instant are one marker
    sized by their count)."""
    s = report["series"]
    data = [
        line("nodes Ready", s["t"], s["nodesReady"], "#3aa57a"),
        line("nodes not Ready", s["t"], s["nodesNotReady"], "#d9534f"),
    ]
    marks: dict[tuple[str, float], list[str]] = {}
    for c in report.get("chaos") or ():
        marks.setdefault((f"chaos {c['action']}", c["time"]), []).append(f"{c['target']} {c.get('detail') or ''}")
    for ev in report.get("events") or ():
        if ev.get("reason") in TIMELINE_REASONS:
            marks.setdefault((ev["reason"], ev["time"]), []).append(ev.get("object") or "")
    rows = sorted({k for k, _ in marks}, key=lambda k: (not k.startswith("chaos"), k))
    for k in rows:
        points = sorted((t, v) for (kk, t), v in marks.items() if kk == k)[:MAX_TIMELINE_MARKERS]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": k,
                "yaxis": "y2",
                "x": [t for t, _ in points],
                "y": [k] * len(points),
                "marker": {"size": [min(22, 7 + len(v) ** 0.5 * 2) for _, v in points], "symbol": "diamond"},
                "text": [f"{len(v)}: " + ", ".join(v[:5]) + (" …" if len(v) > 5 else "") for _, v in points],
                "hovertemplate": "%{x}s %{text}<extra>%{y}</extra>",
            }
        )
    look = layout(y_title="nodes", height=300 + 22 * len(rows), hovermode="closest")
    look["yaxis"]["domain"] = [0, 0.45]
    look["yaxis2"] = {"domain": [0.55, 1], "type": "category", "automargin": True, "categoryarray": rows[::-1]}
    return Figure("fig-chaos", "Chaos timeline", data, look)


def yunikorn_queues(report: dict) -> Figure:
    queues = [q for q in report["yunikorn"]["queues"]]
    names = [q["queue"] for q in queues]

    def vcore(r: dict | None) -> float | None:
        return None if not r or "vcore" not in r else r["vcore"] / 1000

    data = [
        {
            "type": "bar",
            "name": label,
            "x": names,
            "y": [vcore(q.get(key)) for q in queues],
            "marker": {"color": colour},
        }
        for key, label, colour in (
            ("guaranteed", "guaranteed", "#b8c7e0"),
            ("allocated", "allocated", "#3aa57a"),
            ("pending", "pending", "#f2a93b"),
            ("max", "max", "#8a8f98"),
        )
    ]
    look = layout("queue", "CPU (cores)", barmode="group", hovermode="closest")
    return Figure("fig-yunikorn", "YuniKorn queues: CPU", data, look)


def report_figures(report: dict) -> list[Figure]:
    """Every chart a report has data for, in page order."""
    out: list[Figure] = []
    if report.get("series", {}).get("t"):
        out += [pods_by_phase(report), throughput(report), latency(report), latency_cdf(report), pending(report)]
    if report.get("heatmap", {}).get("rows"):
        out += [heatmap(report, "cpu"), heatmap(report, "memory")]
    if report.get("series", {}).get("t"):
        out.append(chaos_timeline(report))
    if report.get("yunikorn", {}).get("queues"):
        out.append(yunikorn_queues(report))
    return out


def bench_figures(result: dict) -> list[Figure]:
    """A benchmark's figures: its numbers by group (one bar chart per dict of numbers,
    the top level's included) and any list of numbers as a line."""
    groups: dict[str, dict[str, float]] = {"headline figures": {}}
    series: dict[str, list[float]] = {}
    for key, value in result.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            groups["headline figures"][key] = value
        elif isinstance(value, dict):
            nums = {k: v for k, v in value.items() if isinstance(v, int | float) and not isinstance(v, bool)}
            if nums:
                groups[key] = nums
        elif isinstance(value, list) and value and all(isinstance(v, int | float) for v in value):
            series[key] = value
    out = []
    for i, (name, nums) in enumerate(groups.items()):
        if not nums:
            continue
        data = [
            {
                "type": "bar",
                "orientation": "h",
                "x": list(nums.values()),
                "y": list(nums),
                "text": [f"{v:,}" for v in nums.values()],
                "textposition": "auto",
                "marker": {"color": "#4c7fd9"},
            }
        ]
        look = layout("", "", height=max(200, 40 + 28 * len(nums)), hovermode="closest")
        # Bytes beside seconds: a log axis keeps both readable (when every figure is positive).
        spread = min(nums.values()) > 0 and max(nums.values()) > 1000 * min(nums.values())
        look["xaxis"]["type"] = "log" if spread else "linear"
        look["yaxis"] = {"automargin": True, "autorange": "reversed"}
        out.append(Figure(f"fig-bench-{i}", name, data, look))
    for i, (name, values) in enumerate(series.items()):
        out.append(
            Figure(f"fig-series-{i}", name, [line(name, list(range(len(values))), values, "#4c7fd9")], layout("index"))
        )
    return out
