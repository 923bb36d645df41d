"""Property: no sequence of API calls stops ``kubemu serve``, and every answer is Kubernetes.

One ``kubemu serve --time-scale 20`` (3 nodes) takes sequences of calls drawn by
``hypothesis``: creates of pods that fit and of pods that never fit (1000 CPUs, a
nodeSelector no node has, an absent extended resource), deletes (with and without grace,
of objects that exist and that do not), patches of the four kinds (valid and malformed),
dry runs (``All`` and a bad value), malformed bodies (truncated JSON, not an object, the
wrong kind, 3 MiB + 1, binary junk, YAML, deep nesting), unknown paths and methods, short
watches (one at a resourceVersion that is too old or too new), lists with selectors and
``fieldValidation`` of every value. After EVERY call: the answer is an HTTP status with a
JSON body that is a Kubernetes object, list or ``Status`` (a 5xx only as a ``Status``),
never a connection error or a plain-text error, and ``/readyz`` answers 200.

The run lasts until 30 emulated minutes have passed since the first pod that never fits
was created (``SOAK``): the scheduler retries such pods every 5 emulated minutes, and the
server once exited there (``Stuck: scheduler: asks to run again ...``).

Single requests follow, each a test of its own: what the HTTP layer answers before the API
sees a request (unknown methods, a newline in a name, a long URL or token), bodies nested
deeper than the server can encode, a YAML alias bomb, a body in an unknown format, and
what a dry run, a bad ``dryRun`` or ``fieldValidation`` value and a DELETE answer,
as upstream's apiserver does.

Reproducing: the calls come from ``@seed(SEED)`` (no example database); a failure names
every distinct violation with its exact request and answer, and ``hypothesis`` prints the
sequence that was running. The server's answers also depend on what earlier sequences
left behind and on the paced clock, so the whole test is the unit to re-run.
"""

from __future__ import annotations

import collections
import http.client
import json
import re
import ssl
import threading
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote, urlencode

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis import strategies as st
from servedcluster import Served

SEED = 20261205
EXAMPLES = 150  # sequences of 1 to 20 calls: about 80 s of calls on a 2-core machine
TIME_SCALE = 20
SOAK = 30 * 60  # emulated seconds the server must outlive the first pod that never fits
MAX_BODY = 3 * 1024 * 1024

NS = "/api/v1/namespaces/default"
FIT = ("fit-0", "fit-1", "fit-2")
NEVER = ("never-cpu", "never-sel", "never-gpu")  # never fit; the calls may delete them
ANCHORS = ("anchor-cpu", "anchor-sel", "anchor-gpu")  # never fit; no call deletes or reshapes them
MISSING = ("missing-0",)
CMS = ("cm-0", "cm-1")
TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)

CTX = ssl.create_default_context()
CTX.check_hostname, CTX.verify_mode = False, ssl.CERT_NONE


# -- the calls ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    method: str
    path: str  # already percent-encoded
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | int | None = None  # an int: that many bytes of a ConfigMap (kept out of reprs)
    auth: str = "token"  # "token", "none" or "wrong"

    @property
    def url(self) -> str:
        return self.path + ("?" + urlencode(self.query) if self.query else "")

    @property
    def watch(self) -> bool:
        return any(k == "watch" and v.lower() in ("true", "1") for k, v in self.query)

    def payload(self) -> bytes | None:
        if isinstance(self.body, int):
            head, tail = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"', b'"}}'
            return head + b"x" * (self.body - len(head) - len(tail)) + tail
        return self.body

    def __repr__(self) -> str:
        body = f"<{self.body} bytes>" if isinstance(self.body, int) else (self.body[:300] if self.body else self.body)
        extra = f" {dict(self.headers)}" if self.headers else ""
        auth = "" if self.auth == "token" else f" auth={self.auth}"
        return f"Call({self.method} {self.url}{extra}{auth} body={body!r})"


def dumps(obj) -> bytes:
    return json.dumps(obj).encode()


