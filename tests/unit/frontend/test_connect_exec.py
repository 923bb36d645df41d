"""exec over WebSocket and the pod proxy's answers, through a ``Handler`` whose backend asks
the local runtime's kubelets (``LocalBackend(command=cluster.command)``); the upgrade the
server would make is the ``execstream.Upgrade`` each test opens."""

import orjson
import pytest
from test_handler import AUTH, PODS, TOKEN, call, run

from cluster.api.containerfiles import HTTPD_INDEX
from cluster.api.emulatedshell import ExecResult
from cluster.frontend import execstream
from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request
from cluster.kubelet.containerfiles import STOPPED
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

HTTPD = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
AGNHOST = "registry.k8s.io/e2e-test-images/agnhost:2.43"


def pod(name, image, args=(), ports=(), annotations=None):
    c = {"name": "c", "image": image, "env": [{"name": "GREETING", "value": "hello"}]}
    if args:
        c["args"] = list(args)
    if ports:
        c["ports"] = [{"containerPort": p} for p in ports]
    meta = {"name": name, "annotations": annotations or {}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [c]}}


@pytest.fixture(scope="module")
def served():
    pools = [NodePool(namePrefix="n", count=1, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    h = Handler(LocalBackend(lambda: cluster.api, cluster.now, None, cluster.command), token=TOKEN)
    for p in (
        pod("web", HTTPD),
        pod("host", AGNHOST, ("serve-hostname",), (9376,)),
        pod("other", "busybox", ports=(8080,)),
        pod("late", HTTPD, annotations={"kubemu.io/start-seconds": "3600"}),
    ):
        assert call(h, "POST", PODS, p)[0] == 201
    run(cluster.settle())
    return h, cluster


def execute(h, name, *argv, protocol="v5.channel.k8s.io, v4.channel.k8s.io", **query):
    box = execstream.Upgrade({"command": list(argv)}, protocol)
    token = execstream.UPGRADE.set(box)
    try:
        q = {"stdout": "true", "stderr": "true", **query}
        answer = run(h.handle(Request("GET", f"{PODS}/{name}/exec", q, AUTH, b"")))
    finally:
        execstream.UPGRADE.reset(token)
    return answer, box


def test_an_exec_runs_in_the_container_and_answers_over_websocket(served):
    h, _ = served
    answer, box = execute(h, "web", "sh", "-c", "echo hi; echo $GREETING $HOSTNAME; exit 3")
    assert answer.status == 101 and box.protocol == "v5.channel.k8s.io"
    assert box.session.result == ExecResult("hi\nhello web\n", "", 3)
    status = {
        "metadata": {},
        "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command [sh -c echo hi; "
        "echo $GREETING $HOSTNAME; exit 3], exit code 3",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "3"}]},
    }
    assert execstream.frames(box.session) == [b"\x01hi\nhello web\n", b"\x03" + orjson.dumps(status)]


def test_files_changed_by_one_exec_are_seen_by_the_next_and_by_the_proxy(served):
    h, _ = served
    execute(h, "web", "sh", "-c", "mv /usr/local/apache2/htdocs/index.html /tmp/")
    assert call(h, "GET", f"{PODS}/web/proxy/index.html")[0] == 404
    answer, box = execute(h, "web", "ls", "/tmp", protocol="v4.channel.k8s.io")
    assert box.protocol == "v4.channel.k8s.io" and box.session.result.stdout == "index.html\n"
    execute(h, "web", "mv", "/tmp/index.html", "/usr/local/apache2/htdocs/")
    got = run(h.handle(Request("GET", f"{PODS}/web:80/proxy/", {}, AUTH, b"")))
    assert (got.status, got.body.decode()) == (200, HTTPD_INDEX)


def test_success_and_a_tty(served):
    h, _ = served
    _, box = execute(h, "web", "sh", "-c", "echo out; echo err >&2", tty="true")
    assert execstream.frames(box.session) == [b"\x01out\nerr\n", b'\x03{"metadata":{},"status":"Success"}']
    _, box = execute(h, "web", "sh", "-c", "echo err >&2", stdout="false")
    assert execstream.frames(box.session) == [b"\x02err\n", b'\x03{"metadata":{},"status":"Success"}']


def test_a_container_not_running_exits_126(served):
    h, _ = served
    answer, box = execute(h, "late", "true")
    assert answer.status == 101 and box.session.result == ExecResult("", STOPPED, 126)


@pytest.mark.parametrize(
    "argv, query, protocol, code, message",
    [
        ((), {}, "v5.channel.k8s.io", 400, "you must specify at least 1 command"),
        (
            ("ls",),
            {"stdout": "false", "stderr": "false"},
            "v5.channel.k8s.io",
            400,
            "you must specify at least 1 of stdin, stdout, stderr",
        ),
        (("ls",), {}, "v3.channel.k8s.io", 500, "kubemu emulates containers: exec is served over WebSocket"),
        (("ls",), {"container": "zz"}, "v5.channel.k8s.io", 400, "container zz is not valid for pod web"),
    ],
)
def test_bad_exec_requests_are_refused_before_the_upgrade(served, argv, query, protocol, code, message):
    h, cluster = served
    before = cluster.api.store.rv
    answer, box = execute(h, "web", *argv, protocol=protocol, **query)
    body = orjson.loads(answer.body)
    assert (answer.status, box.session) == (code, None) and body["message"].startswith(message)
    assert cluster.api.store.rv == before


def test_without_a_route_to_the_kubelets_exec_is_refused(served):
    _, cluster = served
    h = Handler(LocalBackend(lambda: cluster.api, cluster.now), token=TOKEN)
    answer, box = execute(h, "web", "true")
    assert answer.status == 500 and box.session is None
    assert orjson.loads(answer.body)["message"] == (
        "kubemu emulates containers: the kubelet of n-0 does not answer for pod default/web: "
        "no kubelet of n-0 can be reached from here"
    )


@pytest.mark.parametrize(
    "method, path, code, body",
    [
        ("GET", "host/proxy/", 200, "host"),  # agnhost serve-hostname: its first declared port, 9376
        ("GET", "host:9376/proxy/any/path", 200, "host"),
        ("HEAD", "host/proxy/", 200, ""),
        ("GET", "web/proxy/", 200, HTTPD_INDEX),  # no port declared: 80
        ("GET", "host:80/proxy/", 500, "kubemu emulates containers: nothing listens in pod default/host to proxy to"),
        ("GET", "other/proxy/", 500, "kubemu emulates containers: nothing listens in pod default/other to proxy to"),
        ("POST", "web/proxy/", 500, "kubemu emulates containers: nothing listens in pod default/web to proxy to"),
        ("GET", "late/proxy/", 500, "kubemu emulates containers: nothing listens in pod default/late to proxy to"),
    ],
)
def test_the_pod_proxy_answers_for_known_images(served, method, path, code, body):
    h, _ = served
    got = run(h.handle(Request(method, f"{PODS}/{path}", {}, AUTH, b"")))
    text = got.body.decode()
    assert (got.status, orjson.loads(text)["message"] if code == 500 else text) == (code, body)
