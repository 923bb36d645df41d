"""Headless Chromium for the browser tests (tests/viz, tests/serve/test_ui.py): Debian's
package at /usr/bin/chromium driven by playwright, never a downloaded browser. A test
using ``browser_page`` is skipped, saying why, only where that chromium is absent."""

from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = pathlib.Path(__file__).resolve().parent / "artifacts"  # git-ignored screenshots
needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"no browser: {CHROMIUM} is absent (apt-get install chromium; .ci/run does)"
)


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 900):
    """(page, console errors): a fresh profile each time; page errors count as console errors."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        ctx = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": width, "height": height},
            ignore_https_errors=True,  # kubemu serve's CA is made at its start
        )
        try:
            page = ctx.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, errors
        finally:
            ctx.close()


def screenshot(page, name: str) -> pathlib.Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path
