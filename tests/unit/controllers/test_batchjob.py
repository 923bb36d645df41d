"""The Job controller: its rules as tables, then Jobs run through the local runtime
(apiserver, scheduler, kubelets and the controller-manager in one process)."""

import pytest
from localrun import run_objects

from cluster.api.requests import Delete
from cluster.clock import rfc3339
from cluster.controllers import jobutil as ju
from cluster.controllers.jobttl import TTLAfterFinishedReconciler
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.writes import requests


@pytest.mark.parametrize(
    "failures, delay", [(0, 0), (1, 10), (2, 20), (3, 40), (4, 80), (5, 160), (6, 320), (7, 600), (8, 600), (20, 600)]
)
def test_pod_failure_backoff(failures, delay):
    assert ju.backoff_delay(failures) == delay


@pytest.mark.parametrize(
    "indexes, text",
    [
        (set(), ""),
        ({0}, "0"),
        ({0, 1, 2, 4}, "0-2,4"),
        ({1, 2}, "1,2"),
        ({5, 3, 9, 8, 7}, "3,5,7-9"),
        ([0, 0, 1], "0,1"),
        ({0, 1, 2, 4, 6, 7}, "0-2,4,6,7"),
    ],
)
def test_completed_indexes(indexes, text):
    assert ju.compress_indexes(indexes) == text


def failed_pod(*codes, conditions=()):
    statuses = [{"name": f"c{i}", "state": {"terminated": {"exitCode": c}}} for i, c in enumerate(codes)]
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {"phase": "Failed", "containerStatuses": statuses, "conditions": list(conditions)},
    }


DISRUPTED = {"type": "DisruptionTarget", "status": "True"}
RULES = {
    "rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "c1", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}},
    ]
}


@pytest.mark.parametrize(
    "pod, want",
    [
        (failed_pod(0, 42), (0, "FailJob", "c1")),
        (failed_pod(42, 0), (2, "Count", "c0")),  # 42 in another container; NotIn [1, 2] matches it
        (failed_pod(1, conditions=[DISRUPTED]), (1, "Ignore", None)),
        (failed_pod(1), None),
        (failed_pod(0), None),  # NotIn never matches exit 0
    ],
)
def test_pod_failure_policy_first_matching_rule(pod, want):
    got = ju.match_failure_policy(RULES, pod)
    assert (None if got is None else (got[0], got[1]["action"], got[2])) == want


def test_fail_job_message():
    assert ju.fail_job_message(failed_pod(0, 42), 0, "c1") == (
        "Container c1 for pod ns/p failed with exit code 42 matching FailJob rule at index 0"
    )


# ---- Jobs through the local runtime ---------------------------------------------------------


def run(*jobs, timeline=(), duration=120, expect=()):
    keep = [{"at": "end", "count": {"kind": "Pod"}, "atLeast": 0}]  # nothing to hold the run open
    return run_objects(jobs, duration=duration, expect=list(expect) or keep, timeline=timeline, cpu="4")


def job(name="j", annotations=None, **spec):
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": template, **spec}}


def events(report, reason):
    return [(e["time"], e["message"]) for e in report["events"] if e["reason"] == reason]


def test_suspended_then_resumed():
    report = run(
        job(suspend=True, completions=2, parallelism=2),
        timeline=[
            {
                "at": "20s",
                "patch": {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": "j"},
                    "type": "merge",
                    "patch": {"spec": {"suspend": False}},
                },
            }
        ],
        expect=[{"within": "60s", "object": {"kind": "Job", "name": "j"}, "field": "status.succeeded", "equals": 2}],
    )
    assert events(report, "Suspended") == [(0.0, "Job suspended")]
    assert events(report, "Resumed") == [(20.0, "Job resumed")]
    assert sorted(p["startTime"] for p in report["pods"]) == [rfc3339(20)] * 2  # no pod before the resume
    assert events(report, "Completed") == [(25.0, "Job completed")]


def test_active_deadline_fails_the_job_and_deletes_its_pods():
    report = run(
        job(activeDeadlineSeconds=10, annotations={"kubemu.io/run-seconds": "100"}),
        expect=[
            {
                "within": "30s",
                "object": {"kind": "Job", "name": "j"},
                "field": "status.conditions[type=Failed].reason",
                "equals": "DeadlineExceeded",
            }
        ],
    )
    assert events(report, "DeadlineExceeded") == [(10.0, "Job was active longer than specified deadline")]
    assert [p["name"] for p in report["pods"]] == []  # its one pod was deleted


def test_fail_job_rule_on_an_exit_code():
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]}
    report = run(
        job(
            podFailurePolicy=policy,
            backoffLimit=6,
            annotations={"kubemu.io/run-seconds": "2", "kubemu.io/exit-code": "3"},
        ),
        expect=[
            {
                "within": "30s",
                "object": {"kind": "Job", "name": "j"},
                "field": "status.conditions[type=Failed].reason",
                "equals": "PodFailurePolicy",
            }
        ],
    )
    ((_, message),) = events(report, "PodFailurePolicy")
    assert message.startswith("Container c for pod default/j-") and message.endswith(
        "failed with exit code 3 matching FailJob rule at index 0"
    )
    assert len(report["pods"]) == 1  # no retry: the rule failed the Job at once


def test_a_job_without_completions_is_done_after_one_success():
    report = run(
        job(parallelism=3),
        expect=[
            {
                "within": "30s",
                "object": {"kind": "Job", "name": "j"},
                "field": "status.conditions[type=Complete].status",
                "equals": "True",
            }
        ],
    )
    assert len([p for p in report["pods"] if p["phase"] == "Succeeded"]) == 3


def test_ttl_after_finished_deletes_in_the_foreground():
    ttl = ReconcilerStep(TTLAfterFinishedReconciler, sort_keys=True)
    done = {
        "metadata": {"name": "j", "namespace": "default", "uid": "u1"},
        "spec": {"ttlSecondsAfterFinished": 30},
        "status": {"completionTime": rfc3339(100), "conditions": [{"type": "Complete", "status": "True"}]},
    }
    ttl.on_event("Job", "MODIFIED", done, 100.0)
    assert not ttl.sync(100.0) and ttl.next_wakeup() == 130.0 and not ttl.sync(129.0)
    assert requests(ttl.sync(130.0)) == [Delete("Job", "default", "j", "u1", None, "Foreground")]
    assert not ttl.sync(131.0) and ttl.next_wakeup() is None  # asked once
    going = {**done, "metadata": {**done["metadata"], "deletionTimestamp": rfc3339(130)}}
    ttl.on_event("Job", "MODIFIED", going, 130.0)
    assert not ttl.sync(130.0)  # already going
    running = {**done, "status": {}}
    ttl.on_event("Job", "MODIFIED", {**running, "metadata": {**done["metadata"], "uid": "u2"}}, 1.0)
    assert not ttl.sync(1.0) and ttl.next_wakeup() is None
