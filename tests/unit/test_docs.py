"""The documentation stays true to the tree: every repository path the docs cite exists, every
package is named in docs/architecture.md, docs/modules.md is the index ``cluster/docindex.py``
renders, every module has a docstring, and no docstring or comment cites a document outside the
repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster import docindex

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("actors", "cluster", "tests")

# ---- repository paths cited by the docs -------------------------------------------------------

_SPAN = re.compile(r"`((?:[^`\n]|\n(?!\s*\n))+)`")  # may wrap a line, never a paragraph
_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# A path: segments of word characters, dots, dashes (and glob stars), separated by slashes.
_PATH = re.compile(r"^[\w.*-]+(/[\w.*-]+)*/?$")
_PLACEHOLDER = re.compile(r"[<>{}$]|\.\.\.")


def top_level(root: Path) -> set[str]:
    """The repository's own top-level files and folders (a cited path must start with one)."""
    return {p.name for p in root.iterdir() if not p.name.startswith(".") and not p.name.endswith(".egg-info")}


def _candidate(token: str, tops: set[str]) -> str | None:
    """``token`` as a repository path, or None when it does not look like one of ours."""
    token = token.strip("'\"()[],;:").split("::", 1)[0]
    token = re.sub(r":\d+$", "", token)
    if not token or _PLACEHOLDER.search(token) or not _PATH.match(token):
        return None
    first = token.split("/", 1)[0]
    if first not in tops or (first == token and "." not in token and not token.endswith("/")):
        return None  # a bare word (``actors``, ``tests``) names a thing, not a path
    return token


def cited_paths(text: str, tops: set[str]) -> list[tuple[int, str]]:
    """(line, path) for every repository path in ``text``'s backticked spans (which may wrap
    a line), code blocks and link targets."""
    found: list[tuple[int, str]] = []
    prose: list[tuple[int, str]] = []  # (first line, text) of each run of lines outside code blocks
    fenced, start, run = False, 1, []
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            prose.append((start, "\n".join(run)))
            start, run = n + 1, []
        elif fenced:
            found += [(n, p) for p in map(lambda t: _candidate(t, tops), line.split()) if p]
        else:
            run.append(line)
    prose.append((start, "\n".join(run)))
    for first, block in prose:
        for m in _SPAN.finditer(block):
            n = first + block.count("\n", 0, m.start())
            found += [(n, p) for p in map(lambda t: _candidate(t, tops), m.group(1).split()) if p]
        for i, line in enumerate(block.split("\n")):
            links = _LINK.findall(_SPAN.sub("", line))
            found += [(first + i, t) for t in links if "://" not in t and not t.startswith("#")]
    return sorted(found, key=lambda f: f[0])  # by line; in text order within one


def exists(path: str, doc: Path, root: Path) -> bool:
    """Whether ``path`` (from the root, or for a link from the citing document's folder)
    names something in the tree; a glob must match something."""
    path = path.split("#", 1)[0]
    for base in (root, doc.parent):
        if any(ch in path for ch in "*?"):
            if any(base.glob(path)):
                return True
        elif (base / path).exists():
            return True
    return False


def _docs() -> list[Path]:
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [d for d in docs if d.exists()]


@pytest.mark.parametrize(
    "text, paths",
    [
        (
            "see `cluster/frontend/handler.py` and `cluster/scheduler/`",
            ["cluster/frontend/handler.py", "cluster/scheduler/"],
        ),
        ("`kubemu run scenarios/chaos/node-kill.yaml --trace /tmp/t`", ["scenarios/chaos/node-kill.yaml"]),
        (
            "`tests/serve/test_x.py::test_y` and `cluster/api/kinds.py:12`",
            ["tests/serve/test_x.py", "cluster/api/kinds.py"],
        ),
        ("```\nmake test\npython -m cluster.docindex > docs/modules.md\n```", ["docs/modules.md"]),
        ("[scale](scale.md), [site](https://x.io/a.md), [top](#layout)", ["scale.md"]),
        (
            "a span that wraps (`kubemu run\nscenarios/quickstart.yaml`) and `docs/`",
            ["scenarios/quickstart.yaml", "docs/"],
        ),
        ("a lone ` backtick\n\nends with its paragraph: `tests/serve/`", ["tests/serve/"]),
        # upstream paths, placeholders, bare words, module names and URLs are not ours to check
        ("`pkg/controller/deployment` `scenarios/<name>.yaml` `cluster` `cluster.api` `/apis/apps/v1`", []),
        ("`tests/unit/.../test_x.py` `docs/{a,b}.md` `$HOME/.kube/config`", []),
    ],
)
def test_the_extractor_finds_repository_paths_only(text, paths):
    assert [p for _, p in cited_paths(text, {"cluster", "docs", "scenarios", "tests"})] == paths


def test_exists_follows_globs_and_the_citing_folder(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "scale.md").write_text("")
    doc = tmp_path / "docs" / "a.md"
    assert exists("docs/scale.md", doc, tmp_path) and exists("scale.md", doc, tmp_path)
    assert exists("docs/*.md", doc, tmp_path) and not exists("docs/*.py", doc, tmp_path)
    assert not exists("docs/patch.py", doc, tmp_path)


def test_every_path_the_docs_cite_exists():
    tops = top_level(ROOT)
    missing = [
        f"{doc.relative_to(ROOT)}:{n}: {path}"
        for doc in _docs()
        for n, path in cited_paths(doc.read_text(encoding="utf-8"), tops)
        if not exists(path, doc, ROOT)
    ]
    assert not missing, "the docs cite paths that do not exist:\n" + "\n".join(missing)


