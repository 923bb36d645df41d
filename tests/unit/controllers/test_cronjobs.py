"""The CronJob controller: the due-time arithmetic as a table, then CronJobs through the
local runtime, on the emulated clock (emulated 0 is 2026-01-01T00:00:00Z)."""

import pytest
from localrun import run_objects

from cluster.api.cronschedule import parse_schedule
from cluster.controllers.cronjobs import UNIX0, most_recent

MINUTE = parse_schedule("* * * * *")


@pytest.mark.parametrize(
    "earliest, now, due, missed",
    [
        (0, 59, None, 0),  # nothing due yet
        (0, 60, 60, 1),
        (0, 119, 60, 1),
        (0, 120, 120, 2),  # only the latest missed run, never a backlog
        (0, 3599, 3540, 59),
        (60, 130, 120, 1),
        (125, 179, None, 0),  # a 10 s starting deadline from 135 reaches back to 125 only
    ],
)
def test_most_recent_due_time(earliest, now, due, missed):
    got, n = most_recent(MINUTE, None, UNIX0 + earliest, UNIX0 + now)
    assert (None if got is None else got - UNIX0, n) == (due, missed)


def run(cronjob_spec, duration, run_seconds="75"):
    template = {
        "metadata": {"annotations": {"kubemu.io/run-seconds": run_seconds}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]},
    }
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "tick"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}, **cronjob_spec},
    }
    # Held until the end: never three runs at once (and the run lasts to ``duration``).
    until = {
        "until": duration,
        "object": {"kind": "CronJob", "name": "tick"},
        "field": "status.active[2]",
        "exists": False,
    }
    report = run_objects([cj], duration=duration, expect=[until], nodes=1)
    return [
        (round(e["time"]), e["reason"], e["message"], e["count"])
        for e in report["events"]
        if e["object"] == "CronJob/default/tick"
    ]


def test_forbid_starts_a_missed_run_late():
    events = run({"concurrencyPolicy": "Forbid"}, 250)
    creates = [(t, m) for t, r, m, _ in events if r == "SuccessfulCreate"]
    assert creates == [
        (60, "Created job tick-29453761"),
        (135, "Created job tick-29453762"),
        (210, "Created job tick-29453763"),
    ]
    # The same refusal each minute is one Event counted up, last seen at 240 s.
    assert [(t, c) for t, r, _, c in events if r == "JobAlreadyActive"] == [(240, 3)]


def test_forbid_with_a_starting_deadline_drops_the_missed_run():
    events = run({"concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 10}, 250)
    creates = [t for t, r, *_ in events if r == "SuccessfulCreate"]
    assert creates == [60, 180]  # the 120 run is dropped: at 135 the window reaches back to 125


def test_allow_overlaps_and_replace_deletes_the_active_job():
    allow = run({}, 130)
    assert [t for t, r, *_ in allow if r == "SuccessfulCreate"] == [60, 120]
    replace = run({"concurrencyPolicy": "Replace"}, 130)
    assert (120, "SuccessfulDelete", "Deleted job tick-29453761", 1) in replace
    assert [t for t, r, *_ in replace if r == "SuccessfulCreate"] == [60, 120]


def test_history_limits_and_suspend():
    events = run({"successfulJobsHistoryLimit": 1}, 250, run_seconds="10")
    deleted = [m for _, r, m, _ in events if r == "SuccessfulDelete"]
    assert deleted == ["Deleted job tick-29453761", "Deleted job tick-29453762"]
    assert [r for _, r, *_ in run({"suspend": True}, 200)] == []
