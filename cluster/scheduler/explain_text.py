"""A ``SchedulingResult`` as text a person reads: what ``kubemu explain pod NS/NAME`` prints.

Owns the rendering of one pod's explanation (``explain.py`` writes the object; the
scenario report's ``schedulingResults`` holds the same fields beside ``namespace`` and
``name``): per attempt, the FailedScheduling message, the Filter plugins' reasons with their
node counts and the first nodes rejected, the preemption outcome, and for a placed pod the
top nodes of each Score plugin (raw, normalised, weighted) and the final ranking. Called by
the CLI (``actors/harness/cli.py``); pure: a dict in, a string out.
"""

from __future__ import annotations

from typing import Any


def from_object(obj: dict[str, Any]) -> dict[str, Any]:
    """The report's shape (namespace, name and the status fields) of a served object."""
    meta = obj.get("metadata") or {}
    return {"namespace": meta.get("namespace", ""), "name": meta.get("name", ""), **(obj.get("status") or {})}


def columns(rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Rows aligned in columns (the first row is the header), numbers to the right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    numeric = [all(r[i].lstrip("-").isdigit() or not r[i] for r in rows[1:]) for i in range(len(widths))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric)]
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def render(result: dict[str, Any]) -> str:
    history = result.get("history") or []
    lines = [
        f"Pod {result.get('namespace', '')}/{result.get('name', '')} (uid {result.get('podUID', '')}), "
        f"scheduler {result.get('schedulerName', '')}",
        f"Result: {result.get('result', '')}"
        + (f" on {result['node']}" if result.get("node") else "")
        + f"; {result.get('attempts', 0)} attempt(s) explained, the last {len(history)} kept",
    ]
    for attempt in history:
        lines.append("")
        lines += _attempt(attempt)
    return "\n".join(lines) + "\n"


def _attempt(a: dict[str, Any]) -> list[str]:
    head = f"Attempt {a.get('attempt', '?')} at {a.get('time', '')}: {a.get('result', '')}"
    if a.get("node"):
        head += f" (node {a['node']})"
    lines = [head]
    if "evaluated" in a:
        lines.append(f"  {a['evaluated']} of {a.get('nodes', 0)} nodes filtered, {a.get('feasible', 0)} feasible")
    if a.get("message"):
        lines.append(f"  {a['message']}")
    if a.get("note"):
        lines.append(f"  note: {a['note']}")
    if a.get("filters"):
        lines.append("  Filter:")
        lines += columns(_filter_rows(a["filters"]), "    ")
    if a.get("preemption"):
        lines += _preemption(a["preemption"])
    if a.get("scores"):
        lines.append("  Score (top nodes per plugin):")
        lines += columns(_score_rows(a["scores"]), "    ")
    if a.get("ranking"):
        lines.append("  Ranking:")
        lines += columns(_ranking_rows(a["ranking"], a.get("node", "")), "    ")
    return lines


def _filter_rows(filters: list[dict[str, Any]]) -> list[list[str]]:
    rows = [["PLUGIN", "REASON", "NODES", "FIRST REJECTED"]]
    for f in filters:
        plugin = f.get("plugin", "") + (f" ({f['point']})" if f.get("point") else "")
        for r in f.get("reasons") or []:
            names = r.get("nodes") or []
            more = r.get("count", 0) - len(names)
            shown = ", ".join(names) + (f" and {more} more" if more > 0 and names else "")
            rows.append([plugin, r.get("reason", ""), str(r.get("count", 0)), shown])
            plugin = ""
    return rows


def _score_rows(scores: list[dict[str, Any]]) -> list[list[str]]:
    rows = [["PLUGIN", "WEIGHT", "NODE", "RAW", "NORMALIZED", "WEIGHTED"]]
    for s in scores:
        plugin, weight = s.get("plugin", ""), str(s.get("weight", 1))
        for t in s.get("top") or []:
            rows.append([plugin, weight, t["node"], str(t["raw"]), str(t["normalized"]), str(t["weighted"])])
            plugin = weight = ""
    return rows


def _ranking_rows(ranking: list[dict[str, Any]], chosen: str) -> list[list[str]]:
    plugins = list((ranking[0].get("byPlugin") or {}).keys())
    rows = [["RANK", "NODE", "TOTAL", *plugins, ""]]
    for i, r in enumerate(ranking, 1):
        by = r.get("byPlugin") or {}
        mark = "chosen" if r["node"] == chosen else ""
        rows.append([str(i), r["node"], str(r["total"]), *(str(by.get(p, "")) for p in plugins), mark])
    return rows


def _preemption(p: dict[str, Any]) -> list[str]:
    if not p.get("nominatedNode"):
        return [f"  Preemption did not help: {p.get('message', '')}"]
    lines = [f"  Preemption: nominated {p['nominatedNode']}, {p.get('victimCount', 0)} victim(s)"]
    for v in p.get("victims") or []:
        lines.append(f"    {v['namespace']}/{v['name']}: {v['why']}")
    if p.get("clearedNominations"):
        lines.append(f"    nominations cleared: {', '.join(p['clearedNominations'])}")
    return lines
