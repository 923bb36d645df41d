"""The core/v1 recorder's correlator (client-go tools/record):
identical events count up one Event, similar ones past ten are
combined, the spam filter still counts what it holds back; and the apiserver's half,
which updates the counted Event instead of adding one."""

import pytest

from cluster.api.eventcorrelation import AGGREGATE_MAX, COMBINED_PREFIX, EventCorrelator
from cluster.api.events import SPAM_BURST, EventDraft, make_event
from cluster.api.requests import RecordEvent
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.eventsink import candidates
from cluster.clock import rfc3339

POD = {"kind": "Pod", "metadata": {"name": "web-1", "namespace": "default", "uid": "u1"}}
OTHER = {"kind": "Pod", "metadata": {"name": "web-2", "namespace": "default", "uid": "u2"}}
RS = {"kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default", "uid": "u3"}}
UNFIT = "0/3 nodes are available: 3 Insufficient cpu."


def failed(t, message=UNFIT, obj=POD, component="default-scheduler", host=""):
    return make_event(obj, "FailedScheduling", message, t, type="Warning", component=component, host=host)


def test_identical_events_count_up_one_event():
    c = EventCorrelator()
    first = c.correlate([failed(10.0)], 10.0)[0]
    later = [c.correlate([failed(t)], t)[0] for t in (20.0, 40.0, 700.0)]
    assert first["count"] == 1 and "generateName" not in first["metadata"]
    assert [e["count"] for e in later] == [2, 3, 4]  # no window on counting, only on combining
    assert {e["metadata"]["name"] for e in later} == {first["metadata"]["name"]}
    assert {e["firstTimestamp"] for e in later} == {rfc3339(10.0)}
    assert [e["lastTimestamp"] for e in later] == [rfc3339(t) for t in (20.0, 40.0, 700.0)]


@pytest.mark.parametrize(
    "other",
    [
        {"message": "0/3 nodes are available: 3 node(s) had untolerated taint."},
        {"obj": OTHER},
        {"component": "other-scheduler"},
        {"host": "node-1"},
    ],
)
def test_anything_else_different_is_another_event(other):
    c = EventCorrelator()
    a = c.correlate([failed(1.0)], 1.0)[0]
    b = c.correlate([failed(2.0, **other)], 2.0)[0]
    assert b["count"] == 1 and b["metadata"]["name"] != a["metadata"]["name"]


def test_names_are_upstreams_and_unique_within_one_instant():
    c = EventCorrelator()
    out = c.correlate([failed(5.0, message=f"m{i}") for i in range(3)], 5.0)
    names = [e["metadata"]["name"] for e in out]
    assert len(set(names)) == 3
    for name in names:
        obj, _, hex_ns = name.rpartition(".")
        # <object>.<hex of the Unix nanoseconds>: 2026-01-01T00:00:05Z, within a microsecond
        assert obj == "web-1" and abs(int(hex_ns, 16) - (1767225605 * 10**9)) < 10**4


def test_ten_similar_messages_in_ten_minutes_are_combined():
    c = EventCorrelator()
    messages = [f"Created pod: web-{i}" for i in range(12)]
    out = [c.correlate([make_event(RS, "SuccessfulCreate", m, float(i))], float(i))[0] for i, m in enumerate(messages)]
    assert [e["message"] for e in out[: AGGREGATE_MAX - 1]] == messages[: AGGREGATE_MAX - 1]
    combined = out[AGGREGATE_MAX - 1 :]
    assert [e["message"] for e in combined] == [COMBINED_PREFIX + m for m in messages[AGGREGATE_MAX - 1 :]]
    assert [e["count"] for e in combined] == [1, 2, 3]  # one combined Event, counted up
    assert len({e["metadata"]["name"] for e in combined}) == 1
    assert c.combined == 3


def test_a_quiet_ten_minutes_forgets_the_similar_messages():
    c = EventCorrelator()
    for i in range(AGGREGATE_MAX - 1):
        c.correlate([make_event(RS, "SuccessfulCreate", f"m{i}", 0.0)], 0.0)
    late = c.correlate([make_event(RS, "SuccessfulCreate", "m-late", 601.0)], 601.0)[0]
    assert late["message"] == "m-late"  # the set began again: one message, not ten


