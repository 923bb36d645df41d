"""Emulated container logs and ephemeral containers: the kubelet writes container states
into the pod's status, and ``containerlogs`` renders what those containers printed from
the pod as stored. Each test drives a kubelet, then reads the log of the pod it wrote."""

import pytest

from cluster.api.containerlogs import LogUnavailable, Run, chosen_run, run_lines, run_now, timestamped
from cluster.clock import rfc3339 as ts


def stored(pod, status):
    """The pod as the apiserver holds it once the kubelet's status is written."""
    return {**pod, "status": status}


def log_of(pod, status, container="c", previous=False):
    p = stored(pod, status)
    return [line.text for line in run_lines(p, chosen_run(p, container, previous))]


def with_log(pod, text, container=None):
    key = "kubemu.io/log" + (f".{container}" if container else "")
    pod["metadata"].setdefault("annotations", {})[key] = text
    return pod


def test_a_running_container_printed_its_start_and_the_annotation_text(driver, pod):
    d = driver()
    p = with_log(pod("web", annotations={"start-seconds": 2}), "listening on :80\nready")
    d.send("ADDED", p)
    d.run_until(10)
    assert log_of(p, d.statuses["web"]) == [f"kubemu: container c started at {ts(2)}", "listening on :80", "ready"]


def test_a_finished_container_adds_its_exit_code_and_reason(driver, pod):
    d = driver()
    p = pod("job", restart_policy="Never", annotations={"run-seconds": 5, "exit-code": 3})
    d.send("ADDED", p)
    d.run_until(10)
    assert log_of(p, d.statuses["job"]) == [
        f"kubemu: container c started at {ts(0)}",
        f"kubemu: container c exited with code 3 (Error) at {ts(5)}",
    ]


def test_previous_reads_the_run_before_a_restart_and_is_refused_without_one(driver, pod):
    d = driver()
    p = pod("crash", annotations={"run-seconds": 5, "exit-code": 1})
    d.send("ADDED", p)
    d.run_until(3)
    with pytest.raises(LogUnavailable, match='^previous terminated container "c" in pod "crash" not found$'):
        log_of(p, d.statuses["crash"], previous=True)
    d.run_until(16)  # exited at 5, back-off 10 s, restarted at 15
    status = d.statuses["crash"]
    assert log_of(p, status, previous=True) == [
        f"kubemu: container c started at {ts(0)}",
        f"kubemu: container c exited with code 1 (Error) at {ts(5)}",
    ]
    assert log_of(p, status) == [f"kubemu: container c started at {ts(15)}"]


def test_in_back_off_the_current_log_is_the_last_run(driver, pod):
    d = driver()
    p = pod("crash", annotations={"run-seconds": 5, "exit-code": 1})
    d.send("ADDED", p)
    d.run_until(6)
    assert log_of(p, d.statuses["crash"])[-1] == f"kubemu: container c exited with code 1 (Error) at {ts(5)}"


def test_a_per_container_annotation_wins_over_the_pod_wide_one(driver, pod):
    d = driver()
    containers = [{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]
    p = with_log(with_log(pod("two", containers=containers), "everyone"), "only b", container="b")
    d.send("ADDED", p)
    assert log_of(p, d.statuses["two"], "a")[1:] == ["everyone"]
    assert log_of(p, d.statuses["two"], "b")[1:] == ["only b"]


@pytest.mark.parametrize(
    "status, message",
    [
        (None, 'container "c" in pod "web" is waiting to start: ContainerCreating'),
        ({"phase": "Pending"}, 'container "c" in pod "web" is not available'),
        (
            {"containerStatuses": [{"name": "c", "state": {}, "lastState": {}}]},
            'container "c" in pod "web" is waiting to start - no logs yet',
        ),
        (
            {"containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ErrImagePull"}}}]},
            'container "c" in pod "web" is waiting to start: image can\'t be pulled',
        ),
        (
            {"containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]},
            'container "c" in pod "web" is waiting to start: trying and failing to pull image',
        ),
    ],
)
def test_no_log_yet_is_the_kubelets_message(driver, pod, status, message):
    d = driver()
    p = pod("web", annotations={"start-seconds": 30})
    d.send("ADDED", p)
    with pytest.raises(LogUnavailable) as e:
        log_of(p, status or d.statuses["web"])
    assert str(e.value) == message


def test_an_init_container_ran_to_completion_at_admission(driver, pod):
    d = driver()
    p = pod("init", init_containers=[{"name": "setup", "image": "x"}])
    d.send("ADDED", p)
    assert log_of(p, d.statuses["init"], "setup") == [
        f"kubemu: container setup started at {ts(0)}",
        f"kubemu: container setup exited with code 0 (Completed) at {ts(0)}",
    ]


