"""The groups and versions real manifests use (issue 36): discovery of the views and reviews,
autoscaling/v1 and events.k8s.io/v1 as views of one storage, the review kinds and the local
APIServices; through a ``Handler`` over the local runtime, no socket. The new kinds' tables and
admission are in ``test_groups_kinds.py``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest

from cluster.api import eventsv1, hpav1
from cluster.api.kinds import version_order
from cluster.frontend import apiservices, discovery
from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request, Response, WatchStream
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

TOKEN = "secret"
AUTH = {"authorization": f"Bearer {TOKEN}"}
MERGE = {**AUTH, "content-type": "application/merge-patch+json"}
TABLE = {**AUTH, "accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
HPA_V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
HPA_V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_EVENTS = "/api/v1/namespaces/default/events"
AUTHZ = "/apis/authorization.k8s.io/v1"
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
PODS = "/api/v1/namespaces/default/pods"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def new_handler() -> Handler:
    """A Handler over a started one-node local cluster."""
    pools = [NodePool(namePrefix="n", count=1, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    return Handler(LocalBackend(lambda: cluster.api, cluster.now), token=TOKEN)


@pytest.fixture
def h() -> Handler:
    return new_handler()


def call(h: Handler, method: str, path: str, body: Any = None, headers: dict | None = None, **query: Any):
    raw = body if isinstance(body, bytes) else (orjson.dumps(body) if body is not None else b"")
    req = Request(method, path, {k: str(v) for k, v in query.items()}, AUTH if headers is None else headers, raw)
    answer = run(h.handle(req))
    assert isinstance(answer, Response)
    return answer.status, orjson.loads(answer.body)


def watch_events(h: Handler, path: str, **query: Any) -> list[dict]:
    req = Request("GET", path, {"watch": "true", "timeoutSeconds": "1", **query}, AUTH)

    async def collect() -> list[dict]:
        answer = await h.handle(req)
        assert isinstance(answer, WatchStream)
        out = []
        async for chunk in answer.lines:
            out += [orjson.loads(line) for line in chunk.splitlines()]
            if out:
                break
        return out

    return run(collect())


def hpa_v1(name: str = "web", **spec: Any) -> dict:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {"scaleTargetRef": ref, "minReplicas": 1, "maxReplicas": 5, **spec},
    }


PODS_METRIC = {
    "type": "Pods",
    "pods": {"metric": {"name": "packets"}, "target": {"type": "AverageValue", "averageValue": "1k"}},
}
CPU_60 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}


# ---- discovery --------------------------------------------------------------------------------


def test_versions_sort_as_upstream_prefers_them():
    assert sorted(["v1beta1", "v1", "v2", "v2beta2", "v1alpha1", "x"], key=version_order) == [
        "v2", "v1", "v2beta2", "v1beta1", "v1alpha1", "x",
    ]  # fmt: skip


def test_autoscaling_is_served_at_v2_preferred_and_v1():
    groups = {g["name"]: g for g in discovery.legacy_groups()["groups"]}
    assert [v["version"] for v in groups["autoscaling"]["versions"]] == ["v2", "v1"]
    assert groups["autoscaling"]["preferredVersion"]["version"] == "v2"
    aggregated = {i["metadata"].get("name", ""): i for i in discovery.aggregated(False)["items"]}
    assert [v["version"] for v in aggregated["autoscaling"]["versions"]] == ["v2", "v1"]


@pytest.mark.parametrize(
    "group, version, plural, kind, verbs",
    [
        ("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", 8),
        ("events.k8s.io", "v1", "events", "Event", 8),
        ("networking.k8s.io", "v1", "ingresses", "Ingress", 8),
        ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", 8),
        ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", 8),
        ("apiregistration.k8s.io", "v1", "apiservices", "APIService", 8),
        ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", 8),
        ("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", 8),
        ("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", 1),
        ("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", 1),
        ("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", 1),
    ],
)
def test_discovery_lists_each_new_resource(group, version, plural, kind, verbs):
    listing = discovery.resource_list(group, version)
    assert listing is not None
    entry = next(r for r in listing["resources"] if r["name"] == plural)
    assert entry["kind"] == kind and len(entry["verbs"]) == verbs
    if verbs == 1:
        assert entry["verbs"] == ["create"]  # a review is only created
        assert [
            e.part for e in discovery.endpoints(next(r for r in discovery._in(group, version) if r.plural == plural))
        ] == ["collection"]


# ---- autoscaling/v1: a view of the stored autoscaling/v2 HPAs ------------------------------------


def test_an_hpa_created_with_v1_reads_back_as_v2_and_v1(h):
    code, made = call(h, "POST", HPA_V1, hpa_v1(targetCPUUtilizationPercentage=60), fieldValidation="Strict")
    assert code == 201 and made["apiVersion"] == "autoscaling/v1"
    assert made["spec"]["targetCPUUtilizationPercentage"] == 60
    assert made["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    code, v2 = call(h, "GET", f"{HPA_V2}/web")
    assert v2["apiVersion"] == "autoscaling/v2" and v2["spec"]["metrics"] == [CPU_60]
    code, listed = call(h, "GET", HPA_V1)
    assert listed["kind"] == "HorizontalPodAutoscalerList" and listed["apiVersion"] == "autoscaling/v1"
    assert [i["spec"]["targetCPUUtilizationPercentage"] for i in listed["items"]] == [60]


def test_a_v1_hpa_without_a_target_gets_cpu_at_80_percent(h):
    call(h, "POST", HPA_V1, hpa_v1())
    metrics = call(h, "GET", f"{HPA_V2}/web")[1]["spec"]["metrics"]
    assert metrics == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}
    ]


def test_v2_metrics_v1_cannot_show_travel_in_its_annotations_and_come_back(h):
    v2 = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            "metrics": [PODS_METRIC, CPU_60],
            "behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}},
        },
    }
    call(h, "POST", HPA_V2, v2)
    v1 = call(h, "GET", f"{HPA_V1}/web")[1]
    ann = v1["metadata"]["annotations"]
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 60
    assert ann[hpav1.METRICS] == '[{"type":"Pods","pods":{"metricName":"packets","targetAverageValue":"1k"}}]'
    assert json.loads(ann[hpav1.BEHAVIOR])["ScaleDown"]["Policies"] == [
        {"Type": "Pods", "Value": 1, "PeriodSeconds": 60}
    ]
    # A client that reads v1 and writes it back loses nothing.
    v1["spec"]["maxReplicas"] = 7
    code, _ = call(h, "PUT", f"{HPA_V1}/web", v1)
    back = call(h, "GET", f"{HPA_V2}/web")[1]
    assert code == 200 and back["spec"]["maxReplicas"] == 7 and back["spec"]["metrics"] == [PODS_METRIC, CPU_60]
    assert back["spec"]["behavior"]["scaleDown"]["policies"] == [{"type": "Pods", "value": 1, "periodSeconds": 60}]
    assert hpav1.METRICS not in (back["metadata"].get("annotations") or {})


def test_a_v1_patch_changes_the_stored_hpa(h):
    call(h, "POST", HPA_V1, hpa_v1(targetCPUUtilizationPercentage=60))
    code, patched = call(h, "PATCH", f"{HPA_V1}/web", {"spec": {"targetCPUUtilizationPercentage": 70}}, MERGE)
    assert code == 200 and patched["spec"]["targetCPUUtilizationPercentage"] == 70
    metric = call(h, "GET", f"{HPA_V2}/web")[1]["spec"]["metrics"][0]
    assert metric["resource"]["target"]["averageUtilization"] == 70


@pytest.mark.parametrize(
    "body, code, message",
    [
        (
            hpa_v1(bogus=1),
            400,
            'HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: '
            'strict decoding error: unknown field "spec.bogus"',
        ),
        (
            {**hpa_v1(), "apiVersion": "autoscaling/v2"},
            400,
            "the API version in the data (autoscaling/v2) does not match the expected API version (autoscaling/v1)",
        ),
        (hpa_v1(maxReplicas=0), 422, 'HorizontalPodAutoscaler.autoscaling "web" is invalid: spec.maxReplicas'),
    ],
)
def test_a_bad_v1_hpa_is_refused_and_nothing_is_stored(h, body, code, message):
    got, status = call(h, "POST", HPA_V1, body, fieldValidation="Strict")
    assert (got, status["kind"]) == (code, "Status") and status["message"].startswith(message)
    assert call(h, "GET", HPA_V2)[1]["items"] == []


def test_a_v1_watch_sends_v1_objects(h):
    call(h, "POST", HPA_V2, hpav1.to_v2(hpa_v1(targetCPUUtilizationPercentage=50)))
    events = watch_events(h, HPA_V1)
    assert [
        (e["type"], e["object"]["apiVersion"], e["object"]["spec"].get("targetCPUUtilizationPercentage"))
        for e in events
    ] == [("ADDED", "autoscaling/v1", 50)]


@pytest.mark.parametrize(
    "v2_status, v1_status",
    [
        ({}, {"currentReplicas": 0, "desiredReplicas": 0}),
        (
            {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 75, "averageValue": "150m"}}}
            ]},
            {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 75},
        ),
    ],
)  # fmt: skip
def test_hpa_status_in_v1(v2_status, v1_status):
    v2 = {
        "metadata": {"name": "x"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}},
        "status": v2_status,
    }
    v1 = hpav1.to_v1(v2)
    assert v1["status"] == v1_status
    if v2_status.get("currentMetrics"):
        current = json.loads(v1["metadata"]["annotations"][hpav1.CURRENT_METRICS])
        assert current == [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "currentAverageUtilization": 75, "currentAverageValue": "150m"},
            }
        ]
        assert hpav1.to_v2(v1)["status"]["currentMetrics"] == [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "current": {"averageValue": "150m", "averageUtilization": 75}},
            }
        ]


@pytest.mark.parametrize(
    "v2_metric",
    [
        PODS_METRIC,
        {"type": "Object", "object": {"describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
                                      "metric": {"name": "rps"}, "target": {"type": "Value", "value": "10k"}}},
        {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "work"}}},
                                          "target": {"type": "AverageValue", "averageValue": "30"}}},
        {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
                                                            "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
    ],
)  # fmt: skip
def test_every_metric_type_survives_the_round_trip_through_v1(v2_metric):
    v2 = {"metadata": {"name": "x"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}, "maxReplicas": 3,
                                              "metrics": [v2_metric]}}  # fmt: skip
    assert hpav1.to_v2(hpav1.to_v1(v2))["spec"]["metrics"] == [v2_metric]


# ---- events.k8s.io/v1: a view of the stored core Events -------------------------------------------


def core_event(name: str = "web.1") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
        "reason": "Started",
        "message": "Started container app",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "n-0"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:05Z",
        "count": 2,
    }


def new_event(name: str = "web.2", **fields: Any) -> dict:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/scheduler",
        "reportingInstance": "scheduler-1",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
        "note": "Successfully assigned default/web to n-0",
        "type": "Normal",
        **fields,
    }


def test_a_core_event_reads_as_events_k8s_io_with_upstreams_field_names(h):
    call(h, "POST", CORE_EVENTS, core_event())
    got = call(h, "GET", f"{EVENTS_V1}/web.1")[1]
    assert got["apiVersion"] == "events.k8s.io/v1"
    assert (got["regarding"]["name"], got["note"], got["deprecatedCount"]) == ("web", "Started container app", 2)
    assert got["deprecatedSource"] == {"component": "kubelet", "host": "n-0"}
    assert got["deprecatedLastTimestamp"] == "2026-01-01T00:00:05Z"
    assert got["eventTime"] == "2026-01-01T00:00:00.000000Z"  # derived (upstream: null; see eventsv1)
    assert "message" not in got and "involvedObject" not in got


def test_an_event_created_through_events_k8s_io_is_a_core_event(h):
    code, made = call(h, "POST", EVENTS_V1, new_event())
    assert code == 201 and made["note"] == "Successfully assigned default/web to n-0"
    core = call(h, "GET", f"{CORE_EVENTS}/web.2")[1]
    assert (core["message"], core["reportingComponent"], core["involvedObject"]["name"]) == (
        "Successfully assigned default/web to n-0",
        "example.com/scheduler",
        "web",
    )


@pytest.mark.parametrize(
    "fields, detail",
    [
        ({"eventTime": None}, "eventTime: Required value"),
        ({"action": None}, "action: Required value"),
        ({"type": "Odd"}, 'type: Invalid value: "": has invalid value: Odd'),
        ({"deprecatedCount": 3}, 'count: Invalid value: "": needs to be unset'),
        ({"series": {"count": 1, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}}, "series.count"),
        ({"note": "x" * 1025}, 'message: Invalid value: "": can have at most 1024 characters'),
    ],
)
def test_events_k8s_io_refuses_what_upstream_refuses(h, fields, detail):
    code, status = call(h, "POST", EVENTS_V1, new_event(**fields))
    assert code == 422 and status["message"].startswith('Event.events.k8s.io "web.2" is invalid: ')
    assert detail in status["message"]
    assert all(i["metadata"]["name"] != "web.2" for i in call(h, "GET", CORE_EVENTS)[1]["items"])


def test_an_old_event_read_and_written_back_through_events_k8s_io_is_unchanged(h):
    call(h, "POST", CORE_EVENTS, core_event())
    got = call(h, "GET", f"{EVENTS_V1}/web.1")[1]
    assert call(h, "PUT", f"{EVENTS_V1}/web.1", got)[0] == 200
    assert "eventTime" not in call(h, "GET", f"{CORE_EVENTS}/web.1")[1]  # the derived one is not stored
    got["note"] = "changed"
    code, status = call(h, "PUT", f"{EVENTS_V1}/web.1", got)
    assert code == 422 and 'message: Invalid value: "changed": field is immutable' in status["message"]


def test_events_k8s_io_field_selectors_are_renamed(h):
    call(h, "POST", CORE_EVENTS, core_event("a.1"))
    call(
        h,
        "POST",
        CORE_EVENTS,
        {**core_event("b.1"), "involvedObject": {"kind": "Pod", "namespace": "default", "name": "db"}},
    )
    got = call(h, "GET", EVENTS_V1, fieldSelector="regarding.name=db")[1]
    assert [i["metadata"]["name"] for i in got["items"]] == ["b.1"]
    code, status = call(h, "GET", EVENTS_V1, fieldSelector="involvedObject.name=db")
    assert (code, status["message"]) == (400, "field label not supported: involvedObject.name")


def test_the_conversion_is_upstreams_mapping():
    assert eventsv1.to_core(eventsv1.to_events_v1(core_event()))["message"] == "Started container app"
    assert eventsv1.to_events_v1({**core_event(), "reportingComponent": "kubelet"})["reportingController"] == "kubelet"


# ---- reviews ------------------------------------------------------------------------------------


def test_an_access_review_is_allowed_and_says_why(h):
    body = {"spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}}}
    code, got = call(h, "POST", f"{AUTHZ}/selfsubjectaccessreviews", body)
    assert code == 201 and got["kind"] == "SelfSubjectAccessReview"
    assert got["status"]["allowed"] is True and "kubemu-admin" in got["status"]["reason"]


def test_a_rules_review_lists_everything_and_whoami_names_the_admin(h):
    code, rules = call(h, "POST", f"{AUTHZ}/selfsubjectrulesreviews", {"spec": {"namespace": "default"}})
    assert code == 201 and rules["status"]["resourceRules"][0] == {
        "verbs": ["*"],
        "apiGroups": ["*"],
        "resources": ["*"],
    }
    assert rules["status"]["incomplete"] is False
    code, me = call(h, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {})
    assert me["status"]["userInfo"] == {
        "username": "kubemu-admin",
        "groups": ["system:masters", "system:authenticated"],
    }


@pytest.mark.parametrize(
    "path, body, code, message",
    [
        (f"{AUTHZ}/selfsubjectaccessreviews", {"spec": {}}, 422,
         'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": '
         "exactly one of nonResourceAttributes or resourceAttributes must be specified"),
        (f"{AUTHZ}/subjectaccessreviews", {"spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}, 422,
         'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": '
         "at least one of user or group must be specified"),
        (f"{AUTHZ}/namespaces/default/localsubjectaccessreviews",
         {"spec": {"user": "jane", "resourceAttributes": {"namespace": "other", "verb": "get", "resource": "pods"}}}, 422,
         'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: '
         'Invalid value: "other": must match metadata.namespace'),
        (f"{AUTHZ}/localsubjectaccessreviews", {}, 404, "the server could not find the requested resource"),
        (f"{AUTHZ}/selfsubjectaccessreviews/x", {}, 404, "the server could not find the requested resource"),
    ],
)  # fmt: skip
def test_a_bad_review_gets_upstreams_error(h, path, body, code, message):
    got_code, got = call(h, "POST", path, body)
    assert (got_code, got["kind"], got["message"]) == (code, "Status", message)


def test_a_review_is_only_created(h):
    code, status = call(h, "GET", f"{AUTHZ}/selfsubjectaccessreviews")
    assert code == 405 and "(GET selfsubjectaccessreviews)" in status["message"]


# ---- APIServices --------------------------------------------------------------------------------


def test_the_served_group_versions_are_local_apiservices(h):
    names = [i["metadata"]["name"] for i in call(h, "GET", APISERVICES)[1]["items"]]
    assert {"v1.", "v1.apps", "v2.autoscaling", "v1.autoscaling", "v1.events.k8s.io", "v1.networking.k8s.io"} <= set(
        names
    )
    local = call(h, "GET", f"{APISERVICES}/v1.apps")[1]
    assert "service" not in local["spec"] and local["spec"]["groupPriorityMinimum"] == 17800
    assert local["status"]["conditions"][0]["reason"] == "Local"
    row = call(h, "GET", f"{APISERVICES}/v1.apps", headers=TABLE)[1]["rows"][0]
    assert row["cells"][:3] == ["v1.apps", "Local", "True"]


def test_a_stored_apiservice_lists_beside_the_local_ones_and_local_ones_stay(h):
    mine = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1beta1.custom.metrics.k8s.io"},
            "spec": {"group": "custom.metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
                     "service": {"namespace": "monitoring", "name": "adapter"}}}  # fmt: skip
    assert call(h, "POST", APISERVICES, mine)[0] == 201
    table = call(h, "GET", APISERVICES, headers=TABLE)[1]
    cells = {r["cells"][0]: r["cells"][1:3] for r in table["rows"]}
    assert cells["v1beta1.custom.metrics.k8s.io"] == ["monitoring/adapter", "Unknown"]
    assert call(h, "POST", APISERVICES, {**mine, "metadata": {"name": "v1.apps"}})[0] == 409
    assert call(h, "DELETE", f"{APISERVICES}/v1.apps")[0] == 403
    assert len(apiservices.local_services()) == len([n for n in cells if n != "v1beta1.custom.metrics.k8s.io"])
