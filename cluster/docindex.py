"""The module index, ``docs/modules.md``: every module under ``cluster/`` and ``actors/`` with the
first sentence of its docstring, grouped by package.

Run from the repository root to regenerate it:

    python -m cluster.docindex > docs/modules.md

``tests/unit/test_docs.py`` renders the index in memory and fails when the file is stale or a
module has no docstring. Modules are read with ``ast``, never imported, so the index can be built
without Ray or any optional dependency.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("actors", "cluster")
COMMAND = "python -m cluster.docindex > docs/modules.md"
MISSING = "(no docstring)"

# A sentence ends at '.', '!' or '?' followed by a space and not inside these abbreviations.
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
_END = re.compile(r"[.!?](?=\s|$)")


@dataclass(frozen=True)
class Module:
    """One module: its path from the repository root and its docstring's first sentence."""

    path: str
    package: str
    summary: str | None


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    text = " ".join(paragraph.split())
    for m in _END.finditer(text):
        head = text[: m.end()]
        if not head.endswith(_ABBREVIATIONS):
            return head
    return text


def read_module(path: Path, root: Path) -> Module:
    """The index entry of one source file (parsed, not imported)."""
    rel = path.relative_to(root).as_posix()
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=rel))
    return Module(rel, path.parent.relative_to(root).as_posix(), first_sentence(doc) if doc else None)


def modules(root: Path = ROOT) -> list[Module]:
    """Every module under the indexed packages, ordered by package, the package's own
    ``__init__`` first."""
    found = [read_module(p, root) for top in PACKAGES for p in (root / top).rglob("*.py")]
    return sorted(found, key=lambda m: (m.package, not m.path.endswith("/__init__.py"), m.path))


def render(mods: list[Module]) -> str:
    """``docs/modules.md`` for ``mods``: one section per package, one line per module."""
    out = [
        "# Module index",
        "",
        "Every module under `cluster/` and `actors/` with the first sentence of its docstring,",
        "grouped by package. Generated: do not edit by hand; regenerate it from the repository root",
        f"with `{COMMAND}`. How the packages fit together is in `docs/architecture.md`.",
    ]
    package = None
    for m in mods:
        if m.package != package:
            package = m.package
            out += ["", f"## `{package}/`", ""]
        out.append(f"- `{m.path.rsplit('/', 1)[-1]}`: {m.summary or MISSING}")
    return "\n".join(out) + "\n"


def main() -> None:
    """Print the index for the repository this module belongs to."""
    sys.stdout.write(render(modules()))


if __name__ == "__main__":
    main()
