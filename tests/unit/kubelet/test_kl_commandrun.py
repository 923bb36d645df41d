"""Containers run their commands in the emulated shell (``cluster/kubelet/commandrun.py``):
exit codes and run times on the emulated clock, restartPolicy, init containers that fail,
the environment, termination messages and the output the kubelet hands to a log request.
Exact traces from the kubelet driver."""

import pytest

from cluster.api.kubeletcalls import ContainerLogs
from cluster.kubelet.commandrun import commands_of, expand
from cluster.runtime.component import WatchEvent

BOX = "busybox"


def box(command=None, args=None, name="c", **extra):
    c = {"name": name, "image": BOX, **extra}
    if command is not None:
        c["command"] = command
    if args is not None:
        c["args"] = args
    return c


def state(status, i=0, field="containerStatuses"):
    return status[field][i]["state"]


def log(d, name="c", uid="uid-run", started=0.0, pod="run"):
    call = ContainerLogs("node-0", "default", pod, uid, name, started)
    return d.host.kubelet("node-0").answer_call(call, d.now)


@pytest.mark.parametrize(
    "command, trace, terminated",
    [
        (["/bin/true"], [(0.0, "Succeeded", 0, "terminated")], (0, "Completed")),
        (["/bin/false"], [(0.0, "Failed", 0, "terminated")], (1, "Error")),
        (["sh", "-c", "echo hi; exit 3"], [(0.0, "Failed", 0, "terminated")], (3, "Error")),
        (
            ["sh", "-c", "sleep 5; echo done"],  # a sleep takes its emulated seconds, uncapped by exec's 10
            [(0.0, "Running", 0, "running"), (5.0, "Succeeded", 0, "terminated")],
            (0, "Completed"),
        ),
        (["sleep", "30"], [(0.0, "Running", 0, "running"), (30.0, "Succeeded", 0, "terminated")], (0, "Completed")),
        # Forms the shell does not model, and sleeps that never end: run until stopped.
        (["sh", "-c", "while true; do sleep 1; done"], [(0.0, "Running", 0, "running")], None),
        (["sh", "-c", "echo $(hostname)"], [(0.0, "Running", 0, "running")], None),
        (["sh", "-c", "cat /etc/hosts | wc -l"], [(0.0, "Running", 0, "running")], None),
        (["nginx", "-g", "daemon off;"], [(0.0, "Running", 0, "running")], None),
        (["sh"], [(0.0, "Running", 0, "running")], None),
        (["sh", "-c", "echo up; sleep infinity; exit 1"], [(0.0, "Running", 0, "running")], None),
        (None, [(0.0, "Running", 0, "running")], None),  # the image's entrypoint
    ],
)
def test_a_container_runs_its_command_when_the_shell_knows_it(driver, pod, command, trace, terminated):
    d = driver()
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", containers=[box(command)]))
    d.run_until(100)
    assert d.trace("run") == trace
    if terminated is None:
        assert "running" in state(d.statuses["run"])
    else:
        got = state(d.statuses["run"])["terminated"]
        assert (got["exitCode"], got["reason"]) == terminated


