"""exec, attach, portforward and proxy: checked as upstream checks them before dialling a
kubelet, then refused as when no kubelet can be reached (a 500 Status without a reason,
saying the containers are emulated). Through a ``Handler`` over the local runtime."""

import pytest
from test_handler import AUTH, PODS, TOKEN, call, run

from cluster.frontend import discovery
from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

SPDY = "exec is served over WebSocket (v5.channel.k8s.io or v4.channel.k8s.io: kubectl 1.30 or newer), not SPDY"


@pytest.fixture
def api():
    pools = [NodePool(namePrefix="n", count=2, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    return Handler(LocalBackend(lambda: cluster.api, cluster.now), token=TOKEN), cluster


def make_pod(name, containers=("c",), init=(), node=None, scheduler=None):
    spec = {"containers": [{"name": c, "image": "x"} for c in containers]}
    if init:
        spec["initContainers"] = [{"name": c, "image": "x"} for c in init]
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def served(api):
    h, cluster = api
    for p in (
        make_pod("web"),
        make_pod("two", containers=("a", "b"), init=("setup",)),
        make_pod("pending", scheduler="nobody"),
        make_pod("lost", node="ghost"),
    ):
        assert call(h, "POST", PODS, p)[0] == 201
    run(cluster.settle())
    return h


@pytest.mark.parametrize(
    "sub, query, message",
    [
        ("exec", {"command": "ls"}, f"{SPDY} (pod default/web, container c)"),
        ("attach", {"stdin": "true"}, "there is no process to attach to (pod default/web, container c)"),
        ("exec", {"container": "c"}, f"{SPDY} (pod default/web, container c)"),
        ("portforward", {}, "nothing listens on a port to forward to (pod default/web)"),
        ("portforward", {"ports": "80,443"}, "nothing listens on a port to forward to (pod default/web, ports 80,443)"),
        ("proxy", {}, "nothing listens in pod default/web to proxy to"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_stream_is_refused_as_by_an_unreachable_kubelet(served, sub, query, message, method):
    code, body = call(served, method, f"{PODS}/web/{sub}", **query)
    assert code == 500
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"kubemu emulates containers: {message}",
        "code": 500,
    }  # no reason: kubectl prints "Error from server: <message>"


def test_the_websocket_and_spdy_upgrade_attempts_get_the_same_answer(served):
    for headers in (
        {"connection": "Upgrade", "upgrade": "websocket", "sec-websocket-protocol": "v5.channel.k8s.io"},
        {"connection": "Upgrade", "upgrade": "SPDY/3.1", "x-stream-protocol-version": "v4.channel.k8s.io"},
    ):
        code, body = call(served, "POST", f"{PODS}/web/exec", headers={**AUTH, **headers}, command="ls")
        assert code == 500 and body["message"].startswith("kubemu emulates containers: ")


@pytest.mark.parametrize(
    "path, query, code, reason, message",
    [
        ("nope/exec", {}, 404, "NotFound", 'pods "nope" not found'),
        ("nope/portforward", {}, 404, "NotFound", 'pods "nope" not found'),
        ("web/exec", {"container": "zz"}, 400, "BadRequest", "container zz is not valid for pod web"),
        ("web/attach", {"container": "zz"}, 400, "BadRequest", "container zz is not valid for pod web"),
        (
            "two/exec",
            {},
            400,
            "BadRequest",
            "a container name must be specified for pod two, choose one of: [setup a b]",
        ),
        ("pending/exec", {}, 400, "BadRequest", "pod pending does not have a host assigned"),
        ("pending/portforward", {}, 400, "BadRequest", "pod pending does not have a host assigned"),
        ("lost/exec", {}, 404, "NotFound", 'nodes "ghost" not found'),
        ("web:8080/proxy", {}, 500, None, "kubemu emulates containers: nothing listens in pod default/web to proxy to"),
        (
            "web/proxy/healthz/deep",
            {},
            500,
            None,
            "kubemu emulates containers: nothing listens in pod default/web to proxy to",
        ),
        ("nope/proxy/a/b", {}, 404, "NotFound", 'pods "nope" not found'),
        ("web:/proxy", {}, 400, "BadRequest", 'invalid request "web:"'),
    ],
)
def test_what_is_checked_before_the_kubelet_is_dialled(served, path, query, code, reason, message):
    got, body = call(served, "POST", f"{PODS}/{path}", **query)
    assert (got, body.get("reason"), body["message"]) == (code, reason, message)


def test_an_init_container_may_be_named(served):
    code, body = call(served, "POST", f"{PODS}/two/exec", container="setup")
    assert code == 500 and body["message"].endswith("(pod default/two, container setup)")


@pytest.mark.parametrize("sub, method", [("exec", "DELETE"), ("attach", "PUT"), ("portforward", "PATCH")])
def test_other_methods_are_not_allowed(served, sub, method):
    code, body = call(served, method, f"{PODS}/web/{sub}")
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    assert body["message"].endswith(f"({method} pods/{sub})")


def test_a_refusal_changes_nothing(served, api):
    _, cluster = api
    before = cluster.api.store.rv
    call(served, "POST", f"{PODS}/web/exec", command="rm")
    assert cluster.api.store.rv == before


def test_discovery_lists_the_connect_subresources_with_their_options_kinds():
    listing = {r["name"]: r for r in discovery.resource_list("", "v1")["resources"]}
    assert (listing["pods/exec"]["kind"], listing["pods/exec"]["verbs"]) == ("PodExecOptions", ["create", "get"])
    assert listing["pods/attach"]["kind"] == "PodAttachOptions"
    assert listing["pods/portforward"]["kind"] == "PodPortForwardOptions"
    assert listing["pods/proxy"]["verbs"] == ["create", "delete", "get", "patch", "update"]
    assert listing["pods/ephemeralcontainers"]["kind"] == "Pod"
    assert listing["namespaces/finalize"]["verbs"] == ["update"]
    assert listing["namespaces/status"]["kind"] == "Namespace"
    core = next(g for g in discovery.aggregated(True)["items"])
    pods = next(r for r in core["versions"][0]["resources"] if r["resource"] == "pods")
    subs = {s["subresource"]: s["responseKind"]["kind"] for s in pods["subresources"]}
    assert subs["exec"] == "PodExecOptions" and subs["ephemeralcontainers"] == "Pod"
