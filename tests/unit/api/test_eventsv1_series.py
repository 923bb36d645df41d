"""events.k8s.io/v1 ``series`` against core/v1 ``count``, as upstream's conversion maps them:
``series`` keeps its name and shape both ways; a counted core Event (the core recorder's
aggregation) shows ``deprecatedCount`` and its deprecated timestamps, never a synthesised
``series``; and an events.k8s.io Event with a series reads back in core/v1 with the same
series and no count."""

import pytest

from cluster.api.eventcorrelation import EventCorrelator
from cluster.api.events import make_event
from cluster.api.eventsv1 import create_causes, to_core, to_events_v1, update_causes
from cluster.clock import rfc3339

POD = {"kind": "Pod", "metadata": {"name": "web-1", "namespace": "default", "uid": "u1"}}
SERIES = {"count": 4, "lastObservedTime": "2026-01-01T00:05:30.000001Z"}


def counted(times: tuple[float, ...]) -> dict:
    """The Event the core recorder writes after the same event at each of ``times``."""
    c = EventCorrelator()
    out = {}
    for t in times:
        out = c.correlate([make_event(POD, "BackOff", "Back-off restarting", t, type="Warning")], t)[0]
    return out


def scheduler_event(**extra) -> dict:
    """An events.k8s.io/v1 Event as kube-scheduler's recorder writes it."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web-1.17", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000001Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web-1", "uid": "u1"},
        "note": "0/3 nodes are available",
        "type": "Warning",
        **extra,
    }


def test_a_counted_core_event_shows_deprecated_count_and_no_series():
    core = counted((10.0, 20.0, 40.0))
    assert core["count"] == 3 and "series" not in core
    v1 = to_events_v1(core)
    assert "series" not in v1
    assert (v1["deprecatedCount"], v1["deprecatedFirstTimestamp"], v1["deprecatedLastTimestamp"]) == (
        3,
        rfc3339(10.0),
        rfc3339(40.0),
    )
    assert to_core(v1) == core  # read and written back, nothing changes


@pytest.mark.parametrize("count", [2, 4])
def test_a_series_written_through_events_k8s_io_reads_back_in_core_as_a_series(count):
    v1 = scheduler_event(series={**SERIES, "count": count})
    assert create_causes(to_core(v1)) == []
    core = to_core(v1)
    assert core["series"] == {**SERIES, "count": count}
    assert "count" not in core and "firstTimestamp" not in core and "lastTimestamp" not in core
    assert to_events_v1(core) == {**v1, "deprecatedSource": {}}  # Go writes the empty struct


def test_a_core_event_with_a_series_keeps_it_in_events_k8s_io():
    core = to_core(scheduler_event())
    core["series"] = dict(SERIES)
    v1 = to_events_v1(core)
    assert v1["series"] == SERIES and "deprecatedCount" not in v1


@pytest.mark.parametrize(
    "series, field",
    [
        ({"count": 1, "lastObservedTime": SERIES["lastObservedTime"]}, "series.count"),
        ({"count": 2}, "series.lastObservedTime"),
    ],
)
def test_a_bad_series_is_refused_on_create_and_when_an_update_changes_it(series, field):
    v1 = scheduler_event(series=series)
    assert [c.field for c in create_causes(to_core(v1))] == [field]
    old = to_core(scheduler_event(series=dict(SERIES)))
    assert [c.field for c in update_causes(to_core(v1), old)] == [field]
    assert update_causes(to_core(scheduler_event(series={**SERIES, "count": 9})), old) == []


def test_a_series_update_of_an_event_read_through_events_k8s_io_changes_nothing_else():
    # What a PATCH does: read the stored Event as events.k8s.io shows it (deprecatedSource: {}),
    # change the series, write it back.
    old = to_core(scheduler_event(series=dict(SERIES)))
    assert "source" not in old
    read = to_events_v1(old)
    assert read["deprecatedSource"] == {}
    new = to_core({**read, "series": {**SERIES, "count": 5}})
    assert update_causes(new, old) == []
    changed = to_core({**read, "deprecatedSource": {"component": "x"}})
    assert [c.field for c in update_causes(changed, old)] == ["source"]
