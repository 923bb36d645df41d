"""The files of a kubelet's emulated containers: ``kubectl exec`` (a ``ContainerExec``
command to the node host), the pod proxy (``ContainerGet``) and the httpGet probes of a
static server, which read the same files. Exact traces on the emulated clock."""

import pytest

from cluster.api.containerfiles import HTTPD_INDEX, HTTPAnswer
from cluster.api.emulatedshell import ExecResult
from cluster.api.kubeletcalls import ContainerExec, ContainerGet
from cluster.kubelet.component import NodeHostComponent
from cluster.kubelet.containerfiles import STOPPED
from cluster.runtime.component import Batch, CommandError

HTTPD = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
BREAK = "mv -v /usr/local/apache2/htdocs/index.html /tmp/ || true"
RESTORE = "mv -v /tmp/index.html /usr/local/apache2/htdocs/ || true"
PROBE = {"httpGet": {"path": "/index.html", "port": 80}, "periodSeconds": 1, "failureThreshold": 1}


def web(pod, image=HTTPD, probe=PROBE, **kw):
    c = {"name": "httpd", "image": image, "readinessProbe": probe}
    return pod("web", containers=[c], uid="uid-web", **kw)


def execute(d, script, uid="uid-web", container="httpd"):
    call = ContainerExec("node-0", "default", "web", uid, container, ("/bin/sh", "-x", "-c", script))
    out = d.host.kubelet("node-0").answer_call(call, d.now)
    d.flush()
    return out


def ready(d):
    return [(t, m) for t, _, r, m in d.events if r == "Unhealthy"], d.statuses["web"]["containerStatuses"][0]["ready"]


def test_moving_the_docroot_file_away_fails_the_readiness_probe_and_back_passes_it(driver, pod):
    d = driver()
    d.send("ADDED", web(pod))
    d.run_until(0.5)
    assert ready(d) == ([], True)  # the probe at 0 found index.html
    assert execute(d, BREAK) == ExecResult(
        "renamed '/usr/local/apache2/htdocs/index.html' -> '/tmp/index.html'\n", f"+ {BREAK[:-8]}\n", 0
    )
    d.run_until(2.5)
    failed = "Readiness probe failed: HTTP probe failed with statuscode: 404"
    assert ready(d) == ([(1.0, failed), (2.0, failed)], False)  # every period while it is gone
    assert d.trace("web")[-1] == (1.0, "Running", 0, "running")
    assert execute(d, RESTORE).code == 0
    d.run_until(4.5)
    assert ready(d) == ([(1.0, failed), (2.0, failed)], True)
    assert [t for t, *_ in d.trace("web")] == [0.0, 0.0, 1.0, 3.0]  # running, ready at 0; unready at 1; ready at 3
    assert d.host.next_change() is None  # the probe ticks on in the background: only an exec changes files


def test_the_annotation_wins_over_the_files(driver, pod):
    d = driver()
    d.send("ADDED", web(pod, annotations={"readiness": "fail"}))
    execute(d, "true")
    d.run_until(0.5)
    assert ready(d) == ([(0.0, "Readiness probe failed: HTTP probe failed with statuscode: 500")], False)


@pytest.mark.parametrize(
    "image, probe",
    [
        ("busybox", PROBE),  # not a server kubemu knows: the declared outcome (pass)
        (HTTPD, {**PROBE, "httpGet": {"path": "/index.html", "port": 8080}}),  # not its port
        (HTTPD, {"tcpSocket": {"port": 80}}),
    ],
)
def test_other_probes_keep_their_declared_outcome(driver, pod, image, probe):
    d = driver()
    d.send("ADDED", web(pod, image=image, probe=probe))
    execute(d, "rm -f /usr/local/apache2/htdocs/index.html")
    d.run_until(5)
    assert ready(d) == ([], True)


def test_files_last_for_the_run_and_a_restart_starts_from_the_image(driver, pod):
    d = driver()
    d.send("ADDED", web(pod, probe=None))
    assert execute(d, "echo kept > /tmp/note").code == 0
    assert execute(d, "cat /tmp/note").stdout == "kept\n"
    k = d.host.kubelet("node-0")
    k._pods["uid-web"].runs += 1  # what a container restart does to the record
    assert execute(d, "cat /tmp/note") == ExecResult(
        "", "+ cat /tmp/note\ncat: /tmp/note: No such file or directory\n", 1
    )
    assert len(k.files) == 1


def test_a_command_in_a_container_that_does_not_run_exits_126(driver, pod):
    d = driver()
    d.send("ADDED", web(pod, probe=None, annotations={"start-seconds": "30"}))
    assert execute(d, "true") == ExecResult("", STOPPED, 126)  # still being created
    assert execute(d, "true", uid="uid-other") == ExecResult("", STOPPED, 126)
    d.run_until(31)
    assert execute(d, "true", container="nope") == ExecResult("", STOPPED, 126)
    assert execute(d, "true").code == 0


def test_the_pod_proxy_reads_the_files(driver, pod):
    d = driver()
    d.send("ADDED", web(pod, probe=None))
    k = d.host.kubelet("node-0")

    def get(path, port="80"):
        return k.answer_call(ContainerGet("node-0", "default", "web", "uid-web", "httpd", port, path), d.now)

    assert get("/") == HTTPAnswer(200, HTTPD_INDEX)
    execute(d, "echo '<p>new</p>' > /usr/local/apache2/htdocs/new.html")
    assert get("/new.html") == HTTPAnswer(200, "<p>new</p>\n")
    assert get("/gone").code == 404 and get("/", port="81") is None


def test_the_component_answers_the_calls_and_refuses_a_stopped_kubelet(config, pod):
    c = NodeHostComponent([config("node-0")])
    c.reconcile(Batch(0.0, boot="start"))
    call = ContainerExec("node-0", "default", "web", "uid-none", "httpd", ("echo", "hi"))
    assert c.handle(call, 1.0) == ExecResult("", STOPPED, 126)
    with pytest.raises(CommandError, match="node: 'node-9' is not a node of"):
        c.handle(call._replace(node="node-9"), 1.0)
    c.host.kill_node("node-0")
    with pytest.raises(CommandError, match="node: the kubelet of node-0 does not answer"):
        c.handle(call, 2.0)
