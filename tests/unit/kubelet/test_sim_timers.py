from cluster.sim import TimerQueue


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
