"""The event spam filter, with upstream client-go's defaults: 25 events per source and
object at once, then one per 300 s, one bucket per key, an LRU of keys."""

import pytest

from cluster.api.events import SPAM_BURST, EventDraft, SpamFilter, make_event

RS = {"kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default", "uid": "u1"}}
OTHER = {"kind": "ReplicaSet", "metadata": {"name": "db", "namespace": "default", "uid": "u2"}}


def ev(obj=RS, component="replicaset-controller", host=""):
    return make_event(obj, "SuccessfulCreate", "Created pod: x", 0.0, component=component, host=host)


def passes(f: SpamFilter, times, **kw) -> list[bool]:
    return [f.allow(ev(**kw), t) for t in times]


def test_the_burst_then_nothing():
    f = SpamFilter()
    assert passes(f, [0.0] * 30) == [True] * SPAM_BURST + [False] * 5
    assert f.dropped == 5


@pytest.mark.parametrize(
    "later,want",
    [
        (299.0, False),  # 299/300 of a token: not yet
        (300.0, True),  # one token back after 300 s
        (600.0, True),
    ],
)
def test_one_token_back_every_300_seconds(later, want):
    f = SpamFilter()
    passes(f, [0.0] * SPAM_BURST)
    assert f.allow(ev(), later) is want


def test_refill_stops_at_the_burst():
    f = SpamFilter()
    passes(f, [0.0] * SPAM_BURST)
    assert passes(f, [1e6] * 26) == [True] * SPAM_BURST + [False]


@pytest.mark.parametrize(
    "other",
    [
        {"obj": OTHER},  # another object
        {"component": "deployment-controller"},  # another source
        {"host": "n1"},  # another host (each kubelet's own recorder)
    ],
)
def test_each_source_and_object_has_its_own_bucket(other):
    f = SpamFilter()
    passes(f, [0.0] * SPAM_BURST)
    assert f.allow(ev(), 0.0) is False
    assert f.allow(ev(**other), 0.0) is True


def test_the_least_recently_used_key_is_forgotten_when_the_cache_is_full():
    f = SpamFilter(burst=1, keys=2)
    assert passes(f, [0.0]) == [True]  # RS: bucket empty now
    assert f.allow(ev(obj=OTHER), 0.0) is True
    assert f.allow(ev(), 0.0) is False  # RS used again: OTHER is now the oldest
    third = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u3"}}
    assert f.allow(ev(obj=third), 0.0) is True  # pushes OTHER out
    assert f.allow(ev(obj=OTHER), 0.0) is True  # a full bucket again
    assert f.allow(ev(), 0.0) is True  # OTHER pushed RS out in turn: RS starts afresh


def test_passed_keeps_order():
    f = SpamFilter(burst=2)
    events = [ev(), ev(obj=OTHER), ev(), ev(), ev(obj=OTHER)]
    kept = f.passed(events, 0.0)
    assert [e["involvedObject"]["name"] for e in kept] == ["web", "db", "web", "db"]


def test_a_draft_shares_its_events_bucket_and_is_built_only_when_it_passes():
    f = SpamFilter()
    drafts = [
        EventDraft(RS, "SuccessfulCreate", f"Created pod: p{i}", 0.0, "Normal", "replicaset-controller")
        for i in range(30)
    ]
    assert f.allow(ev(), 0.0)  # an Event and the drafts about the same object draw on one bucket
    out = f.passed(drafts, 0.0)
    assert [e["message"] for e in out] == [f"Created pod: p{i}" for i in range(SPAM_BURST - 1)]
    assert out[0] == make_event(RS, "SuccessfulCreate", "Created pod: p0", 0.0, component="replicaset-controller")
    assert all(d._event is None for d in drafts[SPAM_BURST - 1 :])  # the dropped were never built
    assert f.passed([EventDraft(OTHER, "SuccessfulCreate", "m", 0.0, "Normal", "replicaset-controller")], 0.0)