def test_a_message_already_seen_passes_through_uncombined():
    c = EventCorrelator()
    for i in range(AGGREGATE_MAX):
        c.correlate([make_event(RS, "R", f"m{i}", 0.0)], 0.0)
    again = c.correlate([make_event(RS, "R", "m9", 1.0)], 1.0)[0]  # m9 was combined, but is kept in the set
    assert again["message"] == "m9"


def test_the_spam_filter_holds_events_back_but_still_counts_them():
    c = EventCorrelator()
    out = c.correlate([failed(0.0, message=f"m{i % 5}") for i in range(SPAM_BURST + 10)], 0.0)
    assert len(out) == SPAM_BURST and c.dropped == 10
    later = c.correlate([failed(300.0, message="m0")], 300.0)[0]  # one token back after 300 s
    assert later["count"] == (SPAM_BURST + 10) // 5 + 1  # m0's seven occurrences, this one included


def test_drafts_are_built_only_when_written():
    c = EventCorrelator()
    drafts = [EventDraft(RS, "SuccessfulCreate", f"Created pod: web-{i}", 0.0, "Normal", "rs") for i in range(40)]
    out = c.correlate(drafts, 0.0)
    assert len(out) == SPAM_BURST and sum(d._event is not None for d in drafts) == SPAM_BURST
    assert [e["count"] for e in out] == [1] * (AGGREGATE_MAX - 1) + list(range(1, SPAM_BURST - AGGREGATE_MAX + 2))


# ---- the apiserver's half ----------------------------------------------------------------------


def record(api: APIServer, events, now):
    assert api.write([RecordEvent(e) for e in events], now) == [None] * len(events)


def test_a_repeat_updates_the_stored_event():
    api, c = APIServer(), EventCorrelator()
    for t in (1.0, 2.0, 3.0):
        record(api, c.correlate([failed(t)], t), t)
    (ev,) = codec_events(api)
    assert (ev["count"], ev["firstTimestamp"], ev["lastTimestamp"]) == (3, rfc3339(1.0), rfc3339(3.0))
    assert ev["metadata"]["annotations"]["kubemu.io/time"] == "3.0"


def codec_events(api):
    return [api.get("Event", ns, name) for ns, name in api.store.keys("Event")]


def test_an_expired_event_is_created_again_with_its_count():
    api, c = APIServer(event_ttl=60.0), EventCorrelator()
    record(api, c.correlate([failed(0.0)], 0.0), 0.0)
    record(api, c.correlate([failed(100.0)], 100.0), 100.0)  # the first expired at 60 s
    (ev,) = codec_events(api)
    assert (ev["count"], ev["firstTimestamp"]) == (2, rfc3339(0.0))


def test_two_sources_naming_alike_do_not_mix_their_counts():
    api = APIServer()
    a, b = EventCorrelator(), EventCorrelator()
    first_a = a.correlate([failed(1.0)], 1.0)
    clash = dict(failed(1.0, component="kubelet"), metadata=dict(first_a[0]["metadata"]))  # b's name is a's
    record(api, first_a + [clash], 1.0)
    record(api, a.correlate([failed(2.0)], 2.0), 2.0)
    counts = {e["source"]["component"]: e["count"] for e in codec_events(api)}
    assert counts == {"default-scheduler": 2, "kubelet": 1}
    assert b.correlate([failed(3.0)], 3.0)[0]["count"] == 1


@pytest.mark.parametrize(
    "name, want",
    [
        ("web-1.17e6a5c3f0", ["web-1.17e6a5c3f0", "web-1.17e6a5c3f1"]),
        ("node.a.internal.ff", ["node.a.internal.ff", "node.a.internal.100"]),
        ("seen", None),
        ("web.xyz", None),
    ],
)
def test_the_names_a_counted_event_may_hold(name, want):
    got = candidates(name)
    assert got == want if want is None else list(got)[: len(want)] == want


def test_an_event_without_a_name_is_created_as_before():
    api = APIServer()
    record(api, [failed(1.0)], 1.0)  # generateName: not through a correlator
    (ev,) = codec_events(api)
    assert ev["metadata"]["name"].startswith("web-1.default-scheduler.")
