"""Server-side dry run (``dryRun=All``): every write verb and subresource answers as the
real write would, and nothing changes: not the resourceVersion, not an object, no watch
event, nothing for the durable log. And DELETE answers the object or a success Status by
upstream's rule."""

import asyncio

import orjson
import pytest

from cluster.api import codec
from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

PODS = "/api/v1/namespaces/default/pods"
RS = "/apis/apps/v1/namespaces/default/replicasets"
CM = "/api/v1/namespaces/default/configmaps"


def run(coro):
    return asyncio.run(coro)


class Journal:
    """Stands in for the durable log: what it is told is what a restart would recover."""

    def __init__(self):
        self.records = []

    def record_put(self, *args):
        self.records.append(("put", *args[:5]))

    def record_remove(self, *args):
        self.records.append(("remove", *args))


@pytest.fixture
def api():
    pools = [NodePool(namePrefix="n", count=2, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1, on_fault=print)
    run(cluster.start())
    h = Handler(LocalBackend(lambda: cluster.api, cluster.now))
    for path, obj in (
        (PODS, pod("web")),
        (PODS, dict(pod("idle"), spec={**pod("idle")["spec"], "schedulerName": "external"})),
        (CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}}),
        (RS, replicaset("api", 2)),
        (
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb"},
                "spec": {"minAvailable": 0, "selector": {"matchLabels": {"app": "web"}}},
            },
        ),
    ):
        assert call(h, "POST", path, obj)[0] == 201
    run(cluster.settle())
    return h, cluster


def call(h, method, path, body=None, ctype="application/json", **query):
    raw = body if isinstance(body, bytes) else (orjson.dumps(body) if body is not None else b"")
    headers = {"content-type": ctype}
    answer = run(h.handle(Request(method, path, {k: str(v) for k, v in query.items()}, headers, raw)))
    return answer.status, orjson.loads(answer.body) if answer.body else None


def pod(name, node=""):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}}, "spec": spec}


def replicaset(name, replicas):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod(name)["spec"]},
        },
    }


def state(cluster):
    store = cluster.api.store
    kinds = ("Pod", "ConfigMap", "ReplicaSet", "PodDisruptionBudget", "Namespace", "Event")
    return store.rv, {k: sorted(store.list(k)[1]) for k in kinds}


# (what, method, path, body, content type, query beyond dryRun, expected code, check of the answer)
CASES = [
    ("create", "POST", PODS, pod("new"), "application/json", {}, 201, lambda b: b["metadata"]["name"] == "new"),
    (
        "create generateName",
        "POST",
        CM,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}},
        "application/json",
        {},
        201,
        lambda b: b["metadata"]["name"].startswith("gen-") and len(b["metadata"]["name"]) == 9,
    ),
    (
        "update",
        "PUT",
        f"{CM}/cfg",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "2"}},
        "application/json",
        {},
        200,
        lambda b: b["data"] == {"a": "2"},
    ),
    (
        "merge patch",
        "PATCH",
        f"{RS}/api",
        {"spec": {"replicas": 5}},
        "application/merge-patch+json",
        {},
        200,
        lambda b: b["spec"]["replicas"] == 5,
    ),
    (
        "strategic patch",
        "PATCH",
        f"{CM}/cfg",
        {"data": {"b": "3"}},
        "application/strategic-merge-patch+json",
        {},
        200,
        lambda b: b["data"] == {"a": "1", "b": "3"},
    ),
    (
        "json patch",
        "PATCH",
        f"{CM}/cfg",
        [{"op": "add", "path": "/data/c", "value": "4"}],
        "application/json-patch+json",
        {},
        200,
        lambda b: b["data"]["c"] == "4",
    ),
    (
        "apply of a new object",
        "PATCH",
        f"{CM}/applied",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"x": "y"}},
        "application/apply-patch+yaml",
        {"fieldManager": "kubectl"},
        201,
        lambda b: b["data"] == {"x": "y"} and "resourceVersion" not in b["metadata"],
    ),
    (
        "delete, object gone: a Status",
        "DELETE",
        f"{CM}/cfg",
        None,
        "application/json",
        {},
        200,
        lambda b: b["kind"] == "Status" and b["details"]["kind"] == "configmaps",
    ),
    (
        "delete, graceful pod: the terminating pod",
        "DELETE",
        f"{PODS}/web",
        None,
        "application/json",
        {},
        200,
        lambda b: b["kind"] == "Pod" and b["metadata"]["deletionGracePeriodSeconds"] == 30,
    ),
    (
        "delete of the replicaset",
        "DELETE",
        f"{RS}/api",
        {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground", "dryRun": ["All"]},
        "application/json",
        {},
        200,
        lambda b: b["kind"] == "ReplicaSet" and "foregroundDeletion" in b["metadata"]["finalizers"],
    ),
    (
        "status",
        "PATCH",
        f"{RS}/api/status",
        {"status": {"replicas": 9}},
        "application/merge-patch+json",
        {},
        200,
        lambda b: b["status"]["replicas"] == 9,
    ),
    (
        "scale",
        "PATCH",
        f"{RS}/api/scale",
        {"spec": {"replicas": 7}},
        "application/merge-patch+json",
        {},
        200,
        lambda b: b["kind"] == "Scale" and b["spec"]["replicas"] == 7,
    ),
    (
        "binding",
        "POST",
        f"{PODS}/idle/binding",
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "idle"}, "target": {"name": "n-1"}},
        "application/json",
        {},
        201,
        lambda b: b["target"]["name"] == "n-1",
    ),
    (
        "eviction",
        "POST",
        f"{PODS}/web/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}},
        "application/json",
        {},
        201,
        lambda b: b["status"] == "Success",
    ),
]