def pod(name: str, how: str = "fit", labels: dict | None = None) -> dict:
    """A pod that fits (``fit``) or never does: ``cpu`` asks 1000 CPUs, ``sel`` a label no
    node has, ``gpu`` an extended resource no node offers."""
    container: dict = {"name": "c", "image": "registry.example/app:1", "resources": {"requests": {"cpu": "100m"}}}
    spec: dict = {"containers": [container], "terminationGracePeriodSeconds": 5}
    if how == "cpu":
        container["resources"]["requests"]["cpu"] = "1000"
    elif how == "sel":
        spec["nodeSelector"] = {"kubemu.test/nothing": "has-this"}
    elif how == "gpu":
        container["resources"] = {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}
    role = "anchor" if name.startswith("anchor-") else "fuzz"
    meta = {"name": name, "labels": labels or {"app": "fuzz", "role": role}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def how_of(name: str) -> str:
    return name.split("-")[1] if name.startswith(("never-", "anchor-")) else "fit"


def anchor_calls() -> list[Call]:
    return [Call("POST", f"{NS}/pods", body=dumps(pod(n, how_of(n)))) for n in ANCHORS]


def deep(depth: int, name: str) -> bytes:
    return b'{"metadata":{"name":"%s"},"x":' % name.encode() + b"[" * depth + b"]" * depth + b"}"


def weighted(*pairs: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """One of the strategies, each drawn in proportion to its weight (``st.one_of`` would
    count a strategy given twice once)."""
    table = [s for weight, s in pairs for _ in range(weight)]
    return st.sampled_from(range(len(table))).flatmap(table.__getitem__)


def opt(values):
    """None (the parameter is left out) most of the time, else one of ``values``."""
    return weighted((3, st.none()), (1, st.sampled_from(values)))


def query(**params) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    return st.fixed_dictionaries({k: opt(v) for k, v in params.items()}).map(
        lambda d: tuple((k, v) for k, v in d.items() if v is not None)
    )


DRY = ("All", "All", "foo", "")
VALIDATION = ("Strict", "Warn", "Ignore", "bogus", "strict")
LABELS = ("app=fuzz", "app in (fuzz,web)", "!app", "app notin (x)", "role!=anchor", "=bad", "app==", "a,,b", "x in (")
FIELDS = (
    "spec.nodeName=node-0",
    "status.phase!=Running,status.phase!=Succeeded",
    "metadata.name=fit-0",
    "metadata.namespace=default",
    "spec.bogus=1",
    "===",
    "involvedObject.kind=Pod",
)


# Nesting depths around the JSON parser's and encoder's limits (orjson: 1024 and 254).
DEPTHS = (2, 64, 254, 255, 256, 300, 512, 1000, 1023, 1024, 1025, 2000)
JUNK_BODIES = weighted(
    (3, st.sampled_from([b"", b"[]", b"[1,2]", b'"pod"', b"42", b"null", b"true", b"{", b'{"metadata":'])),
    (2, st.binary(min_size=1, max_size=256)),
    (
        4,
        st.sampled_from(
            [
                b'{"metadata":{"name":"dup","name":"dup2"}}',
                b'{"metadata":{"name":7}}',
                b'{"metadata":"x"}',
                b'{"metadata":{"name":"n\xff"}}',
                b'{"metadata":{"name":"num"},"x":1e400}',
                b'{"metadata":{"name":"num"},"x":123456789012345678901234567890}',
                b'{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"}}',
                b'{"apiVersion":"apps/v1","kind":"Pod","metadata":{"name":"wrong-group"}}',
                b'{"kind":"Pod","metadata":{"name":"nocontainers"},"spec":{"containers":"x"}}',
                b'{"metadata":{"name":"badcpu"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}',
                b'{"metadata":{"name":"negcpu"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"-1"}}}]}}',
                b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: yaml-in-json\nspec:\n  containers: [{name: c, image: x}]\n",
                b"- a\n- : [\n",
                b"\xef\xbb\xbf{}",
            ]
        ),
    ),
    (2, st.sampled_from(DEPTHS).map(lambda d: deep(d, f"deep-{d}"))),
    (1, st.just(MAX_BODY + 1)),
)
CONTENT_TYPES = st.sampled_from(
    [
        None,
        "application/json",
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        "text/plain",
        "application/cbor",
        "application/json; charset=utf-16",
    ]
)


def with_ctype(ctype: str | None) -> tuple[tuple[str, str], ...]:
    return () if ctype is None else (("Content-Type", ctype),)


@st.composite
def creates(draw) -> Call:
    name = draw(st.sampled_from(FIT + NEVER + ANCHORS + ("fit-0", "fit-1")))
    obj = pod(name, how_of(name))
    if draw(st.booleans()) and not name.startswith("anchor-"):
        obj["spec"]["bogusField"] = 1  # an unknown field: Strict refuses it, Warn warns, Ignore drops it
        obj["metadata"]["labelz"] = {"a": "b"}
    ctype = draw(st.sampled_from([None, "application/json", "application/yaml"]))
    body = yaml.safe_dump(obj).encode() if ctype == "application/yaml" else dumps(obj)
    namespace = draw(st.sampled_from(["default"] * 6 + ["nope-ns"]))
    q = draw(query(dryRun=DRY, fieldValidation=VALIDATION, fieldManager=("fuzz",)))
    if name.startswith("anchor-"):
        q = tuple((k, v) for k, v in q if k != "dryRun" or v == "All")  # the bad value creates it
    return Call("POST", f"/api/v1/namespaces/{namespace}/pods", q, with_ctype(ctype), body)


@st.composite
def malformed_creates(draw) -> Call:
    path = draw(st.sampled_from([f"{NS}/pods", f"{NS}/configmaps", f"{NS}/configmaps", "/api/v1/namespaces"]))
    q = draw(query(dryRun=DRY, fieldValidation=VALIDATION))
    return Call("POST", path, q, with_ctype(draw(CONTENT_TYPES)), draw(JUNK_BODIES))


@st.composite
def configmap_writes(draw) -> Call:
    name = draw(st.sampled_from(CMS + MISSING))
    data = draw(
        st.dictionaries(st.from_regex(r"[a-z][a-z0-9._-]{0,8}", fullmatch=True), st.text(max_size=20), max_size=3)
    )
    obj: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "fuzz"}}}
    obj["data"] = data
    rv = draw(st.sampled_from([None, "1", "bogus", "99999999"]))
    if rv is not None:
        obj["metadata"]["resourceVersion"] = rv
    if draw(st.booleans()):
        obj["unknownTop"] = {"a": 1}
    q = draw(query(dryRun=DRY, fieldValidation=VALIDATION))
    if draw(st.booleans()):
        return Call("POST", f"{NS}/configmaps", q, body=dumps(obj))
    return Call("PUT", f"{NS}/configmaps/{name}", q, body=dumps(obj))


