"""Events expire as upstream's ``--event-ttl`` lets them (an hour after their last write),
with kubemu's cap on how many are kept; watchers see each expiry as a DELETED event."""

import pytest

from cluster.api import codec
from cluster.api.events import make_event
from cluster.api.patches import Apply
from cluster.api.requests import Patch, RecordEvent
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.eventttl import EVENT_TTL_SECONDS, EventExpiry
from cluster.apiserver.store import Store
from cluster.apiserver.wal import Recovered

POD = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}


def record(api: APIServer, at: float, n: int = 1) -> list[str]:
    names = []
    for _ in range(n):
        ev = api.create(make_event(POD, "Scheduled", "assigned", at, component="default-scheduler"), at)
        names.append(ev["metadata"]["name"])
    return names


def stored(api: APIServer) -> set[str]:
    return {e["metadata"]["name"] for e in api.store.objects("Event")}


@pytest.mark.parametrize(
    "write_at,now,kept",
    [
        (0.0, 3599.9, True),  # not yet an hour
        (0.0, 3600.0, False),  # the lease runs out at exactly the TTL
        (100.0, 3699.0, True),
        (100.0, 7200.0, False),
    ],
)
def test_an_event_goes_an_hour_after_it_was_written(write_at, now, kept):
    api = APIServer()
    (name,) = record(api, write_at)
    api.write([], now)  # expiry runs at the start of every batch
    assert (name in stored(api)) is kept


def test_a_write_to_an_event_renews_its_lease():
    api = APIServer()
    (name,) = record(api, 0.0)
    api.write([Patch("Event", "default", name, "", Apply({"metadata": {"name": name}, "count": 2}))], 3000.0)
    assert api.store.get("Event", "default", name)["count"] == 2
    api.write([], 3600.0)
    assert name in stored(api)  # renewed at 3000 s
    api.write([], 6600.0)
    assert name not in stored(api)


def test_watchers_see_the_expiry_as_a_deletion():
    api = APIServer()
    (name,) = record(api, 0.0)
    rv = api.store.rv
    api.write([], EVENT_TTL_SECONDS)
    events, _ = api.store.events_since("Event", rv)
    assert [(t, codec.decode(d)["metadata"]["name"]) for t, d in events] == [("DELETED", name)]


def test_past_the_cap_the_oldest_go_first():
    api = APIServer(max_events=3)
    first = record(api, 0.0, 2) + record(api, 10.0, 2)  # four written, one over
    api.write([RecordEvent(make_event(POD, "Pulled", "x", 20.0, component="kubelet"))], 20.0)
    # Before the batch: 4 stored, one over the cap -> the oldest goes; the new one makes 4 again.
    assert first[0] not in stored(api) and set(first[1:]) <= stored(api)
    assert len(stored(api)) == 4 and api.event_expiry.capped == 1
    api.write([], 21.0)
    assert len(stored(api)) == 3 and first[1] not in stored(api)


def test_events_of_a_recovered_store_keep_their_deadline():
    api = APIServer()
    (name,) = record(api, 500.0)
    rv, objects = api.store.snapshot_state()
    again = APIServer(store=Store.from_recovered(Recovered(rv=rv, objects=objects)))
    again.write([], 4099.0)
    assert name in stored(again)
    again.write([], 4100.0)
    assert name not in stored(again)


def test_other_kinds_never_expire():
    api = APIServer()
    api.write([], 10 * EVENT_TTL_SECONDS)
    assert {n["metadata"]["name"] for n in api.store.objects("Namespace")} >= {"default", "kube-system"}


@pytest.mark.parametrize(
    "kw,message",
    [
        ({"ttl": 0}, "eventTTL: 0 must be more than 0 seconds"),
        ({"max_events": 0}, "maxEvents: 0 must be at least 1"),
    ],
)
def test_bad_settings_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        EventExpiry(**kw)


def test_an_event_deleted_before_its_deadline_is_not_removed_again():
    api = APIServer()
    (name,) = record(api, 0.0)
    api.delete("Event", "default", name, None, None, 10.0)
    rv = api.store.rv
    assert api.expire_events(EVENT_TTL_SECONDS) == 0 and api.store.rv == rv  # no second DELETED
    assert len(api.event_expiry) == 0
