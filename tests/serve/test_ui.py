"""``kubemu serve``'s web view at /ui (issue 41): who may open it (the kubeconfig's token,
or the one-time link printed at start), its refusals as Kubernetes Statuses, and in
headless Chromium that it draws the cluster and follows a pod created with kubectl within
2 s."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import sys
import time
import urllib.error
import urllib.request

import pytest
from servedcluster import Served, needs_kubectl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kubemu_browser import browser_page, needs_chromium, screenshot  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("ui"))
    line = ""
    while "the web view" not in line:  # printed before the API answers
        line = s.proc.stdout.readline()
    s.login = line.rsplit(" ", 1)[1].strip()
    s.base = f"https://127.0.0.1:{s.port}"
    yield s
    s.stop()


def _get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_ui_needs_the_token_or_the_login_link(ui):
    status, _, body = _get(f"{ui.base}/ui")
    assert status == 401
    assert json.loads(body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    status, headers, body = _get(f"{ui.base}/ui", {"Authorization": f"Bearer {ui.token}"})
    assert status == 200 and b"kubemu-figures" in body and headers["Content-Type"].startswith("text/html")
    status, _, _ = _get(f"{ui.base}/ui?token=wrong")
    assert status == 401
    status, headers, _ = _get(f"{ui.base}/ui?token={ui.token}")
    assert status == 303 and headers["Location"] == "/ui" and "HttpOnly" in headers["Set-Cookie"]
    cookie = headers["Set-Cookie"].split(";")[0]
    assert _get(f"{ui.base}/ui", {"Cookie": cookie})[0] == 200
    assert _get(f"{ui.base}/ui", {"Cookie": "kubemu-ui=forged"})[0] == 401


def test_ui_refusals_are_statuses(ui):
    auth = {"Authorization": f"Bearer {ui.token}"}
    status, _, body = _get(f"{ui.base}/ui/assets/nope.js", auth)
    assert (status, json.loads(body)["message"]) == (404, 'the web view has no asset "nope.js"')
    status, _, body = _get(f"{ui.base}/ui/api/pod/default/absent", auth)
    assert (status, json.loads(body)["reason"]) == (404, "NotFound")
    req = urllib.request.Request(f"{ui.base}/ui", method="POST", headers=auth, data=b"")
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, context=ctx, timeout=10)
    assert e.value.code == 405
    assert json.loads(e.value.read())["message"] == "the web view answers GET only, not POST"
    assert _get(f"{ui.base}/healthz")[0] == 200  # the server goes on


@needs_chromium
@needs_kubectl
def test_ui_in_a_browser_follows_kubectl_within_two_seconds(ui):
    with browser_page() as (page, errors):
        page.goto(ui.login)  # the one-time link: sets the cookie, then /ui
        page.wait_for_function("window.kubemuUi && window.kubemuUi.updates > 0", timeout=20000)
        assert page.url == f"{ui.base}/ui"
        assert page.locator("#pools tbody tr").count() == 1  # one pool of 3 nodes
        assert page.locator("#pools td").nth(1).inner_text() == "3"
        ui.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=4")
        t0 = time.monotonic()
        ui.kubectl("run", "ui-pod", "--image=nginx")
        page.wait_for_selector("#recent >> text=default/ui-pod", timeout=5000)
        assert time.monotonic() - t0 < 2.0
        big = '{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"requests":{"cpu":"64"}}}]}}'
        ui.kubectl("run", "big", "--image=nginx", "--overrides", big)
        page.wait_for_selector("#pending >> text=Insufficient cpu", timeout=5000)
        last = page.evaluate("window.kubemuUi.last")
        assert last["phases"]["Running"] == 5 and last["queues"]["unschedulable"] == 1
        points = page.evaluate("document.getElementById('live-queue').data[1].y.length")
        assert points >= 2  # the live charts grew
        time.sleep(1.5)
        shot = screenshot(page, "ui-cluster.png")
        page.goto(f"{ui.base}/ui#pod/default/big")
        page.wait_for_selector("#pod-events >> text=FailedScheduling", timeout=5000)
        pod_shot = screenshot(page, "ui-pod.png")
        assert errors == []
        if os.environ.get("KUBEMU_SCREENSHOTS") == "1":
            for s in (shot, pod_shot):
                shutil.copy(s, os.path.join(ROOT, "docs", "images", s.name))
    # the login link worked once: a second use is refused
    assert _get(ui.login)[0] == 401