def patch_bodies(ctype: str | None, name: str, spec_ok: bool):
    labels = st.dictionaries(
        st.from_regex(r"fuzz[a-z0-9]{0,4}", fullmatch=True),
        st.one_of(st.none(), st.from_regex(r"[a-z0-9]{0,8}", fullmatch=True)),
        max_size=2,
    )
    merge = labels.map(lambda ls: dumps({"metadata": {"labels": ls}}))
    merge |= st.sampled_from(
        [
            dumps({"metadata": {"annotations": {"a": None}}}),
            dumps({"metadata": {"labels": None}}),
            dumps({"metadata": {"name": "renamed"}}),
            dumps({"metadata": {"resourceVersion": "1", "labels": {"fuzz": "rv"}}}),
            dumps({"data": {"k": "v"}}),
        ]
    )
    if spec_ok:
        merge |= st.sampled_from(
            [
                dumps({"spec": {"containers": [{"name": "c", "image": "registry.example/app:2"}]}}),
                dumps({"spec": {"activeDeadlineSeconds": 600}}),
                dumps({"spec": {"$setElementOrder/containers": [{"name": "c"}], "containers": [{"name": "c"}]}}),
                dumps({"spec": {"containers": [{"name": "c", "$patch": "delete"}]}}),
                dumps({"spec": {"tolerations": [{"key": "k", "operator": "Exists"}]}}),
                dumps({"status": {"phase": "Failed"}}),
            ]
        )
    json_patch = st.sampled_from(
        [
            [{"op": "add", "path": "/metadata/labels/fuzz", "value": "v"}],
            [{"op": "replace", "path": "/metadata/name", "value": "other"}],
            [{"op": "test", "path": "/metadata/name", "value": "nope"}],
            [{"op": "remove", "path": "/metadata/labels/absent"}],
            [{"op": "move", "from": "/metadata/labels", "path": "/metadata/annotations"}],
            [{"op": "copy", "from": "/metadata/name", "path": "/metadata/labels/copied"}],
            [{"op": "add", "path": "/metadata/labels/a~1b", "value": "slash"}],
            [],
            [{"op": "bogus", "path": "/x"}],
            [{"op": "add"}],
            [{"op": "add", "path": "no-slash", "value": 1}],
            [{"op": "add", "path": "/metadata/labels/x", "value": 1}],
            [{"op": "replace", "path": "/metadata/labels/-", "value": "v"}],
            {"op": "add", "path": "/metadata/labels/x", "value": "v"},
        ]
    ).map(dumps)
    apply = st.sampled_from(
        [
            dumps(pod(name, how_of(name)) if spec_ok or name.startswith("anchor-") else {}),
            dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"fuzz": "applied"}}}),
            dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}}),
            dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "not-" + name}}),
            dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"replcas": 3}}),
            b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {fuzz: yaml}\n" % name.encode(),
        ]
    )
    good = {
        "application/merge-patch+json": merge,
        "application/strategic-merge-patch+json": merge,
        "application/json-patch+json": json_patch,
        "application/apply-patch+yaml": apply,
    }.get(ctype, merge)
    return weighted((3, good), (1, JUNK_BODIES))


@st.composite
def patches(draw) -> Call:
    pods = [(f"{NS}/pods/{n}", n, not n.startswith("anchor-")) for n in FIT + NEVER + ANCHORS + MISSING]
    targets = pods + [(f"{NS}/configmaps/{n}", n, False) for n in CMS + MISSING]
    targets += [("/api/v1/nodes/node-0", "node-0", False), ("/api/v1/nodes/node-9", "node-9", False)]
    targets += [(f"{NS}/pods/{n}/status", n, True) for n in FIT]
    path, name, spec_ok = draw(st.sampled_from(targets))
    ctype = draw(
        st.sampled_from(
            [
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/json-patch+json",
                "application/apply-patch+yaml",
                "application/json",
                "text/plain",
                None,
            ]
        )
    )
    body = draw(patch_bodies(ctype, name, spec_ok))
    q = draw(query(dryRun=DRY, fieldValidation=VALIDATION, fieldManager=("fuzz", ""), force=("true", "false", "maybe")))
    return Call("PATCH", path, q, with_ctype(ctype), body)


@st.composite
def deletes(draw) -> Call:
    path = draw(
        st.sampled_from(
            [f"{NS}/pods/{n}" for n in FIT + NEVER + MISSING]
            + [f"{NS}/configmaps/{n}" for n in CMS + MISSING]
            + ["/api/v1/nodes/node-9", "/api/v1/namespaces/fuzz-ns", f"{NS}/configmaps"]
        )
    )
    q = draw(
        query(
            gracePeriodSeconds=("0", "1", "30", "-1", "abc"),
            propagationPolicy=("Background", "Foreground", "Orphan", "Sideways"),
            dryRun=DRY,
            orphanDependents=("true", "false"),
        )
    )
    if path.endswith("/configmaps"):
        q += (("labelSelector", "app=fuzz"),)
    options = st.sampled_from(
        [
            {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0},
            {"propagationPolicy": "Background"},
            {"gracePeriodSeconds": 30, "dryRun": ["All"]},
            {"preconditions": {"uid": "not-the-uid"}},
            {"preconditions": {"resourceVersion": "1"}},
            {"gracePeriodSeconds": "soon"},
            {"dryRun": ["foo"]},
        ]
    ).map(dumps)
    body = draw(weighted((2, st.none()), (1, options), (1, JUNK_BODIES)))
    return Call("DELETE", path, q, with_ctype("application/json" if body is not None else None), body)


READ_PATHS = (
    f"{NS}/pods",
    "/api/v1/pods",
    "/api/v1/nodes",
    f"{NS}/events",
    "/api/v1/events",
    f"{NS}/configmaps",
    "/api/v1/namespaces",
    "/apis/apps/v1/namespaces/default/deployments",
    "/apis/events.k8s.io/v1/events",
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
)
ACCEPTS = st.sampled_from([None, None, TABLE, "application/vnd.kubernetes.protobuf", "application/yaml", "text/html"])


