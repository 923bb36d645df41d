"""/metrics (cluster/frontend/metrics.py): upstream's names, types and labels, parsed back
with prometheus_client's parser; the storage and scheduler views read at each scrape."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from cluster.frontend.metrics import (
    CONTENT_TYPE_LATEST,
    REQUEST_BUCKETS,
    Metrics,
    VictimsHistogram,
    request_labels,
    request_verb,
    storage_objects,
)
from cluster.scheduler.component import SchedulerComponent


def scrape(m: Metrics) -> dict[str, Metric]:
    """The families of one scrape by name (the parser drops a counter's ``_total``)."""
    return {f.name: f for f in text_string_to_metric_families(m.render().decode())}


def value(family: Metric, sample: str = "", **labels: str) -> float:
    name = sample or family.name
    hits = [s.value for s in family.samples if s.name == name and s.labels == labels]
    assert len(hits) == 1, (name, labels, family.samples)
    return hits[0]


def stats(**counts: Any) -> dict[str, Any]:
    view: dict[str, Any] = dict.fromkeys(
        ("attempts", "scheduled", "unschedulable", "errors", "bindFailures", "bindConflicts", "preemptions"), 0
    )
    view.update(victims=0, pending=0)
    view.update(counts)
    return view


# ---- every metric, its type and labels ------------------------------------------------------

TYPES = {
    "apiserver_request": "counter",
    "apiserver_request_duration_seconds": "histogram",
    "apiserver_storage_objects": "gauge",
    "scheduler_schedule_attempts": "counter",
    "scheduler_pending_pods": "gauge",
    "scheduler_scheduling_attempt_duration_seconds": "histogram",
    "scheduler_preemption_attempts": "counter",
    "scheduler_preemption_victims": "histogram",
    "scheduler_pod_scheduling_sli_duration_seconds": "histogram",
}


def test_every_metric_is_present_with_its_type() -> None:
    m = Metrics(storage=lambda: {"pods": 1}, scheduler=lambda: stats(pending=2))
    m.observe_request("LIST", "pods", 200, 0.01)
    families = scrape(m)
    assert {name: f.type for name, f in families.items()} == TYPES


def test_labels_are_upstreams() -> None:
    m = Metrics(storage=lambda: {"pods": 1}, scheduler=lambda: stats(scheduled=1, pending=2, preemptions=1, victims=1))
    m.observe_request("POST", "pods", 201, 0.01)
    families = scrape(m)
    label_sets = {
        name: {frozenset(k for k in s.labels if k != "le") for s in f.samples} for name, f in families.items()
    }
    assert label_sets["apiserver_request"] == {frozenset({"verb", "resource", "code"})}
    assert label_sets["apiserver_request_duration_seconds"] == {frozenset({"verb", "resource"})}
    assert label_sets["apiserver_storage_objects"] == {frozenset({"resource"})}
    assert label_sets["scheduler_schedule_attempts"] == {frozenset({"result", "profile"})}
    assert label_sets["scheduler_pending_pods"] == {frozenset({"queue"})}
    assert label_sets["scheduler_preemption_attempts"] == {frozenset()}
    assert label_sets["scheduler_preemption_victims"] == {frozenset()}
    assert {s.labels["result"] for s in families["scheduler_schedule_attempts"].samples} == {
        "scheduled",
        "unschedulable",
        "error",
    }
    assert {s.labels["profile"] for s in families["scheduler_schedule_attempts"].samples} == {"default-scheduler"}


def test_unmeasured_histograms_are_registered_without_series() -> None:
    families = scrape(Metrics(scheduler=lambda: stats(attempts=3, scheduled=3)))
    assert families["scheduler_scheduling_attempt_duration_seconds"].samples == []
    assert families["scheduler_pod_scheduling_sli_duration_seconds"].samples == []


def test_text_format_and_no_created_series() -> None:
    m = Metrics()
    m.observe_request("GET", "pods", 200, 0.1)
    text = m.render().decode()
    assert CONTENT_TYPE_LATEST == "text/plain; version=0.0.4; charset=utf-8"
    assert "_created" not in text  # upstream's Go client exports none


# ---- requests ---------------------------------------------------------------------------------


def test_request_counters_move_when_observed() -> None:
    m = Metrics()
    m.observe_request("LIST", "pods", 200, 0.003)
    m.observe_request("LIST", "pods", 200, 0.3)
    m.observe_request("GET", "pods", 404, 0.001)
    families = scrape(m)
    requests = families["apiserver_request"]
    assert value(requests, "apiserver_request_total", verb="LIST", resource="pods", code="200") == 2
    assert value(requests, "apiserver_request_total", verb="GET", resource="pods", code="404") == 1
    durations = families["apiserver_request_duration_seconds"]
    labels = {"verb": "LIST", "resource": "pods"}
    assert value(durations, "apiserver_request_duration_seconds_count", **labels) == 2
    assert value(durations, "apiserver_request_duration_seconds_sum", **labels) == pytest.approx(0.303)
    assert value(durations, "apiserver_request_duration_seconds_bucket", le="0.005", **labels) == 1
    assert value(durations, "apiserver_request_duration_seconds_bucket", le="0.4", **labels) == 2


def test_request_duration_uses_upstreams_buckets() -> None:
    m = Metrics()
    m.observe_request("GET", "nodes", 200, 0.0)
    durations = scrape(m)["apiserver_request_duration_seconds"]
    bounds = [float(s.labels["le"]) for s in durations.samples if s.name.endswith("_bucket")]
    assert bounds == [*REQUEST_BUCKETS, float("inf")]


def test_two_instances_do_not_share_counts() -> None:
    a, b = Metrics(), Metrics()
    a.observe_request("GET", "pods", 200, 0.01)
    assert scrape(b)["apiserver_request"].samples == []
    assert value(scrape(a)["apiserver_request"], "apiserver_request_total", verb="GET", resource="pods", code="200")


# ---- storage and scheduler, read at scrape time -------------------------------------------------


def test_storage_is_read_at_each_scrape() -> None:
    stored = {"pods": 2, "nodes": 1}
    m = Metrics(storage=lambda: stored)
    assert value(scrape(m)["apiserver_storage_objects"], resource="pods") == 2
    stored["pods"] = 5
    stored["deployments.apps"] = 1
    family = scrape(m)["apiserver_storage_objects"]
    assert value(family, resource="pods") == 5
    assert value(family, resource="deployments.apps") == 1


def test_storage_objects_uses_group_resource_labels() -> None:
    counts = {"Pod": 3, "Deployment": 2}
    objects = storage_objects(lambda kind: counts.get(kind, 0))
    assert objects["pods"] == 3
    assert objects["deployments.apps"] == 2
    assert objects["nodes"] == 0  # every kind kubemu serves, stored or not, as upstream


def test_scheduler_counters_are_read_at_each_scrape() -> None:
    view = stats(attempts=4, scheduled=2, unschedulable=1, errors=1, pending=3)
    m = Metrics(scheduler=lambda: view)
    family = scrape(m)["scheduler_schedule_attempts"]
    total = "scheduler_schedule_attempts_total"
    profile = "default-scheduler"
    assert value(family, total, result="scheduled", profile=profile) == 2
    assert value(family, total, result="unschedulable", profile=profile) == 1
    assert value(family, total, result="error", profile=profile) == 1
    assert value(scrape(m)["scheduler_pending_pods"], queue="active") == 3
    view.update(attempts=10, scheduled=7, pending=0)
    families = scrape(m)
    assert value(families["scheduler_schedule_attempts"], total, result="scheduled", profile=profile) == 7
    assert value(families["scheduler_pending_pods"], queue="active") == 0


def test_a_refused_bind_is_an_error_not_a_scheduled_pod() -> None:
    m = Metrics(scheduler=lambda: stats(attempts=5, scheduled=5, bindFailures=1, bindConflicts=1))
    family = scrape(m)["scheduler_schedule_attempts"]
    total, profile = "scheduler_schedule_attempts_total", "default-scheduler"
    assert value(family, total, result="scheduled", profile=profile) == 3
    assert value(family, total, result="error", profile=profile) == 2


def test_pending_pods_by_queue_when_the_view_has_them() -> None:
    queues = {"active": 1, "backoff": 2, "unschedulable": 3, "gated": 4}
    m = Metrics(scheduler=lambda: stats(pending=10, pendingQueues=queues))
    family = scrape(m)["scheduler_pending_pods"]
    assert {s.labels["queue"]: s.value for s in family.samples} == queues


def test_preemption_attempts_are_the_rejected_attempts() -> None:
    m = Metrics(scheduler=lambda: stats(attempts=6, unschedulable=4, preemptions=1, victims=2))
    assert value(scrape(m)["scheduler_preemption_attempts"], "scheduler_preemption_attempts_total") == 4


def test_no_scheduler_shows_no_scheduler_series() -> None:
    families = scrape(Metrics(scheduler=lambda: None))
    for name in ("scheduler_schedule_attempts", "scheduler_preemption_attempts", "scheduler_pending_pods"):
        assert families[name].samples == []
    assert value(families["scheduler_preemption_victims"], "scheduler_preemption_victims_count") == 0


def test_the_real_scheduler_view_is_understood() -> None:
    view = SchedulerComponent().inspect(0.0)
    view.update(scheduled=3, unschedulable=2, preemptions=1, victims=4)
    families = scrape(Metrics(scheduler=lambda: view))
    total = "scheduler_schedule_attempts_total"
    assert value(families["scheduler_schedule_attempts"], total, result="scheduled", profile="default-scheduler") == 3
    assert value(families["scheduler_pending_pods"], queue="active") == 0
    assert value(families["scheduler_preemption_victims"], "scheduler_preemption_victims_sum") == 4


# ---- preemption victims from two totals ----------------------------------------------------------


def buckets(h: VictimsHistogram) -> dict[str, float]:
    return {s.labels["le"]: s.value for s in h.family().samples if s.name.endswith("_bucket")}


def test_victims_one_preemption_per_scrape_is_exact() -> None:
    h = VictimsHistogram()
    h.update(1, 2)
    h.update(2, 2 + 5)
    assert buckets(h) == {"1.0": 0, "2.0": 1, "4.0": 1, "8.0": 2, "16.0": 2, "32.0": 2, "64.0": 2, "+Inf": 2}
    assert h.sum == 7


def test_victims_of_several_preemptions_are_spread_evenly() -> None:
    h = VictimsHistogram()
    h.update(3, 7)  # observed as 2, 2 and 3 victims
    assert buckets(h)["2.0"] == 2
    assert buckets(h)["4.0"] == 3
    assert h.sum == 7


def test_victims_counters_that_go_down_count_from_zero() -> None:
    h = VictimsHistogram()
    h.update(2, 4)
    h.update(1, 1)  # a restarted scheduler: one more preemption, one more victim
    assert buckets(h)["+Inf"] == 3
    assert h.sum == 5
    h.update(1, 1)  # nothing new
    assert buckets(h)["+Inf"] == 3


def test_victims_histogram_keeps_count_and_sum_across_scrapes() -> None:
    view = stats(preemptions=1, victims=3)
    m = Metrics(scheduler=lambda: view)
    scrape(m)
    view.update(preemptions=2, victims=4)
    family = scrape(m)["scheduler_preemption_victims"]
    assert value(family, "scheduler_preemption_victims_count") == 2
    assert value(family, "scheduler_preemption_victims_sum") == 4
    assert value(family, "scheduler_preemption_victims_bucket", le="1.0") == 1
    assert value(family, "scheduler_preemption_victims_bucket", le="4.0") == 2


# ---- the verb label -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "is_list", "is_watch", "extra", "verb"),
    [
        ("GET", False, False, {}, "GET"),
        ("GET", True, False, {}, "LIST"),
        ("GET", True, True, {}, "WATCH"),
        ("GET", False, True, {}, "WATCH"),  # a watch of one object (fieldSelector on its name)
        ("HEAD", True, False, {}, "LIST"),
        ("get", False, False, {}, "GET"),
        ("POST", True, False, {}, "POST"),
        ("POST", True, True, {}, "POST"),  # only a GET is a watch
        ("PUT", False, False, {}, "PUT"),
        ("PATCH", False, False, {"content_type": "application/merge-patch+json"}, "PATCH"),
        ("PATCH", False, False, {"content_type": "application/apply-patch+yaml"}, "APPLY"),
        ("PATCH", False, False, {"content_type": "application/apply-patch+yaml; charset=utf-8"}, "APPLY"),
        ("DELETE", False, False, {}, "DELETE"),
        ("DELETE", True, False, {}, "DELETECOLLECTION"),
        ("GET", False, False, {"subresource": "log"}, "CONNECT"),
        ("POST", False, False, {"subresource": "binding"}, "POST"),
        ("GET", False, False, {"subresource": "status"}, "GET"),
        ("OPTIONS", False, False, {}, "other"),
    ],
)
def test_request_verb(method: str, is_list: bool, is_watch: bool, extra: dict[str, str], verb: str) -> None:
    assert request_verb(method, is_list, is_watch, **extra) == verb


