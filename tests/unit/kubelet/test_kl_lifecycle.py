"""Exact traces of the pod lifecycle: (drain time, phase, restartCount, container state)."""

import pytest

from cluster.clock import rfc3339 as ts

T0 = "2026-01-01T00:00:00Z"


def test_on_failure_crash_loop_trace(driver, pod):
    d = driver()
    d.send(
        "ADDED",
        pod("crash", restart_policy="OnFailure", annotations={"start-seconds": 2, "run-seconds": 5, "exit-code": 1}),
    )
    d.run_until(100)
    assert d.trace("crash") == [
        (0.0, "Pending", 0, "waiting"),
        (2.0, "Running", 0, "running"),
        (7.0, "Running", 1, "waiting"),  # backoff 10 s
        (17.0, "Running", 1, "running"),
        (22.0, "Running", 2, "waiting"),  # backoff 20 s
        (42.0, "Running", 2, "running"),
        (47.0, "Running", 3, "waiting"),  # backoff 40 s
        (87.0, "Running", 3, "running"),
        (92.0, "Running", 4, "waiting"),  # backoff 80 s
    ]
    assert [(t, r) for t, _, r, _ in d.events] == [
        (7.0, "BackOff"),
        (22.0, "BackOff"),
        (47.0, "BackOff"),
        (92.0, "BackOff"),
    ]
    cs = d.statuses["crash"]["containerStatuses"][0]  # the latest status, written at 92
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["state"]["waiting"]["message"].startswith(
        "back-off 1m20s restarting failed container=c pod=crash_default("
    )
    assert cs["lastState"] == {
        "terminated": {"exitCode": 1, "reason": "Error", "startedAt": ts(87), "finishedAt": ts(92)}
    }
    assert d.events[0][3].startswith("Back-off restarting failed container c in pod crash_default(")


def test_backoff_doubles_to_300_and_resets_after_a_long_run(driver, pod):
    d = driver()
    d.send("ADDED", pod("always", annotations={"run-seconds": 1}))
    d.run_until(2000)
    starts = [t for t, _, _, state in d.trace("always") if state == "running"]
    gaps = [round(b - a - 1) for a, b in zip(starts, starts[1:])]
    assert gaps[:8] == [10, 20, 40, 80, 160, 300, 300, 300]

    d2 = driver()
    d2.send("ADDED", pod("long", annotations={"run-seconds": 600}))
    d2.run_until(2500)
    starts = [t for t, _, _, state in d2.trace("long") if state == "running"]
    assert starts == [0.0, 610.0, 1220.0, 1830.0, 2440.0]


@pytest.mark.parametrize(
    "policy, code, phase, reason",
    [
        ("Never", 0, "Succeeded", "Completed"),
        ("Never", 3, "Failed", "Error"),
        ("OnFailure", 0, "Succeeded", "Completed"),
    ],
)
def test_terminal_outcomes(driver, pod, policy, code, phase, reason):
    d = driver()
    d.send(
        "ADDED", pod("j", restart_policy=policy, annotations={"start-seconds": 1, "run-seconds": 4, "exit-code": code})
    )
    d.run_until(50)
    assert d.trace("j") == [
        (0.0, "Pending", 0, "waiting"),
        (1.0, "Running", 0, "running"),
        (5.0, phase, 0, "terminated"),
    ]
    st = d.statuses["j"]
    assert st["containerStatuses"][0]["state"] == {
        "terminated": {"exitCode": code, "reason": reason, "startedAt": ts(1), "finishedAt": ts(5)}
    }
    assert [(c["type"], c["status"], c.get("reason")) for c in st["conditions"]] == [
        ("Initialized", "True", None),
        ("Ready", "False", "PodCompleted"),
        ("ContainersReady", "False", "PodCompleted"),
        ("PodScheduled", "True", None),
    ]
    assert d.host.kubelet("node-0").requested() == {"pods": 0}


def test_always_restarts_even_after_exit_zero(driver, pod):
    d = driver()
    d.send("ADDED", pod("svc", annotations={"run-seconds": 3}))
    d.run_until(14)
    assert d.trace("svc") == [
        (0.0, "Running", 0, "running"),
        (3.0, "Running", 1, "waiting"),
        (13.0, "Running", 1, "running"),
    ]