@st.composite
def lists(draw) -> Call:
    q = draw(
        query(
            labelSelector=LABELS,
            fieldSelector=FIELDS,
            limit=("1", "0", "-1", "x", "500"),
            resourceVersion=("0", "1", "abc", ""),
            resourceVersionMatch=("NotOlderThan", "Exact", "bogus"),
            includeObject=("Object", "None", "Metadata", "bogus"),
        )
    )
    if draw(st.booleans()) and any(k == "limit" for k, _ in q):
        q += (("continue", draw(st.sampled_from(["junk", "", "eyJydiI6MX0", "%%%"]))),)
    accept = draw(ACCEPTS)
    return Call("GET", draw(st.sampled_from(READ_PATHS)), q, () if accept is None else (("Accept", accept),))


@st.composite
def watches(draw) -> Call:
    q = (("watch", draw(st.sampled_from(["true", "1", "True"]))),)
    q += (("timeoutSeconds", draw(st.sampled_from(["1", "1", "1", "-1", "abc"]))),)
    q += draw(
        query(
            resourceVersion=("0", "1", "2", "abc", "99999999999"),
            labelSelector=LABELS,
            fieldSelector=FIELDS,
            allowWatchBookmarks=("true",),
        )
    )
    if draw(st.integers(0, 9)) == 0:
        q += (("sendInitialEvents", "true"), ("resourceVersionMatch", "NotOlderThan"))
    accept = draw(ACCEPTS)
    return Call("GET", draw(st.sampled_from(READ_PATHS)), q, () if accept is None else (("Accept", accept),))


@st.composite
def reads(draw) -> Call:
    name = draw(st.sampled_from(FIT + NEVER + ANCHORS + MISSING))
    path = draw(
        st.sampled_from(
            [
                f"{NS}/pods/{name}",
                f"{NS}/pods/{name}/status",
                f"{NS}/pods/{name}/log",
                f"{NS}/configmaps/{draw(st.sampled_from(CMS + MISSING))}",
                "/api/v1/nodes/node-0",
                "/api/v1/nodes/node-9",
                "/api/v1/namespaces/default",
                "/version",
                "/api",
                "/apis",
                "/api/v1",
                "/apis/apps/v1",
                "/openapi/v3",
                "/openapi/v3/api/v1",
            ]
        )
    )
    q = draw(query(resourceVersion=("0", "abc"), tailLines=("1", "-1", "x"), container=("c", "nope")))
    accept = draw(ACCEPTS)
    return Call("GET", path, q, () if accept is None else (("Accept", accept),))


@st.composite
def subresource_posts(draw) -> Call:
    name = draw(st.sampled_from(FIT + NEVER + MISSING))
    if draw(st.booleans()):
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}
        if draw(st.booleans()):
            body["deleteOptions"] = {"gracePeriodSeconds": draw(st.sampled_from([0, 1, -5])), "dryRun": ["All"]}
        path = f"{NS}/pods/{name}/eviction"
    else:
        target = {"kind": "Node", "name": draw(st.sampled_from(["node-0", "node-1", "node-9", ""]))}
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": target}
        path = draw(st.sampled_from([f"{NS}/pods/{name}/binding", f"{NS}/bindings"]))
    raw = draw(weighted((2, st.just(dumps(body))), (1, JUNK_BODIES)))
    return Call("POST", path, draw(query(dryRun=DRY)), (("Content-Type", "application/json"),), raw)


SEGMENT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12).map(
    lambda s: quote(s, safe="")
)


@st.composite
def oddities(draw) -> Call:
    """Unknown paths, methods the resource does not take, missing or wrong credentials."""
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "HEAD"]))
    fixed = [
        "/",
        "/api/v2",
        "/api/v2/pods",
        "/apis/nope/v1/things",
        f"{NS}/widgets",
        f"{NS}/pods/fit-0/x/y/z",
        "/api/v1/namespaces//pods",
        "/%2e%2e/%2e%2e/etc/passwd",
        f"{NS}/pods/%00",
        "/apis/apps",
        "/openapi/v2",
        "/openapi/v3/apis/nope/v1",
        f"{NS}/pods/fit-0/exec",
        f"{NS}/pods/fit-0/portforward",
        "/.well-known/openid-configuration",
        "/logs",
        "/debug/pprof",
        f"{NS}/pods",
        "/api/v1/nodes",
        f"{NS}/pods/fit-0",
    ]
    path = draw(
        st.one_of(st.sampled_from(fixed), st.lists(SEGMENT, min_size=1, max_size=4).map(lambda s: "/" + "/".join(s)))
    )
    body = draw(st.one_of(st.none(), JUNK_BODIES)) if method not in ("GET", "HEAD") else None
    auth = draw(st.sampled_from(["token"] * 6 + ["none", "wrong"]))
    return Call(method, path, (), (), body, auth)


CALLS = weighted(
    (2, creates()),
    (1, malformed_creates()),
    (1, configmap_writes()),
    (2, patches()),
    (2, deletes()),
    (2, lists()),
    (1, reads()),
    (1, watches()),
    (1, subresource_posts()),
    (1, oddities()),
)


# -- the client and the judge -------------------------------------------------------------
@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float

    def __repr__(self) -> str:
        ctype = self.headers.get("content-type", "")
        return f"{self.status} {ctype!r} {self.body[:400]!r}{'...' if len(self.body) > 400 else ''}"


class Unanswered(Exception):
    """The server sent no complete HTTP answer (refused, reset, closed, cut mid-stream)."""


