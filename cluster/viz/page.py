"""One HTML page that carries its own charts: the template, the style and Plotly.

Owns putting a page together from package data (``assets/``: the template, the style
sheet, the small script that hands the figures to Plotly) and Plotly's own bundle, read
from the ``plotly`` Python package. A self-contained page inlines the bundle once, so it
opens with no network; the live view of ``kubemu serve`` links it instead
(``PLOTLY_PATH``, served from the same package). Called by ``reportpage.py`` (run and bench
reports) and ``cluster/frontend/ui.py``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from .figures import Figure

PLOTLY_PATH = "/ui/assets/plotly.min.js"


@cache
def asset(name: str) -> str:
    """A file of ``assets/`` (package data: kept in a non-editable install too)."""
    return (resources.files("cluster.viz") / "assets" / name).read_text(encoding="utf-8")


@cache
def plotly_js() -> str:
    """The plotly.js bundle the ``plotly`` package ships (its version is the package's)."""
    return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text(encoding="utf-8")


def script_json(value: Any) -> str:
    """JSON safe inside a <script> element: no ``</`` can end it early."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


def inline_script(code: str) -> str:
    return "<script>" + code.replace("</script", "<\\/script") + "</script>"


def render(title: str, body: str, figures: list[Figure], *, scripts: list[str] | None = None, head: str = "") -> str:
    """The page. ``scripts``: the <script> elements after the figures' JSON; by default
    Plotly inlined and the script that draws the figures."""
    if scripts is None:
        scripts = [inline_script(plotly_js()), inline_script(asset("charts.js"))]
    parts = {
        "{{TITLE}}": html.escape(title),
        "{{STYLE}}": asset("style.css"),
        "{{HEAD}}": head,
        "{{BODY}}": body,
        "{{FIGURES}}": script_json([f.spec() for f in figures]),
        "{{SCRIPTS}}": "\n".join(scripts),
    }
    page = asset("page.html")
    for key, value in parts.items():  # one pass per key, in order: a value never holds a later key's text
        page = page.replace(key, value, 1)
    return page


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


Cell = str | tuple[str, str]  # escaped HTML, or (a class, escaped HTML)


def table(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """A table of already escaped cells."""

    def cell(c: Cell) -> str:
        return f'<td class="{c[0]}">{c[1]}</td>' if isinstance(c, tuple) else f"<td>{c}</td>"

    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def chart(fig: Figure, note: str = "") -> str:
    extra = f'<p class="note">{note}</p>' if note else ""
    return f'<section><h2>{esc(fig.title)}</h2><div class="chart" id="{fig.id}"></div>{extra}</section>'


def cards(items: list[tuple[str, Any]]) -> str:
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="v">{esc(v)}</div><div class="k">{esc(k)}</div></div>' for k, v in items
        )
        + "</div>"
    )
