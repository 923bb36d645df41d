"""Exact traces of probes, init containers and lifecycle hooks on the emulated clock."""

import pytest

from cluster.api.annotations import AnnotationError
from cluster.api.probeoutcome import Outcome, parse_outcome
from cluster.api.validation import ValidationError, validate
from cluster.clock import rfc3339 as ts


def ctr(name="c", **fields):
    return {"name": name, "image": "nginx", **fields}


def http(**fields):
    return {"httpGet": {"path": "/healthz", "port": 8080}, **fields}


def unhealthy(d):
    return [(t, m) for t, _, reason, m in d.events if reason == "Unhealthy"]


def others(d):
    return [(t, reason, m) for t, _, reason, m in d.events if reason != "Unhealthy"]


def cond(st, ctype):
    c = next(c for c in st["conditions"] if c["type"] == ctype)
    return (c["status"], c.get("reason"), c.get("message"), c["lastTransitionTime"])


def flags(st, key="containerStatuses"):
    return [(s["name"], next(iter(s["state"])), s["started"], s["ready"]) for s in st[key]]


# ---- the outcome grammar --------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, outcome, answers",
    [
        ("pass", Outcome("pass"), {0: True, 1e6: True}),
        ("fail", Outcome("fail"), {0: False, 1e6: False}),
        ("timeout", Outcome("timeout"), {0: None}),
        ("fail-after=30s", Outcome("fail-after", 30), {29.9: True, 30: False}),
        ("pass-after=1m", Outcome("pass-after", 60), {59: False, 60: True}),
        ("flap=30s/10s", Outcome("flap", 30, 10), {0: True, 29: True, 30: False, 39: False, 40: True, 75: False}),
    ],
)
def test_outcome_grammar(raw, outcome, answers):
    parsed = parse_outcome("kubemu.io/liveness", raw)
    assert parsed == outcome
    assert {t: parsed.answer(t) for t in answers} == answers


@pytest.mark.parametrize(
    "raw, message",
    [
        ("sometimes", "is not a probe outcome"),
        ("fail-after=soon", "is not a probe outcome"),
        ("flap=10s", "is not a probe outcome"),
        ("flap=0s/10s", "flap durations must both be greater than 0"),
    ],
)
def test_bad_outcomes_are_refused(raw, message):
    with pytest.raises(AnnotationError) as e:
        parse_outcome("kubemu.io/readiness", raw)
    assert e.value.key == "kubemu.io/readiness" and e.value.message.startswith(message)


def _pod(annotations, containers=None):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "annotations": annotations},
        "spec": {"containers": containers or [ctr("web")]},
    }


@pytest.mark.parametrize(
    "annotations, error",
    [
        (
            {"kubemu.io/readiness": "maybe"},
            'metadata.annotations[kubemu.io/readiness]: Invalid value: "maybe": is not a probe outcome',
        ),
        (
            {"kubemu.io/liveness.web": "flap=1s"},
            'metadata.annotations[kubemu.io/liveness.web]: Invalid value: "flap=1s": is not a probe outcome',
        ),
        (
            {"kubemu.io/startup.db": "pass"},
            'metadata.annotations[kubemu.io/startup.db]: Invalid value: "kubemu.io/startup.db": names no container of this pod',
        ),
        (
            {"kubemu.io/pre-stop-seconds": "-1"},
            'metadata.annotations[kubemu.io/pre-stop-seconds]: Invalid value: "-1": is not a duration',
        ),
    ],
)
def test_validation_names_the_annotation(annotations, error):
    with pytest.raises(ValidationError) as e:
        validate(_pod(annotations))
    assert str(e.value).startswith(error)


def test_validation_accepts_the_documented_forms():
    ok = {
        "kubemu.io/readiness": "pass-after=20s",
        "kubemu.io/liveness.web": "fail-after=1m30s",
        "kubemu.io/startup": "flap=30s/10s",
        "kubemu.io/post-start-seconds": "5",
        "kubemu.io/pre-stop-seconds.web": "10s",
    }
    validate(_pod(ok))


# ---- readiness ------------------------------------------------------------------------