def send(port: int, token: str, call: Call, timeout: float = 30.0) -> Answer:
    headers = dict(call.headers)
    if call.auth == "token":
        headers["Authorization"] = f"Bearer {token}"
    elif call.auth == "wrong":
        headers["Authorization"] = "Bearer not-the-token"
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=CTX, timeout=timeout)
    t0 = time.monotonic()
    try:
        conn.request(call.method, call.url, body=call.payload(), headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        return Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, body, time.monotonic() - t0)
    except (OSError, http.client.HTTPException) as e:
        raise Unanswered(f"{type(e).__name__}: {e}") from None
    finally:
        conn.close()


def status_problems(obj: dict, code: int) -> list[str]:
    out = []
    if obj.get("apiVersion") != "v1":
        out.append(f"Status apiVersion is {obj.get('apiVersion')!r}")
    if code >= 400:
        if obj.get("status") != "Failure":
            out.append(f"Status.status is {obj.get('status')!r} on a {code}")
        if obj.get("code") != code:
            out.append(f"Status.code {obj.get('code')!r} differs from the HTTP status {code}")
        if not isinstance(obj.get("message"), str) or not obj.get("message"):
            out.append("Status without a message")
    elif obj.get("status") != "Success":
        out.append(f"Status.status is {obj.get('status')!r} on a {code}")
    return out


def object_problems(obj) -> list[str]:
    """What keeps ``obj`` from being a Kubernetes object, list, Table or Status."""
    if not isinstance(obj, dict):
        return [f"the JSON body is a {type(obj).__name__}, not an object"]
    kind, api = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        return ["the JSON body has no kind"]
    if not isinstance(api, str) or not api:
        return [f"a {kind} without apiVersion"]
    if kind.endswith("List") and kind not in ("APIGroupList", "APIResourceList", "APIGroupDiscoveryList"):
        if not isinstance(obj.get("items"), list):
            return [f"a {kind} whose items is {type(obj.get('items')).__name__}"]
    return []


DISCOVERY = ("/version", "/api", "/apis", "/api/v1", "/apis/apps/v1", "/openapi/v3", "/openapi/v3/api/v1")


def protobuf_watch_problems(body: bytes) -> list[str]:
    """A protobuf watch is 4-byte big-endian lengths, each followed by a WatchEvent that carries
    an enveloped object (a stream cut at the timeout may end inside its last frame)."""
    pos = 0
    while pos + 4 <= len(body):
        size = int.from_bytes(body[pos : pos + 4], "big")
        frame = body[pos + 4 : pos + 4 + size]
        if len(frame) == size and b"k8s\x00" not in frame:
            return [f"a protobuf watch frame without an enveloped object: {frame[:100]!r}"]
        pos += 4 + size
    return []


WATCH_TYPES = ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")


def json_watch_problems(body: bytes) -> list[str]:
    """A JSON watch is one event per line, each with an object; an ERROR event's a Status."""
    out = []
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            return [f"a watch line that is not JSON: {line[:200]!r}"]
        if not isinstance(event, dict) or event.get("type") not in WATCH_TYPES:
            return [f"a watch line that is not an event: {line[:200]!r}"]
        obj = event.get("object")
        if not isinstance(obj, dict):
            return [f"a watch event without an object: {line[:200]!r}"]
        if event["type"] == "ERROR":
            if obj.get("kind") != "Status" or not isinstance(obj.get("code"), int):
                out.append(f"an ERROR event without a Status: {line[:200]!r}")
            else:
                out += status_problems(obj, obj["code"])
    return out


def judge(call: Call, ans: Answer) -> list[str]:
    """Every way ``ans`` breaks the invariant; empty when it holds."""
    ctype = ans.headers.get("content-type", "")
    if call.method == "HEAD":
        return [] if ans.status < 500 else [f"HEAD answered {ans.status}"]
    if ans.status < 400 and call.path.endswith("/log") and ctype.startswith("text/plain"):
        return []  # a log is text
    accept = dict(call.headers).get("Accept", "")
    if ctype.startswith("application/vnd.kubernetes.protobuf") and "protobuf" in accept:
        if ctype.endswith(";stream=watch"):
            return protobuf_watch_problems(ans.body)
        return [] if ans.body.startswith(b"k8s\x00") else ["a protobuf answer without the k8s envelope"]
    as_yaml = ctype.startswith("application/yaml") and "yaml" in accept and not call.watch  # asked for
    if not ctype.startswith("application/json") and not as_yaml:
        return [f"Content-Type {ctype!r}, not JSON"]
    if call.watch and ans.status == 200:
        return json_watch_problems(ans.body)
    try:
        obj = yaml.safe_load(ans.body) if as_yaml else json.loads(ans.body)
    except ValueError:
        return ["the body is not JSON"]
    except yaml.YAMLError:
        return ["the body is not YAML"]
    if (call.path in DISCOVERY or call.path.startswith("/openapi/")) and ans.status == 200:
        return [] if isinstance(obj, dict) else ["discovery is not a JSON object"]  # not Kubernetes objects
    out = object_problems(obj)
    if out:
        return out
    if obj["kind"] == "Status":
        return status_problems(obj, ans.status)
    if ans.status >= 400:
        return [f"a {ans.status} whose body is a {obj['kind']}, not a Status"]
    return []


def pattern(call: Call) -> str:
    """The call with names and values masked: violations of one kind count once."""
    path = re.sub(r"/(fit|never|anchor|missing|cm)-[a-z0-9]+", r"/\1-*", call.path)
    if "%" in path or not path.startswith(("/api/", "/apis/")):
        path = "<other path>"
    ctype = dict(call.headers).get("Content-Type", "-")
    return f"{call.method} {path} {sorted(k for k, _ in call.query)} {ctype}"


