"""``kubectl get`` cells of StatefulSets, Jobs, CronJobs and HPAs, as upstream prints them."""

import pytest
from test_tables import ago, obj, row

TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}


@pytest.mark.parametrize(
    "o, want",
    [
        (
            obj(
                "Job",
                "pi",
                spec={"completions": 3, "template": TEMPLATE},
                status={"succeeded": 1, "startTime": ago(90)},
            ),
            {"Status": "Running", "Completions": "1/3", "Duration": "90s"},
        ),
        (
            obj(
                "Job",
                "pi",
                spec={"parallelism": 4},
                status={
                    "startTime": ago(600),
                    "completionTime": ago(480),
                    "succeeded": 1,
                    "conditions": [{"type": "Complete", "status": "True"}],
                },
            ),
            {"Status": "Complete", "Completions": "1/1 of 4", "Duration": "2m"},
        ),
        (
            obj("Job", "pi", spec={"completions": 1}, status={"conditions": [{"type": "Suspended", "status": "True"}]}),
            {"Status": "Suspended", "Completions": "0/1", "Duration": ""},
        ),
        (
            obj("Job", "pi", status={"conditions": [{"type": "Failed", "status": "True"}]}),
            {"Status": "Failed"},
        ),
    ],
)
def test_job_cells(o, want):
    got = row("Job", o)
    assert {k: got[k] for k in want} == want


def test_cronjob_cells():
    cj = obj(
        "CronJob",
        "tick",
        spec={"schedule": "*/5 * * * *", "suspend": False, "jobTemplate": {"spec": {"template": TEMPLATE}}},
        status={"active": [{"name": "tick-1"}], "lastScheduleTime": ago(120)},
    )
    got = row("CronJob", cj)
    assert [got[k] for k in ("Schedule", "Timezone", "Suspend", "Active", "Last Schedule")] == [
        "*/5 * * * *",
        "<none>",
        "False",
        1,
        "2m",
    ]
    assert got["Images"] == "busybox"
    assert row("CronJob", obj("CronJob", "x"))["Suspend"] == "<unset>"


def test_statefulset_and_hpa_cells():
    assert (
        row("StatefulSet", obj("StatefulSet", "db", spec={"replicas": 3}, status={"readyReplicas": 2}))["Ready"]
        == "2/3"
    )
    target = {"type": "Utilization", "averageUtilization": 50}
    hpa = obj(
        "HorizontalPodAutoscaler",
        "web",
        spec={
            "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": target}}],
        },
        status={
            "currentReplicas": 4,
            "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 75}}}
            ],
        },
    )
    got = row("HorizontalPodAutoscaler", hpa)
    assert [got[k] for k in ("Reference", "Targets", "MinPods", "MaxPods", "Replicas")] == [
        "Deployment/web",
        "cpu: 75%/50%",
        "2",
        10,
        4,
    ]
    fresh = row(
        "HorizontalPodAutoscaler",
        obj(
            "HorizontalPodAutoscaler",
            "w",
            spec={
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}},
                    }
                ]
            },
        ),
    )
    assert fresh["Targets"] == "memory: <unknown>/1Gi" and fresh["MinPods"] == "<unset>"