@pytest.mark.parametrize("what, method, path, body, ctype, extra, code, check", CASES, ids=[c[0] for c in CASES])
def test_a_dry_run_answers_as_the_write_would_and_changes_nothing(
    api, what, method, path, body, ctype, extra, code, check
):
    h, cluster = api
    before = state(cluster)
    journal = cluster.api.store.journal = Journal()
    got_code, answer = call(h, method, path, body, ctype, dryRun="All", **extra)
    assert got_code == code, answer
    assert check(answer), answer
    assert state(cluster) == before  # no resourceVersion used, no object changed
    assert journal.records == []  # nothing for the durable log
    for kind in ("Pod", "ConfigMap", "ReplicaSet"):
        chunk = cluster.api.watch({kind: before[0]})[kind]
        assert list(chunk.events) == []  # no watcher hears of it
    cluster.api.store.journal = None
    run(cluster.settle())
    assert state(cluster)[0] == before[0]  # and no component reacted to anything


def test_a_dry_run_create_has_a_uid_but_no_resource_version_and_a_real_one_after_it_is_unchanged(api):
    h, cluster = api
    code, dry = call(h, "POST", PODS, pod("twin"), dryRun="All")
    assert code == 201 and dry["metadata"]["uid"] and "resourceVersion" not in dry["metadata"]
    code, real = call(h, "POST", PODS, pod("twin"))
    assert code == 201 and real["metadata"]["uid"] == dry["metadata"]["uid"]  # the uid draws were left as they were
    assert call(h, "POST", PODS, pod("twin"), dryRun="All")[0] == 409  # over an existing name, as a real create


@pytest.mark.parametrize(
    "field, value, code",
    [("cpu", "250x", 400), ("memory", "-1Gi", 422)],
    ids=["not a quantity", "a negative request"],
)
def test_a_dry_run_of_a_refused_write_is_refused_alike(api, field, value, code):
    h, cluster = api
    bad = pod("bad")
    bad["spec"]["containers"][0]["resources"]["requests"][field] = value
    before = state(cluster)
    dry = call(h, "POST", PODS, bad, dryRun="All")
    assert dry[0] == code and dry == call(h, "POST", PODS, bad)  # the same answer as the real write
    assert state(cluster) == before


@pytest.mark.parametrize(
    "method, path, body, options",
    [
        ("POST", PODS, pod("x"), "CreateOptions"),
        ("PUT", f"{CM}/cfg", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}}, "UpdateOptions"),
        ("PATCH", f"{CM}/cfg", {"data": {"q": "1"}}, "PatchOptions"),
        ("DELETE", f"{CM}/cfg", None, "DeleteOptions"),
    ],
)
def test_an_unknown_dry_run_value_is_upstreams_422_and_changes_nothing(api, method, path, body, options):
    h, cluster = api
    before = state(cluster)
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    code, answer = call(h, method, path, body, ctype, dryRun="foo")
    assert code == 422 and answer["reason"] == "Invalid"
    assert answer["message"] == (
        f'{options}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{"foo"}}: supported values: "All"'
    )
    assert answer["details"]["causes"][0]["reason"] == "FieldValueNotSupported"
    assert state(cluster) == before


def test_an_eviction_whose_query_and_options_disagree_on_dry_run_is_refused(api):
    h, cluster = api
    before = state(cluster)
    body = {"kind": "Eviction", "metadata": {"name": "web"}, "deleteOptions": {"dryRun": []}}
    code, answer = call(h, "POST", f"{PODS}/web/eviction", body, dryRun="All")
    assert code == 400 and answer["message"].startswith("Non-matching dry-run options in request and content")
    assert state(cluster) == before


def test_delete_answers_the_removed_object_for_pods_and_a_status_for_the_rest(api):
    h, cluster = api
    code, gone = call(h, "DELETE", f"{PODS}/idle", {"kind": "DeleteOptions", "gracePeriodSeconds": 0})
    assert code == 200 and gone["kind"] == "Pod" and gone["metadata"]["name"] == "idle"
    uid = codec.decode(cluster.api.store.raw("ConfigMap", "default", "cfg"))["metadata"]["uid"]
    code, status = call(h, "DELETE", f"{CM}/cfg")
    assert code == 200 and status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "cfg", "kind": "configmaps", "uid": uid},
    }
    code, status = call(h, "DELETE", f"{RS}/api")
    assert status["details"]["group"] == "apps" and status["details"]["kind"] == "replicasets"
    code, ns = call(
        h, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}}
    )
    code, terminating = call(h, "DELETE", "/api/v1/namespaces/t")
    assert code == 200 and terminating["kind"] == "Namespace"  # still there, finalizing: the object