# -- the served cluster, its clock, the run -----------------------------------------------
class Cluster:
    """``Served`` with its output drained (a full pipe would block the server) and kept."""

    def __init__(self, tmp):
        self.served = Served(tmp, nodes=3, extra=("--time-scale", str(TIME_SCALE)))
        self.proc, self.port, self.token = self.served.proc, self.served.port, self.served.token
        self.output: collections.deque[str] = collections.deque(maxlen=400)
        self.threads = [
            threading.Thread(target=self._drain, args=(pipe,), daemon=True)
            for pipe in (self.proc.stdout, self.proc.stderr)
        ]
        for t in self.threads:
            t.start()

    def _drain(self, pipe) -> None:
        for line in pipe:
            self.output.append(line.rstrip("\n"))

    def tail(self, lines: int = 40) -> str:
        return "\n".join(list(self.output)[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        for t in self.threads:
            t.join(timeout=5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("serve-property"))
    yield c
    c.stop()


def timestamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class ServerGone(AssertionError):
    pass


@dataclass
class Run:
    cluster: Cluster
    calls: int = 0
    first_never: float | None = None  # emulated time the first pod that never fits was created
    first_never_wall: float = 0.0  # and the wall clock's (time.monotonic) then
    violations: dict[str, tuple[Call, str, str]] = field(default_factory=dict)
    errors_5xx: dict[str, tuple[Call, str]] = field(default_factory=dict)

    def do(self, call: Call) -> Answer | None:
        c = self.cluster
        self.calls += 1
        try:
            ans = send(c.port, c.token, call, timeout=30.0 if not call.watch else 15.0)
        except Unanswered as e:
            self.alive_or_raise(call)
            self.note(call, f"no answer: {e}", "")
            ans = None
        else:
            for problem in judge(call, ans):
                self.note(call, problem, repr(ans))
            if ans.status >= 500:
                self.errors_5xx.setdefault(f"{pattern(call)} {ans.status}", (call, repr(ans)))
            if call.watch and ans.status == 200 and ans.seconds > 10:
                self.note(call, f"a watch with timeoutSeconds took {ans.seconds:.1f} s", repr(ans))
            self.record_never(call, ans)
        self.ready(call)
        return ans

    def note(self, call: Call, problem: str, answer: str) -> None:
        key = f"{pattern(call)}: {re.sub(r'[0-9]+', 'N', problem)[:120]}"
        self.violations.setdefault(key, (call, problem, answer))

    def alive_or_raise(self, call: Call) -> None:
        c = self.cluster
        for _ in range(20):  # an exit may take a moment to be seen
            if c.proc.poll() is not None:
                raise ServerGone(
                    f"kubemu serve exited (code {c.proc.returncode}) after {self.calls} calls, "
                    f"{self.emulated_since_never()}; last call {call!r}. "
                    f"Its output ends:\n{c.tail()}"
                )
            time.sleep(0.05)

    def ready(self, after: Call) -> None:
        try:
            ans = send(self.cluster.port, "", Call("GET", "/readyz", auth="none"), timeout=10.0)
        except Unanswered as e:
            self.alive_or_raise(after)
            self.note(after, f"/readyz then had no answer: {e}", "")
            return
        if ans.status != 200:
            self.note(after, f"/readyz then answered {ans.status}", repr(ans))

    def record_never(self, call: Call, ans: Answer) -> None:
        if self.first_never is not None or call.method != "POST" or ans.status != 201:
            return
        if not call.path.endswith("/pods") or any(k == "dryRun" for k, _ in call.query):
            return
        try:
            obj = json.loads(ans.body)
            name, created = obj["metadata"]["name"], obj["metadata"]["creationTimestamp"]
        except (ValueError, KeyError, TypeError):
            return
        if name.startswith(("never-", "anchor-")):
            self.first_never, self.first_never_wall = timestamp(created), time.monotonic()

    def now(self) -> float:
        """The served cluster's emulated time: the creationTimestamp of a fresh ConfigMap."""
        body = dumps({"metadata": {"generateName": "fuzz-clock-"}})
        ans = self.do(Call("POST", f"{NS}/configmaps", (), (("Content-Type", "application/json"),), body))
        assert ans is not None and ans.status == 201, f"cannot read the emulated clock: {ans!r}"
        meta = json.loads(ans.body)["metadata"]
        self.do(Call("DELETE", f"{NS}/configmaps/{meta['name']}"))
        return timestamp(meta["creationTimestamp"])

    def emulated_since_never(self) -> str:
        if self.first_never is None:
            return "before any pod that never fits was created"
        minutes = (time.monotonic() - self.first_never_wall) * TIME_SCALE / 60
        return f"about {minutes:.1f} emulated minutes after the first pod that never fits was created"

    def report(self) -> str:
        lines = [f"{len(self.violations)} distinct violation(s) in {self.calls} calls:"]
        for key, (call, problem, answer) in self.violations.items():
            lines.append(f"- {problem}\n    request: {call!r}\n    answer:  {answer}\n    [{key}]")
        return "\n".join(lines)


def test_no_sequence_of_api_calls_stops_the_server(cluster):
    run = Run(cluster)
    wall0 = time.monotonic()

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=(Phase.explicit, Phase.generate),  # no shrinking: the server keeps the state of every call
        suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example),
    )
    @given(calls=st.lists(CALLS, min_size=1, max_size=20))
    @example(calls=anchor_calls())
    def sequences(calls):
        for call in calls:
            run.do(call)

    sequences()
    assert run.first_never is not None, "no pod that never fits was created: the run proves nothing"
    # Keep asking, as a client would, until the scheduler has retried the pods that never
    # fit for 30 emulated minutes.
    deadline = wall0 + 4 * SOAK / TIME_SCALE  # the paced clock may lag the wall clock, not by 4x
    while (now := run.now()) - run.first_never < SOAK:
        assert time.monotonic() < deadline, f"the emulated clock reached only {now - run.first_never:.0f} s"
        for call in (Call("GET", f"{NS}/pods"), Call("GET", f"{NS}/events"), Call("GET", f"{NS}/pods/anchor-cpu")):
            run.do(call)
        time.sleep(0.5)
    assert cluster.proc.poll() is None, f"kubemu serve exited:\n{cluster.tail()}"
    for name in ANCHORS:  # the premise: they stayed, and never fitted anywhere
        ans = run.do(Call("GET", f"{NS}/pods/{name}"))
        assert ans is not None and ans.status == 200, f"{name}: {ans!r}"
        assert not json.loads(ans.body)["spec"].get("nodeName"), f"{name} was bound: {ans!r}"
    if run.errors_5xx:
        text = "\n".join(f"{call!r} -> {ans}" for call, ans in run.errors_5xx.values())
        warnings.warn(f"{len(run.errors_5xx)} kinds of 5xx Status answers:\n{text}", stacklevel=1)
    assert not run.violations, run.report()