def test_every_module_name_the_docs_cite_exists():
    """A bare module name (`handler.py`) must be the name of some file in the tree."""
    names = {p.name for top in top_level(ROOT) if (ROOT / top).is_dir() for p in (ROOT / top).rglob("*.py")}
    missing = [
        f"{doc.relative_to(ROOT)}:{n}: {token}"
        for doc in _docs()
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        for span in _SPAN.findall(line)
        for token in (t.strip("'\"()[],;:") for t in span.split())
        if re.fullmatch(r"\w+\.py", token) and token not in names
    ]
    assert not missing, "the docs name modules that do not exist:\n" + "\n".join(missing)


# ---- docs/architecture.md names every package ----------------------------------------------------


@pytest.fixture(scope="module")
def tree() -> list[docindex.Module]:
    """Every module of the tree, parsed once for the tests below."""
    return docindex.modules(ROOT)


def test_architecture_names_every_package(tree):
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted({m.package for m in tree})
    unnamed = [p for p in packages if f"{p}/" not in text]
    assert not unnamed, f"docs/architecture.md never names these packages (as `{{path}}/`): {unnamed}"


_SECTION_CITE = re.compile(r"architecture\.md\s+§(\d+)")


def test_section_citations_name_existing_sections():
    """``docs/architecture.md §N`` in code, tests or docs names a section the document has."""
    sections = set(re.findall(r"^## (\d+)\.", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), re.M))
    files = [
        p for top in (*SOURCE_DIRS, "docs") for p in sorted((ROOT / top).rglob("*.py" if top != "docs" else "*.md"))
    ]
    wrong = [
        f"{p.relative_to(ROOT)}: §{n}"
        for p in [*files, ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "pyproject.toml"]
        if p.exists()
        for n in _SECTION_CITE.findall(p.read_text(encoding="utf-8"))
        if n not in sections
    ]
    assert not wrong, f"these cite a section docs/architecture.md does not have ({sorted(sections, key=int)}): {wrong}"


# ---- docs/modules.md --------------------------------------------------------------------------------


def test_first_sentence():
    assert docindex.first_sentence("Owns the queue (e.g. activeQ). Then more.") == "Owns the queue (e.g. activeQ)."
    assert docindex.first_sentence("One line\nwrapped here.\n\nSecond paragraph.") == "One line wrapped here."
    assert docindex.first_sentence("No full stop") == "No full stop"
    assert docindex.first_sentence("Version v1.33 is served. Rest.") == "Version v1.33 is served."


def test_render_groups_by_package_with_the_package_first(tmp_path):
    (tmp_path / "cluster" / "b").mkdir(parents=True)
    (tmp_path / "actors").mkdir()
    (tmp_path / "cluster" / "__init__.py").write_text('"""Logic."""\n')
    (tmp_path / "cluster" / "b" / "z.py").write_text('"""Zed. More."""\n')
    (tmp_path / "cluster" / "b" / "__init__.py").write_text("")
    (tmp_path / "cluster" / "a.py").write_text("x = 1\n")
    text = docindex.render(docindex.modules(tmp_path))
    body = text.split("\n\n", 2)[2]
    assert body == (
        "## `cluster/`\n\n- `__init__.py`: Logic.\n- `a.py`: (no docstring)\n\n"
        "## `cluster/b/`\n\n- `__init__.py`: (no docstring)\n- `z.py`: Zed.\n"
    )


def test_every_module_has_a_docstring(tree):
    lacking = [m.path for m in tree if m.summary is None]
    assert not lacking, f"these modules have no docstring (say what the module owns and who calls it): {lacking}"


def test_the_module_index_is_current(tree):
    current = (ROOT / "docs" / "modules.md").read_text(encoding="utf-8")
    assert current == docindex.render(tree), (
        f"docs/modules.md is stale: regenerate it from the repository root with `{docindex.COMMAND}`"
    )


# ---- no citation of a document outside the repository ---------------------------------------------

# The reference documents the project was written from live outside the repository; code must
# stand alone (name the upstream rule, or cite docs/architecture.md).
_OUTSIDE = re.compile(
    r"reference\s+§|k8s-[a-z-]+(\.md)?\s*§|k8s-[a-z-]+\.md|shared/(reference|seeds)|\.\./shared/|\bseeds?\s+\d{3}"
)


@pytest.mark.parametrize(
    "line, cites",
    [
        ("# What the eviction manager ranks by (reference §3.4).", True),
        ('"""Owns the rules of reference k8s-workloads.md §1.2."""', True),
        ("(k8s-api-fidelity §12, k8s-behaviour §4)", True),
        ("see ../shared/reference/yunikorn.md", True),
        ("the two things seed 004 says a GPU container needs; seeds 000/002", True),
        ("upstream's RunFilterPluginsWithNominatedPods (docs/architecture.md §5)", False),
        ("section 6.1 of docs/yunikorn.md; the k8s-app label; a seeded RNG (seed 7)", False),
    ],
)
def test_outside_citation_pattern(line, cites):
    assert bool(_OUTSIDE.search(line)) is cites


def test_no_source_or_doc_cites_a_document_outside_the_repository():
    here = Path(__file__).resolve()
    sources = [p for top in SOURCE_DIRS for p in sorted((ROOT / top).rglob("*.py"))]
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in [*sources, *_docs()]
        if p != here
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if _OUTSIDE.search(line)
    ]
    assert not hits, "cite upstream's rule or docs/architecture.md instead of an outside document:\n" + "\n".join(hits)
