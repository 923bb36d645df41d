"""events.k8s.io/v1 ``series`` and core/v1 ``count`` through ``kubemu serve``, as upstream's
one storage with two views shows them: a series written with the Python client's EventsV1Api
reads back as the same series through CoreV1Api and ``kubectl get events.v1.events.k8s.io``;
a core Event counted up the way the core recorder does it (POST, then a PATCH of count and
lastTimestamp) shows ``deprecatedCount`` and no series."""

from __future__ import annotations

import datetime
import json

import pytest
import yaml
from kubernetes import client, config
from servedcluster import needs_kubectl

pytestmark = needs_kubectl
T0 = datetime.datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=datetime.timezone.utc)
SEEN = datetime.datetime(2026, 1, 1, 0, 5, 30, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture(scope="module")
def api_client(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.ApiClient()


class _Strings(yaml.SafeLoader):
    """YAML as kubectl printed it: a timestamp stays the text it was."""


_Strings.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _kubectl_events(served) -> dict[str, dict]:
    listed = yaml.load(served.kubectl("get", "events.v1.events.k8s.io", "-o", "yaml").stdout, Loader=_Strings)
    return {e["metadata"]["name"]: e for e in listed["items"]}


def test_a_series_written_through_events_k8s_io_is_a_series_in_both_views(served, api_client):
    ev = client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="web.series"),
        event_time=T0,
        reporting_controller="default-scheduler",
        reporting_instance="default-scheduler-host",
        action="Scheduling",
        reason="FailedScheduling",
        regarding=client.V1ObjectReference(kind="Pod", namespace="default", name="web"),
        note="0/3 nodes are available",
        type="Warning",
        series=client.EventsV1EventSeries(count=2, last_observed_time=SEEN),
    )
    events = client.EventsV1Api(api_client)
    made = events.create_namespaced_event("default", ev)
    assert (made.series.count, made.series.last_observed_time) == (2, SEEN) and made.deprecated_count is None
    # The recorder's later PATCH of the series, as kube-scheduler sends it.
    events.patch_namespaced_event(
        "web.series", "default", {"series": {"count": 5, "lastObservedTime": "2026-01-01T00:05:30.000001Z"}}
    )
    core = client.CoreV1Api(api_client).read_namespaced_event("web.series", "default")
    assert (core.series.count, core.series.last_observed_time, core.count) == (5, SEEN, None)
    shown = _kubectl_events(served)["web.series"]
    assert shown["series"] == {"count": 5, "lastObservedTime": "2026-01-01T00:05:30.000001Z"}
    assert "deprecatedCount" not in shown and shown["note"] == "0/3 nodes are available"


def test_a_counted_core_event_shows_deprecated_count_and_no_series(served, api_client):
    # Created as the core recorder sends it (kubectl: the Python client would send the
    # timestamps as +00:00, which kubemu keeps as sent).
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.counted", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
        "reason": "BackOff",
        "message": "Back-off restarting failed container",
        "type": "Warning",
        "count": 1,
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:00Z",
        "source": {"component": "kubelet", "host": "n1"},
    }
    served.kubectl("create", "-f", "-", input=json.dumps(ev))
    core = client.CoreV1Api(api_client)
    later = "2026-01-01T00:02:00Z"
    core.patch_namespaced_event("web.counted", "default", {"count": 3, "lastTimestamp": later})
    v1 = client.EventsV1Api(api_client).read_namespaced_event("web.counted", "default")
    assert (v1.deprecated_count, v1.series) == (3, None)
    shown = _kubectl_events(served)["web.counted"]
    assert "series" not in shown
    assert (shown["deprecatedCount"], shown["deprecatedFirstTimestamp"], shown["deprecatedLastTimestamp"]) == (
        3,
        "2026-01-01T00:00:00Z",
        later,
    )
    assert shown["deprecatedSource"] == {"component": "kubelet", "host": "n1"}