# -- single requests the property above found or should find --------------------------------
def answer(cluster: Cluster, call: Call) -> Answer:
    try:
        return send(cluster.port, cluster.token, call)
    except Unanswered as e:
        raise AssertionError(
            f"{call!r}: no answer ({e}); the server is {'up' if cluster.proc.poll() is None else 'gone'}"
        ) from None


def json_call(method: str, path: str, obj=None, ctype: str = "application/json", **params: str) -> Call:
    body = None if obj is None else obj if isinstance(obj, bytes) else dumps(obj)
    return Call(method, path, tuple(params.items()), (("Content-Type", ctype),) if body is not None else (), body)


LONG_SELECTOR = "app in (" + ",".join(f"v{i}" for i in range(1500)) + ")"  # about 10 KB


@pytest.mark.parametrize(
    "call",
    [
        Call("BREW", f"{NS}/pods"),
        Call("get", f"{NS}/pods"),
        Call("CONNECT", f"{NS}/pods"),
        Call("GET", f"{NS}/pods/a%0Ab"),
        Call("DELETE", f"{NS}/configmaps/a%0A"),
        Call("GET", f"{NS}/pods", (("labelSelector", LONG_SELECTOR),)),
        Call("GET", f"{NS}/pods", headers=(("Authorization", "Bearer " + "t" * 9000),), auth="none"),
    ],
    ids=[
        "unknown-method",
        "lower-case-method",
        "CONNECT",
        "newline-in-name",
        "newline-in-delete",
        "10KB-URL",
        "9KB-token",
    ],
)
def test_every_request_line_gets_a_status(cluster, call):
    """What the HTTP layer answers before the API sees the request is a ``Status`` too."""
    ans = answer(cluster, call)
    assert judge(call, ans) == [], f"{call!r} -> {ans!r}"
    assert ans.status < 500, f"{call!r} -> {ans!r}"


@pytest.mark.parametrize("depth", [255, 1000])
def test_what_a_create_stores_can_be_read_back(cluster, depth):
    """A body nested deeper than the server can encode (orjson writes at most 254 levels)
    must be refused, not stored: a stored one breaks every later read of its kind. In a
    namespace of its own, so that what the property test left elsewhere does not count."""
    ns, name = f"nesting-{depth}", f"poison-{depth}"
    made = answer(cluster, json_call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}))
    assert made.status in (201, 409), repr(made)
    path = f"/api/v1/namespaces/{ns}/configmaps"
    before = answer(cluster, Call("GET", path))
    assert before.status == 200, f"the list already failed before the create: {before!r}"
    try:
        created = answer(cluster, json_call("POST", path, deep(depth, name)))
        assert judge(Call("POST", path), created) == [], repr(created)
        for call in (Call("GET", path), Call("GET", f"{path}/{name}")):
            got = answer(cluster, call)
            assert got.status in (200, 404), f"after the create answered {created!r}: {call!r} -> {got!r}"
        watch = Call("GET", path, (("watch", "true"), ("timeoutSeconds", "1"), ("resourceVersion", "0")))
        got = answer(cluster, watch)
        assert judge(watch, got) == [], f"after the create answered {created!r}: {watch!r} -> {got!r}"
        assert created.status < 500, f"the create answered {created!r}"
    finally:
        send(cluster.port, cluster.token, Call("DELETE", f"{path}/{name}"))


