"""The watch window keeps events by age and by bytes (cluster/apiserver/window.py)."""

import pytest
from store_builders import make_pod

from cluster.api.errors import Expired
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.window import STAMP_STEP, Event, KindLog, Window
from cluster.kubelet.component import lease


def _ev(rv, size=10, etype="ADDED", name=None):
    return Event(rv, etype, name or f"o{rv}", "", "", b"x" * size)


def _held(log):
    return [e.rv for e in log.events]


def test_every_event_younger_than_fresh_stays_however_many():
    log = KindLog(Window(min_events=2, fresh=75.0, max_bytes=1 << 20))
    for rv in range(1, 101):
        log.append(_ev(rv), ("", f"o{rv}"), now=rv * 0.5)  # 100 events within 50 s
    assert _held(log) == list(range(1, 101)) and log.evicted_upto == 0


def test_events_older_than_fresh_leave_once_past_the_floor():
    log = KindLog(Window(min_events=3, fresh=10.0, max_bytes=1 << 20))
    for rv in range(1, 6):
        log.append(_ev(rv), ("", f"o{rv}"), now=0.0)
    for rv in range(6, 12):  # bulk checks at 6 events (three old ones go: the floor) and again at 6
        log.append(_ev(rv), ("", f"o{rv}"), now=100.0)
    assert _held(log) == [6, 7, 8, 9, 10, 11] and log.evicted_upto == 5


def test_the_floor_keeps_old_events_when_few_are_fresh():
    log = KindLog(Window(min_events=4, fresh=10.0, max_bytes=1 << 20))
    for rv in range(1, 8):
        log.append(_ev(rv), ("", f"o{rv}"), now=0.0)
    log.append(_ev(8), ("", "o8"), now=100.0)
    assert _held(log) == [5, 6, 7, 8]  # four kept, three of them 100 s old


def test_an_event_within_one_stamp_of_the_cutoff_may_stay_a_little_longer_never_shorter():
    log = KindLog(Window(min_events=1, fresh=10.0, max_bytes=1 << 20))
    times = [0.0, 0.4, 0.8, 1.2, 10.5]  # one stamp covers 0.0-0.8; the next starts at 1.2
    for rv, t in enumerate(times, start=1):
        log.append(_ev(rv), ("", f"o{rv}"), now=t)
    assert _held(log) == [1, 2, 3, 4, 5]  # cutoff 0.5: 0.0 and 0.4 are older, but no check is due
    log.append(_ev(6), ("", "o6"), now=11.3)  # cutoff 1.3: 1.2 is older too, but its stamp is too late
    assert _held(log) == [4, 5, 6]
    assert times[log.events[0].rv - 1] >= 11.3 - 10.0 - STAMP_STEP  # never kept more than a step long


def test_the_byte_cap_wins_over_age_and_floor():
    log = KindLog(Window(min_events=100, fresh=75.0, max_bytes=1000))
    for rv in range(1, 21):
        log.append(_ev(rv, size=100), ("", f"o{rv}"), now=0.0)
    assert log.nbytes <= 1000
    assert log.nbytes == sum(len(e.data) for e in log.events)
    assert log.evicted_upto == log.events[0].rv - 1 and log.events[-1].rv == 20


def test_superseded_renewals_give_their_bytes_back():
    log = KindLog(Window(min_events=10, fresh=75.0, max_bytes=1 << 20), coalesce=True)
    log.append(_ev(1, size=50, name="n1"), ("", "n1"), now=0.0)
    for rv in range(2, 6):
        log.append(_ev(rv, size=50, etype="MODIFIED", name="n1"), ("", "n1"), now=float(rv))
    assert [e.type for e in log.events] == ["ADDED", "", "", "", "MODIFIED"]
    assert log.nbytes == 100 == sum(len(e.data) for e in log.events)


def test_a_watcher_behind_by_less_than_fresh_catches_up_and_one_behind_by_more_relists():
    api = APIServer(window=Window(min_events=2, fresh=75.0))
    api.create(make_pod("first"), 0.0)
    start = api.store.rv
    for i in range(20):
        api.create(make_pod(f"p{i}"), 1.0 + i)
    events, _ = api.store.events_since("Pod", start - 1)
    assert len(events) == 21  # 20 s behind: every event is still there
    for i in range(20):
        api.create(make_pod(f"q{i}"), 200.0)
    with pytest.raises(Expired):
        api.store.events_since("Pod", start - 1)
    events, _ = api.store.events_since("Pod", start + 20)  # caught up to 21 s: still servable
    assert len(events) == 20


def test_the_window_reads_the_time_of_every_write_path():
    api = APIServer(window=Window(min_events=1, fresh=10.0))
    api.create(lease("n1", 0), 5.0)
    api.write([], 30.0)
    assert api.store.now == 30.0
    api.create(lease("n2", 0), 20.0)  # a late caller's clock never moves it back
    assert api.store.now == 30.0


@pytest.mark.parametrize(
    "policy, message",
    [
        (Window(min_events=0), "window.min_events: must be a positive integer, got 0"),
        (Window(max_bytes=-5), "window.max_bytes: must be a positive integer, got -5"),
        (Window(fresh=-1.0), "window.fresh: must be a number of seconds >= 0, got -1.0"),
        (Window(fresh=float("inf")), "window.fresh: must be a number of seconds >= 0, got inf"),
        (Window(min_events="10"), "window.min_events: must be a positive integer, got '10'"),
    ],
)
def test_a_window_that_cannot_be_is_refused_naming_the_field(policy, message):
    with pytest.raises(ValueError) as err:
        APIServer(window=policy)
    assert str(err.value) == message


def test_superseded_slots_do_not_count_toward_a_calls_limit():
    log = KindLog(Window(min_events=1000, fresh=75.0), coalesce=True)
    rv = 0
    for name in ("a", "b", "c"):
        rv += 1
        log.append(_ev(rv, name=name), ("", name), now=0.0)
    for _ in range(50):  # 150 renewals: each Lease's latest stays, the rest are slots
        for name in ("a", "b", "c"):
            rv += 1
            log.append(_ev(rv, etype="MODIFIED", name=name), ("", name), now=0.0)
    got, end = log.after(0, 4)
    assert [e.type for e in got] == ["ADDED", "ADDED", "ADDED", "MODIFIED"]
    assert log.events[end - 1] is got[-1]  # it goes on just past the last one taken
    rest, end2 = log.after(end, 4)
    assert [(e.type, e.name) for e in rest] == [("MODIFIED", "b"), ("MODIFIED", "c")]
    assert end2 == len(log.events)


def test_a_watcher_far_behind_on_leases_gets_every_leases_latest_renewal_in_one_call():
    api = APIServer()
    start = api.store.rv
    for i in range(30):
        api.create(lease(f"n{i}", 0), 0)
    for t in range(1, 41):  # 1,200 renewals: 30 live, 1,170 superseded slots
        for i in range(30):
            api.update(lease(f"n{i}", t), float(t))
    calls, seen, rv = 0, [], start
    while rv < api.store.rv:
        chunk, rv = api.store.events_since("Lease", rv, limit=10)
        seen += chunk
        calls += 1
    # A call takes at least as many live events as there are Leases (30, over the limit of
    # 10): the creations, then every latest renewal; 1,230 slots at 10 a call took 123.
    assert calls == 2 and len(seen) == 60
