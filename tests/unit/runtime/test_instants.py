"""Watch replies of one instant (``cluster/runtime/instants.py``): the marks a held clock
leaves and the cut after the oldest instant's last event."""

import pytest

from cluster.api.errors import Expired
from cluster.api.requests import WatchChunk
from cluster.runtime.instants import Instants

# A store with these events: kind -> resourceVersions, written at the instants the marks say.
STORE = {"Lease": [5, 11, 12, 21, 31, 32], "Pod": [13, 22, 33]}  # 5: before the clock was held


def marks() -> Instants:
    m = Instants()
    for rv, at in [(10, 10.0), (20, 20.0), (30, 30.0)]:  # instant 10 s: rv 11-20, 20 s: 21-30, 30 s: 31-
        m.moved(rv, at)
    return m


def reply(since: dict[str, int]) -> dict:
    return {k: WatchChunk([("MODIFIED", str(rv).encode()) for rv in STORE[k] if rv > s], 40) for k, s in since.items()}


def count_after(kind: str, rv: int) -> int:
    return sum(1 for r in STORE[kind] if r > rv)


def rvs(out: dict) -> dict:
    return {k: ([int(raw) for _, raw in part.events], part.resume) for k, part in out.items()}


@pytest.mark.parametrize(
    ("since", "at", "cut"),
    [
        ({"Lease": 10, "Pod": 10}, 10.0, {"Lease": ([11, 12], 20), "Pod": ([13], 20)}),
        ({"Lease": 12, "Pod": 13}, 20.0, {"Lease": ([21], 30), "Pod": ([22], 30)}),
        ({"Lease": 21, "Pod": 13}, 20.0, {"Lease": ([], 30), "Pod": ([22], 30)}),  # only pods at 20 s
        ({"Lease": 30, "Pod": 30}, 30.0, {"Lease": ([31, 32], 40), "Pod": ([33], 40)}),  # the latest: uncut
        ({"Lease": 10, "Pod": 40}, 10.0, {"Lease": ([11, 12], 20), "Pod": ([], 40)}),
        ({"Lease": 32, "Pod": 25}, 30.0, {"Lease": ([], 40), "Pod": ([33], 40)}),
    ],
)
def test_a_reply_holds_the_events_of_its_oldest_instant_and_says_which(since, at, cut):
    got_at, out = marks().cut(since, reply(since), count_after)
    assert got_at == at
    assert rvs(out) == cut


def test_what_was_written_before_the_clock_was_held_comes_at_the_first_instant():
    at, out = marks().cut({"Lease": 0, "Pod": 0}, reply({"Lease": 0, "Pod": 0}), count_after)
    assert at == 10.0 and rvs(out) == {"Lease": ([5], 10), "Pod": ([], 10)}


def test_a_reply_without_events_or_marks_is_not_cut():
    m = marks()
    empty = {"Lease": WatchChunk([], 40)}
    assert m.cut({"Lease": 40}, empty, count_after) == (None, empty)
    assert Instants().cut({"Lease": 10}, reply({"Lease": 10}), count_after)[0] is None


def test_a_window_that_no_longer_reaches_back_leaves_the_reply_uncut():
    r = reply({"Lease": 10})
    assert marks().cut({"Lease": 10}, r, lambda kind, rv: None) == (None, r)
    expired = {"Lease": Expired("too old resource version")}
    assert marks().cut({"Lease": 10}, expired, count_after) == (None, expired)


@pytest.mark.parametrize(
    ("moves", "kept"),
    [
        ([(10, 1.0), (20, 2.0)], [(10, 1.0), (20, 2.0)]),
        ([(10, 1.0), (10, 2.0)], [(10, 2.0)]),  # nothing written at 1 s: its mark is the next one's
        ([(10, 2.0), (20, 1.0)], [(10, 2.0)]),  # never back
    ],
)
def test_marks_follow_the_clock_forward(moves, kept):
    m = Instants()
    for rv, at in moves:
        m.moved(rv, at)
    assert list(zip(m._rvs, m._at)) == kept


def test_old_marks_are_dropped_beyond_what_is_kept():
    m = Instants(keep=3)
    for i in range(10):
        m.moved(i, float(i))
    assert len(m) <= 6 and m._rvs[-1] == 9