def alias_bomb(levels: int) -> bytes:
    """A YAML ConfigMap with an unknown field of 9**(levels+1) strings made by aliases."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}", "a0: &a0 [" + ",".join(["lol"] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return ("\n".join(lines) + "\n").encode()


def test_a_small_yaml_body_cannot_make_the_server_store_megabytes(cluster):
    """349 bytes of YAML aliases are 531,441 strings (3.7 MB of JSON) once expanded; nine
    levels would be 387 million. Upstream drops unknown fields and refuses excessive
    aliasing; whatever the server does, it must not keep or send the expansion."""
    body = alias_bomb(5)
    try:
        created = answer(cluster, json_call("POST", f"{NS}/configmaps", body, ctype="application/yaml"))
        assert judge(Call("POST", f"{NS}/configmaps"), created) == [], repr(created)
        assert len(created.body) < 65536, f"{len(body)} bytes of YAML were answered with {len(created.body)} bytes"
        got = answer(cluster, Call("GET", f"{NS}/configmaps/bomb"))
        assert len(got.body) < 65536, f"{len(body)} bytes of YAML were stored as {len(got.body)} bytes"
    finally:
        send(cluster.port, cluster.token, Call("DELETE", f"{NS}/configmaps/bomb"))


# -- what a dry run, fieldValidation and a DELETE answer --
def status_of(ans: Answer) -> dict:
    obj = json.loads(ans.body)
    assert obj.get("kind") == "Status", repr(ans)
    return obj


def test_a_dry_run_changes_nothing(cluster):
    cm, path = "dry-cm", f"{NS}/configmaps"
    try:
        created = answer(cluster, json_call("POST", path, {"metadata": {"name": cm}}, dryRun="All"))
        assert created.status == 201, repr(created)
        assert answer(cluster, Call("GET", f"{path}/{cm}")).status == 404, "a dry-run create stored the object"
        assert "resourceVersion" not in json.loads(created.body)["metadata"], repr(created)
        assert answer(cluster, json_call("POST", path, {"metadata": {"name": cm}})).status == 201
        patch = {"data": {"a": "b"}}
        patched = answer(
            cluster, json_call("PATCH", f"{path}/{cm}", patch, "application/merge-patch+json", dryRun="All")
        )
        assert patched.status == 200 and json.loads(patched.body).get("data") == {"a": "b"}, repr(patched)
        got = answer(cluster, Call("GET", f"{path}/{cm}"))
        assert not json.loads(got.body).get("data"), f"a dry-run patch changed the object: {got!r}"
        deleted = answer(cluster, Call("DELETE", f"{path}/{cm}", (("dryRun", "All"),)))
        assert deleted.status == 200, repr(deleted)
        assert answer(cluster, Call("GET", f"{path}/{cm}")).status == 200, "a dry-run delete removed the object"
    finally:
        send(cluster.port, cluster.token, Call("DELETE", f"{path}/{cm}"))


def test_a_bad_dry_run_value_is_422_and_changes_nothing(cluster):
    cm = "dry-foo"
    try:
        ans = answer(cluster, json_call("POST", f"{NS}/configmaps", {"metadata": {"name": cm}}, dryRun="foo"))
        assert ans.status == 422, repr(ans)
        status = status_of(ans)
        assert status["reason"] == "Invalid", status
        assert status["message"] == (
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"foo"}: supported values: "All"'
        ), status
        assert answer(cluster, Call("GET", f"{NS}/configmaps/{cm}")).status == 404, "dryRun=foo stored the object"
    finally:
        send(cluster.port, cluster.token, Call("DELETE", f"{NS}/configmaps/{cm}"))


def test_field_validation_values(cluster):
    path = f"{NS}/configmaps"
    try:
        bogus = answer(cluster, json_call("POST", path, {"metadata": {"name": "fv-bogus"}}, fieldValidation="bogus"))
        assert bogus.status == 422, repr(bogus)
        assert status_of(bogus)["message"] == (
            'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "bogus": '
            'supported values: "", "Ignore", "Strict", "Warn"'
        ), repr(bogus)
        strict = answer(
            cluster, json_call("POST", path, {"metadata": {"name": "fv-strict"}, "bogus": 1}, fieldValidation="Strict")
        )
        assert strict.status == 400, repr(strict)
        assert status_of(strict)["message"] == (
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"'
        ), repr(strict)
        ignore = answer(
            cluster, json_call("POST", path, {"metadata": {"name": "fv-ignore"}, "bogus": 1}, fieldValidation="Ignore")
        )
        assert ignore.status == 201, repr(ignore)
        got = answer(cluster, Call("GET", f"{path}/fv-ignore"))
        assert "bogus" not in json.loads(got.body), f"fieldValidation=Ignore kept the unknown field: {got!r}"
    finally:
        for name in ("fv-bogus", "fv-strict", "fv-ignore"):
            send(cluster.port, cluster.token, Call("DELETE", f"{path}/{name}"))


def test_deleting_a_configmap_answers_a_success_status(cluster):
    created = answer(cluster, json_call("POST", f"{NS}/configmaps", {"metadata": {"name": "del-cm"}}))
    assert created.status == 201, repr(created)
    uid = json.loads(created.body)["metadata"]["uid"]
    gone = answer(cluster, Call("DELETE", f"{NS}/configmaps/del-cm"))
    assert gone.status == 200, repr(gone)
    status = status_of(gone)
    assert status["status"] == "Success" and "code" not in status, status
    assert status["details"] == {"name": "del-cm", "kind": "configmaps", "uid": uid}, status
    again = answer(cluster, Call("DELETE", f"{NS}/configmaps/del-cm"))
    assert again.status == 404 and status_of(again)["reason"] == "NotFound", repr(again)


@pytest.mark.parametrize("ctype", ["text/plain", "application/cbor", "text/html"])
def test_a_body_in_an_unknown_format_is_415_and_stores_nothing(cluster, ctype):
    """415 UnsupportedMediaType, whatever the bytes would parse as."""
    name = "ctype-" + ctype.replace("/", "-")
    try:
        ans = answer(cluster, json_call("POST", f"{NS}/configmaps", {"metadata": {"name": name}}, ctype=ctype))
        assert ans.status == 415, repr(ans)
        assert status_of(ans)["reason"] == "UnsupportedMediaType", repr(ans)
        assert answer(cluster, Call("GET", f"{NS}/configmaps/{name}")).status == 404
    finally:
        send(cluster.port, cluster.token, Call("DELETE", f"{NS}/configmaps/{name}"))
