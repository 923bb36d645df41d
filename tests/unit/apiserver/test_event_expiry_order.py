"""The Event expiry tracker keeps one dict in deadline order (cluster/apiserver/eventttl.py):
it gives up exactly the Events that a heap of (deadline, order noted) with lazy removal
gives, whatever order the writers' clocks come in, and in the same order while the clocks
never go back."""

import heapq
import random

import pytest

from cluster.apiserver.eventttl import EventExpiry


class HeapExpiry:
    """The reference: every note pushed on a heap, a renewed Event's old entry skipped."""

    def __init__(self, ttl: float, max_events: int):
        self.ttl, self.max_events = ttl, max_events
        self.deadline: dict[tuple[str, str], float] = {}
        self.heap: list[tuple[float, int, str, str]] = []
        self.seq = 0

    def note(self, ns: str, name: str, written_at: float) -> None:
        at = written_at + self.ttl
        self.deadline[(ns, name)] = at
        self.seq += 1
        heapq.heappush(self.heap, (at, self.seq, ns, name))

    def due(self, now: float, stored: int) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        while self.heap:
            at, _, ns, name = self.heap[0]
            if at > now and stored - len(out) <= self.max_events:
                break
            heapq.heappop(self.heap)
            if self.deadline.get((ns, name)) != at:
                continue
            del self.deadline[(ns, name)]
            out.append((ns, name))
        return out


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("back", [0.0, 5.0])  # how far a writer's clock may lag the newest
def test_the_same_events_go_in_the_same_order_as_a_heap_gives_them(seed, back):
    rnd = random.Random(seed)
    ours, ref = EventExpiry(ttl=30.0, max_events=rnd.choice([3, 8, 1000])), None
    ref = HeapExpiry(30.0, ours.max_events)
    now, stored = 0.0, 0
    for _ in range(300):
        if rnd.random() < 0.7:
            key = (rnd.choice(["a", "b"]), f"e{rnd.randrange(25)}")
            at = round(now - rnd.uniform(0, back), 1) if rnd.random() < 0.3 else now
            ours.note(*key, at)
            ref.note(*key, at)
            stored = len(ref.deadline)
        else:
            now += rnd.choice([0.0, 0.5, 3.0, 12.0])
            got, want = ours.due(now, stored), ref.due(now, stored)
            if back:
                # Equal deadlines may come in another order: the heap validates an old entry
                # of an Event noted again at an earlier clock by its deadline alone.
                assert sorted(got) == sorted(want)
            else:
                assert got == want
            stored = len(ref.deadline)
        assert len(ours) == len(ref.deadline)


def test_a_batch_of_events_shares_one_deadline_and_renewal_moves_an_event_back():
    exp = EventExpiry(ttl=10.0)
    exp.note("d", "a", 1.0)
    exp.note("d", "b", 1.0)
    assert exp._order[("d", "a")] is exp._order[("d", "b")]  # one float for the batch
    exp.note("d", "a", 2.0)  # renewed: now after b
    assert list(exp._order) == [("d", "b"), ("d", "a")]
    assert exp.due(11.0, 2) == [("d", "b")] and exp.due(12.0, 1) == [("d", "a")]
    assert exp.expired == 2 and len(exp) == 0


def test_a_late_clock_is_still_given_up_on_time_and_ahead_of_later_deadlines():
    exp = EventExpiry(ttl=10.0)
    exp.note("d", "new", 5.0)
    exp.note("d", "old", 1.0)  # a writer whose clock lags: its deadline comes first
    exp.note("d", "newer", 5.0)
    assert exp.due(11.0, 3) == [("d", "old")]
    assert exp.due(15.0, 2) == [("d", "new"), ("d", "newer")]


def test_past_the_cap_the_soonest_go_even_before_their_deadline():
    exp = EventExpiry(ttl=10.0, max_events=2)
    for i, t in enumerate([1.0, 2.0, 3.0, 4.0]):
        exp.note("d", f"e{i}", t)
    assert exp.due(0.0, 4) == [("d", "e0"), ("d", "e1")] and exp.capped == 2 and exp.expired == 0


def test_many_given_up_from_the_front_leave_a_compact_dict():
    exp = EventExpiry(ttl=1.0)
    for i in range(1000):
        exp.note("d", f"e{i}", float(i))
    assert len(exp.due(900.0, 1000)) == 900
    assert list(exp._order) == [("d", f"e{i}") for i in range(900, 1000)]
    assert len(exp.due(2000.0, 100)) == 100 and len(exp) == 0
