"""``spec.activeDeadlineSeconds`` on the node (deadline.py): exact traces of the pod's
status, its events and the node's resources around the deadline."""

import copy

import pytest
from test_kl_reconcile import listed, restarted

from cluster.kubelet.deadline import MESSAGE, REASON


def with_deadline(pod, seconds):
    pod = copy.deepcopy(pod)
    pod["spec"]["activeDeadlineSeconds"] = seconds
    return pod


def exit_code(status):
    return status["containerStatuses"][0]["state"]["terminated"]["exitCode"]


def test_a_running_pod_is_stopped_at_its_deadline_and_fails(driver, pod):
    d = driver()
    d.send("ADDED", with_deadline(pod("p", cpu="1", annotations={"start-seconds": 2}), 10))
    d.run_until(60)
    assert d.trace("p") == [
        (0.0, "Pending", 0, "waiting"),
        (2.0, "Running", 0, "running"),
        (10.0, "Failed", 0, "terminated"),
    ]
    assert [(t, r, m) for t, _, r, m in d.events] == [
        (10.0, REASON, MESSAGE),
        (10.0, "Killing", "Stopping container c"),
    ]
    assert d.raw_events[0]["type"] == "Normal"
    st = d.statuses["p"]
    assert (st["reason"], st["message"]) == (REASON, MESSAGE)
    assert exit_code(st) == 143  # stopped by SIGTERM within its grace
    assert not any(c["type"] == "DisruptionTarget" for c in st["conditions"])
    assert d.host.kubelet("node-0").requested() == {"pods": 0}


@pytest.mark.parametrize(
    "stop, grace, failed_at, code",
    [
        (5, None, 15.0, 143),  # stops on its own within the default 30 s
        (5, 3, 13.0, 137),  # the grace runs out first: killed
        (40, None, 40.0, 137),  # the default grace, 30 s
    ],
)
def test_the_stop_takes_the_pods_own_grace(driver, pod, stop, grace, failed_at, code):
    d = driver()
    d.send("ADDED", with_deadline(pod("p", grace=grace, annotations={"stop-seconds": stop}), 10))
    d.run_until(100)
    assert d.trace("p") == [(0.0, "Running", 0, "running"), (failed_at, "Failed", 0, "terminated")]
    assert exit_code(d.statuses["p"]) == code


def test_a_pod_still_starting_fails_at_once(driver, pod):
    d = driver()
    d.send("ADDED", with_deadline(pod("slow", cpu="1", annotations={"start-seconds": 20}), 5))
    assert d.host.kubelet("node-0").requested()["cpu"] == 1000
    d.run_until(60)
    assert d.trace("slow") == [(0.0, "Pending", 0, "waiting"), (5.0, "Failed", 0, "waiting")]
    assert [r for _, _, r, _ in d.events] == [REASON]  # no container ran: nothing to kill
    assert d.host.kubelet("node-0").requested() == {"pods": 0}


def test_a_crash_looping_pod_fails_during_its_back_off(driver, pod):
    d = driver()
    d.send("ADDED", with_deadline(pod("crash", annotations={"run-seconds": 3, "exit-code": 1}), 8))
    d.run_until(60)
    assert d.trace("crash") == [
        (0.0, "Running", 0, "running"),
        (3.0, "Running", 1, "waiting"),  # back-off 10 s: the restart would be at 13
        (8.0, "Failed", 1, "terminated"),
    ]
    assert [r for _, _, r, _ in d.events] == ["BackOff", REASON]
    assert exit_code(d.statuses["crash"]) == 1  # how its last run ended


def _finish_early(driver, pod, deleting, deadline):
    d = driver()
    done = pod("done", restart_policy="Never", annotations={"run-seconds": 5})
    gone = pod("gone", annotations={"stop-seconds": 30})
    if deadline:
        done, gone = with_deadline(done, 50), with_deadline(gone, 50)
    d.send("ADDED", done)
    d.send("ADDED", gone)
    d.clock.set(4)
    d.send("MODIFIED", deleting(gone, 30, at=4))  # stopped when its deadline comes
    d.run_until(40)
    return d


def test_pods_that_end_before_their_deadline_are_left_alone(driver, pod, deleting):
    d = _finish_early(driver, pod, deleting, deadline=True)
    assert d.trace("done") == [(0.0, "Running", 0, "running"), (5.0, "Succeeded", 0, "terminated")]
    assert [r for _, _, r, _ in d.events] == ["Killing"]
    assert d.deletes == [(34.0, "gone")]
    # The deadlines were disarmed, not left to fire: as many live timers as without them.
    assert len(d.host.timers) == len(_finish_early(driver, pod, deleting, deadline=False).host.timers)
    d.run_until(100)
    assert [r for _, _, r, _ in d.events] == ["Killing"]


def test_the_deadline_counts_from_admission_not_from_the_start(driver, pod):
    d = driver()
    d.clock.set(100)
    d.send("ADDED", with_deadline(pod("p", annotations={"start-seconds": 7}), 10))
    d.run_until(200)
    assert d.trace("p") == [
        (100.0, "Pending", 0, "waiting"),
        (107.0, "Running", 0, "running"),
        (110.0, "Failed", 0, "terminated"),
    ]


def test_a_restarted_kubelet_keeps_the_deadline_from_the_start_time(driver, pod, config):
    configs = [config()]
    d = driver(*configs)
    p = with_deadline(pod("p"), 30)
    d.send("ADDED", p)
    d.run_until(10)
    d2 = restarted(d, configs, 10, listed(d, p))
    d2.run_until(100)
    assert d2.trace("p") == [(30.0, "Failed", 0, "terminated")]
    late = restarted(d, configs, 50, listed(d, p))  # slept through it: fails at once, at its time
    assert late.trace("p") == [(50.0, "Failed", 0, "terminated")]
    assert late.statuses["p"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] == "2026-01-01T00:00:30Z"


def test_an_update_that_sets_or_shortens_the_deadline_is_acted_on(driver, pod):
    d = driver()
    web = pod("web", annotations={"start-seconds": 1})
    d.send("ADDED", web)
    d.run_until(20)
    d.send("MODIFIED", with_deadline(web, 60))  # set on a running pod: counts from startTime
    d.run_until(30)
    d.send("MODIFIED", with_deadline(web, 40))  # shortened
    d.run_until(100)
    assert d.trace("web") == [
        (0.0, "Pending", 0, "waiting"),
        (1.0, "Running", 0, "running"),
        (40.0, "Failed", 0, "terminated"),
    ]

    d.send("MODIFIED", with_deadline(web, 10))  # a finished pod: nothing happens
    d.run_until(200)
    assert [r for _, _, r, _ in d.events] == [REASON, "Killing"]


def test_a_deadline_shortened_into_the_past_acts_at_the_update(driver, pod):
    d = driver()
    web = with_deadline(pod("web"), 100)
    d.send("ADDED", web)
    d.run_until(50)
    d.send("MODIFIED", with_deadline(web, 10))
    d.run_until(60)
    assert d.trace("web") == [(0.0, "Running", 0, "running"), (50.0, "Failed", 0, "terminated")]
    assert [(t, r) for t, _, r, _ in d.events] == [(50.0, REASON), (50.0, "Killing")]