@pytest.mark.parametrize(
    "policy, trace",
    [
        ("Always", [(0.0, "Running", 1, "waiting"), (10.0, "Running", 2, "waiting"), (30.0, "Running", 3, "waiting")]),
        (
            "OnFailure",
            [(0.0, "Running", 1, "waiting"), (10.0, "Running", 2, "waiting"), (30.0, "Running", 3, "waiting")],
        ),
        ("Never", [(0.0, "Failed", 0, "terminated")]),
    ],
)
def test_a_failing_command_follows_the_restart_policy(driver, pod, policy, trace):
    d = driver()
    d.send("ADDED", pod("run", uid="uid-run", restart_policy=policy, containers=[box(["/bin/false"])]))
    d.run_until(35)
    assert d.trace("run") == trace
    if policy != "Never":
        last = d.statuses["run"]["containerStatuses"][0]["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (1, "Error")
        assert [r for _, _, r, _ in d.events] == ["BackOff"] * 3


def test_the_annotations_win_over_the_command(driver, pod):
    d = driver()
    ann = {"run-seconds": 2, "exit-code": 0}
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", annotations=ann, containers=[box(["false"])]))
    d.run_until(5)
    assert d.trace("run") == [(0.0, "Running", 0, "running"), (2.0, "Succeeded", 0, "terminated")]
    assert state(d.statuses["run"])["terminated"]["exitCode"] == 0
    assert log(d) == ""  # it still ran: false prints nothing


def test_containers_of_one_pod_end_with_the_longest_and_keep_their_own_codes(driver, pod):
    d = driver()
    containers = [box(["sh", "-c", "sleep 3"], name="a"), box(["sh", "-c", "exit 4"], name="b")]
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", containers=containers))
    d.run_until(10)
    assert d.trace("run") == [(0.0, "Running", 0, "running"), (3.0, "Failed", 0, "terminated")]
    got = [cs["state"]["terminated"] for cs in d.statuses["run"]["containerStatuses"]]
    assert [(t["exitCode"], t["reason"], t["finishedAt"][-9:]) for t in got] == [
        (0, "Completed", "00:00:03Z"),
        (4, "Error", "00:00:00Z"),
    ]


def test_a_deleted_container_keeps_the_kill_not_its_script(driver, pod, deleting):
    d = driver()
    p = pod("run", uid="uid-run", restart_policy="Never", containers=[box(["sleep", "60"])], grace=5)
    d.send("ADDED", p)
    d.run_until(1)
    d.send("MODIFIED", deleting(p, 5, at=1))
    d.run_until(10)
    assert d.deletes == [(1.0, "run")]  # the sleep ends on SIGTERM at once (stop-seconds 0)


def test_the_environment_and_the_log_of_a_run(driver, pod):
    d = driver()
    env = [
        {"name": "FOO", "value": "foo-value"},
        {"name": "BAR", "value": "$(FOO)-bar"},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}},
    ]
    env_from = [{"configMapRef": {"name": "cfg"}, "prefix": "P_"}]
    c = box(["sh", "-c", "env; echo $(BAR) $FOO >&2"], env=env, envFrom=env_from)
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", containers=[c]))
    assert d.trace("run") == [(0.0, "Pending", 0, "waiting")]  # the ConfigMap does not exist
    d.clock.set(4)
    cm = {"kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"}, "data": {"k": "from-cm"}}
    d.host.on_watch([WatchEvent("ConfigMap", "ADDED", obj=cm)], d.now)
    d.flush()
    assert d.trace("run")[-1] == (4.0, "Succeeded", 0, "terminated")
    assert log(d, started=4.0) == (
        "HOSTNAME=run\nP_k=from-cm\nFOO=foo-value\nBAR=foo-value-bar\nPOD_NAME=run\n"
        f"POD_IP={d.statuses['run']['podIP']}\nHOST_IP=10.0.0.1\nCM=from-cm\n"
        "foo-value-bar foo-value\n"  # stderr after stdout
    )
    assert log(d, started=9.0) is None  # not a run the kubelet has
    assert log(d, uid="uid-other") is None


def test_a_container_without_a_known_command_has_no_kept_log(driver, pod):
    d = driver()
    d.send("ADDED", pod("run", uid="uid-run", containers=[box(["nginx"])]))
    assert log(d) is None


def test_previous_runs_keep_their_log(driver, pod):
    d = driver()
    c = box(["sh", "-c", "echo run; date; exit 2"])
    d.send("ADDED", pod("run", uid="uid-run", containers=[c]))
    d.run_until(11)
    assert log(d, started=0.0) == "run\nThu Jan  1 00:00:00 UTC 2026\n"
    assert log(d, started=10.0) == "run\nThu Jan  1 00:00:10 UTC 2026\n"