def test_readiness_gates_ready_until_it_passes(driver, pod):
    d = driver()
    d.send(
        "ADDED",
        pod("r", containers=[ctr(readinessProbe=http(periodSeconds=5))], annotations={"readiness": "pass-after=12s"}),
    )
    st = d.statuses["r"]
    assert st["phase"] == "Running" and flags(st) == [("c", "running", True, False)]
    assert cond(st, "Ready") == ("False", "ContainersNotReady", "containers with unready status: [c]", ts(0))
    d.run_until(100)
    # Probes at 0, 5, 10 fail; 15 passes (successThreshold 1); then nothing more is probed.
    assert unhealthy(d) == [(t, "Readiness probe failed: HTTP probe failed with statuscode: 500") for t in (0, 5, 10)]
    assert d.trace("r") == [(0.0, "Running", 0, "running"), (15.0, "Running", 0, "running")]
    st = d.statuses["r"]
    assert flags(st) == [("c", "running", True, True)]
    assert cond(st, "Ready") == ("True", None, None, ts(15)) and cond(st, "ContainersReady")[0] == "True"
    assert d.host.next_change() is None  # a result that can no longer change is not probed again
    assert d.host.next_timer() == 110.0  # the Lease's renewal, no probe


def test_readiness_thresholds_on_a_flapping_probe(driver, pod):
    d = driver()
    written = _record(d)
    probe = http(periodSeconds=10, successThreshold=2, failureThreshold=2, initialDelaySeconds=5)
    d.send("ADDED", pod("f", containers=[ctr(readinessProbe=probe)], annotations={"readiness": "flap=30s/30s"}))
    d.run_until(120)
    # Probes at 5, 15 (pass: ready at 15), 25 pass, 35, 45 (fail: unready at 45), 55 fail,
    # 65, 75 (pass: ready at 75), 85 pass, 95, 105 (fail: unready at 105), 115 fail.
    assert [t for t, _ in unhealthy(d)] == [35, 45, 55, 95, 105, 115]
    readiness = [(t, cond(st, "Ready")[0], cond(st, "Ready")[3]) for t, st in written]
    assert readiness == [
        (0, "False", ts(0)),
        (15, "True", ts(15)),
        (45, "False", ts(45)),
        (75, "True", ts(75)),
        (105, "False", ts(105)),
    ]


def _record(d):
    """Every (time, status) the host writes from now on, in order."""
    written, drain = [], d.host.drain

    def recording():
        out = drain()
        written.extend((int(d.now), st) for _ns, _name, _uid, st in out.pod_status.values())
        return out

    d.host.drain = recording
    return written


def test_a_failing_readiness_probe_ticks_in_the_background(driver, pod):
    d = driver()
    d.send("ADDED", pod("never", containers=[ctr(readinessProbe=http())], annotations={"readiness": "fail"}))
    d.run_until(35)
    assert [t for t, _ in unhealthy(d)] == [0, 10, 20, 30]
    kubelet = d.host.kubelet("node-0")
    (probe,) = next(iter(kubelet._pods.values())).life.probes
    assert probe.due == 40.0 and d.host.next_change() is None  # only events from here


def test_readiness_per_container_with_the_override(driver, pod):
    d = driver()
    containers = [ctr("web", readinessProbe=http()), ctr("db", readinessProbe={"tcpSocket": {"port": 5432}})]
    d.send("ADDED", pod("two", containers=containers, annotations={"readiness.db": "fail"}))
    d.run_until(1)
    st = d.statuses["two"]
    assert flags(st) == [("web", "running", True, True), ("db", "running", True, False)]
    assert cond(st, "ContainersReady") == ("False", "ContainersNotReady", "containers with unready status: [db]", ts(0))
    assert unhealthy(d) == [(0, "Readiness probe failed: dial tcp 10.244.0.2:5432: connect: connection refused")]


# ---- liveness -------------------------------------------------------------------------


def test_liveness_failure_restarts_the_container(driver, pod):
    d = driver()
    probe = {"tcpSocket": {"port": 80}, "initialDelaySeconds": 3}
    d.send("ADDED", pod("l", containers=[ctr(livenessProbe=probe)], annotations={"liveness": "fail-after=20s"}))
    d.run_until(100)
    # Probes at 3, 13 pass; 23, 33, 43 fail: killed at 43, restarted after 10 s of back-off at
    # 53, whose probes fail at 76, 86, 96.
    assert [t for t, _ in unhealthy(d)] == [23, 33, 43, 76, 86, 96]
    assert others(d) == [
        (43, "Killing", "Container c failed liveness probe, will be restarted"),
        (43, "BackOff", f"Back-off restarting failed container c in pod {_fmt(d, 'l')}"),
        (96, "Killing", "Container c failed liveness probe, will be restarted"),
        (96, "BackOff", f"Back-off restarting failed container c in pod {_fmt(d, 'l')}"),
    ]
    assert d.trace("l") == [
        (0.0, "Running", 0, "running"),
        (43.0, "Running", 1, "waiting"),
        (53.0, "Running", 1, "running"),
        (96.0, "Running", 2, "waiting"),  # back-off 20 s
    ]
    last = d.statuses["l"]["containerStatuses"][0]["lastState"]
    # Stopped on SIGTERM within its grace: 128 + 15.
    assert last == {"terminated": {"exitCode": 143, "reason": "Error", "startedAt": ts(53), "finishedAt": ts(96)}}