def test_run_now_follows_one_run_until_it_ends(driver, pod):
    d = driver()
    p = pod("web", annotations={"run-seconds": 5})
    d.send("ADDED", p)
    run = chosen_run(stored(p, d.statuses["web"]), "c")
    assert run == Run("c", 0.0) and run_now(stored(p, d.statuses["web"]), run) == run
    d.run_until(6)
    assert run_now(stored(p, d.statuses["web"]), run) == Run("c", 0.0, 5.0, 0, "Completed")
    assert run_now(None, run) is None


def test_timestamps_are_rfc3339_with_nine_fraction_digits():
    from cluster.api.containerlogs import LogLine

    assert timestamped(LogLine(1.5, "x")) == "2026-01-01T00:00:01.500000000Z x"


# ---- ephemeral containers -------------------------------------------------------------------


def debugged(p, *names, image="busybox"):
    """``p`` as the apiserver shows it once the ephemeralcontainers subresource added ``names``."""
    spec = {**p["spec"], "ephemeralContainers": [{"name": n, "image": image} for n in names]}
    return {**p, "spec": spec}


def ephemeral_states(d, name):
    return [(cs["name"], next(iter(cs["state"]))) for cs in d.statuses[name].get("ephemeralContainerStatuses", [])]


def test_an_added_ephemeral_container_runs_by_the_pods_annotations(driver, pod):
    d = driver()
    p = pod("web", annotations={"start-seconds": 1})
    d.send("ADDED", p)
    d.run_until(5)
    assert "ephemeralContainerStatuses" not in d.statuses["web"]
    d.send("MODIFIED", debugged(p, "dbg"))
    assert ephemeral_states(d, "web") == [("dbg", "waiting")]
    d.run_until(6.5)
    cs = d.statuses["web"]["ephemeralContainerStatuses"][0]
    assert cs == {
        "name": "dbg",
        "image": "busybox",
        "imageID": "",
        "state": {"running": {"startedAt": ts(6)}},
        "lastState": {},
        "ready": False,
        "restartCount": 0,
    }
    assert d.statuses["web"]["containerStatuses"][0]["state"] == {"running": {"startedAt": ts(1)}}
    p2 = debugged(p, "dbg")
    assert log_of(p2, d.statuses["web"], "dbg") == [f"kubemu: container dbg started at {ts(6)}"]


def test_an_ephemeral_container_exits_after_run_seconds_and_is_never_restarted(driver, pod):
    d = driver()
    p = pod("web", annotations={"run-seconds": 4, "exit-code": 2}, restart_policy="Always")
    d.send("ADDED", p)
    d.run_until(3)
    d.send("MODIFIED", debugged(p, "dbg"))
    d.run_until(8)
    cs = d.statuses["web"]["ephemeralContainerStatuses"][0]
    assert cs["state"] == {"terminated": {"exitCode": 2, "reason": "Error", "startedAt": ts(3), "finishedAt": ts(7)}}
    d.run_until(100)  # the pod's own container restarts; the ephemeral one stays terminated
    assert d.statuses["web"]["ephemeralContainerStatuses"][0]["state"] == cs["state"]
    assert d.statuses["web"]["containerStatuses"][0]["restartCount"] > 1


def test_a_second_ephemeral_container_keeps_the_first_ones_state(driver, pod):
    d = driver()
    p = pod("web")
    d.send("ADDED", p)
    d.send("MODIFIED", debugged(p, "one"))
    d.run_until(10)
    d.send("MODIFIED", debugged(p, "one", "two"))
    states = d.statuses["web"]["ephemeralContainerStatuses"]
    assert [(s["name"], s["state"]["running"]["startedAt"]) for s in states] == [("one", ts(0)), ("two", ts(10))]
    d.send("MODIFIED", debugged(p, "one", "two"))  # the kubelet's own write coming back: nothing new
    assert len(d.statuses["web"]["ephemeralContainerStatuses"]) == 2


def test_an_ephemeral_container_running_when_the_pod_finishes_is_killed_with_it(driver, pod):
    d = driver()
    p = pod("job", restart_policy="Never", annotations={"run-seconds": 5})
    d.send("ADDED", p)
    d.run_until(2)
    d.send("MODIFIED", debugged(p, "dbg"))
    d.run_until(10)
    assert d.statuses["job"]["phase"] == "Succeeded"
    state = d.statuses["job"]["ephemeralContainerStatuses"][0]["state"]
    # It started at 2 with run-seconds 5, so it would end at 7: the pod's end at 5 came first.
    assert state == {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": ts(2), "finishedAt": ts(5)}}


def test_a_finished_pod_starts_no_ephemeral_container(driver, pod):
    d = driver()
    p = pod("job", restart_policy="Never", annotations={"run-seconds": 1})
    d.send("ADDED", p)
    d.run_until(2)
    before = d.statuses["job"]
    d.send("MODIFIED", debugged(p, "dbg"))
    d.run_until(5)
    assert d.statuses["job"] == before