@pytest.mark.parametrize(
    "script, policy, message",
    [
        ("echo -n DONE > /dev/termination-log", None, "DONE"),
        ("echo out; exit 1", "FallbackToLogsOnError", "out\n"),
        ("echo out; exit 0", "FallbackToLogsOnError", None),  # only a failed run falls back
        ("echo out; exit 1", None, None),
        ("echo -n file > /dev/termination-log; echo out; exit 1", "FallbackToLogsOnError", "file"),
    ],
)
def test_the_termination_message(driver, pod, script, policy, message):
    d = driver()
    extra = {"terminationMessagePolicy": policy} if policy else {}
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", containers=[box(["sh", "-c", script], **extra)]))
    assert state(d.statuses["run"])["terminated"].get("message") == message


def test_a_custom_termination_message_path_and_the_limits(driver, pod):
    d = driver()
    long = "x" * 5000
    c = box(["sh", "-c", f"echo -n {long} > /tmp/msg"], terminationMessagePath="/tmp/msg")
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", containers=[c]))
    assert state(d.statuses["run"])["terminated"]["message"] == "x" * 4096
    lines = "; ".join(f"echo line{i}" for i in range(100))
    c = box(["sh", "-c", f"{lines}; exit 1"], terminationMessagePolicy="FallbackToLogsOnError")
    d.send("ADDED", pod("fall", uid="uid-fall", restart_policy="Never", containers=[c]))
    assert state(d.statuses["fall"])["terminated"]["message"] == "".join(f"line{i}\n" for i in range(20, 100))


def test_init_containers_run_their_commands_then_the_app(driver, pod):
    d = driver()
    inits = [box(["/bin/true"], name="init1"), box(["sh", "-c", "sleep 4"], name="init2")]
    d.send(
        "ADDED", pod("run", uid="uid-run", restart_policy="Never", init_containers=inits, containers=[box(["true"])])
    )
    d.run_until(10)
    assert d.trace("run") == [(0.0, "Pending", 0, "waiting"), (4.0, "Succeeded", 0, "terminated")]
    st = d.statuses["run"]
    init = [(s["state"]["terminated"]["exitCode"], s["ready"]) for s in st["initContainerStatuses"]]
    assert init == [(0, True), (0, True)]
    assert st["conditions"][0]["status"] == "True"


def test_a_failed_init_container_fails_a_pod_that_never_restarts(driver, pod):
    d = driver()
    inits = [box(["/bin/true"], name="init1"), box(["/bin/false"], name="init2")]
    d.send(
        "ADDED", pod("run", uid="uid-run", restart_policy="Never", init_containers=inits, containers=[box(["true"])])
    )
    d.run_until(60)
    st = d.statuses["run"]
    assert d.trace("run") == [(0.0, "Failed", 0, "waiting")]
    assert [s["state"]["terminated"]["exitCode"] for s in st["initContainerStatuses"]] == [0, 1]
    assert [s["ready"] for s in st["initContainerStatuses"]] == [True, False]
    assert state(st) == {"waiting": {"reason": "PodInitializing"}}
    init = st["conditions"][0]
    assert (init["type"], init["status"], init["reason"], init["message"]) == (
        "Initialized",
        "False",
        "ContainersNotInitialized",
        "containers with incomplete status: [init2]",
    )