@pytest.mark.parametrize(
    ("method", "path", "query", "content_type", "labels"),
    [
        ("GET", "/api/v1/pods", {}, "", ("LIST", "pods")),
        ("GET", "/api/v1/namespaces/default/pods", {}, "", ("LIST", "pods")),
        ("GET", "/api/v1/namespaces/default/pods/", {}, "", ("LIST", "pods")),
        ("GET", "/api/v1/namespaces/default/pods/web-0", {}, "", ("GET", "pods")),
        ("GET", "/api/v1/pods", {"watch": "true"}, "", ("WATCH", "pods")),
        ("GET", "/api/v1/pods", {"watch": "1"}, "", ("WATCH", "pods")),
        ("GET", "/api/v1/pods", {"watch": "false"}, "", ("LIST", "pods")),
        ("GET", "/api/v1/pods", {"watch": "0"}, "", ("LIST", "pods")),
        ("GET", "/api/v1/namespaces/kube-system", {}, "", ("GET", "namespaces")),
        ("GET", "/api/v1/namespaces", {}, "", ("LIST", "namespaces")),
        ("POST", "/api/v1/namespaces/default/pods", {}, "", ("POST", "pods")),
        ("POST", "/api/v1/namespaces/default/pods/web-0/binding", {}, "", ("POST", "pods")),
        ("POST", "/api/v1/namespaces/default/pods/web-0/eviction", {}, "", ("POST", "pods")),
        ("PUT", "/api/v1/nodes/n1/status", {}, "", ("PUT", "nodes")),
        ("GET", "/api/v1/namespaces/default/pods/web-0/log", {}, "", ("CONNECT", "pods")),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/web",
            {},
            "application/apply-patch+yaml",
            ("APPLY", "deployments"),
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/web",
            {},
            "application/strategic-merge-patch+json",
            ("PATCH", "deployments"),
        ),
        ("DELETE", "/apis/apps/v1/namespaces/default/deployments/web", {}, "", ("DELETE", "deployments")),
        ("DELETE", "/api/v1/namespaces/default/pods", {}, "", ("DELETECOLLECTION", "pods")),
        ("GET", "/version", {}, "", ("GET", "")),
        ("GET", "/metrics", {}, "", ("GET", "")),
        ("GET", "/api/v1", {}, "", ("GET", "")),
        ("GET", "/apis", {}, "", ("GET", "")),
        ("GET", "/api/v1/nosuchthings", {}, "", ("GET", "")),
    ],
)
def test_request_labels(
    method: str, path: str, query: dict[str, str], content_type: str, labels: tuple[str, str]
) -> None:
    assert request_labels(method, path, query, content_type) == labels