def test_pending_and_running_statuses_in_full(driver, pod):
    d = driver()
    p = pod("web", cpu="500m", memory="64Mi", annotations={"start-seconds": 3})
    d.send("ADDED", p)
    pending = d.statuses["web"]
    assert pending == {
        "phase": "Pending",
        "conditions": [
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": T0},
            {
                "type": "Ready",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": T0,
                "reason": "ContainersNotReady",
                "message": "containers with unready status: [c]",
            },
            {
                "type": "ContainersReady",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": T0,
                "reason": "ContainersNotReady",
                "message": "containers with unready status: [c]",
            },
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": T0},
        ],
        "qosClass": "Burstable",
        "hostIP": "10.0.0.1",
        "hostIPs": [{"ip": "10.0.0.1"}],
        "podIP": "10.244.0.2",
        "podIPs": [{"ip": "10.244.0.2"}],
        "startTime": T0,
        "containerStatuses": [
            {
                "name": "c",
                "image": "busybox",
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
                "lastState": {},
            }
        ],
    }
    d.run_until(3)
    running = d.statuses["web"]
    assert running["phase"] == "Running" and running["startTime"] == T0
    assert [(c["type"], c["status"], c["lastTransitionTime"]) for c in running["conditions"]] == [
        ("Initialized", "True", T0),
        ("Ready", "True", ts(3)),
        ("ContainersReady", "True", ts(3)),
        ("PodScheduled", "True", T0),
    ]
    assert running["containerStatuses"][0]["state"] == {"running": {"startedAt": ts(3)}}
    assert running["containerStatuses"][0]["ready"] is True
    assert d.host.kubelet("node-0").cgroup_of(p["metadata"]["uid"])["parent"].startswith("kubepods/burstable/pod")


def test_zero_start_coalesces_to_one_running_write(driver, pod):
    d = driver()
    d.feed([("ADDED", pod("a")), ("ADDED", pod("b", annotations={"start-seconds": 1}))], 0.0)
    out = d.host.drain()
    assert [(st[1], st[3]["phase"]) for st in out.pod_status.values()] == [("a", "Running"), ("b", "Pending")]
    assert d.host.drain().empty()


def test_status_echo_and_unrelated_modified_are_ignored(driver, pod):
    d = driver()
    p = pod("a", annotations={"start-seconds": 5})
    d.send("ADDED", p)
    echo = {**p, "status": d.statuses["a"], "metadata": {**p["metadata"], "resourceVersion": "7"}}
    d.feed([("MODIFIED", echo)], 1.0)
    assert d.host.drain().empty()


def test_graceful_stop_capped_by_grace(driver, pod, deleting):
    d = driver()
    p = pod("slow", annotations={"stop-seconds": 20})
    d.send("ADDED", p)
    d.run_until(10)
    d.send("MODIFIED", deleting(p, 5))
    assert d.events == [(10.0, "slow", "Killing", "Stopping container c")]
    d.run_until(14.9)
    assert d.deletes == []
    d.run_until(30)
    assert d.deletes == [(15.0, "slow")]
    assert d.host.kubelet("node-0").requested() == {"pods": 0}


def test_graceful_stop_takes_stop_seconds_when_shorter(driver, pod, deleting):
    d = driver()
    p = pod("quick", annotations={"stop-seconds": 3})
    d.send("ADDED", p)
    d.send("MODIFIED", deleting(p, 30))
    d.send("MODIFIED", deleting(p, 30))  # the same delete seen again changes nothing
    d.run_until(60)
    assert d.deletes == [(3.0, "quick")]


def test_shorter_grace_shortens_and_longer_does_not_extend(driver, pod, deleting):
    d = driver()
    p = pod("s", annotations={"stop-seconds": 60})
    d.send("ADDED", p)
    d.run_until(10)
    d.send("MODIFIED", deleting(p, 30))  # would end at 40
    d.run_until(15)
    d.send("MODIFIED", deleting(p, 10))  # shortened: ends at 10 + 10 = 20
    d.run_until(16)
    d.send("MODIFIED", deleting(p, 30))  # never lengthened
    d.run_until(100)
    assert d.deletes == [(20.0, "s")]
    assert [e[2] for e in d.events] == ["Killing"]


def test_grace_shortened_into_the_past_confirms_at_once(driver, pod, deleting):
    d = driver()
    p = pod("s", annotations={"stop-seconds": 60})
    d.send("ADDED", p)
    d.send("MODIFIED", deleting(p, 30))
    d.run_until(8)
    d.send("MODIFIED", deleting(p, 5))
    assert d.deletes == [(8.0, "s")]


