"""The real kubectl against ``kubemu serve``: what an emulator cannot do (attach,
port-forward, cp) fails at once with one line that says so; ``kubectl logs`` (``-f``,
``--previous``) shows the emulated containers' lines; ``kubectl debug`` adds an ephemeral
container the kubelet runs."""

import json
import time

from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

EMULATED = "kubemu emulates containers"
HINT = "If you don't see a command prompt, try pressing enter."


def pod(name, restart="Always", **annotations):
    ann = {f"kubemu.io/{k.replace('_', '-')}": str(v) for k, v in annotations.items()}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "annotations": ann},
            "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "nginx"}]},
        }
    )


def running(served, name):
    def check():
        got = served.kubectl("get", "pod", name, "-o", "jsonpath={.status.phase}", check=False).stdout
        return got == "Running"

    assert until(check), f"pod {name} is not Running"


def test_attach_port_forward_and_cp_fail_at_once_with_one_clear_line(served, tmp_path):
    # exec itself is emulated (``test_kubectl_exec.py``); cp runs tar, which kubemu's shell lacks.
    served.kubectl("create", "-f", "-", input=pod("web"))
    running(served, "web")
    where = "pod default/web"
    for args, line in [
        (("attach", "web"), f"Error from server: {EMULATED}: there is no process to attach to ({where}, container c)"),
        (
            ("port-forward", "pod/web", "18080:80"),
            f"error: error upgrading connection: {EMULATED}: nothing listens on a port to forward to ({where})",
        ),
        (
            ("cp", "web:/etc/hosts", str(tmp_path / "hosts")),
            "command terminated with exit code 127",  # after the shell's ``exec: "tar": ... not found``, when shown
        ),
        (("exec", "nope", "--", "ls"), 'Error from server (NotFound): pods "nope" not found'),
        (
            ("exec", "web", "-c", "zz", "--", "ls"),
            "Error from server (BadRequest): container zz is not valid for pod web",
        ),
    ]:
        t0 = time.monotonic()
        out = served.kubectl(*args, check=False)
        assert out.returncode != 0, args
        assert time.monotonic() - t0 < 10, args  # no hang
        # kubectl attach prints its own hint before it connects; the error is the one line after it.
        errors = [ln for ln in out.stderr.splitlines() if ln.strip() and not ln.startswith(HINT)]
        assert errors[-1:] == [line] and len(errors) <= 2 if args[0] == "cp" else errors == [line], (args, out.stderr)
    assert not (tmp_path / "hosts").exists()


def test_logs_show_the_emulated_lines(served):
    served.kubectl("create", "-f", "-", input=pod("talker", log="hello\nworld"))
    running(served, "talker")
    lines = served.kubectl("logs", "talker").stdout.splitlines()
    assert lines[0].startswith("kubemu: container c started at ") and lines[1:] == ["hello", "world"]
    stamped = served.kubectl("logs", "talker", "--timestamps", "--tail=1").stdout.splitlines()
    assert len(stamped) == 1 and stamped[0].endswith(".000000000Z world")
    none = served.kubectl("logs", "talker", "--previous", check=False)
    assert none.returncode == 1
    assert (
        none.stderr.strip()
        == 'Error from server (BadRequest): previous terminated container "c" in pod "talker" not found'
    )


def test_logs_follow_ends_when_the_container_exits(served):
    served.kubectl("create", "-f", "-", input=pod("job", restart="Never", run_seconds=3, exit_code=4))
    running(served, "job")
    t0 = time.monotonic()
    lines = served.kubectl("logs", "-f", "job").stdout.splitlines()
    assert time.monotonic() - t0 < 15
    assert lines[0].startswith("kubemu: container c started at ")
    assert lines[-1].startswith("kubemu: container c exited with code 4 (Error) at ")


def test_logs_previous_after_the_container_exited(served):
    served.kubectl("create", "-f", "-", input=pod("crash", run_seconds=1, exit_code=1))

    def backing_off():
        got = served.kubectl("get", "pod", "crash", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")
        return got.stdout not in ("", "0")

    assert until(backing_off)
    previous = served.kubectl("logs", "crash", "--previous").stdout.splitlines()
    assert previous[-1].startswith("kubemu: container c exited with code 1 (Error) at ")


def test_debug_adds_an_ephemeral_container_the_kubelet_runs(served):
    served.kubectl("create", "-f", "-", input=pod("dbg"))
    running(served, "dbg")
    out = served.kubectl("debug", "dbg", "--image=busybox", "-c", "shell")
    assert "panic" not in out.stderr
    names = served.kubectl("get", "pod", "dbg", "-o", "jsonpath={.spec.ephemeralContainers[*].name}").stdout
    assert names == "shell"

    def state():
        got = served.kubectl("get", "pod", "dbg", "-o", "jsonpath={.status.ephemeralContainerStatuses[0].state}")
        return "running" in got.stdout

    assert until(state)
    assert "Ephemeral Containers:" in served.kubectl("describe", "pod", "dbg").stdout
    assert served.kubectl("logs", "dbg", "-c", "shell").stdout.startswith("kubemu: container shell started at ")


def test_debug_interactive_falls_back_to_the_log_with_the_clear_message(served):
    served.kubectl("create", "-f", "-", input=pod("dbg2"))
    running(served, "dbg2")
    out = served.kubectl("debug", "dbg2", "-it", "--image=busybox", "-c", "sh")
    assert "panic" not in out.stderr
    assert (
        f"warning: couldn't attach to pod/dbg2, falling back to streaming logs: {EMULATED}: there is no process "
        "to attach to (pod default/dbg2, container sh)"
    ) in out.stderr
    assert out.stdout.startswith("kubemu: container sh started at ")


def test_a_namespace_stuck_on_a_finalizer_is_freed_through_finalize(served, tmp_path):
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "stuck"}}
    ns["spec"] = {"finalizers": ["example.com/hold"]}
    served.kubectl("create", "-f", "-", input=json.dumps(ns))
    served.kubectl("delete", "namespace", "stuck", "--wait=false")
    status = json.loads(served.kubectl("get", "--raw", "/api/v1/namespaces/stuck/status").stdout)
    assert status["status"]["phase"] == "Terminating"
    # The well-known fix: PUT the namespace back with no finalizers to its finalize subresource.
    got = json.loads(served.kubectl("get", "namespace", "stuck", "-o", "json").stdout)
    got["spec"]["finalizers"] = []
    body = tmp_path / "ns.json"
    body.write_text(json.dumps(got))
    served.kubectl("replace", "--raw", "/api/v1/namespaces/stuck/finalize", "-f", str(body))
    gone = served.kubectl("get", "namespace", "stuck", check=False)
    assert gone.returncode == 1 and 'namespaces "stuck" not found' in gone.stderr
