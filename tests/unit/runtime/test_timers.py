from cluster.runtime.timers import TimerQueue


def test_pop_due_orders_by_time_then_schedule_order():
    q = TimerQueue()
    q.schedule(5, "e")
    q.schedule(1, "a")
    q.schedule(3, "c1")
    q.schedule(3, "c2")
    q.schedule(3, "c3")
    assert q.next_time() == 1
    assert q.pop_due(3) == ["a", "c1", "c2", "c3"]
    assert q.pop_due(4.9) == []
    assert len(q) == 1
    assert q.pop_due(5) == ["e"]
    assert q.next_time() is None and len(q) == 0


def test_cancel_is_lazy_and_idempotent():
    q = TimerQueue()
    h1 = q.schedule(1, "x")
    q.schedule(2, "y")
    q.cancel(h1)
    q.cancel(h1)
    q.cancel(None)
    assert len(q) == 1
    assert q.next_time() == 2
    assert q.pop_due(10) == ["y"]


def test_cancel_after_fire_does_nothing():
    q = TimerQueue()
    h = q.schedule(1, "x")
    assert q.pop_due(1) == ["x"]
    q.cancel(h)
    assert len(q) == 0


def test_heap_compacts_when_mostly_cancelled():
    q = TimerQueue()
    handles = [q.schedule(i, i) for i in range(1000)]
    for h in handles[:990]:
        q.cancel(h)
    assert len(q) == 10
    assert len(q._heap) < 200
    assert q.pop_due(10_000) == list(range(990, 1000))


def test_background_timers_fire_but_are_not_the_next_change():
    q = TimerQueue()
    q.schedule(10, "lease", background=True)
    q.schedule(25, "start")
    q.schedule(20, "lease-2", background=True)
    assert q.next_time() == 10
    assert q.next_time(foreground=True) == 25
    assert q.pop_due(20) == ["lease", "lease-2"]
    assert q.next_time(foreground=True) == 25
    q.cancel(q.schedule(21, "gone"))
    assert q.next_time(foreground=True) == 25
    assert q.pop_due(30) == ["start"]
    assert q.next_time(foreground=True) is None and q.next_time() is None


def test_the_foreground_heap_stays_small_when_timers_fire_unread():
    q = TimerQueue()
    for i in range(1000):
        q.schedule(i, i)
        q.pop_due(i)
    assert len(q._fore) <= 1