def test_container_exiting_during_stop_ends_it(driver, pod, deleting):
    d = driver()
    p = pod("s", restart_policy="Never", annotations={"stop-seconds": 60, "run-seconds": 7})
    d.send("ADDED", p)
    d.run_until(2)
    d.send("MODIFIED", deleting(p, 30))
    d.run_until(100)
    assert d.deletes == [(7.0, "s")]
    assert d.trace("s") == [(0.0, "Running", 0, "running")]


@pytest.mark.parametrize(
    "annotations, at",
    [
        ({"start-seconds": 10}, 3),  # pending
        ({"run-seconds": 1, "exit-code": 1}, 5),  # in CrashLoopBackOff
        ({"run-seconds": 1}, 0.5),  # running, stop-seconds 0
    ],
)
def test_not_running_or_instant_stop_confirms_at_once(driver, pod, deleting, annotations, at):
    d = driver()
    p = pod("p", annotations=annotations)
    d.send("ADDED", p)
    d.run_until(at)
    d.send("MODIFIED", deleting(p, 30))
    assert d.deletes == [(at, "p")]
    assert len(d.host.timers) == 1  # only the lease renewal is left
    d.send("MODIFIED", deleting(p, 30))
    assert d.deletes == [(at, "p")]


def test_terminal_pod_confirms_at_once(driver, pod, deleting):
    d = driver()
    p = pod("done", restart_policy="Never", annotations={"run-seconds": 1})
    d.send("ADDED", p)
    d.run_until(2)
    d.send("MODIFIED", deleting(p, 0))
    assert d.deletes == [(2.0, "done")]


def test_new_pod_already_terminating_is_confirmed_without_admission(driver, pod, deleting):
    d = driver()
    d.send("ADDED", deleting(pod("gone", cpu="100"), 30))
    assert d.deletes == [(0.0, "gone")] and d.events == [] and d.log == []


def test_deleted_event_forgets_and_drops_queued_status(driver, pod):
    d = driver()
    p = pod("x", cpu="1", annotations={"start-seconds": 4})
    d.feed([("ADDED", p), ("DELETED", p)], 0.0)
    out = d.host.drain()
    assert out.pod_status == {} and out.pod_deletes == {}
    k = d.host.kubelet("node-0")
    assert k.pods() == {} and k.requested() == {"pods": 0}
    d.run_until(10)
    assert d.log == []


def test_late_tick_keeps_scheduled_times(driver, pod):
    d = driver()
    d.send("ADDED", pod("a", annotations={"start-seconds": 2, "run-seconds": 3}))
    d.host.tick(30.0)  # one coarse tick: start@2, exit@5, restart@15, exit@18 all happen
    st = d.host.drain().pod_status
    ((_, _, _, status),) = st.values()
    cs = status["containerStatuses"][0]
    assert cs["restartCount"] == 2 and cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["lastState"]["terminated"]["finishedAt"] == ts(18)
    assert d.host.next_timer() == 38.0


def test_init_container_statuses(driver, pod):
    d = driver()
    p = pod(
        "i",
        init_containers=[
            {"name": "setup", "image": "alpine"},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always"},
        ],
    )
    d.send("ADDED", p)
    st = d.statuses["i"]
    assert [(s["name"], next(iter(s["state"])), s["ready"]) for s in st["initContainerStatuses"]] == [
        ("setup", "terminated", True),  # upstream: a completed init container is ready
        ("proxy", "running", True),
    ]


def test_bad_annotation_runs_with_defaults(driver, pod):
    d = driver()
    d.send("ADDED", pod("bad", annotations={"start-seconds": "soon"}))
    assert d.trace("bad") == [(0.0, "Running", 0, "running")]


def test_killed_kubelet_outputs_nothing(driver, pod, deleting):
    d = driver()
    p = pod("a", annotations={"start-seconds": 5})
    d.send("ADDED", p)
    d.host.kill_node("node-0")
    d.run_until(100)
    d.send("MODIFIED", deleting(p, 30))
    assert d.trace("a") == [(0.0, "Pending", 0, "waiting")]
    assert d.deletes == [] and d.leases == [(0.0, "node-0", 0.0)]
    assert d.host.next_timer() is None and d.host.node_names() == set()
