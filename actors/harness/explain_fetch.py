"""Where ``kubemu explain pod NS/NAME`` finds a pod's ``SchedulingResult``.

Owns the two sources: a running ``kubemu serve`` (read through its kubeconfig: the server,
the CA and the bearer token it wrote; a plain GET of
``/apis/kubemu.io/v1alpha1/namespaces/NS/schedulingresults/NAME``) and a run's JSON report
(its ``schedulingResults`` section). Each answers the report's shape (``namespace``,
``name`` and the object's status fields) or raises ``ExplainError`` with one line.
Called by ``actors/harness/cli.py``; the text comes from ``cluster/scheduler/explain_text.py``.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import yaml

from cluster.scheduler.explain_text import from_object

PATH = "/apis/kubemu.io/v1alpha1/namespaces/{ns}/schedulingresults/{name}"
TIMEOUT = 10.0


class ExplainError(Exception):
    """One line for the user; ``code`` is the exit code (1: not explained, 2: bad input)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def split_name(ref: str) -> tuple[str, str]:
    """``NS/NAME`` or ``NAME`` (namespace default)."""
    ns, _, name = ref.rpartition("/")
    if not name or "/" in ns:
        raise ExplainError(f'pod: "{ref}" is not NAMESPACE/NAME or NAME')
    return ns or "default", name


def _not_explained(ns: str, name: str) -> ExplainError:
    return ExplainError(
        f"pod {ns}/{name}: no SchedulingResult (the pod does not exist, or no attempt of it was recorded: "
        "with explain: failed only pods that failed an attempt are)",
        1,
    )


def from_report(path: str, ns: str, name: str) -> dict[str, Any]:
    try:
        with open(path) as f:
            report = json.load(f)
    except OSError as e:
        raise ExplainError(f"--report: cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise ExplainError(f"--report: {path} is not a JSON report: {e}") from None
    if not isinstance(report, dict) or not isinstance(report.get("schedulingResults"), list):
        raise ExplainError(f"--report: {path} has no schedulingResults section (a report of an older kubemu?)")
    for entry in report["schedulingResults"]:
        if isinstance(entry, dict) and entry.get("namespace") == ns and entry.get("name") == name:
            return entry
    raise _not_explained(ns, name)


def _config(path: str) -> tuple[str, dict[str, str], ssl.SSLContext | None]:
    """(server, headers, TLS context) of the kubeconfig's current context."""
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise ExplainError(f"--kubeconfig: cannot read {path}: {e.strerror}") from None
    except yaml.YAMLError:
        raise ExplainError(f"--kubeconfig: {path} is not YAML") from None
    try:
        ctx_name = doc["current-context"]
        ctx = next(c["context"] for c in doc["contexts"] if c["name"] == ctx_name)
        cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == ctx["cluster"])
        user: dict[str, Any] = next((u["user"] for u in doc.get("users") or [] if u["name"] == ctx.get("user")), {})
        server = cluster["server"]
    except (KeyError, TypeError, StopIteration):
        raise ExplainError(f"--kubeconfig: {path} has no usable current context (cluster server and user)") from None
    headers = {"Accept": "application/json"}
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    tls = None
    if server.startswith("https:"):
        ca = cluster.get("certificate-authority-data")
        tls = ssl.create_default_context(cadata=base64.b64decode(ca).decode() if ca else None)
    return server, headers, tls


def from_server(kubeconfig: str, ns: str, name: str) -> dict[str, Any]:
    server, headers, tls = _config(kubeconfig)
    url = server.rstrip("/") + PATH.format(ns=urllib.parse.quote(ns), name=urllib.parse.quote(name))
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT, context=tls) as r:
            obj = json.loads(r.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise _not_explained(ns, name) from None
        detail = _status_message(e)
        raise ExplainError(f"{server}: {e.code} {detail}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise ExplainError(f"--kubeconfig: cannot reach {server}: {reason}") from None
    return from_object(obj)


def _status_message(e: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(e.read()).get("message") or e.reason)
    except ValueError:
        return str(e.reason)