def _fmt(d, name):
    return next(e["involvedObject"] for e in d.raw_events if e["involvedObject"]["name"] == name)["uid"].join(
        [f"{name}_default(", ")"]
    )


@pytest.mark.parametrize(
    "stop, grace, probe_grace, killed_at, code",
    [
        (4, 30, None, 24, 143),  # SIGTERM at 20, stops on its own after 4 s
        (40, 30, None, 50, 137),  # the pod's 30 s grace runs out: SIGKILL
        (40, 30, 7, 27, 137),  # the probe's own terminationGracePeriodSeconds wins
    ],
)
def test_liveness_kill_takes_the_stop_time(driver, pod, stop, grace, probe_grace, killed_at, code):
    d = driver()
    probe = {"exec": {"command": ["true"]}, "failureThreshold": 1}
    if probe_grace is not None:
        probe["terminationGracePeriodSeconds"] = probe_grace
    p = pod("k", containers=[ctr(livenessProbe=probe)], grace=grace, restart_policy="Never")
    p["metadata"]["annotations"] = {"kubemu.io/liveness": "fail-after=15s", "kubemu.io/stop-seconds": str(stop)}
    d.send("ADDED", p)
    d.run_until(200)
    assert unhealthy(d) == [(20, "Liveness probe failed: ")]  # an exec probe's output (none)
    assert d.trace("k") == [(0.0, "Running", 0, "running"), (float(killed_at), "Failed", 0, "terminated")]
    assert d.statuses["k"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == code


def test_a_timed_out_probe_fails_after_its_timeout(driver, pod):
    d = driver()
    probe = http(timeoutSeconds=3, failureThreshold=2)
    d.send("ADDED", pod("slow", containers=[ctr(livenessProbe=probe)], annotations={"liveness": "timeout"}))
    d.run_until(14)
    url = "http://10.244.0.2:8080/healthz"
    msg = f'Liveness probe failed: Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    assert unhealthy(d) == [(3, msg), (13, msg)]
    assert others(d)[0] == (13, "Killing", "Container c failed liveness probe, will be restarted")


# ---- startup ----------------------------------------------------------------------------


def test_startup_probe_holds_liveness_and_readiness(driver, pod):
    d = driver()
    c = ctr(
        startupProbe=http(periodSeconds=10, failureThreshold=5),
        livenessProbe=http(periodSeconds=5),
        readinessProbe=http(periodSeconds=4),
    )
    d.send("ADDED", pod("s", containers=[c], annotations={"startup": "pass-after=25s", "liveness": "fail-after=41s"}))
    assert flags(d.statuses["s"]) == [("c", "running", False, False)]
    d.run_until(30)
    # Startup probes at 0, 10, 20 fail, 30 passes: started at 30; readiness (ticks 0, 4, ...)
    # runs at 32 and passes; liveness (ticks 0, 5, ...) at 30 passes.
    assert [m.split(":")[0] for _, m in unhealthy(d)] == ["Startup probe failed"] * 3
    assert flags(d.statuses["s"]) == [("c", "running", True, False)]
    d.run_until(32)
    assert flags(d.statuses["s"]) == [("c", "running", True, True)]
    assert cond(d.statuses["s"], "Ready")[3] == ts(32)
    d.run_until(60)
    # Liveness fails at 45, 50, 55: killed at 55.
    assert [t for t, m in unhealthy(d) if m.startswith("Liveness")] == [45, 50, 55]
    assert others(d)[0] == (55, "Killing", "Container c failed liveness probe, will be restarted")


def test_a_failed_startup_probe_kills_the_container(driver, pod):
    d = driver()
    c = ctr(startupProbe=http(periodSeconds=10, failureThreshold=3), livenessProbe=http())
    d.send("ADDED", pod("st", containers=[c], annotations={"startup": "fail"}))
    d.run_until(25)
    assert [t for t, _ in unhealthy(d)] == [0, 10, 20]  # liveness never probed
    assert others(d)[0] == (20, "Killing", "Container c failed startup probe, will be restarted")
    assert d.trace("st") == [(0.0, "Running", 0, "running"), (20.0, "Running", 1, "waiting")]


def test_a_pod_without_probes_has_no_extra_timers(driver, pod):
    d = driver()
    d.send("ADDED", pod("plain"))
    kubelet = d.host.kubelet("node-0")
    assert kubelet._pods[next(iter(kubelet._pods))].life is None
    assert d.host.next_change() is None


# ---- init containers ------------------------------------------------------------------


def test_init_containers_run_in_order(driver, pod):
    d = driver()
    inits = [ctr("a"), ctr("side", restartPolicy="Always"), ctr("b")]
    ann = {"start-seconds": 2, "run-seconds.a": 5, "run-seconds.b": 3}
    d.send("ADDED", pod("i", init_containers=inits, annotations=ann))
    seen = {}
    for t in (0, 2, 7, 10):
        d.run_until(t)
        st = d.statuses["i"]
        seen[t] = (st["phase"], cond(st, "Initialized")[:3], flags(st, "initContainerStatuses"), flags(st))
    waiting = ("c", "waiting", False, False)
    assert seen[0] == (
        "Pending",
        ("False", "ContainersNotInitialized", "containers with incomplete status: [a side b]"),
        [("a", "waiting", False, False), ("side", "waiting", False, False), ("b", "waiting", False, False)],
        [waiting],
    )
    assert seen[2][2] == [
        ("a", "running", True, False),
        ("side", "waiting", False, False),
        ("b", "waiting", False, False),
    ]
    assert seen[7] == (
        "Pending",
        ("False", "ContainersNotInitialized", "containers with incomplete status: [b]"),
        [("a", "terminated", False, True), ("side", "running", True, True), ("b", "running", True, False)],
        [waiting],
    )
    assert seen[10] == (
        "Running",
        ("True", None, None),
        [("a", "terminated", False, True), ("side", "running", True, True), ("b", "terminated", False, True)],
        [("c", "running", True, True)],
    )
    st = d.statuses["i"]
    assert cond(st, "Initialized")[3] == ts(10)
    assert st["initContainerStatuses"][0]["state"]["terminated"] == {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": ts(2),
        "finishedAt": ts(7),
    }
    assert st["initContainerStatuses"][1]["state"] == {"running": {"startedAt": ts(7)}}
    assert d.statuses["i"]["containerStatuses"][0]["state"] == {"running": {"startedAt": ts(10)}}
    assert d.trace("i") == [
        (0.0, "Pending", 0, "waiting"),
        (2.0, "Pending", 0, "waiting"),
        (7.0, "Pending", 0, "waiting"),
        (10.0, "Running", 0, "running"),
    ]


def test_a_pod_wide_run_seconds_is_the_apps_not_the_inits(driver, pod):
    d = driver()
    d.send("ADDED", pod("j", init_containers=[ctr("a")], annotations={"run-seconds": 5}, restart_policy="Never"))
    assert d.trace("j") == [(0.0, "Running", 0, "running")]
    d.run_until(5)
    assert d.trace("j")[-1] == (5.0, "Succeeded", 0, "terminated")


# ---- lifecycle hooks ------------------------------------------------------------------


def _hooked(pod, grace, **ann):
    hooks = {"postStart": {"exec": {"command": ["warm"]}}, "preStop": {"exec": {"command": ["drain"]}}}
    return pod("h", containers=[ctr(lifecycle=hooks)], grace=grace, annotations=ann)


def test_post_start_holds_the_container_in_creating(driver, pod):
    d = driver()
    d.send("ADDED", _hooked(pod, 30, **{"post-start-seconds": 4, "start-seconds": 1}))
    assert d.statuses["h"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    d.run_until(10)
    assert d.trace("h") == [(0.0, "Pending", 0, "waiting"), (5.0, "Running", 0, "running")]


@pytest.mark.parametrize(
    "pre, stop, grace, gone_after",
    [
        (6, 3, 30, 9),  # the hook, then SIGTERM and 3 s to stop
        (10, 3, 5, 7),  # the hook is cut at the 5 s grace; 2 s more after SIGTERM
        (0, 3, 30, 3),  # no hook time declared: as without a hook
    ],
)
def test_pre_stop_runs_before_sigterm_within_the_grace(driver, pod, deleting, pre, stop, grace, gone_after):
    d = driver()
    p = _hooked(pod, grace, **{"pre-stop-seconds": pre, "stop-seconds": stop})
    d.send("ADDED", p)
    d.run_until(10)
    d.send("MODIFIED", deleting(p, grace, 10))
    d.run_until(100)
    assert d.deletes == [(10.0 + gone_after, "h")]