def test_a_failed_init_container_restarts_and_the_app_waits(driver, pod):
    d = driver()
    inits = [box(["/bin/false"], name="init1"), box(["/bin/true"], name="init2")]
    d.send("ADDED", pod("run", uid="uid-run", init_containers=inits, containers=[box(["sleep", "100"])]))
    d.run_until(75)
    st = d.statuses["run"]
    assert st["phase"] == "Pending"
    first, second = st["initContainerStatuses"]
    assert first["restartCount"] == 4  # at 0, 10, 30, 70
    assert first["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert first["state"]["waiting"]["message"].startswith("back-off 1m20s restarting failed container=init1 pod=run_")
    assert first["lastState"]["terminated"]["exitCode"] == 1
    assert first["lastState"]["terminated"]["startedAt"].endswith("00:01:10Z")
    assert second["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert state(st) == {"waiting": {"reason": "PodInitializing"}}
    assert st["conditions"][0]["message"] == "containers with incomplete status: [init1 init2]"
    assert [(t, r) for t, _, r, _ in d.events] == [
        (0.0, "BackOff"),
        (10.0, "BackOff"),
        (30.0, "BackOff"),
        (70.0, "BackOff"),
    ]


def test_an_init_container_with_declared_run_seconds_does_not_run_its_command(driver, pod):
    d = driver()
    inits = [box(["/bin/false"], name="init1")]
    ann = {"run-seconds.init1": 2}
    d.send("ADDED", pod("run", uid="uid-run", annotations=ann, init_containers=inits, containers=[box()]))
    d.run_until(5)
    assert d.trace("run") == [(0.0, "Pending", 0, "waiting"), (2.0, "Running", 0, "running")]


def test_commands_of_keeps_only_known_commands():
    spec = {
        "containers": [
            box(["sh", "-c", "echo $(A)"], name="a", env=[{"name": "A", "value": "x"}]),
            box(["sh", "-c", "echo $(A)"], name="b"),  # not its env: the shell's command substitution
            box(args=["echo", "hi"], name="c"),  # args alone: the image's entrypoint runs
            box(["echo"], args=["hi"], name="d"),
        ]
    }
    cmds = commands_of({"metadata": {"name": "p"}, "spec": spec})
    assert cmds is not None and sorted(cmds.known) == ["a", "d"]
    assert commands_of({"spec": {"containers": [box(["nginx"])]}}) is None


@pytest.mark.parametrize(
    "argv, env, want",
    [
        (("echo", "$(A)"), {"A": "1"}, ("echo", "1")),
        (("echo", "$(B)"), {"A": "1"}, ("echo", "$(B)")),
        (("echo", "$$(A)", "$$"), {"A": "1"}, ("echo", "$(A)", "$")),
        (("echo", "$(A)$(A)"), {"A": "1"}, ("echo", "11")),
    ],
)
def test_expand(argv, env, want):
    assert expand(argv, env) == want


def resource_env(name, resource, divisor=None, container=None):
    ref = {
        "resource": resource,
        **({"divisor": divisor} if divisor else {}),
        **({"containerName": container} if container else {}),
    }
    return {"name": name, "valueFrom": {"resourceFieldRef": ref}}


def test_resource_field_refs_read_the_limits_requests_or_the_nodes_allocatable(driver, pod, config):
    d = driver(config(cpu="4", memory="8Gi"))
    env = [
        resource_env("CPU_LIMIT", "limits.cpu"),
        resource_env("MEMORY_LIMIT", "limits.memory", "1Mi"),
        resource_env("CPU_REQUEST", "requests.cpu", "1m"),
        resource_env("MEMORY_REQUEST", "requests.memory"),
        resource_env("OTHER_CPU", "limits.cpu", "1m", container="side"),
        resource_env("ZERO", "limits.cpu", "0"),
        resource_env("BAD", "limits.cpu", "x"),
    ]
    resources = {"requests": {"cpu": "250m", "memory": "32Mi"}}
    c = box(["env"], env=env, resources=resources)
    side = box(["true"], name="side", resources={"limits": {"cpu": "1250m"}})
    d.send("ADDED", pod("run", uid="uid-run", restart_policy="Never", containers=[c, side]))
    assert log(d).splitlines()[1:] == [
        "CPU_LIMIT=4",  # no limit: the node's allocatable
        "MEMORY_LIMIT=8092",  # allocatable: 8Gi less the 100Mi hard eviction threshold
        "CPU_REQUEST=250",
        f"MEMORY_REQUEST={32 * 1024 * 1024}",
        "OTHER_CPU=1250",
        "ZERO=4",  # the apiserver's default divisor, 0, counts as 1
        "BAD=",  # a divisor that does not parse (validation refuses it): no value
    ]
